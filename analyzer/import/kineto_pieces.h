// The traceEvents array read in pieces on several threads. The array is cut
// where an element may begin (`}`, `,`, `{` with only white space between),
// about every `pieceBytes`, without knowing whether the cut falls inside a
// string or a nested value: each piece is parsed from its cut on a worker
// thread into a builder of its own (CaptureBuilder::forPiece), and the pieces
// are absorbed in file order. A piece counts only when the piece before it,
// parsed from a true element boundary, ended exactly at its cut; otherwise it
// is parsed again from where that piece really ended. So the result is the
// one a single sequential parse gives, whatever the cuts hit.
#pragma once

#include "analyzer/import/json_in_place.h"
#include "analyzer/import/kineto_builder.h"

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

namespace osc {

class TraceBytes;

namespace kineto {

struct PieceOptions {
    size_t pieceBytes = size_t{1} << 19;
    int threads = 1;          // parsing threads (the caller's thread absorbs)
    bool launchShape = true;  // args.grid and args.block read (EventParser)
    // Called after each piece is absorbed (progress; may throw LoadCancelled).
    std::function<void()> absorbed;
    const std::atomic<bool>* cancel = nullptr;
};

// With the cursor at the first element of the traceEvents array (after white
// space; not at its ']'): every element into `builder`, the cursor left just
// after the array's ']'. Throws what the in-place parser throws
// (json_in_place::Unparsed, FormatError, CaptureError) when the input is not
// one it reads the way JsonScanner would.
void readEventsInPieces(TraceBytes& bytes, json_in_place::Cursor& cursor, CaptureBuilder& builder,
                        const std::string& path, const PieceOptions& options);

}  // namespace kineto
}  // namespace osc
