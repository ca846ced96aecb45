"""Every node's filter status for one pod at once, from the scheduler's fast path.

The PredicateChecker asks, pod after pod, whether a pod passes PreFilter and Filter on a
node, or on any node. Running the reference plugins node by node costs, for
PodTopologySpread and InterPodAffinity, a walk over every pod of every node per pod. The
scheduler's vectorised path (simulator/fastpath/) answers the same question for every node
at once, from the one cluster index and its node table, both kept incremental from the
snapshot's ClusterState notifications (fork and revert included). Pods or profiles the fast
path declines get None: the checker then runs the reference plugins, as the scheduler does.

NOTE: the autoscalers sit below the simulator (tests/test_layers.py), so this module registers
itself with the checker (``register_filter_vectors``) when imported: by the simulator's
autoscaler controller (``simulator/autoscaling.py``), which runs the models.
"""

from __future__ import annotations

import numpy as np

from topospread.api.types import Node, Pod
from topospread.autoscaler.clusterautoscaler.snapshot import register_filter_vectors
from topospread.cluster.state import ClusterState
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.runtime import Framework
from topospread.framework.status import Status
from topospread.simulator.fastpath.cycle import FastPath
from topospread.simulator.fastpath.kernels import Attempt
from topospread.simulator.fastpath.lazy import LazyVerdicts
from topospread.simulator.fastpath.vectors import I32


class FilterVectors:
    """Per pod, each node's status index (0: passes every filter) in ``state.list()`` order,
    remembered for the last pod until the state changes."""

    def __init__(self, state: ClusterState, fwk: Framework, features: Features) -> None:
        self.state = state
        path: FastPath | None = FastPath(state, fwk, features)
        assert path is not None
        if not path.supported:
            state.listeners.remove(path)
            path = None
        self.path = path
        self._version = 0  # bumped on every change of the state
        self._memo: tuple[Pod, int, I32 | None] | None = None
        if path is not None:
            state.listeners.append(self)

    # ClusterListener: any change makes the remembered vector stale.
    def on_nodes_changed(self) -> None:
        self._version += 1

    def on_node_updated(self, old: Node, new: Node) -> None:
        self._version += 1

    def on_bind(self, pod: Pod, node_name: str) -> None:
        self._version += 1

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        self._version += 1

    def codes(self, pod: Pod) -> I32 | None:
        """The pod's status index on every node, in node-tree order (the table's rows are
        ``state.list()``'s); None where the fast path declines the pod."""
        memo = self._memo
        if memo is not None and memo[0] is pod and memo[1] == self._version:
            return memo[2]
        codes = self._compute(pod)
        self._memo = (pod, self._version, codes)
        return codes

    def row(self, node_name: str) -> int:
        """The node's position in the vectors."""
        assert self.path is not None
        return self.path.table.index[node_name]

    def status(self, code: int) -> Status:
        assert self.path is not None
        return self.path.statuses.table[code]

    def _compute(self, pod: Pod) -> I32 | None:
        path = self.path
        if path is None or not path.accepts(pod):
            return None
        path.table.sums_memo.clear()
        sig = path.signature(pod)
        if sig is None:
            return None
        n = len(path.table.names)
        attempt = Attempt(pod, sig, CycleState())
        verdicts = path.profile.run_filters(attempt, n)
        if verdicts is None:
            return None
        if isinstance(verdicts, LazyVerdicts):
            verdicts = verdicts.resolve(np.arange(n))
            if attempt.declined:
                return None
        return verdicts


def filter_vectors(state: ClusterState, fwk: Framework, features: Features) -> FilterVectors:
    return FilterVectors(state, fwk, features)


register_filter_vectors(filter_vectors)
