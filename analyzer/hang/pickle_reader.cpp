// A pickle machine for data only (dump_readers.h). It runs the opcodes that
// build None, booleans, integers, floats, text, bytes, lists, tuples and
// dicts, with the memo and marks they need, and refuses by name every opcode
// that would import or call something or build an object. What PyTorch's
// Pickler writes for a dump (torch/csrc/jit/serialization/pickler.cpp with
// tag_aggregates off: protocol 2, BINUNICODE text memoized by BINPUT and
// fetched again by BINGET, BININT1/BININT2/BININT/LONG1 integers, BINFLOAT,
// NEWTRUE/NEWFALSE, EMPTY_DICT MARK ... SETITEMS, EMPTY_LIST MARK ...
// APPENDS, TUPLE2, shared stack-frame dicts by BINGET) is a subset, and so is
// what Python's pickle writes for the same data (protocols 2-5: MEMOIZE,
// FRAME, SHORT_BINUNICODE, batches of 1000 APPENDS/SETITEMS).
//
// Streaming: the top-level dict's "entries" list is never built. Each of
// its items is handed over as soon as the next one begins (or the list's
// APPENDS runs) and dropped, with the memo's reference to it.
#include "analyzer/capture/capture_error.h"
#include "analyzer/hang/dump_readers.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace osc::hang {
namespace {

constexpr size_t kMaxDepth = 512;
constexpr uint64_t kMaxTextBytes = uint64_t{64} << 20;
constexpr size_t kMaxStack = size_t{1} << 22;
constexpr size_t kMaxMemo = size_t{1} << 24;

enum class PKind : uint8_t { None, Bool, Int, Float, BigInt, Text, Bytes, List, Tuple, Dict };

struct PObject;

// A counted reference to an object the pickle built. Not atomic: one
// machine, one thread. An object whose last reference goes frees what it
// holds with a work list, not by recursion: a pickle may nest lists a
// million deep.
class ObjRef {
public:
    ObjRef() = default;
    static ObjRef make(PKind kind);
    ObjRef(const ObjRef& o) : p_(o.p_) {
        if (p_) retain();
    }
    ObjRef(ObjRef&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    ObjRef& operator=(const ObjRef& o) {
        ObjRef copy(o);
        std::swap(p_, copy.p_);
        return *this;
    }  // the copy releases what this held
    ObjRef& operator=(ObjRef&& o) noexcept {
        ObjRef moved(std::move(o));
        std::swap(p_, moved.p_);
        return *this;
    }
    ~ObjRef() {
        if (p_) release();
    }
    PObject* operator->() const { return p_; }
    PObject& operator*() const { return *p_; }
    PObject* get() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    bool operator==(const ObjRef& o) const { return p_ == o.p_; }
    PObject* detach() { return std::exchange(p_, nullptr); }

private:
    void retain();
    void release();
    PObject* p_ = nullptr;
};

struct PValue {
    PKind kind = PKind::None;
    bool boolean = false;
    union {
        int64_t integer = 0;
        double real;
    };
    ObjRef object;  // text, bytes, big integers and containers
};

struct PObject {
    PKind kind;
    uint32_t refs = 0;
    bool streamed = false;  // the dump's entries list: its items go to the sink
    int64_t memoSlot = -1;  // the last memo slot that holds it
    std::string bytes;
    std::vector<PValue> items;  // a dict's keys and values alternate
    // A dict's scalar keys, to their place in `items`, once it is large.
    std::unique_ptr<std::unordered_map<std::string, size_t>> keyIndex;
    // Every object alive, linked from its machine: a container made to hold
    // itself through the memo (a cycle) never reaches a count of 0, and the
    // machine frees what is left when it ends.
    PObject* prev = nullptr;
    PObject* next = nullptr;
    explicit PObject(PKind k) : kind(k) {}
    void unlink() {
        if (!prev) return;
        prev->next = next;
        next->prev = prev;
        prev = next = nullptr;
    }
};

ObjRef ObjRef::make(PKind kind) {
    ObjRef r;
    r.p_ = new PObject(kind);
    r.p_->refs = 1;
    return r;
}

void ObjRef::retain() { ++p_->refs; }

void ObjRef::release() {
    if (--p_->refs > 0) {
        p_ = nullptr;
        return;
    }
    // The objects dying with it wait on one list per thread (reused, so
    // freeing allocates nothing), handled by the outermost release only.
    thread_local std::vector<PObject*> doomed;
    thread_local bool freeing = false;
    doomed.push_back(std::exchange(p_, nullptr));
    if (freeing) return;
    freeing = true;
    while (!doomed.empty()) {
        PObject* o = doomed.back();
        doomed.pop_back();
        for (PValue& item : o->items)
            if (PObject* child = item.object.detach(); child && --child->refs == 0) doomed.push_back(child);
        o->unlink();
        delete o;
    }
    freeing = false;
}

const char* opcodeName(uint8_t op) {
    switch (op) {
        case 'c':
            return "GLOBAL";
        case 0x93:
            return "STACK_GLOBAL";
        case 'R':
            return "REDUCE";
        case 'b':
            return "BUILD";
        case 'i':
            return "INST";
        case 'o':
            return "OBJ";
        case 0x81:
            return "NEWOBJ";
        case 0x92:
            return "NEWOBJ_EX";
        case 0x82:
            return "EXT1";
        case 0x83:
            return "EXT2";
        case 0x84:
            return "EXT4";
        case 'P':
            return "PERSID";
        case 'Q':
            return "BINPERSID";
        case 0x97:
            return "NEXT_BUFFER";
        case 0x98:
            return "READONLY_BUFFER";
        case 'S':
            return "STRING";
        case 'V':
            return "UNICODE";
        case 0x8f:
            return "EMPTY_SET";
        case 0x90:
            return "ADDITEMS";
        case 0x91:
            return "FROZENSET";
        case 'p':
            return "PUT";
        case 'g':
            return "GET";
        default:
            return nullptr;
    }
}

bool importsOrCalls(uint8_t op) {
    switch (op) {
        case 'c':
        case 0x93:
        case 'R':
        case 'b':
        case 'i':
        case 'o':
        case 0x81:
        case 0x92:
        case 0x82:
        case 0x83:
        case 0x84:
        case 'P':
        case 'Q':
        case 0x97:
        case 0x98:
            return true;
        default:
            return false;
    }
}

class PickleMachine {
public:
    PickleMachine(ByteSource& in, const std::string& path, DumpSink& sink, const DumpLimits& limits, uint64_t sizeHint)
        : in_(in), path_(path), sink_(sink), limits_(limits), buffer_(readBufferBytes(sizeHint)) {
        live_.prev = live_.next = &live_;
    }
    PickleMachine(const PickleMachine&) = delete;
    PickleMachine& operator=(const PickleMachine&) = delete;
    ~PickleMachine() {
        // Everything referenced from outside goes first; what remains holds
        // only itself (cycles): its references dropped uncounted, then freed.
        stack_.clear();
        memo_.clear();
        topDict_ = ObjRef();
        for (PObject* o = live_.next; o != &live_; o = o->next)
            for (PValue& item : o->items) (void)item.object.detach();
        while (live_.next != &live_) {
            PObject* o = live_.next;
            o->unlink();
            delete o;
        }
    }

    void run();

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw CaptureError(path_, "pickle byte " + std::to_string(opAt_) + ": " + what);
    }

    // --- input
    bool fill() {
        const size_t got = in_.read(buffer_.data(), buffer_.size());
        p_ = buffer_.data();
        end_ = p_ + got;
        consumed_ += got;
        return got > 0;
    }
    uint8_t byte() {
        if (p_ == end_ && !fill()) fail("the pickle ends before its STOP opcode (cut short?)");
        ++offset_;
        return static_cast<uint8_t>(*p_++);
    }
    void take(uint64_t n, std::string& out) {
        out.clear();
        while (n > 0) {
            if (p_ == end_ && !fill()) fail("the pickle ends inside a value (cut short?)");
            const size_t part = static_cast<size_t>(std::min<uint64_t>(n, static_cast<uint64_t>(end_ - p_)));
            out.append(p_, part);
            p_ += part;
            offset_ += part;
            n -= part;
        }
    }
    uint64_t littleEndian(int bytes) {
        uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(byte()) << (8 * i);
        return v;
    }
    std::string line() {
        std::string out;
        for (uint8_t c = byte(); c != '\n'; c = byte()) {
            out += static_cast<char>(c);
            if (out.size() > 4096) fail("a text line longer than 4096 bytes");
        }
        return out;
    }
    uint64_t length(uint64_t n) {
        if (n > kMaxTextBytes) fail("a value of " + std::to_string(n) + " bytes (more than 64 MiB)");
        return n;
    }

    // --- stack
    void push(PValue v) {
        if (stack_.size() >= kMaxStack) fail("more than 4,194,304 values pending on the pickle's stack");
        stack_.push_back(std::move(v));
    }
    PValue pop() {
        if (stack_.size() <= frameBase()) fail("an opcode takes a value from an empty stack");
        PValue v = std::move(stack_.back());
        stack_.pop_back();
        return v;
    }
    PValue& top() {
        if (stack_.size() <= frameBase()) fail("an opcode needs a value and the stack has none");
        return stack_.back();
    }
    size_t frameBase() const { return marks_.empty() ? 0 : marks_.back(); }
    size_t popMark() {
        if (marks_.empty()) fail("an opcode needs a MARK and none is open");
        const size_t at = marks_.back();
        marks_.pop_back();
        if (streamFrame_ && marks_.size() < streamFrame_) streamFrame_ = 0;
        return at;
    }
    PValue object(PKind kind) {
        PValue v;
        v.kind = kind;
        v.object = ObjRef::make(kind);
        PObject* o = v.object.get();
        o->prev = &live_;
        o->next = live_.next;
        live_.next->prev = o;
        live_.next = o;
        return v;
    }
    PValue text(PKind kind, uint64_t n) {
        PValue v = object(kind);
        take(length(n), v.object->bytes);
        return v;
    }
    PValue integer(int64_t i) {
        PValue v;
        v.kind = PKind::Int;
        v.integer = i;
        return v;
    }
    PValue longInteger(uint64_t n);
    PValue textInteger(const std::string& digits);

    // The memo, by slot: PyTorch and Python number them from 0 up.
    enum class Slot : uint8_t { Empty, Held, Dropped };
    void memoPut(uint64_t slot) {
        if (slot >= kMaxMemo) fail("a memo slot past 16,777,216");
        if (slot >= memo_.size()) {
            memo_.resize(slot + 1);
            memoState_.resize(slot + 1, Slot::Empty);
        }
        PValue& v = top();
        if (v.object) v.object->memoSlot = static_cast<int64_t>(slot);
        if (memoState_[slot] == Slot::Empty) ++memoCount_;
        memo_[slot] = v;
        memoState_[slot] = Slot::Held;
    }
    void memoGet(uint64_t slot) {
        if (slot >= memo_.size() || memoState_[slot] != Slot::Held) {
            if (slot < memo_.size() && memoState_[slot] == Slot::Dropped)
                fail("refers back to a Flight Recorder entry already read (memo " + std::to_string(slot) +
                     "): not a dump layout this reader can stream");
            fail("refers to memo entry " + std::to_string(slot) + ", which was never stored");
        }
        push(memo_[slot]);
    }

    // --- containers
    PObject& container(PValue& v, PKind kind, const char* op) {
        if (v.kind != kind || !v.object)
            fail(std::string(op) + " applies to something that is not a " + (kind == PKind::List ? "list" : "dict"));
        return *v.object;
    }
    void append(PObject& list, PValue item);
    void setItem(PObject& dict, PValue key, PValue value);
    static bool keyText(const PValue& key, std::string& out);

    // --- streaming the entries list
    bool isTopDict(const PValue& v) const { return topDict_ && v.object == topDict_; }
    bool opensEntries() const;
    void deliverEntry(PValue item);
    void deliverField(const PValue& key, const PValue& value);
    void streamCompleted();

    // --- conversion to the tree the fields are read from
    void toTree(const PValue& v, size_t depth);

    void step(uint8_t op);

    ByteSource& in_;
    const std::string& path_;
    DumpSink& sink_;
    DumpLimits limits_;
    std::vector<char> buffer_;
    const char* p_ = nullptr;
    const char* end_ = nullptr;
    uint64_t offset_ = 0, opAt_ = 0, consumed_ = 0;

    std::vector<PValue> stack_;
    std::vector<size_t> marks_;  // stack sizes at each open MARK
    std::vector<PValue> memo_;
    std::vector<Slot> memoState_;  // a slot of an entry handed over is Dropped
    uint64_t memoCount_ = 0;       // slots ever held: MEMOIZE's next
    ObjRef topDict_;
    PObject live_{PKind::None};  // the list of every object alive (PObject::prev/next)
    size_t streamFrame_ = 0;     // marks_.size() of the MARK opened on the entries list; 0 none
    bool stopped_ = false;

    DataTree tree_;
    uint64_t valuesInTree_ = 0, valuesTotal_ = 0;
};

PValue PickleMachine::longInteger(uint64_t n) {
    std::string raw;
    take(length(n), raw);
    if (n <= 8) {
        uint64_t u = 0;
        for (size_t i = 0; i < raw.size(); ++i) u |= static_cast<uint64_t>(static_cast<uint8_t>(raw[i])) << (8 * i);
        if (n > 0 && n < 8 && (static_cast<uint8_t>(raw.back()) & 0x80)) u |= ~uint64_t{0} << (8 * n);  // sign
        int64_t s = 0;
        std::memcpy(&s, &u, sizeof s);
        return integer(s);
    }
    // Beyond 64 bits: kept as a big integer, its value not needed by any field.
    PValue v = object(PKind::BigInt);
    v.object->bytes = (static_cast<uint8_t>(raw.back()) & 0x80) ? "-(a " : "(a ";
    v.object->bytes += std::to_string(n * 8) + "-bit integer)";
    return v;
}

PValue PickleMachine::textInteger(const std::string& digitsIn) {
    std::string digits = digitsIn;
    if (!digits.empty() && digits.back() == 'L') digits.pop_back();  // protocol 0's long
    if (digits == "00" || digits == "01") {                          // INT's booleans
        PValue v;
        v.kind = PKind::Bool;
        v.boolean = digits == "01";
        return v;
    }
    errno = 0;
    char* end = nullptr;
    const long long n = std::strtoll(digits.c_str(), &end, 10);
    if (digits.empty() || end != digits.c_str() + digits.size()) fail("integer text '" + digits + "' is no integer");
    if (errno == ERANGE) {
        PValue v = object(PKind::BigInt);
        v.object->bytes = digits;
        return v;
    }
    return integer(n);
}

bool PickleMachine::keyText(const PValue& key, std::string& out) {
    switch (key.kind) {
        case PKind::Text:
        case PKind::Bytes:
        case PKind::BigInt:
            out = static_cast<char>(key.kind);
            out += key.object->bytes;
            return true;
        case PKind::Int:
            out = static_cast<char>(PKind::Int) + std::to_string(key.integer);
            return true;
        case PKind::Bool:
            out = key.boolean ? "\1T" : "\1F";
            return true;
        case PKind::None:
            out = "\0N";
            return true;
        case PKind::Float: {
            out = static_cast<char>(PKind::Float);
            out.append(reinterpret_cast<const char*>(&key.real), sizeof key.real);
            return true;
        }
        default:
            return false;
    }
}

bool sameKey(const PValue& a, const PValue& b) {
    if (a.kind != b.kind) return false;
    switch (a.kind) {
        case PKind::Text:
        case PKind::Bytes:
        case PKind::BigInt:
            return a.object == b.object || a.object->bytes == b.object->bytes;
        case PKind::Int:
            return a.integer == b.integer;
        case PKind::Bool:
            return a.boolean == b.boolean;
        case PKind::Float:
            return std::memcmp(&a.real, &b.real, sizeof a.real) == 0;
        default:
            return true;  // None
    }
}

void PickleMachine::setItem(PObject& dict, PValue key, PValue value) {
    if (key.kind == PKind::List || key.kind == PKind::Tuple || key.kind == PKind::Dict)
        fail("a dict key that is a list, tuple or dict (only text, numbers, booleans and None are read)");
    // A dump's dicts are small: their keys compared one by one, an index
    // only for a large one.
    if (!dict.keyIndex && dict.items.size() < 64) {
        for (size_t i = 0; i < dict.items.size(); i += 2)
            if (sameKey(dict.items[i], key)) {
                dict.items[i + 1] = std::move(value);  // a later key replaces, as in Python
                return;
            }
        dict.items.push_back(std::move(key));
        dict.items.push_back(std::move(value));
        return;
    }
    std::string k;
    keyText(key, k);
    if (!dict.keyIndex) {
        dict.keyIndex = std::make_unique<std::unordered_map<std::string, size_t>>();
        std::string other;
        for (size_t i = 0; i < dict.items.size(); i += 2)
            if (keyText(dict.items[i], other)) dict.keyIndex->emplace(other, i);
    }
    const auto [it, fresh] = dict.keyIndex->emplace(k, dict.items.size());
    if (!fresh) {
        dict.items[it->second + 1] = std::move(value);
        return;
    }
    dict.items.push_back(std::move(key));
    dict.items.push_back(std::move(value));
}

void PickleMachine::append(PObject& list, PValue item) {
    if (list.streamed) {
        deliverEntry(std::move(item));
        return;
    }
    list.items.push_back(std::move(item));
}

// The list about to be built is the top-level dict's value for "entries":
// the stack holds the top dict, perhaps a MARK right above it, and keys
// and values after it with the key "entries" last.
bool PickleMachine::opensEntries() const {
    if (!topDict_ || stack_.empty() || stack_[0].object != topDict_) return false;
    size_t base = 1;
    if (marks_.size() == 1 && marks_[0] == 1)
        base = 1;
    else if (!marks_.empty())
        return false;
    if (stack_.size() <= base || (stack_.size() - base) % 2 != 1) return false;
    const PValue& key = stack_.back();
    return key.kind == PKind::Text && key.object->bytes == "entries";
}

void PickleMachine::deliverEntry(PValue item) {
    if (item.object) {
        // Its memo slot would keep it alive; a later reference to it is refused.
        const int64_t slot = item.object->memoSlot;
        if (slot >= 0 && static_cast<size_t>(slot) < memo_.size() &&
            memo_[static_cast<size_t>(slot)].object == item.object) {
            memo_[static_cast<size_t>(slot)] = PValue{};
            memoState_[static_cast<size_t>(slot)] = Slot::Dropped;
        }
    }
    tree_.clear();
    valuesInTree_ = 0;
    toTree(item, 0);
    sink_.entry(tree_);
}

void PickleMachine::deliverField(const PValue& key, const PValue& value) {
    if (key.kind != PKind::Text) return;  // not a field of a dump
    if (value.object && value.object->streamed) return;
    tree_.clear();
    valuesInTree_ = 0;
    toTree(value, 0);
    sink_.field(key.object->bytes, tree_);
}

// In the MARK frame opened on the entries list, an item is complete once a
// container follows it: only SETITEM (with that container as a key, which
// no dict takes) or APPEND (onto an item that is a list, which no entry is)
// could still reach it. PyTorch's entries are dicts built by MARK ...
// SETITEMS, each followed by the next one's EMPTY_DICT; Python's are
// handed over at each APPENDS, a thousand at most.
void PickleMachine::streamCompleted() {
    if (!streamFrame_ || marks_.size() != streamFrame_) return;
    const size_t base = marks_.back();
    const auto container = [](const PValue& v) {
        return v.kind == PKind::List || v.kind == PKind::Tuple || v.kind == PKind::Dict;
    };
    while (stack_.size() >= base + 2 && container(stack_[base + 1])) {
        PValue item = std::move(stack_[base]);
        stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(base));
        deliverEntry(std::move(item));
    }
}

void PickleMachine::toTree(const PValue& v, size_t depth) {
    if (depth > kMaxDepth) fail("values nested more than 512 deep (or a value that contains itself)");
    const uint64_t budget = std::max(limits_.minValues, limits_.maxValuesPerByte * consumed_);
    if (++valuesInTree_ > limits_.maxValuesPerEntry || ++valuesTotal_ > budget)
        fail("shared references expand to more values than a Flight Recorder dump has");
    switch (v.kind) {
        case PKind::None:
            tree_.addNone();
            return;
        case PKind::Bool:
            tree_.addBool(v.boolean);
            return;
        case PKind::Int:
            tree_.addInt(v.integer);
            return;
        case PKind::Float:
            tree_.addFloat(v.real);
            return;
        case PKind::BigInt:
            tree_.addBigInt(v.object->bytes);
            return;
        case PKind::Text:
            tree_.addText(v.object->bytes);
            return;
        case PKind::Bytes:
            tree_.addText(v.object->bytes, DataKind::Bytes);
            return;
        case PKind::List:
        case PKind::Tuple:
        case PKind::Dict: {
            const uint32_t at = tree_.open(v.kind == PKind::Dict ? DataKind::Dict : DataKind::List);
            // Copied: a dict reached twice through the memo is read twice.
            const ObjRef keep = v.object;
            for (const PValue& item : keep->items) toTree(item, depth + 1);
            tree_.close(at, static_cast<uint32_t>(keep->items.size()));
            return;
        }
    }
}

void PickleMachine::step(uint8_t op) {
    switch (op) {
        case 0x80: {  // PROTO
            const uint8_t protocol = byte();
            if (protocol < 2 || protocol > 5)
                fail("pickle protocol " + std::to_string(protocol) + ": overlapscope reads protocols 2 to 5");
            return;
        }
        case 0x95:  // FRAME: a length only; the frame's opcodes follow inline
            littleEndian(8);
            return;
        case '.':  // STOP
            stopped_ = true;
            return;
        case '(':  // MARK
            marks_.push_back(stack_.size());
            if (!stack_.empty() && stack_.back().object && stack_.back().object->streamed) streamFrame_ = marks_.size();
            return;
        case '0':  // POP
            if (!marks_.empty() && marks_.back() == stack_.size())
                popMark();  // POP of a MARK, as Python's unpickler allows
            else
                pop();
            return;
        case '1':  // POP_MARK
            stack_.resize(popMark());
            return;
        case '2':  // DUP
            push(top());
            return;
        case 'N':
            push(PValue{});
            return;
        case 0x88:
        case 0x89: {  // NEWTRUE, NEWFALSE
            PValue v;
            v.kind = PKind::Bool;
            v.boolean = op == 0x88;
            push(v);
            return;
        }
        case 'I':  // INT (text; "01"/"00" are booleans)
        case 'L':  // LONG (text)
            push(textInteger(line()));
            return;
        case 'J': {  // BININT: 4 bytes, signed
            const auto u = static_cast<uint32_t>(littleEndian(4));
            int32_t s = 0;
            std::memcpy(&s, &u, sizeof s);
            push(integer(s));
            return;
        }
        case 'K':  // BININT1
            push(integer(static_cast<int64_t>(littleEndian(1))));
            return;
        case 'M':  // BININT2
            push(integer(static_cast<int64_t>(littleEndian(2))));
            return;
        case 0x8a:  // LONG1
            push(longInteger(littleEndian(1)));
            return;
        case 0x8b:  // LONG4
            push(longInteger(littleEndian(4)));
            return;
        case 'F': {  // FLOAT (text)
            const std::string t = line();
            char* end = nullptr;
            PValue v;
            v.kind = PKind::Float;
            v.real = std::strtod(t.c_str(), &end);
            if (t.empty() || end != t.c_str() + t.size()) fail("float text '" + t + "' is no number");
            push(v);
            return;
        }
        case 'G': {  // BINFLOAT: 8 bytes, big-endian
            uint64_t u = 0;
            for (int i = 0; i < 8; ++i) u = (u << 8) | byte();
            PValue v;
            v.kind = PKind::Float;
            std::memcpy(&v.real, &u, sizeof v.real);
            push(v);
            return;
        }
        case 'X':  // BINUNICODE
            push(text(PKind::Text, littleEndian(4)));
            return;
        case 0x8c:  // SHORT_BINUNICODE
            push(text(PKind::Text, littleEndian(1)));
            return;
        case 0x8d:  // BINUNICODE8
            push(text(PKind::Text, littleEndian(8)));
            return;
        case 'T':  // BINSTRING (Python 2 str: text, as Python 3 reads it)
            push(text(PKind::Text, littleEndian(4)));
            return;
        case 'U':  // SHORT_BINSTRING
            push(text(PKind::Text, littleEndian(1)));
            return;
        case 'B':  // BINBYTES
            push(text(PKind::Bytes, littleEndian(4)));
            return;
        case 'C':  // SHORT_BINBYTES
            push(text(PKind::Bytes, littleEndian(1)));
            return;
        case 0x8e:  // BINBYTES8
        case 0x96:  // BYTEARRAY8
            push(text(PKind::Bytes, littleEndian(8)));
            return;
        case ']':  // EMPTY_LIST
        {
            const bool entries = opensEntries();
            push(object(PKind::List));
            stack_.back().object->streamed = entries;
            return;
        }
        case 'l': {  // LIST: the values since the MARK
            const size_t at = popMark();
            std::vector<PValue> items(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(at)),
                                      std::make_move_iterator(stack_.end()));
            stack_.resize(at);
            PValue v = object(PKind::List);
            v.object->streamed = opensEntries();
            for (PValue& item : items) append(*v.object, std::move(item));
            push(std::move(v));
            return;
        }
        case ')':  // EMPTY_TUPLE
            push(object(PKind::Tuple));
            return;
        case 't': {  // TUPLE
            const size_t at = popMark();
            PValue v = object(PKind::Tuple);
            v.object->items.assign(std::make_move_iterator(stack_.begin() + static_cast<std::ptrdiff_t>(at)),
                                   std::make_move_iterator(stack_.end()));
            stack_.resize(at);
            push(std::move(v));
            return;
        }
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
            const size_t n = static_cast<size_t>(op - 0x84);
            if (stack_.size() < frameBase() + n)
                fail("TUPLE" + std::to_string(n) + " needs more values than there are");
            PValue v = object(PKind::Tuple);
            v.object->items.assign(std::make_move_iterator(stack_.end() - static_cast<std::ptrdiff_t>(n)),
                                   std::make_move_iterator(stack_.end()));
            stack_.resize(stack_.size() - n);
            push(std::move(v));
            return;
        }
        case '}':  // EMPTY_DICT
            push(object(PKind::Dict));
            if (stack_.size() == 1 && !topDict_) topDict_ = stack_.back().object;
            return;
        case 'd': {  // DICT: the keys and values since the MARK
            const size_t at = popMark();
            if ((stack_.size() - at) % 2) fail("DICT with a key and no value");
            PValue v = object(PKind::Dict);
            for (size_t i = at; i + 1 < stack_.size(); i += 2)
                setItem(*v.object, std::move(stack_[i]), std::move(stack_[i + 1]));
            stack_.resize(at);
            push(std::move(v));
            if (stack_.size() == 1 && !topDict_) topDict_ = stack_.back().object;
            return;
        }
        case 'a': {  // APPEND
            PValue item = pop();
            append(container(top(), PKind::List, "APPEND"), std::move(item));
            return;
        }
        case 'e': {  // APPENDS
            const size_t at = popMark();
            if (at == 0) fail("APPENDS with no list below its MARK");
            PObject& list = container(stack_[at - 1], PKind::List, "APPENDS");
            for (size_t i = at; i < stack_.size(); ++i) append(list, std::move(stack_[i]));
            stack_.resize(at);
            return;
        }
        case 's': {  // SETITEM
            PValue value = pop();
            PValue key = pop();
            PValue& dict = top();
            if (isTopDict(dict)) return deliverField(key, value);
            setItem(container(dict, PKind::Dict, "SETITEM"), std::move(key), std::move(value));
            return;
        }
        case 'u': {  // SETITEMS
            const size_t at = popMark();
            if (at == 0) fail("SETITEMS with no dict below its MARK");
            if ((stack_.size() - at) % 2) fail("SETITEMS with a key and no value");
            PValue& dict = stack_[at - 1];
            const bool topLevel = isTopDict(dict);
            for (size_t i = at; i + 1 < stack_.size(); i += 2) {
                if (topLevel)
                    deliverField(stack_[i], stack_[i + 1]);
                else
                    setItem(container(dict, PKind::Dict, "SETITEMS"), std::move(stack_[i]), std::move(stack_[i + 1]));
            }
            stack_.resize(at);
            return;
        }
        case 'q':  // BINPUT
            memoPut(littleEndian(1));
            return;
        case 'r':  // LONG_BINPUT
            memoPut(littleEndian(4));
            return;
        case 0x94:  // MEMOIZE
            memoPut(memoCount_);
            return;
        case 'h':  // BINGET
            memoGet(littleEndian(1));
            return;
        case 'j':  // LONG_BINGET
            memoGet(littleEndian(4));
            return;
        default:
            break;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", op);
    if (importsOrCalls(op))
        fail(std::string("refused: opcode ") + opcodeName(op) + " (" + hex +
             ") would import or call code or build an object; overlapscope reads only data from a dump "
             "(dicts, lists, tuples, text, bytes, numbers, booleans, None), so this is not a Flight Recorder "
             "dump as PyTorch writes it");
    if (const char* name = opcodeName(op))
        fail(std::string("opcode ") + name + " (" + hex + ") is not one overlapscope reads");
    fail(std::string("byte ") + hex + " is no pickle opcode");
}

void PickleMachine::run() {
    for (bool first = true; !stopped_; first = false) {
        opAt_ = offset_;
        const uint8_t op = byte();
        if (first && op != 0x80) fail("not a pickle of protocol 2 or later (no PROTO opcode first)");
        step(op);
        streamCompleted();
    }
    if (stack_.empty() || !isTopDict(stack_[0]))
        fail("the pickle holds no dict at its top, so it is not a Flight Recorder dump");
    if (stack_.size() != 1 || !marks_.empty()) fail("the pickle's STOP leaves values besides the dump on its stack");
    // A top dict built by DICT from its MARK was not handed over field by field.
    const std::vector<PValue> items = std::move(topDict_->items);
    for (size_t i = 0; i + 1 < items.size(); i += 2) deliverField(items[i], items[i + 1]);
}

}  // namespace

void readPickleDump(ByteSource& in, const std::string& path, DumpSink& sink, const DumpLimits& limits,
                    uint64_t sizeHint) {
    PickleMachine machine(in, path, sink, limits, sizeHint);
    machine.run();
}

}  // namespace osc::hang
