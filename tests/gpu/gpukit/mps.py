"""--mps: the kit's runs under NVIDIA's Multi-Process Service, so ranks that
share the GPU run side by side instead of time-slicing it. The control daemon
is started as an ordinary user-space process with its pipe and log folders
inside the kit's scratch folder, and quit at the end. No setting of the GPU
is touched (compute mode, persistence, MIG): if MPS will not start as it is,
what happened is recorded and the runs go on without it."""

import os
import shutil
import subprocess
import time

from . import runner


class Daemon:
    def __init__(self, work):
        self.control = shutil.which("nvidia-cuda-mps-control")
        self.pipe = os.path.join(work, "mps", "pipe")
        self.logs = os.path.join(work, "mps", "log")
        self.env = {"CUDA_MPS_PIPE_DIRECTORY": self.pipe, "CUDA_MPS_LOG_DIRECTORY": self.logs}
        self.figures = {"requested": True, "control": self.control, "variables": self.env, "started": False}

    def _ask(self, command, timeout_s=15):
        try:
            p = subprocess.run([self.control], input=command + "\n", capture_output=True, text=True,
                               timeout=timeout_s, env={**os.environ, **self.env})
            return p.returncode, (p.stdout + p.stderr).strip()[-1000:]
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, str(e)

    def start(self):
        """True when the daemon runs; the caller then runs every job with self.env."""
        if not self.control:
            self.figures["error"] = "nvidia-cuda-mps-control is not on PATH"
            return False
        os.makedirs(self.pipe, mode=0o700, exist_ok=True)
        os.makedirs(self.logs, mode=0o700, exist_ok=True)
        try:
            p = subprocess.run([self.control, "-d"], capture_output=True, text=True, timeout=30,
                               env={**os.environ, **self.env})
        except (OSError, subprocess.TimeoutExpired) as e:
            self.figures["error"] = f"cannot start the daemon: {e}"
            return False
        self.figures["start"] = {"exit_code": p.returncode, "output": (p.stdout + p.stderr).strip()[-1000:]}
        if p.returncode != 0:
            self.figures["error"] = "nvidia-cuda-mps-control -d failed"
            return False
        code, text = self._ask("get_server_list")
        self.figures["server_list_before_jobs"] = {"exit_code": code, "output": text}
        self.figures["started"] = code == 0
        if code != 0:
            self.figures["error"] = "the daemon started but does not answer"
            self.stop()
        return self.figures["started"]

    def stop(self):
        code, text = self._ask("get_server_list")
        self.figures["server_list_after_jobs"] = {"exit_code": code, "output": text}
        code, text = self._ask("quit")
        self.figures["quit"] = {"exit_code": code, "output": text}
        end = time.monotonic() + 20
        while time.monotonic() < end and os.path.exists(os.path.join(self.pipe, "control")):
            time.sleep(0.2)
        self.figures["control_pipe_left"] = os.path.exists(os.path.join(self.pipe, "control"))
        for name in ("control.log", "server.log"):
            self.figures[name] = runner.tail(os.path.join(self.logs, name), 3000)
