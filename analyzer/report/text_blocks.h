// An std::streambuf that keeps what is written in fixed blocks, kept for
// reuse across clear(). A report of hundreds of MB written into one
// std::string is copied at every doubling and its new pages faulted in
// anew; a device's object of a few MB rendered into a fresh string does the
// same at every device.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <streambuf>
#include <vector>

namespace osc::report {

class TextBlocks final : public std::streambuf {
public:
    size_t size() const;
    // Empty again; the blocks stay for the next text.
    void clear();
    // Empty again, the first block kept, the others freed.
    void clearKeepingOneBlock();
    // f(const char*, size_t) over the text's pieces, in order.
    template <class F>
    void forEachPiece(F f) const {
        for (size_t i = 0; i + 1 < used_; ++i) f(blocks_[i].get(), kBlockBytes);
        if (used_ > 0) f(blocks_[used_ - 1].get(), static_cast<size_t>(pptr() - pbase()));
    }
    void writeTo(std::ostream& out) const {
        forEachPiece([&](const char* p, size_t n) { out.write(p, static_cast<std::streamsize>(n)); });
    }

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;

private:
    void nextBlock();

    static constexpr size_t kBlockBytes = size_t{4} << 20;
    std::vector<std::unique_ptr<char[]>> blocks_;
    size_t used_ = 0;  // blocks holding text: the last one written in is blocks_[used_ - 1]
};

}  // namespace osc::report
