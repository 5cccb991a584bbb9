#include "agent/live/step_ring.h"

#include <utility>

namespace osc::agent::live {

RecordedStep& StepRing::next() {
    // A full ring gives its oldest record's storage to the newest.
    if (capacity_ > 0 && held_.size() >= capacity_) {
        rows_ -= held_.front().rows();
        scratch_ = std::move(held_.front());
        held_.pop_front();
    }
    scratch_.clear();
    return scratch_;
}

const RecordedStep& StepRing::keep() {
    if (capacity_ == 0) return scratch_;
    rows_ += scratch_.rows();
    held_.push_back(std::move(scratch_));
    scratch_ = RecordedStep{};
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

const RecordedStep* StepRing::find(int64_t number) const {
    for (const auto& s : held_)
        if (s.number == number) return &s;
    return nullptr;
}

void StepRing::clear() {
    held_.clear();
    rows_ = 0;
}

}  // namespace osc::agent::live
