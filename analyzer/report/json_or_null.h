// One spelling for "this value, or null when it is undefined" in the JSON
// documents we write (the report, the what-if report): an empty optional is
// `null`, never a made-up 0.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace osc::report {

template <typename T>
nlohmann::ordered_json orNull(const std::optional<T>& v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace osc::report
