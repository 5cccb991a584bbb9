// Options shared by every capture reader.
#pragma once

#include <atomic>
#include <functional>
#include <string_view>

namespace osc {

struct LoadOptions {
    // Called now and then with the fraction done (0..1) of the current file
    // and a short stage label; may be empty.
    std::function<void(double fraction, std::string_view stage)> progress;
    // Set from another thread to abandon loading; readers then throw
    // LoadCancelled.
    const std::atomic<bool>* cancel = nullptr;

    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
};

struct LoadCancelled {};

}  // namespace osc
