"""cluster-autoscaler's drain of a node it scales down, carried out on the simulation's clock.

Upstream runs the drain after the loop that chose the node has tainted it
``ToBeDeletedByClusterAutoscaler`` and returned; the loop goes on every scan-interval
meanwhile. Every pod to evict has its own eviction loop, all started at once: the first
eviction is sent at the start; one the API refuses (a PodDisruptionBudget that allows no
disruption now, a pod under two budgets — any error but NotFound) is sent again every
``EvictionRetryTime`` (10s) while the clock is before the start plus
``--max-pod-eviction-time`` (2m); a pod evicted or gone ends its loop. Once every loop has
ended with its pod gone the node is deleted (the simulator deletes an evicted pod at once, so
upstream's wait for the pods to disappear — their grace period capped by
``--max-graceful-termination-sec``, plus 30s of headroom — ends at once). A loop that runs out
of time fails the drain: the node keeps the pods still on it, its taint is removed
(CleanToBeDeleted) and the failure is reported; the node then has to be unneeded for
``scale-down-unneeded-time`` afresh before it is tried again.

As before, DaemonSet and mirror pods are not evicted: DaemonSet pods go with the node.

Upstream: Evictor.DrainNode, initiateEviction and evictPod (core/scaledown/actuation/drain.go);
GroupDeletionScheduler.prepareNodeForDeletion and CleanUpAndRecordFailedScaleDownEvent
(actuation/group_deletion_scheduler.go, actuation/delete_in_batch.go)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from topospread.simulator.drain import DrainOptions, get_pods_for_deletion

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

# Upstream: DefaultEvictionRetryTime (actuation/drain.go), in nanoseconds.
EVICTION_RETRY_TIME: Final = 10_000_000_000
# The pods cluster-autoscaler evicts: every one but DaemonSet and mirror pods.
_EVICT_ALL: Final = DrainOptions(force=True, delete_emptydir_data=True)


@dataclass(slots=True)
class NodeDrain:
    """One node's drain in progress: the pods whose eviction loops are still running, each
    with the last refusal it got, and when the next round of retries is due (nanoseconds)."""

    node: str
    group: str
    zone: str
    started: int
    retry_until: int
    next_attempt: int
    # The model's decision (a RemovedNode): why the node goes, for the report.
    removed: Any
    # Pod key -> uid of the pods still to evict, and the last refusal of each.
    pods: dict[str, str] = field(default_factory=dict)
    refusals: dict[str, str] = field(default_factory=dict)
    attempts: int = 0

    @property
    def done(self) -> bool:
        return not self.pods

    @property
    def timed_out(self) -> bool:
        """Every retry is used up: the next would not be before ``retry_until``."""
        return bool(self.pods) and self.next_attempt >= self.retry_until


def start_drain(
    sim: Simulation, node: str, group: str, zone: str, removed: Any, max_eviction_time: int
) -> NodeDrain:
    """The drain of ``node`` starting now: its pods to evict (none yet tried)."""
    on_node = sorted(sim.cluster.infos[node].pods, key=lambda p: p.key)
    found = get_pods_for_deletion(
        on_node, _EVICT_ALL, lambda ns, ds: ("DaemonSet", ns, ds) in sim.workloads
    )
    return NodeDrain(
        node,
        group,
        zone,
        started=sim.now,
        retry_until=sim.now + max_eviction_time,
        next_attempt=sim.now,
        removed=removed,
        pods={p.key: p.metadata.uid for p in found.pods},
    )


def evict_pods(sim: Simulation, drain: NodeDrain) -> list[str]:
    """One round of the eviction loops, now: each pod still on the node is sent one eviction;
    a pod deleted or gone from the node ends its loop (upstream treats NotFound as success).
    Returns the pods evicted; the next round is due ``EVICTION_RETRY_TIME`` later.

    Upstream: Evictor.evictPod (one iteration of its retry loop)
    """
    drain.attempts += 1
    evictions = sim.evictions()
    evicted = []
    for key, uid in list(drain.pods.items()):
        current = sim.pods.get(key)
        if current is None or current.metadata.uid != uid or current.spec.node_name != drain.node:
            del drain.pods[key]
            drain.refusals.pop(key, None)
            continue
        refusal = evictions.evict(current)
        if refusal is None:
            sim.delete_pod(current)
            del drain.pods[key]
            drain.refusals.pop(key, None)
            evicted.append(key)
        else:
            drain.refusals[key] = refusal.message
    drain.next_attempt = sim.now + EVICTION_RETRY_TIME
    return evicted


def failure_text(drain: NodeDrain) -> str:
    """Upstream's error for a drain whose evictions ran out of time: "failed to evict pod
    NS/NAME within allowed timeout (last error: ...)" for each pod left."""
    return "; ".join(
        f"failed to evict pod {key} within allowed timeout (last error: {drain.refusals[key]})"
        for key in sorted(drain.pods)
    )


__all__ = [
    "EVICTION_RETRY_TIME",
    "NodeDrain",
    "evict_pods",
    "failure_text",
    "start_drain",
]
