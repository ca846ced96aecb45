"""The cluster as the scheduler's cache holds it: nodes in node-tree order, bound pods per node.

Node order matters: kube-scheduler walks nodes zone by zone, round robin (its nodeTree), starting
where the previous search stopped; which nodes it samples, and so where pods land, follows from
it. Zones are ordered by when their first node arrived, nodes within a zone by arrival.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from typing import Protocol

from topospread.api.types import (
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    Namespace,
    Node,
    Pod,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.cluster.index import ClusterIndex
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.storage import StorageState
from topospread.framework.types import NodeInfo
from topospread.plugins.interpodaffinity.terms import has_pod_affinity

_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
_BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def get_zone_key(node: Node) -> str:
    """The node tree's zone key: region and zone, each from its beta label when the node has
    one (even empty), else from the GA label, as upstream still reads them.

    Upstream: GetZoneKey (component-helpers/node/topology/helpers.go, v1.35)
    """
    labels = node.metadata.labels
    zone = labels[_BETA_ZONE] if _BETA_ZONE in labels else labels.get(LABEL_TOPOLOGY_ZONE, "")
    region = (
        labels[_BETA_REGION] if _BETA_REGION in labels else labels.get(LABEL_TOPOLOGY_REGION, "")
    )
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    """Node names grouped by zone, listed zone by zone round robin.

    NOTE: each zone's names are also kept as a set: asking its list whether a name is in it
    made adding n nodes quadratic (65,000 nodes in three zones: 30 s).

    Upstream: nodeTree (pkg/scheduler/backend/cache/node_tree.go, v1.35)
    """

    __slots__ = ("_cached", "_members", "_tree", "_zones")

    def __init__(self) -> None:
        self._tree: dict[str, list[str]] = {}
        self._members: dict[str, set[str]] = {}  # per zone, the names of its list
        self._zones: list[str] = []
        self._cached: list[str] | None = None

    def add(self, node: Node) -> None:
        zone = get_zone_key(node)
        names = self._tree.get(zone)
        if names is None:
            names = self._tree[zone] = []
            self._members[zone] = set()
            self._zones.append(zone)
        members = self._members[zone]
        name = node.metadata.name
        if name not in members:
            members.add(name)
            names.append(name)
        self._cached = None

    def remove(self, node: Node) -> None:
        zone = get_zone_key(node)
        members = self._members.get(zone)
        name = node.metadata.name
        if members is None or name not in members:
            return
        members.discard(name)
        names = self._tree[zone]
        names.remove(name)
        if not names:
            del self._tree[zone]
            del self._members[zone]
            self._zones.remove(zone)
        self._cached = None

    def update(self, old: Node, new: Node) -> None:
        if get_zone_key(old) == get_zone_key(new):
            return
        self.remove(old)
        self.add(new)

    def list(self) -> list[str]:
        if self._cached is None:
            order: list[str] = []
            depth = max((len(v) for v in self._tree.values()), default=0)
            for i in range(depth):
                for zone in self._zones:
                    names = self._tree[zone]
                    if i < len(names):
                        order.append(names[i])
            self._cached = order
        return self._cached


class ClusterListener(Protocol):
    """Told of every change, to keep derived indexes (the fast path's tables) incremental."""

    def on_nodes_changed(self) -> None: ...

    def on_node_updated(self, old: Node, new: Node) -> None:
        """One node changed in place (same name, same position); ``on_nodes_changed`` is
        for nodes added or removed."""
        ...

    def on_bind(self, pod: Pod, node_name: str) -> None: ...

    def on_unbind(self, pod: Pod, node_name: str) -> None: ...


class ClusterState:
    """Nodes, bound pods and the objects plugins look up; a live SharedLister for plugins.

    ``list()`` returns NodeInfos in node-tree order. Binding a pod adds it to its NodeInfo;
    deleting removes it. Upstream: the scheduler cache and its snapshot.
    """

    def __init__(
        self,
        nodes: Iterable[Node] = (),
        pods: Iterable[Pod] = (),
        objects: ObjectStore | None = None,
        priority_classes: Iterable[PriorityClass] = (),
        storage: StorageState | None = None,
    ) -> None:
        self.tree = NodeTree()
        # Owned here, not by ``objects``: the simulation replaces the object store as its
        # workloads change, while storage lives on (and is mutated by volume binding).
        self.storage_state = storage if storage is not None else StorageState()
        self.storage_state.node_of = self._node_of
        self.storage_state.list_nodes = self._all_nodes
        self.infos: dict[str, NodeInfo] = {}
        self.objects = objects if objects is not None else ObjectStore()
        self.priority_classes = {pc.metadata.name: pc for pc in priority_classes}
        self._list: list[NodeInfo] | None = None
        # Per node, how many of its pods carry pod (anti-)affinity; the nodes holding any, in
        # node order, built when asked (have_pods_with_affinity_list).
        self._affinity_pods: dict[str, int] = {}
        self._affinity_list: list[NodeInfo] | None = None
        self.listeners: builtins.list[ClusterListener] = []
        self._index: ClusterIndex | None = None
        for node in nodes:
            self.add_node(node)
        self._bind_all(pods)
        self.storage_state.sync_claims()

    def _bind_all(self, pods: Iterable[Pod]) -> None:
        """``bind(pod, pod.spec.nodeName)`` for each pod, in order, at construction: no
        listener is registered yet, and every NodeInfo's cache is cleared once at the end.

        NOTE: a cluster dump's bound pods (the chart cluster's 10,000) each took a call of
        ``bind`` and two more.
        """
        infos = self.infos
        held = self._affinity_pods
        touched: dict[str, NodeInfo] = {}
        for pod in pods:
            spec = pod.spec
            node_name = spec.node_name
            info = infos.get(node_name)
            if info is None:
                raise KeyError(node_name)
            info.pods.append(pod)
            touched[node_name] = info
            affinity = spec.affinity
            if affinity is not None and (
                affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
            ):  # ``has_pod_affinity``
                held[node_name] = held.get(node_name, 0) + 1
        self._affinity_list = None
        for info in touched.values():
            info.cache.clear()

    def index(self) -> ClusterIndex:
        """The index of the cluster's pods per selector, term and domain: created on first
        use, then kept current from this state's change notifications."""
        index = getattr(self, "_index", None)
        if index is None:
            index = self._index = ClusterIndex(self)
            self.listeners.append(index)
        return index.fresh()

    # SharedLister / NodeInfoLister
    def node_infos(self) -> ClusterState:
        return self

    def list(self) -> Sequence[NodeInfo]:
        if self._list is None:
            self._list = [self.infos[name] for name in self.tree.list()]
        return self._list

    def get(self, name: str) -> NodeInfo | None:
        return self.infos.get(name)

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        """The nodes, in node order, holding a pod with pod affinity or anti-affinity (only
        they can hold a pod with required anti-affinity terms).

        NOTE: a superset is harmless (callers look at each listed node's own pods), and it can
        only be one: every pod comes in through ``bind``, while a pod taken out of a NodeInfo
        directly (the autoscaler's snapshot undoing an add) leaves its node listed.

        Upstream: Snapshot.HavePodsWithAffinityList (pkg/scheduler/backend/cache/snapshot.go)
        """
        if self._affinity_list is None:
            counts = self._affinity_pods
            self._affinity_list = [info for info in self.list() if info.name in counts]
        return self._affinity_list

    def _count_affinity(self, pod: Pod, node_name: str, sign: int) -> None:
        if not has_pod_affinity(pod):
            return
        held = self._affinity_pods.get(node_name, 0) + sign
        if held > 0:
            self._affinity_pods[node_name] = held
        else:
            self._affinity_pods.pop(node_name, None)
        if held == 0 or (held == 1 and sign > 0):
            self._affinity_list = None

    def add_node(self, node: Node) -> None:
        name = node.metadata.name
        if name in self.infos:
            raise ValueError(f"node {name} already exists")
        self.infos[name] = NodeInfo(node)
        self.tree.add(node)
        self._list = self._affinity_list = None
        for listener in self.listeners:
            listener.on_nodes_changed()

    def rebuild_node_tree(self, names: Sequence[str]) -> None:
        """Rebuild the node tree as a fresh state built from these nodes would: each of this
        state's nodes added once, in ``names``' order. A state built from another's
        ``list()`` lists its nodes in the same order (zones in order of first appearance,
        each zone's nodes in order, round robin)."""
        if sorted(names) != sorted(self.infos):
            raise ValueError("rebuild_node_tree needs every node of the state exactly once")
        self.tree = NodeTree()
        for name in names:
            self.tree.add(self.infos[name].node)
        self._list = self._affinity_list = None
        for listener in self.listeners:
            listener.on_nodes_changed()

    def update_node(self, node: Node) -> None:
        info = self.infos[node.metadata.name]
        old = info.node
        self.tree.update(old, node)
        info.set_node(node)
        self._list = self._affinity_list = None
        for listener in self.listeners:
            listener.on_node_updated(old, node)

    def remove_node(self, name: str) -> builtins.list[Pod]:
        """Remove a node; returns the pods that were bound to it."""
        info = self.infos.pop(name)
        self.tree.remove(info.node)
        self._list = self._affinity_list = None
        self._affinity_pods.pop(name, None)
        for listener in self.listeners:
            listener.on_nodes_changed()
        return info.pods

    def bind(self, pod: Pod, node_name: str) -> None:
        info = self.infos.get(node_name)
        if info is None:
            raise KeyError(node_name)
        info.add_pod(pod)
        self._count_affinity(pod, node_name, 1)
        for listener in self.listeners:
            listener.on_bind(pod, node_name)

    def unbind(self, pod: Pod, node_name: str | None = None) -> bool:
        """Remove the pod from its node (``node_name``, else the pod's nodeName); False when
        it is not there."""
        info = self.infos.get(node_name or pod.spec.node_name)
        if info is None:
            return False
        # The bound copy (with its nodeName) is what listeners counted.
        bound = next(
            (
                p
                for p in info.pods
                if p.metadata.name == pod.metadata.name
                and p.metadata.namespace == pod.metadata.namespace
            ),
            None,
        )
        if bound is None or not info.remove_pod(bound):
            return False
        self._count_affinity(bound, info.name, -1)
        for listener in self.listeners:
            listener.on_unbind(bound, info.name)
        return True

    def pods(self) -> builtins.list[Pod]:
        return [p for info in self.list() for p in info.pods]

    # ObjectLister pass-throughs, so the state can serve as a plugin handle's lister.
    def services(self, namespace: str) -> Sequence[Service]:
        return self.objects.services(namespace)

    def replication_controller(self, namespace: str, name: str) -> ReplicationController | None:
        return self.objects.replication_controller(namespace, name)

    def replica_set(self, namespace: str, name: str) -> ReplicaSet | None:
        return self.objects.replica_set(namespace, name)

    def stateful_set(self, namespace: str, name: str) -> StatefulSet | None:
        return self.objects.stateful_set(namespace, name)

    def namespace(self, name: str) -> Namespace | None:
        return self.objects.namespace(name)

    def namespaces(self) -> Sequence[Namespace]:
        return self.objects.namespaces()

    def storage(self) -> StorageState:
        return self.storage_state

    def _all_nodes(self) -> builtins.list[Node]:
        return [info.node for info in self.infos.values()]

    def _node_of(self, name: str) -> Node | None:
        info = self.infos.get(name)
        return info.node if info is not None else None
