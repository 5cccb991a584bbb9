// Shared by the issue 18 GUI tests (test_gui_patterns.cpp: models;
// test_gui_pattern_views.cpp: Steps table, details and pixels): loading a
// capture as the window does, finding lanes and kernels by rank and stream,
// and the hand-worked Examples 6 and 7 of docs/metrics.md.
#pragma once

#include "analyzer/crossrank/analyze.h"
#include "analyzer/metrics/analysis.h"
#include "gui/model/event_details.h"
#include "gui/model/pipeline_bubbles.h"
#include "gui/model/timeline_model.h"
#include "tests/analyzer/test_metrics_support.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace osc::guitest {

using namespace osc::gui;

constexpr TimeNs us(TimeNs v) { return v * 1000; }
constexpr uint64_t MiB = 1 << 20;
inline const std::string kGemm = "ampere_bf16_s16816gemm_256x128";
inline const std::string kSendRecv = "void ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";

struct Loaded {
    std::shared_ptr<TimelineModel> model;
    std::shared_ptr<Analysis> analysis;
};

// What loadForViewing does, in memory.
inline Loaded load(Capture c, const AnalysisSettings& settings = {}) {
    auto capture = std::make_shared<Capture>(std::move(c));
    Loaded l;
    l.analysis = std::make_shared<Analysis>(analyze(*capture, settings));
    l.model = std::make_shared<TimelineModel>(capture, settings);
    l.model->addStepLanes(*l.analysis);
    l.model->annotate(*l.analysis);
    return l;
}

inline int groupOfRank(const Loaded& l, int rank) {
    for (const auto& d : l.analysis->devices)
        if (d.rank == rank) return l.model->groupOf(d);
    return -1;
}

inline const DeviceGroup& groupOf(const Loaded& l, int rank) {
    return l.model->groups()[static_cast<size_t>(groupOfRank(l, rank))];
}

inline int laneOfStream(const Loaded& l, int rank, uint32_t stream) {
    for (int lane : groupOf(l, rank).lanes)
        if (l.model->lane(lane).kind == LaneKind::Stream && l.model->lane(lane).stream == stream) return lane;
    return -1;
}

// The k-th event (start order) on a rank's stream.
inline EventRef kth(const Loaded& l, int rank, uint32_t stream, size_t k) {
    const int lane = laneOfStream(l, rank, stream);
    if (lane < 0 || k >= l.model->lane(lane).rows[0].size()) return {};
    return {lane, 0, k};
}

inline std::vector<std::string> valuesOf(const DetailList& d, const std::string& key) {
    std::vector<std::string> out;
    for (const auto& [k, v] : d)
        if (k == key) out.push_back(v);
    return out;
}

inline std::string valueOf(const DetailList& d, const std::string& key) {
    const auto v = valuesOf(d, key);
    return v.empty() ? "<none>" : v.front();
}

struct Expected {
    TimeNs start, end;
    BubblePart part;
};

inline void expectIntervals(const StageBubbles& b, const std::vector<Expected>& want) {
    ASSERT_EQ(b.intervals.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(b.intervals[i].start, want[i].start) << i;
        EXPECT_EQ(b.intervals[i].end, want[i].end) << i;
        EXPECT_EQ(b.intervals[i].part, want[i].part) << i;
    }
}

// docs/metrics.md Example 7: two stages, two micro-batches, 1F1B (µs), each
// compute kernel launched inside its `fwd mb N` / `bwd mb N` range.
inline Capture example7(bool slowSecondStage) {
    osc::testing::TraceBuilder b;
    TimeNs cpu = 0;
    auto mb = [&](int rank, const std::string& name, TimeNs s, TimeNs e) {
        cpu += 10;
        b.range(rank, name, cpu, cpu + 5);
        b.launched(rank, 0, kGemm, cpu + 1, us(s), us(e));
    };
    if (!slowSecondStage) {
        mb(0, "fwd mb 0", 0, 10), mb(0, "fwd mb 1", 10, 20), mb(0, "bwd mb 0", 40, 60), mb(0, "bwd mb 1", 70, 90);
        mb(1, "fwd mb 0", 10, 20), mb(1, "bwd mb 0", 20, 40), mb(1, "fwd mb 1", 40, 50), mb(1, "bwd mb 1", 50, 70);
    } else {
        mb(0, "fwd mb 0", 0, 10), mb(0, "fwd mb 1", 10, 20), mb(0, "bwd mb 0", 55, 75), mb(0, "bwd mb 1", 100, 120);
        mb(1, "fwd mb 0", 10, 25), mb(1, "bwd mb 0", 25, 55), mb(1, "fwd mb 1", 55, 70), mb(1, "bwd mb 1", 70, 100);
    }
    return b.finalized();
}

// docs/metrics.md Example 6: a send and a receive each way on two ranks (µs).
inline Capture example6() {
    osc::testing::TraceBuilder b;
    auto sendRecv = [&](int rank, TimeNs s, TimeNs e, uint32_t stream, bool send, int peer, uint64_t bytes) {
        b.kernel(rank, 0, kSendRecv, us(s), us(e), stream);
        b.p2pRow(rank, 0, 0xc0ffee, send ? "Send" : "Recv", peer, 2, bytes, us(s), us(e));
    };
    b.kernel(0, 0, kGemm, us(0), us(100), 7);
    sendRecv(0, 100, 160, 13, true, 1, MiB);
    b.kernel(0, 0, kGemm, us(120), us(220), 8);
    sendRecv(0, 300, 310, 14, false, 1, 64 * 1024);
    sendRecv(1, 40, 160, 14, false, 0, MiB);
    b.kernel(1, 0, kGemm, us(160), us(260), 7);
    sendRecv(1, 270, 280, 13, true, 0, 64 * 1024);
    return b.finalized();
}

}  // namespace osc::guitest
