// SharedText: an immutable string shared by reference count.
//
// A device's communication operations repeat a handful of kernel names,
// collectives, datatypes and NCCL algorithms and protocols hundreds of
// thousands of times. Held as std::string (32 bytes each, and a heap copy of
// every name longer than 15 characters) they were most of a one-file
// report's memory: about 250 of a CollectiveInstance's 430 bytes. Copies of
// one SharedText share its characters; the empty text allocates nothing.
#pragma once

#include <array>
#include <atomic>
#include <compare>
#include <cstdint>
#include <cstring>
#include <new>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace osc {

class SharedText {
public:
    SharedText() noexcept = default;
    // Implicit, like std::string's: `op.name = "Memcpy HtoD"` and assigning
    // a std::string keep working. Each makes a new text; share one by
    // copying the SharedText instead.
    SharedText(std::string_view text) {
        if (text.empty()) return;
        if (text.size() > UINT32_MAX) throw std::length_error("SharedText longer than 4 GiB");
        void* memory = ::operator new(sizeof(Block) + text.size() + 1);
        block_ = new (memory) Block{};
        block_->size = static_cast<uint32_t>(text.size());
        std::memcpy(block_->chars(), text.data(), text.size());
        block_->chars()[text.size()] = '\0';
    }
    SharedText(const std::string& text) : SharedText(std::string_view(text)) {}
    SharedText(const char* text) : SharedText(std::string_view(text)) {}

    SharedText(const SharedText& other) noexcept : block_(other.block_) {
        if (block_) block_->refs.fetch_add(1, std::memory_order_relaxed);
    }
    SharedText(SharedText&& other) noexcept : block_(other.block_) { other.block_ = nullptr; }
    SharedText& operator=(const SharedText& other) noexcept {
        SharedText copy(other);
        std::swap(block_, copy.block_);
        return *this;
    }
    SharedText& operator=(SharedText&& other) noexcept {
        std::swap(block_, other.block_);
        return *this;
    }
    ~SharedText() { release(); }

    std::string_view view() const noexcept { return block_ ? std::string_view(block_->chars(), block_->size) : ""; }
    operator std::string_view() const noexcept { return view(); }
    std::string str() const { return std::string(view()); }
    const char* c_str() const noexcept { return block_ ? block_->chars() : ""; }
    const char* data() const noexcept { return c_str(); }
    size_t size() const noexcept { return block_ ? block_->size : 0; }
    bool empty() const noexcept { return block_ == nullptr; }
    void clear() noexcept { *this = SharedText(); }
    const char* begin() const noexcept { return c_str(); }
    const char* end() const noexcept { return c_str() + size(); }
    char operator[](size_t i) const noexcept { return c_str()[i]; }

    friend bool operator==(const SharedText& a, std::string_view b) noexcept { return a.view() == b; }
    friend std::strong_ordering operator<=>(const SharedText& a, std::string_view b) noexcept { return a.view() <=> b; }
    friend std::ostream& operator<<(std::ostream& out, const SharedText& text) { return out << text.view(); }

private:
    struct Block {
        std::atomic<uint32_t> refs{1};
        uint32_t size = 0;
        char* chars() noexcept { return reinterpret_cast<char*>(this + 1); }
        const char* chars() const noexcept { return reinterpret_cast<const char*>(this + 1); }
    };
    void release() noexcept {
        if (block_ && block_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            block_->~Block();
            ::operator delete(block_);
        }
        block_ = nullptr;
    }
    Block* block_ = nullptr;
};

// Texts read lately, for readers of saved operations (partial results, report
// JSON): a text seen among the last 16 is shared rather than made again.
class RecentTexts {
public:
    SharedText recall(std::string_view text) {
        if (text.empty()) return {};
        for (const SharedText& t : recent_)
            if (t.view() == text) return t;
        SharedText made(text);
        recent_[next_++ % recent_.size()] = made;
        return made;
    }

private:
    std::array<SharedText, 16> recent_;
    size_t next_ = 0;
};

inline std::string operator+(const std::string& a, const SharedText& b) { return a + std::string(b.view()); }
inline std::string operator+(const SharedText& a, const std::string& b) { return std::string(a.view()) + b; }
inline std::string operator+(const char* a, const SharedText& b) { return a + std::string(b.view()); }
inline std::string operator+(const SharedText& a, const char* b) { return std::string(a.view()) + b; }

}  // namespace osc

template <>
struct std::hash<osc::SharedText> {
    size_t operator()(const osc::SharedText& text) const noexcept { return std::hash<std::string_view>{}(text.view()); }
};
