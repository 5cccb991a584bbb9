// Pieces of a document rendered on several threads a bounded distance ahead
// of the one thread that writes them, in order: the devices of a large
// report, or the runs of collectives of one large device. The text written
// is exactly what rendering the pieces in order on one thread gives.
#pragma once

#include "analyzer/report/text_blocks.h"

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <ostream>
#include <thread>
#include <vector>

namespace osc::report {

class RenderedAhead {
public:
    // render(out, i) writes piece i (0 <= i < count); it runs on one of
    // `threads` threads.
    RenderedAhead(size_t count, std::function<void(std::ostream&, size_t)> render, int threads);
    ~RenderedAhead();
    RenderedAhead(const RenderedAhead&) = delete;
    RenderedAhead& operator=(const RenderedAhead&) = delete;

    // Piece `index` (0, 1, ... in turn) to `out`, once rendered; rethrows
    // what a render threw.
    void write(std::ostream& out, size_t index);

private:
    // Pieces rendered and not yet written: up to this many a thread (small
    // devices: the writer, faulting in its output, and the renderers each
    // stalled the others with two), while they hold less than kAheadBytes (a
    // device of a long job is hundreds of MB). Never a deadlock: pieces are
    // taken in order, so while any waits rendered, the one to write next is
    // taken too.
    static constexpr size_t kSlotsPerThread = 8;
    static constexpr size_t kAheadBytes = size_t{64} << 20;
    static constexpr size_t kNone = SIZE_MAX;
    struct Slot {
        size_t index = kNone;  // the piece whose text `text` holds
        TextBlocks text;       // its blocks kept from one piece to the next
    };

    void work();

    const size_t count_;
    const std::function<void(std::ostream&, size_t)> render_;
    std::vector<Slot> rendered_;
    std::mutex mutex_;
    std::condition_variable changed_;
    size_t next_ = 0, written_ = 0;
    size_t aheadBytes_ = 0;  // in slots rendered and not yet written
    bool stop_ = false;
    std::exception_ptr error_;
    std::vector<std::thread> workers_;
};

}  // namespace osc::report
