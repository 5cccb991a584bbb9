// A long text written as a stream straight into a Python str (a report's
// JSON: one std::string copied into bytes, then decoded, was most of
// Report.to_json()'s time; a buffer of blocks copied into a str still faulted
// in twice the memory the text needs).
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <streambuf>

namespace osc::python {

namespace py = pybind11;

// Written from one thread, which need not hold the GIL (it takes it to grow
// the str, a few times in all: realloc moves a large one without copying).
// Constructed, taken and destroyed with the GIL held.
class PythonTextBuf final : public std::streambuf {
public:
    PythonTextBuf();
    ~PythonTextBuf() override;
    PythonTextBuf(const PythonTextBuf&) = delete;
    PythonTextBuf& operator=(const PythonTextBuf&) = delete;

    // The text written. ASCII, as reports mostly are, is the str the bytes
    // were written into; anything else is decoded as UTF-8 (strictly).
    py::str take();

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;

private:
    void grow(size_t atLeast);
    void advance(size_t n);

    PyObject* str_ = nullptr;  // compact ASCII, its characters the put area
    size_t capacity_ = 0;
    size_t scanned_ = 0;  // characters known to be ASCII or not, from the start
    bool ascii_ = true;
};

}  // namespace osc::python
