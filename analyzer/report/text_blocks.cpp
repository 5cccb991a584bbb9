#include "analyzer/report/text_blocks.h"

#include <algorithm>
#include <cstring>

namespace osc::report {

void TextBlocks::nextBlock() {
    if (used_ == blocks_.size()) blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockBytes));
    char* b = blocks_[used_++].get();
    setp(b, b + kBlockBytes);
}

void TextBlocks::clear() {
    used_ = 0;
    setp(nullptr, nullptr);
}

void TextBlocks::clearKeepingOneBlock() {
    clear();
    if (blocks_.size() > 1) blocks_.resize(1);
}

size_t TextBlocks::size() const {
    if (used_ == 0) return 0;
    return (used_ - 1) * kBlockBytes + static_cast<size_t>(pptr() - pbase());
}

TextBlocks::int_type TextBlocks::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    nextBlock();
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
    return c;
}

std::streamsize TextBlocks::xsputn(const char* s, std::streamsize n) {
    for (std::streamsize left = n; left > 0;) {
        if (pptr() == epptr()) nextBlock();
        const std::streamsize k = std::min(static_cast<std::streamsize>(epptr() - pptr()), left);
        std::memcpy(pptr(), s, static_cast<size_t>(k));
        pbump(static_cast<int>(k));
        s += k;
        left -= k;
    }
    return n;
}

}  // namespace osc::report
