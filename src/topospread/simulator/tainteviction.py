"""The taint manager of ``simulate``: kube-controller-manager's taint eviction controller on
the simulated clock (simulator/clock.py).

For each pod bound to a node with NoExecute taints it decides, whenever the node's NoExecute
taints change or the pod lands on such a node: a taint the pod does not tolerate evicts it at
once; tolerations without ``tolerationSeconds`` keep it for ever (any scheduled eviction is
cancelled); otherwise its eviction is scheduled ``min(tolerationSeconds)`` after now. Once
scheduled, an eviction keeps its time through later taint changes that the pod still
tolerates for a while (upstream keeps the work created first); it is cancelled when the node
loses its last NoExecute taint, when the pod comes to tolerate them for ever, or when the pod
is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from topospread.api.types import Pod, Taint, Toleration
from topospread.simulator.clock import SECOND
from topospread.taints import tolerates_taint

EFFECT_NO_EXECUTE: Final = "NoExecute"

Outcome = Literal["evict", "scheduled", "kept", "forever"]


@dataclass(frozen=True, slots=True)
class ScheduledEviction:
    """A pod's pending eviction: the taints it tolerates only for a while and when it fires
    (clock nanoseconds)."""

    pod: str
    node: str
    created_at: int
    fire_at: int
    taints: tuple[str, ...]


@dataclass(slots=True)
class TaintEvictionQueue:
    """The controller's timed work, by pod key.

    Upstream: TimedWorkerQueue (pkg/controller/tainteviction/timed_workers.go, v1.35)
    """

    work: dict[str, ScheduledEviction] = field(default_factory=dict)

    def cancel(self, pod: str) -> bool:
        return self.work.pop(pod, None) is not None

    def next_due(self, until: int) -> int | None:
        """The earliest firing time not after ``until``."""
        times = [w.fire_at for w in self.work.values() if w.fire_at <= until]
        return min(times) if times else None

    def pop_due(self, now: int) -> list[ScheduledEviction]:
        """The work due by ``now``, by firing time then pod, taken off the queue."""
        due = sorted(
            (w for w in self.work.values() if w.fire_at <= now), key=lambda w: (w.fire_at, w.pod)
        )
        for w in due:
            del self.work[w.pod]
        return due


def get_no_execute_taints(taints: Sequence[Taint]) -> list[Taint]:
    """Upstream: getNoExecuteTaints (taint_eviction.go, v1.35)"""
    return [t for t in taints if t.effect == EFFECT_NO_EXECUTE]


def get_matching_tolerations(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], *, comparison: bool = False
) -> tuple[bool, list[tuple[Taint, Toleration]]]:
    """Whether every taint is tolerated, and for each the first toleration that does (the one
    whose ``tolerationSeconds`` counts), paired with its taint for the report.

    Upstream: GetMatchingTolerations (pkg/apis/core/v1/helper/helpers.go, v1.35)
    """
    used = []
    for taint in taints:
        first = next(
            (
                t
                for t in tolerations
                if tolerates_taint(t, taint, enable_comparison_operators=comparison)
            ),
            None,
        )
        if first is None:
            return False, []
        used.append((taint, first))
    return True, used


def get_min_toleration_time(tolerations: Sequence[Toleration]) -> int | None:
    """Nanoseconds the pod may stay: the least ``tolerationSeconds`` (0 when one is 0 or
    negative, or when there are no tolerations); None when all tolerate for ever.

    Upstream: getMinTolerationTime (taint_eviction.go, v1.35)
    """
    if not tolerations:
        return 0
    limits = [t.toleration_seconds for t in tolerations if t.toleration_seconds is not None]
    if not limits:
        return None
    return max(min(limits), 0) * SECOND


def taint_text(taint: Taint) -> str:
    """``key=value:Effect``, as kubectl describe shows a taint."""
    return f"{taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"


def process_pod_on_node(
    queue: TaintEvictionQueue,
    pod: Pod,
    taints: Sequence[Taint],
    now: int,
    *,
    comparison: bool = False,
) -> Outcome:
    """Decide for one pod on a node whose NoExecute taints are ``taints`` (not empty):
    ``evict`` (now; the caller deletes the pod), ``scheduled`` (new work in the queue),
    ``kept`` (the work scheduled earlier stays) or ``forever`` (nothing scheduled).

    Upstream: processPodOnNode (taint_eviction.go, v1.35)
    """
    key = pod.key
    tolerated, used = get_matching_tolerations(taints, pod.spec.tolerations, comparison=comparison)
    if not tolerated:
        queue.cancel(key)
        return "evict"
    wait = get_min_toleration_time([t for _, t in used])
    if wait is None:
        queue.cancel(key)
        return "forever"
    existing = queue.work.get(key)
    if existing is not None:
        # The work created first wins (upstream compares created_at + wait with now + wait):
        # a later change that the pod still tolerates for a while does not move it.
        if existing.created_at < now:
            return "kept"
        queue.cancel(key)
    limited = tuple(taint_text(taint) for taint, t in used if t.toleration_seconds is not None)
    queue.work[key] = ScheduledEviction(key, pod.spec.node_name, now, now + wait, limited)
    return "scheduled"


__all__ = [
    "EFFECT_NO_EXECUTE",
    "Outcome",
    "ScheduledEviction",
    "TaintEvictionQueue",
    "get_matching_tolerations",
    "get_min_toleration_time",
    "get_no_execute_taints",
    "process_pod_on_node",
    "taint_text",
]
