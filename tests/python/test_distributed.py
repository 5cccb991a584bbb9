"""overlapscope.distributed and `--scheduler` on a real Dask cluster.

One LocalCluster for the whole file: two worker processes (behind their
nannies) on loopback TCP, no dashboard. What the cluster gives is compared
with the one-process analysis of the same files: the report's JSON byte for
byte (hang: its JSON and text), the command line's output and exit status. Faults are real: a worker
process killed while it analyses a file, a file that is no capture, SIGINT
to the command line while a task runs. A worker plugin holds one task in
its worker, as it begins, for as long as a test needs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import overlapscope
import overlapscope.distributed as od

import distributed  # python3-distributed (scripts/install-deps.sh)
from conftest import EXAMPLES


@pytest.fixture(scope="module")
def cluster() -> Any:
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as c, distributed.Client(c) as client:
        client.wait_for_workers(2)
        yield c, client


@pytest.fixture(scope="module")
def job(cli: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four ranks, a rank arriving late (cross-rank skew to get right)."""
    out = tmp_path_factory.mktemp("job") / "ranks"
    subprocess.run(
        [cli, "synth", "-o", str(out), "--ranks", "4", "--steps", "3", "--layers", "4",
         "--arrival-skew-ns", "0,0,0,300000"],
        capture_output=True,
        check=True,
    )
    return out


class task_stream(distributed.get_task_stream):
    """distributed.get_task_stream, read once the scheduler's records stop
    coming: under load the record of a job's last task reached the
    scheduler's stream after the job's result had reached the client."""

    def __exit__(self, *exc: Any) -> None:
        seen, quiet_since, deadline = -1, time.monotonic(), time.monotonic() + 10
        while time.monotonic() < deadline:
            # The whole stream: its window from `start` is found by bisection
            # over records that a late one leaves out of order.
            count = len(self.client.get_task_stream())
            if count != seen:
                seen, quiet_since = count, time.monotonic()
            elif time.monotonic() - quiet_since >= 0.5:
                break
            time.sleep(0.05)
        super().__exit__(*exc)


class new_tasks(task_stream):
    """The records of the tasks keyed PREFIX-JOB-INDEX of the jobs a block
    started: every record of a job the stream did not hold before it."""

    def __init__(self, client: Any, prefix: str) -> None:
        super().__init__(client=client)
        self.prefix = prefix

    def _records(self) -> List[dict]:
        return [t for t in self.client.get_task_stream() if str(t["key"]).startswith(self.prefix)]

    def __enter__(self) -> "new_tasks":
        super().__enter__()
        self.earlier = {job_of(str(t["key"])) for t in self._records()}
        return self

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        self.records = [t for t in self._records() if job_of(str(t["key"])) not in self.earlier]


def part_records(client: Any) -> List[dict]:
    """The records of every file task the scheduler's task stream holds, in
    the order they finished (keys overlapscope-part-JOB-INDEX)."""
    return [t for t in client.get_task_stream() if str(t["key"]).startswith("overlapscope-part")]


def part_keys(client: Any) -> List[str]:
    return [str(t["key"]) for t in part_records(client)]


def job_of(key: str) -> str:
    return key.rsplit("-", 1)[0]


def rank_files(directory: Path) -> List[Path]:
    return sorted(directory.glob("*.sqlite"))


def part_tasks(client: Any) -> List[str]:
    return client.run_on_scheduler(
        lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks if str(k).startswith("overlapscope-part")]
    )


def wait_for(condition: Any, what: str, seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def hold_task(client: Any, suffix: str, release: Path) -> None:
    """Every worker holds a part task whose key ends in `suffix` as it starts
    executing until `release` exists (its event loop waits: nothing of it
    runs meanwhile). Defined here so that cloudpickle sends it by value."""

    class Hold(distributed.WorkerPlugin):
        def transition(self, key: str, start: str, finish: str, **kwargs: Any) -> None:
            if finish == "executing" and str(key).startswith("overlapscope-part") and str(key).endswith(suffix):
                deadline = time.monotonic() + 60
                while not os.path.exists(release) and time.monotonic() < deadline:
                    time.sleep(0.02)

    client.register_worker_plugin(Hold(), name="overlapscope-test-hold")


def processing_key(client: Any, suffix: str) -> Dict[str, str]:
    """{worker: key} for part tasks ending in `suffix` that a worker holds."""
    return {w: k for w, keys in client.processing().items() for k in keys if str(k).endswith(suffix)}


def test_report_is_the_one_process_report(cluster: Any, job: Path) -> None:
    _, client = cluster
    for paths, options in (
        ([str(job)], {}),
        ([str(f) for f in rank_files(job)], {"align": "collectives", "comm_copies": True}),
        ([str(rank_files(job)[2])], {}),  # one file: analysed in memory in one process
    ):
        one = overlapscope.report(paths, progress=False, **options)
        earlier_jobs = {job_of(k) for k in part_keys(client)}  # the stream holds earlier jobs' tasks too
        with task_stream(client):
            many = od.report(paths, client=client, progress=False, **options)
        assert many.to_json() == one.to_json()
        assert many.inputs == paths
        new = [k for k in part_keys(client) if job_of(k) not in earlier_jobs]
        files = 4 if len(paths) > 1 or Path(paths[0]).is_dir() else 1
        assert len({job_of(k) for k in new}) == 1
        assert len(new) == len(set(new)) == files  # one task per file, each run once


def test_every_device_once(cluster: Any, job: Path) -> None:
    _, client = cluster
    r = od.report([str(job)], client=client, progress=False)
    # Four ranks of one GPU each, each counted once: the known truth of the synthetic job.
    assert sorted(r.devices["rank"].tolist()) == [0, 1, 2, 3]


def test_node_local_paths_go_to_their_host(cluster: Any, job: Path) -> None:
    _, client = cluster
    worker = sorted(client.scheduler_info()["workers"])[0]
    files = [str(f) for f in rank_files(job)]
    earlier_jobs = {job_of(k) for k in part_keys(client)}
    with task_stream(client):
        r = od.report(files, client=client, hosts=lambda path: worker, progress=False)
    ran = [t["worker"] for t in part_records(client) if job_of(str(t["key"])) not in earlier_jobs]
    assert ran == [worker] * 4
    assert r.to_json() == overlapscope.report(files, progress=False).to_json()
    # HOST:PATH: the directory listed and its files analysed on that host.
    named = f"127.0.0.1:{job}"
    r = od.report([named], client=client, progress=False)
    assert r.inputs == [named]
    one = overlapscope.report([str(job)], progress=False).to_dict()
    one["inputs"] = [named]
    assert r.to_dict() == one


def test_unreadable_file_names_file_and_worker(cluster: Any, job: Path, tmp_path: Path) -> None:
    _, client = cluster
    bad = tmp_path / "rank9.sqlite"
    bad.write_bytes(b"not a capture at all\n" * 10)
    with pytest.raises(overlapscope.CaptureError) as e:
        od.report([*map(str, rank_files(job)), str(bad)], client=client, progress=False)
    message = str(e.value)
    assert str(bad) in message and "on worker tcp://127.0.0.1:" in message and "\n" not in message
    assert wait_for(lambda: not part_tasks(client), "the job's tasks to be released")


def test_a_capture_given_twice_is_refused_as_in_one_process(cluster: Any, job: Path, tmp_path: Path) -> None:
    # Its two parts are both taken as they come; the merge refuses the
    # second once every part is in, with the one-process message.
    _, client = cluster
    copy = tmp_path / "copy-of-rank0.sqlite"
    shutil.copyfile(rank_files(job)[0], copy)
    paths = [str(job), str(copy)]
    with pytest.raises(overlapscope.CaptureError) as one:
        overlapscope.report(paths, progress=False)
    with pytest.raises(overlapscope.CaptureError) as many:
        od.report(paths, client=client, progress=False)
    assert "given twice" in str(many.value) and str(many.value) == str(one.value)
    assert wait_for(lambda: not part_tasks(client), "the job's tasks to be released")


def test_worker_killed_mid_task(cluster: Any, job: Path, tmp_path: Path) -> None:
    _, client = cluster
    paths = [str(f) for f in rank_files(job)]
    pids = client.run(os.getpid)  # before a worker's loop is held
    release = tmp_path / "release"
    hold_task(client, "-3", release)
    result: Dict[str, Any] = {}

    def run() -> None:
        try:
            result["report"] = od.report(paths, client=client, progress=False)
        except BaseException as e:  # noqa: B902 - handed to the test's thread
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    (worker,) = wait_for(lambda: processing_key(client, "-3"), "the last file's task to start")
    time.sleep(0.2)
    os.kill(pids[worker], signal.SIGKILL)  # dies in the middle of the task
    release.touch()  # where it runs again, it runs through
    thread.join(60)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    assert result["report"].to_json() == overlapscope.report(paths, progress=False).to_json()
    assert sorted(result["report"].devices["rank"].tolist()) == [0, 1, 2, 3]  # none twice, none lost
    assert worker not in client.scheduler_info()["workers"]
    client.wait_for_workers(2)  # the nanny restarts it, for the tests after this one


def run_cli(cli: str, *args: str, **kw: Any) -> subprocess.CompletedProcess:
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=120, **kw)


def test_cli_scheduler_same_output_and_status(cluster: Any, cli: str, job: Path) -> None:
    c, _ = cluster
    s = ["--scheduler", c.scheduler_address]
    for command in (
        ["report", "--format", "json", str(job)],
        ["report", "--steps", "--collectives", *map(str, rank_files(job))],
        ["check", "--min-overlap-ratio", "0.99", str(job)],  # fails: exit 1 and its FAIL lines
    ):
        one = run_cli(cli, *command)
        many = run_cli(cli, command[0], *s, *command[1:])
        assert (many.returncode, many.stdout) == (one.returncode, one.stdout), many.stderr
        assert many.stderr == one.stderr
    assert run_cli(cli, "check", "--min-overlap-ratio", "0.99", str(job)).returncode == 1


def test_cli_bad_file_one_line_exit_2(cluster: Any, cli: str, job: Path, tmp_path: Path) -> None:
    c, _ = cluster
    bad = tmp_path / "rank7.sqlite"
    bad.write_bytes(b"\0" * 100)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = run_cli(cli, "report", "--scheduler", c.scheduler_address, str(job), str(bad), env=env)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "on worker tcp://127.0.0.1:" in lines[0], done.stderr
    assert done.stdout == ""
    assert not list(tmp_path.glob("overlapscope-parts-*"))  # its scratch directory is gone


def test_cli_existing_output_refused_first(cluster: Any, cli: str, job: Path, tmp_path: Path) -> None:
    c, client = cluster
    out = tmp_path / "report.json"
    out.write_text("mine")
    with task_stream(client) as stream:
        done = run_cli(cli, "report", "--scheduler", c.scheduler_address, "-o", str(out), str(job))
    assert done.returncode == 2 and str(out) in done.stderr and len(done.stderr.splitlines()) == 1
    assert out.read_text() == "mine"
    assert not [t for t in stream.data if str(t["key"]).startswith("overlapscope-")]


def test_cli_ctrl_c_cancels_the_tasks(cluster: Any, cli: str, job: Path, tmp_path: Path) -> None:
    c, client = cluster
    client.wait_for_workers(2)
    release = tmp_path / "release"
    hold_task(client, "-1", release)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # Three copies of the job: tasks still waiting when Ctrl-C comes.
    proc = subprocess.Popen(
        [cli, "report", "--scheduler", c.scheduler_address, str(job), str(job), str(job)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        wait_for(lambda: processing_key(client, "-1"), "the held task to start")
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
        release.touch()
    assert proc.returncode == -signal.SIGINT, proc.stderr.read()  # ends as the one-process command does
    assert wait_for(lambda: not part_tasks(client), "the cancelled tasks to leave the scheduler")
    assert not list(scratch.iterdir())


# --- hang on the cluster: the files read where they lie, the one analysis here.
HUNG = EXAMPLES / "h200" / "pytorch_hang"  # two ranks' captures of a real stuck job
DUMPS = EXAMPLES / "h200" / "pytorch_hang_flight_recorder"  # its Flight Recorder dumps


@pytest.fixture(scope="module")
def stalled(cli: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four ranks; from step 1 rank 2 enters no collective (synth's known answer)."""
    out = tmp_path_factory.mktemp("stalled") / "ranks"
    subprocess.run(
        [cli, "synth", "-o", str(out), "--ranks", "4", "--steps", "3", "--layers", "4",
         "--stall-rank", "2", "--stall-at-step", "1"],
        capture_output=True,
        check=True,
    )
    return out


def file_tasks(stream: new_tasks) -> List[str]:
    return [str(t["key"]) for t in stream.records]


def test_hang_is_the_one_process_hang(cluster: Any, stalled: Path) -> None:
    _, client = cluster
    for paths, files in (
        ([str(stalled)], 4),
        ([str(HUNG), str(DUMPS)], 4),  # captures and dumps of one job, joined
        ([str(next(HUNG.glob("*rank1*"))), str(next(DUMPS.glob("*rank0*")))], 2),
    ):
        one = overlapscope.hang(paths, progress=False)
        with new_tasks(client, "overlapscope-file") as stream:
            many = od.hang(paths, client=client, progress=False)
        assert many.to_dict() == one.to_dict()
        assert many.text() == one.text()
        assert len(file_tasks(stream)) == files  # each file read once, by a worker
    stuck = od.hang([str(stalled)], client=client, progress=False)
    assert stuck.verdict == "hang" and stuck.stuck_ranks["rank"].tolist() == [2]  # synth's known answer
    assert {r["source"] for c in stuck.to_dict()["communicators"] for r in c["ranks"]} == {
        str(f) for f in rank_files(stalled)
    }  # the user's files, not the client's copies


def test_hang_node_local_paths(cluster: Any, stalled: Path) -> None:
    _, client = cluster
    named = f"127.0.0.1:{stalled}"
    many = od.hang([named], client=client, progress=False)
    one = overlapscope.hang([str(stalled)], progress=False).to_dict()
    # The answer names the files on their host, as the input did.
    assert many.to_dict() == json.loads(json.dumps(one).replace(f'"{stalled}', f'"{named}'))
    with pytest.raises(overlapscope.CaptureError) as e:
        od.hang([f"127.0.0.1:{stalled}/absent"], client=client, progress=False)
    assert "absent" in str(e.value) and "on worker tcp://127.0.0.1:" in str(e.value)


MESH = EXAMPLES / "h200" / "pytorch_mesh_torch_profiler"  # 4 ranks of a real 2x2-mesh job


def hta_answers(analysis: Any) -> Dict[str, Any]:
    ranks = sorted(analysis.get_comm_comp_overlap(visualize=False)["rank"])
    return {
        "overlap": analysis.get_comm_comp_overlap(visualize=False),
        "temporal": analysis.get_temporal_breakdown(visualize=False),
        "kernel types": analysis.get_gpu_kernel_breakdown(visualize=False)[0],
        "kernels": analysis.get_gpu_kernel_breakdown(visualize=False)[1],
        "idle": analysis.get_idle_time_breakdown(ranks=ranks, visualize=False)[0],
    }


def test_hta_facade_loaded_on_the_cluster(cluster: Any, tmp_path: Path) -> None:
    import gc

    import pandas.testing
    from overlapscope.hta import TraceAnalysis

    _, client = cluster
    # An execution trace beside the profiler traces, as in HTA's demo layout.
    traces = tmp_path / "mesh"
    traces.mkdir()
    for f in MESH.glob("*.json.gz"):
        (traces / f.name).symlink_to(f)
    (traces / "rank0_execution_trace.json").write_text('{"schema": "1.0.1", "nodes": []}')
    with pytest.warns(overlapscope.OverlapscopeWarning) as local_said:
        one = hta_answers(TraceAnalysis(trace_dir=str(traces)))
    named = f"127.0.0.1:{traces}"
    with new_tasks(client, "overlapscope-file") as stream:
        with pytest.warns(overlapscope.OverlapscopeWarning) as said:
            analysis = od.trace_analysis(named, client=client, written_into=str(tmp_path), progress=False)
    assert len(stream.records) == 4  # read by workers
    # The warning names the directory as given, not the client's copy.
    assert [str(w.message).replace(named, str(traces)) for w in said] == [str(w.message) for w in local_said]
    many = hta_answers(analysis)
    for what in one:
        pandas.testing.assert_frame_equal(many[what], one[what], obj=what)
    # A dict rank -> file, as TraceAnalysis takes it.
    files = sorted(MESH.glob("*.json.gz"))
    by_rank = od.trace_analysis({r: str(f) for r, f in enumerate(files)}, client=client, progress=False)
    pandas.testing.assert_frame_equal(
        hta_answers(by_rank)["overlap"], hta_answers(TraceAnalysis({r: str(f) for r, f in enumerate(files)}))["overlap"]
    )
    # What HTA writes beside a trace goes where the caller said.
    analysis.generate_trace_with_counters(ranks=[0])
    assert (tmp_path / "rank0.pt.trace_with_counters.json.gz").is_file()
    copies = analysis._copies.name
    assert os.path.isdir(copies)
    del analysis
    gc.collect()
    assert not os.path.exists(copies)  # the copies go with the analysis
    with pytest.raises(overlapscope.CaptureError) as e:
        od.trace_analysis(f"127.0.0.1:{tmp_path}/absent.json.gz", client=client, progress=False)
    assert "absent" in str(e.value) and "on worker tcp://127.0.0.1:" in str(e.value)


def test_worker_of_another_version_is_named(cluster: Any, job: Path) -> None:
    _, client = cluster
    import overlapscope._core as core

    real = core.__version__
    client.run(lambda: setattr(__import__("overlapscope._core")._core, "__version__", "0.0.0-other"))
    try:
        with pytest.raises(overlapscope.CaptureError) as e:
            od.report([str(job)], client=client, progress=False)
        assert "runs overlapscope 0.0.0-other" in str(e.value) and real in str(e.value)
    finally:
        client.run(lambda: setattr(__import__("overlapscope._core")._core, "__version__", real))


def test_cli_hang_scheduler_same_output_and_status(cluster: Any, cli: str, stalled: Path, job: Path,
                                                   tmp_path: Path) -> None:
    c, _ = cluster
    s = ["--scheduler", c.scheduler_address]
    bad = tmp_path / "rank5.sqlite"
    bad.write_bytes(b"\0" * 100)
    for command, status in (
        (["hang", "--format", "json", str(stalled)], 1),
        (["hang", "--verbose", str(HUNG), str(DUMPS)], 1),
        (["hang", str(job)], 0),  # healthy
        (["hang", str(stalled), str(bad)], 2),  # one line naming the file, as in one process
    ):
        one = run_cli(cli, *command)
        many = run_cli(cli, command[0], *s, *command[1:])
        assert one.returncode == status, one.stderr
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = run_cli(cli, "hang", *s, f"127.0.0.1:{tmp_path}/absent", env=env)
    assert done.returncode == 2 and "on worker tcp://127.0.0.1:" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stdout == ""
    assert not list(tmp_path.glob("overlapscope-hang-*"))  # its scratch directory is gone
