"""What every step of the kit shares: folders, programs, the environment
runs get, and the one way commands are started (recorded exactly; in a dry
run only recorded)."""

import datetime
import os
import time

from . import runner
from .environment import env_changes


class Kit:
    def __init__(self, args, repo, work, out):
        self.args = args
        self.repo = repo
        self.work = work
        self.out = out
        self.dry_run = args.dry_run
        self.python = args.python
        self.started_utc = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.programs = {}
        self.binaries_from = None
        self.binaries_checked = None  # (binaries_from, outcome, step name) of the last check
        self.libraries = {}
        self.lib_dirs = []
        self.env = dict(os.environ)
        self.machine = {}
        self.set_name = args.set or "gpu"
        self.deadline = None  # monotonic time by which the part must end

    def path(self, *parts):
        p = os.path.join(self.work, *parts)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def run(self, step, argv, timeout_s, extra_env=None, log_name=None):
        """Runs one command of `step` (or, in a dry run, only records it)."""
        env = dict(self.env)
        env.update({k: str(v) for k, v in (extra_env or {}).items()})
        step.commands.append(runner.command_text(argv, {**env_changes(self.env), **(extra_env or {})}))
        log = self.path("logs", (log_name or step.name) + ".log")
        if self.dry_run and step.needs_gpu:
            return runner.Outcome(status="planned", log=log)
        if any(a is None for a in argv):
            return runner.Outcome(status="error", error="a program this step needs was not found", log=log)
        if self.deadline:  # no command may outlast the part's budget
            timeout_s = max(5.0, min(timeout_s, self.deadline - time.monotonic()))
        return runner.run(argv, log, timeout_s, env=env)

    def log_text(self, outcome):
        try:
            with open(outcome.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""
