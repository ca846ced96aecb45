"""What follows a Karpenter NodeClaim's deletion, on the simulation's clock: the node's
termination, and the expiration that deletes a NodeClaim older than its NodePool's
``expireAfter``.

- Expiration: a NodeClaim lives ``expireAfter`` (the NodePool template's, 720h unless set;
  ``Never``) from its creation, then is deleted whatever the disruption budgets and the
  do-not-disrupt annotations say. Nothing is launched for it first: the provisioner counts the
  pods of a node being deleted as pods to place, and launches for them as for pending pods.
- Termination, for an expired NodeClaim as for a disruption carried out: the node is tainted
  ``karpenter.sh/disrupted:NoSchedule`` and drained. Every second the termination controller
  lists the pods that must leave (not finished, not mirror pods, not tolerating that taint)
  and hands the eviction queue the first non-empty tier of them: non-critical pods not of a
  DaemonSet, then non-critical DaemonSet pods, then critical ones (priority classes
  system-cluster-critical and system-node-critical) in the same order. The queue evicts each
  through the Eviction API; a refusal (a PodDisruptionBudget allows no disruption, the pod has
  two budgets), or a pod whose do-not-disrupt annotation is active, is tried again after the
  pod's own back-off, 100ms doubling up to 10s. With a ``terminationGracePeriod`` the node has
  a deadline (its deletion plus the period): a pod whose own terminationGracePeriodSeconds
  would outlast it is deleted instead, its budget and annotation bypassed. Without one a
  drain the budgets block waits for as long as they block it.
- Once no pod is left to evict and the drain has lasted MinDrainTime (5s), the instance is
  terminated; the Node goes at the controller's next look, 5s later (a cloud that has
  terminated the instance by then).

Upstream: Controller.Reconcile (nodeclaim/expiration/controller.go); Controller.finalize,
awaitDrain, awaitInstanceTermination (node/termination/controller.go); Terminator.Drain and
groupPodsByPriority (node/termination/terminator/terminator.go); Queue.Reconcile, evict,
forceDelete and needsForceDelete (node/termination/terminator/eviction.go); IsDrainable,
IsEvictable (utils/pod/scheduling.go)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from topospread.api.go_duration import SECOND
from topospread.api.types import Pod
from topospread.autoscaler.clusterautoscaler.drainability import is_daemonset_pod, is_mirror_pod
from topospread.simulator.autoscaler_spec import nanos
from topospread.simulator.autoscaling import KARPENTER_DISRUPTED
from topospread.simulator.decision import is_terminal
from topospread.simulator.eviction import MULTIPLE_PDBS
from topospread.taints import tolerations_tolerate_taint

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

# Upstream: awaitDrain's and awaitVolumeDetachment's RequeueAfter, MinDrainTime, and
# awaitInstanceTermination's RequeueAfter while the cloud still has the instance.
RECONCILE_PERIOD: Final = SECOND
MIN_DRAIN_TIME: Final = 5 * SECOND
INSTANCE_TERMINATION_PERIOD: Final = 5 * SECOND
# Upstream: the eviction queue's per-pod rate limiter (evictionQueueBaseDelay, MaxDelay).
EVICTION_BASE_DELAY: Final = 100_000_000
EVICTION_MAX_DELAY: Final = 10 * SECOND
# The API server's default terminationGracePeriodSeconds (SetDefaults_PodSpec).
DEFAULT_POD_GRACE_SECONDS: Final = 30
CRITICAL_PRIORITY_CLASSES: Final = frozenset({"system-cluster-critical", "system-node-critical"})

# A pod's start, seconds on the model's clock (Karpenter.started), for do-not-disrupt.
StartedFunc = Callable[[Pod], "float | None"]
# Whether a do-not-disrupt annotation protects the pod now (seconds), given its start.
ProtectedFunc = Callable[[Pod, float, "float | None"], bool]


@dataclass(slots=True)
class _Queued:
    """A pod in the eviction queue: its uid, its failures so far and when it is tried next."""

    uid: str
    failures: int = 0
    due: int = 0


@dataclass(slots=True)
class Termination:
    """One node's termination in progress (times in nanoseconds on the clock)."""

    node: str
    pool: str
    zone: str
    started: int
    # Deletion plus the NodePool's terminationGracePeriod; None: no deadline.
    deadline: int | None
    # Why the NodeClaim was deleted, for the report's removal.
    message: str
    next_look: int = 0
    queue: dict[str, _Queued] = field(default_factory=dict)
    # The last refusal of each pod still queued (a message), for the report.
    refusals: dict[str, str] = field(default_factory=dict)
    # When the Node goes (the instance terminated), once drained.
    removal: int | None = None
    # The refusals reported so far (a report line when they change).
    reported: tuple[tuple[str, str], ...] = ()

    def next_due(self) -> int:
        if self.removal is not None:
            return self.removal
        return min([self.next_look, *(q.due for q in self.queue.values())])


def start_termination(
    sim: Simulation, node: str, pool: str, zone: str, message: str, grace: float | None
) -> Termination:
    """The node's termination, starting now (its NodeClaim was just deleted); ``grace``: the
    NodePool's terminationGracePeriod in seconds."""
    deadline = None if grace is None else sim.now + nanos(grace)
    return Termination(node, pool, zone, sim.now, deadline, message, next_look=sim.now)


def _needs_force_delete(pod: Pod, deadline: int | None, now: int) -> bool:
    """Whether the pod must be deleted rather than evicted: its grace period, counted back
    from the node's deadline, has begun. Upstream: needsForceDelete (eviction.go)"""
    if deadline is None:
        return False
    grace = pod.spec.termination_grace_period_seconds
    seconds = DEFAULT_POD_GRACE_SECONDS if grace is None else grace
    return now > deadline - seconds * SECOND


def _tolerates_disruption(pod: Pod) -> bool:
    """Upstream: ToleratesDisruptedNoScheduleTaint"""
    return tolerations_tolerate_taint(pod.spec.tolerations, KARPENTER_DISRUPTED)


def _owned_by_node(pod: Pod) -> bool:
    """A static pod (its mirror). Upstream: IsOwnedByNode"""
    return is_mirror_pod(pod) or any(
        r.kind == "Node" and r.api_version == "v1" for r in pod.metadata.owner_references
    )


def waiting_eviction(pod: Pod) -> bool:
    """A pod the drain waits for: not finished, not a mirror pod, not tolerating the
    disrupted taint. Upstream: IsWaitingEviction, IsDrainable"""
    return not is_terminal(pod) and not _tolerates_disruption(pod) and not _owned_by_node(pod)


def _tier(pod: Pod) -> int:
    """Upstream: groupPodsByPriority's order"""
    critical = pod.spec.priority_class_name in CRITICAL_PRIORITY_CLASSES
    return 2 * critical + is_daemonset_pod(pod)


def _back_off(item: _Queued, now: int) -> None:
    """The item is requeued after its failures' exponential delay.
    Upstream: ItemExponentialFailureRateLimiter.When"""
    delay = min(EVICTION_BASE_DELAY << min(item.failures, 40), EVICTION_MAX_DELAY)
    item.failures += 1
    item.due = now + delay


def look(sim: Simulation, t: Termination) -> int:
    """The termination controller's look at the node now: the pods to evict handed to the
    queue (the deadline's at once, the first tier's otherwise), or, with none left and the
    drain old enough, the instance's termination. Returns the pods still waiting.
    Upstream: Controller.awaitDrain, Terminator.Drain"""
    now = sim.now
    on_node = sorted(sim.cluster.infos[t.node].pods, key=lambda p: p.key)
    waiting = [p for p in on_node if waiting_eviction(p)]
    forced = [p for p in waiting if _needs_force_delete(p, t.deadline, now)]
    graceful = [p for p in waiting if not _needs_force_delete(p, t.deadline, now)]
    tier = min((_tier(p) for p in graceful), default=None)
    for pod in [*forced, *(p for p in graceful if _tier(p) == tier)]:
        if pod.key not in t.queue:
            t.queue[pod.key] = _Queued(pod.metadata.uid, due=now)
    if waiting or now - t.started < MIN_DRAIN_TIME:
        t.next_look = now + RECONCILE_PERIOD
    else:
        t.removal = now + INSTANCE_TERMINATION_PERIOD
    return len(waiting)


def work_queue(
    sim: Simulation, t: Termination, started: StartedFunc, protected: ProtectedFunc
) -> list[str]:
    """The eviction queue's items due now, each once: deleted at the deadline, evicted, or
    tried again later. Returns the pods that left the node.
    Upstream: Queue.Reconcile, evict, forceDelete"""
    now = sim.now
    gone: list[str] = []
    due = sorted(k for k, q in t.queue.items() if q.due <= now)
    evictions = sim.evictions() if due else None
    for key in due:
        item = t.queue[key]
        pod = sim.pods.get(key)
        if pod is None or pod.metadata.uid != item.uid or pod.spec.node_name != t.node:
            _complete(t, key)
            continue
        if _needs_force_delete(pod, t.deadline, now):
            sim.delete_pod(pod)
            _complete(t, key)
            gone.append(key)
            continue
        if is_terminal(pod):
            _complete(t, key)
            continue
        if (
            _tolerates_disruption(pod)
            or _owned_by_node(pod)
            or protected(pod, now / SECOND, started(pod))
        ):
            t.refusals[key] = "do-not-disrupt"
            _back_off(item, now)
            continue
        assert evictions is not None
        refusal = evictions.evict(pod)
        if refusal is None:
            sim.delete_pod(pod)
            _complete(t, key)
            gone.append(key)
            continue
        # Upstream's NodeFailedToDrain event for a budget's refusal; any other error is
        # retried by the queue's rate limiter as well.
        t.refusals[key] = (
            "eviction does not support multiple PDBs"
            if refusal.message == MULTIPLE_PDBS
            else "evicting pod violates a PDB"
        )
        _back_off(item, now)
    return gone


def _complete(t: Termination, key: str) -> None:
    del t.queue[key]
    t.refusals.pop(key, None)


def refusal_text(t: Termination) -> str:
    """Upstream's FailedDraining events for the pods the queue could not evict: "Failed to
    drain node, evicting pod violates a PDB (Pod=NS/NAME)", or the do-not-disrupt pods the
    queue waits for."""
    parts = []
    for key in sorted(t.refusals):
        why = t.refusals[key]
        if why == "do-not-disrupt":
            parts.append(f'pod {key} has an active "karpenter.sh/do-not-disrupt" annotation')
        else:
            parts.append(f"Failed to drain node, {why} (Pod={key})")
    return "; ".join(parts)


__all__ = [
    "INSTANCE_TERMINATION_PERIOD",
    "MIN_DRAIN_TIME",
    "RECONCILE_PERIOD",
    "Termination",
    "look",
    "refusal_text",
    "start_termination",
    "waiting_eviction",
    "work_queue",
]
