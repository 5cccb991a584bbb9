#include "python/src/python_text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace osc::python {
namespace {

constexpr size_t kFirstCapacity = size_t{64} << 10;

char* characters(PyObject* s) { return reinterpret_cast<char*>(PyUnicode_1BYTE_DATA(s)); }

// Whether every byte is below 0x80: eight at a time.
bool isAscii(const char* p, size_t n) {
    uint64_t high = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t word;
        std::memcpy(&word, p + i, 8);
        high |= word;
    }
    for (; i < n; ++i) high |= static_cast<unsigned char>(p[i]);
    return (high & 0x8080808080808080ull) == 0;
}

}  // namespace

PythonTextBuf::PythonTextBuf() {
    str_ = PyUnicode_New(static_cast<Py_ssize_t>(kFirstCapacity), 127);
    if (!str_) throw py::error_already_set();
    capacity_ = kFirstCapacity;
    setp(characters(str_), characters(str_) + capacity_);
}

PythonTextBuf::~PythonTextBuf() { Py_XDECREF(str_); }

void PythonTextBuf::grow(size_t atLeast) {
    const size_t used = static_cast<size_t>(pptr() - pbase());
    size_t capacity = capacity_;
    while (capacity < atLeast) capacity *= 2;
    {
        py::gil_scoped_acquire gil;
        // A fresh str of one reference: resized in place (PyUnicode_Resize).
        if (PyUnicode_Resize(&str_, static_cast<Py_ssize_t>(capacity)) != 0) {
            PyErr_Clear();
            throw std::bad_alloc();
        }
    }
    capacity_ = capacity;
    setp(characters(str_), characters(str_) + capacity_);
    advance(used);
}

void PythonTextBuf::advance(size_t n) {
    // pbump takes an int: 2 GB and more in steps.
    for (size_t left = n; left > 0;) {
        const size_t step = std::min<size_t>(left, size_t{1} << 30);
        pbump(static_cast<int>(step));
        left -= step;
    }
}

PythonTextBuf::int_type PythonTextBuf::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    xsputn(&ch, 1);
    return c;
}

std::streamsize PythonTextBuf::xsputn(const char* s, std::streamsize n) {
    const auto k = static_cast<size_t>(n);
    const size_t used = static_cast<size_t>(pptr() - pbase());
    // Scanned as it comes, while in cache (a pass over the whole str at the
    // end was a tenth of to_json()'s time): what sputc put in since, then this.
    ascii_ = ascii_ && isAscii(pbase() + scanned_, used - scanned_) && isAscii(s, k);
    scanned_ = used + k;
    if (used + k > capacity_) grow(used + k);
    std::memcpy(pptr(), s, k);
    advance(k);
    return n;
}

py::str PythonTextBuf::take() {
    const size_t used = static_cast<size_t>(pptr() - pbase());
    ascii_ = ascii_ && isAscii(pbase() + scanned_, used - scanned_);
    setp(nullptr, nullptr);
    if (!ascii_) {
        PyObject* decoded = PyUnicode_DecodeUTF8(characters(str_), static_cast<Py_ssize_t>(used), nullptr);
        if (!decoded) throw py::error_already_set();
        return py::reinterpret_steal<py::str>(decoded);
    }
    if (PyUnicode_Resize(&str_, static_cast<Py_ssize_t>(used)) != 0) throw py::error_already_set();
    PyObject* s = str_;
    str_ = nullptr;
    return py::reinterpret_steal<py::str>(s);
}

}  // namespace osc::python
