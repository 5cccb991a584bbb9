// moe_alltoall: the forward of one expert-parallel MoE layer. Each rank hosts
// one expert (W2 W1, ffn inner size) and holds its own tokens, already
// grouped by the expert they are routed to (support/alltoall_plan.h). A step
//   dispatch: all-to-all of the token segments to their experts,
//   experts:  Y = W2_e (W1_e X) on every received token,
//   combine:  all-to-all of the results back to the tokens' owners,
//   shared:   S = Ws X on the own tokens (an expert every token visits),
//   output:   combined + S.
// Each all-to-all is one group of ncclSend/ncclRecv, one to every rank
// including itself. Serial runs the four in turn (the shared expert after
// the combine, so nothing overlaps). --overlap cuts every segment into
// --chunks pieces, queues all chunks' dispatches on the communication stream
// and each chunk's combine once its expert GEMMs are done (the TP block's
// order, support/chunk_schedule.h), and runs the shared expert first: the
// dispatch of chunk 0 runs under the shared expert, later dispatches and the
// combines under other chunks' expert GEMMs. --imbalance F gives rank 0 F
// times the tokens, so its dispatch and combine move the most bytes.
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
#include "reference_workloads/support/alltoall_plan.h"
#include "reference_workloads/support/chunk_schedule.h"
#include "reference_workloads/support/result_check.h"

namespace oscwl {
namespace {

constexpr std::uint64_t kTokenStream = 100, kW1Stream = 200, kW2Stream = 300, kSharedStream = 400;

class MoeLayer {
public:
    MoeLayer(const MoeOptions& o, RankContext& ctx)
        : o_(o),
          ctx_(ctx),
          elt_(dtype_bytes(o.common.dtype)),
          h_(o.hidden),
          f_(o.ffn),
          me_(ctx.rank),
          plan_(plan_alltoall(ctx.world, o.tokens, o.imbalance, o.chunks)),
          serial_plan_(plan_alltoall(ctx.world, o.tokens, o.imbalance, 1)),
          mine_(plan_.tokens[static_cast<std::size_t>(me_)]),
          received_(plan_.received(me_)),
          gemm_(o.common.dtype, compute_.get()) {
        const auto h = static_cast<std::size_t>(h_), f = static_cast<std::size_t>(f_);
        x_ = DeviceBuffer(h * static_cast<std::size_t>(mine_) * elt_);
        combined_ = DeviceBuffer(h * static_cast<std::size_t>(mine_) * elt_);
        shared_ = DeviceBuffer(h * static_cast<std::size_t>(mine_) * elt_);
        out_ = DeviceBuffer(h * static_cast<std::size_t>(mine_) * elt_);
        out_serial_ = DeviceBuffer(h * static_cast<std::size_t>(mine_) * elt_);
        recv_ = DeviceBuffer(h * static_cast<std::size_t>(received_) * elt_);
        mid_ = DeviceBuffer(f * static_cast<std::size_t>(received_) * elt_);
        expert_out_ = DeviceBuffer(h * static_cast<std::size_t>(received_) * elt_);
        w1_ = DeviceBuffer(f * h * elt_);
        w2_ = DeviceBuffer(h * f * elt_);
        ws_ = DeviceBuffer(h * h * elt_);
        for (int c = 0; c < o.chunks; ++c) {
            dispatched_.emplace_back();
            computed_.emplace_back();
        }
        launch_fill_uniform(x_.get(), h * static_cast<std::size_t>(mine_), o.common.dtype, o.common.seed,
                            kTokenStream + static_cast<std::uint64_t>(me_), 0, 1.0f, compute_.get());
        fill_expert(w1_.get(), w2_.get(), me_);
        // The shared expert is replicated: the same weights on every rank.
        launch_fill_uniform(ws_.get(), h * h, o.common.dtype, o.common.seed, kSharedStream, 0,
                            std::sqrt(3.0f / static_cast<float>(h_)), compute_.get());
        compute_.sync();
    }

    const Stream& compute() const { return compute_; }
    const AllToAllPlan& plan() const { return plan_; }

    void step() { forward(o_.overlap ? plan_ : serial_plan_, o_.overlap, out_.get()); }

    // The result must equal (a) the serial schedule and (b) a recomputation
    // on this GPU of every token with the weights of the expert it was routed
    // to (regenerated from the seed) plus the shared expert: a token combined
    // into the wrong place, or sent to the wrong expert, fails (b).
    std::string check() {
        forward(serial_plan_, false, out_serial_.get());
        OSC_CUDA(cudaDeviceSynchronize());
        const std::size_t n = static_cast<std::size_t>(h_) * static_cast<std::size_t>(mine_);
        const bool bf16 = o_.common.dtype == DType::bf16;
        const double rel = bf16 ? 5e-2 : 1e-3;
        const std::vector<float> got = download(out_.get(), n);
        compare(download(out_serial_.get(), n), got, rel, "output differs from the serial schedule");

        const auto h = static_cast<std::size_t>(h_), f = static_cast<std::size_t>(f_);
        DeviceBuffer w1(f * h * elt_), w2(h * f * elt_), mid(f * static_cast<std::size_t>(mine_) * elt_),
            ref(h * static_cast<std::size_t>(mine_) * elt_), shared(h * static_cast<std::size_t>(mine_) * elt_);
        for (int e = 0; e < ctx_.world; ++e) {
            const long long count = plan_.counts[static_cast<std::size_t>(me_)][static_cast<std::size_t>(e)];
            if (count == 0) continue;
            const std::size_t at = static_cast<std::size_t>(plan_.segment_offset(me_, e));
            fill_expert(w1.get(), w2.get(), e);
            gemm_.run(false, false, f_, static_cast<int>(count), h_, w1.get(), f_, x_.at(at * h * elt_), h_,
                      mid.at(at * f * elt_), f_);
            gemm_.run(false, false, h_, static_cast<int>(count), f_, w2.get(), h_, mid.at(at * f * elt_), f_,
                      ref.at(at * h * elt_), h_);
        }
        gemm_.run(false, false, h_, static_cast<int>(mine_), h_, ws_.get(), h_, x_.get(), h_, shared.get(), h_);
        launch_add(ref.get(), ref.get(), shared.get(), n, o_.common.dtype, compute_.get());
        OSC_CUDA(cudaStreamSynchronize(compute_.get()));
        compare(download(ref.get(), n), got, rel, "a token's output differs from its expert's recomputed on this GPU");
        return "passed (" + std::string(o_.overlap ? "chunked output equals serial; " : "") +
               "every token returned with its expert's and the shared expert's output)";
    }

private:
    void fill_expert(void* w1, void* w2, int expert) {
        const auto h = static_cast<std::size_t>(h_), f = static_cast<std::size_t>(f_);
        const auto e = static_cast<std::uint64_t>(expert);
        launch_fill_uniform(w1, f * h, o_.common.dtype, o_.common.seed, kW1Stream + e, 0,
                            std::sqrt(3.0f / static_cast<float>(h_)), compute_.get());
        launch_fill_uniform(w2, h * f, o_.common.dtype, o_.common.seed, kW2Stream + e, 0,
                            std::sqrt(3.0f / static_cast<float>(f_)), compute_.get());
    }

    // Column (token) `t` of an h-row buffer.
    char* token(const DeviceBuffer& b, long long t) const {
        return static_cast<char*>(b.get()) + static_cast<std::size_t>(t) * static_cast<std::size_t>(h_) * elt_;
    }

    void shared_expert() {
        gemm_.run(false, false, h_, static_cast<int>(mine_), h_, ws_.get(), h_, x_.get(), h_, shared_.get(), h_);
    }

    void forward(const AllToAllPlan& p, bool overlap, void* out) {
        NvtxRange range("forward");
        const DType d = o_.common.dtype;
        const auto h = static_cast<std::size_t>(h_);
        // The previous step's combines and this step's dispatches write buffers
        // the last step read: start after it.
        start_.record(compute_.get());
        start_.wait_on(comm_.get());
        if (overlap) shared_expert();  // under chunk 0's dispatch
        // Dispatch is issued like the TP block's all-gathers, the expert GEMMs
        // like its GEMMs and the combine like its reduce-scatters.
        for (const ScheduledOp& op : plan_tp_chunks(p.chunks)) {
            const int c = op.chunk;
            std::vector<P2POp> ops;
            switch (op.op) {
                case TpOp::all_gather:  // dispatch
                    for (int r = 0; r < p.world; ++r) {
                        const ChunkRange out_piece = p.piece(me_, r, c), in_piece = p.piece(r, me_, c);
                        if (out_piece.count > 0)
                            ops.push_back(P2POp::send_to(r, token(x_, p.segment_offset(me_, r) + out_piece.offset),
                                                         static_cast<std::size_t>(out_piece.count) * h));
                        if (in_piece.count > 0)
                            ops.push_back(P2POp::recv_from(r, token(recv_, p.recv_offset(me_, c, r)),
                                                           static_cast<std::size_t>(in_piece.count) * h));
                    }
                    ctx_.coll->send_recv(ops, d, comm_.get());
                    dispatched_[static_cast<std::size_t>(c)].record(comm_.get());
                    break;
                case TpOp::gemm: {  // the expert on this chunk's block of received tokens
                    dispatched_[static_cast<std::size_t>(c)].wait_on(compute_.get());
                    const long long n = p.block_tokens(me_, c), at = p.block_offset(me_, c);
                    if (n > 0) {
                        char* mid = static_cast<char*>(mid_.get()) +
                                    static_cast<std::size_t>(at) * static_cast<std::size_t>(f_) * elt_;
                        gemm_.run(false, false, f_, static_cast<int>(n), h_, w1_.get(), f_, token(recv_, at), h_, mid,
                                  f_);
                        gemm_.run(false, false, h_, static_cast<int>(n), f_, w2_.get(), h_, mid, f_,
                                  token(expert_out_, at), h_);
                    }
                    computed_[static_cast<std::size_t>(c)].record(compute_.get());
                    break;
                }
                case TpOp::reduce_scatter:  // combine: every piece back to its owner, in its place
                    computed_[static_cast<std::size_t>(c)].wait_on(comm_.get());
                    for (int r = 0; r < p.world; ++r) {
                        const ChunkRange back = p.piece(r, me_, c), home = p.piece(me_, r, c);
                        if (back.count > 0)
                            ops.push_back(P2POp::send_to(r, token(expert_out_, p.recv_offset(me_, c, r)),
                                                         static_cast<std::size_t>(back.count) * h));
                        if (home.count > 0)
                            ops.push_back(P2POp::recv_from(r, token(combined_, p.segment_offset(me_, r) + home.offset),
                                                           static_cast<std::size_t>(home.count) * h));
                    }
                    ctx_.coll->send_recv(ops, d, comm_.get());
                    break;
            }
        }
        done_.record(comm_.get());
        done_.wait_on(compute_.get());
        if (!overlap) shared_expert();  // serial: after everything else
        launch_add(out, combined_.get(), shared_.get(), h * static_cast<std::size_t>(mine_), d, compute_.get());
    }

    // The streams are non-blocking: a plain cudaMemcpy would not wait for them.
    std::vector<float> download(const void* src, std::size_t count) const {
        OSC_CUDA(cudaDeviceSynchronize());
        return download_floats(src, count, o_.common.dtype);
    }

    static void compare(const std::vector<float>& want, const std::vector<float>& got, double rel,
                        const std::string& what) {
        CloseResult cmp = compare_close_to_largest(want, got, rel);
        if (!cmp.ok) throw WorkloadError("check FAILED: " + what + ": " + cmp.message());
        for (float v : got)
            if (!std::isfinite(v)) throw WorkloadError("check FAILED: output is not finite");
    }

    const MoeOptions& o_;
    RankContext& ctx_;
    std::size_t elt_;
    int h_, f_, me_;
    AllToAllPlan plan_, serial_plan_;
    long long mine_, received_;
    Stream compute_, comm_;
    Gemm gemm_;
    DeviceBuffer x_, combined_, shared_, out_, out_serial_, recv_, mid_, expert_out_, w1_, w2_, ws_;
    std::vector<Event> dispatched_, computed_;
    Event start_, done_;
};

std::string token_table(const AllToAllPlan& p) {
    std::ostringstream out;
    for (int s = 0; s < p.world; ++s) {
        out << (s ? "; " : "") << "rank " << s << " -> experts";
        for (int d = 0; d < p.world; ++d)
            out << ' ' << p.counts[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
    }
    return out.str();
}

void run_moe(const MoeOptions& o, RankContext& ctx) {
    validate_for_world(o, ctx.world);
    MoeLayer layer(o, ctx);
    const AllToAllPlan& p = layer.plan();
    if (ctx.prints()) {
        cudaDeviceProp prop{};
        OSC_CUDA(cudaGetDeviceProperties(&prop, ctx.device));
        std::printf("moe_alltoall: launch: %s\n", ctx.launch.c_str());
        std::printf("moe_alltoall: comm: %s; GPU %d: %s\n", ctx.coll->describe().c_str(), ctx.device, prop.name);
        std::printf(
            "moe_alltoall: layer: %d expert(s) (one per rank) of %dx%d and %dx%d, a shared expert of %dx%d, "
            "%s; tokens per rank: %d (rank 0: %lld, --imbalance %g)\n",
            ctx.world, o.ffn, o.hidden, o.hidden, o.ffn, o.hidden, o.hidden, to_string(o.common.dtype), o.tokens,
            p.tokens[0], o.imbalance);
        std::printf("moe_alltoall: routing (tokens per rank pair): %s; dispatch sends max/mean %.3f\n",
                    token_table(p).c_str(), p.send_imbalance());
        if (o.overlap)
            std::printf(
                "moe_alltoall: overlap: %d chunks; the shared expert runs under chunk 0's dispatch, each "
                "later all-to-all under another chunk's expert GEMMs; %d send/receive groups per step\n",
                o.chunks, 2 * o.chunks);
        else
            std::printf(
                "moe_alltoall: serial: dispatch, expert GEMMs, combine, shared expert in turn; 2 send/receive "
                "groups per step\n");
    }
    auto times = run_steps(
        o.common, layer.compute().get(), [&](int) { layer.step(); }, o.common.verbose && ctx.prints());
    const std::string check = o.common.check ? layer.check() : "skipped";
    if (!ctx.prints()) return;
    const double med = median(times);
    std::printf("moe_alltoall: median step %.3f ms over %d steps\n", med, o.common.steps);
    std::printf("moe_alltoall: check %s\n", check.c_str());
    std::printf(
        "SUMMARY moe_alltoall overlap=%d chunks=%d imbalance=%g comm=%s world=%d dtype=%s hidden=%d ffn=%d "
        "tokens=%d tokens_rank0=%lld alltoall_launches=%d send_max_over_mean=%.3f median_step_ms=%.3f "
        "check=%s\n",
        o.overlap ? 1 : 0, o.chunks, o.imbalance, to_string(o.common.comm), ctx.world, to_string(o.common.dtype),
        o.hidden, o.ffn, o.tokens, p.tokens[0], 2 * o.chunks, p.send_imbalance(), med,
        o.common.check ? "passed" : "skipped");
    std::fflush(stdout);
}

}  // namespace
}  // namespace oscwl

int main(int argc, char** argv) {
    return oscwl::guarded_main("moe_alltoall", [&] {
        const oscwl::MoeOptions o = oscwl::parse_moe_options(argc, argv);
        oscwl::run_ranks(o.common, "moe_alltoall", [&](oscwl::RankContext& ctx) { oscwl::run_moe(o, ctx); });
    });
}
