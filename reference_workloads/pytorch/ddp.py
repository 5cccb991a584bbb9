#!/usr/bin/env python3
"""PyTorch DDP reference for ddp_overlap: the same L-layer linear MLP
(hidden x hidden weights, no bias, loss 0.5 * mean(output^2)), trained with
torch.nn.parallel.DistributedDataParallel using bucket_cap_mb and
gradient_as_bucket_view, so a capture of this job can be compared with a
capture of ddp_overlap --mode bucketed.

Steps are NVTX ranges named "step N" (and "forward", "backward",
"optimizer"), emitted through torch.cuda.nvtx and, with --torch-profiler,
also as torch.profiler.record_function ranges in a Kineto trace.

Run:  torchrun --nproc-per-node 8 reference_workloads/pytorch/ddp.py --bucket-mb 25
One GPU, real collectives: torchrun --standalone --nproc-per-node 2 reference_workloads/pytorch/ddp.py
      (more ranks than GPUs: the ranks share the GPU and each gets its own NCCL_HOSTID,
      so NCCL connects them through its network transport, as ddp_overlap --ranks does)
One GPU, one rank: python3 reference_workloads/pytorch/ddp.py  (DDP's all-reduces return at once)
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distributed_setup as setup  # noqa: E402
from distributed_setup import shared_gpu_nccl_env  # noqa: E402,F401 (tests/workloads reads it from here)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hidden", type=int, default=1024, help="hidden size (default 1024)")
    p.add_argument("--batch", type=int, default=1024, help="samples per rank (default 1024)")
    p.add_argument("--layers", type=int, default=16, help="linear layers (default 16)")
    p.add_argument("--steps", type=int, default=20, help="measured steps (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="warm-up steps (default 5)")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket_cap_mb (default 25)")
    p.add_argument("--no-bucket-view", action="store_true",
                   help="gradient_as_bucket_view=False (copies gradients into buckets)")
    p.add_argument("--lr", type=float, default=0.1, help="SGD learning rate on the mean-squared loss (default 0.1)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--torch-profiler", metavar="DIR",
                   help="also write a PyTorch profiler (Kineto) trace per rank into DIR")
    args = p.parse_args(argv)
    for name in ("hidden", "batch", "layers", "steps"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be >= 1")
    if args.warmup < 0 or args.bucket_mb < 0:
        p.error("--warmup and --bucket-mb must be >= 0")
    return args


def build_model(torch, args, device, dtype):
    layers = [torch.nn.Linear(args.hidden, args.hidden, bias=False) for _ in range(args.layers)]
    model = torch.nn.Sequential(*layers).to(device=device, dtype=dtype)
    bound = (3.0 / args.hidden) ** 0.5  # same scale as ddp_overlap: keeps |activations| steady
    with torch.no_grad():
        for layer in layers:
            layer.weight.uniform_(-bound, bound)
    return model


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
    except ImportError as e:
        print(f"ddp.py: PyTorch is required ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("ddp.py: needs a CUDA GPU", file=sys.stderr)
        return 1

    job = setup.start(torch, dist)
    rank, world, device, shared = job.rank, job.world, job.device, job.shared

    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    torch.manual_seed(args.seed)  # identical initial replicas (DDP also broadcasts rank 0's)
    model = build_model(torch, args, device, dtype)
    ddp = DDP(model, device_ids=[device.index], bucket_cap_mb=args.bucket_mb,
              gradient_as_bucket_view=not args.no_bucket_view)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr)
    gen = torch.Generator(device=device).manual_seed(args.seed + 1000 + rank)
    x = torch.rand(args.batch, args.hidden, device=device, dtype=dtype, generator=gen) * 2 - 1

    nvtx = torch.cuda.nvtx
    record = torch.profiler.record_function

    def train_step(name):
        nvtx.range_push(name)
        with record(name):
            opt.zero_grad(set_to_none=False)
            nvtx.range_push("forward")
            with record("forward"):
                out = ddp(x)
                loss = 0.5 * out.float().pow(2).mean()
            nvtx.range_pop()
            nvtx.range_push("backward")
            with record("backward"):
                loss.backward()  # DDP all-reduces buckets as their gradients become ready
            nvtx.range_pop()
            nvtx.range_push("optimizer")
            with record("optimizer"):
                opt.step()
            nvtx.range_pop()
        torch.cuda.synchronize()
        nvtx.range_pop()

    for i in range(args.warmup):
        train_step(f"warmup {i}")

    profiler = None
    if args.torch_profiler:
        os.makedirs(args.torch_profiler, exist_ok=True)
        act = torch.profiler.ProfilerActivity
        profiler = torch.profiler.profile(
            activities=[act.CPU, act.CUDA],
            on_trace_ready=torch.profiler.tensorboard_trace_handler(
                args.torch_profiler, worker_name=f"rank{rank}"))
        profiler.start()

    times = []
    for i in range(args.steps):
        start = time.perf_counter()
        train_step(f"step {i}")
        times.append((time.perf_counter() - start) * 1e3)
        if profiler is not None:
            profiler.step()
    if profiler is not None:
        profiler.stop()

    # The same check as ddp_overlap: after the all-reduce, every replica holds
    # identical weights.
    flat = torch.cat([p.detach().reshape(-1).float() for p in model.parameters()])
    checksum = torch.stack([flat.sum(), flat.abs().sum()]).double()
    gathered = [torch.zeros_like(checksum) for _ in range(world)]
    dist.all_gather(gathered, checksum)
    ok = all(torch.equal(g, gathered[0]) for g in gathered)

    if rank == 0:
        med = statistics.median(times)
        print(f"ddp.py: torch {torch.__version__}, {world} rank(s), bucket_cap_mb={args.bucket_mb}, "
              f"gradient_as_bucket_view={not args.no_bucket_view}")
        if shared:
            print("ddp.py: " + job.describe_sharing(torch))
        print(f"ddp.py: median step {med:.3f} ms over {args.steps} steps")
        print(f"ddp.py: check {'passed (weights identical on all ranks)' if ok else 'FAILED'}")
        print(f"SUMMARY ddp.py bucket_mb={args.bucket_mb:g} world={world} dtype={args.dtype} "
              f"hidden={args.hidden} batch={args.batch} layers={args.layers} median_step_ms={med:.3f} "
              f"check={'passed' if ok else 'FAILED'}")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
