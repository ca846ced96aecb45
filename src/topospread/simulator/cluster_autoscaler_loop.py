"""cluster-autoscaler in the simulation's loop (simulator/autoscaling.py has the shared
controller): its loop every ``scan-interval``, the cloud that carries out its target sizes
(creating instances where no stock-out holds), what other steps do to its groups
(``_follow_cloud``), and its scale-downs through the Eviction API."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from topospread.api.types import LABEL_INSTANCE_TYPE_STABLE, LABEL_TOPOLOGY_REGION, Node
from topospread.autoscaler.clusterautoscaler import ClusterAutoscaler, NodeGroup
from topospread.autoscaler.clusterautoscaler.nodegroup import NODE_GROUP_LABEL
from topospread.autoscaler.clusterautoscaler.scaleup import SCALE_UP_SUCCESSFUL
from topospread.simulator.autoscaler_spec import ClusterAutoscalerSpec, GroupBinding, nanos
from topospread.simulator.autoscaling import (
    CLUSTER_AUTOSCALER,
    TO_BE_DELETED,
    AutoscalerController,
    created_times,
    daemonsets_of,
    node_created_times,
    node_ready_since_times,
    pending_pods,
    pods_text,
)
from topospread.simulator.clock import format_duration
from topospread.simulator.cluster_autoscaler_drain import (
    EVICTION_RETRY_TIME,
    NodeDrain,
    evict_pods,
    failure_text,
    start_drain,
)
from topospread.simulator.node_groups import region_of
from topospread.simulator.timeline_steps.node_status import set_taints

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation


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
        # The drain rules read the pods' timestamps against the simulation's wall clock.
        self.model.clock_origin = datetime.fromtimestamp(sim.epoch / 1e9, UTC)
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
        # The scale-down drains still retrying their evictions (cluster_autoscaler_drain.py),
        # by node, and the time of the last loop (drain retries run between loops).
        self.drains: dict[str, NodeDrain] = {}
        self.last_loop = 0

    def groups(self) -> list[str]:
        return list(self.bindings)

    def next_tick(self, sim: Simulation) -> int:
        loop = (self.last_loop // self.interval + 1) * self.interval
        return min([loop, *(d.next_attempt for d in self.drains.values())])

    def tick(self, sim: Simulation, where: str) -> None:
        """The drains' retries due now, then the loop if one is due (a drain's retry and a
        loop at the same time: the retry first)."""
        due = sorted(n for n, d in self.drains.items() if d.next_attempt <= sim.now)
        for node in due:
            self._continue_drain(sim, self.drains[node], where)
        if sim.now < (self.last_loop // self.interval + 1) * self.interval:
            return
        if due:
            sim.settle_within_step(where)  # the evicted pods' replacements, before the loop
        self.last_loop = sim.now
        self._loop(sim, where)

    def _loop(self, sim: Simulation, where: str) -> None:
        model = self.model
        model.daemonsets = daemonsets_of(sim)
        self._follow_cloud(sim)
        pending = pending_pods(sim)
        result = model.run_once(
            sim.now / 1e9,
            sim.cluster,
            pending,
            sim.budgets(),
            created=created_times(sim, pending),
            node_created=node_created_times(sim),
            draining=list(self.drains),
            ready_since=node_ready_since_times(sim),
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
                (
                    f"group {t.group}: {t.requested - t.registered} node(s) not registered "
                    f"within max-node-provision-time; target size back to {t.registered}"
                    if t.requested > t.registered
                    else f"group {t.group}: scale-up timed out: its nodes registered but not "
                    "ready within max-node-provision-time"
                )
                + f", the group is in back-off until {format_duration(nanos(t.backoff_until))}",
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
            # A node being drained left the target size already; its instance still runs.
            draining = sum(1 for d in self.drains.values() if d.group == name)
            extra = len(instances) - draining - self.model.groups[name].target_size
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
        # The cloud's node comes up without the taints cluster-autoscaler calls transient,
        # its --startup-taint and --status-taint keys as much as the built-in prefixes.
        node = group.template_node(name, self.model.options.taint_config)
        if len(binding.zones) > 1:
            labels = {**node.metadata.labels, binding.zone_key: zone}
            labels[LABEL_TOPOLOGY_REGION] = region_of(zone)
            node = _relabel(node, labels)
        sim.add_node(node, where)
        return name

    def _scale_down(self, sim: Simulation, node: str, group: str, removed: Any, where: str) -> None:
        """Taint the node ToBeDeleted and delete it: an empty one at once, one with pods once
        its drain (cluster_autoscaler_drain.py) has evicted them, which may take retries."""
        zone = sim.node(node, where).metadata.labels.get(self.bindings[group].zone_key, "")
        if removed.empty:
            kept = self._delete(sim, node, TO_BE_DELETED, where)
            if kept:
                self.model.groups[group].target_size += 1
                self._drain_failed(sim, node, group, zone, ", ".join(kept))
            else:
                self._removed(sim, node, group, zone, removed)
            return
        set_taints(sim, sim.node(node, where), [TO_BE_DELETED], [])
        limit = nanos(self.model.options.max_pod_eviction_time)
        drain = start_drain(sim, node, group, zone, removed, limit)
        evict_pods(sim, drain)
        if drain.done:
            sim.remove_node(node)
            self._removed(sim, node, group, zone, removed)
            return
        self.drains[node] = drain
        self._record(
            sim,
            "draining",
            group,
            zone,
            node,
            f"scale-down of {node} started: eviction refused for "
            f"{', '.join(f'{k} ({drain.refusals[k]})' for k in sorted(drain.pods))}; "
            f"retrying every {format_duration(EVICTION_RETRY_TIME)} until "
            f"{format_duration(drain.retry_until)} (max-pod-eviction-time)",
        )

    def _continue_drain(self, sim: Simulation, drain: NodeDrain, where: str) -> None:
        """A drain's retries due now: one more round of evictions, or, with the time up, the
        drain fails (upstream declares it when the retry that would follow is not before the
        start plus --max-pod-eviction-time)."""
        if sim.cluster.get(drain.node) is None:
            # Another step deleted the Node meanwhile: its pods are gone (NotFound ends each
            # eviction loop), so the drain succeeds and the instance is deleted.
            del self.drains[drain.node]
            self._removed(sim, drain.node, drain.group, drain.zone, drain.removed)
            return
        if drain.timed_out:
            del self.drains[drain.node]
            set_taints(sim, sim.node(drain.node, where), [], [TO_BE_DELETED])
            self.model.groups[drain.group].target_size += 1
            self._drain_failed(sim, drain.node, drain.group, drain.zone, failure_text(drain))
            return
        evict_pods(sim, drain)
        if drain.done:
            del self.drains[drain.node]
            sim.remove_node(drain.node)
            self._removed(sim, drain.node, drain.group, drain.zone, drain.removed)

    def _drain_failed(self, sim: Simulation, node: str, group: str, zone: str, why: str) -> None:
        """The node stays, untainted; upstream's scale-down does not pause for it (only a
        deletion StartDeletion could not begin sets off --scale-down-delay-after-failure), and
        the node is unneeded afresh from the next loop."""
        self._record(sim, "blocked", group, zone, node, f"scale-down of {node} failed: {why}")

    def _removed(self, sim: Simulation, node: str, group: str, zone: str, removed: Any) -> None:
        self.instances[group].discard(node)
        self.unregistered.pop(node, None)
        what = (
            "empty"
            if removed.empty
            else f"utilization {removed.utilization:.0%} below the threshold, "
            f"{pods_text(removed.pods_to_reschedule)} fit elsewhere"
        )
        since = format_duration(nanos(removed.unneeded_since))
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


__all__ = ["ClusterAutoscalerController"]
