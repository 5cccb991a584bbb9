// fsdp_prefetch: FSDP-style training of an L-layer linear MLP (same math as
// ddp_overlap). Each rank stores 1/T of every layer's weights. Before a layer
// runs (forward, and again in backward) its full weights are all-gathered on
// a communication stream into one of prefetch+1 buffers; with --prefetch 1|2
// the gathers of the next layers are issued early so they run under the
// current layer's GEMMs. Backward reduce-scatters each layer's gradient as
// soon as it is computed; SGD updates the local shards.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "reference_workloads/runtime/collectives.h"
#include "reference_workloads/runtime/device_memory.h"
#include "reference_workloads/runtime/gemm.h"
#include "reference_workloads/runtime/kernels.h"
#include "reference_workloads/runtime/nvtx_range.h"
#include "reference_workloads/runtime/rank_launcher.h"
#include "reference_workloads/runtime/step_loop.h"
#include "reference_workloads/support/prefetch_schedule.h"
#include "reference_workloads/support/result_check.h"

namespace oscwl {
namespace {

class FsdpModel {
public:
    FsdpModel(const FsdpOptions& o, RankContext& ctx)
        : o_(o),
          ctx_(ctx),
          elt_(dtype_bytes(o.common.dtype)),
          full_(static_cast<std::size_t>(o.hidden) * o.hidden),
          shard_(full_ / static_cast<std::size_t>(ctx.world)),
          act_(static_cast<std::size_t>(o.hidden) * o.batch),
          plan_(plan_prefetch(o.layers, o.prefetch)),
          gemm_(o.common.dtype, compute_.get()) {
        const auto layers = static_cast<std::size_t>(o.layers);
        shards_ = DeviceBuffer(layers * shard_ * elt_);
        grad_shards_ = DeviceBuffer(layers * shard_ * elt_);
        full_grads_ = DeviceBuffer(layers * full_ * elt_);
        for (int s = 0; s < plan_.slots; ++s) slots_.emplace_back(full_ * elt_);
        for (int l = 0; l <= o.layers; ++l) acts_.emplace_back(act_ * elt_);
        for (auto& d : dacts_) d = DeviceBuffer(act_ * elt_);
        for (std::size_t u = 0; u < plan_.uses.size(); ++u) {
            gathered_.emplace_back();
            computed_.emplace_back();
        }
        // Element i of layer l's full matrix gets the same value whatever the
        // world size: a shard is filled from its global offset.
        const float wscale = std::sqrt(3.0f / static_cast<float>(o.hidden));
        for (int l = 0; l < o.layers; ++l)
            launch_fill_uniform(shard(l), shard_, o.common.dtype, o.common.seed, 10 + static_cast<std::uint64_t>(l),
                                static_cast<std::uint64_t>(ctx.rank) * shard_, wscale, compute_.get());
        launch_fill_uniform(acts_[0].get(), act_, o.common.dtype, o.common.seed,
                            1000 + static_cast<std::uint64_t>(ctx.rank), 0, 1.0f, compute_.get());
        compute_.sync();
    }

    const Stream& compute() const { return compute_; }

    // One training step, or only the forward half (for the check).
    void step(bool forward_only) {
        const int h = o_.hidden, b = o_.batch;
        const int uses = forward_only ? o_.layers : static_cast<int>(plan_.uses.size());
        step_start_.record(compute_.get());
        step_start_.wait_on(comm_.get());  // the last step's SGD reads shards the gathers read too
        const void* dnext = nullptr;
        for (int u = 0; u < uses; ++u) {
            const LayerUse use = plan_.uses[static_cast<std::size_t>(u)];
            if (u == 0) nvtxRangePushA("forward");
            if (u == o_.layers) nvtxRangePushA("backward");
            for (const GatherIssue& g : plan_.before[static_cast<std::size_t>(u)]) {
                if (g.use >= uses) continue;  // forward-only: no gathers for backward uses
                if (g.wait_compute >= 0) computed_[static_cast<std::size_t>(g.wait_compute)].wait_on(comm_.get());
                const int layer = plan_.uses[static_cast<std::size_t>(g.use)].layer;
                ctx_.coll->all_gather(shard(layer), slots_[static_cast<std::size_t>(g.slot)].get(), shard_,
                                      o_.common.dtype, comm_.get());
                gathered_[static_cast<std::size_t>(g.use)].record(comm_.get());
            }
            gathered_[static_cast<std::size_t>(u)].wait_on(compute_.get());
            const void* w = slots_[static_cast<std::size_t>(plan_.slot_of(u))].get();
            const int l = use.layer;
            if (!use.backward) {
                gemm_.run(false, false, h, b, h, w, h, acts_[static_cast<std::size_t>(l)].get(), h,
                          acts_[static_cast<std::size_t>(l) + 1].get(), h);
            } else {
                if (!dnext) dnext = acts_[static_cast<std::size_t>(o_.layers)].get();  // dA[L] = A[L]
                gemm_.run(false, true, h, h, b, dnext, h, acts_[static_cast<std::size_t>(l)].get(), h, full_grad(l), h);
                if (l > 0) {
                    void* dcur = dacts_[static_cast<std::size_t>(l % 2)].get();
                    gemm_.run(true, false, h, b, h, w, h, dnext, h, dcur, h);
                    dnext = dcur;
                }
            }
            computed_[static_cast<std::size_t>(u)].record(compute_.get());
            if (use.backward) {
                computed_[static_cast<std::size_t>(u)].wait_on(comm_.get());
                ctx_.coll->reduce_scatter_sum(full_grad(l), grad_shard(l), shard_, o_.common.dtype, comm_.get());
            }
            if (u == o_.layers - 1 || u == uses - 1) nvtxRangePop();
        }
        comm_done_.record(comm_.get());
        comm_done_.wait_on(compute_.get());
        if (forward_only) return;
        NvtxRange range("optimizer");
        launch_sgd(shards_.get(), grad_shards_.get(), shard_ * static_cast<std::size_t>(o_.layers), o_.common.dtype,
                   // Mean-squared loss and gradient average folded in, as in ddp_overlap.
                   static_cast<float>(o_.lr / (static_cast<double>(ctx_.world) * o_.batch * o_.hidden)),
                   compute_.get());
    }

    // The prefetching forward must give the same output as a forward whose
    // every gather completes (device synchronised) before its GEMM: a buffer
    // reused too early or a gather waited on too late shows up here.
    std::string check() {
        const int h = o_.hidden, b = o_.batch;
        step(true);
        OSC_CUDA(cudaDeviceSynchronize());
        std::vector<float> fast = download(acts_[static_cast<std::size_t>(o_.layers)].get(), act_);
        for (int l = 0; l < o_.layers; ++l) {
            ctx_.coll->all_gather(shard(l), slots_[0].get(), shard_, o_.common.dtype, comm_.get());
            OSC_CUDA(cudaDeviceSynchronize());
            gemm_.run(false, false, h, b, h, slots_[0].get(), h, acts_[static_cast<std::size_t>(l)].get(), h,
                      acts_[static_cast<std::size_t>(l) + 1].get(), h);
            OSC_CUDA(cudaDeviceSynchronize());
        }
        std::vector<float> slow = download(acts_[static_cast<std::size_t>(o_.layers)].get(), act_);
        const bool bf16 = o_.common.dtype == DType::bf16;
        CloseResult cmp = compare_close(slow, fast, bf16 ? 2e-2 : 1e-5, bf16 ? 2e-2 : 1e-5);
        if (!cmp.ok)
            throw WorkloadError("check FAILED: prefetched forward differs from a synchronised one: " + cmp.message());
        for (float v : fast)
            if (!std::isfinite(v)) throw WorkloadError("check FAILED: forward output is not finite");
        check_gradient_shards();
        return "passed (prefetched forward equals a synchronised one; gradient shards equal the all-reduced "
               "gradients' slices)";
    }

    // Each rank's reduce-scattered gradient shard must equal its slice of the
    // all-reduced full gradient (the local full gradients of the last step are
    // still in place): this catches a wrong shard offset or count.
    void check_gradient_shards() {
        const bool bf16 = o_.common.dtype == DType::bf16;
        DeviceBuffer summed(full_ * elt_);
        for (int l = 0; l < o_.layers; ++l) {
            OSC_CUDA(cudaMemcpyAsync(summed.get(), full_grad(l), full_ * elt_, cudaMemcpyDeviceToDevice, comm_.get()));
            ctx_.coll->all_reduce_sum(summed.get(), full_, o_.common.dtype, comm_.get());
            OSC_CUDA(cudaDeviceSynchronize());
            std::vector<float> want = download(summed.at(static_cast<std::size_t>(ctx_.rank) * shard_ * elt_), shard_);
            std::vector<float> got = download(grad_shard(l), shard_);
            // Same sums, possibly added in another order.
            CloseResult cmp = compare_close_to_largest(want, got, bf16 ? 5e-2 : 1e-5);
            if (!cmp.ok)
                throw WorkloadError("check FAILED: gradient shard of layer " + std::to_string(l) +
                                    " differs from the all-reduced gradient: " + cmp.message());
        }
    }

private:
    void* shard(int l) const { return shards_.at(static_cast<std::size_t>(l) * shard_ * elt_); }
    void* grad_shard(int l) const { return grad_shards_.at(static_cast<std::size_t>(l) * shard_ * elt_); }
    void* full_grad(int l) const { return full_grads_.at(static_cast<std::size_t>(l) * full_ * elt_); }
    std::vector<float> download(const void* src, std::size_t count) const {
        return download_floats(src, count, o_.common.dtype);
    }

    const FsdpOptions& o_;
    RankContext& ctx_;
    std::size_t elt_, full_, shard_, act_;
    PrefetchPlan plan_;
    Stream compute_, comm_;
    Gemm gemm_;
    DeviceBuffer shards_, grad_shards_, full_grads_;
    std::vector<DeviceBuffer> slots_, acts_;
    DeviceBuffer dacts_[2];
    std::vector<Event> gathered_, computed_;
    Event step_start_, comm_done_;
};

void run_fsdp(const FsdpOptions& o, RankContext& ctx) {
    validate_for_world(o, ctx.world);
    FsdpModel model(o, ctx);
    if (ctx.prints()) {
        cudaDeviceProp prop{};
        OSC_CUDA(cudaGetDeviceProperties(&prop, ctx.device));
        const double layer_mib = static_cast<double>(o.hidden) * o.hidden *
                                 static_cast<double>(dtype_bytes(o.common.dtype)) / (1024.0 * 1024.0);
        std::printf("fsdp_prefetch: launch: %s\n", ctx.launch.c_str());
        std::printf("fsdp_prefetch: comm: %s; GPU %d: %s\n", ctx.coll->describe().c_str(), ctx.device, prop.name);
        std::printf("fsdp_prefetch: model: %d layers of %dx%d %s (%.1f MiB each, 1/%d stored per rank), batch %d\n",
                    o.layers, o.hidden, o.hidden, to_string(o.common.dtype), layer_mib, ctx.world, o.batch);
        std::printf("fsdp_prefetch: prefetch %d: %s\n", o.prefetch,
                    o.prefetch == 0 ? "each all-gather starts when its layer is reached (exposed)"
                                    : "all-gathers run ahead of the layer that needs them");
    }
    auto times = run_steps(
        o.common, model.compute().get(), [&](int) { model.step(false); }, o.common.verbose && ctx.prints());
    const std::string check = o.common.check ? model.check() : "skipped";
    if (!ctx.prints()) return;
    const double med = median(times);
    std::printf("fsdp_prefetch: median step %.3f ms over %d steps\n", med, o.common.steps);
    std::printf("fsdp_prefetch: check %s\n", check.c_str());
    std::printf(
        "SUMMARY fsdp_prefetch prefetch=%d comm=%s world=%d dtype=%s hidden=%d batch=%d layers=%d "
        "median_step_ms=%.3f check=%s\n",
        o.prefetch, to_string(o.common.comm), ctx.world, to_string(o.common.dtype), o.hidden, o.batch, o.layers, med,
        o.common.check ? "passed" : "skipped");
    std::fflush(stdout);
}

}  // namespace
}  // namespace oscwl

int main(int argc, char** argv) {
    return oscwl::guarded_main("fsdp_prefetch", [&] {
        const oscwl::FsdpOptions o = oscwl::parse_fsdp_options(argc, argv);
        oscwl::run_ranks(o.common, "fsdp_prefetch", [&](oscwl::RankContext& ctx) { oscwl::run_fsdp(o, ctx); });
    });
}
