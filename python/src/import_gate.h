// A flag overlapscope/_lazy.py raises when its pandas import is done.
//
// In a fresh process the import (a third of a second of one core) runs
// beside the first load, and finishes last: the loader's threads take the
// cores from it. Until the flag is up, the HTA loader leaves one core to the
// import, so the two end together.
#pragma once

#include <atomic>

namespace osc::python {

class ImportGate {
public:
    void open() { opened_.store(true, std::memory_order_release); }
    bool isOpen() const { return opened_.load(std::memory_order_acquire); }

private:
    std::atomic<bool> opened_{false};
};

}  // namespace osc::python
