"""NodeInfo and NodeScore: a node together with the pods bound to it, as plugins see it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topospread.api.types import Node, Pod


@dataclass(slots=True)
class NodeInfo:
    """A node and the pods assigned to it (bound or assumed), in the order they were added.

    ``cache`` holds values plugins derive from the node and its pods (e.g. requested resources);
    every change to the node or its pods clears it. NOTE: plugins must treat cached values as
    read-only.
    """

    node: Node
    pods: list[Pod] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.node.metadata.name

    def set_node(self, node: Node) -> None:
        self.node = node
        self.cache.clear()

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)
        self.cache.clear()

    def remove_pod(self, pod: Pod) -> bool:
        """Remove the pod with the same namespace and name; False when it is not here."""
        for i, p in enumerate(self.pods):
            if (
                p.metadata.name == pod.metadata.name
                and p.metadata.namespace == pod.metadata.namespace
            ):
                del self.pods[i]
                self.cache.clear()
                return True
        return False

    def snapshot(self) -> NodeInfo:
        return NodeInfo(self.node, list(self.pods))


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
