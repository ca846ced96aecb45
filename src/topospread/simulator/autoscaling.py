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
  karpenter.sh/disrupted), evicts its pods through the Eviction API (simulator/drain.py;
  controllers recreate them, the scheduler places them) and deletes the node; a drain the
  Eviction API refuses leaves the node, untainted, and cluster-autoscaler backs off scale-down.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from topospread.api.types import (
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_REGION,
    DaemonSet,
    Node,
    Pod,
    Taint,
)
from topospread.autoscaler.clusterautoscaler import ClusterAutoscaler, NodeGroup
from topospread.autoscaler.clusterautoscaler.nodegroup import NODE_GROUP_LABEL
from topospread.autoscaler.clusterautoscaler.scaleup import SCALE_UP_SUCCESSFUL
from topospread.simulator.autoscaler_spec import (
    ClusterAutoscalerSpec,
    GroupBinding,
    KarpenterSpec,
    nanos,
)
from topospread.simulator.clock import format_duration
from topospread.simulator.controllers.common import parse_time
from topospread.simulator.drain import DrainOptions, drain_node
from topospread.simulator.node_groups import region_of
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
    (a node), ``stockout``, ``timeout``, ``noScaleUp`` (pods no group helps), ``blocked`` (a
    drain the Eviction API refused), ``targetSize`` (nodes another step added to a group),
    ``unregistered`` (a node another step deleted whose instance runs on), ``unhealthy`` and
    ``healthy`` (too many unready nodes to autoscale, and back), ``launchFailed`` (a nodeclaim
    the cloud could not launch)."""

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
    for pod in pods:
        at = parse_time(pod.metadata.creation_timestamp)
        if at is not None:
            out[pod.key] = (at - sim.epoch) / 1e9
    return out


def daemonsets_of(sim: Simulation) -> list[DaemonSet]:
    return [w for w in sim.workloads.values() if isinstance(w, DaemonSet)]


def pods_text(keys: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(keys[:limit])
    more = f" and {len(keys) - limit} more" if len(keys) > limit else ""
    return f"{len(keys)} pod{'s' if len(keys) != 1 else ''} ({shown}{more})"


class ClusterAutoscalerController(AutoscalerController):
    """cluster-autoscaler's loop every scan-interval."""

    name = CLUSTER_AUTOSCALER
    group_label = NODE_GROUP_LABEL

    def __init__(self, spec: ClusterAutoscalerSpec, sim: Simulation) -> None:
        super().__init__(spec.startup_delay)
        self.bindings = {b.group.name: b for b in spec.groups}
        self.model = ClusterAutoscaler(
            [b.group for b in spec.groups],
            spec.options,
            config=sim.scenario.config,
            registry=sim.registry,
            features=sim.features,
        )
        self.interval = nanos(spec.options.scan_interval)
        self._blocked: dict[str, str] = {}
        self._no_scale_up: dict[str, str] = {}
        self._healthy = True
        # The cloud's instances per group (registered or not), and the instances whose Node
        # object is gone while the instance runs on: since when (ns) the loop has seen that.
        self.instances: dict[str, set[str]] = {g: set() for g in self.bindings}
        for info in sim.cluster.list():
            g = info.node.metadata.labels.get(NODE_GROUP_LABEL, "")
            if g in self.instances:
                self.instances[g].add(info.name)
        self.unregistered: dict[str, tuple[str, int]] = {}

    def groups(self) -> list[str]:
        return list(self.bindings)

    def next_tick(self, sim: Simulation) -> int:
        return (self.last_tick // self.interval + 1) * self.interval

    def tick(self, sim: Simulation, where: str) -> None:
        model = self.model
        model.daemonsets = daemonsets_of(sim)
        self._follow_cloud(sim)
        mine = [
            info.name
            for info in sim.cluster.list()
            if info.node.metadata.labels.get(NODE_GROUP_LABEL) in self.bindings
        ]
        not_started = [n for n in mine if n in sim.cloud.starting]
        pending = pending_pods(sim)
        result = model.run_once(
            sim.now / 1e9,
            sim.cluster,
            pending,
            sim.budgets(),
            created=created_times(sim, pending),
            not_started=not_started,
        )
        if result.healthy != self._healthy:
            self._healthy = result.healthy
            self._record(
                sim,
                "unhealthy" if not result.healthy else "healthy",
                "",
                "",
                "",
                "Cluster is not ready for autoscaling: too many unready nodes "
                f"(more than ok-total-unready-count {model.options.ok_total_unready_count} and "
                f"max-total-unready-percentage {model.options.max_total_unready_percentage:g}%)"
                if not result.healthy
                else "the cluster is healthy again: autoscaling resumes",
            )
        for t in result.timeouts:
            self._record(
                sim,
                "timeout",
                t.group,
                self.bindings[t.group].group.zone,
                "",
                f"group {t.group}: {t.requested - t.registered} node(s) not registered within "
                f"max-node-provision-time; target size back to {t.registered}, the group is "
                f"in back-off until {format_duration(nanos(t.backoff_until))}",
                t.requested - t.registered,
            )
        up = result.scale_up
        if up.result == SCALE_UP_SUCCESSFUL:
            expander = ",".join(model.options.expander)
            resized = ", ".join(
                f"{i.group} {i.current_size}->{i.new_size}" for i in up.scale_up_infos
            )
            why = (
                f"scale-up: {resized} for {pods_text(up.pods_triggered_scale_up)}; expander "
                f"{expander} chose {up.best_option} (estimated {up.estimated_nodes} node(s))"
            )
            if len(up.scale_up_infos) > 1:
                why += "; balanced across similar node groups"
            for info in up.scale_up_infos:
                self._record(
                    sim,
                    "scaleUp",
                    info.group,
                    self.bindings[info.group].group.zone,
                    "",
                    why,
                    info.delta,
                )
        no_scale_up = {
            i.pod: "; ".join(
                f"{g}: {m}"
                for g, m in sorted({**i.skipped_node_groups, **i.rejected_node_groups}.items())
            )
            for i in up.pods_remain_unschedulable
        }
        fresh = {k: v for k, v in no_scale_up.items() if self._no_scale_up.get(k) != v}
        by_reason: dict[str, list[str]] = {}
        for pod, why in fresh.items():
            by_reason.setdefault(why, []).append(pod)
        for why, pods in by_reason.items():
            self._record(
                sim, "noScaleUp", "", "", "", f"{pods_text(pods)} didn't trigger scale-up: {why}"
            )
        self._no_scale_up = no_scale_up
        self._drop_unregistered_over_target()
        self._launch(sim, where)
        if result.scale_down is not None:
            for removed in result.scale_down.removed:
                self._scale_down(sim, removed.node, removed.group, removed, where)

    def _follow_cloud(self, sim: Simulation) -> None:
        """What other steps did to the groups, as the cloud and the API show it to the loop.

        Upstream reads each group's TargetSize from the cloud provider and the nodes from the
        API server every loop. A node another step added to a group (``addNodes``) was an
        instance someone added to it: the group's target size grew by one. A Node object
        another step deleted (``removeNode``) leaves its instance running: it is unregistered
        from this loop on, counts as upcoming, and once unregistered for longer than
        max-node-provision-time cluster-autoscaler deletes it, shrinking the target size.
        Nodes that turn NotReady (``loseNode``, ``loseZone``) or are drained stay registered.
        Upstream: ClusterStateRegistry's unregistered nodes and removeOldUnregisteredNodes
        (core/static_autoscaler.go)
        """
        present: dict[str, set[str]] = {g: set() for g in self.bindings}
        for info in sim.cluster.list():
            g = info.node.metadata.labels.get(NODE_GROUP_LABEL, "")
            if g in present:
                present[g].add(info.name)
        limit = nanos(self.model.options.max_node_provision_time)
        for name in sorted(present):
            group = self.model.groups[name]
            instances = self.instances[name]
            joined = sorted(present[name] - instances)
            if joined:
                before = group.target_size
                group.target_size += len(joined)
                instances.update(joined)
                for node in joined:
                    self.unregistered.pop(node, None)
                self._record(
                    sim,
                    "targetSize",
                    name,
                    self.bindings[name].group.zone,
                    ",".join(joined),
                    f"group {name}: {', '.join(joined)} joined it from outside the autoscaler; "
                    f"the cloud's target size {before}->{group.target_size}",
                    len(joined),
                )
            for node in sorted(instances - present[name]):
                if node not in self.unregistered:
                    self.unregistered[node] = (name, sim.now)
                    self._record(
                        sim,
                        "unregistered",
                        name,
                        self.bindings[name].group.zone,
                        node,
                        f"group {name}: node {node} is gone from the API but its instance "
                        f"runs on: unregistered, counted as upcoming",
                    )
                elif (
                    sim.now - self.unregistered[node][1] > limit
                    and group.target_size > group.min_size
                ):
                    # Upstream skips a group at its min size ("node group min size reached").
                    del self.unregistered[node]
                    instances.discard(node)
                    group.target_size -= 1
                    self._record(
                        sim,
                        "remove",
                        name,
                        self.bindings[name].group.zone,
                        node,
                        f"removing unregistered node {node}: not registered for more than "
                        f"max-node-provision-time "
                        f"({format_duration(limit)}); group {name} target size "
                        f"{group.target_size + 1}->{group.target_size}",
                    )

    def _drop_unregistered_over_target(self) -> None:
        """A target size the model lowered below the instances (a provisioning time-out)
        deletes the unregistered instances first, as DecreaseTargetSize drops the ones that
        never came up."""
        for name, instances in self.instances.items():
            extra = len(instances) - self.model.groups[name].target_size
            for node in sorted(n for n in instances if n in self.unregistered)[: max(0, extra)]:
                instances.discard(node)
                del self.unregistered[node]

    def _launch(self, sim: Simulation, where: str) -> None:
        """The cloud creates the nodes each group's target size asks for, where it can."""
        counts: Counter[tuple[str, str]] = Counter()
        for info in sim.cluster.list():
            labels = info.node.metadata.labels
            g = labels.get(NODE_GROUP_LABEL, "")
            if g in self.bindings:
                counts[(g, labels.get(self.bindings[g].zone_key, ""))] += 1
        for name, binding in self.bindings.items():
            group = self.model.groups[name]
            # The cloud's instances: an unregistered one is not replaced.
            have = len(self.instances[name])
            added: list[str] = []
            if group.target_size <= have:
                self._blocked.pop(name, None)
            for _ in range(group.target_size - have):
                zone, stockout = self._zone_for(sim, binding, counts)
                if stockout:
                    if self._blocked.get(name) != stockout:
                        self._record(
                            sim,
                            "stockout",
                            name,
                            zone,
                            "",
                            f"group {name}: the cloud cannot create a node: stockout, {stockout}",
                        )
                    self._blocked[name] = stockout
                    break
                self._blocked.pop(name, None)
                node = self._new_node(sim, binding, zone, where)
                self.instances[name].add(node)
                counts[(name, zone)] += 1
                added.append(node)
                self._record(
                    sim,
                    "add",
                    name,
                    zone,
                    node,
                    f"added node {node} to group {name}"
                    + (f" in {zone}" if zone else "")
                    + self._ready_text(sim),
                )
            self._start(sim, added, where)

    def _zone_for(
        self, sim: Simulation, binding: GroupBinding, counts: Counter[tuple[str, str]]
    ) -> tuple[str, str]:
        """The zone a new instance goes to (a multi-zone group: its emptiest zone the cloud
        can serve, as an ASG balances its zones) and, when none can, the stock-out's text."""
        group = binding.group
        instance_type = group.labels.get(LABEL_INSTANCE_TYPE_STABLE, "")
        zones = list(binding.zones) or [group.labels.get(binding.zone_key, "")]
        ordered = sorted(zones, key=lambda z: (counts[(group.name, z)], zones.index(z)))
        first_text = ""
        for zone in ordered:
            stockout = sim.cloud.stocked_out(zone, instance_type, sim.now)
            if stockout is None:
                return zone, ""
            first_text = first_text or stockout.text()
        return ordered[0], first_text

    def _new_node(self, sim: Simulation, binding: GroupBinding, zone: str, where: str) -> str:
        if binding.source:
            source = sim.scenario.groups[binding.source]
            return sim.add_group_nodes(source, zone if source.zones else "", 1, where)[0]
        group: NodeGroup = binding.group
        key = (group.name, zone if len(binding.zones) > 1 else "")
        n = sim.group_counters.get(key, 0) + 1
        sim.group_counters[key] = n
        name = f"{group.name}-{zone}-{n}" if len(binding.zones) > 1 else f"{group.name}-{n}"
        node = group.template_node(name)
        if len(binding.zones) > 1:
            labels = {**node.metadata.labels, binding.zone_key: zone}
            labels[LABEL_TOPOLOGY_REGION] = region_of(zone)
            node = _relabel(node, labels)
        sim.add_node(node, where)
        return name

    def _scale_down(self, sim: Simulation, node: str, group: str, removed: Any, where: str) -> None:
        zone = sim.node(node, where).metadata.labels.get(self.bindings[group].zone_key, "")
        what = (
            "empty"
            if removed.empty
            else f"utilization {removed.utilization:.0%} below the threshold, "
            f"{pods_text(removed.pods_to_reschedule)} fit elsewhere"
        )
        since = format_duration(nanos(removed.unneeded_since))
        kept = self._delete(sim, node, TO_BE_DELETED, where)
        if kept:
            self.model.node_deletion_failed(sim.now / 1e9)
            self.model.groups[group].target_size += 1
            self._record(
                sim,
                "blocked",
                group,
                zone,
                node,
                f"scale-down of {node} failed: eviction refused for {', '.join(kept)}",
            )
            return
        self.instances[group].discard(node)
        self._record(
            sim,
            "remove",
            group,
            zone,
            node,
            f"scale-down: removed node {node} of group {group}: {what}; unneeded since {since}",
        )


def _relabel(node: Node, labels: dict[str, str]) -> Node:
    import msgspec

    meta = msgspec.structs.replace(node.metadata, labels=labels)
    return msgspec.structs.replace(node, metadata=meta)


def build_autoscaler(
    spec: ClusterAutoscalerSpec | KarpenterSpec, sim: Simulation
) -> AutoscalerController:
    if isinstance(spec, ClusterAutoscalerSpec):
        return ClusterAutoscalerController(spec, sim)
    from topospread.simulator.karpenter_loop import KarpenterController

    return KarpenterController(spec, sim)


__all__ = [
    "CLUSTER_AUTOSCALER",
    "KARPENTER",
    "KARPENTER_DISRUPTED",
    "AutoscalerController",
    "ClusterAutoscalerController",
    "NodeChange",
    "build_autoscaler",
    "daemonsets_of",
    "pending_pods",
    "pods_text",
]
