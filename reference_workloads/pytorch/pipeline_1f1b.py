#!/usr/bin/env python3
"""PyTorch pipeline-parallel reference: torch.distributed.pipelining with one
stage per rank and the 1F1B schedule (or GPipe), --microbatches micro-batches
a step. Activations go forward and their gradients back by NCCL send/receive,
the pattern pp_overlap reproduces in CUDA C++.

Run:  torchrun --standalone --nproc-per-node 2 reference_workloads/pytorch/pipeline_1f1b.py
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
    p.add_argument("--schedule", choices=["1f1b", "gpipe"], default="1f1b", help="pipeline schedule (default 1f1b)")
    p.add_argument("--hidden", type=int, default=2048, help="hidden size (default 2048)")
    p.add_argument("--batch", type=int, default=2048, help="samples per step, split into micro-batches (default 2048)")
    p.add_argument("--microbatches", type=int, default=8, help="micro-batches per step (default 8)")
    p.add_argument("--layers-per-stage", type=int, default=4, help="linear layers on each rank (default 4)")
    setup.add_common_arguments(p)
    args = p.parse_args(argv)
    setup.check_common_arguments(p, args)
    if min(args.hidden, args.batch, args.microbatches, args.layers_per_stage) < 1 or args.batch % args.microbatches:
        p.error("sizes must be >= 1 and --batch a multiple of --microbatches")
    return args


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        import torch.distributed as dist
        from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
    except ImportError as e:
        print(f"pipeline_1f1b.py: PyTorch with torch.distributed.pipelining is required ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("pipeline_1f1b.py: needs a CUDA GPU", file=sys.stderr)
        return 1
    job = setup.start(torch, dist)
    torch.manual_seed(args.seed + job.rank)
    layers = []
    bound = (3.0 / args.hidden) ** 0.5
    for _ in range(args.layers_per_stage):
        layer = torch.nn.Linear(args.hidden, args.hidden, bias=False)
        with torch.no_grad():
            layer.weight.uniform_(-bound, bound)
        layers += [layer, torch.nn.ReLU()] if job.rank < job.world - 1 else [layer]
    stage_module = torch.nn.Sequential(*layers).to(job.device)
    stage = PipelineStage(stage_module, stage_index=job.rank, num_stages=job.world, device=job.device)

    def loss_fn(output, target):
        return 0.5 * (output.float() - target).pow(2).mean()

    schedule_class = Schedule1F1B if args.schedule == "1f1b" else ScheduleGPipe
    schedule = schedule_class(stage, n_microbatches=args.microbatches, loss_fn=loss_fn)
    opt = torch.optim.SGD(stage_module.parameters(), lr=0.01)
    gen = torch.Generator(device=job.device).manual_seed(args.seed + 1000)
    x = torch.rand(args.batch, args.hidden, device=job.device, generator=gen) * 2 - 1
    target = torch.zeros(args.batch, args.hidden, device=job.device)
    last_losses = []

    def train_step(name):
        with setup.named_range(torch, name):
            opt.zero_grad()
            if job.rank == 0:
                schedule.step(x)
            elif job.rank == job.world - 1:
                losses = []
                schedule.step(target=target, losses=losses)
                last_losses[:] = [float(v) for v in losses]
            else:
                schedule.step()
            with setup.named_range(torch, "optimizer"):
                opt.step()
            torch.cuda.synchronize()

    times = setup.run_steps(torch, train_step, args, job.rank)

    ok = job.rank != job.world - 1 or (len(last_losses) == args.microbatches and
                                       all(v == v and v < float("inf") for v in last_losses))
    ok = setup.all_ranks_ok(torch, dist, ok, job.device)
    if job.rank == 0:
        med = statistics.median(times)
        print(f"pipeline_1f1b.py: torch {torch.__version__}, {job.world} stage(s), schedule {args.schedule}, "
              f"{args.microbatches} micro-batches")
        if job.shared:
            print("pipeline_1f1b.py: " + job.describe_sharing(torch))
        print(f"pipeline_1f1b.py: median step {med:.3f} ms over {args.steps} steps")
        print(f"SUMMARY pipeline_1f1b.py world={job.world} schedule={args.schedule} microbatches={args.microbatches} "
              f"hidden={args.hidden} batch={args.batch} layers_per_stage={args.layers_per_stage} "
              f"median_step_ms={med:.3f} check={'passed' if ok else 'FAILED'}")
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
