// NCCL-id rendezvous over a file and over TCP loopback, with several ranks
// as threads exchanging a fake 128-byte id.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "reference_workloads/support/rendezvous.h"
#include "reference_workloads/support/workload_error.h"
#include "tests/support/temp_dir.h"

namespace oscwl {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

Blob fake_id(std::uint8_t salt) {
    Blob b(128);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i * 7 + salt);
    return b;
}

// Ranks 1..world-1 start first and wait; rank 0 publishes a moment later.
std::vector<Blob> exchange_with_threads(const RendezvousSpec& spec, int world, const Blob& id) {
    std::vector<Blob> got(static_cast<std::size_t>(world));
    std::vector<std::string> errors(static_cast<std::size_t>(world));
    std::vector<std::thread> threads;
    for (int r = world - 1; r >= 0; --r) {
        threads.emplace_back([&, r] {
            try {
                if (r == 0) std::this_thread::sleep_for(100ms);
                got[static_cast<std::size_t>(r)] = exchange_blob(spec, r, world, r == 0 ? id : Blob{}, 128, 10s);
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
            }
        });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < world; ++r) EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "rank " << r;
    return got;
}

TEST(RendezvousSpec, Parses) {
    RendezvousSpec f = parse_rendezvous("file:/shared/job/id");
    EXPECT_EQ(f.kind, RendezvousSpec::Kind::file);
    EXPECT_EQ(f.path, "/shared/job/id");
    RendezvousSpec t = parse_rendezvous("tcp://node-1.cluster:29501");
    EXPECT_EQ(t.kind, RendezvousSpec::Kind::tcp);
    EXPECT_EQ(t.host, "node-1.cluster");
    EXPECT_EQ(t.port, 29501);
    EXPECT_EQ(parse_rendezvous("tcp://[::1]:80").host, "::1");
    for (const char* bad :
         {"file:", "tcp://host", "tcp://:80", "tcp://h:0", "tcp://h:70000", "tcp://h:8x", "udp://h:1", ""})
        EXPECT_THROW(parse_rendezvous(bad), UsageError) << bad;
}

TEST(FileRendezvous, FourRanksGetRankZerosId) {
    const osc::testsupport::TempDir dir;
    fs::path p = dir / "four";
    RendezvousSpec spec = parse_rendezvous("file:" + p.string());
    const Blob id = fake_id(3);
    auto got = exchange_with_threads(spec, 4, id);
    for (const Blob& b : got) EXPECT_EQ(b, id);
    EXPECT_TRUE(fs::exists(p));
    finish_rendezvous(spec, 1);  // only rank 0 removes it
    EXPECT_TRUE(fs::exists(p));
    finish_rendezvous(spec, 0);
    EXPECT_FALSE(fs::exists(p));
    // No temporary files left beside it.
    for (const auto& entry : fs::directory_iterator(p.parent_path()))
        EXPECT_EQ(entry.path().string().find(p.string() + ".tmp"), std::string::npos);
}

TEST(FileRendezvous, StaleFileIsRefusedAndKept) {
    const osc::testsupport::TempDir dir;
    fs::path p = dir / "stale";
    { std::ofstream(p) << "old"; }
    RendezvousSpec spec = parse_rendezvous("file:" + p.string());
    try {
        exchange_blob(spec, 0, 2, fake_id(1), 128, 1s);
        FAIL() << "no error";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
    }
    std::ifstream in(p);
    std::string content;
    in >> content;
    EXPECT_EQ(content, "old");
}

TEST(FileRendezvous, TimeoutAndWrongSizeAreErrors) {
    const osc::testsupport::TempDir dir;
    fs::path p = dir / "missing";
    RendezvousSpec spec = parse_rendezvous("file:" + p.string());
    EXPECT_THROW(exchange_blob(spec, 1, 2, {}, 128, 100ms), WorkloadError);
    { std::ofstream(p) << "short"; }
    EXPECT_THROW(exchange_blob(spec, 1, 2, {}, 128, 100ms), WorkloadError);
}

TEST(TcpRendezvous, ServerOnEphemeralPortServesEveryClient) {
    TcpBlobServer server("127.0.0.1", 0);
    ASSERT_GT(server.port(), 0);
    const Blob id = fake_id(9);
    const int clients = 5;
    std::vector<Blob> got(clients);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c)
        threads.emplace_back(
            [&, c] { got[static_cast<std::size_t>(c)] = fetch_blob_tcp("127.0.0.1", server.port(), c + 1, 128, 10s); });
    server.serve(id, clients, 10s);
    for (auto& t : threads) t.join();
    for (const Blob& b : got) EXPECT_EQ(b, id);
}

int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

TEST(TcpRendezvous, FourRanksThroughUrlWithLateServer) {
    RendezvousSpec spec = parse_rendezvous("tcp://127.0.0.1:" + std::to_string(free_port()));
    const Blob id = fake_id(42);
    auto got = exchange_with_threads(spec, 4, id);
    for (const Blob& b : got) EXPECT_EQ(b, id);
}

TEST(TcpRendezvous, ClientTimesOutWithoutServer) {
    const int port = free_port();
    auto start = std::chrono::steady_clock::now();
    try {
        fetch_blob_tcp("127.0.0.1", port, 1, 128, 200ms);
        FAIL() << "no error";
    } catch (const WorkloadError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot reach rank 0"), std::string::npos);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(TcpRendezvous, ServerTimesOutWhenRanksAreMissing) {
    TcpBlobServer server("127.0.0.1", 0);
    std::thread one([&] { fetch_blob_tcp("127.0.0.1", server.port(), 1, 128, 5s); });
    try {
        server.serve(fake_id(0), 3, 300ms);
        FAIL() << "no error";
    } catch (const WorkloadError& e) {
        EXPECT_NE(std::string(e.what()).find("only 1 of 3"), std::string::npos) << e.what();
    }
    one.join();
}

TEST(TcpRendezvous, ClientRejectsWrongBlobSize) {
    TcpBlobServer server("127.0.0.1", 0);
    std::atomic<bool> threw{false};
    std::thread c([&] {
        try {
            fetch_blob_tcp("127.0.0.1", server.port(), 1, 128, 5s);
        } catch (const WorkloadError&) {
            threw = true;
        }
    });
    server.serve(Blob(16, 1), 1, 5s);
    c.join();
    EXPECT_TRUE(threw);
}

}  // namespace
}  // namespace oscwl
