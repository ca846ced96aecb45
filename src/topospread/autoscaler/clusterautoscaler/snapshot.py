"""The autoscaler's own copy of the cluster, forkable, and the scheduler that checks pods on it.

cluster-autoscaler never writes to the scheduler's cache: it copies the cluster into a
ClusterSnapshot, forks it before every what-if (a template node added, a node's pods moved),
and reverts afterwards. Its PredicateChecker runs the real scheduler framework's PreFilter and
Filter plugins on that snapshot. Here the snapshot is a ``ClusterState`` (the project's one
cluster structure) with an undo log, and the checker is the project's one ``Framework``, so
every filter, PodTopologySpread included, is the scheduler's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from topospread.api.types import Node, Pod
from topospread.cluster.state import ClusterState
from topospread.framework.config import Profile
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.handle import FrameworkHandle
from topospread.framework.runtime import Framework, Registry
from topospread.framework.status import Status
from topospread.framework.types import NodeInfo


class ClusterSnapshot:
    """A private copy of the cluster with nested fork/revert.

    Upstream: ClusterSnapshot's Fork/Revert/Commit (simulator/clustersnapshot, current release)
    """

    def __init__(self, source: ClusterState) -> None:
        # The volumes come along (a copy: VolumeBinding's filter reads the claims and PVs).
        self.state = ClusterState(
            (info.node for info in source.list()),
            source.pods(),
            source.objects,
            source.priority_classes.values(),
            source.storage_state.copy(),
        )
        # Each entry undoes one change; None marks where a fork began.
        self._undo: list[Callable[[], None] | None] = []

    def sync(self, source: ClusterState) -> None:
        """Make this snapshot a copy of ``source`` again, as a new ``ClusterSnapshot(source)``
        would be (the same nodes in the same order, each node's pods in order, the same
        objects, priority classes and a fresh copy of the volumes), by changing only what
        differs. Its listeners (the cluster index, the fast path's node table) follow those
        changes incrementally instead of recounting every pod, so one snapshot serves every
        loop: each loop's what-ifs are reverted before the next sync. Needs no open fork.

        NOTE: pods and nodes are compared by identity (API objects are frozen: an object
        that is the same is unchanged; a changed one is a new object and is replaced)."""
        if self._undo:
            raise RuntimeError("ClusterSnapshot.sync with a fork open")
        state = self.state
        infos = source.list()
        wanted = {info.name for info in infos}
        for name in [n for n in state.infos if n not in wanted]:
            state.remove_node(name)
        for info in infos:
            mine = state.infos.get(info.name)
            if mine is None:
                state.add_node(info.node)
                mine = state.infos[info.name]
            elif mine.node is not info.node:
                state.update_node(info.node)
            _sync_pods(state, mine, info)
        names = [info.name for info in infos]
        if [info.name for info in state.list()] != names:
            state.rebuild_node_tree(names)
        state.objects = source.objects
        state.priority_classes = dict(source.priority_classes)
        storage = source.storage_state.copy()
        storage.node_of = state.storage_state.node_of
        storage.list_nodes = state.storage_state.list_nodes
        state.storage_state = storage
        storage.sync_claims()

    def fork(self) -> None:
        self._undo.append(None)

    def revert(self) -> None:
        while self._undo:
            undo = self._undo.pop()
            if undo is None:
                return
            undo()

    def commit(self) -> None:
        """Keep the changes of the innermost fork (they join the enclosing one)."""
        for i in range(len(self._undo) - 1, -1, -1):
            if self._undo[i] is None:
                del self._undo[i]
                return

    @contextmanager
    def forked(self) -> Iterator[ClusterSnapshot]:
        self.fork()
        try:
            yield self
        finally:
            self.revert()

    def _record(self, undo: Callable[[], None]) -> None:
        if self._undo:
            self._undo.append(undo)

    def add_node(self, node: Node, pods: list[Pod] | None = None) -> None:
        self.state.add_node(node)
        name = node.metadata.name

        def undo() -> None:
            self.state.remove_node(name)

        self._record(undo)
        for pod in pods or ():
            self.add_pod(pod, name)

    def remove_node(self, name: str) -> list[Pod]:
        info = self.state.infos[name]
        node, pods = info.node, list(info.pods)
        self.state.remove_node(name)

        def undo() -> None:
            self.state.add_node(node)
            for p in pods:
                self.state.bind(p, node.metadata.name)

        self._record(undo)
        return pods

    def add_pod(self, pod: Pod, node_name: str) -> None:
        self.state.bind(pod, node_name)

        def undo() -> None:
            # Through the state, so that its listeners (the index, the fast path) follow.
            self.state.unbind(pod, node_name)

        self._record(undo)

    def remove_pod(self, pod: Pod) -> None:
        node_name = pod.spec.node_name
        if self.state.unbind(pod):
            self._record(lambda: self.state.bind(pod, node_name))

    def node_infos(self) -> list[NodeInfo]:
        return list(self.state.list())

    def get(self, name: str) -> NodeInfo | None:
        return self.state.get(name)


def _sync_pods(state: ClusterState, mine: NodeInfo, theirs: NodeInfo) -> None:
    """The node's pods as ``theirs`` lists them: the pods past the first difference are
    unbound and the source's bound in order."""
    have, want = mine.pods, theirs.pods
    same = 0
    for a, b in zip(have, want, strict=False):
        if a is not b:
            break
        same += 1
    if same == len(have) == len(want):
        return
    for pod in have[same:][::-1]:
        state.unbind(pod, mine.name)
    for pod in want[same:]:
        state.bind(pod, mine.name)


I32 = npt.NDArray[np.int32]


class FilterStatuses(Protocol):
    """Every node's filter status for a pod at once (the scheduler's fast path:
    simulator/fastpath/filter_vectors.py); None for the pods it declines."""

    def codes(self, pod: Pod) -> I32 | None: ...

    def row(self, node_name: str) -> int: ...

    def status(self, code: int) -> Status: ...


FilterStatusesFactory = Callable[[ClusterState, Framework, Features], FilterStatuses]
_FACTORY: list[FilterStatusesFactory] = []


def register_filter_vectors(factory: FilterStatusesFactory) -> None:
    """The simulator's fast path, above this layer, registers itself here on import."""
    _FACTORY[:] = [factory]


@dataclass(frozen=True, slots=True)
class PredicateError:
    """Why a pod does not fit a node: the failing plugin and its reasons."""

    node_name: str
    status: Status

    @property
    def message(self) -> str:
        return self.status.message


class PredicateChecker:
    """PreFilter and Filter of one scheduler profile, run on the snapshot.

    Upstream: SchedulerBasedPredicateChecker (simulator/predicatechecker, current release)
    """

    def __init__(
        self,
        snapshot: ClusterSnapshot,
        profile: Profile,
        registry: Registry,
        features: Features = DEFAULT_FEATURES,
        *,
        fast: bool = True,
    ) -> None:
        self.snapshot = snapshot
        handle = FrameworkHandle(snapshot.state, snapshot.state, features)
        self.framework = Framework(profile, registry, handle, features)
        self._last_index = 0
        # The scheduler's vectorised filters over the snapshot's state (``fast=False``: the
        # reference plugins node by node throughout; tests compare the two).
        self.vectors: FilterStatuses | None = None
        if fast and _FACTORY:
            self.vectors = _FACTORY[0](snapshot.state, self.framework, features)

    def reset_search(self) -> None:
        """Start the round-robin search at the first node again (a new loop's checker)."""
        self._last_index = 0

    def _pre_filter(self, pod: Pod) -> tuple[CycleState, set[str] | None, Status]:
        state = CycleState()
        infos = self.snapshot.state.list()
        result, status, _ = self.framework.run_pre_filter_plugins(state, pod, infos)
        names = None if result is None or result.node_names is None else set(result.node_names)
        return state, names, status

    def check_predicates(self, pod: Pod, node_name: str) -> PredicateError | None:
        """None when the pod passes every filter on the node. PreFilter's node set is not
        applied here, as upstream's CheckPredicates does not apply it.

        Upstream: SchedulerBasedPredicateChecker.CheckPredicates
        """
        info = self.snapshot.state.get(node_name)
        if info is None:
            raise KeyError(node_name)
        vectors = self.vectors
        codes = vectors.codes(pod) if vectors is not None else None
        if vectors is not None and codes is not None:
            code = int(codes[vectors.row(node_name)])
            return None if code == 0 else PredicateError(node_name, vectors.status(code))
        state, _, status = self._pre_filter(pod)
        if not status.is_success and not status.is_skip:
            return PredicateError(node_name, status)
        status = self.framework.run_filter_plugins(state, pod, info)
        return None if status.is_success else PredicateError(node_name, status)

    def fits_any_node_matching(self, pod: Pod, matches: Callable[[NodeInfo], bool]) -> str | None:
        """The first matching node the pod fits, searching round robin from where the last
        search stopped; None when no node fits.

        Upstream: SchedulerBasedPredicateChecker.FitsAnyNodeMatching
        """
        infos = self.snapshot.state.list()
        if not infos:
            return None
        codes = self.vectors.codes(pod) if self.vectors is not None else None
        if codes is not None:
            return self._first_fit(infos, codes, matches)
        state, names, status = self._pre_filter(pod)
        if not status.is_success and not status.is_skip:
            return None
        n = len(infos)
        for i in range(n):
            info = infos[(self._last_index + i) % n]
            if not matches(info):
                continue
            if names is not None and info.name not in names:
                continue
            if info.node.spec.unschedulable:
                continue
            if self.framework.run_filter_plugins(state, pod, info).is_success:
                self._last_index = (self._last_index + i + 1) % n
                return info.name
        return None

    def _first_fit(
        self, infos: Sequence[NodeInfo], codes: I32, matches: Callable[[NodeInfo], bool]
    ) -> str | None:
        """The reference search over the vectors: the feasible nodes (the table's rows are
        ``infos``' order) visited round robin from the last index, the first one matching and
        not cordoned taken."""
        n = len(infos)
        start = self._last_index % n
        feasible = np.flatnonzero(codes == 0)
        split = int(np.searchsorted(feasible, start))
        for i in (*feasible[split:].tolist(), *feasible[:split].tolist()):
            info = infos[int(i)]
            if info.node.spec.unschedulable or not matches(info):
                continue
            self._last_index = (i + 1) % n
            name: str = info.name
            return name
        return None

    def fits_any_node(self, pod: Pod) -> str | None:
        return self.fits_any_node_matching(pod, lambda _: True)
