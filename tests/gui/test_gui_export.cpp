// Issue 30 item 2: tables out of the window as CSV and on the clipboard, and
// the window as a PNG. Quoting and units against hand-written text; the
// Steps CSV against the analysis it shows.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/load/load_capture.h"
#include "analyzer/report/report_json.h"
#include "analyzer/synth/pattern_synth.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/model/analysis_csv.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/screenshot.h"
#include "gui/widgets/table_export.h"
#include "tests/gui/analysed_capture.h"
#include "tests/gui/gui_test_captures.h"

#include <gtest/gtest.h>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QMenu>
#include <QStandardItemModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
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
    LoadedCapture l = guitest::analysed(capture);
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

namespace {

// Four ranks, one all-reduce per layer; rank 2 starts every step kLateNs
// late. Each collective then takes kLateNs longer on the others than on
// rank 2, everyone ends together (NCCL kernels wait for their peers), and a
// collective ends well before the next layer's gradient is ready, so every
// one of them sees the whole delay.
constexpr int kRanks = 4, kLateRank = 2, kLayers = 3, kSteps = 2;
constexpr TimeNs kLateNs = 300'000;
synth::WorkloadSpec lateRankSpec() {
    synth::WorkloadSpec spec;
    spec.ranks = kRanks;
    spec.layers = kLayers;
    spec.steps = kSteps;
    spec.mode = synth::OverlapMode::PerParam;
    spec.gradBytesPerLayer = 1u << 20;
    spec.arrivalSkewNs.assign(kRanks, 0);
    spec.arrivalSkewNs[kLateRank] = kLateNs;
    return spec;
}

std::vector<QStringList> readCsv(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    std::vector<QStringList> out;
    for (const QString& l : QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts))
        out.push_back(parseCsvLine(l));
    return out;
}

}  // namespace

TEST(TableExport, RanksCsvHasTheArrivalsOfTheJob) {
    const synth::WorkloadSpec spec = lateRankSpec();
    const TimeNs comm = spec.commNs(spec.gradBytesPerLayer);
    ASSERT_LT(kLateNs + comm, spec.backwardNs);  // the premise above
    QTemporaryDir dir;
    const QString job = dir.filePath("job");
    synth::writeWorkload(spec, job.toStdString(), false);
    const QString out = dir.filePath("ranks.csv");
    ASSERT_EQ(exportCsv(job, "ranks:" + out), 0);
    const std::vector<QStringList> table = readCsv(out);
    ASSERT_EQ(table.size(), 1u + kSteps * kLayers);
    const QStringList& h = table[0];
    const auto cell = [&](const QStringList& row, const char* name) {
        const qsizetype c = h.indexOf(name);
        EXPECT_GE(c, 0) << name;
        return c >= 0 && c < row.size() ? row[c] : QString("<missing>");
    };
    const auto ns = [&](const QStringList& row, const char* name) { return cell(row, name).toLongLong(); };

    // Brute force over the files: the k-th all-reduce of every rank is one
    // collective; it spans the earliest start to the latest end.
    const Capture capture = loadCaptures({job.toStdString()});
    std::vector<TimeNs> firstStart(kSteps * kLayers, INT64_MAX), lastEnd(kSteps * kLayers, INT64_MIN);
    for (const Process& p : capture.processes)
        for (const Device& d : p.devices) {
            size_t k = 0;
            std::vector<std::pair<TimeNs, TimeNs>> nccl;
            for (size_t i = 0; i < d.kernels.size(); ++i)
                if (std::string(capture.strings.at(d.kernels.name[i])).find("nccl") != std::string::npos)
                    nccl.emplace_back(d.kernels.start[i], d.kernels.end[i]);
            std::sort(nccl.begin(), nccl.end());
            ASSERT_EQ(nccl.size(), firstStart.size());
            for (const auto& [s, e] : nccl) {
                firstStart[k] = std::min(firstStart[k], s);
                lastEnd[k] = std::max(lastEnd[k], e);
                ++k;
            }
        }

    const double busbw = static_cast<double>(spec.gradBytesPerLayer) * 2.0 * (kRanks - 1) / kRanks / comm;
    for (size_t i = 1; i < table.size(); ++i) {
        const QStringList& row = table[i];
        ASSERT_EQ(row.size(), h.size());
        const int k = static_cast<int>(i - 1);  // rows come in job order
        SCOPED_TRACE(k);
        EXPECT_EQ(cell(row, "step"), QString("step %1").arg(k / kLayers));
        EXPECT_EQ(cell(row, "collective"), "AllReduce");
        EXPECT_EQ(cell(row, "comm_hash"), "0x5e1f0c0ffee15eed");
        EXPECT_EQ(ns(row, "seq_number"), k);
        EXPECT_EQ(ns(row, "bucket"), k % kLayers + 1);
        EXPECT_EQ(ns(row, "bytes"), static_cast<qlonglong>(spec.gradBytesPerLayer));
        EXPECT_EQ(ns(row, "ranks"), kRanks);
        EXPECT_EQ(ns(row, "skew_ns"), kLateNs);
        EXPECT_EQ(ns(row, "last_rank"), kLateRank);
        EXPECT_EQ(ns(row, "waiting_ns"), (kRanks - 1) * kLateNs);
        EXPECT_EQ(ns(row, "rank_time_ns"), (kRanks - 1) * (kLateNs + comm) + comm);
        EXPECT_EQ(ns(row, "transfer_ns"), comm);
        EXPECT_NEAR(cell(row, "busbw_gbps").toDouble(), busbw, busbw * 1e-9);
        EXPECT_EQ(ns(row, "start_ns"), firstStart[static_cast<size_t>(k)]);
        EXPECT_EQ(ns(row, "end_ns"), lastEnd[static_cast<size_t>(k)]);
        EXPECT_EQ(ns(row, "end_ns") - ns(row, "start_ns"), kLateNs + comm);
    }
    EXPECT_EQ(exportCsv(job, "rank:" + out), 2);
}

TEST(TableExport, WindowExportsAndCopiesTheRanksTable) {
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(lateRankSpec()));
    LoadedCapture l = guitest::analysed(capture);
    MainWindow win;
    win.resize(1600, 900);
    win.show();
    win.showLoaded(l);
    win.waitForPanels();
    QTemporaryDir dir;
    const QString out = dir.filePath("ranks.csv");
    ASSERT_EQ(win.exportTableCsv("ranks", out), "");
    const std::vector<QStringList> table = readCsv(out);
    ASSERT_EQ(table.size(), 1u + kSteps * kLayers);
    // The table's cells as shown, units moved into the header: skew in µs.
    const qsizetype last = table[0].indexOf("last rank"), skew = table[0].indexOf("skew (µs)");
    ASSERT_GE(last, 0) << table[0].join(',').toStdString();
    ASSERT_GE(skew, 0) << table[0].join(',').toStdString();
    for (size_t i = 1; i < table.size(); ++i) {
        EXPECT_EQ(table[i][last], QString::number(kLateRank));
        EXPECT_DOUBLE_EQ(table[i][skew].toDouble(), kLateNs / 1e3);
    }
    // The File menu offers it, and Ctrl+C copies the selected row.
    bool inMenu = false;
    for (QAction* a : win.findChildren<QAction*>())
        inMenu |= a->text() == "Collectives across &ranks" && a->parent() && qobject_cast<QMenu*>(a->parent()) &&
                  qobject_cast<QMenu*>(a->parent())->title().contains("CSV");
    EXPECT_TRUE(inMenu);
    QTableView* view = win.panelTable("ranks");
    ASSERT_NE(view, nullptr);
    view->selectRow(2);
    view->setFocus();
    QApplication::clipboard()->clear();
    QTest::keySequence(view, QKeySequence::Copy);
    const QStringList copied = QApplication::clipboard()->text().split('\n', Qt::SkipEmptyParts);
    ASSERT_EQ(copied.size(), 2);
    EXPECT_EQ(copied[1].split('\t')[last], QString::number(kLateRank));
}
