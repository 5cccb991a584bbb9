// The fixture of the live end-to-end tests (test_live_e2e.cpp,
// test_live_jobs.cpp): the real `overlapscope` runs fake_job with the fake
// agent library playing the paced training job (agent/fake/paced_training.h),
// whose ranks are at the same step at the same moment as a synchronous job's.
#pragma once

#include "analyzer/load/load_capture.h"
#include "control/control_client.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <cmath>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace osc::agent {

using test::Child;
using test::TempDir;

inline int freePort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

inline std::string scrape(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        const std::string req = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        [[maybe_unused]] ssize_t n = ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
        char buf[8192];
        pollfd p{fd, POLLIN, 0};
        while (::poll(&p, 1, 3000) > 0) {
            const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
            if (r <= 0) break;
            out.append(buf, static_cast<size_t>(r));
        }
    }
    ::close(fd);
    return out;
}

inline std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// The value of the first sample of `name` in Prometheus text; NaN when absent.
inline double sampleValue(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + "{", 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
    return std::nan("");
}

// The agent's step log (OVERLAPSCOPE_STEP_LOG): step number -> device -> line.
inline std::map<int64_t, std::map<uint32_t, nlohmann::json>> stepLog(const std::string& path) {
    std::map<int64_t, std::map<uint32_t, nlohmann::json>> out;
    std::istringstream in(readFile(path));
    std::string line;
    while (std::getline(in, line)) {
        const auto j = nlohmann::json::parse(line);
        out[j["step"].get<int64_t>()][j["device"].get<uint32_t>()] = j;
    }
    return out;
}

class LiveEndToEnd : public ::testing::Test {
protected:
    void SetUp() override {
        sockets = dir / "sock";
        out = dir / "out";
        ::setenv("OVERLAPSCOPE_SOCKET_DIR", sockets.c_str(), 1);
    }
    void TearDown() override { ::unsetenv("OVERLAPSCOPE_SOCKET_DIR"); }

    std::map<std::string, std::string> env(const std::map<std::string, std::string>& extra = {}) const {
        std::map<std::string, std::string> e = {{"OVERLAPSCOPE_SOCKET_DIR", sockets},
                                                {"OVERLAPSCOPE_COMMIT_MS", "100"},
                                                {"OVERLAPSCOPE_FAKE_STEP_MS", "25"},
                                                {"OVERLAPSCOPE_FAKE_NCCL_BYTES", "4194304"},
                                                {"CUDA_INJECTION64_PATH", ""},
                                                {"OVERLAPSCOPE_AGENT", ""},
                                                {"RANK", ""},
                                                {"LOCAL_RANK", ""},
                                                {"SLURM_JOB_ID", ""}};
        for (const auto& [k, v] : extra) e[k] = v;
        return e;
    }
    std::unique_ptr<Child> run(const std::vector<std::string>& runArgs, const std::vector<std::string>& job,
                               const std::map<std::string, std::string>& extra = {},
                               const std::string& log = "run.log") {
        std::vector<std::string> argv = {OSC_TEST_CLI, "run", "--agent", OSC_TEST_FAKE_AGENT, "-o", out};
        argv.insert(argv.end(), runArgs.begin(), runArgs.end());
        argv.push_back("--");
        argv.push_back(OSC_TEST_FAKE_JOB);
        argv.insert(argv.end(), job.begin(), job.end());
        return std::make_unique<Child>(argv, env(extra), dir / log);
    }
    std::pair<int, std::string> cli(const std::vector<std::string>& args, double timeoutS = 60) {
        std::vector<std::string> argv = {OSC_TEST_CLI};
        argv.insert(argv.end(), args.begin(), args.end());
        Child c(argv, env(), dir / ("cli" + std::to_string(++cliRuns) + ".log"));
        const int code = c.waitExitCode(timeoutS);
        return {code, c.output()};
    }
    std::vector<control::DiscoveredAgent> agents(size_t count) {
        std::vector<control::DiscoveredAgent> found;
        test::waitUntil([&] {
            found = control::discoverAgents(sockets);
            return found.size() >= count;
        });
        return found;
    }
    control::AgentStatus status(int64_t pid) {
        return control::sendRequest(control::socketPathFor(sockets, pid), control::ControlRequest{}).status;
    }

    TempDir dir;
    std::string sockets, out;
    int cliRuns = 0;
};

}  // namespace osc::agent
