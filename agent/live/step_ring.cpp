#include "agent/live/step_ring.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace osc::agent::live {

StepRows& StepRing::next() {
    // A full ring gives its oldest record's storage to the newest.
    if (capacity_ > 0 && held_.size() >= capacity_) {
        rows_ -= held_.front().rows();
        scratch_ = std::move(held_.front());
        held_.pop_front();
    }
    scratch_.clear();
    return scratch_;
}

const StepRows& StepRing::keep() {
    if (capacity_ == 0) return scratch_;
    rows_ += scratch_.rows();
    held_.push_back(std::move(scratch_));
    scratch_ = StepRows{};
    while (held_.size() > 1 && rows_ > maxRows_) {
        rows_ -= held_.front().rows();
        held_.pop_front();
    }
    return held_.back();
}

size_t StepRing::bytes() const {
    size_t n = scratch_.bytes();
    for (const auto& s : held_) n += s.bytes();
    return n;
}

const StepRows* StepRing::find(int64_t number) const {
    for (const auto& s : held_)
        if (s.number == number) return &s;
    return nullptr;
}

void StepRing::clear() {
    held_.clear();
    rows_ = 0;
}

RowMarks StepRing::lowest(const RowMarks& none) const {
    RowMarks m = none;
    for (const StepRows& s : held_) {
        if (s.owned) continue;
        const RowMarks& l = s.lowest;
        m.kernels = std::min(m.kernels, l.kernels);
        m.copies = std::min(m.copies, l.copies);
        m.memsets = std::min(m.memsets, l.memsets);
        m.apiCalls = std::min(m.apiCalls, l.apiCalls);
        m.ranges = std::min(m.ranges, l.ranges);
        m.syncs = std::min(m.syncs, l.syncs);
        m.events = std::min(m.events, l.events);
        m.collectives = std::min(m.collectives, l.collectives);
    }
    return m;
}

bool StepRing::ownOldest(const std::function<void(const StepRows&, RecordedStep&)>& copy) {
    for (StepRows& s : held_) {
        if (s.owned) continue;
        auto owned = std::make_unique<RecordedStep>();
        copy(s, *owned);
        for (auto* v : {&s.apiCalls, &s.ranges, &s.syncs, &s.events, &s.kernels, &s.copies, &s.memsets, &s.collectives})
            *v = {};
        s.owned = std::move(owned);
        return true;
    }
    return false;
}

}  // namespace osc::agent::live
