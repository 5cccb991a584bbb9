// Prometheus' text exposition format, version 0.0.4 (what node_exporter's
// textfile collector and every scraper read): per metric a HELP and a TYPE
// line, then all its samples together.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace osc::agent::live {

using Labels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
public:
    // Starts a metric; its samples follow.
    void family(std::string_view name, std::string_view type, std::string_view help);
    // A sample of the current metric. NaN and infinities are written as the
    // format spells them.
    void sample(const Labels& labels, double value);
    const std::string& text() const { return text_; }

private:
    std::string text_;
    std::string name_;
};

// A label value as the format quotes it: backslash, double quote and line
// feed escaped.
std::string escapeLabelValue(std::string_view value);
// A metric value: shortest decimal that reads back the same, NaN, +Inf, -Inf.
std::string formatSampleValue(double value);

}  // namespace osc::agent::live
