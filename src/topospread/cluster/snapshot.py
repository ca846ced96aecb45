"""A point-in-time view of the cluster: NodeInfos in node order, and the owner objects.

This is the reference structure the plugins read, like upstream's cache snapshot. The fast,
incremental indexes live beside it and are checked against it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

import msgspec

from topospread.api.types import (
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.cluster.storage import StorageState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.types import NodeInfo

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


class UnknownNodeError(KeyError):
    """A bound pod names a node that is not in the cluster."""

    def __init__(self, pod: Pod) -> None:
        super().__init__(pod.spec.node_name)
        self.pod = pod


class Snapshot:
    """Nodes with their pods; ``list()`` keeps the order the nodes were given in."""

    __slots__ = ("_by_name", "_list")

    def __init__(self, nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> None:
        self._list: list[NodeInfo] = []
        self._by_name: dict[str, NodeInfo] = {}
        for node in nodes:
            info = NodeInfo(node)
            self._list.append(info)
            self._by_name[node.metadata.name] = info
        for pod in pods:
            info_for_pod = self._by_name.get(pod.spec.node_name)
            if info_for_pod is None:
                raise UnknownNodeError(pod)
            info_for_pod.add_pod(pod)

    # SharedLister / NodeInfoLister
    def node_infos(self) -> Snapshot:
        return self

    def list(self) -> Sequence[NodeInfo]:
        return self._list

    def get(self, name: str) -> NodeInfo | None:
        return self._by_name.get(name)


class ObjectStore:
    """Services, ReplicationControllers, ReplicaSets and StatefulSets, indexed for lookups."""

    __slots__ = ("_namespaces", "_rcs", "_rss", "_services", "_sss", "_storage")

    def __init__(
        self,
        services: Iterable[Service] = (),
        replication_controllers: Iterable[ReplicationController] = (),
        replica_sets: Iterable[ReplicaSet] = (),
        stateful_sets: Iterable[StatefulSet] = (),
        namespaces: Iterable[Namespace] = (),
        storage: StorageState | None = None,
    ) -> None:
        self._storage = storage if storage is not None else StorageState()
        self._services: dict[str, list[Service]] = defaultdict(list)
        for s in services:
            self._services[s.metadata.namespace].append(s)
        self._rcs = {(o.metadata.namespace, o.metadata.name): o for o in replication_controllers}
        self._rss = {(o.metadata.namespace, o.metadata.name): o for o in replica_sets}
        self._sss = {(o.metadata.namespace, o.metadata.name): o for o in stateful_sets}
        self._namespaces = {o.metadata.name: o for o in namespaces}

    def services(self, namespace: str) -> Sequence[Service]:
        return self._services.get(namespace, [])

    def replication_controller(self, namespace: str, name: str) -> ReplicationController | None:
        return self._rcs.get((namespace, name))

    def replica_set(self, namespace: str, name: str) -> ReplicaSet | None:
        return self._rss.get((namespace, name))

    def stateful_set(self, namespace: str, name: str) -> StatefulSet | None:
        return self._sss.get((namespace, name))

    def namespace(self, name: str) -> Namespace | None:
        """A namespace by name, with the label the API server puts on every namespace.

        A namespace that is not listed is taken to exist with only that label.
        Upstream: the NamespaceLifecycle admission sets kubernetes.io/metadata.name (v1.21+).
        """
        ns = self._namespaces.get(name)
        if ns is None:
            ns = Namespace(metadata=ObjectMeta(name=name))
        if ns.metadata.labels.get(NAMESPACE_NAME_LABEL) == name:
            return ns
        labels = {**ns.metadata.labels, NAMESPACE_NAME_LABEL: name}
        return msgspec.structs.replace(
            ns, metadata=msgspec.structs.replace(ns.metadata, labels=labels)
        )

    def storage(self) -> StorageState:
        return self._storage

    def namespaces(self) -> Sequence[Namespace]:
        return [ns for name in self._namespaces if (ns := self.namespace(name)) is not None]


class SnapshotHandle:
    """The framework handle over a snapshot and an object store (what plugins may read)."""

    __slots__ = ("_features", "_objects", "_snapshot")

    def __init__(
        self,
        snapshot: Snapshot,
        objects: ObjectStore | None = None,
        features: Features = DEFAULT_FEATURES,
    ) -> None:
        self._snapshot = snapshot
        self._objects = objects if objects is not None else ObjectStore()
        self._features = features

    def snapshot_shared_lister(self) -> Snapshot:
        return self._snapshot

    def object_lister(self) -> ObjectStore:
        return self._objects

    @property
    def features(self) -> Features:
        return self._features
