// pp_overlap: one training step of a pipeline-parallel linear MLP. Rank s is
// stage s of S = world size and holds L layers of hidden x hidden. A step
// runs M micro-batches through the stages in GPipe or 1F1B order
// (support/pipeline_schedule.h): F(m) on stage s computes
// A[l+1] = W[l] A[l] for its layers and sends its output to stage s+1; B(m)
// receives the gradient of that output from stage s+1, accumulates
// dW[l] += dA[l+1] A[l]^T over the micro-batches and sends dA of its input to
// stage s-1. The last stage's loss is the mean squared output, so its
// incoming gradient is its output (as in ddp_overlap). There is no
// optimizer: the weights stay fixed, and the check recomputes the whole
// model on one GPU.
// Naive: every send/receive group runs on the compute stream between two
// passes (blocking). --overlap: the groups run on a communication stream in
// the plan's global order, receives posted ahead of the pass that needs them,
// and a pass waits (CUDA event) only for the group holding its own input.
// With one rank the stage sends its transfers to itself (loopbacks), so that
// one GPU still shows them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "reference_workloads/runtime/collectives.h"
#include "reference_workloads/runtime/device_memory.h"
#include "reference_workloads/runtime/gemm.h"
#include "reference_workloads/runtime/kernels.h"
#include "reference_workloads/runtime/nvtx_range.h"
#include "reference_workloads/runtime/rank_launcher.h"
#include "reference_workloads/runtime/step_loop.h"
#include "reference_workloads/support/pipeline_schedule.h"
#include "reference_workloads/support/result_check.h"

namespace oscwl {
namespace {

constexpr std::uint64_t kWeightStream = 10;   // + global layer index
constexpr std::uint64_t kInputStream = 1000;  // + micro-batch

class PipelineStage {
public:
    PipelineStage(const PpOptions& o, RankContext& ctx)
        : o_(o),
          ctx_(ctx),
          elt_(dtype_bytes(o.common.dtype)),
          stages_(ctx.world),
          stage_(ctx.rank),
          layer_elems_(static_cast<std::size_t>(o.hidden) * o.hidden),
          act_elems_(static_cast<std::size_t>(o.hidden) * o.mb_tokens),
          plan_(plan_pipeline(o.schedule, ctx.world, o.microbatches, o.overlap)),
          gemm_(o.common.dtype, compute_.get()) {
        const auto layers = static_cast<std::size_t>(o.layers);
        const auto mbs = static_cast<std::size_t>(o.microbatches);
        weights_ = DeviceBuffer(layers * layer_elems_ * elt_);
        grads_ = DeviceBuffer(layers * layer_elems_ * elt_);
        acts_ = DeviceBuffer(mbs * (layers + 1) * act_elems_ * elt_);  // every micro-batch's, kept for backward
        incoming_grad_ = DeviceBuffer(mbs * act_elems_ * elt_);
        input_grad_ = DeviceBuffer(mbs * act_elems_ * elt_);
        for (auto& d : scratch_) d = DeviceBuffer(act_elems_ * elt_);
        if (stages_ == 1) {
            inputs_ = DeviceBuffer(mbs * act_elems_ * elt_);
            sink_ = DeviceBuffer(act_elems_ * elt_);
        }
        for (std::size_t a = 0; a < my_plan().actions.size(); ++a) done_.emplace_back();
        fill_weights(weights_.get(), stage_ * o.layers, o.layers);
        for (int m = 0; m < o.microbatches; ++m) {
            // Stage 0 reads its micro-batches; one stage alone receives them from itself.
            if (stages_ == 1)
                fill_input(input(m), m);
            else if (stage_ == 0)
                fill_input(act(m, 0), m);
        }
        compute_.sync();
    }

    const Stream& compute() const { return compute_; }
    const PipelinePlan& plan() const { return plan_; }

    void step() {
        const bool overlap = o_.overlap;
        const auto& actions = my_plan().actions;
        start_.record(compute_.get());
        start_.wait_on(comm_.get());
        for (std::size_t i = 0; i < actions.size(); ++i) {
            const PipeAction& a = actions[i];
            if (a.is_pass) {
                if (overlap)
                    for (int w : a.waits) done_[static_cast<std::size_t>(w)].wait_on(compute_.get());
                NvtxRange range(std::string(a.pass.backward ? "bwd mb " : "fwd mb ") + std::to_string(a.pass.mb));
                if (a.pass.backward)
                    backward(a.pass.mb);
                else
                    forward(a.pass.mb);
                if (overlap) done_[i].record(compute_.get());
                continue;
            }
            if (overlap)
                for (int w : a.waits) done_[static_cast<std::size_t>(w)].wait_on(comm_.get());
            ctx_.coll->send_recv(p2p_ops(a.group), o_.common.dtype, overlap ? comm_.get() : compute_.get());
            if (overlap) done_[i].record(comm_.get());
        }
        comm_done_.record(comm_.get());
        comm_done_.wait_on(compute_.get());
    }

    // Every micro-batch's output on the last stage and this stage's
    // accumulated weight gradients must equal a recomputation of the whole
    // model on this GPU (all stages' weights regenerated from the seed): a
    // transfer delivered to the wrong buffer, too early or not at all
    // changes them.
    std::string check() {
        OSC_CUDA(cudaDeviceSynchronize());
        const int h = o_.hidden, b = o_.mb_tokens, L = o_.layers;
        const int total = stages_ * L, first = stage_ * L;
        DeviceBuffer all_weights(static_cast<std::size_t>(total) * layer_elems_ * elt_);
        DeviceBuffer ref_grads(static_cast<std::size_t>(L) * layer_elems_ * elt_);
        std::vector<DeviceBuffer> a;
        for (int g = 0; g <= total; ++g) a.emplace_back(act_elems_ * elt_);
        DeviceBuffer d[2] = {DeviceBuffer(act_elems_ * elt_), DeviceBuffer(act_elems_ * elt_)};
        fill_weights(all_weights.get(), 0, total);
        auto w = [&](int g) { return all_weights.at(static_cast<std::size_t>(g) * layer_elems_ * elt_); };
        auto ref_grad = [&](int l) { return ref_grads.at(static_cast<std::size_t>(l) * layer_elems_ * elt_); };
        const bool bf16 = o_.common.dtype == DType::bf16;
        const double rel = bf16 ? 2e-2 : 1e-4;
        for (int m = 0; m < o_.microbatches; ++m) {
            fill_input(a[0].get(), m);
            for (int g = 0; g < total; ++g) gemm_.run(false, false, h, b, h, w(g), h, a[g].get(), h, a[g + 1].get(), h);
            if (stage_ == stages_ - 1) {
                compare(download(a[static_cast<std::size_t>(total)].get(), act_elems_), download(act(m, L), act_elems_),
                        rel, "output of micro-batch " + std::to_string(m));
            }
            const void* dnext = a[static_cast<std::size_t>(total)].get();
            for (int g = total - 1; g >= first; --g) {
                if (g < first + L)
                    gemm_.run(false, true, h, h, b, dnext, h, a[static_cast<std::size_t>(g)].get(), h,
                              ref_grad(g - first), h, m == 0 ? 0.0f : 1.0f);
                if (g == first) break;
                void* dcur = d[g % 2].get();
                gemm_.run(true, false, h, b, h, w(g), h, dnext, h, dcur, h);
                dnext = dcur;
            }
        }
        for (int l = 0; l < L; ++l)
            compare(download(ref_grad(l), layer_elems_), download(grad(l), layer_elems_), rel,
                    "weight gradient of layer " + std::to_string(first + l));
        return stage_ == stages_ - 1 ? "passed (outputs and weight gradients equal a one-GPU recomputation)"
                                     : "passed (weight gradients equal a one-GPU recomputation)";
    }

private:
    const StagePlan& my_plan() const { return plan_.stage[static_cast<std::size_t>(stage_)]; }
    std::size_t act_bytes() const { return act_elems_ * elt_; }
    void* act(int m, int l) const {
        return acts_.at(
            (static_cast<std::size_t>(m) * (static_cast<std::size_t>(o_.layers) + 1) + static_cast<std::size_t>(l)) *
            act_bytes());
    }
    void* weight(int l) const { return weights_.at(static_cast<std::size_t>(l) * layer_elems_ * elt_); }
    void* grad(int l) const { return grads_.at(static_cast<std::size_t>(l) * layer_elems_ * elt_); }
    void* incoming_grad(int m) const { return incoming_grad_.at(static_cast<std::size_t>(m) * act_bytes()); }
    void* input_grad(int m) const { return input_grad_.at(static_cast<std::size_t>(m) * act_bytes()); }
    void* input(int m) const { return inputs_.at(static_cast<std::size_t>(m) * act_bytes()); }

    // Global layer g gets the same weights on whichever rank fills it.
    void fill_weights(void* dst, int first_layer, int count) {
        const float wscale = std::sqrt(3.0f / static_cast<float>(o_.hidden));  // keeps |A| steady
        for (int l = 0; l < count; ++l)
            launch_fill_uniform(static_cast<char*>(dst) + static_cast<std::size_t>(l) * layer_elems_ * elt_,
                                layer_elems_, o_.common.dtype, o_.common.seed,
                                kWeightStream + static_cast<std::uint64_t>(first_layer + l), 0, wscale, compute_.get());
    }
    void fill_input(void* dst, int m) {
        launch_fill_uniform(dst, act_elems_, o_.common.dtype, o_.common.seed,
                            kInputStream + static_cast<std::uint64_t>(m), 0, 1.0f, compute_.get());
    }

    void forward(int m) {
        const int h = o_.hidden, b = o_.mb_tokens;
        for (int l = 0; l < o_.layers; ++l)
            gemm_.run(false, false, h, b, h, weight(l), h, act(m, l), h, act(m, l + 1), h);
    }

    // Passes run B0..B(M-1) in both schedules, so micro-batch 0 starts the
    // gradient sums.
    void backward(int m) {
        const int h = o_.hidden, b = o_.mb_tokens;
        const bool last = stages_ > 1 && stage_ == stages_ - 1;
        const bool send_input_grad = stage_ > 0 || stages_ == 1;
        const void* dnext = last ? act(m, o_.layers) : incoming_grad(m);
        for (int l = o_.layers - 1; l >= 0; --l) {
            gemm_.run(false, true, h, h, b, dnext, h, act(m, l), h, grad(l), h, m == 0 ? 0.0f : 1.0f);
            if (l == 0 && !send_input_grad) break;
            void* dcur = l > 0 ? scratch_[l % 2].get() : input_grad(m);
            gemm_.run(true, false, h, b, h, weight(l), h, dnext, h, dcur, h);
            dnext = dcur;
        }
    }

    std::vector<P2POp> p2p_ops(const std::vector<PipeP2P>& group) const {
        const std::size_t n = act_elems_;
        std::vector<P2POp> ops;
        for (const PipeP2P& p : group) {
            const int m = p.mb;
            switch (p.role) {
                case PipeP2P::Role::send:
                    ops.push_back(
                        P2POp::send_to(p.peer, p.data == PipeData::activation ? act(m, o_.layers) : input_grad(m), n));
                    break;
                case PipeP2P::Role::recv:
                    ops.push_back(
                        P2POp::recv_from(p.peer, p.data == PipeData::activation ? act(m, 0) : incoming_grad(m), n));
                    break;
                case PipeP2P::Role::loopback: {
                    // One stage stands in for a middle one: its micro-batch comes in, its
                    // output comes back as the loss gradient, its input gradient leaves.
                    const void* src = p.data == PipeData::input  ? input(m)
                                      : p.data == PipeData::loss ? act(m, o_.layers)
                                                                 : input_grad(m);
                    void* dst = p.data == PipeData::input  ? act(m, 0)
                                : p.data == PipeData::loss ? incoming_grad(m)
                                                           : sink_.get();
                    ops.push_back(P2POp::send_to(ctx_.rank, src, n));
                    ops.push_back(P2POp::recv_from(ctx_.rank, dst, n));
                    break;
                }
            }
        }
        return ops;
    }

    // The streams are non-blocking: a plain cudaMemcpy would not wait for them.
    std::vector<float> download(const void* src, std::size_t count) const {
        OSC_CUDA(cudaDeviceSynchronize());
        return download_floats(src, count, o_.common.dtype);
    }

    // Tolerance relative to the largest value: the same GEMMs in the same
    // order, so any difference beyond rounding is a delivery error.
    static void compare(const std::vector<float>& want, const std::vector<float>& got, double rel,
                        const std::string& what) {
        CloseResult cmp = compare_close_to_largest(want, got, rel);
        if (!cmp.ok)
            throw WorkloadError("check FAILED: " + what + " differs from a one-GPU recomputation: " + cmp.message());
        for (float v : got)
            if (!std::isfinite(v)) throw WorkloadError("check FAILED: " + what + " is not finite");
    }

    const PpOptions& o_;
    RankContext& ctx_;
    std::size_t elt_;
    int stages_, stage_;
    std::size_t layer_elems_, act_elems_;
    PipelinePlan plan_;
    Stream compute_, comm_;
    Gemm gemm_;
    DeviceBuffer weights_, grads_, acts_, incoming_grad_, input_grad_, inputs_, sink_;
    DeviceBuffer scratch_[2];
    std::vector<Event> done_;  // per action of this stage's plan (overlapped mode)
    Event start_, comm_done_;
};

std::string per_stage(const PipelinePlan& plan, int (StagePlan::*count)() const) {
    std::ostringstream out;
    for (std::size_t s = 0; s < plan.stage.size(); ++s) out << (s ? "," : "") << (plan.stage[s].*count)();
    return out.str();
}

void run_pp(const PpOptions& o, RankContext& ctx) {
    PipelineStage stage(o, ctx);
    const double bubble = pipeline_bubble_fraction(ctx.world, o.microbatches);
    if (ctx.prints()) {
        cudaDeviceProp prop{};
        OSC_CUDA(cudaGetDeviceProperties(&prop, ctx.device));
        std::printf("pp_overlap: launch: %s\n", ctx.launch.c_str());
        std::printf("pp_overlap: comm: %s; GPU %d: %s\n", ctx.coll->describe().c_str(), ctx.device, prop.name);
        std::printf("pp_overlap: model: %d stage(s) of %d layers of %dx%d %s, %d micro-batches of %d tokens\n",
                    ctx.world, o.layers, o.hidden, o.hidden, to_string(o.common.dtype), o.microbatches, o.mb_tokens);
        std::printf(
            "pp_overlap: schedule %s, %s; per step and stage: %s send/receive groups (NCCL kernels), %s "
            "transfers; theoretical bubble (S-1)/(M+S-1) = %.4f%s\n",
            to_string(o.schedule),
            o.overlap ? "overlapped (communication stream, receives ahead of need)"
                      : "blocking (send/receive groups on the compute stream between passes)",
            per_stage(stage.plan(), &StagePlan::groups).c_str(), per_stage(stage.plan(), &StagePlan::transfers).c_str(),
            bubble, ctx.world == 1 ? " (one stage: its transfers go to itself)" : "");
    }
    auto times = run_steps(
        o.common, stage.compute().get(), [&](int) { stage.step(); }, o.common.verbose && ctx.prints());
    const std::string check = o.common.check ? stage.check() : "skipped";
    if (!ctx.prints()) return;
    const double med = median(times);
    std::printf("pp_overlap: median step %.3f ms over %d steps\n", med, o.common.steps);
    std::printf("pp_overlap: check %s\n", check.c_str());
    std::printf(
        "SUMMARY pp_overlap schedule=%s overlap=%d stages=%d microbatches=%d comm=%s world=%d dtype=%s "
        "hidden=%d mb_size=%d layers_per_stage=%d p2p_launches=%s transfers=%s bubble_theory=%.4f "
        "median_step_ms=%.3f check=%s\n",
        to_string(o.schedule), o.overlap ? 1 : 0, ctx.world, o.microbatches, to_string(o.common.comm), ctx.world,
        to_string(o.common.dtype), o.hidden, o.mb_tokens, o.layers, per_stage(stage.plan(), &StagePlan::groups).c_str(),
        per_stage(stage.plan(), &StagePlan::transfers).c_str(), bubble, med, o.common.check ? "passed" : "skipped");
    std::fflush(stdout);
}

}  // namespace
}  // namespace oscwl

int main(int argc, char** argv) {
    return oscwl::guarded_main("pp_overlap", [&] {
        const oscwl::PpOptions o = oscwl::parse_pp_options(argc, argv);
        oscwl::run_ranks(o.common, "pp_overlap", [&](oscwl::RankContext& ctx) { oscwl::run_pp(o, ctx); });
    });
}
