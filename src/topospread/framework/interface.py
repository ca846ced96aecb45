"""Extension points and the handle plugins receive, as upstream's framework defines them.

Plugins are classes with a ``name``; each extension point is a Protocol, so a plugin implements
exactly the points it serves and the framework finds them with isinstance checks.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol, runtime_checkable

from topospread.api.types import (
    Namespace,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.status import Status
from topospread.framework.storage import StorageLister
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

    def namespace(self, name: str) -> Namespace | None: ...

    def namespaces(self) -> Sequence[Namespace]: ...

    def storage(self) -> StorageLister: ...


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


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod waiting in the scheduling queue (Upstream: framework.QueuedPodInfo).

    ``timestamp`` is when the pod was added (a logical clock in the simulator); ``attempts``
    counts scheduling attempts; ``unschedulable_plugins`` names the plugins that rejected it
    last time, which decides which cluster events move it back to the active queue.
    """

    pod: Pod
    timestamp: float = 0.0
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: frozenset[str] = frozenset()
    pending_plugins: frozenset[str] = frozenset()
    gated: bool = False
    # The simulator's caches of what it derives from ``pod`` alone, each with the pod it was
    # derived from (valid while ``info.pod is`` that pod): the failure memo's key, and the
    # queueing hints' group with the plugins it was taken for. A Pending pod is tried again
    # after every event that may help it; these are then taken once per pod, not per try.
    memo_key: tuple[Pod, bytes] | None = field(default=None, compare=False, repr=False)
    hint_group: tuple[Pod, frozenset[str], Hashable] | None = field(
        default=None, compare=False, repr=False
    )
    # The pods riding behind this one in the queue (simulator/pending_runs.py's Run).
    run: Any = field(default=None, compare=False, repr=False)


class QueueingHint(IntEnum):
    """Whether a cluster event may make a pod that a plugin rejected schedulable.

    Upstream: fwk.QueueingHint (QueueSkip 0, Queue 1)
    """

    QueueSkip = 0
    Queue = 1


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


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


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """Upstream: framework.PostFilterResult (a nominated node, or none)."""

    nominated_node_name: str = ""


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...
