#include "reference_workloads/runtime/collectives.h"

#include <algorithm>
#include <string>

#include "reference_workloads/runtime/cuda_check.h"

namespace oscwl {
namespace {

ncclDataType_t nccl_type(DType d) { return d == DType::bf16 ? ncclBfloat16 : ncclFloat32; }

constexpr std::size_t kStagingBytes = 64u << 20;

}  // namespace

std::vector<std::vector<std::uint64_t>> Collectives::gather_u64(const std::vector<std::uint64_t>& mine,
                                                                cudaStream_t stream) {
    const std::size_t bytes = mine.size() * sizeof(std::uint64_t);
    const int n = world();
    DeviceBuffer send(std::max<std::size_t>(bytes, 1)), recv(std::max<std::size_t>(bytes * n, 1));
    OSC_CUDA(cudaMemcpyAsync(send.get(), mine.data(), bytes, cudaMemcpyHostToDevice, stream));
    all_gather_bytes(send.get(), recv.get(), bytes, stream);
    std::vector<std::uint64_t> flat(mine.size() * static_cast<std::size_t>(n));
    OSC_CUDA(cudaMemcpyAsync(flat.data(), recv.get(), bytes * n, cudaMemcpyDeviceToHost, stream));
    OSC_CUDA(cudaStreamSynchronize(stream));
    std::vector<std::vector<std::uint64_t>> out(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r)
        out[static_cast<std::size_t>(r)].assign(flat.begin() + static_cast<long>(r * mine.size()),
                                                flat.begin() + static_cast<long>((r + 1) * mine.size()));
    return out;
}

NcclCollectives::~NcclCollectives() {
    if (comm_) ncclCommDestroy(comm_);
}

std::string NcclCollectives::describe() const {
    int major = 0;
    ncclGetVersion(&major);
    return "nccl " + std::to_string(major / 10000) + "." + std::to_string(major / 100 % 100) + "." +
           std::to_string(major % 100) + ", " + std::to_string(world_) + " ranks";
}

void NcclCollectives::all_reduce_sum(void* buf, std::size_t count, DType dtype, cudaStream_t stream) {
    OSC_NCCL(ncclAllReduce(buf, buf, count, nccl_type(dtype), ncclSum, comm_, stream));
}

void NcclCollectives::all_gather(const void* send, void* recv, std::size_t send_count, DType dtype,
                                 cudaStream_t stream) {
    OSC_NCCL(ncclAllGather(send, recv, send_count, nccl_type(dtype), comm_, stream));
}

void NcclCollectives::reduce_scatter_sum(const void* send, void* recv, std::size_t recv_count, DType dtype,
                                         cudaStream_t stream) {
    OSC_NCCL(ncclReduceScatter(send, recv, recv_count, nccl_type(dtype), ncclSum, comm_, stream));
}

void NcclCollectives::send_recv(const std::vector<P2POp>& ops, DType dtype, cudaStream_t stream) {
    // The group is always closed, even when an operation in it is refused,
    // so a failure reports the refused call instead of a later "group open".
    OSC_NCCL(ncclGroupStart());
    ncclResult_t first = ncclSuccess;
    const char* failed = "";
    for (const P2POp& op : ops) {
        const ncclResult_t rc = op.kind == P2POp::Kind::send
                                    ? ncclSend(op.buf, op.count, nccl_type(dtype), op.peer, comm_, stream)
                                    : ncclRecv(op.buf, op.count, nccl_type(dtype), op.peer, comm_, stream);
        if (rc != ncclSuccess && first == ncclSuccess) {
            first = rc;
            failed = op.kind == P2POp::Kind::send ? "ncclSend" : "ncclRecv";
        }
    }
    OSC_NCCL(ncclGroupEnd());
    if (first != ncclSuccess) throw_call_error("NCCL", failed, __FILE__, __LINE__, ncclGetErrorString(first));
}

void NcclCollectives::all_gather_bytes(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) {
    OSC_NCCL(ncclAllGather(send, recv, bytes, ncclUint8, comm_, stream));
}

std::string CopyCollectives::describe() const {
    return "copies (1 rank; each collective is a device->host + host->device copy of its bytes)";
}

void CopyCollectives::round_trip(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
    auto it = staging_.find(stream);
    if (it == staging_.end()) it = staging_.emplace(stream, PinnedBuffer(kStagingBytes)).first;
    char* host = static_cast<char*>(it->second.get());
    for (std::size_t off = 0; off < bytes; off += kStagingBytes) {
        const std::size_t n = std::min(kStagingBytes, bytes - off);
        OSC_CUDA(cudaMemcpyAsync(host, static_cast<const char*>(src) + off, n, cudaMemcpyDeviceToHost, stream));
        OSC_CUDA(cudaMemcpyAsync(static_cast<char*>(dst) + off, host, n, cudaMemcpyHostToDevice, stream));
    }
}

void CopyCollectives::all_reduce_sum(void* buf, std::size_t count, DType dtype, cudaStream_t stream) {
    round_trip(buf, buf, count * dtype_bytes(dtype), stream);
}

void CopyCollectives::all_gather(const void* send, void* recv, std::size_t send_count, DType dtype,
                                 cudaStream_t stream) {
    round_trip(send, recv, send_count * dtype_bytes(dtype), stream);
}

void CopyCollectives::reduce_scatter_sum(const void* send, void* recv, std::size_t recv_count, DType dtype,
                                         cudaStream_t stream) {
    round_trip(send, recv, recv_count * dtype_bytes(dtype), stream);
}

void CopyCollectives::send_recv(const std::vector<P2POp>& ops, DType dtype, cudaStream_t stream) {
    std::vector<const P2POp*> sends, recvs;
    for (const P2POp& op : ops) {
        if (op.peer != 0)
            throw WorkloadError("--comm copies has one rank, but a send/receive addresses rank " +
                                std::to_string(op.peer));
        (op.kind == P2POp::Kind::send ? sends : recvs).push_back(&op);
    }
    if (sends.size() != recvs.size())
        throw WorkloadError("--comm copies: a send/receive group has " + std::to_string(sends.size()) +
                            " send(s) to itself but " + std::to_string(recvs.size()) + " receive(s)");
    for (std::size_t i = 0; i < sends.size(); ++i) {
        if (sends[i]->count != recvs[i]->count)
            throw WorkloadError("--comm copies: send of " + std::to_string(sends[i]->count) +
                                " elements paired with a receive of " + std::to_string(recvs[i]->count));
        round_trip(sends[i]->buf, recvs[i]->buf, sends[i]->count * dtype_bytes(dtype), stream);
    }
}

void CopyCollectives::all_gather_bytes(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) {
    round_trip(send, recv, bytes, stream);
}

}  // namespace oscwl
