"""``sweep``: every failure of the chosen families, each replayed from one settled base state.

The base state is the input's cluster settled by controllers and scheduler, after the input's
own timeline steps if it has any, once per tie-break seed. Each failure then starts from a
restored copy of that state (simulator/checkpoint.py) and runs as a short timeline, step by step
exactly as ``simulate`` runs steps:

- ``zone Z``: ``loseZone`` (the zone's nodes NotReady, tainted unreachable), then a ``wait``
  until the last toleration of the taint has run out and the pods are evicted;
- ``node N`` (and ``nodes A + B`` for combinations): ``loseNode``, then the same ``wait``;
- ``drain N``: ``drain`` (kubectl drain, budgets honoured; blocked evictions reported);

then the user's own steps (``--then``), after which the *during* phase is read: pods Pending
with their FailedScheduling text, DoNotSchedule constraints violated, ScheduleAnyway
preferences not met, pods a drain could not evict. The failure is then undone
(``restoreZone``, ``restoreNode``, ``uncordon``) and the *after* phase read; the cluster
recovers when no workload has more Pending pods than in the base state and no constraint is
violated that was not violated there.

Every run records the steps it applied (``timeline``), so a scenario whose ``timeline`` is
those steps (in place of its own: the base state is the cluster before them) replays that
failure alone under ``simulate`` with the run's seed. Only when the base state came after
the input's own steps (``--after-timeline``) do they go after those steps instead.

A run whose worker process dies (the kernel's OOM killer, a signal) is run again once on a
fresh worker; a run that kills its worker twice is reported as failed, with how the worker
died (``RunError``), and every other run is kept.
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import os
import signal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.analysis.reports import StepReport, Summary, pending_json, summarize
from topospread.analysis.simulate import carry_out, settle_timeline
from topospread.analysis.sweep_autoscaler import (
    DEFAULT_RECOVERY_LIMIT,
    AutoscalerInfo,
    Recovery,
    recover,
    zone_stockout,
)
from topospread.api.types import LABEL_TOPOLOGY_ZONE
from topospread.errors import ManifestError
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.simulator.checkpoint import FORKS, Snapshot
from topospread.simulator.clock import SECOND, format_duration
from topospread.simulator.drain import DrainOptions, DrainResult
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import TimelineScenario
from topospread.simulator.timeline_steps.actions import parse_step
from topospread.simulator.timeline_steps.failures import (
    LoseNode,
    LoseZone,
    RestoreNode,
    RestoreZone,
)
from topospread.simulator.timeline_steps.nodes import Drain, Uncordon
from topospread.simulator.timeline_steps.waiting import Wait
from topospread.util.natural import natural_key

NO_DRAIN_OPTIONS: Final = DrainOptions()
# The families of failures.
ZONE: Final = "zone"
NODE: Final = "node"
NODES: Final = "nodes"
DRAIN: Final = "drain"
KINDS: Final = (ZONE, NODE, NODES, DRAIN)
REQUIREMENTS: Final = ("no-pending", "no-violation", "no-blocked-drain", "recovers")


class Failure(msgspec.Struct, frozen=True):
    """One failure: ``kind`` (zone, node, nodes, drain) of ``targets``. Not ordered by its
    fields (code points would put ``a-10`` before ``a-2``): sort by ``sort_key``."""

    kind: str
    targets: tuple[str, ...]
    zone_key: str = LABEL_TOPOLOGY_ZONE

    @property
    def name(self) -> str:
        return f"{self.kind} {' + '.join(self.targets)}"

    def sort_key(self) -> tuple[Any, ...]:
        """Kind, then the targets in natural order (``node a-2`` before ``node a-10``)."""
        return self.kind, tuple(natural_key(t) for t in self.targets), self.zone_key

    def loss(self, drain: DrainOptions = NO_DRAIN_OPTIONS) -> list[dict[str, Any]]:
        """The timeline steps of the failure; a drain with kubectl drain's ``drain`` options."""
        if self.kind == ZONE:
            zone = {"zone": self.targets[0], "zoneKey": self.zone_key}
            return [LoseZone.entry(zone, f"lose zone {self.targets[0]}")]
        if self.kind == DRAIN:
            flags = {
                key: True
                for key, on in (
                    ("force", drain.force),
                    ("disableEviction", drain.disable_eviction),
                    ("deleteEmptyDirData", drain.delete_emptydir_data),
                )
                if on
            }
            target: str | dict[str, Any] = (
                {"node": self.targets[0], **flags} if flags else self.targets[0]
            )
            return [Drain.entry(target, f"drain {self.targets[0]}")]
        return [LoseNode.entry(list(self.targets), f"lose {self.name}")]

    def recovery(self) -> list[dict[str, Any]]:
        if self.kind == ZONE:
            zone = {"zone": self.targets[0], "zoneKey": self.zone_key}
            return [RestoreZone.entry(zone, f"restore zone {self.targets[0]}")]
        if self.kind == DRAIN:
            return [Uncordon.entry(self.targets[0], f"uncordon {self.targets[0]}")]
        return [RestoreNode.entry(list(self.targets), f"restore {self.name}")]


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


class RunError(msgspec.Struct, frozen=True, rename="camel"):
    """A run that did not complete: its worker died on every attempt (``error`` says how,
    e.g. ``worker killed by SIGKILL``)."""

    failure: Failure
    seed: int
    error: str
    attempts: int


# Attempts of one run before it is reported as failed: the first and one retry.
MAX_ATTEMPTS: Final = 2


def death(exitcode: int | None, who: str = "worker") -> str:
    """How a process ended, as a failed run reports it: ``worker killed by SIGKILL``."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"{who} killed by {name}"
    return f"{who} exited with code {exitcode}"


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """How each failure runs: ``wait`` (nanoseconds; None: until the last toleration of the
    unreachable taint runs out), the user's steps after the failure, the scenario's source
    (for messages), and kubectl drain's options for each drain."""

    then: tuple[dict[str, Any], ...] = ()
    wait: int | None = None
    source: str = "sweep"
    # How each drain runs: kubectl drain's --force, --disable-eviction, --delete-emptydir-data.
    drain: DrainOptions = NO_DRAIN_OPTIONS
    # With an autoscaler (the scenario's autoscaler: section): how long it may act after
    # each failure, and per seed the wait in which it placed the base state (the head of
    # every run's replay recipe).
    recovery_limit: int = DEFAULT_RECOVERY_LIMIT
    base_steps: Mapping[int, tuple[dict[str, Any], ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Job:
    index: int
    seed: int
    failure: Failure


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


def enumerate_failures(
    sim: Simulation,
    *,
    zones: bool,
    nodes: bool,
    drains: bool,
    max_failures: int = 1,
    zone_key: str = LABEL_TOPOLOGY_ZONE,
) -> list[Failure]:
    """The failures of the chosen families, in a fixed order: zones, single nodes (and every
    combination of up to ``max_failures`` nodes), drains; each by name in natural order
    (numbers by value: ``a-2`` before ``a-10``)."""
    names = sorted(sim.cluster.infos, key=natural_key)
    out: list[Failure] = []
    if zones:
        found = sorted(
            {
                v
                for info in sim.cluster.infos.values()
                if (v := info.node.metadata.labels.get(zone_key))
            },
            key=natural_key,
        )
        if not found:
            raise ManifestError(
                f"--zones: no node has the label {zone_key} (--zone-key names the label that "
                "tells zones apart)"
            )
        out += [Failure(ZONE, (z,), zone_key) for z in found]
    if nodes or max_failures > 1:
        out += [Failure(NODE, (n,)) for n in names]
        for k in range(2, max_failures + 1):
            out += [Failure(NODES, combo) for combo in itertools.combinations(names, k)]
    if drains:
        out += [Failure(DRAIN, (n,)) for n in names]
    return out


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

    def do(doc: dict[str, Any]) -> None:
        nonlocal settled
        index = len(applied)
        step = parse_step(doc, index, f"{options.source} [{failure.name}]")
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
    for doc in options.then:
        do(dict(doc))
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


# ------------------------------------------------------------------ the worker side

# The base state of every seed in a worker process, set once per process.
_BASES: dict[int, Snapshot[Simulation]] = {}
_OPTIONS: list[SweepOptions] = []


class Bases(Mapping[int, bytes]):
    """The settled base state of each seed, as its snapshot's bytes — and, where the
    platform forks, as the live Simulation itself, snapshotted only if a backend asks for the
    bytes (the serial and Ray backends do; it takes seconds at 50,000 pods): a worker forked
    from this process reads the live state as it is (copy-on-write) instead of restoring a
    snapshot, which saves the restore and lays the copy out better (runs from a restored copy
    take about a quarter longer). Pickled (spawned workers, Ray), it is a dict of bytes."""

    def __init__(self) -> None:
        self._seeds: list[int] = []
        self._live: dict[int, Simulation] = {}
        self._data: dict[int, bytes] = {}

    def add(self, seed: int, sim: Simulation) -> None:
        self._seeds.append(seed)
        if FORKS:
            self._live[seed] = sim
        else:
            self._data[seed] = sim.snapshot().data

    def live(self, seed: int) -> Simulation | None:
        return self._live.get(seed)

    def release(self) -> None:
        """Drop the live states (the bytes taken so far stay)."""
        self._live.clear()

    def __getitem__(self, seed: int) -> bytes:
        data = self._data.get(seed)
        if data is None:
            sim = self._live.get(seed)
            if sim is None:
                raise KeyError(seed)
            data = self._data[seed] = sim.snapshot().data
        return data

    def __iter__(self) -> Iterator[int]:
        return iter(self._seeds)

    def __len__(self) -> int:
        return len(self._seeds)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self.items()),))


def init_worker(bases: Mapping[int, bytes], options: SweepOptions) -> None:
    _BASES.clear()
    _BASES.update({seed: Snapshot(data) for seed, data in bases.items()})
    _OPTIONS[:] = [options]


def worker_options() -> SweepOptions:
    """The options this worker was started with (``init_worker``)."""
    return _OPTIONS[0]


# A test hook, never set in use: the path of a file of lines "once|always <failure name>".
# A worker about to run that failure kills itself with SIGKILL, as the OOM killer would: on
# every attempt (always), or on the first only (once: it first leaves a mark beside the file).
# Read by the workers alone (the pool's, Ray's tasks), never in the sweep's own process.
KILL_HOOK_ENV: Final = "TOPOSPREAD_TEST_KILL_WORKER"


def kill_hook(job: Job) -> None:
    """Kill this worker if the test hook (KILL_HOOK_ENV) names the job's failure."""
    path = os.environ.get(KILL_HOOK_ENV)
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return
    for line in lines:
        mode, _, name = line.partition(" ")
        if name != job.failure.name:
            continue
        if mode == "once":
            mark = f"{path}.{job.index}.killed"
            try:
                os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return  # killed once already: this is the retry
        os.kill(os.getpid(), signal.SIGKILL)


def run_job(job: Job) -> tuple[int, Run]:
    """One job in a worker: restore the seed's base, replay, free the copy. The garbage
    collector waits until the end: mid-run collections would walk the whole copy again and
    again (a copy is a few hundred thousand objects), one collection after it frees it."""
    gc.disable()
    try:
        sim = _BASES[job.seed].restore()
        run = run_failure(sim, job.failure, job.seed, _OPTIONS[0])
        del sim
    finally:
        gc.enable()
    gc.collect()
    return job.index, run


def run_jobs(
    bases: Mapping[int, bytes], options: SweepOptions, jobs: Sequence[Job]
) -> list[tuple[int, Run]]:
    """A batch of jobs in one call (a Ray task)."""
    init_worker(bases, options)
    out = []
    for job in jobs:
        kill_hook(job)
        out.append(run_job(job))
    return out


# ------------------------------------------------------------------ the summary


@dataclass(slots=True)
class Outcome:
    """A run compared with its seed's base state."""

    run: Run
    new_pending: int
    new_violations: list[str]
    recovered: bool

    @property
    def failure(self) -> Failure:
        return self.run.failure

    def severity(self) -> tuple[int, ...]:
        """Worst first: not recovered, new Pending pods, violations, blocked drains,
        preferences not met."""
        d = self.run.during
        return (
            int(not self.recovered),
            self.new_pending,
            len(self.new_violations),
            len(d.blocked),
            len(d.preferences_not_met),
        )

    def breaks(self, requirement: str) -> bool:
        d = self.run.during
        if requirement == "no-pending":
            return self.new_pending > 0
        if requirement == "no-violation":
            return bool(self.new_violations)
        if requirement == "no-blocked-drain":
            return bool(d.blocked)
        return not self.recovered  # recovers


def compare(run: Run, base: Phase) -> Outcome:
    def pending_by_workload(p: Phase) -> dict[str, int]:
        return {w: o.pending for w, o in p.workloads.items()}

    base_pending = pending_by_workload(base)
    base_violated = set(base.violated)
    new_pending = sum(
        max(0, n - base_pending.get(w, 0)) for w, n in pending_by_workload(run.during).items()
    )
    new_violations = [v for v in run.during.violated if v not in base_violated]
    after_pending = pending_by_workload(run.after)
    recovered = all(n <= base_pending.get(w, 0) for w, n in after_pending.items()) and all(
        v in base_violated for v in run.after.violated
    )
    return Outcome(run, new_pending, new_violations, recovered)


@dataclass(slots=True)
class SweepReport:
    source: str
    seeds: list[int]
    base: dict[int, Phase]
    outcomes: list[Outcome]
    planned: int
    # Failures per kind (each replayed once per seed).
    plan: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    # Runs whose worker died on every attempt (no outcome), in job order.
    failed: list[RunError] = field(default_factory=list)
    autoscaler: AutoscalerInfo | None = None

    @property
    def families(self) -> list[str]:
        """The kinds of failure tried, in KINDS order."""
        return list(self.plan)

    def ranked(self) -> list[Outcome]:
        return sorted(
            self.outcomes,
            key=lambda o: (tuple(-x for x in o.severity()), o.failure.sort_key(), o.run.seed),
        )

    def failing(self, requirements: Sequence[str]) -> list[Outcome]:
        return [o for o in self.ranked() if any(o.breaks(r) for r in requirements)]

    def workloads(self) -> list[str]:
        names = {w for o in self.outcomes for w in o.run.during.workloads}
        names |= {w for b in self.base.values() for w in b.workloads}
        return sorted(names)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "seeds": self.seeds,
            "families": self.families,
            "failures": self.plan,
            "planned": self.planned,
            "completed": len(self.outcomes),
            "failed": [
                {
                    "failure": {
                        "name": e.failure.name,
                        "kind": e.failure.kind,
                        "targets": list(e.failure.targets),
                    },
                    "seed": e.seed,
                    "error": e.error,
                    "attempts": e.attempts,
                }
                for e in self.failed
            ],
            "interrupted": self.interrupted,
            "base": {str(s): phase_json(p) for s, p in self.base.items()},
            "ranked": [
                {
                    "failure": o.failure.name,
                    "seed": o.run.seed,
                    "newPending": o.new_pending,
                    "newViolations": o.new_violations,
                    "blocked": len(o.run.during.blocked),
                    "preferencesNotMet": len(o.run.during.preferences_not_met),
                    "recovered": o.recovered,
                    "broken": any(o.severity()),
                }
                for o in self.ranked()
            ],
            "runs": [
                {
                    **msgspec.to_builtins(o.run),
                    "during": phase_json(o.run.during),
                    "after": phase_json(o.run.after),
                    "failure": {
                        "name": o.failure.name,
                        "kind": o.failure.kind,
                        "targets": list(o.failure.targets),
                    },
                    "recovered": o.recovered,
                }
                for o in sorted(self.outcomes, key=lambda o: (o.failure.sort_key(), o.run.seed))
            ],
            "warnings": self.warnings,
        } | ({"autoscaler": self.autoscaler.to_json()} if self.autoscaler is not None else {})


def phase_json(p: Phase) -> dict[str, Any]:
    """A phase as the JSON report gives it: Pending pods in the shape of every report
    (``pending_json``)."""
    out: dict[str, Any] = msgspec.to_builtins(p)
    out["pending"] = pending_json(p.pending)
    return out


# ------------------------------------------------------------------ the driver

# A backend runs jobs against the snapshots of the base states and reports each run as it
# completes, or as failed when its worker died on every attempt: run(bases, options, jobs,
# done).
Done = Callable[[int, Run | RunError], None]
Backend = Callable[[Mapping[int, bytes], SweepOptions, Sequence[Job], Done], None]


def serial_backend(
    bases: Mapping[int, bytes],
    options: SweepOptions,
    jobs: Sequence[Job],
    done: Done,
) -> None:
    init_worker(bases, options)
    for job in jobs:
        done(*run_job(job))


def sweep(
    scenario: TimelineScenario,
    *,
    zones: bool = False,
    nodes: bool = False,
    drains: bool = False,
    max_failures: int = 1,
    zone_key: str = LABEL_TOPOLOGY_ZONE,
    seeds: Sequence[int] = (0,),
    options: SweepOptions | None = None,
    backend: Backend = serial_backend,
    features: Features = DEFAULT_FEATURES,
    on_planned: Callable[[int], None] | None = None,
    on_run: Callable[[Outcome], None] | None = None,
) -> SweepReport:
    """Settle the base state per seed, then replay every failure from it through
    ``backend``. Ctrl-C (KeyboardInterrupt) stops it with the runs completed so far."""
    options = options or SweepOptions(source=scenario.source)
    bases = Bases()
    base_phases: dict[int, Phase] = {}
    failures: list[Failure] = []
    base_recoveries: dict[int, Recovery] = {}
    base_steps: dict[int, tuple[dict[str, Any], ...]] = {}
    for seed in seeds:
        sim = settle_timeline(scenario, seed, features)
        if sim.autoscaler is not None:
            # The autoscaler places what the base state leaves Pending before anything fails.
            base_recoveries[seed], waited = recover(sim, options.recovery_limit, scenario.source)
            base_steps[seed] = (waited,) if waited is not None else ()
        base_phases[seed] = base_phase(sim)
        if not failures:
            failures = enumerate_failures(
                sim,
                zones=zones,
                nodes=nodes,
                drains=drains,
                max_failures=max_failures,
                zone_key=zone_key,
            )
        bases.add(seed, sim)
        del sim
    if base_steps:
        options = dataclasses.replace(options, base_steps=base_steps)
    jobs = [Job(i, seed, f) for i, (f, seed) in enumerate((f, s) for f in failures for s in seeds)]
    if on_planned is not None:
        on_planned(len(jobs))
    kinds = sorted({f.kind for f in failures}, key=KINDS.index)
    plan = {k: sum(1 for f in failures if f.kind == k) for k in kinds}
    report = SweepReport(scenario.source, list(seeds), base_phases, [], len(jobs), plan)
    if scenario.autoscaler is not None:
        report.autoscaler = AutoscalerInfo(
            base_recoveries[seeds[0]].autoscaler,
            options.recovery_limit,
            base_recoveries,
        )
    results: dict[int, Outcome] = {}
    failed: dict[int, RunError] = {}

    def done(index: int, run: Run | RunError) -> None:
        if isinstance(run, RunError):
            failed[index] = run
            return
        outcome = compare(run, base_phases[run.seed])
        results[index] = outcome
        if on_run is not None:
            on_run(outcome)

    if FORKS:
        gc.collect()
        gc.freeze()  # forked workers share the bases' pages: no collection writes to them
    try:
        backend(bases, options, jobs, done)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        bases.release()
        if FORKS:
            gc.unfreeze()
    report.outcomes = [results[i] for i in sorted(results)]
    report.failed = [failed[i] for i in sorted(failed)]
    report.warnings = list(scenario.warnings)
    return report


__all__ = [
    "KILL_HOOK_ENV",
    "KINDS",
    "MAX_ATTEMPTS",
    "REQUIREMENTS",
    "Bases",
    "Done",
    "Failure",
    "Job",
    "Outcome",
    "Phase",
    "Run",
    "RunError",
    "SweepOptions",
    "SweepReport",
    "compare",
    "death",
    "enumerate_failures",
    "kill_hook",
    "run_failure",
    "run_job",
    "run_jobs",
    "serial_backend",
    "sweep",
    "worker_options",
]
