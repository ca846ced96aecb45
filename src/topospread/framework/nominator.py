"""Nominated pods: pending pods that preemption made room for, by the node they wait for.

A pod whose ``status.nominatedNodeName`` is set is not bound yet, but the scheduler treats it
as if it ran on that node when it filters pods of equal or lower priority, so that they do not
take the room that was freed for it. Upstream: nominator (pkg/scheduler/backend/queue/
nominator.go, v1.35), kept by the scheduling queue and reached through the framework handle.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Final, Protocol

from topospread.api.types import Pod

# scheduling.DefaultPriorityWhenNoDefaultClassExists: a pod admitted without any priority.
DEFAULT_PRIORITY: Final = 0


def pod_priority(pod: Pod) -> int:
    """The pod's spec.priority, or 0 when the Priority admission step never set it.

    Upstream: PodPriority (component-helpers/scheduling/corev1/helpers.go, v1.35)
    """
    return DEFAULT_PRIORITY if pod.spec.priority is None else pod.spec.priority


def pod_key(pod: Pod) -> str:
    """``namespace/name``: the identity of a pod here (upstream compares UIDs)."""
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def ge_nominated_pods(nominated: Iterable[Pod], pod: Pod) -> Iterator[Pod]:
    """The nominated pods a filter of ``pod`` counts as running: those of at least its
    priority, itself aside.

    Upstream: the selection in addGENominatedPods (framework.go, v1.35)
    """
    priority = pod_priority(pod)
    key = pod_key(pod)
    for p in nominated:
        if pod_priority(p) >= priority and pod_key(p) != key:
            yield p


class NominatorListener(Protocol):
    """Told of every nomination made (``sign`` 1) and dropped (-1), with the pod as stored."""

    def on_nominated(self, pod: Pod, node_name: str, sign: int) -> None: ...


class Nominator:
    """Pods nominated to nodes, per node in the order they were nominated.

    Each pod is nominated to at most one node; nominating it again replaces the old entry.
    """

    __slots__ = ("_node_of", "_pods", "listeners")

    def __init__(self) -> None:
        self._node_of: dict[str, str] = {}
        self._pods: dict[str, dict[str, Pod]] = {}
        self.listeners: list[NominatorListener] = []

    def add(self, pod: Pod, node_name: str | None = None) -> None:
        """Nominate ``pod`` to ``node_name``; ``None`` keeps what ``status.nominatedNodeName``
        says (upstream's ModeNoop) and an empty name only removes the nomination. A pod that is
        already bound is never nominated.

        Upstream: nominator.addNominatedPodUnlocked (nominator.go, v1.35)
        """
        self.delete(pod)
        name = pod.status.nominated_node_name if node_name is None else node_name
        if not name or pod.spec.node_name:
            return
        key = pod_key(pod)
        self._node_of[key] = name
        self._pods.setdefault(name, {})[key] = pod
        for listener in self.listeners:
            listener.on_nominated(pod, name, 1)

    def delete(self, pod: Pod) -> None:
        """Upstream: nominator.deleteUnlocked (nominator.go, v1.35)."""
        key = pod_key(pod)
        name = self._node_of.pop(key, None)
        if name is None:
            return
        pods = self._pods[name]
        stored = pods.pop(key)
        if not pods:
            del self._pods[name]
        for listener in self.listeners:
            listener.on_nominated(stored, name, -1)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        """Upstream: nominator.NominatedPodsForNode (nominator.go, v1.35)."""
        pods = self._pods.get(node_name)
        return list(pods.values()) if pods else []

    def by_node(self) -> Iterator[tuple[str, Iterable[Pod]]]:
        """Each node that has nominated pods, with them, in the order nodes were first used."""
        for name, pods in self._pods.items():
            yield name, pods.values()

    def nominated_node(self, pod: Pod) -> str | None:
        return self._node_of.get(pod_key(pod))

    def __len__(self) -> int:
        return len(self._node_of)


__all__ = [
    "DEFAULT_PRIORITY",
    "Nominator",
    "NominatorListener",
    "ge_nominated_pods",
    "pod_key",
    "pod_priority",
]
