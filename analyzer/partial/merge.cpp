#include "analyzer/partial/merge.h"

#include "analyzer/crossrank/byte_io.h"
#include "analyzer/partial/device_json.h"
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

// Devices' report objects made on worker threads, a few devices ahead of the
// one being written, each into its thread's scratch file (not memory: one
// device's object can be hundreds of MB), then copied out in order. The
// decisions are taken in order under the lock; the rendering, most of the
// work, runs side by side.
class DevicesAhead {
public:
    DevicesAhead(Merge& merge, int indent, int threads) : merge_(merge), indent_(indent) {
        ahead_ = static_cast<size_t>(threads) + 1;
        for (int t = 0; t < threads; ++t) scratch_.push_back(std::make_unique<crossrank::ScratchFile>());
        for (int t = 0; t < threads; ++t) workers_.emplace_back([this, t] { work(static_cast<size_t>(t)); });
    }
    ~DevicesAhead() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (auto& w : workers_) w.join();
    }
    DevicesAhead(const DevicesAhead&) = delete;
    DevicesAhead& operator=(const DevicesAhead&) = delete;

    // Device `index` (0, 1, ...) to `out`, once rendered.
    void write(std::ostream& out, size_t index) {
        Rendered r;
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [&] { return done_.count(index) != 0; });
            r = done_[index];
            done_.erase(index);
        }
        if (r.error) std::rethrow_exception(r.error);
        std::vector<char> buffer(std::min<uint64_t>(r.length, uint64_t{1} << 20));
        for (uint64_t at = 0; at < r.length;) {
            const auto n = static_cast<size_t>(std::min<uint64_t>(buffer.size(), r.length - at));
            scratch_[r.worker]->read(r.offset + at, buffer.data(), n);
            out.write(buffer.data(), static_cast<std::streamsize>(n));
            at += n;
        }
        {
            std::lock_guard lock(mutex_);
            written_ = index + 1;
        }
        changed_.notify_all();
        merge_.reportProgress(index);
    }

private:
    struct Rendered {
        size_t worker = 0;
        uint64_t offset = 0, length = 0;
        std::exception_ptr error;
    };

    void work(size_t worker) {
        crossrank::ScratchFile& scratch = *scratch_[worker];
        for (;;) {
            size_t index = 0;
            crossrank::DeviceCrossRank cross;
            Rendered r;
            r.worker = worker;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] {
                    return stop_ || failed_ || (next_ < merge_.deviceCount() && next_ < written_ + ahead_);
                });
                if (stop_ || failed_) return;
                index = next_++;
                try {
                    cross = merge_.decide(index);  // in order: under the lock
                } catch (...) {
                    r.error = std::current_exception();
                    failed_ = true;  // the engine cannot go on past a device it failed on
                }
            }
            if (!r.error) {
                try {
                    r.offset = scratch.size();
                    {
                        crossrank::ScratchWriteBuf buf(scratch);
                        std::ostream os(&buf);
                        merge_.render(os, indent_, index, cross);
                        os.flush();
                    }
                    r.length = scratch.size() - r.offset;
                } catch (...) {
                    r.error = std::current_exception();
                }
            }
            {
                std::lock_guard lock(mutex_);
                done_[index] = r;
            }
            changed_.notify_all();
        }
    }

    Merge& merge_;
    int indent_;
    size_t ahead_ = 2;
    std::vector<std::unique_ptr<crossrank::ScratchFile>> scratch_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<size_t, Rendered> done_;
    size_t next_ = 0, written_ = 0;
    bool stop_ = false, failed_ = false;
    std::vector<std::thread> workers_;  // last: started once everything above exists
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
    const PartDevice& d = source_.part(index);
    DeviceAnalysis out;
    if (d.binary) {
        const crossrank::DeviceCrossRank cross = engine_.device(index);
        out = parts_.readDevice(d);
        crossrank::applyCrossRank(out, cross);
        if (options_.progress) options_.progress(index + 1, engine_.deviceCount());
    } else {
        std::ostringstream text;
        writeDevice(text, 0, index);
        out = report::parseDeviceJson(text.str(), parts_.sourceName(d.source));
    }
    out.processIndex = source_.processOf(index);
    return out;
}

void writeMergedJson(const PartSet& parts, const MergeOptions& options, const report::ReportOptions& report,
                     std::ostream& out, const std::function<void(const std::vector<std::string>&)>& warnings) {
    Merge merge(parts, options);
    if (warnings) warnings(merge.rest().warnings);
    report::StreamedReportBody body;
    body.deviceCount = merge.deviceCount();
    const int threads =
        options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::unique_ptr<DevicesAhead> ahead;
    if (threads > 1 && merge.deviceCount() > 1)
        body.writeDevice = [&](std::ostream& os, int indent, size_t i) {
            if (!ahead) ahead = std::make_unique<DevicesAhead>(merge, indent, threads);
            ahead->write(os, i);
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
    for (size_t i = 0; i < merge.deviceCount(); ++i) assembler.addDevice(merge.device(i));
    for (size_t g = 0; g < merge.matchedCount(); ++g) assembler.addMatched(merge.matched(g));
    return assembler.finish(merge.rest());
}

Analysis mergedAnalysis(const PartSet& parts, const MergeOptions& options, bool collectives) {
    Merge merge(parts, options);
    Analysis a = merge.rest();
    a.devices.clear();  // shells: the devices themselves come next
    a.devices.reserve(merge.deviceCount());
    for (size_t i = 0; i < merge.deviceCount(); ++i) {
        DeviceAnalysis d = merge.device(i);
        if (!collectives) {
            d.collectives = {};
            d.signatures = {};
        }
        a.devices.push_back(std::move(d));
    }
    if (collectives)
        for (size_t g = 0; g < merge.matchedCount(); ++g) a.matched.push_back(merge.matched(g));
    return a;
}

}  // namespace osc::partial
