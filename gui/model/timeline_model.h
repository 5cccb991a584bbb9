// The timeline's data: lanes grouped by device, built once from a Capture.
//
// No painting and no widgets here (Qt Creator's tracing lib split). A device
// group holds the stream lanes of one GPU in one process plus its coverages
// (the analyzer's DeviceCoverage); a process's NVTX ranges sit in its first group.
// Layout state (collapsed, hidden, order) lives here too so that it survives
// repaints and can be tested without a window.
#pragma once

#include "analyzer/capture/model.h"
#include "analyzer/metrics/analysis.h"
#include "analyzer/metrics/coverage.h"
#include "gui/model/event_row.h"
#include "gui/model/flow_index.h"
#include "gui/model/op_links.h"
#include "gui/model/pipeline_bubbles.h"

#include <memory>
#include <string>
#include <vector>

namespace osc::gui {

// Host: a CPU thread (API calls, PyTorch operators).
enum class LaneKind : uint8_t { Ranges, Stream, Overlap, Host };

struct Lane {
    LaneKind kind = LaneKind::Stream;
    int group = 0;
    uint32_t stream = 0;  // for stream lanes
    uint64_t thread = 0;  // for host lanes: the globalTid
    std::string label;
    Category mainCategory = Category::Compute;
    std::vector<EventRow> rows;  // one row, or one per nesting depth for ranges
    // CPU lanes: the longest event of each row. Zoomed out, the deeper rows
    // hold only events too short to see, and the lane shows fewer rows.
    std::vector<TimeNs> rowLongest;
    bool hidden = false;
};

struct DeviceGroup {
    int process = 0;  // into Capture::processes
    int device = -1;  // into Process::devices, -1 for a process without GPU work
    std::string label;
    // C, M, X, C∩M, M∖C, C∪M, C∪M∪X with prefix sums: the analyzer's own
    // index, so a range selection gives exactly the report's numbers.
    DeviceCoverage coverage;
    std::vector<int> lanes;  // display order, into TimelineModel::lanes()
    // Kernel rows of communication kernels, start-sorted: matching the same
    // collective across ranks by order when no NCCL plugin rows exist.
    std::vector<uint32_t> commKernels;
    // From the analysis (annotate()): exposed communication spent waiting for
    // the last rank, drawn apart from exposed transfer on the overlap lane.
    CoverageIndex exposedWait;
    int analysisDevice = -1;  // into Analysis::devices, -1 before annotate()
    // From the analysis: the device's pipeline bubbles as intervals (shaded
    // on its stream lanes), and what each of its communication operations
    // was matched with on other ranks.
    StageBubbles bubbles;
    OpLinks opLinks;
    bool collapsed = false;
    bool reordered = false;  // the user moved a lane (saved_layout.h keeps the order then)
};

// Refers to one event: lane, row inside the lane, index inside the row.
struct EventRef {
    int lane = -1;
    int row = 0;
    size_t index = 0;
    bool valid() const { return lane >= 0; }
    bool operator==(const EventRef&) const = default;
};

class TimelineModel {
public:
    static constexpr int kMaxRangeDepth = 6;

    TimelineModel() = default;
    TimelineModel(std::shared_ptr<const Capture> capture, const AnalysisSettings& settings = {});

    const Capture& capture() const { return *capture_; }
    std::shared_ptr<const Capture> sharedCapture() const { return capture_; }
    bool empty() const { return !capture_ || groups_.empty(); }
    const std::vector<DeviceGroup>& groups() const { return groups_; }
    const std::vector<Lane>& lanes() const { return lanes_; }
    const Lane& lane(int i) const { return lanes_[static_cast<size_t>(i)]; }
    // Earliest start and latest end over everything shown.
    TimeNs begin() const { return begin_; }
    TimeNs end() const { return end_; }

    // Lanes to show, top to bottom, honouring collapsed groups, hidden lanes
    // and whether CPU lanes are shown.
    std::vector<int> visibleLanes() const;
    void setHostLanesShown(bool shown) { hostLanesShown_ = shown; }
    bool hostLanesShown() const { return hostLanesShown_; }
    bool hasHostLanes() const;
    void setCollapsed(int group, bool collapsed);
    void setHidden(int lane, bool hidden);
    void showAllLanes();
    // Moves a lane up (delta < 0) or down inside its group.
    void moveLane(int lane, int delta);
    // A group's lanes in a new order (a permutation of its lanes; anything
    // else is ignored).
    void setLaneOrder(int group, std::vector<int> order);

    // Adds a "steps (GPU)" lane per device from the analysis: the step
    // windows projected onto the GPU, under the NVTX lane.
    void addStepLanes(const Analysis& analysis);
    // Takes what the analysis adds to each device group: the exposed waiting
    // for the overlap lane, the pipeline bubbles, the matches of its
    // operations, and the last-arrival count in the group's label.
    void annotate(const Analysis& analysis);
    // What another analysis says of a group (a hang, gui/model/hang_focus.h):
    // its title, and the exposed communication spent waiting on its overlap lane.
    void setGroupLabel(int group, std::string label);
    void setExposedWait(int group, IntervalSet waiting);
    // The group showing DeviceAnalysis `d`, or -1.
    int groupOf(const DeviceAnalysis& d) const;
    // The group of a process's device (index into Process::devices), or -1.
    int groupOfDevice(int process, int deviceIndex) const;
    // Where API call `row` of a process is drawn on its thread's CPU lane.
    EventRef findApiCall(int process, uint32_t row) const;
    const FlowIndex& flowIndex() const { return flowIndex_; }
    const std::string& stepName(uint32_t i) const { return stepNames_.at(i); }

    // The device in the capture behind a group, or nullptr.
    const Device* deviceOf(int group) const;
    const Process& processOf(int group) const;

    // Where a kernel row of a group's device is drawn.
    EventRef findKernel(int group, uint32_t kernelRow) const;
    // The event of `source` starting at `start` on a stream lane of the group
    // (and, unless kNoId, with that row in its source table).
    EventRef findOnStream(int group, uint32_t stream, TimeNs start, EventSource source,
                          uint32_t sourceRow = kNoId) const;
    // The step window starting at `start` on the group's "steps (GPU)" lane.
    EventRef findStep(int group, TimeNs start) const;
    // Which analysed step a Step event shows: (index into Analysis::devices,
    // index into its steps).
    std::pair<int, int> stepOrigin(uint32_t stepEvent) const { return stepOrigins_.at(stepEvent); }
    // The same collective on every other group: by position among the
    // communication kernels (the N-th collective on each rank). Without the
    // analysis only (kernel_links.h uses its matches); sends and receives
    // (SendRecv kernels) pair by peer, not position, so they match nothing here.
    std::vector<EventRef> matchingCollectives(EventRef ref) const;

private:
    void buildProcess(int processIndex);
    int buildDeviceGroup(int processIndex, int deviceIndex);
    void buildRangesLane(int group, const Process& p);
    void buildHostLanes(int group, const Process& p);

    std::shared_ptr<const Capture> capture_;
    AnalysisSettings settings_;
    std::vector<DeviceGroup> groups_;
    std::vector<Lane> lanes_;
    std::vector<std::string> stepNames_;
    std::vector<std::pair<int, int>> stepOrigins_;
    FlowIndex flowIndex_;
    bool hostLanesShown_ = true;
    TimeNs begin_ = 0, end_ = 1;
};

}  // namespace osc::gui
