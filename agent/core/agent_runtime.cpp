#include "agent/core/agent_runtime.h"

#include "agent/core/agent.h"
#include "agent/core/crash_report.h"

#include <pthread.h>
#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

namespace osc::agent {
namespace {

std::mutex g_mutex;
// Deliberately leaked: static destructors run after atexit handlers, and the
// agent's threads must not see a destroyed object in between.
Agent* g_agent = nullptr;
std::atomic<Agent*> g_created{nullptr};  // g_agent for threads that must not take g_mutex
bool g_attempted = false;
pid_t g_ownerPid = 0;

void onExit() {
    Agent* agent = nullptr;
    {
        std::lock_guard lock(g_mutex);
        if (::getpid() != g_ownerPid) return;  // a forked child exiting: not ours to close
        agent = g_agent;
    }
    if (agent) agent->shutdown(CaptureEnd::ProcessExit);
}

}  // namespace

Agent* ensureAgent() {
    std::lock_guard lock(g_mutex);
    if (g_attempted) return ::getpid() == g_ownerPid ? g_agent : nullptr;
    g_attempted = true;
    g_ownerPid = ::getpid();
    if (const char* v = std::getenv("OVERLAPSCOPE_CRASH_REPORT"); !v || std::string_view(v) != "0")
        installCrashReport();
    try {
        std::string warnings;
        AgentSettings settings = settingsFromEnvironment(warnings);
        if (!warnings.empty()) std::fprintf(stderr, "overlapscope-agent: %s\n", warnings.c_str());
        auto agent = std::make_unique<Agent>(std::move(settings), currentProcessIdentity(), makeActivitySource());
        g_agent = agent.release();
        g_created.store(g_agent, std::memory_order_release);
        std::atexit(onExit);
        g_agent->boot();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "overlapscope-agent: %s: capture disabled\n", e.what());
    }
    return g_agent;
}

Agent* createdAgent() { return g_created.load(std::memory_order_acquire); }

}  // namespace osc::agent

extern "C" int InitializeInjection(void) {
    osc::agent::ensureAgent();
    return 1;
}
