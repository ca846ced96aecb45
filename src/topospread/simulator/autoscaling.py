"""The autoscaler in the simulation's loop: cluster-autoscaler or Karpenter, on the clock.

The models (autoscaler/) decide; this controller only carries their decisions out on the one
Simulation and says what it did. It acts at its own ticks, which ``wait`` reaches in time order
with the taint manager's evictions and the nodes' start-ups (timeline_steps/waiting.py):
cluster-autoscaler every ``scan-interval`` of the clock (10s, 20s, ...), Karpenter
``batchIdleDuration`` after it first sees pending pods (its provisioning batch) and every 10s
(its disruption poll). Like the real controllers, it does nothing between ticks: a step that
leaves pods Pending gets no node until a ``wait`` reaches a tick.

- A scale-up (or a launched nodeclaim) adds nodes at once, NotReady with the node lifecycle
  controller's not-ready taints, Ready after ``nodeStartupDelay`` (the ``addNodes`` machinery);
  meanwhile cluster-autoscaler counts them as upcoming and Karpenter as in flight.
- A stock-out (``stockout`` step, ``Simulation.cloud``) stops the cloud from creating the
  node: for cluster-autoscaler the group's target stays raised and the node never registers,
  so the model's max-node-provision-time timeout and back-off follow; a multi-zone group's
  instance goes to another of its zones, as an ASG does. Karpenter learns of a stock-out
  when a launch hits it (simulator/karpenter_loop.py).
- Nodes that other steps add to or delete from a group change what the cloud has; the
  controller follows them as cluster-autoscaler does (``_follow_cloud``).
- A scale-down or disruption taints the node (ToBeDeletedByClusterAutoscaler,
  karpenter.sh/disrupted), evicts its pods through the Eviction API (controllers recreate
  them, the scheduler places them) and deletes the node. cluster-autoscaler's drain retries
  refused evictions on the clock until --max-pod-eviction-time
  (simulator/cluster_autoscaler_drain.py); Karpenter's (simulator/drain.py's passes) leaves
  the node, untainted, when a pass evicts nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from topospread.api.types import (
    NODE_READY,
    DaemonSet,
    Pod,
    Taint,
)
from topospread.autoscaler.clusterautoscaler.clusterstate import (
    NODE_DISK_PRESSURE,
    NODE_NETWORK_UNAVAILABLE,
    NOT_READY_TAINT_KEYS,
)
from topospread.simulator.autoscaler_spec import (
    ClusterAutoscalerSpec,
    KarpenterSpec,
    nanos,
)
from topospread.simulator.clock import format_duration
from topospread.simulator.controllers.common import parse_time
from topospread.simulator.drain import DrainOptions, drain_node

# The models' predicate checker answers for every node at once through the fast path's filter
# vectors, which register themselves with it when imported (the schedule command, which runs
# no autoscaler, does not import them, nor the autoscaler package they register with).
from topospread.simulator.fastpath import filter_vectors  # noqa: F401
from topospread.simulator.scheduler import is_terminal
from topospread.simulator.timeline_steps.node_status import set_taints, start_nodes

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

CLUSTER_AUTOSCALER: Final = "cluster-autoscaler"
KARPENTER: Final = "karpenter"
# Upstream: the taints each puts on a node it is about to delete.
TO_BE_DELETED: Final = Taint(key="ToBeDeletedByClusterAutoscaler", effect="NoSchedule")
KARPENTER_DISRUPTED: Final = Taint(key="karpenter.sh/disrupted", effect="NoSchedule")
# The autoscalers evict through the Eviction API whatever their own rules let them remove.
_EVICT_ALL: Final = DrainOptions(force=True, delete_emptydir_data=True)


@dataclass(frozen=True, slots=True)
class NodeChange:
    """One thing an autoscaler did or could not do, with the model's reason.

    ``action``: ``scaleUp`` (a group resized or a nodeclaim launched), ``add`` and ``remove``
    (a node), ``stockout``, ``timeout``, ``noScaleUp`` (pods no group helps), ``draining`` (a
    scale-down's or a Karpenter node's termination whose evictions are refused for now:
    retried), ``blocked`` (a drain the
    Eviction API refused, for good), ``targetSize`` (nodes another step added to a group),
    ``unregistered`` (a node another step deleted whose instance runs on), ``unhealthy`` and
    ``healthy`` (too many unready nodes to autoscale, and back), ``launchFailed`` (a nodeclaim
    the cloud could not launch), ``rejected`` (a disruption command dropped at its
    validation), ``expired`` (a nodeclaim older than its NodePool's expireAfter, deleted)."""

    time: int
    autoscaler: str
    action: str
    group: str
    zone: str
    node: str
    reason: str
    # Nodes: a scale-up's for its group, a timeout's not registered, 1 for add and remove.
    count: int = 0

    def text(self) -> str:
        return f"{self.autoscaler} at {format_duration(self.time)}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time / 1e9,
            "autoscaler": self.autoscaler,
            "action": self.action,
            "group": self.group,
            "zone": self.zone,
            "node": self.node,
            "reason": self.reason,
            "count": self.count,
        }


class AutoscalerController(ABC):
    """What the clock and the reports ask of an autoscaler in the simulation."""

    name: str
    group_label: str

    def __init__(self, startup_delay: float) -> None:
        self.startup_delay = nanos(startup_delay)
        self.changes: list[NodeChange] = []
        # Its last loop: at the clock's 0 it has seen the initial state (only ticks inside
        # a wait act).
        self.last_tick = 0

    @abstractmethod
    def next_tick(self, sim: Simulation) -> int:
        """The time of its next loop (nanoseconds), after ``last_tick``."""

    @abstractmethod
    def tick(self, sim: Simulation, where: str) -> None:
        """Run the model once at ``sim.now`` and carry out its decisions."""

    def run(self, sim: Simulation, where: str) -> list[NodeChange]:
        """One loop at ``sim.now``; what it did."""
        mark = len(self.changes)
        self.last_tick = sim.now
        self.tick(sim, where)
        return self.changes[mark:]

    def take_changes(self) -> list[NodeChange]:
        """What it did since the last call (a step's report takes them)."""
        out, self.changes = self.changes, []
        return out

    def delete_node(self, sim: Simulation, name: str, where: str) -> bool:
        """A step deletes the node: True when a finalizer of this autoscaler's holds the Node
        while it acts (the node then goes later); False: it goes at once."""
        return False

    def group_sizes(self, sim: Simulation) -> dict[str, int]:
        """Nodes per group (node group or NodePool) now, every known group listed."""
        sizes = Counter(
            g
            for info in sim.cluster.list()
            if (g := info.node.metadata.labels.get(self.group_label))
        )
        return {g: sizes[g] for g in sorted({*self.groups(), *sizes})}

    @abstractmethod
    def groups(self) -> list[str]: ...

    def _record(
        self,
        sim: Simulation,
        action: str,
        group: str,
        zone: str,
        node: str,
        why: str,
        count: int = 0,
    ) -> None:
        if count == 0 and action in ("add", "remove"):
            count = 1
        self.changes.append(NodeChange(sim.now, self.name, action, group, zone, node, why, count))

    def _ready_text(self, sim: Simulation) -> str:
        if not self.startup_delay:
            return ""
        return f", NotReady until {format_duration(sim.now + self.startup_delay)}"

    def _start(self, sim: Simulation, names: Sequence[str], where: str) -> None:
        if self.startup_delay:
            start_nodes(sim, names, self.startup_delay, where)

    def _delete(self, sim: Simulation, name: str, taint: Taint, where: str) -> list[str]:
        """Taint, evict through the Eviction API, delete; the pods the Eviction API kept
        there are returned, each with its refusal's message (the node then stays,
        untainted)."""
        node = sim.node(name, where)
        if taint not in node.spec.taints:
            set_taints(sim, node, [taint], [])
        result = drain_node(sim, name, _EVICT_ALL, where)
        if result.blocked or result.errors:
            set_taints(sim, sim.node(name, where), [], [taint])
            return [f"{b.pod} ({b.refusal.message})" for b in result.blocked] or result.errors
        sim.remove_node(name)
        return []


def pending_pods(sim: Simulation) -> list[Pod]:
    """The pods waiting for a node (not gated: the autoscalers ignore gated pods)."""
    return [
        p
        for _, p in sim.sorted_pods()
        if not p.spec.node_name and not p.spec.scheduling_gates and not is_terminal(p)
    ]


def created_times(sim: Simulation, pods: Sequence[Pod]) -> dict[str, float]:
    """Each pod's creationTimestamp as seconds on the simulation's clock (negative before
    its start); pods without one are left out (the zero time: old)."""
    out = {}
    # NOTE: pods created together share their timestamp (to the second): parse each once.
    seconds: dict[str, float | None] = {}
    for pod in pods:
        stamp = pod.metadata.creation_timestamp
        if not stamp:
            continue
        if stamp not in seconds:
            at = parse_time(stamp)
            seconds[stamp] = None if at is None else (at - sim.epoch) / 1e9
        if (t := seconds[stamp]) is not None:
            out[pod.key] = t
    return out


def node_created_times(sim: Simulation) -> dict[str, float]:
    """Each node's creationTimestamp as seconds on the simulation's clock; nodes without one
    (the initial nodes, unless their manifests carry one) are left out: the zero time, old.
    So is a timestamp later than the clock's now (the clock starts at the input's latest
    recorded time, so only a node a later step applies with a stamp ahead of the clock can
    carry one): read as old, such a node that is not ready counts as Unready, not as
    starting."""
    out = {}
    now = sim.now / 1e9
    seconds: dict[str, float | None] = {}
    for info in sim.cluster.list():
        stamp = info.node.metadata.creation_timestamp
        if not stamp:
            continue
        if stamp not in seconds:
            at = parse_time(stamp)
            seconds[stamp] = None if at is None else (at - sim.epoch) / 1e9
        if (t := seconds[stamp]) is not None and t <= now:
            out[info.name] = t
    return out


# What cluster-autoscaler's readiness reads, and so when it last changed: these conditions'
# lastTransitionTime and the not-ready taints' timeAdded. Upstream: GetNodeReadiness
_READINESS_CONDITIONS: Final = frozenset({NODE_READY, NODE_DISK_PRESSURE, NODE_NETWORK_UNAVAILABLE})


def node_ready_since_times(sim: Simulation) -> dict[str, float]:
    """When each node's readiness last changed, as seconds on the simulation's clock: the
    latest lastTransitionTime of its Ready, DiskPressure and NetworkUnavailable conditions
    and timeAdded of its not-ready, disk-pressure and network-unavailable taints. Nodes with
    none (or only later than now) are left out: they changed long ago.
    Upstream: kube_util.GetNodeReadiness's lastTransitionTime (utils/kubernetes/ready.go)"""
    out = {}
    now = sim.now / 1e9
    seconds: dict[str, float | None] = {}
    for info in sim.cluster.list():
        node = info.node
        stamps = [
            c.last_transition_time
            for c in node.status.conditions
            if c.type in _READINESS_CONDITIONS and c.last_transition_time
        ]
        stamps += [
            t.time_added for t in node.spec.taints if t.key in NOT_READY_TAINT_KEYS and t.time_added
        ]
        latest = None
        for stamp in stamps:
            if stamp not in seconds:
                at = parse_time(stamp)
                seconds[stamp] = None if at is None else (at - sim.epoch) / 1e9
            t = seconds[stamp]
            if t is not None and (latest is None or t > latest):
                latest = t
        if latest is not None and latest <= now:
            out[info.name] = latest
    return out


def daemonsets_of(sim: Simulation) -> list[DaemonSet]:
    return [w for w in sim.workloads.values() if isinstance(w, DaemonSet)]


def pods_text(keys: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(keys[:limit])
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return f"{len(keys)} pod{'s' if len(keys) != 1 else ''} ({shown}{more})"


def build_autoscaler(
    spec: ClusterAutoscalerSpec | KarpenterSpec, sim: Simulation
) -> AutoscalerController:
    if isinstance(spec, ClusterAutoscalerSpec):
        from topospread.simulator.cluster_autoscaler_loop import ClusterAutoscalerController

        return ClusterAutoscalerController(spec, sim)
    from topospread.simulator.karpenter_loop import KarpenterController

    return KarpenterController(spec, sim)


__all__ = [
    "CLUSTER_AUTOSCALER",
    "KARPENTER",
    "KARPENTER_DISRUPTED",
    "TO_BE_DELETED",
    "AutoscalerController",
    "NodeChange",
    "build_autoscaler",
    "daemonsets_of",
    "node_created_times",
    "pending_pods",
    "pods_text",
]
