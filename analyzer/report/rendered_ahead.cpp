#include "analyzer/report/rendered_ahead.h"

#include <utility>

namespace osc::report {

RenderedAhead::RenderedAhead(size_t count, std::function<void(std::ostream&, size_t)> render, int threads)
    : count_(count), render_(std::move(render)), rendered_(static_cast<size_t>(threads) * kSlotsPerThread) {
    for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
}

RenderedAhead::~RenderedAhead() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    for (auto& w : workers_) w.join();
}

void RenderedAhead::write(std::ostream& out, size_t index) {
    Slot& slot = rendered_[index % rendered_.size()];
    {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return slot.index == index || error_; });
        if (error_) std::rethrow_exception(error_);
    }
    slot.text.writeTo(out);
    const size_t bytes = slot.text.size();
    slot.text.clearKeepingOneBlock();  // a large piece's blocks are not kept for the next
    {
        std::lock_guard lock(mutex_);
        slot.index = kNone;
        written_ = index + 1;
        aheadBytes_ -= bytes;
    }
    changed_.notify_all();
}

void RenderedAhead::work() {
    for (;;) {
        size_t index = 0;
        {
            std::unique_lock lock(mutex_);
            // A slot is free once the piece rendered into it last is written.
            changed_.wait(lock, [&] {
                return stop_ || error_ ||
                       (next_ < count_ && next_ < written_ + rendered_.size() && aheadBytes_ < kAheadBytes);
            });
            if (stop_ || error_ || next_ >= count_) return;
            index = next_++;
        }
        Slot& slot = rendered_[index % rendered_.size()];
        slot.text.clear();
        std::ostream os(&slot.text);
        try {
            render_(os, index);
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

}  // namespace osc::report
