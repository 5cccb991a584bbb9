"""Runs one step of the kit: a command with its own time limit, its output in
a log file, and a record of what happened. A step never raises: a missing
program, a crash or a timeout is written down and the kit moves on."""

import os
import shlex
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field


@dataclass
class Outcome:
    status: str = "not run"  # ok, failed, timeout, error, skipped, planned
    exit_code: int | None = None
    seconds: float = 0.0
    error: str = ""
    log: str = ""

    def ok(self):
        return self.status == "ok"


def command_text(argv, env_changes=None):
    """The exact command as a shell line, with the variables the kit set."""
    prefix = " ".join(f"{k}={shlex.quote(str(v))}" for k, v in sorted((env_changes or {}).items()))
    line = " ".join(shlex.quote(str(a)) for a in argv)
    return f"{prefix} {line}".strip()


def kill_group(proc, grace_s=5.0):
    """Stops the process and everything it started (its own session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run(argv, log_path, timeout_s, env=None, cwd=None):
    """Runs argv to completion or its time limit. stdout and stderr go to log_path."""
    out = Outcome(log=log_path)
    start = time.monotonic()
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(f"$ {command_text(argv)}\n".encode())
        log.flush()
        try:
            proc = subprocess.Popen([str(a) for a in argv], stdout=log, stderr=subprocess.STDOUT, env=env,
                                    cwd=cwd, start_new_session=True)
        except OSError as e:
            out.status, out.error = "error", f"cannot start {argv[0]}: {e}"
            return out
        try:
            out.exit_code = proc.wait(timeout=timeout_s)
            out.status = "ok" if out.exit_code == 0 else "failed"
            if out.exit_code != 0:
                out.error = f"exit code {out.exit_code}"
        except subprocess.TimeoutExpired:
            log.write(stuck_snapshot(proc.pid).encode(errors="replace"))
            log.flush()
            kill_group(proc)
            out.status, out.error = "timeout", f"no result within {timeout_s:.0f} s: stopped"
        finally:
            # Ranks or helpers left behind by a failed command must not hold the GPU.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    out.seconds = round(time.monotonic() - start, 2)
    return out


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().strip()
    except OSError:
        return "?"


def stuck_snapshot(session_id, tool_timeout_s=20):
    """What every process of a command that ran out of time was doing, before
    it is killed: each thread's state, kernel wait channel and system call
    (/proc), and, where the machine has them, py-spy's Python stacks and
    gdb's native ones. A hang found on a lent GPU is then readable later."""
    lines = [f"\n==== no result in time: what the processes of session {session_id} were doing ===="]
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _read(f"/proc/{entry}/stat")
            fields = stat.rsplit(")", 1)[-1].split()
            if len(fields) > 3 and fields[3] == str(session_id):  # field 6 of stat: the session
                pids.append(int(entry))
    for pid in sorted(pids):
        cmd = _read(f"/proc/{pid}/cmdline").replace("\0", " ")[:300]
        lines.append(f"-- pid {pid}: {cmd}")
        try:
            tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
        except OSError:
            tids = []
        for tid in tids[:64]:
            base = f"/proc/{pid}/task/{tid}"
            state = _read(base + "/stat").rsplit(")", 1)[-1].split()[:1]
            lines.append(f"   tid {tid} {_read(base + '/comm')}: state {state[0] if state else '?'}, "
                         f"wchan {_read(base + '/wchan')}, syscall {_read(base + '/syscall').split(' ')[0]}")
        tools = []
        if shutil.which("py-spy") and "python" in cmd:
            tools.append(["py-spy", "dump", "--native", "--pid", str(pid)])
        if shutil.which("gdb"):
            tools.append(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 20"])
        for argv in tools:
            try:
                p = subprocess.run(argv, capture_output=True, text=True, timeout=tool_timeout_s)
                lines.append(f"   $ {' '.join(argv)}\n" + (p.stdout + p.stderr)[-12000:])
            except (OSError, subprocess.TimeoutExpired) as e:
                lines.append(f"   $ {' '.join(argv)}: {e}")
    return "\n".join(lines) + "\n"


def tail(path, max_bytes=4000):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


@dataclass
class Step:
    """One entry of the plan: what to run, under which limit, and how to read it."""
    name: str
    part: int
    title: str
    timeout_s: float
    action: object  # callable(kit, step) -> dict of figures; runs the commands itself
    needs_gpu: bool = True
    commands: list = field(default_factory=list)  # filled while running: exact command lines
    outcome: Outcome = field(default_factory=Outcome)
    figures: dict = field(default_factory=dict)
