"""Nominated pods as the fast path keeps them: their requests per node, per priority, kept as
the Nominator nominates and drops, so that NodeResourcesFit's kernel can take them off the free
room (upstream's addGENominatedPods, over every node at once)."""

from __future__ import annotations

import numpy as np

from topospread.api.types import Pod
from topospread.framework.nominator import pod_key, pod_priority
from topospread.plugins.interpodaffinity.terms import has_pod_affinity
from topospread.plugins.noderesources.resource_helpers import calculate_resource
from topospread.simulator.fastpath.table import NodeTable, Requests
from topospread.simulator.fastpath.vectors import I64


class Nominations:
    """Nominated pods: key -> (pod, node), and their requests per priority, per node."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        self.pods: dict[str, tuple[Pod, str]] = {}
        self.levels: dict[int, Requests] = {}

    def nominate(self, pod: Pod, node_name: str, sign: int) -> None:
        if sign > 0:
            self.pods[pod_key(pod)] = (pod, node_name)
        else:
            self.pods.pop(pod_key(pod), None)
        self.count(pod, node_name, sign)

    def recount(self) -> None:
        """After a rebuild: every nomination counted on the new rows."""
        self.levels.clear()
        for pod, node_name in self.pods.values():
            self.count(pod, node_name, 1)

    def count(self, pod: Pod, node_name: str, sign: int) -> None:
        table = self.table
        if table.stale:
            return  # the rebuild recounts
        i = table.index.get(node_name)
        if i is None:
            return  # a node the cluster does not have: no filter ever sees the pod
        priority = pod_priority(pod)
        level = self.levels.get(priority)
        if level is None:
            level = self.levels[priority] = Requests.zeros(len(table.names))
        r = calculate_resource(pod, table.features).resource
        level.cpu[i] += sign * r.milli_cpu
        level.mem[i] += sign * r.memory
        level.eph[i] += sign * r.ephemeral_storage
        level.pods[i] += sign
        if has_pod_affinity(pod):
            level.with_affinity += sign

    def with_affinity(self, priority: int) -> bool:
        """Whether a nominated pod of at least ``priority`` carries pod (anti-)affinity."""
        return any(level.with_affinity for p, level in self.levels.items() if p >= priority)

    def requests(self, pod: Pod) -> tuple[I64, I64, I64, I64]:
        """Per node, what the nominated pods of at least the pod's priority (the pod aside)
        request: cpu, memory, ephemeral storage, and how many they are.

        Upstream: addGENominatedPods (framework.go, v1.35), over every node at once
        """
        table = self.table
        n = len(table.names)
        cpu, mem, eph, pods = (np.zeros(n, np.int64) for _ in range(4))
        priority = pod_priority(pod)
        for p, level in self.levels.items():
            if p >= priority:
                cpu += level.cpu
                mem += level.mem
                eph += level.eph
                pods += level.pods
        own = self.pods.get(pod_key(pod))
        i = table.index.get(own[1]) if own is not None else None
        if own is not None and i is not None and pod_priority(own[0]) >= priority:
            r = calculate_resource(own[0], table.features).resource
            cpu[i] -= r.milli_cpu
            mem[i] -= r.memory
            eph[i] -= r.ephemeral_storage
            pods[i] -= 1
        return cpu, mem, eph, pods
