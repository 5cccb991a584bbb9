#!/usr/bin/env python3
"""PyTorch 2-D parallel reference: tensor parallel inside groups of --tp ranks,
data parallel across them, the layout of a DeviceMesh ("dp", "tp"). With 4
ranks and --tp 2: tensor-parallel groups {0,1} and {2,3}, data-parallel
groups {0,2} and {1,3}. A trace of it holds collectives of several process
groups, each numbered by its own Seq.

Each layer is a Megatron-style MLP block: a column-parallel linear (identity
forward, all-reduce of the input gradient in the tensor-parallel group
backward), GELU, a row-parallel linear (all-reduce of the output forward).
DistributedDataParallel over the data-parallel group all-reduces the weight
gradients in buckets during backward.

Run:  torchrun --standalone --nproc-per-node 4 reference_workloads/pytorch/mesh_2d.py
      (more ranks than GPUs: the ranks share the GPU and each gets its own
      NCCL_HOSTID, as ddp.py does)
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
    p.add_argument("--tp", type=int, default=2, help="ranks per tensor-parallel group (default 2)")
    p.add_argument("--hidden", type=int, default=1024, help="hidden size (default 1024)")
    p.add_argument("--ffn", type=int, default=4096, help="MLP inner size, split over the TP group (default 4096)")
    p.add_argument("--batch", type=int, default=1024, help="samples per data-parallel rank (default 1024)")
    p.add_argument("--layers", type=int, default=4, help="MLP blocks (default 4)")
    p.add_argument("--bucket-mb", type=float, default=8.0, help="DDP bucket_cap_mb (default 8)")
    setup.add_common_arguments(p)
    args = p.parse_args(argv)
    setup.check_common_arguments(p, args)
    if min(args.tp, args.hidden, args.ffn, args.batch, args.layers) < 1 or args.ffn % args.tp:
        p.error("--tp, --hidden, --ffn, --batch, --layers must be >= 1 and --ffn a multiple of --tp")
    return args


def mesh_groups(world, tp):
    """Rank lists of the tensor-parallel groups (consecutive ranks) and of the
    data-parallel groups (the same TP position in every TP group)."""
    dp = world // tp
    tp_lists = [[d * tp + i for i in range(tp)] for d in range(dp)]
    dp_lists = [[d * tp + i for d in range(dp)] for i in range(tp)]
    return tp_lists, dp_lists


def new_groups(dist, rank, lists, desc):
    mine = None
    for i, ranks in enumerate(lists):  # every rank creates every group, in the same order
        try:
            group = dist.new_group(ranks=ranks, group_desc=f"{desc}{i}")
        except TypeError:  # an older PyTorch without group_desc
            group = dist.new_group(ranks=ranks)
        if rank in ranks:
            mine = group
    return mine


def tensor_parallel_ops(torch, dist):
    class CopyToTensorParallel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, group):
            ctx.group = group
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad):
            grad = grad.contiguous().clone()
            dist.all_reduce(grad, group=ctx.group)
            return grad, None

    class ReduceFromTensorParallel(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, group):
            y = x.contiguous().clone()
            dist.all_reduce(y, group=group)
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    return CopyToTensorParallel.apply, ReduceFromTensorParallel.apply


def build_model(torch, dist, args, device, tp_group, tp_rank):
    copy_to_tp, reduce_from_tp = tensor_parallel_ops(torch, dist)
    shard = args.ffn // args.tp

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # Every TP rank draws the full matrices from the same seed and keeps its slice.
            w1 = torch.empty(args.ffn, args.hidden).uniform_(-(3.0 / args.hidden) ** 0.5, (3.0 / args.hidden) ** 0.5)
            w2 = torch.empty(args.hidden, args.ffn).uniform_(-(3.0 / args.ffn) ** 0.5, (3.0 / args.ffn) ** 0.5)
            self.w1 = torch.nn.Parameter(w1[tp_rank * shard:(tp_rank + 1) * shard].contiguous().to(device))
            self.w2 = torch.nn.Parameter(w2[:, tp_rank * shard:(tp_rank + 1) * shard].contiguous().to(device))

        def forward(self, x):
            h = torch.nn.functional.gelu(torch.nn.functional.linear(copy_to_tp(x, tp_group), self.w1))
            return x + reduce_from_tp(torch.nn.functional.linear(h, self.w2), tp_group)

    return torch.nn.Sequential(*[Block() for _ in range(args.layers)])


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
    except ImportError as e:
        print(f"mesh_2d.py: PyTorch is required ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("mesh_2d.py: needs a CUDA GPU", file=sys.stderr)
        return 1
    job = setup.start(torch, dist)
    if job.world % args.tp:
        print(f"mesh_2d.py: {job.world} ranks do not split into tensor-parallel groups of {args.tp}", file=sys.stderr)
        return 2
    tp_lists, dp_lists = mesh_groups(job.world, args.tp)
    tp_group = new_groups(dist, job.rank, tp_lists, "tp")
    dp_group = new_groups(dist, job.rank, dp_lists, "dp")
    tp_rank, dp_index = job.rank % args.tp, job.rank // args.tp

    torch.manual_seed(args.seed)  # the same full weights everywhere; each TP rank keeps its slice
    model = build_model(torch, dist, args, job.device, tp_group, tp_rank)
    ddp = DDP(model, device_ids=[job.device.index], process_group=dp_group, bucket_cap_mb=args.bucket_mb)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    # The TP ranks of one data-parallel replica see the same samples.
    gen = torch.Generator(device=job.device).manual_seed(args.seed + 1000 + dp_index)
    x = torch.rand(args.batch, args.hidden, device=job.device, generator=gen) * 2 - 1

    def train_step(name):
        with setup.named_range(torch, name):
            opt.zero_grad(set_to_none=False)
            with setup.named_range(torch, "forward"):
                loss = 0.5 * ddp(x).pow(2).mean()
            with setup.named_range(torch, "backward"):
                loss.backward()
            with setup.named_range(torch, "optimizer"):
                opt.step()
            torch.cuda.synchronize()

    times = setup.run_steps(torch, train_step, args, job.rank)

    # Replicas of one TP position hold the same weights after every step.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    checksum = torch.stack([flat.sum(), flat.abs().sum()]).double()
    gathered = [torch.zeros_like(checksum) for _ in range(job.world // args.tp)]
    dist.all_gather(gathered, checksum, group=dp_group)
    ok = all(torch.allclose(g, gathered[0], rtol=1e-6) for g in gathered)
    ok = setup.all_ranks_ok(torch, dist, ok, job.device)
    if job.rank == 0:
        med = statistics.median(times)
        print(f"mesh_2d.py: torch {torch.__version__}, {job.world} ranks: tensor-parallel groups {tp_lists}, "
              f"data-parallel groups {dp_lists}")
        if job.shared:
            print("mesh_2d.py: " + job.describe_sharing(torch))
        print(f"mesh_2d.py: median step {med:.3f} ms over {args.steps} steps")
        print(f"SUMMARY mesh_2d.py world={job.world} tp={args.tp} hidden={args.hidden} ffn={args.ffn} "
              f"batch={args.batch} layers={args.layers} median_step_ms={med:.3f} check={'passed' if ok else 'FAILED'}")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
