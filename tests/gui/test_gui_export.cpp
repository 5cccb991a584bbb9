// Issue 30 item 2: tables out of the window as CSV and on the clipboard, and
// the window as a PNG. Quoting and units against hand-written text; the
// Steps CSV against the analysis it shows.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/pattern_synth.h"
#include "gui/model/analysis_csv.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/table_export.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace osc;
using namespace osc::gui;

namespace {

// A CSV line into fields, RFC 4180 quotes undone.
QStringList parseCsvLine(const QString& line) {
    QStringList out;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out << field;
            field.clear();
        } else {
            field += c;
        }
    }
    out << field;
    return out;
}

struct Table {
    QStandardItemModel model{3, 4};
    QTableView view;
    Table() {
        model.setHorizontalHeaderLabels({"name", "duration", "mixed", "hidden"});
        const char* cells[3][4] = {{"gemm, fused", "988.622 ms", "1 ms", "x"},
                                   {"say \"hi\"", "1.5 ms", "2 s", "y"},
                                   {"plain", "–", "3 ms", "z"}};
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 4; ++c) model.setItem(r, c, new QStandardItem(QString::fromUtf8(cells[r][c])));
        view.setModel(&model);
        view.setColumnHidden(3, true);
        view.verticalHeader()->hide();
        view.setSelectionBehavior(QAbstractItemView::SelectRows);
    }
};

}  // namespace

TEST(TableExport, UnitsGoToTheHeaderOnlyWhenTheWholeColumnHasOne) {
    EXPECT_EQ(commonUnit({"1 s", "2.5 s", "–"}), " s");
    EXPECT_EQ(commonUnit({"1 ms", "2 s"}), "");
    EXPECT_EQ(commonUnit({"12.0 %"}), " %");
    EXPECT_EQ(commonUnit({"18.02 µs"}), " µs");
    EXPECT_EQ(commonUnit({"gemm ms"}), "");  // not a number before it
    EXPECT_EQ(commonUnit({"–", ""}), "");
    EXPECT_EQ(quoteField("a,b"), "\"a,b\"");
    EXPECT_EQ(quoteField("a\tb", '\t'), "\"a\tb\"");
    EXPECT_EQ(quoteField("a\tb"), "a\tb");
    EXPECT_EQ(quoteField(" lead"), "\" lead\"");
}

TEST(TableExport, CsvQuotesAndLeavesHiddenColumnsOut) {
    Table t;
    EXPECT_EQ(tableText(t.view).toStdString(),
              "name,duration (ms),mixed\n"
              "\"gemm, fused\",988.622,1 ms\n"
              "\"say \"\"hi\"\"\",1.5,2 s\n"
              "plain,–,3 ms\n");
    // Copy: the selected rows, tab-separated, units as in the whole table.
    t.view.selectRow(1);
    EXPECT_EQ(tableText(t.view, '\t', true).toStdString(),
              "name\tduration (ms)\tmixed\n"
              "\"say \"\"hi\"\"\"\t1.5\t2 s\n");
    installTableCopy(&t.view);
    t.view.show();
    t.view.setFocus();
    QApplication::clipboard()->clear();
    QTest::keySequence(&t.view, QKeySequence::Copy);
    EXPECT_EQ(QApplication::clipboard()->text(), tableText(t.view, '\t', true));
}

TEST(TableExport, StepsCsvHoldsTheAnalysisValuesAndTheWindowExportsAsPng) {
    auto capture = guitest::smallCapture(2, 100);
    for (auto& p : capture->processes) p.ranges.onGpu.assign(p.ranges.size(), 1);  // GPU-side steps
    LoadedCapture l;
    l.model = std::make_shared<TimelineModel>(capture);
    l.analysis = std::make_shared<Analysis>(analyze(*capture));
    l.model->addStepLanes(*l.analysis);
    l.model->annotate(*l.analysis);
    l.path = "memory";
    MainWindow win;
    win.resize(1200, 700);
    win.showLoaded(l);
    win.waitForPanels();
    QTemporaryDir dir;
    const QString csv = dir.filePath("steps.csv");
    ASSERT_EQ(win.exportTableCsv("steps", csv), "");
    QFile f(csv);
    ASSERT_TRUE(f.open(QIODevice::ReadOnly | QIODevice::Text));
    QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    ASSERT_EQ(lines.size(), 1 + 2);  // header, one step per rank
    const QStringList header = parseCsvLine(lines[0]);
    const qsizetype device = header.indexOf("device"), duration = header.indexOf("duration (µs)"),
                    comm = header.indexOf("comm (µs)");
    ASSERT_GE(device, 0) << lines[0].toStdString();
    ASSERT_GE(duration, 0) << lines[0].toStdString();
    ASSERT_GE(comm, 0) << lines[0].toStdString();
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QStringList row = parseCsvLine(lines[i]);
        ASSERT_EQ(row.size(), header.size());
        const DeviceAnalysis* d = nullptr;
        for (const DeviceAnalysis& a : l.analysis->devices)
            if (deviceName(a) == row[device]) d = &a;
        ASSERT_NE(d, nullptr) << row[device].toStdString();
        const StepAnalysis& s = d->steps.at(0);
        EXPECT_NEAR(row[duration].toDouble() * 1e3, static_cast<double>(s.end_ns - s.start_ns), 10);
        EXPECT_NEAR(row[comm].toDouble() * 1e3, static_cast<double>(s.metrics.comm_ns), 10);
    }
    EXPECT_NE(win.exportTableCsv("heatmap", dir.filePath("h.csv")), "");
    EXPECT_NE(win.exportTableCsv("steps", dir.filePath("no/such/dir/s.csv")), "");

    const QString png = dir.filePath("window.png");
    ASSERT_EQ(win.exportPng(png), "");
    const QImage image(png);
    EXPECT_EQ(image.size(), win.size());
}

TEST(TableExport, CommandLineCsvCarriesTheReportJsonFieldsAndValues) {
    // --export-csv steps / collectives: one row per device and step (per
    // device and collective), each field equal to the same field of
    // `report --format json`. A pipeline job: four ranks, several steps,
    // sends and receives with bytes.
    const Capture capture = synth::synthesizePipeline(synth::PipelineSpec{});
    const Analysis a = analyze(capture);
    const nlohmann::json report = nlohmann::json::parse(report::formatJsonReport(a, {}));
    const auto rows = [](const std::string& csv) {
        std::vector<QStringList> out;
        std::istringstream in(csv);
        for (std::string l; std::getline(in, l);) out.push_back(parseCsvLine(QString::fromStdString(l)));
        return out;
    };
    const auto check = [&](const std::vector<QStringList>& table, const char* array) {
        ASSERT_FALSE(table.empty());
        const QStringList& header = table[0];
        size_t row = 1, expectedRows = 1;
        for (const auto& device : report["devices"]) {
            for (const auto& item : device[array]) {
                ++expectedRows;
                ASSERT_LT(row, table.size()) << array;
                const QStringList& cells = table[row++];
                ASSERT_EQ(cells.size(), header.size());
                for (qsizetype c = 0; c < header.size(); ++c) {
                    const std::string key = header[c].toStdString();
                    const std::string cell = cells[c].toStdString();
                    const nlohmann::json* v = nullptr;
                    if (key == "rank" || key == "host" || key == "pid" || key == "device")
                        v = &device[key];
                    else if (key == "verdict")
                        v = &item["bottleneck"]["verdict"];
                    else
                        v = &item[key];
                    if (v->is_null())
                        EXPECT_EQ(cell, "") << array << " " << key;
                    else if (v->is_string())
                        EXPECT_EQ(cell, v->get<std::string>()) << array << " " << key;
                    else if (v->is_number_float())
                        EXPECT_DOUBLE_EQ(std::stod(cell), v->get<double>()) << array << " " << key;
                    else
                        EXPECT_EQ(cell, v->dump()) << array << " " << key;
                }
            }
        }
        EXPECT_EQ(table.size(), expectedRows) << array;
    };
    const auto steps = rows(stepsCsv(a));
    const auto colls = rows(collectivesCsv(a));
    EXPECT_GT(steps.size(), 4u);
    EXPECT_GT(colls.size(), 4u);
    check(steps, "steps");
    check(colls, "collectives");
}

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication::setAttribute(Qt::AA_Use96Dpi);
    QApplication app(argc, argv);
    QApplication::setOrganizationName("overlapscope-test");
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
