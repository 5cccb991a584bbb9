#include "cli/number_option.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace osc::cli {

void parseNumber(const char* command, const char* option, NumberOption& o, double lo, double hi, const char* unit,
                 bool whole) {
    if (!o.given()) return;
    char* end = nullptr;
    const double v = std::strtod(o.text.c_str(), &end);
    if (end == o.text.c_str() || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
        char range[96];
        std::snprintf(range, sizeof range, "%.15g to %.15g", lo, hi);
        throw std::invalid_argument(std::string(command) + ": " + option + " " + o.text + ": expected " + unit +
                                    " from " + range);
    }
    if (whole && v != std::floor(v))
        throw std::invalid_argument(std::string(command) + ": " + option + " " + o.text + ": expected a whole number");
    o.value = v;
}

std::string numberText(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.15g", v);
    return buf;
}

}  // namespace osc::cli
