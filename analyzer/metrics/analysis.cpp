// Placeholder until the metrics land.
#include "analyzer/metrics/analysis.h"

namespace osc {
Analysis analyze(const Capture&, const AnalysisSettings& settings) {
    Analysis a;
    a.settings = settings;
    return a;
}
}  // namespace osc
