"""Reserve, Unreserve and PreBind's side of the binder: assume the chosen PVs bound and the
claims to provision annotated with the node in the assume cache, revert that, and write it to
the API.

Upstream: AssumePodVolumes, RevertAssumedPodVolumes, BindPodVolumes / bindAPIUpdate,
arePodVolumesBound (binder.go) and GetBindVolumeToClaim
(component-helpers/storage/volume/pv_helpers.go), v1.35
"""

from __future__ import annotations

from typing import Final

import msgspec

from topospread.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    VOLUME_BOUND,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
)
from topospread.api.types import Pod
from topospread.framework.storage import StorageLister
from topospread.plugins.helper.storage import claim_name_of, is_volume_bound_to_claim
from topospread.plugins.volumebinding.pod_volumes import (
    BindingInfo,
    PodVolumes,
    is_pvc_fully_bound,
)

ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"


def assume_pod_volumes(
    storage: StorageLister, pod: Pod, node_name: str, volumes: PodVolumes
) -> bool:
    """Assume each static binding's PV bound to its claim and each claim to provision
    annotated with the node; True when all the pod's claims were bound already.

    Upstream: AssumePodVolumes (binder.go)
    """
    if are_pod_volumes_bound(storage, pod):
        return True
    bindings: list[BindingInfo] = []
    for b in volumes.static_bindings:
        pv = bind_volume_to_claim(b.pv, b.pvc)
        if pv is not b.pv:
            storage.assume_pv(pv)
        bindings.append(BindingInfo(b.pvc, pv))
    provisions: list[PersistentVolumeClaim] = []
    for pvc in volumes.dynamic_provisions:
        annotations = {**pvc.metadata.annotations, ANN_SELECTED_NODE: node_name}
        assumed = msgspec.structs.replace(
            pvc, metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations)
        )
        storage.assume_pvc(assumed)
        provisions.append(assumed)
    volumes.static_bindings = bindings
    volumes.dynamic_provisions = provisions
    return False


def revert_assumed_pod_volumes(storage: StorageLister, volumes: PodVolumes) -> None:
    """Upstream: RevertAssumedPodVolumes (binder.go)."""
    for b in volumes.static_bindings:
        storage.restore_pv(b.pv.metadata.name)
    for pvc in volumes.dynamic_provisions:
        storage.restore_pvc(pvc.key)


def bind_pod_volumes(storage: StorageLister, volumes: PodVolumes) -> None:
    """Write the assumed PVs and claims to the API; the PV controller then binds each
    static binding's claim (done here at once, which upstream's PreBind waits for).

    Upstream: BindPodVolumes / bindAPIUpdate (binder.go)
    """
    for b in volumes.static_bindings:
        status = msgspec.structs.replace(b.pv.status, phase=VOLUME_BOUND)
        storage.update_pv(msgspec.structs.replace(b.pv, status=status))
        current = storage.persistent_volume_claim(b.pvc.metadata.namespace, b.pvc.metadata.name)
        pvc = current if current is not None else b.pvc
        annotations = {**pvc.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
        storage.update_pvc(
            msgspec.structs.replace(
                pvc,
                metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations),
                spec=msgspec.structs.replace(pvc.spec, volume_name=b.pv.metadata.name),
                status=msgspec.structs.replace(pvc.status, phase=CLAIM_BOUND),
            )
        )
    for pvc in volumes.dynamic_provisions:
        storage.update_pvc(pvc)


def are_pod_volumes_bound(storage: StorageLister, pod: Pod) -> bool:
    """Upstream: arePodVolumesBound (binder.go)."""
    for volume in pod.spec.volumes:
        claim = claim_name_of(pod, volume)
        if claim is None:
            continue
        pvc = storage.assumed_pvc(f"{pod.metadata.namespace}/{claim[0]}")
        if pvc is None or not is_pvc_fully_bound(pvc):
            return False
    return True


def bind_volume_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> PersistentVolume:
    """The PV with its claimRef naming the claim, marked bound by the controller when it was
    not bound to it before (the same object when nothing changes).

    Upstream: GetBindVolumeToClaim (component-helpers/storage/volume/pv_helpers.go, v1.35)
    """
    ref = pv.spec.claim_ref
    meta = pvc.metadata
    bound_before = is_volume_bound_to_claim(pv, pvc)
    if ref is None or (ref.name, ref.namespace, ref.uid) != (meta.name, meta.namespace, meta.uid):
        ref = ObjectReference(
            kind="PersistentVolumeClaim",
            namespace=meta.namespace,
            name=meta.name,
            uid=meta.uid,
            api_version="v1",
        )
        pv = msgspec.structs.replace(pv, spec=msgspec.structs.replace(pv.spec, claim_ref=ref))
    if not bound_before and ANN_BOUND_BY_CONTROLLER not in pv.metadata.annotations:
        annotations = {**pv.metadata.annotations, ANN_BOUND_BY_CONTROLLER: "yes"}
        pv = msgspec.structs.replace(
            pv, metadata=msgspec.structs.replace(pv.metadata, annotations=annotations)
        )
    return pv
