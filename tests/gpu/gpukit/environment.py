"""Where the kit's programs and the CUDA libraries are, and what the machine is.

Binaries come from, in order: --bin DIR, .device/kit (made by prepare_carry.sh),
build/ (a normal build tree). CUDA libraries come from the Python packages that
PyTorch brings (site-packages/nvidia/*/lib: CUDA 13 wheels put cuBLAS, CUPTI
and the runtime in nvidia/cu13/lib, NCCL in nvidia/nccl/lib; CUDA 12 wheels use
nvidia/<name>/lib), then from the CUDA toolkit. Preferring PyTorch's copies
means a PyTorch process and our agent load the same libcupti."""

import glob
import json
import os
import platform
import shutil
import subprocess


# Where each program sits: the kit layout (prepare_carry.sh) and a build tree.
PROGRAMS = {
    "overlapscope": ("bin/overlapscope", "cli/overlapscope"),
    "replay": ("bin/overlapscope-replay", "agent/overlapscope-replay"),
    "probe": ("bin/overlapscope-kit-probe", "tests/gpu/overlapscope-kit-probe"),
    "agent": ("lib/liboverlapscope-agent.so", "agent/liboverlapscope-agent.so"),
    "ddp_overlap": ("bin/ddp_overlap", "reference_workloads/ddp_overlap"),
    "tp_overlap": ("bin/tp_overlap", "reference_workloads/tp_overlap"),
    "fsdp_prefetch": ("bin/fsdp_prefetch", "reference_workloads/fsdp_prefetch"),
    "pp_overlap": ("bin/pp_overlap", "reference_workloads/pp_overlap"),
    "moe_alltoall": ("bin/moe_alltoall", "reference_workloads/moe_alltoall"),
}

LIBRARIES = {
    "cupti": "libcupti.so*",
    "nccl": "libnccl.so*",
    "cublas": "libcublas.so*",
    "cudart": "libcudart.so*",
}


def find_binaries(candidates):
    """The first candidate folder that holds overlapscope; every program's path
    (None where absent) and which folder it was."""
    for folder in candidates:
        if not folder or not os.path.isdir(folder):
            continue
        folder = os.path.abspath(folder)
        found = {}
        for name, layouts in PROGRAMS.items():
            found[name] = next((os.path.join(folder, p) for p in layouts if os.path.isfile(os.path.join(folder, p))),
                               None)
        if found["overlapscope"]:
            return folder, found
    return None, {name: None for name in PROGRAMS}


def _capture(argv, timeout=30, env=None):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
        return p.returncode, (p.stdout + p.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)


def nvidia_package_dirs(python):
    """site-packages/nvidia of `python` (a namespace package: maybe several)."""
    code = "import json, nvidia; print(json.dumps(list(nvidia.__path__)))"
    rc, out = _capture([python, "-c", code])
    if rc != 0:
        return []
    try:
        return [d for d in json.loads(out.splitlines()[-1]) if os.path.isdir(d)]
    except (ValueError, IndexError):
        return []


def find_libraries(python):
    """Library name -> the file to use, and the folders to put on LD_LIBRARY_PATH."""
    roots = []
    for d in nvidia_package_dirs(python):
        roots += sorted(glob.glob(os.path.join(d, "*", "lib")))
    cuda = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    roots += [os.path.join(cuda, "lib64"), os.path.join(cuda, "lib"), os.path.join(cuda, "extras/CUPTI/lib64")]
    found = {}
    for name, pattern in LIBRARIES.items():
        for root in roots:
            hits = sorted(p for p in glob.glob(os.path.join(root, pattern)) if os.path.isfile(p))
            if hits:
                # libcupti.so.13 over libcupti.so.2025...: the soname our binaries ask for.
                found[name] = min(hits, key=len)
                break
    dirs = []
    for path in found.values():
        d = os.path.dirname(path)
        if d not in dirs:
            dirs.append(d)
    return found, dirs


def missing_shared_libraries(path, env):
    """`ldd` lines that say 'not found' for this binary under env."""
    if not shutil.which("ldd") or not path:
        return []
    rc, out = _capture(["ldd", path], env=env)
    return [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]


def _first_line(text):
    return text.splitlines()[0].strip() if text else ""


def describe_machine(python, env, programs):
    """Versions of everything that shapes the results. Each probe is bounded and
    a failing one is recorded, not fatal."""
    info = {"python_kit": platform.python_version(), "uname": " ".join(platform.uname())}
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    info["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    info["glibc"] = platform.libc_ver()[1]
    info["cpus"] = os.cpu_count()
    rc, out = _capture(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,pci.bus_id,compute_cap",
                        "--format=csv,noheader"])
    info["gpus"] = [l.strip() for l in out.splitlines()] if rc == 0 else []
    if rc != 0:
        info["nvidia_smi_error"] = _first_line(out) or "nvidia-smi not found"
    rc, out = _capture(["nvidia-smi"])
    for line in out.splitlines() if rc == 0 else []:
        if "CUDA Version" in line:
            info["nvidia_smi_header"] = " ".join(line.strip("| ").split())
            break
    rc, out = _capture(["nvcc", "--version"])
    info["nvcc"] = out.splitlines()[-1].strip() if rc == 0 and out else "not found"
    code = ("import json, torch; d = {'torch': torch.__version__, 'torch_cuda': torch.version.cuda, "
            "'torch_gpu_count': torch.cuda.device_count()}\n"
            "try:\n d['torch_nccl'] = '.'.join(map(str, torch.cuda.nccl.version()))\n"
            "except Exception as e:\n d['torch_nccl'] = 'unknown: %s' % e\n"
            "print(json.dumps(d))")
    rc, out = _capture([python, "-c", code], timeout=120)
    if rc == 0:
        try:
            info.update(json.loads(out.splitlines()[-1]))
        except (ValueError, IndexError):
            info["torch_error"] = _first_line(out)
    else:
        info["torch_error"] = out.splitlines()[-1] if out else "python did not run"
    if programs.get("overlapscope"):
        rc, out = _capture([programs["overlapscope"], "--version"], env=env)
        info["overlapscope"] = _first_line(out) if rc == 0 else f"does not run: {_first_line(out)}"
    return info


def shared_library_versions(libraries):
    """Versions read from library file names (libcupti.so.2025.3.1 style links beside the soname)."""
    versions = {}
    for name, path in libraries.items():
        real = os.path.realpath(path)
        versions[name] = {"path": path, "file": os.path.basename(real)}
    return versions


def run_env(libraries, lib_dirs, socket_dir):
    """The environment every step runs in: our libraries first, our control
    sockets in the kit's own folder, NCCL saying its version."""
    env = dict(os.environ)
    old = env.get("LD_LIBRARY_PATH", "")
    env["LD_LIBRARY_PATH"] = ":".join(lib_dirs + ([old] if old else []))
    if libraries.get("cupti"):
        env["OVERLAPSCOPE_CUPTI"] = libraries["cupti"]  # NVTX injection: the same libcupti
    env["OVERLAPSCOPE_SOCKET_DIR"] = socket_dir
    env.setdefault("NCCL_DEBUG", "VERSION")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"  # a Python rank that crashes prints every thread's stack
    return env


def env_changes(env):
    """What run_env changed, for the exact commands in results.json."""
    return {k: v for k, v in env.items() if os.environ.get(k) != v}

