// ddp_overlap: data-parallel training of an L-layer linear MLP.
// Forward A[l+1] = W[l] A[l]; loss 0.5 |A[L]|^2 / (hidden x batch), the
// mean squared output. Backward is linear in dA[L], so it runs on the
// unscaled dA[L] = A[L] (no extra kernel): dW[l] = dA[l+1] A[l]^T,
// dA[l] = W[l]^T dA[l+1]; the 1/(hidden x batch) and the 1/world of the
// gradient average are folded into the SGD step size.
// Gradients live in one flat buffer in reverse layer order, so every DDP
// bucket is a contiguous slice all-reduced in place (like PyTorch's
// gradient_as_bucket_view). The modes differ only in when buckets go out:
//   sequential: one bucket after the whole backward (nothing to overlap);
//   per-param:  each layer's gradient as soon as it is computed;
//   bucketed:   buckets of --bucket-mb, each when its last gradient is ready.
// The all-reduces run on a communication stream ordered by CUDA events, so
// they overlap the remaining backward GEMMs.
//   zero1: ZeRO stage 1 (support/zero1_plan.h): each bucket is
//   reduce-scattered instead of all-reduced, SGD updates only this rank's
//   shard, and the next step starts by all-gathering the updated weights
//   bucket by bucket on the communication stream, the forward of layer l
//   waiting only for its own bucket's gather.
// --cuda-graph: the first step runs eagerly (NCCL and cuBLAS set themselves
// up on first use), the second is captured into a CUDA graph, and every step
// from then on is one cudaGraphLaunch of it: the question is whether a
// profiler still sees every kernel of a replayed graph.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "reference_workloads/runtime/collectives.h"
#include "reference_workloads/runtime/device_memory.h"
#include "reference_workloads/runtime/gemm.h"
#include "reference_workloads/runtime/kernels.h"
#include "reference_workloads/runtime/nvtx_range.h"
#include "reference_workloads/runtime/rank_launcher.h"
#include "reference_workloads/runtime/step_loop.h"
#include "reference_workloads/support/bucket_plan.h"
#include "reference_workloads/support/result_check.h"
#include "reference_workloads/support/zero1_plan.h"

namespace oscwl {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::size_t bucket_cap_bytes(const DdpOptions& o) {
    switch (o.mode) {
        case DdpMode::sequential:
            return std::numeric_limits<std::size_t>::max();
        case DdpMode::per_param:
            return 0;
        case DdpMode::zero1:
        default:
            return static_cast<std::size_t>(o.bucket_mb * kMiB);
    }
}

class DdpWorkload {
public:
    DdpWorkload(const DdpOptions& o, RankContext& ctx)
        : o_(o),
          ctx_(ctx),
          elt_(dtype_bytes(o.common.dtype)),
          layer_elems_(static_cast<std::size_t>(o.hidden) * o.hidden),
          act_elems_(static_cast<std::size_t>(o.hidden) * o.batch),
          gemm_(o.common.dtype, compute_.get()) {
        std::vector<std::size_t> param_bytes(static_cast<std::size_t>(o.layers), layer_elems_ * elt_);
        offsets_ = reverse_layout_offsets(param_bytes);
        buckets_ = plan_buckets(param_bytes, bucket_cap_bytes(o));
        bucket_ready_after_.assign(static_cast<std::size_t>(o.layers), -1);
        for (std::size_t b = 0; b < buckets_.size(); ++b) {
            bucket_ready_after_[static_cast<std::size_t>(buckets_[b].ready_after())] = static_cast<int>(b);
            bucket_ready_.emplace_back();
            weights_gathered_.emplace_back();
        }
        if (o.mode == DdpMode::zero1) zero1_ = plan_zero1(buckets_, o.layers, ctx.world);
        const std::size_t total = layer_elems_ * static_cast<std::size_t>(o.layers);
        weights_ = DeviceBuffer(total * elt_);
        grads_ = DeviceBuffer(total * elt_);
        for (int l = 0; l <= o.layers; ++l) acts_.emplace_back(act_elems_ * elt_);
        for (auto& d : dacts_) d = DeviceBuffer(act_elems_ * elt_);
        // Same weights on every rank (replicas), different data per rank.
        init_weights();
        launch_fill_uniform(acts_[0].get(), act_elems_, o.common.dtype, o.common.seed,
                            1000 + static_cast<std::uint64_t>(ctx.rank), 0, 1.0f, compute_.get());
        compute_.sync();
    }

    void init_weights() {
        const float wscale = std::sqrt(3.0f / static_cast<float>(o_.hidden));  // keeps |A| steady
        launch_fill_uniform(weights_.get(), layer_elems_ * static_cast<std::size_t>(o_.layers), o_.common.dtype,
                            o_.common.seed, 1, 0, wscale, compute_.get());
    }

    const Stream& compute() const { return compute_; }
    const std::vector<Bucket>& buckets() const { return buckets_; }
    // Kernel, memcpy and other nodes in the captured graph; 0 before capture.
    std::size_t graph_nodes() const { return graph_nodes_; }

    void step() {
        ++steps_;
        if (!o_.cuda_graph || steps_ == 1) {
            issue_step(true);
            return;
        }
        if (!graph_) capture();
        OSC_CUDA(cudaGraphLaunch(graph_.get(), compute_.get()));
    }

    void capture() {
        workspace_ = DeviceBuffer(32u << 20);  // what cuBLAS recommends on Hopper
        gemm_.set_workspace(workspace_.get(), workspace_.bytes());
        // Thread-local: the agent's and NCCL's own threads may go on calling CUDA.
        OSC_CUDA(cudaStreamBeginCapture(compute_.get(), cudaStreamCaptureModeThreadLocal));
        issue_step(false);  // NVTX ranges are host calls: a graph replays none
        cudaGraph_t graph = nullptr;
        OSC_CUDA(cudaStreamEndCapture(compute_.get(), &graph));
        std::unique_ptr<CUgraph_st, decltype(&cudaGraphDestroy)> owned(graph, cudaGraphDestroy);
        OSC_CUDA(cudaGraphGetNodes(graph, nullptr, &graph_nodes_));
        cudaGraphExec_t exec = nullptr;
        OSC_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        graph_ = {exec, cudaGraphExecDestroy};
    }

    void issue_step(bool ranges) {
        const int h = o_.hidden, b = o_.batch;
        auto range = [&](std::optional<NvtxRange>& r, const char* name) {
            r.reset();
            if (ranges) r.emplace(name);
        };
        std::optional<NvtxRange> phase;
        const bool zero1 = o_.mode == DdpMode::zero1;
        {
            range(phase, "forward");
            if (zero1) gather_weights();
            for (int l = 0; l < o_.layers; ++l) {
                if (zero1)
                    weights_gathered_[static_cast<std::size_t>(zero1_.bucket_of_layer[static_cast<std::size_t>(l)])]
                        .wait_on(compute_.get());
                gemm_.run(false, false, h, b, h, weight(l), h, acts_[l].get(), h, acts_[l + 1].get(), h);
            }
        }
        const bool communicate = o_.mode != DdpMode::none;
        {
            range(phase, "backward");
            const void* dnext = acts_[static_cast<std::size_t>(o_.layers)].get();
            for (int l = o_.layers - 1; l >= 0; --l) {
                gemm_.run(false, true, h, h, b, dnext, h, acts_[l].get(), h, grad(l), h);
                const int bucket = bucket_ready_after_[static_cast<std::size_t>(l)];
                if (communicate && bucket >= 0) launch_all_reduce(static_cast<std::size_t>(bucket));
                if (l > 0) {
                    void* dcur = dacts_[static_cast<std::size_t>(l % 2)].get();
                    gemm_.run(true, false, h, b, h, weight(l), h, dnext, h, dcur, h);
                    dnext = dcur;
                }
            }
            if (communicate) {
                comm_done_.record(comm_.get());
                comm_done_.wait_on(compute_.get());
            }
        }
        range(phase, "optimizer");
        if (!zero1) {
            launch_sgd(weights_.get(), grads_.get(), layer_elems_ * static_cast<std::size_t>(o_.layers),
                       o_.common.dtype, sgd_rate(), compute_.get());
            return;
        }
        for (std::size_t bk = 0; bk < buckets_.size(); ++bk) {
            const std::size_t at = zero1_.shard_offset(static_cast<int>(bk), ctx_.rank);
            launch_sgd(weights_.at(at), grads_.at(at), zero1_.shard_bytes[bk] / elt_, o_.common.dtype, sgd_rate(),
                       compute_.get());
        }
    }

    // zero1: every rank's updated shards into every rank's full weights, in
    // the order the forward needs them. In place: the shard sits at its
    // place in the bucket.
    void gather_weights() {
        step_start_.record(compute_.get());  // after the last step's SGD
        step_start_.wait_on(comm_.get());
        for (int bk : zero1_.gather_order) {
            const auto b = static_cast<std::size_t>(bk);
            ctx_.coll->all_gather(weights_.at(zero1_.shard_offset(bk, ctx_.rank)), weights_.at(buckets_[b].offset),
                                  zero1_.shard_bytes[b] / elt_, o_.common.dtype, comm_.get());
            weights_gathered_[b].record(comm_.get());
        }
    }

    // Mean-squared loss and the gradient average folded into the step size.
    float sgd_rate() const {
        return static_cast<float>(o_.lr / (static_cast<double>(ctx_.world) * o_.batch * o_.hidden));
    }

    // Gradients (after the last all-reduce) and weights must be identical on
    // every rank; anything else means a bucket was missed or read too early.
    std::string check() {
        if (o_.mode == DdpMode::zero1) return check_zero1();
        OSC_CUDA(cudaDeviceSynchronize());
        std::vector<std::uint64_t> prints;
        std::vector<std::string> names;
        std::vector<std::uint8_t> host(layer_elems_ * elt_);
        for (int which = 0; which < 2; ++which) {
            for (int l = 0; l < o_.layers; ++l) {
                const void* src = which == 0 ? grad(l) : weight(l);
                OSC_CUDA(cudaMemcpy(host.data(), src, host.size(), cudaMemcpyDeviceToHost));
                const std::string name =
                    std::string(which == 0 ? "gradient" : "weights") + " of layer " + std::to_string(l);
                for (float v : to_float(host.data(), layer_elems_, o_.common.dtype == DType::bf16))
                    if (!std::isfinite(v)) throw WorkloadError("check FAILED: " + name + " is not finite");
                prints.push_back(fingerprint(host.data(), host.size()));
                names.push_back(name);
            }
        }
        if (o_.mode == DdpMode::none) return "passed (mode none: replicas diverge by design; finiteness only)";
        auto all = ctx_.coll->gather_u64(prints, compute_.get());
        if (auto bad = check_identical_across_ranks(all, names)) throw WorkloadError("check FAILED: " + *bad);
        return ctx_.world > 1
                   ? "passed (gradients and weights identical on all " + std::to_string(ctx_.world) + " ranks)"
                   : "passed (1 rank: finiteness only)";
    }

    // zero1: after gathering the last step's shards, the weights must be
    // identical on every rank and equal (within rounding: other summation
    // orders) to plain data-parallel training of as many steps from the same
    // start, done here with one all-reduce of all gradients per step.
    std::string check_zero1() {
        gather_weights();
        comm_done_.record(comm_.get());
        comm_done_.wait_on(compute_.get());
        OSC_CUDA(cudaDeviceSynchronize());
        const std::size_t total = layer_elems_ * static_cast<std::size_t>(o_.layers);
        const bool bf16 = o_.common.dtype == DType::bf16;
        std::vector<std::uint8_t> host(total * elt_);
        OSC_CUDA(cudaMemcpy(host.data(), weights_.get(), host.size(), cudaMemcpyDeviceToHost));
        const std::vector<float> zero1 = to_float(host.data(), total, bf16);
        for (float v : zero1)
            if (!std::isfinite(v)) throw WorkloadError("check FAILED: zero1 weights are not finite");
        auto all = ctx_.coll->gather_u64({fingerprint(host.data(), host.size())}, compute_.get());
        if (auto bad = check_identical_across_ranks(all, {"weights after the last all-gather"}))
            throw WorkloadError("check FAILED: " + *bad);

        init_weights();
        const int h = o_.hidden, b = o_.batch;
        for (int step = 0; step < steps_; ++step) {
            for (int l = 0; l < o_.layers; ++l)
                gemm_.run(false, false, h, b, h, weight(l), h, acts_[l].get(), h, acts_[l + 1].get(), h);
            const void* dnext = acts_[static_cast<std::size_t>(o_.layers)].get();
            for (int l = o_.layers - 1; l >= 0; --l) {
                gemm_.run(false, true, h, h, b, dnext, h, acts_[l].get(), h, grad(l), h);
                if (l > 0) {
                    void* dcur = dacts_[static_cast<std::size_t>(l % 2)].get();
                    gemm_.run(true, false, h, b, h, weight(l), h, dnext, h, dcur, h);
                    dnext = dcur;
                }
            }
            ctx_.coll->all_reduce_sum(grads_.get(), total, o_.common.dtype, compute_.get());
            launch_sgd(weights_.get(), grads_.get(), total, o_.common.dtype, sgd_rate(), compute_.get());
        }
        OSC_CUDA(cudaStreamSynchronize(compute_.get()));
        OSC_CUDA(cudaMemcpy(host.data(), weights_.get(), host.size(), cudaMemcpyDeviceToHost));
        const std::vector<float> ddp = to_float(host.data(), total, bf16);
        CloseResult cmp = compare_close_to_largest(ddp, zero1, bf16 ? 2e-2 : 1e-4);
        if (!cmp.ok)
            throw WorkloadError("check FAILED: zero1 weights differ from plain data-parallel training of " +
                                std::to_string(steps_) + " steps: " + cmp.message());
        return "passed (zero1 weights identical on all " + std::to_string(ctx_.world) +
               " rank(s) and equal to plain data-parallel training of " + std::to_string(steps_) +
               " steps within tolerance)";
    }

private:
    void* weight(int l) const { return weights_.at(offsets_[static_cast<std::size_t>(l)]); }
    void* grad(int l) const { return grads_.at(offsets_[static_cast<std::size_t>(l)]); }

    void launch_all_reduce(std::size_t b) {
        bucket_ready_[b].record(compute_.get());
        bucket_ready_[b].wait_on(comm_.get());
        if (o_.mode == DdpMode::zero1)  // in place: this rank's shard receives the sum
            ctx_.coll->reduce_scatter_sum(grads_.at(buckets_[b].offset),
                                          grads_.at(zero1_.shard_offset(static_cast<int>(b), ctx_.rank)),
                                          zero1_.shard_bytes[b] / elt_, o_.common.dtype, comm_.get());
        else
            ctx_.coll->all_reduce_sum(grads_.at(buckets_[b].offset), buckets_[b].bytes / elt_, o_.common.dtype,
                                      comm_.get());
    }

    const DdpOptions& o_;
    RankContext& ctx_;
    std::size_t elt_, layer_elems_, act_elems_;
    Stream compute_, comm_;
    Gemm gemm_;
    std::vector<std::size_t> offsets_;
    std::vector<Bucket> buckets_;
    std::vector<int> bucket_ready_after_;  // per layer: bucket to launch after its gradient, or -1
    std::vector<Event> bucket_ready_;
    Zero1Plan zero1_;
    std::vector<Event> weights_gathered_;  // zero1: per bucket, this step's all-gather
    Event comm_done_, step_start_;
    DeviceBuffer weights_, grads_;
    std::vector<DeviceBuffer> acts_;
    DeviceBuffer dacts_[2];
    DeviceBuffer workspace_;
    int steps_ = 0;
    std::unique_ptr<CUgraphExec_st, decltype(&cudaGraphExecDestroy)> graph_{nullptr, cudaGraphExecDestroy};
    std::size_t graph_nodes_ = 0;
};

std::string describe_buckets(const DdpOptions& o, const std::vector<Bucket>& buckets) {
    std::ostringstream out;
    out.precision(1);
    out << std::fixed;
    if (o.mode == DdpMode::none) return "no gradient communication";
    if (o.mode == DdpMode::zero1)
        out << buckets.size() << " reduce-scatter(s) per step, SGD on this rank's shard, " << buckets.size()
            << " all-gather(s) under the next step's forward:";
    else
        out << buckets.size() << " all-reduce(s) per step:";
    for (const Bucket& b : buckets) {
        out << " [layers";
        for (int p : b.params) out << ' ' << p;
        out << ": " << static_cast<double>(b.bytes) / kMiB << " MiB]";
    }
    return out.str();
}

void run_ddp(const DdpOptions& o, RankContext& ctx) {
    validate_for_world(o, ctx.world);
    DdpWorkload w(o, ctx);
    if (ctx.prints()) {
        cudaDeviceProp prop{};
        OSC_CUDA(cudaGetDeviceProperties(&prop, ctx.device));
        const double param_mib = static_cast<double>(o.layers) * o.hidden * o.hidden *
                                 static_cast<double>(dtype_bytes(o.common.dtype)) / kMiB;
        std::printf("ddp_overlap: launch: %s\n", ctx.launch.c_str());
        std::printf("ddp_overlap: comm: %s; GPU %d: %s\n", ctx.coll->describe().c_str(), ctx.device, prop.name);
        std::printf("ddp_overlap: model: %d layers of %dx%d %s (%.1f MiB of parameters), batch %d per rank\n", o.layers,
                    o.hidden, o.hidden, to_string(o.common.dtype), param_mib, o.batch);
        std::printf("ddp_overlap: mode %s: %s\n", to_string(o.mode), describe_buckets(o, w.buckets()).c_str());
    }
    auto times = run_steps(
        o.common, w.compute().get(), [&](int) { w.step(); }, o.common.verbose && ctx.prints());
    const std::string check = o.common.check ? w.check() : "skipped";
    if (!ctx.prints()) return;
    const double med = median(times);
    if (o.cuda_graph)
        std::printf("ddp_overlap: cuda graph: step 2 captured (%zu nodes), every later step one cudaGraphLaunch\n",
                    w.graph_nodes());
    std::printf("ddp_overlap: median step %.3f ms over %d steps\n", med, o.common.steps);
    std::printf("ddp_overlap: check %s\n", check.c_str());
    std::printf(
        "SUMMARY ddp_overlap mode=%s bucket_mb=%g buckets=%zu comm=%s world=%d dtype=%s hidden=%d "
        "batch=%d layers=%d cuda_graph=%d graph_nodes=%zu median_step_ms=%.3f check=%s\n",
        to_string(o.mode), o.mode == DdpMode::bucketed || o.mode == DdpMode::zero1 ? o.bucket_mb : 0.0,
        o.mode == DdpMode::none ? 0 : w.buckets().size(), to_string(o.common.comm), ctx.world,
        to_string(o.common.dtype), o.hidden, o.batch, o.layers, o.cuda_graph ? 1 : 0, w.graph_nodes(), med,
        o.common.check ? "passed" : "skipped");
    std::fflush(stdout);
}

}  // namespace
}  // namespace oscwl

int main(int argc, char** argv) {
    return oscwl::guarded_main("ddp_overlap", [&] {
        const oscwl::DdpOptions o = oscwl::parse_ddp_options(argc, argv);
        oscwl::run_ranks(o.common, "ddp_overlap", [&](oscwl::RankContext& ctx) { oscwl::run_ddp(o, ctx); });
    });
}
