// The one process-wide object: the agent created on first use by
// InitializeInjection (CUDA) or the NCCL profiler plugin, whichever comes
// first. Everything else hangs off it.
#pragma once

#include "agent/core/activity_source.h"

#include <memory>

namespace osc::agent {

class Agent;

// Provided by each library variant: CUPTI in liboverlapscope-agent.so, the
// generator in liboverlapscope-agent-fake.so.
std::unique_ptr<ActivitySource> makeActivitySource();

// Creates and boots the agent once. nullptr in a forked child or when it
// could not be created. Never throws.
Agent* ensureAgent();

// The agent once created (it may still be booting), without waiting for
// ensureAgent(): for the agent's own threads, which boot may start.
Agent* createdAgent();

}  // namespace osc::agent

// The CUDA driver calls this during cuInit when CUDA_INJECTION64_PATH names
// our library. Returns 1 (success) even when capture is disabled, so the
// application always runs on.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void);
