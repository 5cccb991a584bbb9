// PyTorch profiler traces of one rank written event by event, with the
// arguments PyTorch puts on a collective's record_param_comms operator and
// its NCCL kernel ("Process Group Name", "Process Group Ranks", "Seq", ...),
// for tests that need traces whose every number they know.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

namespace osc::test {

struct Coll {
    std::string group, members;  // "Process Group Name", "Process Group Ranks"
    int groupSize = 4;
    uint64_t seq = 0;
    std::string name = "allreduce";  // PyTorch's "Collective name"
    int64_t nelems = 1024;           // of Float: 4 bytes each
    bool kernelRan = true;           // false: launched, never finished (no kernel record)
};

inline Coll call(Coll c, uint64_t seq, const std::string& name = "allreduce", int64_t nelems = 1024,
                 bool kernelRan = true) {
    c.seq = seq;
    c.name = name;
    c.nelems = nelems;
    c.kernelRan = kernelRan;
    return c;
}

// Where PyTorch's arguments go: its operator, its kernel, or both.
enum class ArgsOn { Operator, Kernel, Both };

class RankTrace {
public:
    using json = nlohmann::json;
    static constexpr int64_t kMs = 1'000'000;

    RankTrace(int rank, int worldSize, ArgsOn on, bool withSeq)
        : rank_(rank), world_(worldSize), on_(on), withSeq_(withSeq) {}

    // A collective 1 ms after the previous one, its kernel 50 µs after that for 200 µs.
    void add(const Coll& c) {
        t_ += kMs;
        add(c, t_, t_ + 50'000, 200'000);
    }

    // record_param_comms [at, at + 400), its launch [at + 100, at + 200), then
    // (when it ran) its kernel [kernelStart, kernelStart + kernelDur) on GPU `rank`.
    void add(const Coll& c, int64_t at, int64_t kernelStart, int64_t kernelDur) {
        const int64_t corr = ++corr_;
        json args = {{"Collective name", c.name},
                     {"In msg nelems", c.nelems},
                     {"Out msg nelems", c.name == "allgather" ? c.nelems * c.groupSize : c.nelems},
                     {"dtype", "Float"},
                     {"Group size", c.groupSize},
                     {"Process Group Name", c.group},
                     {"Process Group Ranks", c.members}};
        if (withSeq_) args["Seq"] = c.seq;
        if (on_ != ArgsOn::Kernel) events_.push_back(event("cpu_op", "record_param_comms", at, 400, 1, args));
        events_.push_back(event("cuda_runtime", "cudaLaunchKernel", at + 100, 100, 1, {{"correlation", corr}}));
        if (!c.kernelRan) return;
        json k = on_ == ArgsOn::Operator ? json::object() : args;
        k["device"] = rank_;
        k["stream"] = 20;
        k["correlation"] = corr;
        const std::string kernel =
            c.name == "allgather" ? "ncclDevKernel_AllGather_RING_LL" : "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
        events_.push_back(event("kernel", kernel, kernelStart, kernelDur, 20, k));
    }

    // A second record_param_comms of call `c` on the same thread, inside
    // [at, at + dur) (as an `nccl:*` range inside the operator would be): the
    // same call, which must not be counted twice.
    void addNestedOperator(const Coll& c, int64_t at, int64_t dur) {
        json args = {{"Collective name", c.name}, {"In msg nelems", c.nelems},     {"dtype", "Float"},
                     {"Group size", c.groupSize}, {"Process Group Name", c.group}, {"Process Group Ranks", c.members}};
        if (withSeq_) args["Seq"] = c.seq;
        events_.push_back(event("cpu_op", "record_param_comms", at, dur, 1, args));
    }

    // A send ("send", the peer's global rank in "Dst Rank") or receive
    // ("recv", in "Src Rank") of `c.nelems` floats in group `c`:
    // record_param_comms [at, at + dur) on thread `tid`, launching nothing
    // itself (addLaunch gives its kernel, inside it or after it).
    void addPointToPoint(const Coll& c, int peer, int64_t at, int64_t dur = 100, int64_t tid = 1) {
        json args = {{"Collective name", c.name},       {"In msg nelems", c.nelems},
                     {"Out msg nelems", c.nelems},      {"dtype", "Float"},
                     {"Group size", c.groupSize},       {"Process Group Name", c.group},
                     {"Process Group Ranks", c.members}};
        args[c.name == "send" ? "Dst Rank" : "Src Rank"] = peer;
        events_.push_back(event("cpu_op", "record_param_comms", at, dur, tid, args));
    }

    // A launch [at, at + 10) on thread `tid` and its kernel `kernel` [start,
    // start + dur) on GPU `rank`, carrying `args` (PyTorch's, or none).
    void addLaunch(const std::string& kernel, int64_t at, int64_t start, int64_t dur, int64_t tid = 1,
                   json args = json::object()) {
        const int64_t corr = ++corr_;
        events_.push_back(event("cuda_driver", "cuLaunchKernelEx", at, 10, tid, {{"correlation", corr}}));
        args["device"] = rank_;
        args["stream"] = 20;
        args["correlation"] = corr;
        events_.push_back(event("kernel", kernel, start, dur, 20, std::move(args)));
    }

    // The host still busy at `atNs` (the traces all end then).
    void aliveUntil(int64_t atNs) { events_.push_back(event("cpu_op", "aten::empty", atNs, 1000, 1, {})); }

    std::string write(const std::string& dir) const {
        const json trace = {{"schemaVersion", 1},
                            {"distributedInfo", {{"rank", rank_}, {"world_size", world_}, {"backend", "nccl"}}},
                            {"traceEvents", events_}};
        const std::string path = dir + "/rank" + std::to_string(rank_) + ".pt.trace.json";
        std::ofstream(path) << trace.dump();
        return path;
    }

private:
    json event(const std::string& cat, const std::string& name, int64_t ns, int64_t dur, int64_t tid, json args) const {
        // Kineto writes µs with three decimals: exact for whole nanoseconds.
        return {{"ph", "X"},  {"cat", cat},        {"name", name},        {"pid", rank_},
                {"tid", tid}, {"ts", ns / 1000.0}, {"dur", dur / 1000.0}, {"args", std::move(args)}};
    }

    int rank_, world_;
    ArgsOn on_;
    bool withSeq_;
    int64_t t_ = 1'000 * kMs;  // 1 s: every trace on the same clock
    int64_t corr_ = 0;
    json events_ = json::array();
};

}  // namespace osc::test
