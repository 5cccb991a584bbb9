#!/usr/bin/env python3
"""Writes PyTorch-profiler-like traces of a DDP training job, one per rank,
for benchmarks that need big Kineto traces (bench/hta_facade.py).

Each step (a ProfilerStep#N annotation, on the host and on the GPU) runs
forward and backward over the layers: per kernel an aten operator, its
cudaLaunchKernel, the kernel on the compute stream and the launch's flow
events, as torch.profiler writes them; gradient buckets are all-reduced by
NCCL kernels on a second stream, launched through cuLaunchKernel; a few
copies and memsets; times with nanosecond fractions of a microsecond, as
recent PyTorch writes them, relative to baseTimeNanoseconds.

    pytorch_trace_synth.py OUT_DIR [--ranks 8] [--mb-per-rank 29] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

KERNELS = [
    "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>)",
]
OPS = ["aten::mm", "aten::addmm", "aten::gelu", "aten::native_layer_norm", "aten::sum"]
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


class Writer:
    """Events as text, times as the decimal microseconds Kineto writes."""

    def __init__(self, out, base_us: int) -> None:
        self.out = out
        self.base_us = base_us
        self.first = True

    def time(self, ns: int) -> str:
        return f"{self.base_us + ns // 1000}.{ns % 1000:03d}"

    def event(self, text: str) -> None:
        self.out.write(("" if self.first else ",\n") + text)
        self.first = False

    def x(self, cat: str, name: str, pid: int, tid: int, ts: int, dur: int, args: dict) -> None:
        self.event(
            f'{{"ph": "X", "cat": "{cat}", "name": {json.dumps(name)}, "pid": {pid}, "tid": {tid}, '
            f'"ts": {self.time(ts)}, "dur": {dur // 1000}.{dur % 1000:03d}, "args": {json.dumps(args)}}}'
        )

    def flow(self, phase: str, correlation: int, pid: int, tid: int, ts: int) -> None:
        binding = ', "bp": "e"' if phase == "f" else ""
        self.event(
            f'{{"ph": "{phase}", "id": {correlation}, "pid": {pid}, "tid": {tid}, "ts": {self.time(ts)}, '
            f'"cat": "ac2g", "name": "ac2g"{binding}}}'
        )


def write_rank(path: Path, rank: int, ranks: int, target_bytes: int, seed: int) -> None:
    rng = random.Random(seed * 1000 + rank)
    pid, tid = 1000 + rank, 1000 + rank
    with open(path, "w") as out:
        out.write(
            json.dumps({"schemaVersion": 1, "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": ranks}})[:-1]
            + ', "baseTimeNanoseconds": 1790857026000000000, "traceEvents": [\n'
        )
        w = Writer(out, base_us=4_706_350_000_000)
        host, correlation, external, step = 1_000_000, 1, 1, 0
        free = {7: 0, 13: 0}
        while out.tell() < target_bytes:
            step_start = host
            step_gpu_start = None
            for phase in ("forward", "backward"):
                for layer in range(24):
                    for k in range(4):
                        name = KERNELS[(layer + k) % len(KERNELS)]
                        op_dur = rng.randint(8_000, 40_000)
                        w.x("cpu_op", OPS[k % len(OPS)], pid, tid, host, op_dur,
                            {"External id": external, "Sequence number": layer, "Fwd thread id": 0})
                        call_start = host + rng.randint(1_000, 4_000)
                        call_dur = rng.randint(2_500, 9_000)
                        w.x("cuda_runtime", "cudaLaunchKernel", pid, tid, call_start, call_dur,
                            {"External id": external, "cbid": 211, "correlation": correlation})
                        start = max(call_start + rng.randint(3_000, 9_000), free[7] + rng.randint(500, 3_000))
                        length = rng.randint(900, 60_000 if phase == "backward" else 30_000)
                        w.x("kernel", name, 0, 7, start, length,
                            {"External id": external, "queued": 0, "device": 0, "context": 1, "stream": 7,
                             "correlation": correlation, "registers per thread": 64, "shared memory": 0,
                             "blocks per SM": 1.5, "warps per SM": 6.0, "grid": [132, 1, 1], "block": [128, 1, 1],
                             "est. achieved occupancy %": 0})
                        w.flow("s", correlation, pid, tid, call_start)
                        w.flow("f", correlation, 0, 7, start)
                        step_gpu_start = step_gpu_start if step_gpu_start is not None else start
                        free[7] = start + length
                        host = call_start + call_dur + rng.randint(500, 5_000)
                        correlation += 1
                        external += 1
                    if phase == "backward" and layer % 6 == 5:
                        # A DDP bucket: its all-reduce on the NCCL stream.
                        w.x("cpu_op", "nccl:all_reduce", pid, tid, host, 30_000, {"External id": external})
                        w.x("cuda_driver", "cuLaunchKernel", pid, tid, host + 2_000, 9_000,
                            {"External id": external, "cbid": 307, "correlation": correlation})
                        start = max(host + 15_000, free[13])
                        length = rng.randint(400_000, 2_500_000)
                        w.x("kernel", NCCL, 0, 13, start, length,
                            {"External id": external, "device": 0, "context": 1, "stream": 13,
                             "correlation": correlation, "Collective name": "allreduce", "In msg nelems": 6553600,
                             "Out msg nelems": 6553600, "Group size": ranks, "dtype": "Float"})
                        free[13] = start + length
                        host += 32_000
                        correlation += 1
                        external += 1
                if phase == "forward":
                    w.x("cuda_runtime", "cudaMemsetAsync", pid, tid, host, 4_000, {"correlation": correlation})
                    w.x("gpu_memset", "Memset (Device)", 0, 7, max(host + 6_000, free[7]), 1_500,
                        {"device": 0, "context": 1, "stream": 7, "correlation": correlation, "bytes": 4})
                    free[7] = max(host + 6_000, free[7]) + 1_500
                    correlation += 1
                    host += 5_000
            w.x("cuda_runtime", "cudaMemcpyAsync", pid, tid, host, 12_000, {"correlation": correlation})
            start = max(host + 8_000, free[7], free[13])
            w.x("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 0, 7, start, 3_000,
                {"device": 0, "context": 1, "stream": 7, "correlation": correlation, "bytes": 4})
            free[7] = start + 3_000
            correlation += 1
            host = max(host + 15_000, free[7] - 50_000)
            w.x("user_annotation", f"ProfilerStep#{step}", pid, tid, step_start, host - step_start, {"External id": external})
            w.x("gpu_user_annotation", f"ProfilerStep#{step}", 0, 7, step_gpu_start, free[7] - step_gpu_start,
                {"External id": external})
            external += 1
            step += 1
            host += 200_000
        out.write('\n], "traceName": "' + path.name + '", "displayTimeUnit": "ms"}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--mb-per-rank", type=float, default=29)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for rank in range(args.ranks):
        path = args.out / f"rank{rank}.pt.trace.json"
        write_rank(path, rank, args.ranks, int(args.mb_per_rank * 1e6), args.seed)
        print(path)


if __name__ == "__main__":
    main()
