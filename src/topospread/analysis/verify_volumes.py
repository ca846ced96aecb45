"""``verify``'s claims: the storage as the scheduling cycle leaves it once a set of queued pods
is placed, so that a claim bound (or a volume provisioned) for one pod is no longer free for the
next, and a pod that lands where its WaitForFirstConsumer claim gets its volume is pinned there.

Each placed pod with claims goes through VolumeBinding's binder as Filter, Reserve and PreBind
run it on its node: its unbound delayed claims get the smallest matching static PV the node
admits, or a volume provisioned in the node's topology. A state records where pods are, not the
order they came in, so the pods are bound in key order; where static PVs of different sizes
compete, another order could have given a claim another PV (a volume's zone, which is what pins,
is fixed by the node either way).
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.types import Node, Pod
from topospread.cluster.state import ClusterState
from topospread.plugins.helper.storage import has_claims
from topospread.plugins.volumebinding.binder import BinderError, VolumeBinder


class ClaimBindings:
    """The cluster's storage kept as the placed pods' volume binding would leave it."""

    __slots__ = ("_base", "_cluster", "_last")

    def __init__(self, cluster: ClusterState) -> None:
        self._cluster = cluster
        self._base = cluster.storage_state.copy()
        self._last: tuple[tuple[str, str], ...] = ()

    def place(self, placed: Sequence[tuple[Pod, Node]]) -> None:
        """Make the cluster's storage the base storage with ``placed`` pods' claims bound."""
        with_claims = sorted(
            ((p, n) for p, n in placed if has_claims(p)),
            key=lambda pn: (pn[0].metadata.namespace, pn[0].metadata.name),
        )
        key = tuple(
            (f"{p.metadata.namespace}/{p.metadata.name}", n.metadata.name) for p, n in with_claims
        )
        if key == self._last:
            return
        storage = self._base.copy()
        storage.node_of = self._cluster.storage_state.node_of
        storage.list_nodes = self._cluster.storage_state.list_nodes
        binder = VolumeBinder(lambda: storage)
        for pod, node in with_claims:
            try:
                claims = binder.get_pod_volume_claims(pod)
            except BinderError:
                continue  # its PreFilter fails: it was never placed
            volumes, reasons = binder.find_pod_volumes(pod, claims, node)
            if reasons:
                continue
            binder.assume_pod_volumes(pod, node.metadata.name, volumes)
            binder.bind_pod_volumes(pod, volumes)
        self._cluster.storage_state = storage
        self._last = key
