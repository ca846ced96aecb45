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
from collections.abc import Callable, Sequence
from typing import Any

from topospread.analysis.simulate import settle_timeline
from topospread.analysis.sweep_autoscaler import AutoscalerInfo, Recovery, recover
from topospread.analysis.sweep_failures import KINDS, Failure, enumerate_failures
from topospread.analysis.sweep_report import REQUIREMENTS, Outcome, SweepReport, compare
from topospread.analysis.sweep_run import Phase, Run, SweepOptions, base_phase, phase, run_failure
from topospread.analysis.sweep_workers import (
    KILL_HOOK_ENV,
    MAX_ATTEMPTS,
    Backend,
    Bases,
    Done,
    Job,
    RunError,
    death,
    kill_hook,
    run_job,
    run_jobs,
    serial_backend,
    worker_options,
)
from topospread.api.types import LABEL_TOPOLOGY_ZONE
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.simulator.checkpoint import FORKS
from topospread.simulator.timeline_format import TimelineScenario


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
    max_runs: int | None = None,
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
                seeds=len(seeds),
                max_runs=max_runs,
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


# The command's API in one place: the driver and what its callers (the CLI, check, tests) name,
# each defined in its own module (sweep_failures, sweep_run, sweep_workers, sweep_report).
__all__ = [
    "KILL_HOOK_ENV",
    "KINDS",
    "MAX_ATTEMPTS",
    "REQUIREMENTS",
    "Backend",
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
    "phase",
    "run_failure",
    "run_job",
    "run_jobs",
    "serial_backend",
    "sweep",
    "worker_options",
]
