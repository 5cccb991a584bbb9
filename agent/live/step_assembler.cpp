#include "agent/live/step_assembler.h"

#include "analyzer/capture/api_call_names.h"
#include "analyzer/metrics/classify.h"

#include <algorithm>

namespace osc::agent::live {
namespace {

template <class Deque, class Done>
void popWhile(Deque& d, Done done) {
    while (!d.empty() && done(d.front())) d.pop_front();
}

}  // namespace

int64_t stepNumberOf(std::string_view name) {
    size_t end = name.size();
    while (end > 0 && (name[end - 1] < '0' || name[end - 1] > '9')) --end;
    if (end == 0) return -1;
    size_t begin = end;
    while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9') --begin;
    begin = std::max(begin, end > 18 ? end - 18 : size_t{0});  // stays within int64
    int64_t n = 0;
    for (size_t i = begin; i < end; ++i) n = n * 10 + (name[i] - '0');
    return n;
}

StepAssembler::StepAssembler(std::regex stepPattern, AssemblerLimits limits)
    : stepPattern_(std::move(stepPattern)), limits_(limits) {}

void StepAssembler::saw(TimeNs t) {
    newest_ = std::max(newest_, t);
    ++rowsSeen_;
}

bool StepAssembler::isStepRange(const RangeRow& r) {
    if (r.onGpu || r.kind == RangeKind::Mark || r.end <= r.start) return false;
    // Other ranges repeat their names every step; a step's name is new each
    // time, so only the others are remembered.
    const auto it = otherRangeNames_.find(std::string(r.text));
    if (it != otherRangeNames_.end()) return false;
    if (searchName(r.text, stepPattern_)) return true;
    if (otherRangeNames_.size() >= 4096) otherRangeNames_.clear();
    otherRangeNames_.emplace(r.text);
    return false;
}

void StepAssembler::addRange(const RangeRow& r) {
    saw(r.start);
    if (isStepRange(r)) {
        if (r.start < closedSlotEnd_) {  // its place among the steps is gone
            ++counters_.rowsLate;
            return;
        }
        OpenStep s;
        s.range.row = r;
        s.range.text = std::string(r.text);
        s.range.domain = std::string(r.domain);
        s.number = stepNumberOf(r.text);
        s.seenAtNs = -1;  // set by the next advance(), which knows the time
        sawSteps_ = true;
        newestStep_ = std::max(newestStep_, s.number);
        if (firstWholeStep_ < 0 && r.start >= 0) firstWholeStep_ = s.number;
        const auto at = std::upper_bound(open_.begin(), open_.end(), r.start,
                                         [](TimeNs t, const OpenStep& o) { return t < o.range.row.start; });
        open_.insert(at, std::move(s));
        return;
    }
    if (r.start < cpuFloor()) {
        ++counters_.rowsLate;
        return;
    }
    HeldRange h;
    h.row = r;
    h.text = std::string(r.text);
    h.domain = std::string(r.domain);
    rows_.ranges.push_back(std::move(h));
}

void StepAssembler::addApiCall(const ApiCallRow& r) {
    saw(r.start);
    if (r.start < cpuFloor()) {
        ++counters_.rowsLate;
        return;
    }
    HeldCall h;
    h.start = r.start;
    h.end = r.end;
    h.globalTid = r.globalTid;
    h.correlationId = r.correlationId;
    h.returnValue = r.returnValue;
    h.kind = r.kind;
    // A job calls a handful of API functions, each thousands of times a
    // step: the last name's id and role serve the next call of the same name.
    if (r.name != lastApiName_) {
        lastApiId_ = names_.intern(r.name);
        lastApiName_ = names_.at(lastApiId_);
        lastApiRole_ = apiCallRole(r.name);
    }
    h.name = lastApiId_;
    // As AwaitedLaunches reads them: launches inside a stream capture become
    // graph nodes and never run under their own id.
    const ApiCallRole role = r.returnValue == 0 ? lastApiRole_ : ApiCallRole::Other;
    const bool capturing =
        std::find(capturingThreads_.begin(), capturingThreads_.end(), r.globalTid) != capturingThreads_.end();
    if (role == ApiCallRole::BeginStreamCapture && !capturing) capturingThreads_.push_back(r.globalTid);
    if (role == ApiCallRole::EndStreamCapture) std::erase(capturingThreads_, r.globalTid);
    h.launch = (role == ApiCallRole::KernelLaunch || role == ApiCallRole::AsyncCopyOrMemset ||
                role == ApiCallRole::GraphLaunch) &&
               !capturing;
    rows_.apiCalls.push_back(h);
}

void StepAssembler::addKernel(const KernelRow& r) {
    saw(r.end);
    if (r.end <= gpuFloor()) return;
    // Ids in our table (the decoder asked stringId, else we intern the
    // text); no views: the decoder's storage is not ours to keep, and the
    // rows leave through kernelRow().
    const uint32_t name = r.demangledNameId == kNoId ? names_.intern(r.demangledName) : r.demangledNameId;
    const uint32_t shortName = r.shortNameId == kNoId ? names_.intern(r.shortName) : r.shortNameId;
    rows_.kernels.emplace([&](Held<KernelRow>& h) {
        h.row = r;
        h.row.demangledNameId = name;
        h.row.shortNameId = shortName;
        h.row.demangledName = h.row.shortName = {};
        h.written = false;
    });
    gpuRecords_.add(r.correlationId);
}

void StepAssembler::addCopy(const CopyRow& r) {
    saw(r.end);
    if (r.end <= gpuFloor()) return;
    rows_.copies.push_back({r});
    gpuRecords_.add(r.correlationId);
}

void StepAssembler::addMemset(const MemsetRow& r) {
    saw(r.end);
    if (r.end <= gpuFloor()) return;
    rows_.memsets.push_back({r});
    gpuRecords_.add(r.correlationId);
}

void StepAssembler::addSync(const SyncRow& r) {
    saw(r.start);
    if (r.start < cpuFloor()) return;
    rows_.syncs.push_back({r});
}

void StepAssembler::addCudaEvent(const CudaEventRow& r) {
    ++rowsSeen_;
    rows_.events.push_back({r});
}

void StepAssembler::addCollective(const CollectiveRow& r) {
    ++rowsSeen_;
    Held<CollectiveRow> h{r};
    h.row.func = names_.at(names_.intern(r.func));
    h.row.datatype = names_.at(names_.intern(r.datatype));
    h.row.algo = names_.at(names_.intern(r.algo));
    h.row.proto = names_.at(names_.intern(r.proto));
    rows_.collectives.push_back(h);
}

void StepAssembler::addGpu(const GpuInfo& gpu) {
    gpus_[gpu.id] = gpu;
    ++descriptionsVersion_;
}

void StepAssembler::addStreamName(uint64_t globalPid, uint32_t deviceId, uint32_t streamId, std::string_view name) {
    if (streamNames_.size() >= 65536) return;
    streamNames_[{globalPid, deviceId, streamId}] = std::string(name);
    ++descriptionsVersion_;
}

void StepAssembler::addThreadName(uint64_t globalTid, std::string_view name) {
    if (threadNames_.size() >= 65536) return;
    threadNames_[globalTid] = std::string(name);
    ++descriptionsVersion_;
}

void StepAssembler::writeDescriptions(RowSink& out) const {
    for (const auto& [id, gpu] : gpus_) out.addGpu(gpu);
    for (const auto& [key, name] : streamNames_)
        out.addStreamName(std::get<0>(key), std::get<1>(key), std::get<2>(key), name);
    for (const auto& [tid, name] : threadNames_) out.addThreadName(tid, name);
}

TimeNs StepAssembler::cpuFloor() const { return closedSlotEnd_; }

TimeNs StepAssembler::gpuFloor() const {
    // A step not closed yet launched nothing before its range started, and
    // the GPU runs nothing before it was launched.
    if (!open_.empty()) return open_.front().range.row.start;
    return closedRangeEnd_;
}

uint64_t StepAssembler::launchesWaiting(const OpenStep& s) const {
    uint64_t waiting = 0;
    for (size_t i = 0; i < rows_.apiCalls.size(); ++i) {
        const CallKey& c = rows_.apiCalls.key(i);
        if (c.launch && c.start >= s.range.row.start && c.start < s.range.row.end &&
            !gpuRecords_.contains(c.correlation))
            ++waiting;
    }
    return waiting;
}

void StepAssembler::advance(int64_t steadyNs, const StepHandler& handler) {
    for (auto& s : open_)
        if (s.seenAtNs < 0) s.seenAtNs = steadyNs;
    while (!open_.empty()) {
        OpenStep& s = open_.front();
        const bool cpuDone = open_.size() >= 2 || steadyNs - s.seenAtNs >= limits_.cpuQuietNs;
        if (!cpuDone) break;
        if (s.cpuDoneAtNs < 0) s.cpuDoneAtNs = steadyNs;
        const bool waiting = launchesWaiting(s) > 0;
        const bool overdue = steadyNs - s.cpuDoneAtNs >= limits_.gpuWaitNs || open_.size() > limits_.maxOpenSteps;
        if (waiting && !overdue) break;
        close(handler, !waiting);
        // A cycle closes several steps (five at 100 ms steps): each close
        // walks every held row, so the closed step's go first.
        prune();
    }
    prune();
    enforceRowLimit(handler);
}

void StepAssembler::finish(const StepHandler& handler, const std::function<void()>& beforeDrop) {
    while (!open_.empty()) close(handler, launchesWaiting(open_.front()) == 0);
    if (beforeDrop) beforeDrop();
    clear();
}

void StepAssembler::clear() {
    rows_.clear();
    open_.clear();
    gpuRecords_.clear();
    capturingThreads_.clear();
    newest_ = closedSlotEnd_ = closedRangeEnd_ = INT64_MIN;
    newestStep_ = firstWholeStep_ = -1;
    sawSteps_ = false;
    rowsSeen_ = 0;
}

void StepAssembler::writeTail(TimeNs from, RowSink& out) {
    for (const OpenStep& s : open_)
        if (s.range.row.start >= from) out.addRange(s.range.view());
    const auto cpu = [&](auto& held) { return !held.written && held.row.start >= from; };
    const auto gpu = [&](auto& held) { return !held.written && held.row.end > from; };
    for (size_t i = 0; i < rows_.apiCalls.size(); ++i) {
        bool& written = rows_.apiCalls.writtenAt(i);
        if (written || rows_.apiCalls.key(i).start < from) continue;
        const HeldCall& c = rows_.apiCalls[i];
        out.addApiCall(c.row(names_.at(c.name)));
        written = true;
    }
    for (HeldRange& r : rows_.ranges)
        if (cpu(r)) out.addRange(r.view()), r.written = true;
    for (auto& y : rows_.syncs)
        if (cpu(y)) out.addSync(y.row), y.written = true;
    for (auto& e : rows_.events)
        if (!e.written) out.addCudaEvent(e.row), e.written = true;
    for (size_t i = 0; i < rows_.kernels.size(); ++i) {
        bool& written = rows_.kernels.writtenAt(i);
        if (written || rows_.kernels.key(i).end <= from) continue;
        KernelRow row = kernelRow(rows_.kernels[i]);
        row.demangledNameId = row.shortNameId = kNoId;
        out.addKernel(row);
        written = true;
    }
    for (auto& c : rows_.copies)
        if (gpu(c)) out.addCopy(c.row), c.written = true;
    for (auto& m : rows_.memsets)
        if (gpu(m)) out.addMemset(m.row), m.written = true;
    for (auto& c : rows_.collectives)
        if (!c.written && std::max({c.row.enqueue, c.row.gpuStart, c.row.gpuEnd}) >= from)
            out.addCollective(c.row), c.written = true;
}

void StepAssembler::close(const StepHandler& handler, bool complete) {
    OpenStep& step = open_.front();
    const TimeNs slotEnd = open_.size() >= 2 ? open_[1].range.row.start : step.range.row.end;
    buildCapture(step, slotEnd);
    ClosedStep closed;
    closed.name = step.range.text;
    closed.number = step.number;
    closed.rangeStart = step.range.row.start;
    closed.rangeEnd = step.range.row.end;
    closed.slotEnd = slotEnd;
    closed.complete = complete;
    closed.capture = &capture_;
    closed.recordRows = [this, &step, slotEnd, complete](StepRows& out) { recordStep(step, slotEnd, complete, out); };
    closed.record = [this, &step, slotEnd, complete](RecordedStep& out) {
        recordStep(step, slotEnd, complete, scratchRows_);
        materialize(scratchRows_, out);
    };
    if (handler) handler(closed);
    ++counters_.stepsClosed;
    if (!complete) ++counters_.stepsIncomplete;
    closedSlotEnd_ = std::max(closedSlotEnd_, slotEnd);
    closedRangeEnd_ = std::max(closedRangeEnd_, step.range.row.end);
    open_.pop_front();
}

void StepAssembler::prune() {
    // Without an open step, rows outside steps go once they are old enough.
    const TimeNs age = newest_ == INT64_MIN ? INT64_MIN : newest_ - limits_.keepOutsideStepsNs;
    // With steps open, what lies before the oldest belongs to no step left.
    const TimeNs cpu = open_.empty() ? std::max(closedSlotEnd_, age) : open_.front().range.row.start;
    const TimeNs gpu = open_.empty() ? std::max(closedRangeEnd_, age) : gpuFloor();
    const auto forget = [&](uint32_t correlation) { gpuRecords_.remove(correlation); };
    // By the keys (held_rows.h): the rows going are the coldest.
    while (!rows_.apiCalls.empty() && rows_.apiCalls.key(0).start < cpu) rows_.apiCalls.pop_front();
    popWhile(rows_.ranges, [&](const HeldRange& r) { return r.row.start < cpu; });
    popWhile(rows_.syncs, [&](const auto& y) { return y.row.start < cpu; });
    while (!rows_.kernels.empty() && rows_.kernels.key(0).end <= gpu) {
        forget(rows_.kernels.key(0).correlation);
        rows_.kernels.pop_front();
    }
    popWhile(rows_.copies, [&](const auto& c) {
        if (c.row.end > gpu) return false;
        forget(c.row.correlationId);
        return true;
    });
    popWhile(rows_.memsets, [&](const auto& m) {
        if (m.row.end > gpu) return false;
        forget(m.row.correlationId);
        return true;
    });
    popWhile(rows_.collectives, [&](const auto& c) {
        return std::max({c.row.enqueue, c.row.gpuStart, c.row.gpuEnd}) < gpu - kPluginSlackNs;
    });
    // Event records belong to the call that recorded them; ids grow with time.
    const uint32_t oldestCall = rows_.apiCalls.empty() ? UINT32_MAX : rows_.apiCalls.front().correlationId;
    popWhile(rows_.events, [&](const auto& e) { return e.row.correlationId < oldestCall; });
}

void StepAssembler::enforceRowLimit(const StepHandler& handler) {
    while (rows_.size() > limits_.maxRows && !open_.empty()) {
        close(handler, false);
        prune();
    }
    while (rows_.size() > limits_.maxRows) {
        // No step to give up: the oldest rows of the longest table go.
        auto drop = [&](auto& d) {
            if (d.empty()) return false;
            d.pop_front();
            ++counters_.rowsDropped;
            return true;
        };
        const size_t most =
            std::max({rows_.kernels.size(), rows_.apiCalls.size(), rows_.copies.size(), rows_.memsets.size(),
                      rows_.ranges.size(), rows_.syncs.size(), rows_.events.size(), rows_.collectives.size()});
        if (rows_.kernels.size() == most) {
            gpuRecords_.remove(rows_.kernels.front().row.correlationId);
            drop(rows_.kernels);
        } else if (rows_.apiCalls.size() == most) {
            drop(rows_.apiCalls);
        } else if (rows_.copies.size() == most) {
            drop(rows_.copies);
        } else if (rows_.memsets.size() == most) {
            drop(rows_.memsets);
        } else if (rows_.ranges.size() == most) {
            drop(rows_.ranges);
        } else if (rows_.syncs.size() == most) {
            drop(rows_.syncs);
        } else if (rows_.events.size() == most) {
            drop(rows_.events);
        } else {
            drop(rows_.collectives);
        }
    }
}

}  // namespace osc::agent::live
