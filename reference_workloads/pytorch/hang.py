#!/usr/bin/env python3
"""A real collective hang for `overlapscope hang`: every rank all-reduces
once per step until step --skip-step, where rank --skip-rank skips its
all-reduce (as a rank stuck in its data loader would) and the others wait in
theirs. PyTorch's Flight Recorder is on: --seconds-to-dump after the skipped
collective every rank writes its ring buffer as JSON (fr_rank<N>.json in
--dump-dir), and when the NCCL watchdog's --timeout expires it dumps again by
itself (nccl_trace_rank_<N>, pickled) and stops the job.

Run:  torchrun --standalone --nproc-per-node 2 reference_workloads/pytorch/hang.py --dump-dir /tmp/fr
The job ends with an error on purpose: the waiting ranks time out.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import distributed_setup as setup  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dump-dir", required=True, help="folder for the Flight Recorder dumps")
    p.add_argument("--steps", type=int, default=6, help="steps with an all-reduce before the hang (default 6)")
    p.add_argument("--skip-rank", type=int, default=1, help="the rank that skips a collective (default 1)")
    p.add_argument("--timeout", type=float, default=20.0, help="NCCL watchdog timeout in seconds (default 20)")
    p.add_argument("--seconds-to-dump", type=float, default=3.0,
                   help="seconds after the skipped collective before each rank dumps its Flight Recorder (default 3)")
    p.add_argument("--elements", type=int, default=1 << 20, help="floats per all-reduce (default 1 Mi)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.timeout <= args.seconds_to_dump or args.elements < 1:
        p.error("--steps and --elements must be >= 1 and --timeout longer than --seconds-to-dump")
    return args


def flight_recorder_env(dump_dir):
    """Flight Recorder on, dumping when the watchdog times out. Both spellings:
    PyTorch renamed the TORCH_NCCL_ variables to TORCH_FR_ in 2.6."""
    prefix = os.path.join(os.path.abspath(dump_dir), "nccl_trace_rank_")
    return {"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000", "TORCH_FR_BUFFER_SIZE": "2000",
            "TORCH_NCCL_DUMP_ON_TIMEOUT": "1", "TORCH_NCCL_DEBUG_INFO_TEMP_FILE": prefix,
            "TORCH_FR_DUMP_TEMP_FILE": prefix, "TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC": "15000"}


def dump_json(torch, path):
    """This rank's Flight Recorder as JSON, the way a user would ask for it."""
    c10d = torch._C._distributed_c10d
    try:
        data = c10d._dump_nccl_trace_json(includeCollectives=True, onlyActive=False)
    except (AttributeError, TypeError, RuntimeError) as e:
        print(f"hang.py: no JSON Flight Recorder dump: {e}", file=sys.stderr, flush=True)
        return False
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return True


def main(argv):
    args = parse_args(argv)
    os.makedirs(args.dump_dir, exist_ok=True)
    for key, value in flight_recorder_env(args.dump_dir).items():
        os.environ.setdefault(key, value)  # before the process group reads them
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        print(f"hang.py: PyTorch is required ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("hang.py: needs a CUDA GPU", file=sys.stderr)
        return 1
    job = setup.start(torch, dist, timeout_s=args.timeout)
    x = torch.ones(args.elements, device=job.device)
    for i in range(args.steps):
        with setup.named_range(torch, f"step {i}"):
            dist.all_reduce(x)
            x.div_(job.world)
            torch.cuda.synchronize()
    print(f"hang.py: rank {job.rank}: {args.steps} steps done; rank {args.skip_rank} now skips an all-reduce",
          flush=True)
    torch.cuda.nvtx.range_push(f"step {args.steps}")
    if job.rank != args.skip_rank:
        dist.all_reduce(x)  # waits for a rank that never comes
    time.sleep(args.seconds_to_dump)
    path = os.path.join(args.dump_dir, f"fr_rank{job.rank}.json")
    if dump_json(torch, path):
        print(f"hang.py: rank {job.rank}: Flight Recorder written to {path}", flush=True)
    if job.rank != args.skip_rank:
        torch.cuda.synchronize()  # blocks until the watchdog gives up and stops this process
    else:
        time.sleep(args.timeout + 60)  # stays alive: its peers time out, not see it leave
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
