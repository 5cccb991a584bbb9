// Options shared by every capture reader (the SQLite reader here, the Kineto
// reader in analyzer/import) and passed through by loadCapture (analyzer/load).
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
    // Kernel launch details (grid, block, registers, shared memory, graph
    // ids). The metrics and reports do not use them; turning this off lets
    // the SQLite reader skip 11 of its 19 kernel columns (about a third of
    // the read time and 44 bytes per kernel) and the PyTorch trace reader
    // skip args.grid and args.block (4 % of its time). When off, those KernelTable
    // columns may be left empty (size 0, not size()); other readers may
    // still fill them.
    bool launchDetails = true;
    // With launchDetails: only a kernel's grid and block (what the metrics'
    // kernel signatures read, docs/metrics.md), the register, shared memory
    // and graph columns left empty: 24 bytes per kernel less.
    bool launchShapeOnly = false;
    // Only what the analysis (analyzer/metrics) reads, for a capture that is
    // analysed and dropped (a report, check, diff): readers may leave empty
    // the API calls' return values and kinds, the CPU operators' threads and
    // the kernels' short names where a name is known. A 1 GB PyTorch trace
    // holds 20 MB less.
    bool analysisOnly = false;
    // Threads a reader may use for one file (the PyTorch trace reader parses
    // one file on several); 0: one per core. A job reading several files at
    // once gives each its share.
    int threads = 0;

    bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
};

struct LoadCancelled {};

}  // namespace osc
