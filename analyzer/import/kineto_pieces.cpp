#include "analyzer/import/kineto_pieces.h"

#include "analyzer/capture/load_options.h"
#include "analyzer/import/kineto_event_parser.h"
#include "analyzer/import/trace_bytes.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace osc::kineto {
namespace {

using json_in_place::Cursor;
constexpr size_t kNone = static_cast<size_t>(-1);

// One stretch of the array: the elements that begin in [start, stopAt).
struct Piece {
    size_t start = kNone;   // where it was parsed from; kNone: the content has no cut there
    size_t stopAt = kNone;  // the next piece's cut
    size_t end = kNone;     // the first element boundary at or after stopAt, or just after the ']'
    bool closed = false;    // it met the array's ']'
    std::exception_ptr error;
    Capture local;  // the piece's strings
    std::unique_ptr<CaptureBuilder> builder;
};

// Where an element may begin at or after `from`: the '{' of `}` `,` `{` with
// only white space between; kNone when the content has no such place. It
// may lie inside a string or a nested value: the piece before tells.
size_t cutAt(Cursor& c, size_t from) {
    c.seek(from);
    for (;;) {
        if (c.p >= c.end && !c.more(1)) return kNone;
        const auto* close = static_cast<const char*>(std::memchr(c.p, '}', static_cast<size_t>(c.end - c.p)));
        if (!close) {
            c.p = c.end;
            continue;
        }
        c.p = close + 1;
        if (c.peek() != ',') continue;
        ++c.p;
        if (c.peek() == '{') return c.offset();
    }
}

class PieceReader {
public:
    PieceReader(TraceBytes& bytes, CaptureBuilder& builder, std::string path, const PieceOptions& options, size_t first)
        : bytes_(bytes),
          builder_(builder),
          path_(std::move(path)),
          options_(options),
          first_(first),
          prototype_(builder.forPiece(prototypeStrings_)) {
        const int threads = std::max(1, options.threads);
        maxAhead_ = static_cast<size_t>(threads) + 2;
        for (int t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
    }
    ~PieceReader() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        changed_.notify_all();
        bytes_.wake();  // a worker waiting for bytes no release will bring gives up
        for (auto& w : workers_) w.join();
    }
    PieceReader(const PieceReader&) = delete;
    PieceReader& operator=(const PieceReader&) = delete;

    // Absorbs the pieces in order; returns the offset just after the ']'.
    size_t run() {
        size_t expected = first_;  // a true element boundary: where the next piece must begin
        for (size_t k = 0;; ++k) {
            std::unique_ptr<Piece> piece = take(k);
            if (piece->start != expected) {
                // The cut fell inside the piece before's last element: parse
                // from where that element really ended, up to the same next cut.
                auto again = std::make_unique<Piece>();
                try {
                    Cursor c(bytes_, expected);
                    parse(*again, expected, cutAt(c, nominal(k + 1)), expected);
                } catch (...) {
                    again->error = std::current_exception();
                }
                piece = std::move(again);
            }
            if (piece->error) std::rethrow_exception(piece->error);
            // A little more than the share read so far suggests: a table
            // short of its rows at the end moves once more.
            const double read = std::max(1e-9, bytes_.fractionBefore(piece->end));
            builder_.absorb(*piece->builder, {1.05 / read, static_cast<double>(piece->end) / read});
            bytes_.release(piece->end);
            expected = piece->end;
            {
                std::lock_guard lock(mutex_);
                absorbed_ = k + 1;
            }
            changed_.notify_all();
            if (options_.absorbed) options_.absorbed();
            if (piece->closed) return piece->end;
        }
    }

private:
    size_t nominal(size_t k) const { return first_ + k * options_.pieceBytes; }

    std::unique_ptr<Piece> take(size_t k) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return done_.count(k) != 0; });
        auto piece = std::move(done_[k]);
        done_.erase(k);
        return piece;
    }

    void work() {
        for (;;) {
            size_t k = 0;
            {
                std::unique_lock lock(mutex_);
                changed_.wait(lock, [&] { return stop_.load() || next_ < absorbed_ + maxAhead_; });
                if (stop_) return;
                k = next_++;
            }
            auto piece = std::make_unique<Piece>();
            try {
                if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) throw LoadCancelled{};
                // Everything piece k reads lies beyond nominal(k), which the
                // pieces before it are bound to release.
                const size_t floor = nominal(k);
                Cursor c(bytes_, floor, floor, &stop_);
                const size_t start = k == 0 ? first_ : cutAt(c, floor);
                parse(*piece, start, start == kNone ? kNone : cutAt(c, nominal(k + 1)), floor);
            } catch (...) {
                piece->error = std::current_exception();
            }
            {
                std::lock_guard lock(mutex_);
                done_[k] = std::move(piece);
            }
            changed_.notify_all();
        }
    }

    // The elements beginning in [start, stopAt), and the one that straddles
    // stopAt; reading nothing before `floor`.
    void parse(Piece& piece, size_t start, size_t stopAt, size_t floor) {
        piece.start = start;
        piece.stopAt = stopAt;
        piece.builder = prototype_->forPiece(piece.local);
        if (start == kNone) return;
        Cursor c(bytes_, start, floor, &stop_);
        EventParser parser(path_, options_.launchShape);
        Event event;
        size_t at = start;
        while (at < stopAt) {
            parser.parse(c, event);
            piece.builder->onEvent(event);
            const int next = c.peek();
            ++c.p;
            if (next == ']') {
                piece.closed = true;
                at = c.offset();
                break;
            }
            if (next != ',') Cursor::fail();
            c.peek();
            at = c.offset();
        }
        piece.end = at;
    }

    TraceBytes& bytes_;
    CaptureBuilder& builder_;
    std::string path_;
    const PieceOptions& options_;
    size_t first_;
    Capture prototypeStrings_;
    std::unique_ptr<const CaptureBuilder> prototype_;  // what every piece's builder starts from
    size_t maxAhead_ = 1;

    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<size_t, std::unique_ptr<Piece>> done_;
    size_t next_ = 0, absorbed_ = 0;
    std::atomic<bool> stop_{false};
    std::vector<std::thread> workers_;  // last: started once everything above exists
};

}  // namespace

void readEventsInPieces(TraceBytes& bytes, Cursor& cursor, CaptureBuilder& builder, const std::string& path,
                        const PieceOptions& options) {
    size_t end = 0;
    bytes.release(cursor.offset());  // what came before the elements is read
    {
        PieceReader reader(bytes, builder, path, options, cursor.offset());
        end = reader.run();
    }
    cursor.moveTo(end);  // released up to there
}

}  // namespace osc::kineto
