"""Storage helpers the volume plugins share: claim and volume classes, a PV's node affinity,
a StorageClass's allowed topologies, generic ephemeral volumes' claims.

Upstream: component-helpers/storage/volume (pv_helpers.go, helpers.go) and
component-helpers/storage/ephemeral (v1.35).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from topospread.api.resource import Quantity, parse_quantity
from topospread.api.storage import (
    ANN_STORAGE_CLASS,
    RESOURCE_STORAGE,
    VOLUME_MODE_FILESYSTEM,
    PersistentVolume,
    PersistentVolumeClaim,
    TopologySelectorTerm,
)
from topospread.api.types import Node, ObjectMeta, Pod, Volume
from topospread.nodeaffinity import LazyErrorNodeSelector

_ZERO: Final = Quantity()


def pvc_class(pvc: PersistentVolumeClaim) -> str:
    """The beta annotation first, then spec.storageClassName ("" when neither is set).

    Upstream: GetPersistentVolumeClaimClass (component-helpers/storage/volume, v1.35)
    """
    ann = pvc.metadata.annotations.get(ANN_STORAGE_CLASS)
    if ann is not None:
        return ann
    return pvc.spec.storage_class_name or ""


def pv_class(pv: PersistentVolume) -> str:
    """Upstream: GetPersistentVolumeClass (component-helpers/storage/volume, v1.35)."""
    ann = pv.metadata.annotations.get(ANN_STORAGE_CLASS)
    return ann if ann is not None else pv.spec.storage_class_name


def storage_request(pvc: PersistentVolumeClaim) -> Quantity:
    """The claim's requests[storage] (zero when absent)."""
    value = pvc.spec.resources.requests.get(RESOURCE_STORAGE)
    return parse_quantity(value) if value is not None else _ZERO


def pv_capacity(pv: PersistentVolume) -> Quantity:
    value = pv.spec.capacity.get(RESOURCE_STORAGE)
    return parse_quantity(value) if value is not None else _ZERO


def check_node_affinity(pv: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """Whether a node with these labels satisfies the PV's required node affinity (no affinity:
    every node does). The node is matched by its labels only, as upstream builds it.

    Upstream: CheckNodeAffinity (component-helpers/storage/volume/helpers.go, v1.35)
    """
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return True
    return LazyErrorNodeSelector(affinity.required).match(
        Node(metadata=ObjectMeta(labels=dict(node_labels)))
    )


def match_topology_selector_terms(
    terms: Sequence[TopologySelectorTerm], labels: Mapping[str, str]
) -> bool:
    """No terms match every node; otherwise some term whose every expression the labels meet.

    Upstream: MatchTopologySelectorTerms (pkg/apis/core/v1/helper/helpers.go, v1.35)
    """
    if not terms:
        return True
    for term in terms:
        if not term.match_label_expressions:
            continue
        if all(e.key in labels and labels[e.key] in e.values for e in term.match_label_expressions):
            return True
    return False


def volume_mode_mismatches(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """Upstream: CheckVolumeModeMismatches (component-helpers/storage/volume, v1.35)."""
    claim_mode = pvc.spec.volume_mode or VOLUME_MODE_FILESYSTEM
    volume_mode = pv.spec.volume_mode or VOLUME_MODE_FILESYSTEM
    return claim_mode != volume_mode


def check_access_modes(pvc: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """Every access mode the claim asks for is one the volume offers.

    Upstream: CheckAccessModes (component-helpers/storage/volume, v1.35)
    """
    offered = set(pv.spec.access_modes)
    return all(m in offered for m in pvc.spec.access_modes)


def is_volume_bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """Upstream: IsVolumeBoundToClaim (component-helpers/storage/volume, v1.35)."""
    ref = pv.spec.claim_ref
    if ref is None:
        return False
    if ref.name != pvc.metadata.name or ref.namespace != pvc.metadata.namespace:
        return False
    return not ref.uid or ref.uid == pvc.metadata.uid


def ephemeral_claim_name(pod: Pod, volume: Volume) -> str:
    """Upstream: VolumeClaimName (component-helpers/storage/ephemeral, v1.35)."""
    return f"{pod.metadata.name}-{volume.name}"


def ephemeral_volume_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """The error when the claim of a generic ephemeral volume is not controlled by the pod.

    Only the claim's controller counts, the first owner reference marked as one (as
    metav1.IsControlledBy reads it), and only in the pod's namespace.

    Upstream: VolumeIsForPod (component-helpers/storage/ephemeral, v1.35)
    """
    controller = next((ref for ref in pvc.metadata.owner_references if ref.controller), None)
    if (
        pvc.metadata.namespace == pod.metadata.namespace
        and controller is not None
        and controller.uid == pod.metadata.uid
    ):
        return None
    return (
        f"PVC {pvc.metadata.namespace}/{pvc.metadata.name} was not created for pod "
        f"{pod.metadata.namespace}/{pod.metadata.name} (pod is not owner)"
    )


def claim_name_of(pod: Pod, volume: Volume) -> tuple[str, bool] | None:
    """The claim a volume uses and whether it is a generic ephemeral one (None: no claim)."""
    if volume.persistent_volume_claim is not None:
        return volume.persistent_volume_claim.claim_name, False
    if volume.ephemeral is not None:
        return ephemeral_claim_name(pod, volume), True
    return None


def has_claims(pod: Pod) -> bool:
    """Whether the pod has a persistent volume claim or a generic ephemeral volume."""
    return any(claim_name_of(pod, v) is not None for v in pod.spec.volumes)
