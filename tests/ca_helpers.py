"""Helpers for the cluster-autoscaler tests, in the spirit of upstream's utils/test builders."""

from __future__ import annotations

from typing import Any

import msgspec

from builders import make_node, make_pod
from topospread.api.types import Node, Pod
from topospread.autoscaler.clusterautoscaler.snapshot import ClusterSnapshot, PredicateChecker
from topospread.cluster.state import ClusterState
from topospread.framework.config import default_config
from topospread.plugins.registry import IN_TREE

MIB = 1024 * 1024


def build_test_pod(name: str, cpu_milli: int, mem_bytes: int, namespace: str = "default") -> Pod:
    """``BuildTestPod(name, cpu, mem)``: one container requesting millicores and bytes."""
    return make_pod(name).namespace(namespace).req(cpu=f"{cpu_milli}m", memory=str(mem_bytes)).obj()


def build_test_node(name: str, cpu_milli: int, mem_bytes: int, pods: int = 100) -> Node:
    """``BuildTestNode(name, cpu, mem)``: capacity equals allocatable, 100 pods."""
    return (
        make_node(name).capacity(cpu=f"{cpu_milli}m", memory=str(mem_bytes), pods=str(pods)).obj()
    )


def with_meta(obj: Any, **fields: Any) -> Any:
    """A copy of a pod or node with metadata fields replaced (annotations, owner references)."""
    return msgspec.structs.replace(obj, metadata=msgspec.structs.replace(obj.metadata, **fields))


def with_labels(node: Node, **labels: str) -> Node:
    return with_meta(node, labels={**node.metadata.labels, **labels})


def checker_for(nodes: list[Node], pods: list[Pod] = ()) -> PredicateChecker:  # type: ignore[assignment]
    snapshot = ClusterSnapshot(ClusterState(nodes, pods))
    return PredicateChecker(snapshot, default_config().profiles[0], IN_TREE)
