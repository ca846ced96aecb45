"""The pod's bound claims: the nodes their local PVs pin the pod to (PreFilter), and whether
their PVs' node affinity admits a node (Filter), in-tree PVs translated to CSI where the node
migrated their plugin.

Upstream: GetEligibleNodes and checkBoundClaims (binder.go), GetLocalPersistentVolumeNodeNames
(pkg/scheduler/util/utils.go), v1.35
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.storage import PersistentVolume, PersistentVolumeClaim
from topospread.api.types import LABEL_HOSTNAME, Node
from topospread.framework.storage import StorageLister
from topospread.plugins.helper.storage import check_node_affinity
from topospread.plugins.volumebinding.csi_migration import try_translate_pv_to_csi


def get_eligible_nodes(
    storage: StorageLister, bound_claims: Sequence[PersistentVolumeClaim]
) -> frozenset[str] | None:
    """The nodes local PVs of bound claims pin the pod to (None: no restriction).

    Upstream: GetEligibleNodes (binder.go)
    """
    eligible: set[str] | None = None
    for pvc in bound_claims:
        pv = storage.assumed_pv(pvc.spec.volume_name)
        if pv is None:
            continue
        names = local_pv_node_names(pv)
        if names:
            eligible = set(names) if eligible is None else eligible & names
    return frozenset(eligible) if eligible is not None else None


def local_pv_node_names(pv: PersistentVolume) -> set[str] | None:
    """The node names a PV's required affinity pins it to with ``kubernetes.io/hostname In``:
    per term the intersection of its hostname expressions, the union over terms.

    Upstream: GetLocalPersistentVolumeNodeNames (pkg/scheduler/util/utils.go, v1.35)
    """
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return None
    result: set[str] = set()
    for term in affinity.required.node_selector_terms:
        nodes: set[str] | None = None
        for expr in term.match_expressions:
            if expr.key == LABEL_HOSTNAME and expr.operator == "In":
                nodes = set(expr.values) if nodes is None else nodes & set(expr.values)
        result |= nodes or set()
    return result


def check_bound_claims(
    storage: StorageLister, claims: Sequence[PersistentVolumeClaim], node: Node
) -> tuple[bool, bool]:
    """(node affinity satisfied, PVs found): each claim's PV as the node sees it, translated
    to CSI where the node's CSINode migrated its in-tree plugin (``csi_migration``); raises
    ``BinderError`` when that translation fails.

    Upstream: checkBoundClaims (binder.go)
    """
    csi_node = storage.csi_node(node.metadata.name)
    for pvc in claims:
        pv = storage.assumed_pv(pvc.spec.volume_name)
        if pv is None:
            return True, False
        pv = try_translate_pv_to_csi(pv, csi_node)
        if not check_node_affinity(pv, node.metadata.labels):
            return False, True
    return True, True
