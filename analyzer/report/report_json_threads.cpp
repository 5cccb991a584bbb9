// writeJsonReport with the devices' objects, nearly all of a large report,
// rendered on several threads a few devices ahead of the one being written.
#include "analyzer/report/report_json.h"
#include "analyzer/report/text_blocks.h"

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

namespace osc::report {
namespace {

class DevicesRenderedAhead {
public:
    DevicesRenderedAhead(const std::vector<DeviceAnalysis>& devices, int indent, int threads)
        : devices_(devices), indent_(indent), rendered_(static_cast<size_t>(threads) * kSlotsPerThread) {
        for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
    }
    ~DevicesRenderedAhead() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        for (auto& w : workers_) w.join();
    }
    DevicesRenderedAhead(const DevicesRenderedAhead&) = delete;
    DevicesRenderedAhead& operator=(const DevicesRenderedAhead&) = delete;

    // Device `index` (0, 1, ...) to `out`, once rendered.
    void write(std::ostream& out, size_t index) {
        Slot& slot = rendered_[index % rendered_.size()];
        {
            std::unique_lock lock(mutex_);
            changed_.wait(lock, [&] { return slot.index == index || error_; });
            if (error_) std::rethrow_exception(error_);
        }
        slot.text.writeTo(out);
        const size_t bytes = slot.text.size();
        slot.text.clearKeepingOneBlock();  // a large device's blocks are not kept for the next
        {
            std::lock_guard lock(mutex_);
            slot.index = kNone;
            written_ = index + 1;
            aheadBytes_ -= bytes;
        }
        changed_.notify_all();
    }

private:
    static constexpr size_t kNone = SIZE_MAX;
    // Devices rendered and not yet written: up to this many a thread (small
    // devices: the writer, faulting in its output, and the renderers each
    // stalled the others with two), while they hold less than kAheadBytes (a
    // device of a long job is hundreds of MB). Never a deadlock: devices are
    // taken in order, so while any waits rendered, the one to write next is
    // taken too.
    static constexpr size_t kSlotsPerThread = 8;
    static constexpr size_t kAheadBytes = size_t{64} << 20;
    struct Slot {
        size_t index = kNone;  // the device whose object `text` holds
        TextBlocks text;       // its blocks kept from one device to the next
    };

    void work() {
        for (;;) {
            size_t index = 0;
            {
                std::unique_lock lock(mutex_);
                // A slot is free once the device rendered into it last is written.
                changed_.wait(lock, [&] {
                    return stop_ || error_ ||
                           (next_ < devices_.size() && next_ < written_ + rendered_.size() &&
                            aheadBytes_ < kAheadBytes);
                });
                if (stop_ || error_ || next_ >= devices_.size()) return;
                index = next_++;
            }
            Slot& slot = rendered_[index % rendered_.size()];
            slot.text.clear();
            std::ostream os(&slot.text);
            try {
                writeDeviceJson(os, devices_[index], indent_);
            } catch (...) {
                std::lock_guard lock(mutex_);
                error_ = std::current_exception();
                changed_.notify_all();
                return;
            }
            {
                std::lock_guard lock(mutex_);
                slot.index = index;
                aheadBytes_ += slot.text.size();
            }
            changed_.notify_all();
        }
    }

    const std::vector<DeviceAnalysis>& devices_;
    const int indent_;
    std::vector<Slot> rendered_;
    std::mutex mutex_;
    std::condition_variable changed_;
    size_t next_ = 0, written_ = 0;
    size_t aheadBytes_ = 0;  // in slots rendered and not yet written
    bool stop_ = false;
    std::exception_ptr error_;
    std::vector<std::thread> workers_;
};

}  // namespace

void writeJsonReportOnThreads(std::ostream& out, const Analysis& a, const ReportOptions& options, int threads) {
    if (threads <= 1 || a.devices.size() < 2) return writeJsonReport(out, a, options);
    StreamedReportBody body;
    body.deviceCount = a.devices.size();
    std::unique_ptr<DevicesRenderedAhead> ahead;
    body.writeDevice = [&](std::ostream& os, int indent, size_t i) {
        if (!ahead) ahead = std::make_unique<DevicesRenderedAhead>(a.devices, indent, threads);
        ahead->write(os, i);
    };
    body.matchedCount = a.matched.size();
    body.matched = [&](size_t i) { return a.matched[i]; };
    writeJsonReport(out, a, options, body);
}

}  // namespace osc::report
