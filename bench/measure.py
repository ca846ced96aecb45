"""The benchmark's child side: one scheduling or loading workload measured in this process,
its Result written as one JSON line on stdout for the parent (bench/run.py), progress and
setup timings on stderr. The measurement is scheduler_perf's: only the scheduling cycles after
the measured pods are enqueued are timed, within a time and a memory limit.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import msgspec
from launcher import maxrss_mib  # bench/launcher.py: the script's directory is on sys.path
from workloads import WORKLOADS, Setup  # bench/workloads.py

from topospread.api.loader import load_manifests
from topospread.api.types import Pod
from topospread.framework.config import default_config
from topospread.framework.features import DEFAULT_FEATURES
from topospread.plugins.registry import IN_TREE
from topospread.simulator.scenario import Scenario
from topospread.simulator.scheduler import Scheduler


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


def peak_rss_mib(rusage: object) -> float:
    return maxrss_mib(float(getattr(rusage, "ru_maxrss", 0)))


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
