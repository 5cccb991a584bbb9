#!/usr/bin/env python3
"""PyTorch FSDP2 reference: fully_shard on every linear layer and on the
root, with explicit forward and backward prefetch of the next --prefetch
layers, the same MLP as fsdp_prefetch so their captures compare. Each layer's
all-gather is issued ahead of its compute; its reduce-scatter after its
backward.

Run:  torchrun --standalone --nproc-per-node 2 reference_workloads/pytorch/fsdp2.py --prefetch 1
      (more ranks than GPUs: the ranks share the GPU, as ddp.py does)
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distributed_setup as setup  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hidden", type=int, default=2048, help="hidden size (default 2048)")
    p.add_argument("--batch", type=int, default=1024, help="samples per rank (default 1024)")
    p.add_argument("--layers", type=int, default=8, help="linear layers, each its own FSDP unit (default 8)")
    p.add_argument("--prefetch", type=int, default=1,
                   help="layers whose all-gather is issued ahead, forward and backward (0: FSDP2's own order)")
    setup.add_common_arguments(p)
    args = p.parse_args(argv)
    setup.check_common_arguments(p, args)
    if min(args.hidden, args.batch, args.layers) < 1 or args.prefetch < 0:
        p.error("--hidden, --batch, --layers must be >= 1 and --prefetch >= 0")
    return args


def import_fully_shard():
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:  # PyTorch before 2.6 kept it here
        from torch.distributed._composable.fsdp import fully_shard
    return fully_shard


def set_prefetch(layers, depth):
    """Forward: layer i prefetches i+1..i+depth; backward: i-1..i-depth."""
    if depth == 0:
        return "FSDP2's default"
    try:
        for i, layer in enumerate(layers):
            layer.set_modules_to_forward_prefetch(layers[i + 1:i + 1 + depth])
            layer.set_modules_to_backward_prefetch(list(reversed(layers[max(0, i - depth):i])))
    except AttributeError:  # a PyTorch whose FSDP2 has no explicit prefetch yet
        return "FSDP2's default (this PyTorch has no set_modules_to_forward_prefetch)"
    return f"explicit, {depth} layer(s) ahead"


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        fully_shard = import_fully_shard()
    except ImportError as e:
        print(f"fsdp2.py: PyTorch with FSDP2 is required ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("fsdp2.py: needs a CUDA GPU", file=sys.stderr)
        return 1
    job = setup.start(torch, dist)
    torch.manual_seed(args.seed)
    layers = [torch.nn.Linear(args.hidden, args.hidden, bias=False) for _ in range(args.layers)]
    bound = (3.0 / args.hidden) ** 0.5
    with torch.no_grad():
        for layer in layers:
            layer.weight.uniform_(-bound, bound)
    model = torch.nn.Sequential(*layers).to(job.device)
    for layer in layers:
        fully_shard(layer)
    fully_shard(model)
    prefetch = set_prefetch(layers, args.prefetch)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator(device=job.device).manual_seed(args.seed + 1000 + job.rank)
    x = torch.rand(args.batch, args.hidden, device=job.device, generator=gen) * 2 - 1

    def train_step(name):
        with setup.named_range(torch, name):
            with setup.named_range(torch, "forward"):
                loss = 0.5 * model(x).pow(2).mean()
            with setup.named_range(torch, "backward"):
                loss.backward()
            with setup.named_range(torch, "optimizer"):
                opt.step()
                opt.zero_grad()
            torch.cuda.synchronize()

    times = setup.run_steps(torch, train_step, args, job.rank)

    finite = all(bool(torch.isfinite(p.to_local()).all()) for p in model.parameters())
    ok = setup.all_ranks_ok(torch, dist, finite, job.device)
    if job.rank == 0:
        med = statistics.median(times)
        print(f"fsdp2.py: torch {torch.__version__}, {job.world} rank(s), {args.layers} FSDP units, prefetch {prefetch}")
        if job.shared:
            print("fsdp2.py: " + job.describe_sharing(torch))
        print(f"fsdp2.py: median step {med:.3f} ms over {args.steps} steps")
        print(f"SUMMARY fsdp2.py world={job.world} prefetch={args.prefetch} hidden={args.hidden} batch={args.batch} "
              f"layers={args.layers} median_step_ms={med:.3f} check={'passed' if ok else 'FAILED'}")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
