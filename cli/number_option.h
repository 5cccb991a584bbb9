// A number option of the agent commands (`run`, `attach`), checked by us
// rather than by CLI11 so that a bad value is one line naming the option and
// its range, exit 2, like every bad input.
#pragma once

#include <string>

namespace osc::cli {

struct NumberOption {
    std::string text;  // as given; empty when not given
    double value = 0;
    bool given() const { return !text.empty(); }
};

// Parses `o.text` (when given) into `o.value`; throws std::invalid_argument
// "COMMAND: OPTION TEXT: expected UNIT from LO to HI" otherwise. `whole`
// refuses fractions.
void parseNumber(const char* command, const char* option, NumberOption& o, double lo, double hi, const char* unit,
                 bool whole = false);

// "%.15g": a number as the agent's environment variables take it.
std::string numberText(double v);

}  // namespace osc::cli
