"""The simulation's nodes: joining (admitted as the API server admits them, numbered within
their node group), changing (the taint manager acting on NoExecute changes), leaving (the pod
garbage collector deleting their pods), and looked up by the name or zone a step gives. Every
change is told to the scheduler's queue (``Scheduler.on_node_change``) and counted
(``version``, which the DaemonSet controller's skip reads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    Node,
)
from topospread.errors import ManifestError
from topospread.simulator.controllers.common import format_time
from topospread.simulator.node_groups import NodeGroup, region_of
from topospread.simulator.pod_admission import admit_node
from topospread.simulator.taint_eviction_controller import TaintChanges, check_taint_times
from topospread.simulator.tainteviction import get_no_execute_taints

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation


class ClusterNodes:
    """The nodes of one simulation (``Simulation.nodes``); the nodes themselves are the
    cluster state's (``Simulation.cluster``)."""

    __slots__ = ("sim", "version")

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.version = 0  # bumped by every change to the nodes

    def add(self, raw: Node, where: str) -> None:
        """A new node joins the cluster (admitted as the API server admits it). One that joins
        during the timeline is stamped with a creationTimestamp on the clock, as the API server
        stamps what it creates; the initial nodes keep theirs (none: the zero time, old)."""
        sim = self.sim
        if sim.started and raw.metadata.creation_timestamp is None:
            meta = msgspec.structs.replace(
                raw.metadata, creation_timestamp=format_time(sim.epoch + sim.now)
            )
            raw = msgspec.structs.replace(raw, metadata=meta)
        node = admit_node(raw, where, sim.cluster.infos)
        check_taint_times(node, where)
        sim.cluster.add_node(node)
        # The provisioner's retry of Immediate claims waiting for a node of their topology.
        sim.cluster.storage_state.retry_provisioning()
        self.version += 1
        sim.scheduler.on_node_change(new=node)

    def replace(self, node: Node, where: str) -> str:
        admitted = admit_node(node, where)
        check_taint_times(admitted, where)
        changes = self.update(admitted)
        return "; ".join([f"configured node {node.metadata.name}", *changes.text()])

    def update(self, node: Node) -> TaintChanges:
        """Store the node; if its NoExecute taints changed, the taint manager acts."""
        sim = self.sim
        # Read before the update: the NodeInfo is updated in place.
        old = sim.cluster.infos[node.metadata.name].node
        sim.cluster.update_node(node)
        # A node may come to carry the topology an Immediate claim waits for.
        sim.cluster.storage_state.retry_provisioning()
        self.version += 1
        sim.scheduler.on_node_change(old, node)
        if get_no_execute_taints(old.spec.taints) == get_no_execute_taints(node.spec.taints):
            return TaintChanges()
        return sim.taint_manager.node_taints_changed(node)

    def get(self, name: str, where: str) -> Node:
        sim = self.sim
        info = sim.cluster.get(name)
        if info is None:
            known = ", ".join(sorted(sim.cluster.infos)[:12])
            raise ManifestError(f'{where}: Not found: node "{name}" (nodes: {known})')
        return info.node

    def in_zone(self, zone: str, zone_key: str, where: str) -> list[Node]:
        sim = self.sim
        nodes = [
            info.node
            for _, info in sorted(sim.cluster.infos.items())
            if info.node.metadata.labels.get(zone_key) == zone
        ]
        if not nodes:
            zones = sorted(
                {
                    v
                    for i in sim.cluster.infos.values()
                    if (v := i.node.metadata.labels.get(zone_key))
                }
            )
            raise ManifestError(
                f'{where}: zone: Not found: "{zone}": no node has {zone_key}={zone} '
                f"(zones: {', '.join(zones) or 'none'})"
            )
        return nodes

    def add_group(self, group: NodeGroup, zone: str, count: int, where: str) -> list[str]:
        """``count`` more nodes of ``group`` (in ``zone``), numbered after the existing ones."""
        sim = self.sim
        names = []
        for _ in range(count):
            n = sim.group_counters.get((group.name, zone), 0) + 1
            sim.group_counters[(group.name, zone)] = n
            name = f"{group.name}-{zone}-{n}" if zone else f"{group.name}-{n}"
            labels = {**group.template.metadata.labels, LABEL_HOSTNAME: name}
            if zone:
                labels[group.zone_key] = zone
                if group.zone_key == LABEL_TOPOLOGY_ZONE:
                    labels.setdefault(LABEL_TOPOLOGY_REGION, region_of(zone))
            if sim.autoscaler_spec is not None:
                labels.update(sim.autoscaler_spec.labels_for(group.name, zone))
            meta = msgspec.structs.replace(group.template.metadata, name=name, labels=labels)
            self.add(msgspec.structs.replace(group.template, metadata=meta), where)
            names.append(name)
        return names

    def remove(self, name: str) -> list[str]:
        """Delete a node; the pod garbage collector deletes the pods bound to it."""
        sim = self.sim
        gone = sim.cluster.infos[name]
        pods = list(gone.pods)
        for pod in pods:
            sim.delete_pod(pod)
        sim.cluster.remove_node(name)
        self.version += 1
        sim.scheduler.on_node_change(old=gone.node)
        return [p.key for p in pods]


__all__ = ["ClusterNodes"]
