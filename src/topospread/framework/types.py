"""NodeInfo and NodeScore: a node together with the pods bound to it, as plugins see it."""

from __future__ import annotations

from dataclasses import dataclass, field

from topospread.api.types import Node, Pod


@dataclass(slots=True)
class NodeInfo:
    """A node and the pods assigned to it (bound or assumed), in the order they were added."""

    node: Node
    pods: list[Pod] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.node.metadata.name

    def add_pod(self, pod: Pod) -> None:
        self.pods.append(pod)

    def remove_pod(self, pod: Pod) -> bool:
        """Remove the pod with the same namespace and name; False when it is not here."""
        for i, p in enumerate(self.pods):
            if (
                p.metadata.name == pod.metadata.name
                and p.metadata.namespace == pod.metadata.namespace
            ):
                del self.pods[i]
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
