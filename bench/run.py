"""Benchmarks mirroring kube-scheduler's scheduler_perf workloads, plus end-to-end CLI runs.

    python bench/run.py [--quick] [--max-seconds N] [--detail] [--reference | --compare]
                        [--reference-seconds N] [NAME...]

NAME selects workloads by family (``TopologySpreading``) or full name
(``TopologySpreading/5000Nodes_5000Pods``); none selects all. ``--quick`` builds every
workload at a tenth of its size, for smoke runs. ``--list`` prints the names. Like upstream's
scheduler_perf, the benchmark measures scheduling, not reporting: the Scheduler runs with the
fast path on and report detail off (``detail=False`` changes no decision: tests/test_fastpath.py
checks it). ``--detail`` turns the per-node scores and reasons that ``topospread schedule``
reports back on; ``--reference`` turns the fast path off; the line says so.

``--compare`` runs each scheduling workload twice, on the fast path and then on the reference
path (each in its own process, each with its own line), and adds a third line with the two
rates and their ratio:

    TopologySpreading/5000Nodes_5000Pods: fast N pods/s, reference M pods/s, R.Rx

The reference path can take hours at full size, so its run has its own time budget per phase,
``--reference-seconds`` (default 60, never more than ``--max-seconds``): past it the reference
rate is the rate so far and the line says after how many pods it stopped. The CLI and loading
workloads run once, as without ``--compare``, and get no ratio.

The scheduling workloads (bench/workloads.py) are scheduler_perf's topology-spreading, pod
(anti-)affinity, Unschedulable and PreemptionBasic workloads, and Scale. Two more run the CLI
end to end on files written to a temporary directory (bench/chart.py):
``ChartCluster`` runs ``topospread schedule --nodes LIST -o jsonl`` on an EKS-like cluster (one
``kubectl get -o yaml`` List) and reports its Pending pods per second of the whole command,
loading and output included; ``SimulateTimeline`` runs ``topospread simulate SCENARIO -o json``
on a timeline (scale up, rollout, zone loss, wait, restore) and reports its wall seconds.
``SweepNodes`` and ``SweepZones`` run ``topospread sweep CLUSTER --nodes|--zones -o json`` on
the timeline's Deployments over 1,000 nodes (every single-node failure) and 5,000 nodes (the three
zone failures), and report the runs, the wall seconds of the whole command (load, base settle,
sweep, output) and the runs per second of it. ``SweepZonesAutoscaler`` is the zone sweep with
``--autoscaler``: cluster-autoscaler in the loop, one node group per zone, on the cluster as it
keeps one (bench/chart.py's ``autoscaled_sweep_cluster``). ``Rebalance`` plans on 5,000 nodes
and 50,000 pods where a new zone leaves three small Deployments past their maxSkew: a child
process loads and settles the cluster, then plans (``plan_rebalance``), and reports the
seconds of each.

Each workload runs in its own child process, so that one workload's memory cannot inflate
another's figure, started through a small launcher (a bare interpreter, about 9 MiB) that
reports the child's peak resident set size from ``wait4``'s rusage (``ru_maxrss``: the child's
whole life, setup included). On Linux a process's ``ru_maxrss`` starts from the resident size
of the process it was forked from (the exec keeps the larger), and the bench grows to hundreds
of MiB writing the inputs, so the bench never forks the measured command itself: every peak
printed is the command's own. stdout gets one line per
workload:

    TopologySpreading/5000Nodes_5000Pods: N pods/s, peak RSS M MiB
    ChartCluster/1000Nodes_10000BoundPods_2000Pods: N pods/s, peak RSS M MiB
    SimulateTimeline/3000Nodes_30000Pods: S s, peak RSS M MiB
    SweepNodes/1000Nodes_10000Pods: N runs in S s, R runs/s, peak RSS M MiB (...)
    Load100kPods/YAML: S s, peak RSS M MiB

The CLI workloads are the ``topospread`` command itself as the child: the parent times it from
spawn to exit and reads its peak RSS the same way; its stdout goes to a file, read afterwards to
count the pods left Pending. Past ``--max-seconds`` the parent kills it and says ``stopped
after S s``.

The sweep's replays run in worker processes, the CLI's children: wait4's ``ru_maxrss`` covers
them once the CLI has reaped them, but as the largest single process, not their sum. So while a
sweep runs the parent also samples its process tree from /proc (Linux), and the line's peak RSS
is the peak of the tree's summed RSS (pages the forked workers and their per-run children still
share with the CLI count once per process: an upper bound), then in brackets its summed PSS
(shared pages split between the processes sharing them: what the tree takes) and the largest
process's. stderr adds when the workers came and went: the CLI starts them once the base state
is settled and snapshotted, and stops them when the last failure has been replayed, which splits
the wall time into base, sweep and output; and the CPU seconds of the CLI and its workers
(wait4's rusage) beside the cores other processes kept busy meanwhile (/proc/stat), which says
whether something else on the machine slowed the run. Past ``--max-seconds`` the parent
interrupts the sweep (SIGINT, as Ctrl-C: the CLI writes the runs completed so far) and says how
many of them there were.

Progress and setup timings go to stderr.

A scheduling workload runs as scheduler_perf runs it: the default profile and configuration
(percentageOfNodesToScore adaptive), one Scheduler over the cluster; the init pods are
enqueued and scheduled first, unmeasured; then the measured pods are enqueued, and only the
scheduling cycles that follow are timed (enqueueing, with its PreEnqueue checks, is reported
on stderr). The rate is measured pods bound per second of that loop. After ``--max-seconds``
(default 300) of either phase the phase stops where it is; the line then reports the rate so
far and says ``(stopped after N of M pods)``. Past ``--max-rss-mib`` (default: half the
machine's memory) it stops likewise, ``... at the memory limit``: the scheduler keeps every
attempt's Decision, scores of every scored node included, so memory grows with each pod.

Unschedulable enqueues its churn pods (9 CPU, priority 10, never schedulable) during the
measured phase, one after every 120 measured pods bound. In PreemptionBasic each measured pod's
first attempt preempts (a failed attempt: the victims are deleted at once and the pod goes back
to the active queue) and a later one binds it, as ``topospread schedule`` drives the Scheduler;
the line adds ``(N preempted)``. The worker logs the measured pods bound and left
unschedulable, the pods preempted and the other (init, churn) pods left unschedulable.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import chart  # bench/chart.py
import manifests  # bench/manifests.py: the script's directory is first on sys.path
import msgspec
from launcher import Exited, launch, maxrss_mib  # bench/launcher.py
from workloads import WORKLOADS, Setup  # bench/workloads.py

from topospread.api.loader import load_manifests
from topospread.api.types import Pod
from topospread.framework.config import default_config
from topospread.framework.features import DEFAULT_FEATURES
from topospread.plugins.registry import IN_TREE
from topospread.simulator.scenario import Scenario
from topospread.simulator.scheduler import Scheduler

QUICK_DIVISOR: Final = 10
LOAD_PODS: Final = 100_000
LOAD_FORMATS: Final = ("YAML", "JSON")


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """What a worker reports to the parent (one JSON line on its stdout)."""

    name: str
    # Scheduling: measured pods bound, of how many, in how many seconds of the timed loop.
    bound: int = 0
    total: int = 0
    seconds: float = 0.0
    stopped: str = ""  # what ended the measured phase early: "" (nothing), TIME or MEMORY
    unschedulable: int = 0  # measured pods tried and left pending
    init_stopped: str = ""  # "N of M" when a limit ended the init phase early
    other_unschedulable: int = 0  # init and churn pods left pending at the end
    preempted: int = 0  # pods preemption evicted during the measured phase


TIME: Final = "time"
MEMORY: Final = "memory"
# How many attempts pass between two looks at the peak RSS (a getrusage call).
RSS_CHECK_EVERY: Final = 32


@dataclass(frozen=True, slots=True)
class Mode:
    """How the Scheduler is built: ``fast`` lets the vectorised path decide the attempts it
    supports; ``detail`` records every scored node's scores and every rejected node's reasons in
    each Decision (what ``topospread schedule`` and ``explain`` report). The benchmark measures
    scheduling: fast on, detail off."""

    fast: bool = True
    detail: bool = False

    def notes(self) -> list[str]:
        notes = [] if self.fast else ["(reference path)"]
        return notes + (["(detail on)"] if self.detail else [])


@dataclass(frozen=True, slots=True)
class Limits:
    """When a scheduling phase stops early: after ``seconds``, or past ``rss_mib`` of peak RSS
    (the scheduler keeps every attempt's Decision, so memory grows with the pods scheduled)."""

    seconds: float
    rss_mib: float


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# In the child: one workload


def _own_peak_rss_mib() -> float:
    return peak_rss_mib(resource.getrusage(resource.RUSAGE_SELF))


def _drain(
    scheduler: Scheduler,
    keys: set[str],
    limits: Limits,
    on_bound: Callable[[int], None] | None = None,
    churn: Iterator[Pod] | None = None,
    churn_every: int = 0,
) -> tuple[int, int, str]:
    """``Scheduler.run()`` within ``limits``: how many of the pods named by ``keys`` bound,
    how many of their attempts failed, and which limit stopped it ("" if none did).

    Other pods may be scheduled meanwhile (a pending pod that a binding moved back to the
    queue, as upstream's queueing hints move it); they are not counted. After every
    ``churn_every`` pods of ``keys`` bound, the next ``churn`` pod is enqueued.

    A preemptor's attempt that evicts victims fails (it counts as a failed attempt): the
    Scheduler deletes the victims at once and puts the pod straight back in the active queue,
    where its priority puts it first, so its next attempt binds it, as ``Scheduler.run()``
    (``topospread schedule``) goes on.
    """
    deadline = time.perf_counter() + limits.seconds
    bound = failed = attempts = 0
    while len(scheduler.active):
        if time.perf_counter() >= deadline:
            return bound, failed, TIME
        attempts += 1
        if attempts % RSS_CHECK_EVERY == 0 and _own_peak_rss_mib() > limits.rss_mib:
            return bound, failed, MEMORY
        decision = scheduler.schedule_one(scheduler.active.pop())
        if decision.key not in keys:
            continue
        if decision.node is None:
            failed += 1
        else:
            bound += 1
            if on_bound is not None:
                on_bound(bound)
            if churn is not None and churn_every and bound % churn_every == 0:
                pod = next(churn, None)
                if pod is not None:
                    scheduler.add(pod)
    return bound, failed, ""


def run_scheduling(name: str, setup: Setup, limits: Limits, mode: Mode) -> Result:
    started = time.perf_counter()
    scenario = Scenario(
        nodes=setup.nodes,
        pods=setup.bound,
        queue=[],
        objects=list(setup.objects),
        config=default_config(),
    )
    cluster = scenario.cluster()
    scheduler = Scheduler(
        cluster, scenario.config, IN_TREE, DEFAULT_FEATURES, fast=mode.fast, detail=mode.detail
    )
    log(f"  cluster and scheduler ready in {time.perf_counter() - started:.1f} s")

    init_stopped = ""
    if setup.init:
        t0 = time.perf_counter()
        for pod in setup.init:
            scheduler.add(pod)
        keys = {pod.key for pod in setup.init}
        bound, _, stopped = _drain(scheduler, keys, limits)
        log(
            f"  init: {bound} of {len(setup.init)} pods bound in "
            f"{time.perf_counter() - t0:.1f} s (unmeasured)"
        )
        if stopped:
            init_stopped = f"{bound} of {len(setup.init)}"
            # The rest stay out of the measured phase: only measured pods are timed.
            while len(scheduler.active):
                scheduler.active.pop()

    t0 = time.perf_counter()
    churn = iter(setup.churn)
    # Upstream's churn op starts before the measured pods are created.
    first = next(churn, None)
    if first is not None:
        scheduler.add(first)
    for pod in setup.measured:
        scheduler.add(pod)
    log(f"  enqueued {len(setup.measured)} measured pods in {time.perf_counter() - t0:.2f} s")
    preempted_before = len(scheduler.preempted)
    fast_before = scheduler.fast_decisions
    total = len(setup.measured)
    progress_every = max(total // 10, 1)

    def progress(bound: int) -> None:
        if bound % progress_every == 0:
            elapsed = time.perf_counter() - start
            log(f"  {bound}/{total} bound, {bound / elapsed:,.1f} pods/s")

    keys = {pod.key for pod in setup.measured}
    start = time.perf_counter()
    bound, failed, stopped = _drain(scheduler, keys, limits, progress, churn, setup.churn_every)
    seconds = time.perf_counter() - start
    fast_decided = scheduler.fast_decisions - fast_before
    log(f"  fast path decided {fast_decided} attempts ({bound + failed} were measured pods')")
    unschedulable = sum(1 for key in scheduler.unschedulable if key in keys)
    other = len(scheduler.unschedulable) - unschedulable
    preempted = len(scheduler.preempted) - preempted_before
    log(
        f"  measured: {bound} bound, {unschedulable} unschedulable, {failed} failed attempts; "
        f"{preempted} pods preempted; {other} other pods unschedulable "
        f"(of {len(setup.churn)} churn pods)"
    )
    if stopped:
        log(f"  stopped at the {stopped} limit after {seconds:.1f} s")
    return Result(
        name=name,
        bound=bound,
        total=total,
        seconds=seconds,
        stopped=stopped,
        unschedulable=unschedulable,
        init_stopped=init_stopped,
        other_unschedulable=other,
        preempted=preempted,
    )


def run_load(name: str, path: Path) -> Result:
    start = time.perf_counter()
    objects = load_manifests(path)
    seconds = time.perf_counter() - start
    log(f"  {len(objects)} objects from {path.stat().st_size / 2**20:,.0f} MiB")
    return Result(name=name, bound=len(objects), total=len(objects), seconds=seconds)


def worker(name: str, divisor: int, limits: Limits, mode: Mode, manifest: Path | None) -> None:
    if manifest is not None:
        result = run_load(name, manifest)
    else:
        workload = next(w for w in WORKLOADS if w.name(divisor) == name)
        t0 = time.perf_counter()
        setup = workload.build(divisor)
        log(
            f"  built {len(setup.nodes)} nodes, {len(setup.bound) + len(setup.init)} + "
            f"{len(setup.measured)} pods in {time.perf_counter() - t0:.1f} s"
        )
        result = run_scheduling(name, setup, limits, mode)
    sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")


# ---------------------------------------------------------------------------------------------
# In the parent: select, spawn, measure, print


@dataclass(frozen=True, slots=True)
class Job:
    name: str
    family: str
    manifest_format: str | None = None  # YAML or JSON for the loading benchmark
    cli: str | None = None  # CHART, STATEFUL_CHART, TIMELINE, SWEEP or REBALANCE: on files
    sweep: Sweep | None = None  # for SWEEP


REBALANCE: Final = "rebalance"
HTML: Final = "html"
CHART: Final = "chart"
STATEFUL_CHART: Final = "stateful-chart"
TIMELINE: Final = "timeline"
SWEEP: Final = "sweep"


@dataclass(frozen=True, slots=True)
class Sweep:
    """A ``topospread sweep`` workload: the failures its ``flag`` chooses, of a cluster of
    ``nodes`` and ``pods`` at full size (bench/chart.py's ``sweep_cluster``)."""

    family: str
    flag: str
    nodes: int
    pods: int
    # With cluster-autoscaler in the loop (bench/chart.py's ``autoscaled_sweep_cluster``).
    autoscaler: bool = False

    def name(self, divisor: int) -> str:
        return f"{self.family}/{self.nodes // divisor}Nodes_{self.pods // divisor}Pods"


SWEEPS: Final = (
    Sweep("SweepNodes", "--nodes", 1000, 10_000),
    Sweep("SweepZones", "--zones", 5000, 50_000),
    Sweep("SweepZonesAutoscaler", "--zones", 5000, 50_000, autoscaler=True),
)


def jobs(divisor: int) -> list[Job]:
    out = [Job(w.name(divisor), w.family) for w in WORKLOADS]
    out.append(
        Job(
            f"ChartCluster/{1000 // divisor}Nodes_{10_000 // divisor}BoundPods_"
            f"{2000 // divisor}Pods",
            "ChartCluster",
            cli=CHART,
        )
    )
    out.append(
        Job(
            f"ChartClusterStateful/{1000 // divisor}Nodes_{10_000 // divisor}BoundPods_"
            f"{2000 // divisor}Pods",
            "ChartClusterStateful",
            cli=STATEFUL_CHART,
        )
    )
    out.append(
        Job(
            f"SimulateTimeline/{3000 // divisor}Nodes_{30_000 // divisor}Pods",
            "SimulateTimeline",
            cli=TIMELINE,
        )
    )
    out += [Job(s.name(divisor), s.family, cli=SWEEP, sweep=s) for s in SWEEPS]
    out.append(
        Job(f"Rebalance/{5000 // divisor}Nodes_{50_000 // divisor}Pods", "Rebalance", cli=REBALANCE)
    )
    out.append(Job("HtmlReport/300Nodes_4000Pods", "HtmlReport", cli=HTML))
    family = f"Load{LOAD_PODS // divisor // 1000}kPods"
    out += [Job(f"{family}/{fmt}", family, fmt) for fmt in LOAD_FORMATS]
    return out


def select(all_jobs: Sequence[Job], names: Sequence[str]) -> list[Job]:
    if not names:
        return list(all_jobs)
    unknown = [n for n in names if not any(n in (j.name, j.family) for j in all_jobs)]
    if unknown:
        known = ", ".join(j.name for j in all_jobs)
        raise SystemExit(f"bench: unknown workload {unknown[0]!r}; known: {known}")
    return [j for j in all_jobs if j.name in names or j.family in names]


def peak_rss_mib(rusage: object) -> float:
    return maxrss_mib(float(getattr(rusage, "ru_maxrss", 0)))


def default_max_rss_mib() -> float:
    """Half the machine's memory. Detailed Decisions at 5,000 nodes take about 0.3 MiB each,
    so DefaultTopologySpreading's 50,000 measured pods would need some 16 GiB."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**21
    except (ValueError, OSError):
        return 8192.0


def spawn(
    job: Job, divisor: int, limits: Limits, mode: Mode, manifest: Path | None
) -> Result | None:
    """Run ``job`` in a child process and print its line: the child's Result, None if it
    failed."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        job.name,
        "--divisor",
        str(divisor),
        "--max-seconds",
        str(limits.seconds),
        "--max-rss-mib",
        str(limits.rss_mib),
    ]
    if manifest is not None:
        cmd += ["--manifest", str(manifest)]
    cmd += [] if mode.fast else ["--reference"]
    cmd += ["--detail"] if mode.detail else []
    log(f"{job.name}:")
    launched = launch(cmd, subprocess.PIPE)
    assert launched.proc.stdout is not None
    out = launched.proc.stdout.read()
    exited = launched.poll(block=True)
    assert exited is not None
    rss = exited.rss_mib
    if exited.code != 0:
        print(f"{job.name}: FAILED (exit code {exited.code}), peak RSS {rss:,.0f} MiB")
        return None
    r = msgspec.json.decode(out.strip().splitlines()[-1], type=Result)
    if job.manifest_format is not None:
        print(f"{r.name}: {r.seconds:.1f} s, peak RSS {rss:,.0f} MiB", flush=True)
        return r
    rate = _rate(r)
    notes = [f"({n})" for n in _stops(r, "", "")]
    if r.unschedulable:
        notes.append(f"({r.unschedulable} unschedulable)")
    if r.preempted:
        notes.append(f"({r.preempted} preempted)")
    notes += mode.notes()
    suffix = "".join(" " + n for n in notes)
    print(f"{r.name}: {rate:,.1f} pods/s, peak RSS {rss:,.0f} MiB{suffix}", flush=True)
    return r


def _rate(r: Result) -> float:
    """Measured pods bound per second of the timed loop."""
    return r.bound / r.seconds if r.seconds > 0 else 0.0


def _stops(r: Result, lead: str, budget: str) -> list[str]:
    """Why a run's rate covers fewer pods than the workload has, each reason after ``lead``
    (a time stop's after ``budget``); empty when it covers all."""
    notes = []
    if r.init_stopped:
        notes.append(f"{lead}init stopped after {r.init_stopped} pods{budget}")
    if r.stopped == TIME:
        notes.append(f"{lead}stopped after {r.bound} of {r.total} pods{budget}")
    elif r.stopped == MEMORY:
        notes.append(f"{lead}stopped after {r.bound} of {r.total} pods at the memory limit")
    return notes


def _stopped_note(path: str, r: Result, budget: str) -> str:
    """Why ``path``'s rate covers fewer pods than the workload has ("" when it covers all)."""
    return "".join(f" ({n})" for n in _stops(r, f"{path} ", budget))


def compare(job: Job, divisor: int, limits: Limits, reference_limits: Limits, detail: bool) -> None:
    """Run a scheduling workload on the fast path, then on the reference path within
    ``reference_limits``, and print a line with both rates and their ratio."""
    fast = spawn(job, divisor, limits, Mode(fast=True, detail=detail), None)
    reference = spawn(job, divisor, reference_limits, Mode(fast=False, detail=detail), None)
    if fast is None or reference is None:
        print(f"{job.name}: no ratio (a run FAILED)", flush=True)
        return
    fast_rate, reference_rate = _rate(fast), _rate(reference)
    ratio = f"{fast_rate / reference_rate:,.1f}x" if reference_rate > 0 else "no ratio"
    budget = f" in its {reference_limits.seconds:g} s budget"
    notes = _stopped_note("fast", fast, "") + _stopped_note("reference", reference, budget)
    notes += " (detail on)" if detail else ""
    print(
        f"{job.name}: fast {fast_rate:,.0f} pods/s, reference {reference_rate:,.0f} pods/s, "
        f"{ratio}{notes}",
        flush=True,
    )


# ---------------------------------------------------------------------------------------------
# End to end: the topospread CLI on written files

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
    pods = chart.write_timeline(path, divisor)
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
    nodes, pods = chart.write_rebalance_cluster(path, 5000 // divisor, 50_000 // divisor)
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
    pods = chart.write_html_timeline(path)
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
        nodes, pods = chart.write_autoscaled_sweep_cluster(
            path, section, job.sweep.nodes // divisor, job.sweep.pods // divisor
        )
        extra = ["--autoscaler", str(section)]
    else:
        nodes, pods = chart.write_sweep_cluster(
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


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="workload family or full name")
    p.add_argument("--quick", action="store_true", help="every workload at 1/10 of its size")
    p.add_argument(
        "--max-seconds",
        type=float,
        default=300.0,
        help="per phase: stop scheduling after this long and report the rate so far",
    )
    p.add_argument(
        "--max-rss-mib",
        type=float,
        default=default_max_rss_mib(),
        help="per phase: stop scheduling past this peak RSS (default: half the RAM)",
    )
    p.add_argument(
        "--detail",
        action="store_true",
        help="build the Scheduler with detail=True (per-node scores and reasons in Decisions)",
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="build the Scheduler with fast=False (every attempt through the plugins)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="run each scheduling workload on the fast and the reference path; print the ratio",
    )
    p.add_argument(
        "--reference-seconds",
        type=float,
        default=60.0,
        help="with --compare, per phase: the reference run's time budget (default 60)",
    )
    p.add_argument("--list", action="store_true", help="print the workload names and exit")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--divisor", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--manifest", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.compare and args.reference:
        p.error("--compare runs both paths: leave out --reference")
    limits = Limits(seconds=args.max_seconds, rss_mib=args.max_rss_mib)
    reference_limits = Limits(
        seconds=min(args.reference_seconds, args.max_seconds), rss_mib=args.max_rss_mib
    )
    mode = Mode(fast=not args.reference, detail=args.detail)
    if args.worker:
        worker(args.worker, args.divisor, limits, mode, args.manifest)
        return
    divisor = QUICK_DIVISOR if args.quick else 1
    selected = select(jobs(divisor), args.names)
    if args.list:
        for job in selected:
            print(job.name)
        return
    with tempfile.TemporaryDirectory(prefix="topospread-bench-") as tmp:
        files: dict[str, Path] = {}
        for job in selected:
            if job.manifest_format is not None and job.manifest_format not in files:
                n = LOAD_PODS // divisor
                path = Path(tmp) / f"pods.{job.manifest_format.lower()}"
                t0 = time.perf_counter()
                if job.manifest_format == "YAML":
                    manifests.check_template()
                    manifests.write_yaml(path, n)
                else:
                    manifests.write_json(path, n)
                log(f"wrote {n} pods as {job.manifest_format} in {time.perf_counter() - t0:.1f} s")
                files[job.manifest_format] = path
        for job in selected:
            if job.cli in (CHART, STATEFUL_CHART):
                run_chart(job, Path(tmp), divisor, limits, stateful=job.cli == STATEFUL_CHART)
                continue
            if job.cli == TIMELINE:
                run_timeline(job, Path(tmp), divisor, limits)
                continue
            if job.cli == SWEEP:
                run_sweep(job, Path(tmp), divisor, limits)
                continue
            if job.cli == REBALANCE:
                run_rebalance(job, Path(tmp), divisor, limits)
                continue
            if job.cli == HTML:
                run_html(job, Path(tmp), limits)
                continue
            if args.compare and job.manifest_format is None:
                compare(job, divisor, limits, reference_limits, args.detail)
                continue
            manifest = files.get(job.manifest_format) if job.manifest_format else None
            spawn(job, divisor, limits, mode, manifest)


if __name__ == "__main__":
    main()
