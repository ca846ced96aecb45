"""Extension points and the handle plugins receive, as upstream's framework defines them.

Plugins are classes with a ``name``; each extension point is a Protocol, so a plugin implements
exactly the points it serves and the framework finds them with isinstance checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from topospread.api.types import Pod, ReplicaSet, ReplicationController, Service, StatefulSet
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.status import Status
from topospread.framework.types import NodeInfo, NodeScore


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin already knows to be the only candidates (None: all nodes)."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None


class NodeInfoLister(Protocol):
    def list(self) -> Sequence[NodeInfo]: ...

    def get(self, name: str) -> NodeInfo | None: ...


class SharedLister(Protocol):
    """The cluster snapshot taken at the start of a cycle (Upstream: framework.SharedLister)."""

    def node_infos(self) -> NodeInfoLister: ...


class ObjectLister(Protocol):
    """Owner objects a plugin may look up (Upstream: listers from the SharedInformerFactory)."""

    def services(self, namespace: str) -> Sequence[Service]: ...

    def replication_controller(self, namespace: str, name: str) -> ReplicationController | None: ...

    def replica_set(self, namespace: str, name: str) -> ReplicaSet | None: ...

    def stateful_set(self, namespace: str, name: str) -> StatefulSet | None: ...


class Handle(Protocol):
    """What a plugin may reach outside its own state (Upstream: framework.Handle)."""

    def snapshot_shared_lister(self) -> SharedLister: ...

    def object_lister(self) -> ObjectLister: ...

    @property
    def features(self) -> Features: ...


@runtime_checkable
class Plugin(Protocol):
    @property
    def name(self) -> str: ...


class PreFilterExtensions(Protocol):
    """Incremental updates of PreFilter state used by preemption's what-if evaluation."""

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status: ...


class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...
