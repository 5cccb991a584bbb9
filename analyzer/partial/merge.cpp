#include "analyzer/partial/merge.h"

#include "analyzer/crossrank/byte_io.h"
#include "analyzer/partial/device_json.h"
#include "analyzer/partial/devices_ahead.h"
#include "analyzer/report/report_json.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace osc::partial {
namespace {

crossrank::EngineOptions engineOptions(const PartSet& parts, const MergeOptions& options) {
    if (!options.alignCollectives && !parts.alignAgreed)
        throw std::invalid_argument("the partial results were made with different --align choices; give --align");
    crossrank::EngineOptions out;
    out.settings = parts.settings;
    out.settings.alignCollectives = options.alignCollectives.value_or(parts.settings.alignCollectives);
    if (options.peakBusBwGbps) out.settings.peakBusBwGbps = options.peakBusBwGbps;
    out.instancesInMemory = options.instancesInMemory;
    return out;
}

int threadsOf(const MergeOptions& options) {
    return options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Where a device's report object was rendered: its worker's scratch file
// (not memory: one device's object can be hundreds of MB).
struct Rendered {
    size_t worker = 0;
    uint64_t offset = 0, length = 0;
};

}  // namespace

Merge::Merge(const PartSet& parts, const MergeOptions& options)
    : parts_(parts), options_(options), source_(parts), engine_(source_, engineOptions(parts, options)) {}

void Merge::render(std::ostream& out, int indent, size_t index, const crossrank::DeviceCrossRank& cross) const {
    const PartDevice& d = source_.part(index);
    if (d.binary) {
        DeviceAnalysis device = parts_.readDevice(d);
        crossrank::applyCrossRank(device, cross);
        report::writeDeviceJson(out, device, indent);
    } else {
        const auto in = parts_.openDeviceJson(d);
        rewriteDeviceJson(*in, out, indent, cross, d.idleGapAt, parts_.sourceName(d.source));
    }
}

void Merge::writeDevice(std::ostream& out, int indent, size_t index) {
    render(out, indent, index, decide(index));
    reportProgress(index);
}

DeviceAnalysis Merge::device(size_t index) {
    DeviceAnalysis out = device(index, decide(index));
    reportProgress(index);
    return out;
}

DeviceAnalysis Merge::device(size_t index, const crossrank::DeviceCrossRank& cross) const {
    const PartDevice& d = source_.part(index);
    DeviceAnalysis out;
    if (d.binary) {
        out = parts_.readDevice(d);
        crossrank::applyCrossRank(out, cross);
    } else {
        std::ostringstream text;
        render(text, 0, index, cross);
        out = report::parseDeviceJson(text.str(), parts_.sourceName(d.source));
    }
    out.processIndex = source_.processOf(index);
    return out;
}

void Merge::eachDevice(const std::function<void(DeviceAnalysis&&)>& take, bool keptAll) {
    // A device is handed from thread to thread in tens of microseconds:
    // 1,024 devices of 20 kB each were read as quickly on one thread.
    uint64_t bytes = 0;
    for (size_t i = 0; i < deviceCount(); ++i) bytes += source_.part(i).reportLength;
    if (threadsOf(options_) <= 1 || deviceCount() <= 1 || bytes < options_.bytesForThreads * deviceCount()) {
        for (size_t i = 0; i < deviceCount(); ++i) take(device(i));
        return;
    }
    // Devices the caller drops as it goes: one read back on another thread
    // while the one before it is taken, two in memory at most (one of a long
    // job is tens of MB). Devices it keeps anyway: read on every thread.
    const int threads = keptAll ? threadsOf(options_) : 1;
    DevicesAhead<DeviceAnalysis> ahead(
        *this, threads, keptAll ? static_cast<size_t>(threads) + 1 : 1,
        [this](size_t, size_t i, const crossrank::DeviceCrossRank& c) { return device(i, c); });
    for (size_t i = 0; i < deviceCount(); ++i) {
        take(ahead.take(i));
        reportProgress(i);
    }
}

void writeMergedJson(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                     std::ostream& out, const std::function<void(const std::vector<std::string>&)>& warnings) {
    Merge merge(parts, options);
    if (warnings) warnings(merge.rest().warnings);
    report::StreamedReportBody body;
    body.deviceCount = merge.deviceCount();
    const int threads = threadsOf(options);
    // Devices' report objects rendered on worker threads, each into its
    // thread's scratch file, then copied out in order.
    std::vector<std::unique_ptr<crossrank::ScratchFile>> scratch;
    std::unique_ptr<DevicesAhead<Rendered>> ahead;
    if (threads > 1 && merge.deviceCount() > 1)
        body.writeDevice = [&](std::ostream& os, int indent, size_t i) {
            if (!ahead) {
                for (int t = 0; t < threads; ++t) scratch.push_back(std::make_unique<crossrank::ScratchFile>());
                ahead = std::make_unique<DevicesAhead<Rendered>>(
                    merge, threads, static_cast<size_t>(threads) + 1,
                    [&, indent](size_t worker, size_t index, const crossrank::DeviceCrossRank& c) {
                        Rendered r{worker, scratch[worker]->size(), 0};
                        {
                            crossrank::ScratchWriteBuf buf(*scratch[worker]);
                            std::ostream text(&buf);
                            merge.render(text, indent, index, c);
                            text.flush();
                        }
                        r.length = scratch[worker]->size() - r.offset;
                        return r;
                    });
            }
            const Rendered r = ahead->take(i);
            std::vector<char> buffer(std::min<uint64_t>(r.length, uint64_t{1} << 20));
            for (uint64_t at = 0; at < r.length;) {
                const auto n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), r.length - at));
                scratch[r.worker]->read(r.offset + at, buffer.data(), n);
                os.write(buffer.data(), static_cast<std::streamsize>(n));
                at += n;
            }
            merge.reportProgress(i);
        };
    else
        body.writeDevice = [&](std::ostream& os, int indent, size_t i) { merge.writeDevice(os, indent, i); };
    body.matchedCount = merge.matchedCount();
    body.matched = [&](size_t i) { return merge.matched(i); };
    report::writeJsonReport(out, merge.rest(), report, body);
}

std::string mergedReport(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                         report::ReportFormat format, std::vector<std::string>* warnings) {
    Merge merge(parts, options);
    if (warnings) *warnings = merge.rest().warnings;
    report::ReportAssembler assembler(format, report);
    merge.eachDevice([&](DeviceAnalysis&& d) { assembler.addDevice(d); }, false);
    for (size_t g = 0; g < merge.matchedCount(); ++g) assembler.addMatched(merge.matched(g));
    return assembler.finish(merge.rest());
}

Analysis mergedAnalysis(const PartSet& parts, const MergeOptions& options, bool collectives) {
    Merge merge(parts, options);
    Analysis a = merge.rest();
    a.devices.clear();  // shells: the devices themselves come next
    a.devices.reserve(merge.deviceCount());
    merge.eachDevice(
        [&](DeviceAnalysis&& d) {
            if (!collectives) {
                d.collectives = {};
                d.signatures = {};
            }
            a.devices.push_back(std::move(d));
        },
        true);
    if (collectives)
        for (size_t g = 0; g < merge.matchedCount(); ++g) a.matched.push_back(merge.matched(g));
    return a;
}

}  // namespace osc::partial
