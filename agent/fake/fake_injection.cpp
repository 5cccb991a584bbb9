// The fake agent library's choice of activity source.
#include "agent/core/agent.h"
#include "agent/core/agent_runtime.h"
#include "agent/fake/fake_source.h"

namespace osc::agent {

std::unique_ptr<ActivitySource> makeActivitySource() {
    auto source = std::make_unique<FakeActivitySource>(FakeActivitySource::optionsFromEnvironment());
    // The paced loop's all-reduces reach the agent as the NCCL plugin's would.
    source->setCollectiveSink([](PendingCollective&& c) {
        if (Agent* agent = createdAgent()) agent->submitCollective(std::move(c));
    });
    return source;
}

}  // namespace osc::agent
