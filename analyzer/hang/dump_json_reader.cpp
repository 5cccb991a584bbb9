// JSON dumps into DataTrees (dump_readers.h): the shared tokenizer
// (analyzer/import/json_scanner.h) calls this handler, which builds one tree
// per top-level field and one per item of the top-level "entries" array,
// handing each over when it closes. Top-level fields no dump reader needs
// (nccl_comm_state, which can be large) are skipped, not built.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/dump_readers.h"
#include "analyzer/import/json_scanner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace osc::hang {
namespace {

bool fieldRead(std::string_view key) {
    return key == "version" || key == "comm_lib_version" || key == "nccl_version" || key == "pg_config" ||
           key == "pg_status" || key == "entries";
}

class DumpJsonHandler {
public:
    DumpJsonHandler(const std::string& path, DumpSink& sink, const DumpLimits& limits)
        : path_(path), sink_(sink), limits_(limits) {}

    void null() {
        scalar([&] { tree_.addNone(); });
    }
    void boolean(bool v) {
        scalar([&] { tree_.addBool(v); });
    }
    void number_integer(int64_t v) {
        scalar([&] { tree_.addInt(v); });
    }
    void number_unsigned(uint64_t v) {
        scalar([&] { tree_.addBigInt(std::to_string(v)); });
    }
    // Numbers beyond int64 (and every fraction or exponent) come as text.
    void number_float(const std::string& text) {
        scalar([&] {
            if (text.find_first_of(".eE") == std::string::npos) {
                int64_t v = 0;  // -9223372036854775808 comes here too
                const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
                if (error == std::errc() && end == text.data() + text.size())
                    tree_.addInt(v);
                else
                    tree_.addBigInt(text);
                return;
            }
            double v = 0;
            std::from_chars(text.data(), text.data() + text.size(), v);
            tree_.addFloat(v);
        });
    }
    void string(std::string& s) {
        scalar([&] { tree_.addText(s); });
    }
    void key(std::string& k) {
        if (atTop()) {
            topKey_ = k;
            return;
        }
        scalar([&] { tree_.addText(k); });
    }
    void start_object() { openContainer(DataKind::Dict); }
    void start_array() {
        if (atTop() && topKey_ == "entries") {  // the entries stream: its items are the values
            ++depth_;
            inEntries_ = true;
            return;
        }
        openContainer(DataKind::List);
    }
    void end_object() { closeContainer(); }
    void end_array() {
        if (inEntries_ && open_.empty() && depth_ == 2) {
            --depth_;
            inEntries_ = false;
            return;
        }
        closeContainer();
    }
    bool sawObject() const { return sawObject_; }

private:
    struct Open {
        uint32_t at;
        uint32_t children;
    };

    // A value at the top level or in the entries array starts a tree of its own.
    bool startsValue() const { return open_.empty() && (depth_ == 1 || (depth_ == 2 && inEntries_)); }
    bool atTop() const { return depth_ == 1 && open_.empty() && skipped_ == 0; }

    template <typename Add>
    void scalar(Add add) {
        if (depth_ == 0) fail();
        if (skipped_ > 0 || (startsValue() && !fieldRead(topKey_) && !inEntries_)) return;
        count();
        add();
        if (open_.empty())
            valueDone();
        else
            ++open_.back().children;
    }
    void openContainer(DataKind kind) {
        if (depth_ == 0) {
            if (kind != DataKind::Dict) fail();
            sawObject_ = true;
            depth_ = 1;
            return;
        }
        if (skipped_ > 0 || (startsValue() && !fieldRead(topKey_) && !inEntries_)) {
            ++skipped_;
            return;
        }
        count();
        open_.push_back({tree_.open(kind), 0});
    }
    void closeContainer() {
        if (skipped_ > 0) {
            --skipped_;
            return;
        }
        if (open_.empty()) {  // the top-level object
            depth_ = 0;
            return;
        }
        const Open done = open_.back();
        open_.pop_back();
        // A key counts as a child too: a dict's children alternate.
        tree_.close(done.at, done.children);
        if (open_.empty())
            valueDone();
        else
            ++open_.back().children;
    }
    void valueDone() {
        if (inEntries_)
            sink_.entry(tree_);
        else
            sink_.field(topKey_, tree_);
        tree_.clear();
        valuesInTree_ = 0;
    }
    void count() {
        if (++valuesInTree_ > limits_.maxValuesPerEntry)
            throw CaptureError(path_, "one value of the dump holds more than " +
                                          std::to_string(limits_.maxValuesPerEntry) +
                                          " parts: not a Flight Recorder dump this reader takes");
    }
    [[noreturn]] void fail() const { throw CaptureError(path_, "not a JSON object, so not a Flight Recorder dump"); }

    const std::string& path_;
    DumpSink& sink_;
    DumpLimits limits_;
    DataTree tree_;
    std::vector<Open> open_;
    std::string topKey_;
    int depth_ = 0;       // 0 before the top object, 1 in it, 2 in its entries array
    size_t skipped_ = 0;  // containers open in a field not read
    bool inEntries_ = false, sawObject_ = false;
    uint64_t valuesInTree_ = 0;
};

}  // namespace

void readJsonDump(ByteSource& in, const std::string& path, DumpSink& sink, const DumpLimits& limits,
                  uint64_t sizeHint) {
    DumpJsonHandler handler(path, sink, limits);
    JsonScanner<ByteSource, DumpJsonHandler> scanner(in, handler, path, readBufferBytes(sizeHint));
    scanner.parse();
    if (!handler.sawObject()) throw CaptureError(path, "not a JSON object, so not a Flight Recorder dump");
}

FileSource::FileSource(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw CaptureError(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd_, &st) == 0) size_ = static_cast<uint64_t>(st.st_size);
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
}

FileSource::~FileSource() {
    if (fd_ >= 0) ::close(fd_);
}

int FileSource::firstByte() const {
    unsigned char c = 0;
    return ::pread(fd_, &c, 1, 0) == 1 ? c : -1;
}

size_t FileSource::read(char* into, size_t want) {
    for (;;) {
        const ssize_t n = ::read(fd_, into, want);
        if (n >= 0) return static_cast<size_t>(n);
        if (errno != EINTR) throw CaptureError(path_, std::string("cannot read: ") + std::strerror(errno));
    }
}

size_t MemorySource::read(char* into, size_t want) {
    const size_t n = std::min({want, bytes_.size() - at_, maxChunk_});
    std::memcpy(into, bytes_.data() + at_, n);
    at_ += n;
    return n;
}

}  // namespace osc::hang
