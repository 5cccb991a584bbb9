// The CUPTI agent library's choice of activity source.
#include "agent/core/agent_runtime.h"
#include "agent/cupti/cupti_source.h"

namespace osc::agent {

std::unique_ptr<ActivitySource> makeActivitySource() { return std::make_unique<cupti::CuptiActivitySource>(); }

}  // namespace osc::agent
