// A long text rendered through an std::ostream into fixed blocks, then made
// a Python str in one copy. A report of hundreds of MB written into one
// std::string is copied at every doubling (and its new pages faulted in),
// then again into Python bytes and again when decoded: that was most of
// Report.to_json()'s time.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <memory>
#include <streambuf>
#include <vector>

namespace osc::python {

namespace py = pybind11;

class TextBlocks final : public std::streambuf {
public:
    size_t size() const;
    // The text as a str (the GIL held): ASCII, as reports mostly are, is
    // copied as it is; anything else is decoded as UTF-8.
    py::str toPython() const;

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;

private:
    void nextBlock();
    template <class F>
    void forEachPiece(F f) const;

    static constexpr size_t kBlockBytes = size_t{4} << 20;
    std::vector<std::unique_ptr<char[]>> blocks_;
};

}  // namespace osc::python
