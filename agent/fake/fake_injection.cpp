// The fake agent library's choice of activity source.
#include "agent/core/agent_runtime.h"
#include "agent/fake/fake_source.h"

namespace osc::agent {

std::unique_ptr<ActivitySource> makeActivitySource() {
    return std::make_unique<FakeActivitySource>(FakeActivitySource::optionsFromEnvironment());
}

}  // namespace osc::agent
