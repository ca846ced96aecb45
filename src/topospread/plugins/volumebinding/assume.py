"""Reserve, Unreserve and PreBind's side of the binder: assume the chosen PVs bound and the
claims to provision annotated with the node in the assume cache, revert that, write it to the
API and check what the API then holds still suits the node.

Upstream: AssumePodVolumes, RevertAssumedPodVolumes, BindPodVolumes / bindAPIUpdate,
checkBindings, arePodVolumesBound (binder.go) and GetBindVolumeToClaim
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
from topospread.api.types import Node, Pod
from topospread.framework.storage import StorageLister
from topospread.plugins.helper.storage import (
    check_node_affinity,
    claim_name_of,
    is_volume_bound_to_claim,
)
from topospread.plugins.volumebinding.csi_migration import try_translate_pv_to_csi
from topospread.plugins.volumebinding.pod_volumes import (
    BinderError,
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


def check_bindings(storage: StorageLister, node: Node, volumes: PodVolumes) -> None:
    """Raise ``BinderError`` where the API's PVs and claims, after ``bind_pod_volumes``, no
    longer suit the node: a bound PV's node affinity (translated to CSI where the node's
    CSINode migrated its plugin) must admit the node, a claim to provision must still name it.

    NOTE: the PV controller's answer is immediate here, so there is nothing to wait for, and
    its unbinding (a PV's claimRef dropped) is not modelled.

    Upstream: checkBindings (binder.go, v1.35), which BindPodVolumes polls
    """
    name = node.metadata.name
    csi_node = storage.csi_node(name)
    for b in volumes.static_bindings:
        pv_name = b.pv.metadata.name
        pv = storage.persistent_volume(pv_name)
        if pv is None:
            raise BinderError(
                f'failed to check binding: could not find v1/PersistentVolume "{pv_name}"'
            )
        try:
            pv = try_translate_pv_to_csi(pv, csi_node)
        except BinderError as err:
            raise BinderError(f"failed to translate pv to csi: {err}") from err
        _check_node_affinity(pv, node)
    for claim in volumes.dynamic_provisions:
        pvc = storage.persistent_volume_claim(claim.metadata.namespace, claim.metadata.name)
        if pvc is None:
            raise BinderError(
                "failed to check provisioning pvc: could not find "
                f'v1/PersistentVolumeClaim "{claim.key}"'
            )
        if not pvc.metadata.annotations:
            raise BinderError(f'selectedNode annotation reset for PVC "{pvc.metadata.name}"')
        if pvc.metadata.annotations.get(ANN_SELECTED_NODE) != name:
            raise BinderError(f'provisioning failed for PVC "{pvc.metadata.name}"')
        if pvc.spec.volume_name:
            pv = storage.persistent_volume(pvc.spec.volume_name)
            if pv is None:
                continue  # upstream waits for it (an API delay, or the claim is unbound)
            _check_node_affinity(try_translate_pv_to_csi(pv, csi_node), node)


def _check_node_affinity(pv: PersistentVolume, node: Node) -> None:
    if not check_node_affinity(pv, node.metadata.labels):
        raise BinderError(
            f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node.metadata.name}": '
            "no matching NodeSelectorTerms"
        )


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
