// Agent writer throughput: the fake activity source produces kernel records
// as fast as it can (waiting for buffers rather than dropping), the writer
// thread decodes them and writes them into a capture file. Prints kernel
// records per second, sustained from capture start until the file is closed,
// and bytes on disk per kernel record.
//
//   bench_agent_writer [RECORDS] [OUTPUT_DIR]     (default 4000000, /tmp)
//
// Target (issue 3): >= 2,000,000 kernel records/s on a 2-core machine.
// A second figure runs the same pipeline (pool, queue, decoding on a writer
// thread) into a sink that discards rows, separating the agent's own cost
// from SQLite's (bench_capture_write measures CaptureWriter alone).
#include "agent/core/agent_settings.h"
#include "agent/core/buffer_pool.h"
#include "agent/core/capture_session.h"
#include "agent/fake/fake_source.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

using namespace osc::agent;

class DiscardRows final : public RowSink {
public:
    void addKernel(const osc::KernelRow&) override { ++rows; }
    void addCopy(const osc::CopyRow&) override { ++rows; }
    void addMemset(const osc::MemsetRow&) override { ++rows; }
    void addSync(const osc::SyncRow&) override { ++rows; }
    void addApiCall(const osc::ApiCallRow&) override { ++rows; }
    void addRange(const osc::RangeRow&) override { ++rows; }
    void addCollective(const osc::CollectiveRow&) override { ++rows; }
    uint64_t rows = 0;
};

class PoolSink final : public BufferSink {
public:
    explicit PoolSink(BufferPool& pool) : pool_(pool) {}
    uint8_t* requestBuffer(size_t* size) override {
        *size = pool_.bufferBytes();
        return pool_.acquire();
    }
    void bufferCompleted(uint8_t* b, size_t valid) override { pool_.pushCompleted(b, valid); }

private:
    BufferPool& pool_;
};

// Records/s through pool + queue + decode, without SQLite.
double pipelineWithoutSqlite(uint64_t records) {
    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;
    opt.waitForBuffers = true;
    opt.maxRecords = records;
    opt.kernelsOnly = true;
    FakeActivitySource source(opt);
    BufferPool pool(64u << 20, activityBufferBytes(64u << 20));
    PoolSink sink(pool);
    DiscardRows rows;
    DecodeContext ctx;
    const auto t0 = std::chrono::steady_clock::now();
    std::string error;
    source.start(sink, error);
    for (;;) {
        CompletedBuffer b;
        const bool done = source.finished();
        if (pool.popCompleted(b, std::chrono::steady_clock::now() + std::chrono::milliseconds(5))) {
            source.decode(b.data, b.validBytes, ctx, rows);
            pool.release(b.data);
        } else if (done) {
            source.stop();
            while (pool.tryPopCompleted(b)) {
                source.decode(b.data, b.validBytes, ctx, rows);
                pool.release(b.data);
            }
            break;
        }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(rows.rows) / s;
}

}  // namespace

int main(int argc, char** argv) {
    const uint64_t records = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000000ull;
    const std::string dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path().string();
    const std::string path = dir + "/bench-agent-writer-" + std::to_string(::getpid()) + ".sqlite";
    constexpr double kTarget = 2e6;

    FakeSourceOptions opt;
    opt.recordsPerSecond = 0;
    opt.waitForBuffers = true;
    opt.maxRecords = records;
    opt.kernelsOnly = true;
    FakeActivitySource source(opt);
    BufferPool pool(64u << 20, activityBufferBytes(64u << 20));
    SessionConfig cfg;
    cfg.path = path;
    cfg.who = currentProcessIdentity();

    const auto t0 = std::chrono::steady_clock::now();
    uint64_t written = 0;
    {
        CaptureSession session(cfg, source, pool);
        std::string error;
        if (!session.start(error)) {
            std::fprintf(stderr, "bench_agent_writer: %s\n", error.c_str());
            return 2;
        }
        while (!source.finished()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            if (::isatty(2))
                std::fprintf(stderr, "\r%llu / %llu records produced", 
                             static_cast<unsigned long long>(source.producedRecords()),
                             static_cast<unsigned long long>(records));
        }
        if (::isatty(2)) std::fprintf(stderr, "\n");
        session.stop(osc::CaptureEnd::Stopped);
        written = source.producedRecords() - session.droppedRecords();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    std::filesystem::remove(path, ec);

    const double rate = static_cast<double>(written) / seconds;
    std::printf("agent writer: %llu kernel records in %.2f s = %.0f records/s\n",
                static_cast<unsigned long long>(written), seconds, rate);
    std::printf("agent writer: %.1f bytes on disk per kernel record (%llu bytes)\n",
                static_cast<double>(bytes) / static_cast<double>(written ? written : 1),
                static_cast<unsigned long long>(bytes));
    std::printf("agent pipeline without SQLite (pool, queue, decode): %.0f records/s\n",
                pipelineWithoutSqlite(records));
    std::printf("agent writer: target >= %.0f records/s: %s\n", kTarget, rate >= kTarget ? "PASS" : "FAIL");
    return rate >= kTarget ? 0 : 1;
}
