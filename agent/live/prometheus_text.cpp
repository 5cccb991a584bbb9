#include "agent/live/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace osc::agent::live {

std::string escapeLabelValue(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (char c : value) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string formatSampleValue(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char buf[32];
    for (int precision = 6; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, value);
        if (std::strtod(buf, nullptr) == value) break;
    }
    return buf;
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help) {
    name_ = std::string(name);
    text_ += "# HELP ";
    text_ += name;
    text_ += ' ';
    // HELP text escapes backslash and line feed only.
    for (char c : help) text_ += c == '\n' ? std::string("\\n") : c == '\\' ? std::string("\\\\") : std::string(1, c);
    text_ += "\n# TYPE ";
    text_ += name;
    text_ += ' ';
    text_ += type;
    text_ += '\n';
}

void PrometheusText::sample(const Labels& labels, double value) {
    text_ += name_;
    if (!labels.empty()) {
        text_ += '{';
        for (size_t i = 0; i < labels.size(); ++i) {
            if (i) text_ += ',';
            text_ += labels[i].first;
            text_ += "=\"";
            text_ += escapeLabelValue(labels[i].second);
            text_ += '"';
        }
        text_ += '}';
    }
    text_ += ' ';
    text_ += formatSampleValue(value);
    text_ += '\n';
}

}  // namespace osc::agent::live
