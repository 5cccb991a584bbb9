#include "python/src/columns.h"

#include <nlohmann/json.hpp>

namespace osc::python {
namespace {

// RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF.
bool validUtf8(std::string_view s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const auto* end = p + s.size();
    while (p < end) {
        const unsigned char c = *p;
        if (c < 0x80) {
            ++p;
            continue;
        }
        int extra = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            return false;
        }
        if (end - p <= extra) return false;
        if (p[1] < lo || p[1] > hi) return false;
        for (int k = 2; k <= extra; ++k)
            if (p[k] < 0x80 || p[k] > 0xBF) return false;
        p += extra + 1;
    }
    return true;
}

}  // namespace

std::string pythonText(std::string_view s) {
    if (validUtf8(s)) return std::string(s);
    // The report JSON's own replacement (nlohmann's), so both spell a broken
    // name alike; rare enough that the round trip through JSON text is cheap.
    const std::string dumped =
        nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return nlohmann::json::parse(dumped).get<std::string>();
}

py::str text(std::string_view s) {
    if (validUtf8(s)) return py::str(s.data(), s.size());
    const std::string fixed = pythonText(s);
    return py::str(fixed.data(), fixed.size());
}

py::array boolArray(std::vector<uint8_t>&& values) {
    auto* owned = new std::vector<uint8_t>(std::move(values));
    py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
    return py::array(py::dtype("bool"), {static_cast<py::ssize_t>(owned->size())}, {}, owned->data(), owner);
}

void CategoryColumn::push(uint32_t id, std::string_view name) {
    auto [it, added] = byId_.try_emplace(id, static_cast<int32_t>(categories_.size()));
    if (added) categories_.append(text(name));
    codes_.push_back(it->second);
}

void CategoryColumn::pushText(std::string_view name) {
    auto it = byText_.find(name);
    if (it == byText_.end()) {
        it = byText_.emplace(std::string(name), static_cast<int32_t>(categories_.size())).first;
        categories_.append(text(name));
    }
    codes_.push_back(it->second);
}

void CategoryColumn::pushTextOrNull(std::string_view name) {
    if (name.empty())
        codes_.push_back(-1);  // pandas' code for a missing category, as the JSON's null
    else
        pushText(name);
}

py::tuple CategoryColumn::finish() { return py::make_tuple("category", moveToArray(std::move(codes_)), categories_); }

}  // namespace osc::python
