#include "python/src/text_blocks.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace osc::python {

void TextBlocks::nextBlock() {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockBytes));
    char* b = blocks_.back().get();
    setp(b, b + kBlockBytes);
}

size_t TextBlocks::size() const {
    if (blocks_.empty()) return 0;
    return (blocks_.size() - 1) * kBlockBytes + static_cast<size_t>(pptr() - pbase());
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
        const auto room = static_cast<std::streamsize>(epptr() - pptr());
        const std::streamsize k = std::min(room, left);
        std::memcpy(pptr(), s, static_cast<size_t>(k));
        pbump(static_cast<int>(k));
        s += k;
        left -= k;
    }
    return n;
}

template <class F>
void TextBlocks::forEachPiece(F f) const {
    for (size_t i = 0; i < blocks_.size(); ++i)
        f(blocks_[i].get(), i + 1 < blocks_.size() ? kBlockBytes : static_cast<size_t>(pptr() - pbase()));
}

py::str TextBlocks::toPython() const {
    const size_t n = size();
    bool ascii = true;
    forEachPiece([&](const char* p, size_t k) {
        ascii = ascii && std::none_of(p, p + k, [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    });
    if (ascii) {
        PyObject* s = PyUnicode_New(static_cast<Py_ssize_t>(n), 127);
        if (!s) throw py::error_already_set();
        auto* out = reinterpret_cast<char*>(PyUnicode_1BYTE_DATA(s));
        forEachPiece([&](const char* p, size_t k) {
            std::memcpy(out, p, k);
            out += k;
        });
        return py::reinterpret_steal<py::str>(s);
    }
    std::string whole;
    whole.reserve(n);
    forEachPiece([&](const char* p, size_t k) { whole.append(p, k); });
    return py::str(whole);
}

}  // namespace osc::python
