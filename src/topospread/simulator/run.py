"""``schedule``: place every queued pod of a scenario and report each outcome."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.api.types import Pod, PodDisruptionBudget
from topospread.cluster.state import ClusterState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.framework.schedule_one import TieBreak
from topospread.simulator.scenario import Scenario
from topospread.simulator.scheduler import Decision, Scheduler

# The PodScheduled condition's message for a gated pod (pkg/scheduler/schedule_one.go).
SCHEDULING_GATED_MESSAGE: Final = "Scheduling is blocked due to non-empty scheduling gates"
# A queued pod's message when Ctrl-C stopped the run before its first attempt.
NOT_ATTEMPTED: Final = "not attempted: interrupted"


@dataclass(slots=True)
class PodOutcome:
    """Where a queued pod ended up: its node, or why it is Pending; and every scheduling
    attempt it had, in order (a preemptor's failed attempt, with its nominated node and
    victims, before the attempt that binds it)."""

    pod: Pod
    node: str | None
    decision: Decision | None
    message: str | None
    attempts: list[Decision] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.key,
            "node": self.node,
            "message": self.message,
            "attempts": [d.to_json() for d in self.attempts],
        }


@dataclass(slots=True)
class ScheduleRun:
    scenario: Scenario
    cluster: ClusterState
    scheduler: Scheduler
    outcomes: list[PodOutcome]
    attempts: list[Decision]
    # Ctrl-C stopped the run: the pods it did not attempt are Pending, ``NOT_ATTEMPTED``.
    interrupted: bool = False

    @property
    def bound(self) -> list[PodOutcome]:
        return [o for o in self.outcomes if o.node is not None]

    @property
    def pending(self) -> list[PodOutcome]:
        return [o for o in self.outcomes if o.node is None]

    @property
    def preempted_existing(self) -> list[tuple[str, str]]:
        """Bound pods of the input that preemption deleted, with the pod that evicted each."""
        queued = {f"{p.metadata.namespace}/{p.metadata.name}" for p in self.scenario.queue}
        return sorted(
            (key, by) for key, (_, by) in self.scheduler.preempted.items() if key not in queued
        )


def schedule(
    scenario: Scenario,
    *,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
    seed: int = 0,
    tie_break: TieBreak = "random",
    percentage_of_nodes_to_score: int | None = None,
    on_decision: Callable[[Decision], None] | None = None,
    fast: bool = True,
    detail: bool = True,
    on_start: Callable[[Scheduler], None] | None = None,
    stop: Callable[[], bool] | None = None,
) -> ScheduleRun:
    """Enqueue the scenario's queue in order and schedule until no pod can bind;
    ``on_start`` is given the scheduler, its pods enqueued, before its first attempt.

    Ctrl-C — ``KeyboardInterrupt``, or ``stop()`` true between two attempts — ends the run
    with the decisions made so far (the run is ``interrupted``): a pod never attempted is
    Pending with ``NOT_ATTEMPTED``; a pod attempted keeps its last decision.
    """
    if registry is None:
        from topospread.plugins.registry import IN_TREE

        registry = IN_TREE
    cluster = scenario.cluster()
    scheduler = Scheduler(
        cluster,
        scenario.config,
        registry,
        features,
        seed=seed,
        tie_break=tie_break,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        pod_disruption_budgets=[o for o in scenario.objects if isinstance(o, PodDisruptionBudget)],
        fast=fast,
        detail=detail,
    )
    for pod in scenario.queue:
        scheduler.add(pod)
    if on_start is not None:
        on_start(scheduler)
    attempts: list[Decision] = []
    try:
        scheduler.run(on_decision, decisions=attempts, stop=stop)
        interrupted = stop is not None and stop() and len(scheduler.active) > 0
    except KeyboardInterrupt:
        # NOTE: a decision is in ``attempts`` once its attempt is over; an attempt cut
        # mid-way is in no report (its pod reads as not attempted, or as its last decision).
        interrupted = True
    by_pod: dict[str, list[Decision]] = {}
    for d in attempts:
        by_pod.setdefault(d.key, []).append(d)
    outcomes = []
    for pod in scenario.queue:
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        decision = scheduler.last.get(key)
        tried = by_pod.get(key, [])
        if key in scheduler.preempted:
            victim, by = scheduler.preempted[key]
            outcomes.append(
                PodOutcome(
                    victim, None, decision, f"preempted by {by}: deleted to make room", tried
                )
            )
        elif key in scheduler.gated:
            outcomes.append(PodOutcome(pod, None, None, SCHEDULING_GATED_MESSAGE))
        elif key in scheduler.ignored:
            outcomes.append(PodOutcome(pod, None, None, scheduler.ignored[key][1]))
        elif decision is None:
            why = NOT_ATTEMPTED if interrupted else "never attempted"
            outcomes.append(PodOutcome(pod, None, None, why, tried))
        else:
            outcomes.append(
                PodOutcome(decision.pod, decision.node, decision, decision.message, tried)
            )
    return ScheduleRun(scenario, cluster, scheduler, outcomes, attempts, interrupted)
