"""Where a pod's bound volumes let it run: the nodes every bound PersistentVolume's node
affinity admits. A pod whose volumes only admit nodes of its own topology domain is pinned
there: evicting it to rebalance a spread is useless, its replacement (same claim, same volume)
lands back in the same domain or stays Pending."""

from __future__ import annotations

from collections.abc import Iterable

from topospread.api.storage import PersistentVolume
from topospread.api.types import Node, Pod
from topospread.framework.storage import StorageLister
from topospread.plugins.helper.storage import check_node_affinity, claim_name_of


def bound_volumes(pod: Pod, storage: StorageLister) -> list[PersistentVolume]:
    """The PVs the pod's bound claims (persistent and generic ephemeral) name, in volume order."""
    out = []
    for volume in pod.spec.volumes:
        claim = claim_name_of(pod, volume)
        if claim is None:
            continue
        pvc = storage.persistent_volume_claim(pod.metadata.namespace, claim[0])
        if pvc is None or not pvc.spec.volume_name:
            continue
        pv = storage.persistent_volume(pvc.spec.volume_name)
        if pv is not None:
            out.append(pv)
    return out


def pinned_value(pod: Pod, storage: StorageLister, nodes: Iterable[Node], key: str) -> str | None:
    """The value of ``key`` the pod's volumes pin it to: the value of its node, when every other
    node they admit has that value too or lacks the key (None: it could move to another
    domain, or has no volume with node affinity, or its node lacks the key)."""
    pvs = [p for p in bound_volumes(pod, storage) if p.spec.node_affinity is not None]
    if not pvs:
        return None
    here = next((n for n in nodes if n.metadata.name == pod.spec.node_name), None)
    if here is None or key not in here.metadata.labels:
        return None
    value = here.metadata.labels[key]
    for node in nodes:
        other = node.metadata.labels.get(key)
        if other is None or other == value:
            continue
        if all(check_node_affinity(pv, node.metadata.labels) for pv in pvs):
            return None
    return value


def pin_text(pod: Pod, storage: StorageLister, key: str, value: str) -> str:
    names = ", ".join(p.metadata.name for p in bound_volumes(pod, storage))
    return f"its volume ({names}) pins it to {key}={value}: evicting it cannot move it"
