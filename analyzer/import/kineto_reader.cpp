#include "analyzer/import/kineto_reader.h"

#include "analyzer/capture/capture_error.h"
#include "analyzer/import/gz_reader.h"
#include "analyzer/import/json_in_place.h"
#include "analyzer/import/json_scanner.h"
#include "analyzer/import/kineto_builder.h"
#include "analyzer/import/kineto_group_calls.h"
#include "analyzer/import/kineto_pieces.h"
#include "analyzer/import/kineto_sax.h"
#include "analyzer/import/trace_bytes.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <thread>

namespace osc {
namespace kineto {
namespace {

using json_in_place::Cursor;

constexpr std::string_view kStage = "reading PyTorch trace";

// A trace in memory, handed to JsonScanner as a file's content would be.
struct TextSource {
    std::string_view text;
    size_t at = 0;
    size_t read(char* into, size_t size) {
        const size_t n = std::min(size, text.size() - at);
        std::memcpy(into, text.data() + at, n);
        at += n;
        return n;
    }
};

// The streaming reader: JsonScanner handing every token to the SaxHandler.
template <typename Source>
void readStreaming(Source& source, const std::string& path, const std::function<void()>& tick,
                   const LoadOptions& options, Capture& capture) {
    const size_t firstProcess = capture.processes.size();
    CaptureBuilder builder(capture, path, tick);
    builder.keep(options);
    SaxHandler handler(builder, path);
    JsonScanner<Source, SaxHandler> scanner(source, handler, path);
    try {
        scanner.parse();
    } catch (const FormatError& e) {
        // The handler and the builder know the file; only the scanner knows the line.
        throw CaptureError(path, "line " + std::to_string(scanner.line()) + ": " + e.problem());
    } catch (const std::bad_alloc&) {
        throw CaptureError(path, "out of memory while reading the trace");
    }
    if (!handler.sawTraceEvents()) throw CaptureError(path, "not a PyTorch profiler trace: no \"traceEvents\" array");
    builder.finish();
    numberCollectivesBySeq(capture, firstProcess);
}

// The document around the events read in place and handed to the
// SaxHandler as JsonScanner would hand it; the traceEvents elements go to
// readEventsInPieces instead.
class DocumentWalker {
public:
    DocumentWalker(TraceBytes& bytes, SaxHandler& handler, CaptureBuilder& builder, const std::string& path,
                   const PieceOptions& pieces)
        : bytes_(bytes), handler_(handler), builder_(builder), path_(path), pieces_(pieces) {}

    void walk() {
        Cursor c(bytes_, 0);
        value(c, 0);
        if (c.peek() >= 0) Cursor::fail();  // text after the document
    }

private:
    static bool another(Cursor& c, char close) {
        const int next = c.peek();
        ++c.p;
        if (next == ',') return true;
        if (next != close) Cursor::fail();
        return false;
    }

    void value(Cursor& c, int depth) {
        const int first = c.peek();
        if (first != '{' && first != '[') {
            scalar(c);
            return;
        }
        if (depth >= json_in_place::kMaxNesting) Cursor::fail();
        ++c.p;
        if (first == '{') {
            handler_.start_object();
            if (c.peek() == '}') {
                ++c.p;
            } else {
                do {
                    c.expect('"');
                    text_ = c.string(scratch_);
                    handler_.key(text_);
                    c.expect(':');
                    value(c, depth + 1);
                } while (another(c, '}'));
            }
            handler_.end_object();
            return;
        }
        handler_.start_array();
        if (c.peek() == ']') {
            ++c.p;
        } else if (handler_.inEventsArray()) {
            readEventsInPieces(bytes_, c, builder_, path_, pieces_);
        } else {
            do value(c, depth + 1);
            while (another(c, ']'));
        }
        handler_.end_array();
    }

    void scalar(Cursor& c) {
        const Scalar v = c.scalar(scratch_);
        switch (v.type) {
            case Scalar::Type::String:
                text_ = v.text;
                handler_.string(text_);
                break;
            case Scalar::Type::Integer:
                handler_.number_integer(v.i);
                break;
            case Scalar::Type::Unsigned:
                handler_.number_unsigned(v.u);
                break;
            case Scalar::Type::Float:
                text_ = v.text;
                handler_.number_float(text_);
                break;
            case Scalar::Type::Other:
                handler_.null();  // true, false and null alike: the handler reads none of them
                break;
        }
    }

    TraceBytes& bytes_;
    SaxHandler& handler_;
    CaptureBuilder& builder_;
    const std::string& path_;
    const PieceOptions& pieces_;
    std::string text_, scratch_;
};

int threadsFor(const LoadOptions& options, const ReadWays& ways) {
    if (ways.threads > 0) return ways.threads;
    if (options.threads > 0) return options.threads;
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Reads `bytes` in place into `capture`; false (and `capture` as it was) when
// the file is left to the streaming reader.
bool readInPlace(TraceBytes& bytes, const std::string& path, const LoadOptions& options, const ReadWays& ways,
                 Capture& capture) {
    const size_t firstProcess = capture.processes.size(), firstString = capture.strings.size();
    CaptureBuilder builder(capture, path, nullptr);
    builder.keep(options);
    PieceOptions pieces;
    pieces.pieceBytes = std::max<size_t>(1, ways.pieceBytes);
    pieces.threads = threadsFor(options, ways);
    pieces.launchShape = options.launchDetails;  // the builder keeps no shape without details
    pieces.cancel = options.cancel;
    pieces.absorbed = [&] {
        if (options.cancelled()) throw LoadCancelled{};
        if (options.progress && bytes.fileSize() > 0)
            options.progress(static_cast<double>(bytes.fileBytesRead()) / static_cast<double>(bytes.fileSize()),
                             kStage);
    };
    bool read = false;
    try {
        SaxHandler handler(builder, path);
        DocumentWalker(bytes, handler, builder, path, pieces).walk();
        read = handler.sawTraceEvents();
    } catch (const LoadCancelled&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw CaptureError(path, "out of memory while reading the trace");
    } catch (...) {
        // Bad JSON, a bad field, a read error: the streaming reader says
        // which, and where.
    }
    if (!read) {
        capture.strings.truncate(firstString);
        return false;
    }
    builder.finish();
    numberCollectivesBySeq(capture, firstProcess);
    return true;
}

}  // namespace

void readKinetoTrace(const std::string& path, const LoadOptions& options, Capture& capture, const ReadWays& ways) {
    if (ways.readInPlace) *ways.readInPlace = false;
    if (!ways.streamingOnly) {
        bool read = false;
        {
            // Room for the pieces in flight (kineto_pieces.cpp): a few per thread.
            const size_t span = (static_cast<size_t>(threadsFor(options, ways)) + 4) * ways.pieceBytes;
            std::unique_ptr<TraceBytes> bytes;
            try {
                bytes = std::make_unique<TraceBytes>(path, span);
            } catch (const CaptureError&) {
                // Cannot open it: the streaming reader says so.
            }
            if (bytes) read = readInPlace(*bytes, path, options, ways, capture);
        }
        if (ways.readInPlace) *ways.readInPlace = read;
        if (read) {
            if (options.progress) options.progress(1.0, kStage);
            return;
        }
    }
    GzReader reader(path);
    auto tick = [&] {
        if (options.cancelled()) throw LoadCancelled{};
        if (options.progress && reader.fileSize() > 0)
            options.progress(static_cast<double>(reader.fileBytesRead()) / static_cast<double>(reader.fileSize()),
                             kStage);
    };
    readStreaming(reader, path, tick, options, capture);
    if (options.progress) options.progress(1.0, kStage);
}

void readKinetoText(std::string_view text, const std::string& name, const LoadOptions& options, Capture& capture,
                    const ReadWays& ways) {
    if (ways.readInPlace) *ways.readInPlace = false;
    if (!ways.streamingOnly) {
        TraceBytes bytes(text.data(), text.size());
        const bool read = readInPlace(bytes, name, options, ways, capture);
        if (ways.readInPlace) *ways.readInPlace = read;
        if (read) return;
    }
    TextSource source{text};
    auto tick = [&] {
        if (options.cancelled()) throw LoadCancelled{};
    };
    readStreaming(source, name, tick, options, capture);
}

}  // namespace kineto

void readKinetoTrace(const std::string& path, const LoadOptions& options, Capture& capture) {
    kineto::readKinetoTrace(path, options, capture, {});
}

}  // namespace osc
