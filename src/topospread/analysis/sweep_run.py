"""One ``sweep`` run: a failure replayed on a restored copy of the base state, step by step as
``simulate`` runs steps, with what the cluster looked like during the failure and after it was
undone (``Phase``), and the options every run shares (``SweepOptions``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from topospread.analysis.reports import StepReport, Summary, summarize
from topospread.analysis.simulate import carry_out
from topospread.analysis.sweep_autoscaler import (
    DEFAULT_RECOVERY_LIMIT,
    Recovery,
    recover,
    zone_stockout,
)
from topospread.analysis.sweep_failures import DRAIN, NO_DRAIN_OPTIONS, ZONE, Failure
from topospread.simulator.clock import SECOND, format_duration
from topospread.simulator.drain import DrainOptions, DrainResult
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.actions import parse_step
from topospread.simulator.timeline_steps.waiting import Wait


class WorkloadOutcome(msgspec.Struct, frozen=True, rename="camel"):
    """One workload in one phase: Pending pods, constraints violated / preferences not met."""

    pending: int = 0
    violated: int = 0
    preferences_not_met: int = 0


class Phase(msgspec.Struct, frozen=True, rename="camel"):
    """The cluster at one point of a run (or the base state)."""

    running: int
    pending: dict[str, str]
    violations: list[str]
    preferences_not_met: list[str]
    blocked: list[str]
    workloads: dict[str, WorkloadOutcome]
    # Each violated constraint as "<workload> [<index>] <topologyKey>", whatever its skew and
    # revision: what a failure's violations are compared by with the base state's.
    violated: list[str]


class Run(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """One failure replayed under one seed; with an autoscaler, what it made of the failure
    (``during`` is then read after it acted)."""

    failure: Failure
    seed: int
    timeline: list[dict[str, Any]]
    during: Phase
    after: Phase
    settled: bool
    autoscaler: Recovery | None = None


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """How each failure runs: ``wait`` (nanoseconds; None: until the last toleration of the
    unreachable taint runs out), the user's steps after the failure, the scenario's source
    (for messages), and kubectl drain's options for each drain."""

    then: tuple[dict[str, Any], ...] = ()
    wait: int | None = None
    source: str = "sweep"
    # The file the ``then`` steps came from: their errors name it, and their place in it.
    then_source: str = "--then"
    # How each drain runs: kubectl drain's --force, --disable-eviction, --delete-emptydir-data.
    drain: DrainOptions = NO_DRAIN_OPTIONS
    # With an autoscaler (the scenario's autoscaler: section): how long it may act after
    # each failure, and per seed the wait in which it placed the base state (the head of
    # every run's replay recipe).
    recovery_limit: int = DEFAULT_RECOVERY_LIMIT
    base_steps: Mapping[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)


def phase(report: StepReport | Summary, drains: Iterable[DrainResult] = ()) -> Phase:
    workloads: dict[str, WorkloadOutcome] = {}
    violated = sorted(
        {
            f"{w.workload} [{c.view.index}] {c.view.topology_key}"
            for w in report.workloads
            for c in w.constraints
            if c.violated
        }
    )
    for w in report.workloads:
        hard = sum(1 for c in w.constraints if c.violated)
        soft = sum(1 for c in w.constraints if c.preference_not_met)
        if w.pending or hard or soft:
            workloads[w.workload] = WorkloadOutcome(w.pending, hard, soft)
    blocked = [f"{b.pod} on {d.node}: {b.refusal.message}" for d in drains for b in d.blocked] + [
        f"drain {d.node}: {e}" for d in drains for e in d.errors
    ]
    return Phase(
        running=report.running,
        pending=dict(report.pending),
        violations=report.violations,
        preferences_not_met=report.preferences_not_met,
        blocked=blocked,
        workloads=workloads,
        violated=violated,
    )


def base_phase(sim: Simulation) -> Phase:
    return phase(_report(sim))


def _until_evictions(sim: Simulation) -> int:
    """How long until the last scheduled eviction falls due (0 when none is scheduled)."""
    work = sim.taint_evictions.work
    if not work:
        return 0
    return max(0, max(w.fire_at for w in work.values()) - sim.now)


def run_failure(sim: Simulation, failure: Failure, seed: int, options: SweepOptions) -> Run:
    """Replay one failure on ``sim`` (a restored copy of the base state, consumed); with an
    autoscaler, let it act after the failure's steps (sweep_autoscaler.py)."""
    applied: list[dict[str, Any]] = []
    drains: list[DrainResult] = []
    settled = True
    auto = sim.autoscaler
    if auto is not None:
        auto.take_changes()  # the base state's are not the run's

    def do(doc: dict[str, Any], given: int | None = None) -> None:
        """Carry out one step of the run; ``given``: the step is the ``then`` file's step at
        that index, and its errors name that file and place."""
        nonlocal settled
        index = len(applied)
        if given is None:
            step = parse_step(doc, index, f"{options.source} [{failure.name}]")
        else:
            step = parse_step(doc, given, f"{options.then_source} [{failure.name}]")
            step = step.placed(index, step.name)
        done = carry_out(sim, step)
        settled = sim.settle(step.where).settled and settled
        drains.extend(done.drains)
        applied.append(doc)

    for doc in failure.loss(options.drain):
        do(doc)
    if failure.kind != DRAIN:
        wait = options.wait if options.wait is not None else _until_evictions(sim)
        if auto is not None and failure.kind == ZONE:
            # Dark until just past the autoscaler's last tick (the restore follows it).
            do(zone_stockout(failure.targets[0], wait + options.recovery_limit + SECOND))
        if wait > 0:
            do(Wait.entry(format_duration(wait), "tolerations run out"))
    for i, doc in enumerate(options.then):
        do(dict(doc), i)
    recovery = None
    if auto is not None:
        recovery, waited = recover(
            sim, options.recovery_limit, f"{options.source} [{failure.name}]"
        )
        if waited is not None:
            applied.append(waited)
    during = phase(_report(sim), drains)
    left = failure if auto is None else _left_of(sim, failure)
    for doc in left.recovery() if left is not None else ():
        do(doc)
    after = phase(_report(sim))
    timeline = [*options.base_steps.get(seed, ()), *applied]
    return Run(failure, seed, timeline, during, after, settled, recovery)


def _left_of(sim: Simulation, failure: Failure) -> Failure | None:
    """The failure's nodes the autoscaler left (it removes unready nodes after
    scale-down-unready-time): what there is to restore, None when nothing."""
    if failure.kind == ZONE:
        there = any(
            info.node.metadata.labels.get(failure.zone_key) == failure.targets[0]
            for info in sim.cluster.infos.values()
        )
        return failure if there else None
    targets = tuple(t for t in failure.targets if t in sim.cluster.infos)
    return msgspec.structs.replace(failure, targets=targets) if targets else None


def _report(sim: Simulation) -> Summary:
    return summarize(sim)
