// Cells of the CSV files the GUI writes straight from the analysis
// (analysis_csv.h, compare_csv.h): fields quoted only when they must be,
// numbers that read back exactly, an empty cell for JSON's null, the ASCII
// minus everywhere (a spreadsheet reads U+2212 as text).
#pragma once

#include "analyzer/metrics/analysis.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace osc::gui::csv {

inline std::string quoted(std::string_view s) {
    if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
    std::string out = "\"";
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + '"';
}

// Round-trips exactly, as the JSON writer's numbers do.
inline std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

inline std::string number(const std::optional<double>& v) { return v ? number(*v) : std::string(); }
inline std::string number(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string(); }

inline void line(std::ostringstream& out, const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << fields[i];
    out << '\n';
}

// rank, host, pid, device: which device a row is about.
inline std::vector<std::string> deviceFields(const DeviceAnalysis& d) {
    return {std::to_string(d.rank), quoted(d.host), std::to_string(d.pid), std::to_string(d.device)};
}

}  // namespace osc::gui::csv
