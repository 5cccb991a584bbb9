#include "python/src/python_text.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace osc::python {

py::str pythonText(const report::TextBlocks& text) {
    const size_t n = text.size();
    bool ascii = true;
    text.forEachPiece([&](const char* p, size_t k) {
        ascii = ascii && std::none_of(p, p + k, [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    });
    if (ascii) {
        PyObject* s = PyUnicode_New(static_cast<Py_ssize_t>(n), 127);
        if (!s) throw py::error_already_set();
        auto* out = reinterpret_cast<char*>(PyUnicode_1BYTE_DATA(s));
        text.forEachPiece([&](const char* p, size_t k) {
            std::memcpy(out, p, k);
            out += k;
        });
        return py::reinterpret_steal<py::str>(s);
    }
    std::string whole;
    whole.reserve(n);
    text.forEachPiece([&](const char* p, size_t k) { whole.append(p, k); });
    return py::str(whole);
}

}  // namespace osc::python
