#include "control/capture_condition.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <stdexcept>

namespace osc::control {
namespace {

constexpr std::string_view kMetrics[] = {"exposed_comm_ratio", "exposed_comm_seconds", "overlap_ratio",
                                         "step_seconds",       "comm_seconds",         "compute_seconds",
                                         "idle_ratio",         "comm_wait_seconds"};

class Cursor {
public:
    explicit Cursor(std::string_view text) : text_(text) {}
    void skipSpace() {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }
    bool done() {
        skipSpace();
        return pos_ >= text_.size();
    }
    std::string_view word() {
        skipSpace();
        const size_t begin = pos_;
        while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
            ++pos_;
        return text_.substr(begin, pos_ - begin);
    }
    std::string_view op() {
        skipSpace();
        const size_t begin = pos_;
        while (pos_ < text_.size() && (text_[pos_] == '<' || text_[pos_] == '>' || text_[pos_] == '=')) ++pos_;
        return text_.substr(begin, pos_ - begin);
    }
    std::optional<double> number() {
        skipSpace();
        const std::string rest(text_.substr(pos_));
        char* end = nullptr;
        const double v = std::strtod(rest.c_str(), &end);
        if (end == rest.c_str() || !std::isfinite(v)) return std::nullopt;
        pos_ += static_cast<size_t>(end - rest.c_str());
        return v;
    }

private:
    std::string_view text_;
    size_t pos_ = 0;
};

[[noreturn]] void bad(std::string_view text, const std::string& why) {
    throw std::invalid_argument(
        "--capture-when '" + std::string(text) + "': " + why +
        " (expected METRIC OP NUMBER [for N steps], e.g. 'exposed_comm_ratio>0.3 for 20 steps')");
}

}  // namespace

CaptureCondition parseCaptureCondition(std::string_view text) {
    Cursor c(text);
    CaptureCondition out;
    out.metric = std::string(c.word());
    bool known = false;
    for (auto m : kMetrics) known = known || m == out.metric;
    if (!known) {
        std::string list;
        for (auto m : kMetrics) list += (list.empty() ? "" : ", ") + std::string(m);
        bad(text, "unknown metric '" + out.metric + "' (one of " + list + ")");
    }
    const std::string_view op = c.op();
    if (op == ">")
        out.op = CaptureCondition::Op::Greater;
    else if (op == ">=")
        out.op = CaptureCondition::Op::GreaterEqual;
    else if (op == "<")
        out.op = CaptureCondition::Op::Less;
    else if (op == "<=")
        out.op = CaptureCondition::Op::LessEqual;
    else
        bad(text, "expected >, >=, < or <= after the metric");
    const auto threshold = c.number();
    if (!threshold) bad(text, "expected a number after the comparison");
    out.threshold = *threshold;
    if (c.done()) return out;
    if (c.word() != "for") bad(text, "expected 'for N steps' after the number");
    const auto steps = c.number();
    if (!steps || *steps < 1 || *steps > 1e6 || *steps != std::floor(*steps))
        bad(text, "expected a whole number of steps from 1 to 1000000 after 'for'");
    out.steps = static_cast<int>(*steps);
    const std::string_view unit = c.word();
    if (unit != "steps" && unit != "step") bad(text, "expected 'steps' after the count");
    if (!c.done()) bad(text, "unexpected text after 'steps'");
    return out;
}

}  // namespace osc::control
