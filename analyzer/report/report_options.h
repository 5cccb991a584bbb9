// What a report shows besides its fixed parts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace osc::report {

struct ReportOptions {
    std::vector<std::string> inputs;  // the paths the user gave, in order
    std::string toolVersion;          // "0.1.0"; empty leaves it out
    bool steps = false;               // per-step tables (text, markdown)
    bool collectives = false;         // per-collective tables (text, markdown)
    size_t topCollectives = 20;       // rows per collective table; 0 = all
    bool interference = false;        // per kernel signature tables (text, markdown)
    // What the report must say of its inputs themselves (a capture that
    // saved nothing): text and Markdown print them under the first line,
    // JSON lists them first in "warnings".
    std::vector<std::string> inputWarnings;
};

}  // namespace osc::report
