// The fake agent library's choice of activity source.
#include "agent/core/agent.h"
#include "agent/core/agent_runtime.h"
#include "agent/fake/fake_source.h"

#include <mutex>

namespace osc::agent {

std::unique_ptr<ActivitySource> makeActivitySource() {
    auto source = std::make_unique<FakeActivitySource>(FakeActivitySource::optionsFromEnvironment());
    FakeActivitySource* fake = source.get();  // owned by the agent, which outlives its sink
    // The paced loop's all-reduces reach the agent as the NCCL plugin's would,
    // and so do the ones still running when a capture closes (a stall).
    source->setCollectiveSink([fake](PendingCollective&& c) {
        Agent* agent = createdAgent();
        if (!agent) return;
        static std::once_flag registered;
        std::call_once(registered, [&] { agent->setNcclPlugin([fake] { return fake->openCollectives(); }, {}); });
        agent->submitCollective(std::move(c));
    });
    return source;
}

}  // namespace osc::agent
