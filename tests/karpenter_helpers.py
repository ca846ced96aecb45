"""Helpers for the Karpenter tests, in the spirit of upstream's ExpectProvisioned/ExpectSkew."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from builders import make_pod
from topospread.api.types import LABEL_TOPOLOGY_ZONE, Node, Pod
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.karpenter import (
    CreateFunc,
    Karpenter,
    KarpenterResult,
    NodePool,
    builtin_catalogue,
    parse_nodepool,
)
from topospread.cluster.state import ClusterState

TEST_ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")
# The disruption controller looks at every pass and carries a command out at once, as
# upstream's disruption tests step their fake clock past the 15s validation wait and the
# 10s polling period (the default timing has its own tests).
AT_ONCE: dict[str, Any] = {"validation_delay": 0.0, "polling_period": 0.0}
LABELS = {"test": "test"}


def nodepool(name: str = "default", **spec: Any) -> NodePool:
    return parse_nodepool({"name": name, **spec}, "test")


def zones_requirement(*zones: str) -> list[dict[str, Any]]:
    return [{"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": list(zones)}]


def spread_pods(
    count: int,
    key: str = LABEL_TOPOLOGY_ZONE,
    max_skew: int = 1,
    cpu: str | None = None,
    prefix: str = "p",
    **kw: Any,
) -> list[Pod]:
    """``test.UnschedulablePods`` with the test labels and one spread constraint."""
    pods = []
    for i in range(count):
        b = make_pod(f"{prefix}-{i}").label("test", "test")
        b = b.spread_constraint(max_skew, key, selector={"matchLabels": dict(LABELS)}, **kw)
        if cpu is not None:
            b = b.req(cpu=cpu)
        pods.append(b.obj())
    return pods


class Env:
    """A cluster, a Karpenter over it, and a clock; ``provision`` applies what a pass decided
    (launched nodes join, pods bind), as ExpectProvisioned does."""

    def __init__(self, *pools: NodePool, zones: tuple[str, ...] = TEST_ZONES) -> None:
        self.cluster = ClusterState([], [])
        self.karpenter = Karpenter(pools or (nodepool(),), builtin_catalogue(zones), **AT_ONCE)
        self.now = 0.0

    def set_pools(self, *pools: NodePool) -> None:
        """The NodePools replaced, as upstream's provisioning suites do between two
        ExpectProvisioned calls (ExpectApplied). Those suites run no disruption controller:
        from here on neither does this one, or the nodes launched from the old NodePools
        would drift."""
        self.karpenter.set_pools(pools)
        self.karpenter.disruption_at = math.inf

    def provision(self, *pods: Pod, create: CreateFunc | None = None) -> KarpenterResult:
        """One pass over ``pods``; ``create`` is the cloud (None: it serves every launch)."""
        result = self.karpenter.run_once(self.now, self.cluster, list(pods), create=create)
        by_key = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}
        for launch in result.launched:
            self.cluster.add_node(launch.node)
            for key in launch.pods:
                self.cluster.bind(with_node_name(by_key[key], launch.name), launch.name)
        for node, keys in result.scheduled_on_existing.items():
            for key in keys:
                self.cluster.bind(with_node_name(by_key[key], node), node)
        # Registered nodes are no longer in flight on the next pass.
        self.karpenter.run_once(self.now, self.cluster, [])
        return result

    def add_node(self, node: Node, *pods: Pod) -> None:
        self.cluster.add_node(node)
        for p in pods:
            self.cluster.bind(with_node_name(p, node.metadata.name), node.metadata.name)

    def node_of(self, pod: Pod) -> Node | None:
        for info in self.cluster.list():
            if any(p.metadata.name == pod.metadata.name for p in info.pods):
                return info.node
        return None

    def skew(self, key: str = LABEL_TOPOLOGY_ZONE) -> list[int]:
        """Matching pods per domain, sorted (ExpectSkew ... ConsistOf)."""
        counts: Counter[str] = Counter()
        for info in self.cluster.list():
            for p in info.pods:
                if all(p.metadata.labels.get(k) == v for k, v in LABELS.items()):
                    counts[info.node.metadata.labels.get(key, "")] += 1
        return sorted(counts.values())
