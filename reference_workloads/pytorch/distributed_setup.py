"""What the PyTorch reference scripts share: starting NCCL when ranks share a
GPU, the step ranges our agent and torch.profiler both see, and the optional
torch.profiler (Kineto) trace. Imported after argument parsing, so `--help`
works without PyTorch."""

import contextlib
import datetime
import os
import time


def shared_gpu_nccl_env(rank, world, local_world, devices, environ):
    """The variables NCCL needs when this host runs more ranks than it has GPUs
    (the same rule as reference_workloads/support/launch_env.h): NCCL refuses
    two ranks on one GPU unless they look like different hosts, so each rank
    gets its own NCCL_HOSTID; with every rank on this host, the network
    transport runs over loopback. Variables already set are kept."""
    out = {}
    if world < 2 or devices < 1 or local_world <= devices:
        return out
    if "NCCL_HOSTID" not in environ:
        out["NCCL_HOSTID"] = f"osc-rank{rank}"
    if local_world == world and "NCCL_SOCKET_IFNAME" not in environ:
        out["NCCL_SOCKET_IFNAME"] = "lo"
    return out


class Job:
    """This rank's place in the job, after the default process group exists."""

    def __init__(self, rank, world, device, shared):
        self.rank, self.world, self.device, self.shared = rank, world, device, shared

    def describe_sharing(self, torch):
        if not self.shared:
            return ""
        return (f"{self.world} ranks share {torch.cuda.device_count()} GPU(s), so NCCL connects them through its "
                "network transport: " + " ".join(f"{k}={v}" for k, v in sorted(self.shared.items())))


def start(torch, dist, timeout_s=None):
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", "0"))
    shared = shared_gpu_nccl_env(rank, world, local_world, torch.cuda.device_count(), os.environ)
    os.environ.update(shared)  # before NCCL starts
    torch.cuda.set_device(local_rank % torch.cuda.device_count())
    device = torch.device("cuda", torch.cuda.current_device())
    kwargs = {"timeout": datetime.timedelta(seconds=timeout_s)} if timeout_s else {}
    dist.init_process_group("nccl", rank=rank, world_size=world, **kwargs)
    return Job(rank, world, device, shared)


@contextlib.contextmanager
def named_range(torch, name):
    """One range both profilers show: an NVTX range (our agent, Nsight) and a
    record_function (torch.profiler). Steps are named "step N"."""
    torch.cuda.nvtx.range_push(name)
    try:
        with torch.profiler.record_function(name):
            yield
    finally:
        torch.cuda.nvtx.range_pop()


class TraceWriter:
    """torch.profiler over the measured steps, one trace per rank in `directory`
    (nothing when directory is None)."""

    def __init__(self, torch, directory, rank):
        self.profiler = None
        if not directory:
            return
        os.makedirs(directory, exist_ok=True)
        act = torch.profiler.ProfilerActivity
        self.profiler = torch.profiler.profile(
            activities=[act.CPU, act.CUDA], record_shapes=True,
            on_trace_ready=torch.profiler.tensorboard_trace_handler(directory, worker_name=f"rank{rank}"))
        self.profiler.start()

    def step(self):
        if self.profiler is not None:
            self.profiler.step()

    def stop(self):
        if self.profiler is not None:
            self.profiler.stop()
            self.profiler = None


def run_steps(torch, train_step, args, rank):
    """Warm-up steps ("warmup N"), then the measured ones ("step N"), the
    optional torch.profiler trace covering only those; each measured step's
    wall time in ms."""
    for i in range(args.warmup):
        train_step(f"warmup {i}")
    trace = TraceWriter(torch, args.torch_profiler, rank)
    times = []
    for i in range(args.steps):
        start = time.perf_counter()
        train_step(f"step {i}")
        times.append((time.perf_counter() - start) * 1e3)
        trace.step()
    trace.stop()
    return times


def all_ranks_ok(torch, dist, ok, device):
    """True only if the check passed on every rank (a MIN all-reduce)."""
    flag = torch.tensor([1.0 if ok else 0.0], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item() == 1.0)


def add_common_arguments(parser, steps=10, warmup=3):
    parser.add_argument("--steps", type=int, default=steps, help=f"measured steps (default {steps})")
    parser.add_argument("--warmup", type=int, default=warmup, help=f"warm-up steps (default {warmup})")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--torch-profiler", metavar="DIR",
                        help="also write a PyTorch profiler (Kineto) trace per rank into DIR")


def check_common_arguments(parser, args):
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")
