// Two runs compared (issue 30 item 1): the pairing model and the window's
// compare tables, on two synthetic jobs whose differences are worked out by
// hand from analyzer/synth/README.md ("Answers the analyzer must find").
//
// Both jobs: 2 ranks, 2 layers, forward 0.5 ms and backward 1 ms per layer,
// 1,000,000 gradient bytes per layer, 20 µs + 25 GB/s links (1 byte/ns at
// 1 GB/s), no jitter, no skew.
//   A (base): sequential, 3 steps. One bucket of 2 MB, reduced after the
//     backward pass: c = 20,000 + 2,000,000/25 = 100,000 ns, all exposed.
//     Per step: compute 3,000,000, comm 100,000, exposed 100,000, overlap
//     0 %, step window F + B + C = 3,100,000 ns.
//   B (candidate): per-param, 2 steps. One all-reduce per layer, c = 20,000 +
//     1,000,000/25 = 60,000 ns: layer 1's runs under layer 0's 1 ms backward
//     (hidden), layer 0's after it (exposed). Per step: comm 120,000, exposed
//     60,000, overlap 50 %, window 3,060,000 ns.
// So per paired step (2 devices x the first 2 steps): step time -40,000 ns
// (-40,000 / 3,100,000 = -1.29 %), exposed -40,000 (-40 %), comm +20,000
// (+20 %), compute 0, overlap +50 points. Collectives pair by identity
// (type, group, size, bucket; issue 40 item 5): A's one 2,000,000-byte
// all-reduce has no partner among B's two 1,000,000-byte ones, so per
// device and step there is one row only in A and two only in B (buckets 0
// and 1). A's step 2 has no partner at all.
//
// C (candidate of the same shape as B, links twice as fast, 50 GB/s): its
// all-reduces take 20,000 + 1,000,000/50 = 40,000 ns against B's 60,000, so
// every one of B's pairs with C's of the same bucket: duration -20,000; the
// first (layer 1's gradient, under layer 0's backward) stays hidden, the
// second (after the backward) is exposed 40,000 against 60,000.
#include "analyzer/crossrank/analyze.h"
#include "analyzer/synth/workload_synth.h"
#include "gui/model/compare_csv.h"
#include "gui/model/run_compare.h"
#include "gui/widgets/compare_tables.h"
#include "gui/widgets/compare_timeline.h"
#include "gui/widgets/main_window.h"
#include "gui/widgets/metric_tables.h"
#include "gui/widgets/timeline_widget.h"
#include "tests/gui/analysed_capture.h"

#include <gtest/gtest.h>
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QBrush>
#include <QFile>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstdlib>

using namespace osc;
using namespace osc::gui;

namespace {

constexpr TimeNs kBaseWindow = 3'100'000, kCandWindow = 3'060'000;

synth::WorkloadSpec job(synth::OverlapMode mode, int steps) {
    synth::WorkloadSpec s;
    s.layers = 2;
    s.forwardNs = 500'000;
    s.backwardNs = 1'000'000;
    s.gradBytesPerLayer = 1'000'000;
    s.bucketMb = 100;  // one bucket holds both layers
    s.alphaNs = 20'000;
    s.bandwidthGBps = 25;
    s.ranks = 2;
    s.steps = steps;
    s.mode = mode;
    return s;
}

LoadedCapture loaded(const synth::WorkloadSpec& spec, const QString& path) {
    auto capture = std::make_shared<Capture>(synth::synthesizeWorkload(spec));
    return guitest::analysed(capture, path);
}

const LoadedCapture& base() {
    static const LoadedCapture l = loaded(job(synth::OverlapMode::Sequential, 3), "/runs/A");
    return l;
}
const LoadedCapture& candidate() {
    static const LoadedCapture l = loaded(job(synth::OverlapMode::PerParam, 2), "/runs/B");
    return l;
}
const LoadedCapture& faster() {
    static const LoadedCapture l = [] {
        synth::WorkloadSpec s = job(synth::OverlapMode::PerParam, 2);
        s.bandwidthGBps = 50;
        return loaded(s, "/runs/C");
    }();
    return l;
}

double value(const report::MetricDelta* m, std::optional<double> report::MetricDelta::*f) {
    EXPECT_NE(m, nullptr);
    EXPECT_TRUE(m && (m->*f).has_value());
    return m && (m->*f) ? *(m->*f) : -1e300;
}

}  // namespace

TEST(RunCompare, PairsStepsByIndexWithHandWorkedChanges) {
    const RunComparison c = compareRuns(*base().analysis, *candidate().analysis);
    ASSERT_EQ(c.steps.size(), 4u);  // 2 devices x min(3, 2) steps
    for (size_t i = 0; i < c.steps.size(); ++i) {
        const StepPair& p = c.steps[i];
        EXPECT_EQ(p.baseDevice, static_cast<int>(i / 2));  // device by device, step by step
        EXPECT_EQ(p.step, static_cast<int>(i % 2));
        const report::DiffRow& row = c.diff.rows[p.diffRow];
        EXPECT_EQ(row.scope, report::DiffScope::Step);
        EXPECT_EQ(row.step, p.step);
        const auto* window = findMetric(row, "window_ns");
        EXPECT_EQ(value(window, &report::MetricDelta::base), kBaseWindow);
        EXPECT_EQ(value(window, &report::MetricDelta::candidate), kCandWindow);
        EXPECT_EQ(value(window, &report::MetricDelta::change), -40'000);
        EXPECT_NEAR(value(window, &report::MetricDelta::relativePct), -40'000.0 / 3'100'000 * 100, 1e-9);
        const auto* exposed = findMetric(row, "exposed_comm_ns");
        EXPECT_EQ(value(exposed, &report::MetricDelta::base), 100'000);
        EXPECT_EQ(value(exposed, &report::MetricDelta::change), -40'000);
        EXPECT_NEAR(value(exposed, &report::MetricDelta::relativePct), -40.0, 1e-9);
        EXPECT_EQ(value(findMetric(row, "comm_ns"), &report::MetricDelta::change), 20'000);
        EXPECT_EQ(value(findMetric(row, "compute_ns"), &report::MetricDelta::change), 0);
        EXPECT_NEAR(value(findMetric(row, "overlap_ratio"), &report::MetricDelta::change), 0.5, 1e-9);
    }
    // A's third step has no partner on either device.
    ASSERT_GE(c.notes.size(), 2u);
    EXPECT_NE(c.notes[0].find("3 steps in the base, 2 in the candidate"), std::string::npos) << c.notes[0];
}

TEST(RunCompare, CollectivesOfAnotherSizeHaveNoPartner) {
    const RunComparison c = compareRuns(*base().analysis, *candidate().analysis);
    // Per device and paired step: A's 2 MB all-reduce alone, then B's two 1 MB ones alone.
    ASSERT_EQ(c.collectives.size(), 12u);
    for (size_t i = 0; i < c.collectives.size(); ++i) {
        const CollectivePair& p = c.collectives[i];
        EXPECT_EQ(p.baseDevice, static_cast<int>(i / 6));
        EXPECT_EQ(p.step, static_cast<int>(i / 3 % 2));
        EXPECT_EQ(p.group, "ranks 0, 1");
        EXPECT_FALSE(p.durationChange.has_value());
        const bool aOnly = i % 3 == 0;
        EXPECT_EQ(p.baseCollective >= 0, aOnly);
        EXPECT_EQ(p.candidateCollective >= 0, !aOnly);
        EXPECT_EQ(p.bucket, aOnly ? 0 : static_cast<int>(i % 3) - 1);
        const CollectiveInstance& op =
            aOnly
                ? base().analysis->devices[static_cast<size_t>(p.baseDevice)].collectives[static_cast<size_t>(
                      p.baseCollective)]
                : candidate().analysis->devices[static_cast<size_t>(p.candidateDevice)].collectives[static_cast<size_t>(
                      p.candidateCollective)];
        EXPECT_EQ(op.bytes, aOnly ? 2'000'000u : 1'000'000u);
    }
    EXPECT_EQ(c.collectivesPaired, 0u);
    EXPECT_EQ(c.onlyInBase, 4u);
    EXPECT_EQ(c.onlyInCandidate, 8u);
    const auto said = std::count_if(c.notes.begin(), c.notes.end(), [](const std::string& n) {
        return n.find(": 2 collectives only in A, 4 only in B") != std::string::npos;
    });
    EXPECT_EQ(said, 2);  // one per device
}

TEST(RunCompare, TheSameCollectivesPairByBucket) {
    const RunComparison c = compareRuns(*candidate().analysis, *faster().analysis);
    ASSERT_EQ(c.collectives.size(), 8u);  // 2 devices x 2 steps x 2 buckets, all paired
    EXPECT_EQ(c.collectivesPaired, 8u);
    EXPECT_EQ(c.onlyInBase + c.onlyInCandidate, 0u);
    for (size_t i = 0; i < c.collectives.size(); ++i) {
        const CollectivePair& p = c.collectives[i];
        EXPECT_EQ(p.bucket, static_cast<int>(i % 2));
        EXPECT_EQ(p.durationChange, -20'000);
        EXPECT_EQ(p.exposedChange, p.bucket == 0 ? 0 : -20'000);
    }
}

namespace {

// One device, rank `rank`, one step [0, 10 ms); its collectives as given.
DeviceAnalysis handMadeDevice(int rank, std::vector<CollectiveInstance> ops) {
    DeviceAnalysis d;
    d.rank = rank;
    d.host = "h";
    d.device = static_cast<uint32_t>(rank);
    StepAnalysis s;
    s.name = "step 0";
    s.start_ns = 0;
    s.end_ns = 10'000'000;
    d.steps.push_back(s);
    for (auto& op : ops) op.step = 0;
    d.collectives = std::move(ops);
    return d;
}

CollectiveInstance op(const std::string& collective, uint64_t bytes, uint64_t comm, TimeNs start, TimeNs duration) {
    CollectiveInstance c;
    c.name = "ncclDevKernel_" + collective;
    c.collective = collective;
    c.bytes = bytes;
    c.commHash = comm;
    c.start_ns = start;
    c.end_ns = start + duration;
    c.duration_ns = c.exposed_ns = duration;
    return c;
}

}  // namespace

// The case: by position, A's 256 B all-gather would face B's 24 MiB
// all-reduce ("+154641.5 %"). By identity the all-reduces pair (their
// communicators have new hashes in B, but the same ranks), the all-gather
// is A's alone, and an all-reduce of the same size on another group of
// ranks is B's alone.
TEST(RunCompare, PairsByTypeGroupSizeAndBucketNotPosition) {
    constexpr uint64_t kMiB24 = 24u << 20;
    Analysis a, b;
    a.devices.push_back(
        handMadeDevice(0, {op("AllGather", 256, 0x11, 1'000, 2'000), op("AllReduce", kMiB24, 0x22, 5'000, 400'000)}));
    a.devices.push_back(
        handMadeDevice(1, {op("AllGather", 256, 0x11, 1'000, 2'000), op("AllReduce", kMiB24, 0x22, 5'000, 400'000)}));
    // B: the same all-reduce (new hash 0x99, same ranks 0 and 1) first, then one on rank 0 alone.
    b.devices.push_back(handMadeDevice(
        0, {op("AllReduce", kMiB24, 0x99, 1'000, 300'000), op("AllReduce", kMiB24, 0x55, 500'000, 100'000)}));
    b.devices.push_back(handMadeDevice(1, {op("AllReduce", kMiB24, 0x99, 1'000, 300'000)}));
    const RunComparison c = compareRuns(a, b);
    ASSERT_EQ(c.collectives.size(), 5u);
    // Rank 0: A's all-gather alone, the all-reduces paired (-100,000 ns), B's single-rank one alone.
    const CollectivePair& gather = c.collectives[0];
    EXPECT_EQ(gather.baseCollective, 0);
    EXPECT_EQ(gather.candidateCollective, -1);
    const CollectivePair& reduce = c.collectives[1];
    EXPECT_EQ(reduce.baseCollective, 1);
    EXPECT_EQ(reduce.candidateCollective, 0);
    EXPECT_EQ(reduce.group, "ranks 0, 1");
    EXPECT_EQ(reduce.durationChange, -100'000);
    const CollectivePair& alone = c.collectives[2];
    EXPECT_EQ(alone.baseCollective, -1);
    EXPECT_EQ(alone.candidateCollective, 1);
    EXPECT_EQ(alone.group, "rank 0");
    EXPECT_EQ(c.collectivesPaired, 2u);  // one per rank
    EXPECT_EQ(c.onlyInBase, 2u);
    EXPECT_EQ(c.onlyInCandidate, 1u);
}

// The collectives' compare table as numbers (B against C, hand-worked above).
TEST(RunCompare, CollectivesCsvHoldsRawNanosecondsAndRatios) {
    const RunComparison c = compareRuns(*candidate().analysis, *faster().analysis);
    const std::string text = compareCollectivesCsv(*candidate().analysis, *faster().analysis, c);
    std::vector<std::vector<std::string>> rows;
    size_t from = 0;
    while (from < text.size()) {
        const size_t nl = text.find('\n', from);
        // Fields split at commas outside quotes (kernel names hold commas: they come quoted).
        std::vector<std::string> cells(1);
        bool quoted = false;
        for (char ch : text.substr(from, nl - from)) {
            if (ch == '"')
                quoted = !quoted;
            else if (ch == ',' && !quoted)
                cells.emplace_back();
            else
                cells.back() += ch;
        }
        rows.push_back(cells);
        from = nl + 1;
    }
    ASSERT_EQ(rows.size(), 9u);  // the header and 8 pairs
    const auto& h = rows[0];
    const auto col = [&h](const std::string& name) {
        const auto it = std::find(h.begin(), h.end(), name);
        EXPECT_NE(it, h.end()) << name;
        return static_cast<size_t>(it - h.begin());
    };
    for (size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        ASSERT_EQ(row.size(), h.size());
        const bool second = r % 2 == 0;  // bucket 1: after the backward pass, exposed
        EXPECT_EQ(row[col("collective")], "AllReduce");
        EXPECT_EQ(row[col("group")], "ranks 0, 1");
        EXPECT_EQ(row[col("bucket")], second ? "1" : "0");
        EXPECT_EQ(row[col("bytes")], "1000000");
        EXPECT_EQ(row[col("in")], "both");
        EXPECT_EQ(row[col("duration_ns_a")], "60000");
        EXPECT_EQ(row[col("duration_ns_b")], "40000");
        EXPECT_EQ(row[col("duration_ns_change")], "-20000");
        EXPECT_DOUBLE_EQ(std::stod(row[col("duration_ns_relative")]), -20'000.0 / 60'000.0);
        EXPECT_EQ(row[col("exposed_ns_a")], second ? "60000" : "0");
        EXPECT_EQ(row[col("exposed_ns_relative")], second ? "-0.33333333333333331" : "");  // 0 in A: no ratio
    }
    EXPECT_EQ(text.find("\u2212"), std::string::npos);
}

TEST(RunCompare, DevicesPairByRankWhateverTheirOrder) {
    // B's devices listed the other way round: rank 0 still pairs with rank 0.
    Analysis reversed = *candidate().analysis;
    std::reverse(reversed.devices.begin(), reversed.devices.end());
    ASSERT_EQ(reversed.devices[0].rank, 1);
    const RunComparison c = compareRuns(*base().analysis, reversed);
    ASSERT_EQ(c.steps.size(), 4u);
    for (const StepPair& p : c.steps) {
        EXPECT_EQ(reversed.devices[static_cast<size_t>(p.candidateDevice)].rank,
                  base().analysis->devices[static_cast<size_t>(p.baseDevice)].rank);
        EXPECT_EQ(value(findMetric(c.diff.rows[p.diffRow], "exposed_comm_ns"), &report::MetricDelta::change), -40'000);
    }
    ASSERT_EQ(c.collectives.size(), 12u);
    EXPECT_EQ(c.collectives.front().candidateDevice, 1);
    EXPECT_EQ(reversed.devices[static_cast<size_t>(c.collectives[1].candidateDevice)].rank, 0);
}

TEST(RunCompare, SummaryLineOfTheWholeJob) {
    // Whole job, both devices: A exposes 2 x 3 x 100 µs = 600 µs, B 2 x 2 x 60
    // µs = 240 µs (-60 %); B hides 240 of its 480 µs of communication.
    const RunComparison c = compareRuns(*base().analysis, *candidate().analysis);
    const std::string s = summaryText(c);
    EXPECT_NE(s.find("(\u221260.0 %)"), std::string::npos) << s;
    EXPECT_NE(s.find("hidden 0.0 % \u2192 50.0 % (+50.0 pts)"), std::string::npos) << s;
}

TEST(RunCompare, ChangeTextSignsAndShares) {
    const ColumnUnit us = columnUnit(100'000);
    EXPECT_EQ(changeText(-40'000, us, -40.0).substr(0, 3), "\u2212");
    EXPECT_NE(changeText(-40'000, us, -40.0).find("40"), std::string::npos);
    EXPECT_NE(changeText(-40'000, us, -40.0).find("(\u221240.0 %)"), std::string::npos);
    EXPECT_EQ(changeText(20'000, us, 20.0).front(), '+');
    EXPECT_EQ(changeText(0, us, 0.0), "0");
    EXPECT_EQ(pointsText(0.5), "+50.0 pts");
    EXPECT_EQ(pointsText(-0.125), "\u221212.5 pts");
}

TEST(CompareWindow, StepsAndCollectivesShowBothRunsAndTheChange) {
    MainWindow w;
    w.resize(1600, 900);
    w.showLoaded(base());
    w.showComparison(candidate());
    w.waitForPanels();
    ASSERT_TRUE(w.comparing());
    StepCompareModel* steps = w.stepCompareModel();
    QAbstractItemModelTester stepTester(steps, QAbstractItemModelTester::FailureReportingMode::Warning);
    ASSERT_EQ(steps->rowCount(), 4);
    // The panel's table is the compare table now (export and copy act on it).
    EXPECT_EQ(w.panelTable("steps")->model(), steps);
    const auto cell = [](QAbstractItemModel* m, int row, int column, int role = Qt::DisplayRole) {
        return m->index(row, column).data(role);
    };
    EXPECT_EQ(cell(steps, 0, StepCompareModel::Device).toString(), "rank 0 · GPU 0");
    EXPECT_EQ(cell(steps, 3, StepCompareModel::Device).toString(), "rank 1 · GPU 1");
    const QString exposedChange = cell(steps, 0, StepCompareModel::ExposedChange).toString();
    EXPECT_TRUE(exposedChange.startsWith(QString::fromUtf8("\u221240")) && exposedChange.contains("µs") &&
                exposedChange.endsWith(QString::fromUtf8("(\u221240.0 %)")))
        << exposedChange.toStdString();
    EXPECT_EQ(cell(steps, 0, StepCompareModel::OverlapA).toString(), "0.0 %");
    EXPECT_EQ(cell(steps, 0, StepCompareModel::OverlapB).toString(), "50.0 %");
    EXPECT_EQ(cell(steps, 0, StepCompareModel::OverlapChange).toString(), "+50.0 pts");
    EXPECT_TRUE(cell(steps, 0, StepCompareModel::CommChange).toString().endsWith("(+20.0 %)"));
    EXPECT_EQ(cell(steps, 0, StepCompareModel::ComputeChange).toString(), "0");
    // Less exposed and more hidden is better: both in the same colour; a
    // change of the unjudged comm time is not coloured.
    const QColor better = cell(steps, 0, StepCompareModel::ExposedChange, Qt::ForegroundRole).value<QBrush>().color();
    EXPECT_EQ(cell(steps, 0, StepCompareModel::OverlapChange, Qt::ForegroundRole).value<QBrush>().color(), better);
    EXPECT_EQ(cell(steps, 0, StepCompareModel::TimeChange, Qt::ForegroundRole).value<QBrush>().color(), better);
    EXPECT_FALSE(cell(steps, 0, StepCompareModel::CommChange, Qt::ForegroundRole).isValid());
    EXPECT_GT(better.green(), better.red());

    CollectiveCompareModel* colls = w.collectiveCompareModel();
    QAbstractItemModelTester collTester(colls, QAbstractItemModelTester::FailureReportingMode::Warning);
    ASSERT_EQ(colls->rowCount(), 12);
    EXPECT_EQ(cell(colls, 0, CollectiveCompareModel::Paired).toString(), "A only");
    EXPECT_EQ(cell(colls, 0, CollectiveCompareModel::Group).toString(), "ranks 0, 1");
    EXPECT_EQ(cell(colls, 0, CollectiveCompareModel::DurationChange).toString(), QString::fromUtf8("–"));
    EXPECT_EQ(cell(colls, 1, CollectiveCompareModel::DurationA).toString(), QString::fromUtf8("–"));
    EXPECT_NE(cell(colls, 1, CollectiveCompareModel::DurationB).toString(), QString::fromUtf8("–"));
    EXPECT_EQ(cell(colls, 2, CollectiveCompareModel::Bucket).toInt(), 1);
    EXPECT_EQ(cell(colls, 2, CollectiveCompareModel::Paired).toString(), "B only");
    EXPECT_TRUE(cell(colls, 1, CollectiveCompareModel::DurationA, Qt::ToolTipRole).toString().startsWith("only in B"));

    // The header names both runs and what could not be paired.
    EXPECT_TRUE(w.compareText().contains("/runs/A") && w.compareText().contains("/runs/B"));
    EXPECT_TRUE(w.compareText().contains("3 steps in the base, 2 in the candidate"));
    EXPECT_TRUE(w.compareText().contains("0 collectives paired by type, group, size and bucket"))
        << w.compareText().toStdString();
    EXPECT_TRUE(w.compareText().contains("4 only in A, 8 only in B"));
    if (const char* out = std::getenv("OSC_GUI_TEST_SAVE")) {
        w.raisePanel("collectives");
        QApplication::processEvents();
        w.grab().save(QString(out) + "/compare-collectives.png");
    }

    // A row click moves A's timeline to that step, as A's own Steps table does.
    const QModelIndex second = steps->index(1, StepCompareModel::Step);
    w.jumpToRow(second);
    const TimeNs start = second.data(StartRole).toLongLong();
    const StepAnalysis& step1 = base().analysis->devices[0].steps[1];
    EXPECT_EQ(start, step1.start_ns);
    ASSERT_TRUE(w.timeline()->selection().has_value());
    EXPECT_EQ(w.timeline()->selection()->start, step1.start_ns);
    EXPECT_EQ(w.timeline()->selection()->end, step1.end_ns);

    // Sorting by the change keeps the hand-worked values with their rows.
    steps->sort(StepCompareModel::ExposedChange, Qt::DescendingOrder);
    steps->waitForSort();
    EXPECT_EQ(cell(steps, 0, StepCompareModel::ExposedChange).toString(), exposedChange);

    // Export writes the compare table in numbers: raw ns and ratios, ASCII minus.
    QTemporaryDir dir;
    const QString csv = dir.filePath("steps.csv");
    ASSERT_EQ(w.exportTableCsv("steps", csv), QString());
    QFile file(csv);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(file.readAll());
    EXPECT_TRUE(
        text.startsWith("rank,host,pid,device,step,name_a,name_b,window_ns_a,window_ns_b,window_ns_change,"
                        "window_ns_relative,"))
        << text.left(200).toStdString();
    EXPECT_TRUE(text.contains(",3100000,3060000,-40000,")) << text.toStdString();
    EXPECT_FALSE(text.contains(QString::fromUtf8("\u2212")));

    w.stopComparing();
    EXPECT_FALSE(w.comparing());
    EXPECT_EQ(w.panelTable("steps")->model(), w.stepModel());
    EXPECT_EQ(w.stepModel()->rowCount(), 6);  // A's own: 2 devices x 3 steps
}

TEST(CompareWindow, ReopeningRunAComparesTheNewOneWithB) {
    MainWindow w;
    w.showComparison(candidate());  // B first: nothing to compare with yet
    EXPECT_EQ(w.stepCompareModel()->rowCount(), 0);
    w.showLoaded(candidate());  // B against itself: every change is zero
    w.waitForPanels();
    ASSERT_EQ(w.stepCompareModel()->rowCount(), 4);
    EXPECT_EQ(w.stepCompareModel()->index(0, StepCompareModel::TimeChange).data().toString(), "0");
    EXPECT_EQ(w.collectiveCompareModel()->rowCount(), 8);  // B's 2 x 2 x 2, all paired with themselves

    // A without a timeline (a saved report of run A): the same rows and changes.
    LoadedCapture results;
    results.analysis = base().analysis;
    results.path = "/runs/A.json";
    results.kind = OpenedKind::SavedReport;
    w.showLoaded(results);
    w.waitForPanels();
    ASSERT_FALSE(w.hasTimeline());
    ASSERT_EQ(w.stepCompareModel()->rowCount(), 4);
    EXPECT_EQ(w.stepCompareModel()->index(0, StepCompareModel::OverlapChange).data().toString(), "+50.0 pts");
    EXPECT_TRUE(w.compareText().contains("/runs/A.json"));
    EXPECT_FALSE(w.compareText().contains("on the timeline"));
}

TEST(CompareWindow, RunBLoadsInTheBackgroundAndAFailureNamesIt) {
    QTemporaryDir dir;
    const QString b = dir.filePath("b");
    synth::writeWorkload(job(synth::OverlapMode::PerParam, 2), b.toStdString(), false);
    MainWindow w;
    w.showLoaded(base());
    w.compareWith(b);
    QTRY_VERIFY_WITH_TIMEOUT(w.comparing(), 20000);
    w.waitForPanels();
    EXPECT_EQ(w.candidate().path, b);
    ASSERT_EQ(w.stepCompareModel()->rowCount(), 4);  // read from files: the same hand-worked changes
    EXPECT_EQ(w.stepCompareModel()->index(0, StepCompareModel::OverlapChange).data().toString(), "+50.0 pts");

    // Stopped while B loads: B does not come back when it arrives.
    w.stopComparing();
    w.compareWith(b);
    w.stopComparing();
    QTest::qWait(200);
    EXPECT_FALSE(w.comparing());
    EXPECT_EQ(w.stepCompareModel()->rowCount(), 0);

    // An unreadable B: not comparing, and the status bar names it.
    w.compareWith(dir.filePath("missing.sqlite"));
    QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().contains("missing.sqlite") &&
                                 w.statusBar()->currentMessage().startsWith("Cannot compare"),
                             20000);
    EXPECT_FALSE(w.comparing());
}

// B's timeline under A's: step N of each at the same x. Steps follow each
// other stepGapNs = 100,000 apart from the first kernel at kFirstKernelNs =
// 1 ms (workload_spec.h), so A's step k starts at 1,000,000 + k x 3,200,000
// and B's at 1,000,000 + k x 3,160,000: B - A is 0 in step 0 and -40,000
// in step 1; A's step 2, which B lacks, takes step 1's offset (the nearest
// paired step).
TEST(CompareWindow, RunBsTimelineFollowsAByStep) {
    constexpr TimeNs a1 = 4'200'000, b1 = 4'160'000, a2 = 7'400'000;
    MainWindow w;
    w.resize(1600, 900);
    w.show();
    w.showLoaded(base());
    CompareTimeline* b = w.compareTimeline();
    EXPECT_TRUE(b->isHidden());  // not comparing: A alone, as before
    TimelineWidget* ta = w.timeline();
    const ViewRange opened = ta->viewRange();
    w.showComparison(candidate());
    QApplication::processEvents();
    ASSERT_FALSE(b->isHidden());
    EXPECT_EQ(ta->viewRange(), opened);  // B opening does not move A
    TimelineWidget* tb = b->timeline();
    ASSERT_EQ(tb->model(), candidate().model.get());
    ASSERT_EQ(ta->jobSteps().size(), 3u);
    ASSERT_EQ(tb->jobSteps().size(), 2u);
    EXPECT_EQ(ta->jobSteps()[1].window.start, a1);
    EXPECT_EQ(tb->jobSteps()[1].window.start, b1);
    EXPECT_EQ(ta->jobSteps()[2].window.start, a2);
    EXPECT_EQ(b->alignment().pairedSteps(), 2u);

    // Inside A's step 1: B shows the same offsets inside its step 1.
    ta->setViewRange({a1 + 100'000, a1 + 1'100'000});
    EXPECT_EQ(tb->viewRange(), (ViewRange{b1 + 100'000, b1 + 1'100'000}));
    // Both steps 1 start at the same x, a fifth into the view (the two
    // timelines are equally wide: one splitter).
    ta->setViewRange({a1 - 200'000, a1 + 800'000});
    ASSERT_EQ(ta->eventAreaWidth(), tb->eventAreaWidth());
    EXPECT_NEAR(ta->xOf(a1), tb->xOf(b1), 0.5);
    EXPECT_NEAR(ta->xOf(a1), TimelineWidget::kLabelWidth + ta->eventAreaWidth() * 0.2, 0.5);
    // Step 0: the same times. A's step 2: step 1's offset, -40,000.
    ta->setViewRange({1'500'000, 2'500'000});
    EXPECT_EQ(tb->viewRange(), (ViewRange{1'500'000, 2'500'000}));
    ta->setViewRange({a2 + 500'000, a2 + 1'500'000});
    EXPECT_EQ(tb->viewRange(), (ViewRange{a2 + 460'000, a2 + 1'460'000}));

    // Moved on B's timeline: A follows by B's steps (B's step 1 + 200,000).
    tb->setViewRange({b1 + 200'000, b1 + 700'000});
    EXPECT_EQ(ta->viewRange(), (ViewRange{a1 + 200'000, a1 + 700'000}));
    EXPECT_EQ(tb->viewRange(), (ViewRange{b1 + 200'000, b1 + 700'000}));

    w.stopComparing();
    EXPECT_TRUE(b->isHidden());
    EXPECT_EQ(tb->model(), nullptr);
    EXPECT_EQ(ta->viewRange(), (ViewRange{a1 + 200'000, a1 + 700'000}));
}
