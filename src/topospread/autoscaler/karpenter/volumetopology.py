"""Where a pod's volumes let it go, as Karpenter's provisioner reads them: per volume, the
alternatives its claim allows — a bound claim's PersistentVolume's node affinity terms (a local
or hostPath volume's without their hostname: the node is a new one), an unbound claim's
StorageClass's allowedTopologies terms — merged over the pod's volumes into alternatives the
nodeclaim's (or existing node's) requirements must meet one of. They narrow the node, not the
pod: the topology spread's counting still reads the pod's own affinity.

A pod whose claim (or its bound volume) does not exist is left out of the batch, as upstream
leaves it out with an error in its log.

Upstream: VolumeTopology.GetRequirements, getRequirements, getPersistentVolumeRequirements,
getStorageClassRequirements and the merges of alternatives (provisioning/scheduling/
volumetopology.go); Provisioner.getVolumeTopologyRequirements (provisioner.go)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from topospread.api.types import LABEL_HOSTNAME, Pod
from topospread.autoscaler.karpenter.requirements import (
    Requirement,
    Requirements,
    from_node_selector_requirements,
)

if TYPE_CHECKING:
    from topospread.api.storage import PersistentVolume
    from topospread.api.volumes import Volume
    from topospread.cluster.storage import StorageState

# A pod's volume alternatives: None when its volumes do not constrain the node.
Alternatives = list["Requirements | None"]
_UNCONSTRAINED: Final[tuple[None]] = (None,)


class MissingVolume(Exception):
    """A claim, or the volume it is bound to, that does not exist."""


def volume_requirements(pod: Pod, storage: StorageState) -> Alternatives | None:
    """The alternatives the pod's volumes allow, None when they do not constrain it.
    Raises MissingVolume. Upstream: VolumeTopology.GetRequirements"""
    alternatives: Alternatives = list(_UNCONSTRAINED)
    for volume in pod.spec.volumes:
        mine = _volume_alternatives(pod, volume, storage)
        if mine:
            alternatives = _merge(alternatives, mine)
    if len(alternatives) == 1 and alternatives[0] is None:
        return None
    return alternatives


def _claim_name(pod: Pod, volume: Volume) -> str | None:
    """Upstream: volumeutil.GetPersistentVolumeClaim's name (a generic ephemeral volume's
    claim is named after the pod and the volume)"""
    if volume.persistent_volume_claim is not None:
        return volume.persistent_volume_claim.claim_name
    if volume.ephemeral is not None:
        return f"{pod.metadata.name}-{volume.name}"
    return None


def _volume_alternatives(
    pod: Pod, volume: Volume, storage: StorageState
) -> list[Requirements] | None:
    name = _claim_name(pod, volume)
    if name is None:
        return None
    key = f"{pod.metadata.namespace or 'default'}/{name}"
    pvc = storage.pvcs.get(key)
    if pvc is None:
        raise MissingVolume(
            f'getting persistent volume claim, persistentvolumeclaims "{name}" not found'
        )
    if pvc.spec.volume_name:
        pv = storage.pvs.get(pvc.spec.volume_name)
        if pv is None:
            raise MissingVolume(
                f'getting persistent volume, persistentvolumes "{pvc.spec.volume_name}" not found'
            )
        return _pv_alternatives(pv)
    class_name = pvc.spec.storage_class_name or ""
    if not class_name:
        return None
    cls = storage.classes.get(class_name)
    if cls is None:
        raise MissingVolume(f'getting storage class, storageclasses "{class_name}" not found')
    out = []
    for term in cls.allowed_topologies:
        reqs = [Requirement.new(e.key, "In", e.values) for e in term.match_label_expressions]
        if reqs:
            out.append(Requirements(reqs))
    return out


def _pv_alternatives(pv: PersistentVolume) -> list[Requirements] | None:
    """Upstream: getPersistentVolumeRequirements"""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return None
    node_bound = pv.spec.local is not None or pv.spec.host_path is not None
    out = []
    for term in affinity.required.node_selector_terms:
        exprs = list(term.match_expressions)
        if node_bound:
            kept = [e for e in exprs if e.key != LABEL_HOSTNAME]
            if exprs and not kept:
                out.append(Requirements())
                continue
            exprs = kept
        if exprs:
            out.append(Requirements(from_node_selector_requirements(exprs)))
    return out


def _merge(alternatives: Alternatives, mine: Sequence[Requirements]) -> Alternatives:
    """Every existing alternative with every one of this volume's, the compatible pairs only
    when there are any. Upstream: mergeVolumeRequirementAlternatives"""
    compatible: Alternatives = [
        _combined(a, b) for a in alternatives for b in mine if a is None or a.intersects(b)
    ]
    return compatible or [_combined(a, b) for a in alternatives for b in mine]


def _combined(a: Requirements | None, b: Requirements) -> Requirements:
    """Upstream: mergeVolumeRequirements"""
    merged = Requirements() if a is None else a.copy()
    merged.add(*b.values())
    return merged


__all__ = ["Alternatives", "MissingVolume", "volume_requirements"]
