"""The descheduler's view of the nodes: which are Ready, which pods it lists on each, and
NodeFit, whether a pod could go to a node, as the descheduler (not kube-scheduler) checks it.
Part of the model of the descheduler's RemovePodsViolatingTopologySpreadConstraint
(``descheduler.py`` says what is modelled).

Upstream: pkg/descheduler/node/node.go, pkg/descheduler/pod/pods.go (descheduler v0.34).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.resource import ZERO, Quantity, parse_resource_list
from topospread.api.types import CONDITION_TRUE, NODE_READY, Node, Pod
from topospread.framework.types import NodeInfo
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.nodeaffinity import get_required_node_affinity
from topospread.plugins.noderesources.resource_helpers import pod_requests
from topospread.taints import do_not_schedule_taints_filter, find_matching_untolerated_taint

POD_SUCCEEDED: Final = "Succeeded"
POD_FAILED: Final = "Failed"

_CPU: Final = "cpu"
_MEMORY: Final = "memory"
_PODS: Final = "pods"


# ---------------------------------------------------------------------------------------------
# Nodes


def is_ready(node: Node) -> bool:
    """False when the node's Ready condition is anything but True (False or Unknown); a node
    without a Ready condition, and a cordoned node, count as Ready.

    Upstream: IsReady (pkg/descheduler/node/node.go, v0.34)
    """
    return all(c.status == CONDITION_TRUE for c in node.status.conditions if c.type == NODE_READY)


def ready_nodes(nodes: Iterable[NodeInfo], node_selector: Selector | None) -> list[NodeInfo]:
    """The nodes a descheduling cycle works on: those the selector matches, Ready ones only,
    in the order given.

    Upstream: ReadyNodes (pkg/descheduler/node/node.go, v0.34)
    """
    return [
        info
        for info in nodes
        if (node_selector is None or node_selector.matches(info.node.metadata.labels))
        and is_ready(info.node)
    ]


# ---------------------------------------------------------------------------------------------
# NodeFit


def is_running(pod: Pod) -> bool:
    """Pods that have finished are never listed: they hold no resources.

    Upstream: ListPodsOnANode (pkg/descheduler/pod/pods.go, v0.34)
    """
    return pod.status.phase not in (POD_SUCCEEDED, POD_FAILED)


@dataclass(slots=True)
class NodeView:
    """A node as NodeFit reads it: the pods on it that have not finished and their requests."""

    node: Node
    bound: Sequence[Pod]  # every pod bound to it; ``pods`` keeps those not finished
    _pods: list[Pod] | None = None
    _allocatable: dict[str, Quantity] | None = None
    _requested: dict[str, Quantity] | None = None

    @property
    def name(self) -> str:
        return self.node.metadata.name

    @property
    def pods(self) -> list[Pod]:
        if self._pods is None:
            self._pods = [p for p in self.bound if is_running(p)]
        return self._pods

    def allocatable(self) -> Mapping[str, Quantity]:
        if self._allocatable is None:
            self._allocatable = parse_resource_list(self.node.status.allocatable)
        return self._allocatable

    def requested(self) -> Mapping[str, Quantity]:
        if self._requested is None:
            total: dict[str, Quantity] = {}
            for p in self.pods:
                for name, q in pod_requests(p).items():
                    current = total.get(name)
                    total[name] = q if current is None else current + q
            self._requested = total
        return self._requested


def _available_milli(view: NodeView, name: str) -> int:
    """What is left of one resource, in thousandths, read as the descheduler reads it.

    Upstream: nodeAvailableResources (pkg/descheduler/node/node.go, v0.34)
    """
    allocatable = view.allocatable()
    used = view.requested().get(name, ZERO)
    if name == _CPU:
        return allocatable.get(_CPU, ZERO).milli_value() - used.milli_value()
    if name == _MEMORY:
        return (allocatable.get(_MEMORY, ZERO).value() - used.value()) * 1000
    if name == _PODS:
        return (allocatable.get(_PODS, ZERO).value() - len(view.pods)) * 1000
    have = allocatable.get(name)
    if have is None:
        return 0
    return (have.value() - used.value()) * 1000


def _fits_request(requests: Mapping[str, Quantity], view: NodeView) -> str | None:
    """None when the pod's requests fit what the node has left, else the reason.

    Upstream: fitsRequest (pkg/descheduler/node/node.go, v0.34)
    """
    for name, q in requests.items():
        if q.milli_value() > _available_milli(view, name):
            return f"insufficient {name}"
    if _available_milli(view, _PODS) <= 0:
        return f"insufficient {_PODS}"
    return None


def _matches_inter_pod_anti_affinity(pod: Pod, view: NodeView) -> bool:
    """True when a pod on the node matches one of the pod's required anti-affinity terms and
    the node has the term's topology key; an unparsable term counts as a match (NodeFit fails
    on the error). Only the pods on that very node are looked at, and only the moving pod's
    terms (not those of the pods already there); namespaceSelector is ignored.

    Upstream: podMatchesInterPodAntiAffinity (pkg/descheduler/node/node.go, v0.34)
    """
    affinity = pod.spec.affinity
    if affinity is None or affinity.pod_anti_affinity is None:
        return False
    node_labels = view.node.metadata.labels
    for term in affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution:
        namespaces = set(term.namespaces) or {pod.metadata.namespace}
        try:
            selector = label_selector_as_selector(term.label_selector)
        except SelectorError:
            return True
        for other in view.pods:
            if other.metadata.namespace not in namespaces:
                continue
            if other.metadata.name == pod.metadata.name:
                continue
            if selector.matches(other.metadata.labels) and term.topology_key in node_labels:
                return True
    return False


class _PodFit:
    """One pod's NodeFit, with what it reads of the pod worked out once."""

    __slots__ = ("_pod", "_requests", "_required")

    def __init__(self, pod: Pod) -> None:
        self._pod = pod
        self._required = get_required_node_affinity(pod)
        self._requests: Mapping[str, Quantity] | None = None

    def check(self, view: NodeView) -> str | None:
        """None when the pod could be scheduled onto the node, else the first failed check.

        Upstream: NodeFit (pkg/descheduler/node/node.go, v0.34)
        """
        pod, node = self._pod, view.node
        if not self._required.match(node):
            return "pod node selector does not match the node label"
        untolerated = find_matching_untolerated_taint(
            node.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
        )
        if untolerated is not None:
            return "pod does not tolerate taints on the node"
        if pod.spec.node_name != node.metadata.name:
            if self._requests is None:
                self._requests = pod_requests(pod)
            reason = _fits_request(self._requests, view)
            if reason is not None:
                return reason
        if node.spec.unschedulable:
            return "node is not schedulable"
        if _matches_inter_pod_anti_affinity(pod, view):
            return "pod matches inter-pod anti-affinity rule of other pod on node"
        return None


def pod_fits_any_other_node(pod: Pod, current_node: str, views: Iterable[NodeView]) -> bool:
    """Whether NodeFit passes on some node other than the pod's own.

    Upstream: PodFitsAnyOtherNode (pkg/descheduler/node/node.go, v0.34)
    """
    fit = _PodFit(pod)
    return any(v.name != current_node and fit.check(v) is None for v in views)


__all__ = [
    "POD_FAILED",
    "POD_SUCCEEDED",
    "NodeView",
    "is_ready",
    "is_running",
    "pod_fits_any_other_node",
    "ready_nodes",
]
