// tp_overlap: one tensor-parallel MLP block in the sequence-parallel layout.
// Each rank holds tokens/T input tokens X_r (hidden x tokens/T, column-major:
// one column per token), a column slice W1_r (ffn/T x hidden) and a row slice
// W2_r (hidden x ffn/T). A block is
//   G = all-gather(X_r); Y = W1_r G; P = W2_r Y; Z_r = reduce-scatter(P)
// The pipelined mode splits the tokens into chunks and issues the chunks'
// collectives on a communication stream so that each chunk's all-gather or
// reduce-scatter runs while another chunk's GEMMs compute (see
// support/chunk_schedule.h). Serial is the same code with one chunk.
// The ring mode computes the same block without collectives: the token
// chunks travel around the ranks with point-to-point send/receive on the
// communication stream while each rank multiplies the chunk it holds, and
// the row-parallel partial sums travel the ring the same way
// (support/ring_schedule.h).
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
#include "reference_workloads/support/chunk_schedule.h"
#include "reference_workloads/support/result_check.h"
#include "reference_workloads/support/ring_schedule.h"

namespace oscwl {
namespace {

class TpBlock {
public:
    TpBlock(const TpOptions& o, RankContext& ctx)
        : o_(o),
          ctx_(ctx),
          elt_(dtype_bytes(o.common.dtype)),
          h_(o.hidden),
          fs_(o.ffn / ctx.world),
          mr_(o.tokens / ctx.world),
          m_(o.tokens),
          ring_(plan_ring(ctx.world, ctx.rank, o.chunks)),
          gemm_(o.common.dtype, compute_.get()) {
        const auto hh = static_cast<std::size_t>(h_);
        x_ = DeviceBuffer(hh * mr_ * elt_);
        z_ = DeviceBuffer(hh * mr_ * elt_);
        z_serial_ = DeviceBuffer(hh * mr_ * elt_);
        g_ = DeviceBuffer(hh * m_ * elt_);
        p_ = DeviceBuffer(hh * m_ * elt_);
        y_ = DeviceBuffer(static_cast<std::size_t>(fs_) * m_ * elt_);
        w1_ = DeviceBuffer(static_cast<std::size_t>(fs_) * hh * elt_);
        w2_ = DeviceBuffer(hh * fs_ * elt_);
        for (int c = 0; c < o.chunks; ++c) {
            gathered_.emplace_back();
            computed_.emplace_back();
        }
        if (o.mode == TpMode::ring) {
            const std::size_t slice = hh * static_cast<std::size_t>(ring_slice(0).count) * elt_;  // the largest
            for (int b = 0; b < 2; ++b) {
                held_[b] = DeviceBuffer(slice);
                partial_[b] = DeviceBuffer(slice);
                incoming_[b] = DeviceBuffer(slice);
            }
            for (int i = 0; i < ring_.positions; ++i) {
                exchanged_.emplace_back();
                multiplied_.emplace_back();
                partial_ready_.emplace_back();
                passed_on_.emplace_back();
            }
        }
        const auto r = static_cast<std::uint64_t>(ctx.rank);
        const DType d = o.common.dtype;
        launch_fill_uniform(x_.get(), hh * mr_, d, o.common.seed, 100 + r, 0, 1.0f, compute_.get());
        launch_fill_uniform(w1_.get(), static_cast<std::size_t>(fs_) * hh, d, o.common.seed, 200 + r, 0,
                            std::sqrt(3.0f / static_cast<float>(h_)), compute_.get());
        // Scaled by the full ffn: the reduce-scatter sums T partial products.
        launch_fill_uniform(w2_.get(), hh * fs_, d, o.common.seed, 300 + r, 0,
                            std::sqrt(3.0f / static_cast<float>(o.ffn)), compute_.get());
        compute_.sync();
    }

    const Stream& compute() const { return compute_; }

    void forward(int chunks, void* out) {
        NvtxRange range("forward");
        const std::vector<ScheduledOp> schedule = plan_tp_chunks(chunks);
        const DType d = o_.common.dtype;
        // The previous step's last reduce-scatter must not be overtaken.
        start_.record(compute_.get());
        start_.wait_on(comm_.get());
        for (const ScheduledOp& op : schedule) {
            const auto c = static_cast<std::size_t>(op.chunk);
            // This rank's tokens of the chunk, and where the chunk sits once
            // gathered (rank-major: every rank's slice of chunk c together).
            const ChunkRange mine = chunk_range(mr_, chunks, op.chunk);
            const long long gc = mine.count * ctx_.world, goff = mine.offset * ctx_.world;
            char* g_chunk = static_cast<char*>(g_.get()) + bytes(goff * h_);
            char* y_chunk = static_cast<char*>(y_.get()) + bytes(goff * fs_);
            char* p_chunk = static_cast<char*>(p_.get()) + bytes(goff * h_);
            const auto count = static_cast<std::size_t>(mine.count * h_);
            switch (op.op) {
                case TpOp::all_gather:
                    ctx_.coll->all_gather(static_cast<char*>(x_.get()) + bytes(mine.offset * h_), g_chunk, count, d,
                                          comm_.get());
                    gathered_[c].record(comm_.get());
                    break;
                case TpOp::gemm:
                    gathered_[c].wait_on(compute_.get());
                    gemm_.run(false, false, fs_, static_cast<int>(gc), h_, w1_.get(), fs_, g_chunk, h_, y_chunk, fs_);
                    gemm_.run(false, false, h_, static_cast<int>(gc), fs_, w2_.get(), h_, y_chunk, fs_, p_chunk, h_);
                    computed_[c].record(compute_.get());
                    break;
                case TpOp::reduce_scatter:
                    computed_[c].wait_on(comm_.get());
                    ctx_.coll->reduce_scatter_sum(p_chunk, static_cast<char*>(out) + bytes(mine.offset * h_), count, d,
                                                  comm_.get());
                    break;
            }
        }
        done_.record(comm_.get());
        done_.wait_on(compute_.get());
    }

    // Ring exchange. Gather ring: GEMM1 on the held chunk while the comm
    // stream sends it to the next rank and receives the following one into
    // the other of two buffers. Scatter ring: GEMM2 of the next chunk into
    // the other of two partial buffers while the previous partial sum
    // travels; each received sum is added before passing it on.
    void forward_ring(void* out) {
        NvtxRange range("forward");
        const DType d = o_.common.dtype;
        const int n = ring_.positions;
        const auto h = static_cast<std::size_t>(h_);
        char* x = static_cast<char*>(x_.get());
        char* y = static_cast<char*>(y_.get());
        start_.record(compute_.get());
        start_.wait_on(comm_.get());
        for (int i = 0; i < n; ++i) {
            const ChunkRange s = ring_slice(ring_.gather_order[static_cast<std::size_t>(i)]);
            const void* held = i == 0 ? x + bytes(local_offset(s) * h_) : held_[(i - 1) % 2].get();
            if (i > 0) exchanged_[static_cast<std::size_t>(i) - 1].wait_on(compute_.get());
            if (i + 1 < n) {
                // held_[i % 2] is GEMM1's input at step i - 1 (step 0 reads x).
                if (i >= 2) multiplied_[static_cast<std::size_t>(i) - 1].wait_on(comm_.get());
                const ChunkRange next = ring_slice(ring_.gather_order[static_cast<std::size_t>(i) + 1]);
                // A ring forwards what it holds; a loopback ring fetches the next slice itself.
                const void* src = ring_.loopback ? x + bytes(local_offset(next) * h_) : held;
                const auto count = static_cast<std::size_t>(next.count) * h;
                ctx_.coll->send_recv(
                    {P2POp::send_to(ring_.next, src, count), P2POp::recv_from(ring_.prev, held_[i % 2].get(), count)},
                    d, comm_.get());
                exchanged_[static_cast<std::size_t>(i)].record(comm_.get());
            }
            gemm_.run(false, false, fs_, static_cast<int>(s.count), h_, w1_.get(), fs_, held, h_,
                      y + bytes(s.offset * fs_), fs_);
            multiplied_[static_cast<std::size_t>(i)].record(compute_.get());
        }
        for (int k = 0; k < n; ++k) {
            const ChunkRange s = ring_slice(ring_.scatter_order[static_cast<std::size_t>(k)]);
            const bool last = k == n - 1;  // the own chunk
            const auto count = static_cast<std::size_t>(s.count) * h;
            char* own = static_cast<char*>(out) + bytes(local_offset(s) * h_);
            void* part = partial_[k % 2].get();
            if (k >= 2) passed_on_[static_cast<std::size_t>(k) - 2].wait_on(compute_.get());  // part was sent at k-2
            const bool straight_to_out = last && (ring_.loopback || n == 1);
            gemm_.run(false, false, h_, static_cast<int>(s.count), fs_, w2_.get(), h_, y + bytes(s.offset * fs_), fs_,
                      straight_to_out ? static_cast<void*>(own) : part, h_);
            if (!ring_.loopback && k > 0) {
                passed_on_[static_cast<std::size_t>(k) - 1].wait_on(compute_.get());
                launch_add(last ? static_cast<void*>(own) : part, part, incoming_[(k - 1) % 2].get(), count, d,
                           compute_.get());
            }
            if (last) break;
            partial_ready_[static_cast<std::size_t>(k)].record(compute_.get());
            partial_ready_[static_cast<std::size_t>(k)].wait_on(comm_.get());
            // One rank owns every slice: its partial product is already the sum.
            void* dst = ring_.loopback ? static_cast<void*>(own) : incoming_[k % 2].get();
            ctx_.coll->send_recv({P2POp::send_to(ring_.next, part, count), P2POp::recv_from(ring_.prev, dst, count)}, d,
                                 comm_.get());
            passed_on_[static_cast<std::size_t>(k)].record(comm_.get());
        }
        done_.record(comm_.get());
        done_.wait_on(compute_.get());
    }

    void step() {
        if (o_.mode == TpMode::ring)
            forward_ring(z_.get());
        else
            forward(o_.chunks, z_.get());
    }

    const RingPlan& ring() const { return ring_; }

    // The pipelined or ring output must equal a serial run of the same block;
    // with one rank it is also compared with a host computation of a few tokens.
    std::string check() {
        forward(1, z_serial_.get());
        OSC_CUDA(cudaDeviceSynchronize());
        const std::size_t n = static_cast<std::size_t>(h_) * mr_;
        const bool bf16 = o_.common.dtype == DType::bf16;
        const double rtol = bf16 ? 5e-2 : 1e-3, atol = bf16 ? 5e-2 : 1e-3;
        const std::string mode = to_string(o_.mode);
        std::vector<float> got = download(z_.get(), n), ref = download(z_serial_.get(), n);
        CloseResult cmp = compare_close(ref, got, rtol, atol);
        if (!cmp.ok) throw WorkloadError("check FAILED: " + mode + " output differs from serial: " + cmp.message());
        if (ctx_.world != 1) return "passed (" + mode + " output equals serial within tolerance)";
        std::vector<float> x = download(x_.get(), n);
        std::vector<float> w1 = download(w1_.get(), static_cast<std::size_t>(fs_) * h_);
        std::vector<float> w2 = download(w2_.get(), static_cast<std::size_t>(h_) * fs_);
        std::vector<float> expect, actual;
        for (long long t : {0LL, mr_ / 3, mr_ - 1}) {
            std::vector<double> y(static_cast<std::size_t>(fs_), 0.0);
            for (int i = 0; i < fs_; ++i)
                for (int k = 0; k < h_; ++k)
                    y[static_cast<std::size_t>(i)] += static_cast<double>(w1[static_cast<std::size_t>(k) * fs_ + i]) *
                                                      x[static_cast<std::size_t>(t * h_ + k)];
            for (int i = 0; i < h_; ++i) {
                double z = 0;
                for (int k = 0; k < fs_; ++k)
                    z += static_cast<double>(w2[static_cast<std::size_t>(k) * h_ + i]) * y[static_cast<std::size_t>(k)];
                expect.push_back(static_cast<float>(z));
                actual.push_back(got[static_cast<std::size_t>(t * h_ + i)]);
            }
        }
        CloseResult host = compare_close(expect, actual, rtol, atol);
        if (!host.ok) throw WorkloadError("check FAILED: output differs from a host computation: " + host.message());
        return "passed (" + mode + " equals serial; 3 tokens match a host computation)";
    }

private:
    std::size_t bytes(long long elems) const { return static_cast<std::size_t>(elems) * elt_; }
    // Ring position q: rank q's tokens in the gathered token space, or with
    // one rank slice q of its own tokens.
    ChunkRange ring_slice(int q) const {
        return ring_.loopback ? chunk_range(mr_, ring_.positions, q) : ChunkRange{q * mr_, mr_};
    }
    // Where a ring slice sits among this rank's own tokens (x and the output).
    long long local_offset(const ChunkRange& s) const { return ring_.loopback ? s.offset : 0; }
    std::vector<float> download(const void* src, std::size_t count) const {
        return download_floats(src, count, o_.common.dtype);
    }

    const TpOptions& o_;
    RankContext& ctx_;
    std::size_t elt_;
    int h_, fs_;
    long long mr_, m_;
    RingPlan ring_;
    Stream compute_, comm_;
    Gemm gemm_;
    DeviceBuffer x_, z_, z_serial_, g_, p_, y_, w1_, w2_;
    std::vector<Event> gathered_, computed_;
    DeviceBuffer held_[2], partial_[2], incoming_[2];  // ring mode
    std::vector<Event> exchanged_, multiplied_, partial_ready_, passed_on_;
    Event start_, done_;
};

void run_tp(const TpOptions& o, RankContext& ctx) {
    validate_for_world(o, ctx.world);
    TpBlock block(o, ctx);
    if (ctx.prints()) {
        cudaDeviceProp prop{};
        OSC_CUDA(cudaGetDeviceProperties(&prop, ctx.device));
        std::printf("tp_overlap: launch: %s\n", ctx.launch.c_str());
        std::printf("tp_overlap: comm: %s; GPU %d: %s\n", ctx.coll->describe().c_str(), ctx.device, prop.name);
        std::printf("tp_overlap: block: hidden %d, ffn %d (%d per rank), %d tokens (%d per rank), %s\n", o.hidden,
                    o.ffn, o.ffn / ctx.world, o.tokens, o.tokens / ctx.world, to_string(o.common.dtype));
        if (o.mode == TpMode::serial)
            std::printf("tp_overlap: mode serial: all-gather, 2 GEMMs, reduce-scatter back to back\n");
        else if (o.mode == TpMode::ring)
            std::printf(
                "tp_overlap: mode ring: %d positions%s; %d send/receive exchanges per ring (gather and "
                "scatter), each under the GEMM of the chunk held\n",
                block.ring().positions, block.ring().loopback ? " (one rank: token slices sent to itself)" : "",
                block.ring().exchanges_per_ring());
        else
            std::printf(
                "tp_overlap: mode pipelined: %d chunks; the chunks' all-gathers are queued first, so "
                "each gather and reduce-scatter runs under another chunk's GEMMs\n",
                o.chunks);
    }
    auto times = run_steps(
        o.common, block.compute().get(), [&](int) { block.step(); }, o.common.verbose && ctx.prints());
    const std::string check = o.common.check ? block.check() : "skipped";
    if (!ctx.prints()) return;
    const double med = median(times);
    std::printf("tp_overlap: median step %.3f ms over %d steps\n", med, o.common.steps);
    std::printf("tp_overlap: check %s\n", check.c_str());
    std::printf(
        "SUMMARY tp_overlap mode=%s chunks=%d comm=%s world=%d dtype=%s hidden=%d ffn=%d tokens=%d "
        "median_step_ms=%.3f check=%s\n",
        to_string(o.mode), o.mode == TpMode::ring ? block.ring().positions : o.chunks, to_string(o.common.comm),
        ctx.world, to_string(o.common.dtype), o.hidden, o.ffn, o.tokens, med, o.common.check ? "passed" : "skipped");
    std::fflush(stdout);
}

}  // namespace
}  // namespace oscwl

int main(int argc, char** argv) {
    return oscwl::guarded_main("tp_overlap", [&] {
        const oscwl::TpOptions o = oscwl::parse_tp_options(argc, argv);
        oscwl::run_ranks(o.common, "tp_overlap", [&](oscwl::RankContext& ctx) { oscwl::run_tp(o, ctx); });
    });
}
