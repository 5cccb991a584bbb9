// The merge of partial results: the cross-rank engine (analyzer/crossrank)
// over partial files, its decisions written into each device's saved report
// object (device_json.h). Memory is bounded by the largest device and the
// devices' headers, not by the job: everything proportional to a device's
// operations waits in scratch files and is read back per pass.
#pragma once

#include "analyzer/crossrank/engine.h"
#include "analyzer/partial/part_set.h"
#include "analyzer/partial/part_source.h"
#include "analyzer/report/report_assembler.h"
#include "analyzer/report/report_options.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace osc::partial {

struct MergeOptions {
    // --align for the merged job; unset: what the partials were made with
    // (they must agree).
    std::optional<bool> alignCollectives;
    // --peak-busbw-gbps for the merged job (docs/design.md 4d); unset: what
    // the first partial was made with.
    std::optional<double> peakBusBwGbps;
    // After each device is written: devices done, devices in all.
    std::function<void(size_t done, size_t total)> progress;
    // Matched instances held in memory at once before they go to disk.
    size_t instancesInMemory = size_t{8} << 20;
    // Threads writeMergedJson renders devices on, ahead of the one it
    // writes (0: one per core); 1 also keeps mergedReport and
    // mergedAnalysis from reading the next device back on another thread.
    int threads = 0;
    // Devices are read back on another thread only when their records
    // average this many bytes: a smaller one is read sooner than it is
    // handed from thread to thread.
    uint64_t bytesForThreads = uint64_t{1} << 20;
};

class Merge {
public:
    // Runs the engine up to the devices. Throws std::invalid_argument when
    // the partials disagree on --align and none was given.
    Merge(const PartSet& parts, const MergeOptions& options);

    // Everything but the devices and matched collectives (crossrank::Engine::rest).
    const Analysis& rest() const { return engine_.rest(); }
    size_t deviceCount() const { return engine_.deviceCount(); }
    size_t matchedCount() const { return engine_.matchedCount(); }

    // One device at a time in order 0, 1, ...: its report object
    // (writeDeviceJson's layout), or read back as a DeviceAnalysis.
    void writeDevice(std::ostream& out, int indent, size_t index);
    DeviceAnalysis device(size_t index);
    // device() with the decisions taken: thread-safe, as render() is.
    DeviceAnalysis device(size_t index, const crossrank::DeviceCrossRank& cross) const;
    // Every device read back, handed to `take` in order 0, 1, ...; with
    // MergeOptions::threads other than 1 and devices of bytesForThreads,
    // the next ones read on other threads while one is taken: on one thread,
    // two in memory, unless `keptAll` (the caller keeps every device).
    void eachDevice(const std::function<void(DeviceAnalysis&&)>& take, bool keptAll);
    // writeDevice in two halves: the decisions, in order 0, 1, ... (the
    // engine moves on), and the report object made with them, which may run
    // for several devices at once on other threads.
    crossrank::DeviceCrossRank decide(size_t index) { return engine_.device(index); }
    void render(std::ostream& out, int indent, size_t index, const crossrank::DeviceCrossRank& cross) const;
    void reportProgress(size_t index) const {
        if (options_.progress) options_.progress(index + 1, engine_.deviceCount());
    }
    // After the last device, in order 0, 1, ...
    MatchedCollective matched(size_t index) { return engine_.matched(index); }

private:
    const PartSet& parts_;
    MergeOptions options_;
    PartSource source_;
    crossrank::Engine engine_;
};

// The merged report JSON, streamed (report_json.h's layout).
// `warnings`, when given, hears the merge's warnings (the report holds them
// too) before the report is written, so that a terminal shows them ahead of it.
void writeMergedJson(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                     std::ostream& out, const std::function<void(const std::vector<std::string>&)>& warnings = nullptr);
// The merged text or Markdown report, made device by device as the JSON
// above is: each device is rendered and dropped before the one after the
// next is read, so memory holds no more of the devices than two and slim
// copies of their totals.
// Equal to formatTextReport / formatMarkdownReport of mergedAnalysis().
// `warnings`, when given, gets the merge's warnings (the report leaves
// them out; the CLI prints them).
std::string mergedReport(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                         report::ReportFormat format, std::vector<std::string>* warnings = nullptr);
// The merged job as an Analysis (check, diff, the GUI); the reports have
// writeMergedJson and mergedReport, which never hold the job's devices.
// Without `collectives` the devices' collectives and signatures are dropped
// as they are read: memory then holds little more than the per-device totals.
Analysis mergedAnalysis(const PartSet& parts, const MergeOptions& options, bool collectives = true);

}  // namespace osc::partial
