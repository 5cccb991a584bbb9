// How the live metrics leave the process: the Prometheus text, the metrics
// file (atomic, never through a planted link), the HTTP server (bounded,
// never stuck on a client), the publisher's cadence; and the pieces the
// figures go through: bus bandwidth factors, telemetry totals, the
// --capture-when condition.
#include "agent/live/bus_bandwidth.h"
#include "agent/live/capture_condition.h"
#include "agent/live/metrics_file.h"
#include "agent/live/metrics_http_server.h"
#include "agent/live/metrics_publisher.h"
#include "agent/live/prometheus_text.h"
#include "agent/live/telemetry.h"
#include "tests/agent/agent_test_util.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

namespace osc::agent::live {
namespace {

std::string readFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

DeviceStepMetrics step(uint32_t device, int64_t number, TimeNs window, TimeNs comm, TimeNs overlap) {
    DeviceStepMetrics m;
    m.device = device;
    m.number = number;
    m.metrics.window_ns = window;
    m.metrics.comm_ns = comm;
    m.metrics.overlap_ns = overlap;
    m.metrics.exposed_comm_ns = comm - overlap;
    m.metrics.compute_ns = window / 2;
    if (comm > 0) m.metrics.overlap_ratio = double(overlap) / double(comm);
    return m;
}

// Every line of the text exposition format, as Prometheus' parser reads it.
void expectValidExposition(const std::string& text) {
    static const std::regex sample(
        R"(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (NaN|[+-]Inf|[-+0-9.eE]+)$)");
    static const std::regex meta(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .*$)");
    std::istringstream in(text);
    std::string line;
    std::set<std::string> families;
    std::string current;
    while (std::getline(in, line)) {
        if (line.rfind("# TYPE ", 0) == 0) {
            const std::string name = line.substr(7, line.find(' ', 7) - 7);
            EXPECT_TRUE(families.insert(name).second) << name << " appears twice: its samples must be one group";
            current = name;
        }
        if (line[0] == '#')
            EXPECT_TRUE(std::regex_match(line, meta)) << line;
        else {
            EXPECT_TRUE(std::regex_match(line, sample)) << line;
            EXPECT_EQ(line.rfind(current, 0), 0u) << line << " outside its family " << current;
        }
    }
}

TEST(LiveMetrics, BusBandwidthFactorsAreNcclTests) {
    EXPECT_DOUBLE_EQ(busBandwidthFactor("AllReduce", 8), 2.0 * 7 / 8);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("AllGather", 8), 7.0 / 8);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("ReduceScatter", 4), 3.0 / 4);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("AllToAll", 2), 0.5);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("Broadcast", 8), 1.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("AllReduce", 1), 1.0);
    EXPECT_DOUBLE_EQ(busBandwidthFactor("AllReduce", -1), 1.0);  // nranks unknown
}

TEST(LiveMetrics, PrometheusTextEscapesAndSpellsSpecialValues) {
    EXPECT_EQ(escapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    EXPECT_EQ(formatSampleValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(formatSampleValue(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(formatSampleValue(0.1), "0.1");
    EXPECT_EQ(std::stod(formatSampleValue(1.0 / 3)), 1.0 / 3);  // reads back exactly
    PrometheusText t;
    t.family("x_total", "counter", "help with \\ and\nnewline");
    t.sample({{"host", "we\"ird"}}, 2);
    EXPECT_EQ(t.text(),
              "# HELP x_total help with \\\\ and\\nnewline\n# TYPE x_total counter\nx_total{host=\"we\\\"ird\"} 2\n");
}

TEST(LiveMetrics, TelemetryKeepsTheLastStepAndRunningTotalsPerGpu) {
    Telemetry t({"3", "node\"7", "job-1"});
    for (int i = 0; i < 1000; ++i) {
        t.record(step(0, 100 + i, 40'000'000, 20'000'000, 10'000'000));
        t.record(step(1, 100 + i, 40'000'000, 0, 0));  // no communication: its ratio is NaN
    }
    AgentHealth h;
    h.streaming = true;
    h.droppedRecords = 5;
    t.setHealth(h);
    const std::string text = t.prometheusText(1234.5);
    expectValidExposition(text);
    const auto has = [&](const std::string& line) {
        EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n" << text;
    };
    const std::string gpu0 = R"({rank="3",host="node\"7",gpu="0",job="job-1"})";
    const std::string gpu1 = R"({rank="3",host="node\"7",gpu="1",job="job-1"})";
    has("overlapscope_step" + gpu0 + " 1099");
    has("overlapscope_overlap_ratio" + gpu0 + " 0.5");
    has("overlapscope_overlap_ratio" + gpu1 + " NaN");
    has("overlapscope_exposed_comm_seconds" + gpu0 + " 0.01");
    has("overlapscope_exposed_comm_ratio" + gpu0 + " 0.25");
    has("overlapscope_steps_total" + gpu0 + " 1000");
    has("overlapscope_exposed_comm_seconds_total" + gpu0 + " 10");
    has("overlapscope_step_seconds_total" + gpu1 + " 40");
    has(R"(overlapscope_agent_dropped_records_total{rank="3",host="node\"7",job="job-1"} 5)");
    has(R"(overlapscope_agent_last_update_timestamp_seconds{rank="3",host="node\"7",job="job-1"} 1234.5)");
    // One GPU's process knows no waiting: no sample rather than a zero.
    EXPECT_EQ(text.find("overlapscope_comm_wait_seconds{"), std::string::npos);
    EXPECT_EQ(text.find("overlapscope_bus_bandwidth_bytes_per_second{"), std::string::npos);  // no sizes known
    // Constant size however many steps: the same text for 1,000 steps as for 10,000.
    for (int i = 0; i < 9000; ++i) t.record(step(0, 2000 + i, 40'000'000, 20'000'000, 10'000'000));
    EXPECT_LT(t.prometheusText(1234.5).size(), text.size() + 64);
}

TEST(LiveMetrics, CaptureConditionsParseOrSayWhatIsWrong) {
    const CaptureCondition c = parseCaptureCondition("exposed_comm_ratio>0.3 for 20 steps");
    EXPECT_EQ(c.metric, "exposed_comm_ratio");
    EXPECT_EQ(c.op, CaptureCondition::Op::Greater);
    EXPECT_DOUBLE_EQ(c.threshold, 0.3);
    EXPECT_EQ(c.steps, 20);
    EXPECT_EQ(parseCaptureCondition("  overlap_ratio <= 0.5 ").steps, 1);
    EXPECT_EQ(parseCaptureCondition("step_seconds >= 1e-1 for 1 step").op, CaptureCondition::Op::GreaterEqual);
    const std::pair<const char*, const char*> bad[] = {
        {"exposed_ratio>0.3", "unknown metric"},
        {"overlap_ratio=0.3", "expected >, >=, < or <="},
        {"overlap_ratio>", "expected a number"},
        {"overlap_ratio>0.3 for 0 steps", "whole number of steps"},
        {"overlap_ratio>0.3 for 2.5 steps", "whole number of steps"},
        {"overlap_ratio>0.3 for 20 minutes", "expected 'steps'"},
        {"overlap_ratio>0.3 when", "expected 'for N steps'"},
        {"overlap_ratio>0.3 for 20 steps please", "unexpected text"},
    };
    for (const auto& [text, why] : bad) {
        try {
            parseCaptureCondition(text);
            ADD_FAILURE() << text << " parsed";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        }
    }
}

TEST(LiveMetrics, ConditionFiresAfterItsStepsInARowAndNotAgainWithinTheCooldown) {
    ConditionWatch w(parseCaptureCondition("exposed_comm_ratio>0.3 for 3 steps"), /*cooldownNs=*/1000);
    const std::vector<DeviceStepMetrics> high = {step(0, 1, 100, 40, 0)};  // 0.4
    const std::vector<DeviceStepMetrics> low = {step(0, 1, 100, 20, 0)};   // 0.2
    // Any GPU of the process holding it is enough.
    const std::vector<DeviceStepMetrics> mixed = {step(0, 1, 100, 20, 0), step(1, 1, 100, 40, 0)};
    EXPECT_FALSE(w.observe(high, 0, false));
    EXPECT_FALSE(w.observe(high, 1, false));
    EXPECT_FALSE(w.observe(low, 2, false));  // broken: counts again
    EXPECT_FALSE(w.observe(high, 3, false));
    EXPECT_FALSE(w.observe(mixed, 4, false));
    EXPECT_TRUE(w.observe(high, 5, false));
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(w.observe(high, 6 + i, false));  // within the cooldown
    EXPECT_TRUE(w.observe(high, 1005, false));
    for (int i = 0; i < 5; ++i) EXPECT_FALSE(w.observe(high, 3000 + i, true));  // a capture runs
    EXPECT_TRUE(w.observe(high, 3005, false));
    // Undefined values never hold: no communication, no overlap ratio.
    ConditionWatch ratio(parseCaptureCondition("overlap_ratio<0.5"), 0);
    EXPECT_FALSE(ratio.observe({step(0, 1, 100, 0, 0)}, 0, false));
    EXPECT_TRUE(ratio.observe({step(0, 1, 100, 10, 1)}, 1, false));
}

TEST(LiveMetrics, MetricsFilePathsPerProcess) {
    test::TempDir dir;
    ProcessIdentity who;
    who.host = "n1";
    who.pid = 77;
    who.rank = 5;
    who.localRank = 1;
    EXPECT_EQ(metricsFilePath(dir.path(), who), dir / "overlapscope-n1-77-rank5.prom");
    EXPECT_EQ(metricsFilePath(dir / "new/", who), dir / "new/overlapscope-n1-77-rank5.prom");
    EXPECT_EQ(metricsFilePath(dir / "m-{host}-{rank}-{local_rank}-{pid}.prom", who), dir / "m-n1-5-1-77.prom");
    who.rank = -1;
    EXPECT_EQ(metricsFilePath(dir / "m{rank}.prom", who), dir / "m.prom");
}

TEST(LiveMetrics, TheMetricsFileIsReplacedWholeAndNeverWrittenThroughALink) {
    test::TempDir dir;
    const std::string path = dir / "m.prom";
    const std::string victim = dir / "victim";
    std::ofstream(victim) << "precious\n";
    ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
    writeMetricsFile(path, "a 1\n");
    EXPECT_EQ(readFile(victim), "precious\n");
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0644u);  // the collector may run as another user
    EXPECT_EQ(readFile(path), "a 1\n");
    // A reader at any moment sees one whole version, never a mix or nothing.
    const std::string a(100000, 'a'), b(200000, 'b');
    std::atomic<bool> done{false};
    std::atomic<int> torn{0}, reads{0};
    std::thread reader([&] {
        while (!done) {
            const std::string s = readFile(path);
            if (s != a && s != b && s != "a 1\n") ++torn;
            ++reads;
        }
    });
    for (int i = 0; i < 300; ++i) writeMetricsFile(path, i % 2 ? a : b);
    done = true;
    reader.join();
    EXPECT_EQ(torn.load(), 0);
    EXPECT_GT(reads.load(), 0);
    // Nothing else is left beside it: no temporaries.
    EXPECT_EQ(test::filesIn(dir.path(), "").size(), 2u);
    EXPECT_THROW(writeMetricsFile(dir / "missing/m.prom", "x"), std::runtime_error);
}

// Issue 41: a run as root with --metrics-file through a directory link that
// another user planted in a shared directory writes nothing there.
TEST(LiveMetrics, TheMetricsFileIsNeverWrittenThroughAPlantedDirectoryLink) {
    if (::geteuid() != 0) GTEST_SKIP() << "planting another user's link takes root (lchown)";
    test::TempDir dir;
    const std::string shared = dir / "shared", victim = dir / "victim";
    std::filesystem::create_directory(shared);
    std::filesystem::create_directory(victim);
    ::chmod(shared.c_str(), 01777);
    const std::string link = shared + "/textfile";
    std::filesystem::create_symlink(victim, link);
    ASSERT_EQ(::lchown(link.c_str(), 12345, 12345), 0);
    try {
        writeMetricsFile(link + "/m.prom", "a 1\n");
        FAIL() << "wrote through the planted link";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("symbolic link owned by another user"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(test::filesIn(victim, "").empty());
}

// A job killed before it removed its file left it; the next start on the
// same host removes the files of processes that are gone, and only those.
TEST(LiveMetrics, StaleMetricsFilesOfProcessesThatAreGoneAreRemoved) {
    test::TempDir dir;
    const pid_t dead = ::fork();
    if (dead == 0) ::_exit(0);
    int st = 0;
    ::waitpid(dead, &st, 0);
    const std::string d = dir.path();
    const std::string stale = d + "/overlapscope-n1-" + std::to_string(dead) + "-rank3.prom";
    const std::string alive = d + "/overlapscope-n1-" + std::to_string(::getppid()) + "-rank4.prom";
    const std::string otherHost = d + "/overlapscope-n2-" + std::to_string(dead) + ".prom";
    const std::string notOurs = d + "/node_exporter-" + std::to_string(dead) + ".prom";
    for (const auto& f : {stale, alive, otherHost, notOurs}) std::ofstream(f) << "x 1\n";
    ProcessIdentity who;
    who.host = "n1";
    who.pid = ::getpid();
    who.rank = 5;
    removeStaleMetricsFiles(d, who);
    EXPECT_FALSE(std::filesystem::exists(stale));
    for (const auto& f : {alive, otherHost, notOurs}) EXPECT_TRUE(std::filesystem::exists(f)) << f;
    // A file path (not a directory) is left alone: its next rewrite replaces it.
    std::ofstream(stale) << "x 1\n";
    removeStaleMetricsFiles(d + "/m-{rank}.prom", who);
    EXPECT_TRUE(std::filesystem::exists(stale));
}

// One HTTP exchange on 127.0.0.1:port: the whole answer, "" when none comes.
std::string http(int port, const std::string& request, int timeoutMs = 3000) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string out;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        [[maybe_unused]] ssize_t n = ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
        char buf[4096];
        pollfd p{fd, POLLIN, 0};
        while (::poll(&p, 1, timeoutMs) > 0) {
            const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
            if (r <= 0) break;
            out.append(buf, static_cast<size_t>(r));
        }
    }
    ::close(fd);
    return out;
}

TEST(LiveMetrics, HttpServesMetricsAndNothingElse) {
    EXPECT_EQ(answerHttpRequest("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", [] { return std::string("a 1\n"); }),
              "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 4\r\n"
              "Connection: close\r\n\r\na 1\n");
    const auto render = [] { return std::string("x 1\n"); };
    EXPECT_EQ(answerHttpRequest("HEAD /metrics HTTP/1.0\r\n\r\n", render).find("x 1"), std::string::npos);
    EXPECT_NE(answerHttpRequest("GET /metrics?x=1 HTTP/1.1\r\n\r\n", render).find("200 OK"), std::string::npos);
    EXPECT_NE(answerHttpRequest("GET / HTTP/1.1\r\n\r\n", render).find("404"), std::string::npos);
    EXPECT_NE(answerHttpRequest("POST /metrics HTTP/1.1\r\n\r\n", render).find("405"), std::string::npos);
    EXPECT_NE(answerHttpRequest("garbage\r\n\r\n", render).find("400"), std::string::npos);
}

TEST(LiveMetrics, IdleAndSlowClientsCannotLockOutAScrape) {
    MetricsHttpServer::Options o;
    o.port = 0;
    o.maxConnections = 4;
    o.deadlineMs = 500;
    auto server = std::make_unique<MetricsHttpServer>(o);
    std::string error;
    ASSERT_TRUE(server->start(error)) << error;
    const int port = server->port();
    int wake[2];
    ASSERT_EQ(::pipe(wake), 0);
    std::thread loop([&] {
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        const int64_t until = static_cast<int64_t>(ts.tv_sec + 8) * 1000000000LL + ts.tv_nsec;
        server->serveUntil(until, wake[0], [] { return std::string("ok 1\n"); });
    });
    // Ten clients connect and say nothing (more than the 4 slots).
    std::vector<int> idle;
    for (int i = 0; i < 10; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
        idle.push_back(fd);
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::string answer = http(port, "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n");
    EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
    EXPECT_NE(answer.find("\r\n\r\nok 1\n"), std::string::npos) << answer;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    // A request head without end, beyond the bound: refused, not buffered forever.
    const std::string huge = http(port, "GET /metrics HTTP/1.1\r\nX: " + std::string(20000, 'x'));
    EXPECT_NE(huge.find("431"), std::string::npos) << huge.substr(0, 100);
    // An idle client is closed at its deadline (read returns 0: closed).
    char c;
    pollfd p{idle.back(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 3000), 1);
    EXPECT_LE(::recv(idle.back(), &c, 1, 0), 0);
    for (int fd : idle) ::close(fd);
    [[maybe_unused]] ssize_t n = ::write(wake[1], "x", 1);
    loop.join();
    EXPECT_GE(server->requestsServed(), 1u);
    ::close(wake[0]);
    ::close(wake[1]);
}

TEST(LiveMetrics, ThePublisherRewritesTheFileEverySecondAndRemovesItAtStop) {
    test::TempDir dir;
    std::atomic<int> renders{0};
    MetricsPublisher::Options o;
    o.filePath = dir / "m.prom";
    MetricsPublisher p(o, [&] { return "renders " + std::to_string(++renders) + "\n"; });
    std::string error;
    p.start(error);
    EXPECT_EQ(error, "");
    std::set<std::string> seen;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(3500);
    while (std::chrono::steady_clock::now() < until) {
        seen.insert(readFile(o.filePath));
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    seen.erase("");
    // In 3.5 s: written at start and at least once a second after.
    EXPECT_GE(seen.size(), 4u);
    EXPECT_GE(p.fileWrites(), 4u);
    p.stop();
    EXPECT_FALSE(std::filesystem::exists(o.filePath));
}

TEST(LiveMetrics, APortInUseIsOneLineAndTheFileGoesOn) {
    MetricsHttpServer first({"127.0.0.1", 0});
    std::string error;
    ASSERT_TRUE(first.start(error));
    test::TempDir dir;
    MetricsPublisher::Options o;
    o.filePath = dir / "m.prom";
    o.http = MetricsHttpServer::Options{"127.0.0.1", first.port()};
    MetricsPublisher p(o, [] { return std::string("a 1\n"); });
    p.start(error);
    EXPECT_NE(error.find("Address already in use"), std::string::npos) << error;
    EXPECT_TRUE(test::waitUntil([&] { return std::filesystem::exists(o.filePath); }, 5));
    EXPECT_EQ(p.httpPort(), 0);
    MetricsHttpServer bad({"localhost", 0});
    EXPECT_FALSE(bad.start(error));
    EXPECT_NE(error.find("numeric"), std::string::npos) << error;
}

}  // namespace
}  // namespace osc::agent::live
