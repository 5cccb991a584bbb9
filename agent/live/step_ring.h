// The look-back ring: the records of the last K closed steps (recorded_step.h),
// so that a capture triggered by a step (`--capture-when`, a peer rank's
// trigger, `attach --steps --at-step` a little late) can hold that step and
// the ones before it, and `overlapscope dump` can write them at any moment.
// Memory is bounded twice: at most K steps, and at most `maxRows` rows (the
// oldest steps go first; the newest is always kept). A record names its rows
// in the step assembler's queues (StepRows), which retain them for as long
// as a record here names them (lowest()). Storage is reused from step to
// step. Writer thread only (the live pipeline's lock).
#pragma once

#include "agent/live/recorded_step.h"

#include <cstddef>
#include <deque>
#include <functional>

namespace osc::agent::live {

class StepRing {
public:
    StepRing(size_t steps, size_t maxRows) : capacity_(steps), maxRows_(maxRows) {}

    // A cleared record to fill with the step that is closing (reused storage).
    StepRows& next();
    // Keeps the record next() gave (when the ring holds any step at all) and
    // returns it; older records leave beyond the bounds.
    const StepRows& keep();

    const std::deque<StepRows>& steps() const { return held_; }
    size_t capacity() const { return capacity_; }
    size_t rows() const { return rows_; }
    size_t bytes() const;
    // The record of step `number`, or null.
    const StepRows* find(int64_t number) const;
    void clear();
    // The lowest sequence number each queue must still hold for the records
    // kept: `none` (the queues' next numbers) where no record names a row.
    RowMarks lowest(const RowMarks& none) const;
    // Gives the oldest record that names rows its rows copied (`copy`), so
    // that the queues may let them go; false when none names rows.
    bool ownOldest(const std::function<void(const StepRows&, RecordedStep&)>& copy);

private:
    size_t capacity_, maxRows_;
    std::deque<StepRows> held_;  // oldest first
    StepRows scratch_;
    size_t rows_ = 0;
};

}  // namespace osc::agent::live
