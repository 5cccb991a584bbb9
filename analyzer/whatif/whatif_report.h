// `overlapscope whatif` output: a table per device (or the median over
// devices) and the JSON document {"format": "overlapscope-whatif", ...}.
#pragma once

#include "analyzer/whatif/whatif.h"

#include <string>
#include <vector>

namespace osc::whatif {

struct ReportOptions {
    std::vector<std::string> inputs;
    bool summary = false;  // the median over devices instead of one table each
};

std::string formatWhatIfText(const WhatIfResult& result, const ReportOptions& options);
std::string formatWhatIfJson(const WhatIfResult& result, const ReportOptions& options);

// "25", "2.5", "0.125": a bucket size without trailing zeros.
std::string formatMb(double mb);

}  // namespace osc::whatif
