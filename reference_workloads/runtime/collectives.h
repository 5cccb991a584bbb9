// The collectives a workload issues, behind one interface so that the same
// schedule runs on NCCL or on the one-GPU stand-in ("copies").
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reference_workloads/runtime/device_memory.h"
#include "reference_workloads/support/workload_options.h"

namespace oscwl {

// One point-to-point operation of a send/receive group. Counts are elements
// of the group's dtype.
struct P2POp {
    enum class Kind { send, recv };
    Kind kind;
    int peer;
    void* buf;  // read by a send, written by a receive
    std::size_t count;
    static P2POp send_to(int peer, const void* buf, std::size_t count) {
        return {Kind::send, peer, const_cast<void*>(buf), count};
    }
    static P2POp recv_from(int peer, void* buf, std::size_t count) { return {Kind::recv, peer, buf, count}; }
};

class Collectives {
public:
    virtual ~Collectives() = default;
    virtual int rank() const = 0;
    virtual int world() const = 0;
    virtual std::string describe() const = 0;

    // Counts are elements of `dtype`; all calls are asynchronous on `stream`.
    virtual void all_reduce_sum(void* buf, std::size_t count, DType dtype, cudaStream_t stream) = 0;
    // recv holds world() blocks of send_count elements, in rank order.
    virtual void all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, cudaStream_t stream) = 0;
    // send holds world() blocks of recv_count elements; block rank() is summed into recv.
    virtual void reduce_scatter_sum(const void* send, void* recv, std::size_t recv_count, DType dtype,
                                    cudaStream_t stream) = 0;
    // Sends and receives issued together (one NCCL group, so one kernel):
    // a rank may send to and receive from the same peer in one group without
    // deadlock. A rank's sends to a peer match that peer's receives from it
    // in issue order, so every rank must issue its groups in a matching order.
    virtual void send_recv(const std::vector<P2POp>& ops, DType dtype, cudaStream_t stream) = 0;

    // Synchronous helper for result checks: every rank's values, rank order.
    std::vector<std::vector<std::uint64_t>> gather_u64(const std::vector<std::uint64_t>& mine, cudaStream_t stream);

protected:
    virtual void all_gather_bytes(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) = 0;
};

class NcclCollectives : public Collectives {
public:
    NcclCollectives(ncclComm_t comm, int rank, int world) : comm_(comm), rank_(rank), world_(world) {}
    ~NcclCollectives() override;
    int rank() const override { return rank_; }
    int world() const override { return world_; }
    std::string describe() const override;
    void all_reduce_sum(void* buf, std::size_t count, DType dtype, cudaStream_t stream) override;
    void all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, cudaStream_t stream) override;
    void reduce_scatter_sum(const void* send, void* recv, std::size_t recv_count, DType dtype,
                            cudaStream_t stream) override;
    void send_recv(const std::vector<P2POp>& ops, DType dtype, cudaStream_t stream) override;

protected:
    void all_gather_bytes(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) override;

private:
    ncclComm_t comm_;
    int rank_, world_;
};

// World size 1. Each collective becomes a device->host copy of the bytes it
// would send followed by a host->device copy into its output, through pinned
// memory on the caller's stream. The copies run on copy engines, so they
// overlap kernels on other streams the way NCCL traffic would, and the
// result equals the one-rank collective (identity). A send/receive group can
// only address rank 0 (itself): the k-th send is paired with the k-th
// receive and becomes one round trip from the send buffer to the receive
// buffer, what NCCL's send to self would deliver.
class CopyCollectives : public Collectives {
public:
    int rank() const override { return 0; }
    int world() const override { return 1; }
    std::string describe() const override;
    void all_reduce_sum(void* buf, std::size_t count, DType dtype, cudaStream_t stream) override;
    void all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, cudaStream_t stream) override;
    void reduce_scatter_sum(const void* send, void* recv, std::size_t recv_count, DType dtype,
                            cudaStream_t stream) override;
    void send_recv(const std::vector<P2POp>& ops, DType dtype, cudaStream_t stream) override;

protected:
    void all_gather_bytes(const void* send, void* recv, std::size_t bytes, cudaStream_t stream) override;

private:
    void round_trip(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);
    // One staging buffer per stream: copies on one stream run in order, so
    // reusing its buffer is safe; sharing one across streams would not be.
    std::map<cudaStream_t, PinnedBuffer> staging_;
};

}  // namespace oscwl
