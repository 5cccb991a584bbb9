// Tables handed to pandas column by column: a numpy array per numeric column
// (built without a Python object per value), nullable integers as values and
// a mask (pandas' Int64), repeated names as categoricals, and text decoded
// the way the report JSON writes it, so a table and to_dict() agree.
// overlapscope/_frames.py turns a Columns object into a DataFrame.
#pragma once

#include "analyzer/capture/text_map.h"
#include "analyzer/metrics/packed_optional.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace osc::python {

namespace py = pybind11;

// A std::string as Python str. Broken UTF-8 (names come from files) becomes
// U+FFFD exactly where the report JSON writer puts it.
py::str text(std::string_view s);
// The UTF-8 of that str: byte order on it is Python's order of the strs.
std::string pythonText(std::string_view s);

// A rank (local rank, world size) the file did not name, -1, as missing:
// pandas' <NA>, where the report JSON writes null.
inline std::optional<int> known(int value) { return value >= 0 ? std::optional<int>(value) : std::nullopt; }

// Moves a vector's buffer into a numpy array without copying it.
template <typename T>
py::array_t<T> moveToArray(std::vector<T>&& values) {
    auto* owned = new std::vector<T>(std::move(values));
    py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(static_cast<py::ssize_t>(owned->size()), owned->data(), owner);
}

// Bytes 0 and 1 as a numpy bool array (std::vector<bool> has no buffer to move).
py::array boolArray(std::vector<uint8_t>&& values);

// Names from a string table: codes into `categories`, built once per name.
class CategoryColumn {
public:
    void push(uint32_t id, std::string_view name);
    void pushText(std::string_view name);  // without a string table id
    // Unknown or inapplicable ("") is missing, where the report JSON writes null.
    void pushTextOrNull(std::string_view name);
    py::tuple finish();  // ("category", codes, categories)

private:
    std::vector<int32_t> codes_;
    std::unordered_map<uint32_t, int32_t> byId_;
    TextMap<int32_t> byText_;
    py::list categories_;
};

template <typename T>
struct IsPackedOptional : std::false_type {};
template <typename T>
struct IsPackedOptional<PackedOptional<T>> : std::true_type {};

// One table being built: columns in the order they are added; each is a
// function of the row index.
class Columns {
public:
    explicit Columns(size_t rows) : rows_(rows) {}

    size_t rows() const { return rows_; }

    // The column type follows what `value(i)` returns: integers, doubles and
    // bools become numpy arrays, std::optional integers and bools pandas'
    // nullable Int64 and boolean, std::optional<double> float64 with NaN,
    // strings str, and py::object anything (lists, tuples, None).
    template <typename F>
    void add(const char* name, F value) {
        using T = std::decay_t<decltype(value(size_t{0}))>;
        if constexpr (IsPackedOptional<T>::value) {  // as the std::optional it stands for
            add(name, [&value](size_t i) { return value(i).optional(); });
        } else if constexpr (std::is_same_v<T, bool>) {
            std::vector<uint8_t> v(rows_);
            for (size_t i = 0; i < rows_; ++i) v[i] = value(i) ? 1 : 0;
            columns_[name] = boolArray(std::move(v));
        } else if constexpr (std::is_integral_v<T>) {
            std::vector<int64_t> v(rows_);
            for (size_t i = 0; i < rows_; ++i) v[i] = static_cast<int64_t>(value(i));
            columns_[name] = moveToArray(std::move(v));
        } else if constexpr (std::is_floating_point_v<T>) {
            std::vector<double> v(rows_);
            for (size_t i = 0; i < rows_; ++i) v[i] = static_cast<double>(value(i));
            columns_[name] = moveToArray(std::move(v));
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            std::vector<double> v(rows_);
            for (size_t i = 0; i < rows_; ++i) {
                const auto x = value(i);
                v[i] = x ? *x : std::numeric_limits<double>::quiet_NaN();
            }
            columns_[name] = moveToArray(std::move(v));
        } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
            std::vector<uint8_t> v(rows_), missing(rows_);
            for (size_t i = 0; i < rows_; ++i) {
                const auto x = value(i);
                v[i] = x && *x ? 1 : 0;
                missing[i] = x ? 0 : 1;
            }
            columns_[name] = py::make_tuple("nullable_bool", boolArray(std::move(v)), boolArray(std::move(missing)));
        } else if constexpr (isOptionalInteger<T>::value) {
            std::vector<int64_t> v(rows_);
            std::vector<uint8_t> missing(rows_);
            for (size_t i = 0; i < rows_; ++i) {
                const auto x = value(i);
                v[i] = x ? static_cast<int64_t>(*x) : 0;
                missing[i] = x ? 0 : 1;
            }
            columns_[name] = py::make_tuple("nullable", moveToArray(std::move(v)), boolArray(std::move(missing)));
        } else if constexpr (std::is_convertible_v<T, std::string_view>) {
            py::list v(rows_);
            for (size_t i = 0; i < rows_; ++i) v[i] = text(value(i));
            columns_[name] = v;
        } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
            py::list v(rows_);
            for (size_t i = 0; i < rows_; ++i) {
                const auto x = value(i);
                v[i] = x ? py::object(text(*x)) : py::object(py::none());
            }
            columns_[name] = v;
        } else {
            static_assert(std::is_base_of_v<py::object, T>, "unsupported column type");
            py::list v(rows_);
            for (size_t i = 0; i < rows_; ++i) v[i] = value(i);
            columns_[name] = v;
        }
    }

    // A column made elsewhere (a CategoryColumn, an array).
    void put(const char* name, py::object column) { columns_[name] = std::move(column); }

    py::dict finish() { return std::move(columns_); }

private:
    template <typename T>
    struct isOptionalInteger : std::false_type {};
    template <typename T>
    struct isOptionalInteger<std::optional<T>> : std::is_integral<T> {};

    size_t rows_;
    py::dict columns_;
};

}  // namespace osc::python
