"""The pod's bound claims: whether their PVs' node affinity admits a node (Filter), in-tree
PVs translated to CSI where the node migrated their plugin.

Upstream: checkBoundClaims (binder.go, v1.35). Since v1.32 (kubernetes#127584) upstream no
longer narrows PreFilter to the nodes named by a local PV's ``kubernetes.io/hostname``
affinity (GetEligibleNodes): a hostname label need not equal the node's name, so every node
is filtered and gets this module's reasons.
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.storage import PersistentVolumeClaim
from topospread.api.types import Node
from topospread.framework.storage import StorageLister
from topospread.plugins.helper.storage import check_node_affinity
from topospread.plugins.volumebinding.csi_migration import try_translate_pv_to_csi


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
