"""End to end: the ``topospread`` CLI on files written to a temporary directory, timed and
measured from the parent (its peak RSS from the launcher, a sweep's process tree sampled from
/proc): ChartCluster, SimulateTimeline, Rebalance, HtmlReport and the sweeps.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import chart  # bench/chart.py: the script's directory is on sys.path
import sweep_inputs  # bench/sweep_inputs.py
import timeline_scenario  # bench/timeline_scenario.py
from jobs import Job  # bench/jobs.py
from launcher import Exited, launch  # bench/launcher.py
from measure import Limits, log  # bench/measure.py

# How often the parent looks whether the CLI has exited (the wall time's resolution).
CLI_POLL_SECONDS: Final = 0.01


def topospread_command() -> list[str]:
    """The ``topospread`` entry point of this interpreter's environment."""
    script = Path(sys.executable).with_name("topospread")
    if script.exists():
        return [str(script)]
    found = shutil.which("topospread")
    if found is None:
        raise SystemExit("bench: no topospread command next to the interpreter or on PATH")
    return [found]


# How often the parent sums a sweep's process tree's RSS and PSS (reading smaps_rollup walks the
# process's page tables: milliseconds a GiB, taken from the cores the sweep runs on).
TREE_SAMPLE_SECONDS: Final = 0.2
# How long an interrupted sweep may take to stop its workers and write the runs it completed.
INTERRUPT_GRACE_SECONDS: Final = 60.0


def _children(pid: int) -> list[int]:
    """``pid``'s children (Linux; none elsewhere), from every thread's list: a child is listed
    under the thread that forked it."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for task in tasks:
        try:
            out += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
        except (OSError, ValueError):
            continue
    return out


def _rss_pss_kib(pid: int) -> tuple[int, int]:
    """A process's resident and proportional set sizes (KiB; 0 when it is gone)."""
    rss = pss = 0
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_bytes()
    except OSError:
        return rss, pss
    for line in text.splitlines():
        if line.startswith(b"Rss:"):
            rss = int(line.split()[1])
        elif line.startswith(b"Pss:"):
            pss = int(line.split()[1])
    return rss, pss


@dataclass(slots=True)
class ProcessTree:
    """A running command and its descendants, sampled from /proc (Linux; elsewhere it finds
    nothing): the peaks of their summed RSS and PSS (MiB), of their number and of the command's
    own children (the sweep's workers, each of which may fork a child per run), and when
    (seconds after the start) the command was first and last seen with children."""

    root: int
    peak_rss_mib: float = 0.0
    peak_pss_mib: float = 0.0
    most_processes: int = 0
    most_children: int = 0
    children_from: float | None = None
    children_until: float | None = None
    _next_sample: float = 0.0
    _last_count: int = 0

    def poll(self, elapsed: float) -> None:
        pids = [self.root, *_children(self.root)]
        self.most_children = max(self.most_children, len(pids) - 1)
        for pid in pids[1:]:  # grows as it goes: grandchildren, then theirs
            pids += _children(pid)
        if len(pids) > 1:
            if self.children_from is None:
                self.children_from = elapsed
            self.children_until = elapsed
        # Sample on schedule, and at once when processes come or go.
        if elapsed < self._next_sample and len(pids) == self._last_count:
            return
        self._next_sample = elapsed + TREE_SAMPLE_SECONDS
        self._last_count = len(pids)
        sizes = [_rss_pss_kib(pid) for pid in pids]
        self.peak_rss_mib = max(self.peak_rss_mib, sum(rss for rss, _ in sizes) / 2**10)
        self.peak_pss_mib = max(self.peak_pss_mib, sum(pss for _, pss in sizes) / 2**10)
        self.most_processes = max(self.most_processes, sum(1 for rss, _ in sizes if rss))


@dataclass(frozen=True, slots=True)
class CliRun:
    """How a CLI run went: wall seconds; wait4's peak RSS (MiB: the largest of the command and
    the children it reaped); its exit code (None: killed at the time limit); whether it was
    interrupted (SIGINT) at the time limit; the CPU seconds (user and system) of the command
    and the children it reaped; the CPU seconds the whole machine was busy meanwhile."""

    wall: float
    rss_mib: float
    code: int | None
    interrupted: bool = False
    cpu: float = 0.0
    machine_cpu: float = 0.0


def _machine_busy_seconds() -> float:
    """CPU seconds every core has been busy since boot (/proc/stat: user, nice, system, irq,
    softirq; idle, iowait and steal left out; 0 where there is no /proc)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _cli_run(
    wall: float, exited: Exited, code: int | None, interrupted: bool, busy_before: float
) -> CliRun:
    machine = _machine_busy_seconds() - busy_before
    return CliRun(wall, exited.rss_mib, code, interrupted, exited.cpu, machine)


def _run_cli(
    cmd: list[str],
    out: Path,
    seconds: float,
    *,
    tree: Callable[[int], ProcessTree] | None = None,
    interrupt: bool = False,
) -> tuple[CliRun, ProcessTree | None]:
    """Run ``cmd`` with stdout to ``out`` for at most ``seconds``, its process tree sampled
    when ``tree`` is given. Past the limit it is killed, or with ``interrupt`` sent SIGINT
    first and given ``INTERRUPT_GRACE_SECONDS`` to finish."""
    with out.open("wb") as f:
        start = time.perf_counter()
        busy = _machine_busy_seconds()
        launched = launch(cmd, f)
        watched = tree(launched.pid) if tree is not None else None
        deadline = start + seconds
        interrupted = False
        while True:
            exited = launched.poll()
            now = time.perf_counter()
            if exited is not None:
                return _cli_run(now - start, exited, exited.code, interrupted, busy), watched
            if now >= deadline and interrupt and not interrupted:
                launched.signal(signal.SIGINT)
                interrupted = True
                deadline = now + INTERRUPT_GRACE_SECONDS
            elif now >= deadline:
                launched.signal(signal.SIGKILL)
                exited = launched.poll(block=True)
                assert exited is not None
                wall = time.perf_counter() - start
                return _cli_run(wall, exited, None, interrupted, busy), watched
            if watched is not None:
                watched.poll(now - start)
            time.sleep(CLI_POLL_SECONDS)


def _run_cli_job_failed(job: Job, run: CliRun) -> bool:
    """Whether the run was stopped or failed, its line printed if so."""
    wall, rss, code = run.wall, run.rss_mib, run.code
    if code is None:
        print(f"{job.name}: stopped after {wall:.0f} s, peak RSS {rss:,.0f} MiB", flush=True)
        return True
    if code != 0:
        print(f"{job.name}: FAILED (exit code {code}), peak RSS {rss:,.0f} MiB", flush=True)
        return True
    return False


def _run_cli_job(job: Job, cmd: list[str], out: Path, limits: Limits) -> tuple[float, float] | None:
    """``_run_cli``, with the job's line printed when it was stopped or failed: wall seconds
    and peak RSS when it finished."""
    run, _ = _run_cli(cmd, out, limits.seconds)
    if _run_cli_job_failed(job, run):
        return None
    return run.wall, run.rss_mib


def run_chart(job: Job, tmp: Path, divisor: int, limits: Limits, *, stateful: bool = False) -> None:
    """``topospread schedule --nodes LIST -o jsonl``: pods/s over the CLI's whole run.
    ``stateful``: the cluster with StatefulSets and claims (bench/chart_storage.py)."""
    path = tmp / ("chart-cluster-stateful.yaml" if stateful else "chart-cluster.yaml")
    t0 = time.perf_counter()
    bound, queued = chart.write_chart_cluster(path, divisor, stateful)
    log(
        f"{job.name}:\n  wrote {bound} bound and {queued} queued pods "
        f"({path.stat().st_size / 2**20:,.0f} MiB) in {time.perf_counter() - t0:.1f} s"
    )
    out = tmp / "chart-cluster.jsonl"
    cmd = [*topospread_command(), "schedule", "--nodes", str(path), "-o", "jsonl"]
    run, _ = _run_cli(cmd, out, limits.seconds)
    if _run_cli_job_failed(job, run):
        return
    wall, rss = run.wall, run.rss_mib
    outcomes = [json.loads(line) for line in out.read_text().splitlines()]
    placed = [o for o in outcomes if "pod" in o]
    pending = sum(1 for o in placed if o.get("node") is None)
    log(f"  {len(placed) - pending} of {len(placed)} pods bound, {pending} pending, {wall:.1f} s")
    note = f" ({pending} unschedulable)" if pending else ""
    # The CLI's own CPU time too: on a shared machine the wall time varies with the others.
    print(
        f"{job.name}: {queued / wall:,.1f} pods/s ({queued / run.cpu:,.1f} pods per CPU "
        f"second), peak RSS {rss:,.0f} MiB{note}",
        flush=True,
    )


def run_timeline(job: Job, tmp: Path, divisor: int, limits: Limits) -> None:
    """``topospread simulate SCENARIO -o json``: the CLI's wall seconds."""
    path = tmp / "timeline.yaml"
    pods = timeline_scenario.write_timeline(path, divisor)
    log(f"{job.name}:\n  wrote a timeline of {pods} pods")
    out = tmp / "timeline.json"
    cmd = [*topospread_command(), "simulate", str(path), "-o", "json"]
    finished = _run_cli_job(job, cmd, out, limits)
    if finished is None:
        return
    wall, rss = finished
    steps = json.loads(out.read_bytes())["steps"]
    for step in steps:
        log(
            f"  {step['name']}: {len(step['placed'])} placed, {len(step['bound'])} bound, "
            f"{len(step['pending'])} pending, settled {step['settled']} in {step['rounds']} rounds"
        )
    pending = len(steps[-1]["pending"])
    note = f" ({pending} pending at the end)" if pending else ""
    print(f"{job.name}: {wall:.1f} s, peak RSS {rss:,.0f} MiB{note}", flush=True)


# The rebalance child: load and settle, then plan, each timed; one JSON line on stdout.
_REBALANCE_CHILD: Final = """
import json, sys, time
from pathlib import Path
from topospread.analysis.rebalance import plan_rebalance
from topospread.analysis.simulate import settle_timeline
from topospread.simulator.timeline_format import load_timeline
t0 = time.perf_counter()
sim = settle_timeline(load_timeline(Path(sys.argv[1])))
t1 = time.perf_counter()
report = plan_rebalance(sim)
t2 = time.perf_counter()
plan = report.plan
print(json.dumps({
    "settle": t1 - t0, "plan": t2 - t1, "targets": len(report.targets),
    "evictions": None if plan is None else len(plan.evictions),
    "minimal": report.minimal, "replays": report.replays,
}))
"""


def run_rebalance(job: Job, tmp: Path, divisor: int, limits: Limits) -> None:
    """``plan_rebalance`` after the cluster is loaded and settled: the seconds of each."""
    path = tmp / "rebalance.yaml"
    nodes, pods = sweep_inputs.write_rebalance_cluster(path, 5000 // divisor, 50_000 // divisor)
    log(f"{job.name}:\n  wrote {nodes} nodes and {pods} pods")
    out = tmp / "rebalance.json"
    finished = _run_cli_job(job, [sys.executable, "-c", _REBALANCE_CHILD, str(path)], out, limits)
    if finished is None:
        return
    _, rss = finished
    found = json.loads(out.read_text())
    log(
        f"  {found['targets']} constraints past maxSkew; plan of {found['evictions']} "
        f"evictions (minimal {found['minimal']}) after {found['replays']} replays"
    )
    print(
        f"{job.name}: plan {found['plan']:.1f} s (load and settle {found['settle']:.1f} s), "
        f"peak RSS {rss:,.0f} MiB",
        flush=True,
    )


def run_html(job: Job, tmp: Path, limits: Limits) -> None:
    """``simulate --html`` on 300 nodes and 4,000 pods: the file's size, and how long headless
    Chromium takes to open it (start, load, lay out and dump the page; its start alone, on an
    empty page, is measured too)."""
    path = tmp / "html-timeline.yaml"
    pods = timeline_scenario.write_html_timeline(path)
    page = tmp / "report.html"
    cmd = [*topospread_command(), "simulate", str(path), "--html", str(page), "-o", "json"]
    finished = _run_cli_job(job, cmd, tmp / "report.json", limits)
    if finished is None:
        return
    wall, rss = finished
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print(f"{job.name}: no chromium to open it ({page.stat().st_size / 2**20:.1f} MiB)")
        return
    empty = tmp / "empty.html"
    empty.write_text("<!doctype html><title>x</title>")

    def opened(target: Path) -> float:
        t0 = time.perf_counter()
        subprocess.run(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--dump-dom",
             target.as_uri()],
            capture_output=True, check=True, timeout=limits.seconds,
        )  # fmt: skip
        return time.perf_counter() - t0

    start = min(opened(empty) for _ in range(3))
    load = min(opened(page) for _ in range(3))
    log(f"  {pods} pods; simulate --html {wall:.1f} s, peak RSS {rss:,.0f} MiB")
    print(
        f"{job.name}: {page.stat().st_size / 2**20:.2f} MiB, opens in {load:.2f} s "
        f"(Chromium's start on an empty page {start:.2f} s)",
        flush=True,
    )


def run_sweep(job: Job, tmp: Path, divisor: int, limits: Limits) -> None:
    """``topospread sweep CLUSTER --nodes|--zones -o json``: its runs, the wall seconds of the
    whole command and runs per second of them, and the peak RSS of the CLI and its workers."""
    assert job.sweep is not None
    path = tmp / f"{job.family.lower()}.yaml"
    extra: list[str] = []
    if job.sweep.autoscaler:
        section = tmp / f"{job.family.lower()}-autoscaler.yaml"
        nodes, pods = sweep_inputs.write_autoscaled_sweep_cluster(
            path, section, job.sweep.nodes // divisor, job.sweep.pods // divisor
        )
        extra = ["--autoscaler", str(section)]
    else:
        nodes, pods = sweep_inputs.write_sweep_cluster(
            path, job.sweep.nodes // divisor, job.sweep.pods // divisor
        )
    log(f"{job.name}:\n  wrote {nodes} nodes and {pods} pods")
    out = tmp / f"{job.family.lower()}.json"
    cmd = [*topospread_command(), "sweep", str(path), job.sweep.flag, *extra, "-o", "json"]
    run, tree = _run_cli(cmd, out, limits.seconds, tree=ProcessTree, interrupt=True)
    assert tree is not None
    report: dict[str, Any] | None = None
    if run.code in (0, 130):
        try:
            report = json.loads(out.read_bytes())
        except ValueError:
            report = None
    # The CLI starts its workers once the base state is settled and snapshotted, and they are
    # gone once every failure has been replayed.
    if tree.children_from is not None and tree.children_until is not None:
        sweep_seconds = tree.children_until - tree.children_from
        log(
            f"  base (load, settle, snapshot) {tree.children_from:.1f} s, sweep "
            f"{sweep_seconds:.1f} s in {tree.most_children} workers, output "
            f"{run.wall - tree.children_until:.1f} s"
        )
    elif run.interrupted:
        log(f"  interrupted in the base settle: no worker started in {limits.seconds:.0f} s")
    memory = _tree_memory(run, tree)
    if tree.peak_rss_mib:
        log(f"  at most {tree.most_processes} processes at once (the CLI, workers, their children)")
    # Other processes on the machine (another benchmark, a test run) slow the sweep down: the
    # CPU seconds are what its work cost whatever ran beside it.
    others = max(0.0, run.machine_cpu - run.cpu) / run.wall if run.machine_cpu else 0.0
    log(
        f"  CPU {run.cpu:,.0f} s in the CLI and its workers ({run.cpu / run.wall:.2f} cores); "
        f"other processes {others:.2f} cores meanwhile"
    )
    if report is None:
        what = "stopped" if run.interrupted or run.code is None else "FAILED"
        code = "" if run.code is None else f" (exit code {run.code})"
        print(f"{job.name}: {what} after {run.wall:.0f} s{code}, {memory}", flush=True)
        return
    completed, planned = report["completed"], report["planned"]
    ranked = report["ranked"]
    log(
        f"  {completed} of {planned} runs: {sum(1 for r in ranked if r['newPending'])} with new "
        f"Pending pods, {sum(1 for r in ranked if r['newViolations'])} with new violations, "
        f"{sum(1 for r in ranked if not r['recovered'])} not recovered"
    )
    for r in ranked[:3]:
        log(
            f"    {r['failure']}: {r['newPending']} new Pending, "
            f"{len(r['newViolations'])} new violations, recovered {r['recovered']}"
        )
    for r in report["runs"]:
        a = r.get("autoscaler")
        if a is not None:
            log(
                f"    {r['failure']['name']}: autoscaler recovered {a['recovered']} in "
                f"{a['took']} s, {a['pendingBefore']} Pending before, added {a['added']}, "
                f"removed {a['removed']}"
            )
    rate = completed / run.wall if run.wall > 0 else 0.0
    if report["interrupted"]:
        print(
            f"{job.name}: stopped after {run.wall:.0f} s: {completed} of {planned} runs, "
            f"{rate:,.2f} runs/s, {memory}",
            flush=True,
        )
        return
    print(
        f"{job.name}: {completed} runs in {run.wall:.1f} s, {rate:,.2f} runs/s, {memory}",
        flush=True,
    )


def _tree_memory(run: CliRun, tree: ProcessTree) -> str:
    """The peak memory of a command and its workers: the tree's sampled sums of RSS (pages the
    forked processes share counted in each: an upper bound) and PSS (shared pages split between
    them), and wait4's figure (the largest single process), alone where /proc gave nothing."""
    if not tree.peak_rss_mib:
        return f"peak RSS {run.rss_mib:,.0f} MiB (the largest process)"
    return (
        f"peak RSS {max(tree.peak_rss_mib, run.rss_mib):,.0f} MiB summed over its processes "
        f"(PSS {tree.peak_pss_mib:,.0f} MiB; {run.rss_mib:,.0f} MiB the largest)"
    )
