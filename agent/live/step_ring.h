// The look-back ring: the records of the last K closed steps (recorded_step.h),
// so that a capture triggered by a step (`--capture-when`, a peer rank's
// trigger, `attach --steps --at-step` a little late) can hold that step and
// the ones before it, and `overlapscope dump` can write them at any moment.
// Memory is bounded twice: at most K steps, and at most `maxRows` rows (the
// oldest steps go first; the newest is always kept). Storage is reused from
// step to step. Writer thread only (the live pipeline's lock).
#pragma once

#include "agent/live/recorded_step.h"

#include <cstddef>
#include <deque>

namespace osc::agent::live {

class StepRing {
public:
    StepRing(size_t steps, size_t maxRows) : capacity_(steps), maxRows_(maxRows) {}

    // A cleared record to fill with the step that is closing (reused storage).
    RecordedStep& next();
    // Keeps the record next() gave (when the ring holds any step at all) and
    // returns it; older records leave beyond the bounds.
    const RecordedStep& keep();

    const std::deque<RecordedStep>& steps() const { return held_; }
    size_t capacity() const { return capacity_; }
    size_t rows() const { return rows_; }
    size_t bytes() const;
    // The record of step `number`, or null.
    const RecordedStep* find(int64_t number) const;
    void clear();

private:
    size_t capacity_, maxRows_;
    std::deque<RecordedStep> held_;  // oldest first
    RecordedStep scratch_;
    size_t rows_ = 0;
};

}  // namespace osc::agent::live
