"""The PV controller's sync of one volume: the phase it gives a volume from the claim its
``claimRef`` names, and what it does with a volume whose claim is gone or bound elsewhere —
release it and reclaim it (policy Delete: the volume is deleted; Retain: it stays Released,
referring to the old claim, until an administrator frees it), or unbind it.

Upstream: syncVolume, reclaimVolume and unbindVolume
(pkg/controller/volume/persistentvolume/pv_controller.go, v1.35)
"""

from __future__ import annotations

import msgspec

from topospread.api.storage import (
    ANN_BOUND_BY_CONTROLLER,
    ANN_DYNAMICALLY_PROVISIONED,
    VOLUME_AVAILABLE,
    VOLUME_BOUND,
    VOLUME_FAILED,
    VOLUME_RELEASED,
    PersistentVolume,
    PersistentVolumeClaim,
)

RECLAIM_DELETE = "Delete"


def sync_volume(
    pv: PersistentVolume, claim: PersistentVolumeClaim | None
) -> PersistentVolume | None:
    """The volume as the PV controller leaves it after one sync (``pv`` itself when nothing
    changes), None when it deletes it. ``claim``: the claim of the volume's ``claimRef``
    namespace and name, if one exists.

    - no ``claimRef``, or one without a uid (pre-bound by name; the claim's sync binds it):
      Available;
    - the claim is gone (none of that name, or one of another uid: the old one was deleted
      and another made under its name): Released, then reclaimed;
    - the claim is not bound yet: left for the claim's sync;
    - the claim is bound to this volume: Bound;
    - the claim is bound to another volume: a volume dynamically provisioned for it with
      reclaim policy Delete is Released and reclaimed; else unbound.

    Upstream: syncVolume (pv_controller.go, v1.35)
    """
    ref = pv.spec.claim_ref
    if ref is None or not ref.uid:
        return _with_phase(pv, VOLUME_AVAILABLE)
    if claim is not None and claim.metadata.uid != ref.uid:
        claim = None
    if claim is None:
        return reclaim_volume(_released(pv))
    if not claim.spec.volume_name:
        return pv
    if claim.spec.volume_name == pv.metadata.name:
        return _with_phase(pv, VOLUME_BOUND)
    if (
        ANN_DYNAMICALLY_PROVISIONED in pv.metadata.annotations
        and pv.spec.persistent_volume_reclaim_policy == RECLAIM_DELETE
    ):
        return reclaim_volume(_released(pv))
    return unbind_volume(pv)


def reclaim_volume(pv: PersistentVolume) -> PersistentVolume | None:
    """A released volume after its reclaim policy: Delete deletes it (None; its provisioner
    deletes the storage asset); any other policy leaves it Released.

    NOTE: in v1.35 (HonorPVReclaimPolicy GA) a CSI volume, static or provisioned, and one an
    external provisioner made go to the external deleter, the driver's provisioner, which
    deletes it: as here. Only a static Delete volume of an in-tree source no in-tree plugin
    deletes (NFS, iSCSI, local) goes Failed upstream ("Error getting deleter volume plugin
    for volume ...", findDeletablePlugin); it is deleted here too. Recycle is not modelled:
    the volume stays Released.

    Upstream: reclaimVolume (pv_controller.go, v1.35)
    """
    if pv.spec.persistent_volume_reclaim_policy == RECLAIM_DELETE:
        return None
    return pv


def unbind_volume(pv: PersistentVolume) -> PersistentVolume:
    """A volume the controller bound loses its claim reference (and the annotation that says
    so); one bound by the user keeps its claim's name, pre-bound again (the uid cleared).
    Either way it is Available.

    Upstream: unbindVolume (pv_controller.go, v1.35)
    """
    ref = pv.spec.claim_ref
    meta = pv.metadata
    if ANN_BOUND_BY_CONTROLLER in meta.annotations:
        annotations = {k: v for k, v in meta.annotations.items() if k != ANN_BOUND_BY_CONTROLLER}
        meta = msgspec.structs.replace(meta, annotations=annotations)
        spec = msgspec.structs.replace(pv.spec, claim_ref=None)
    else:
        claim_ref = None if ref is None else msgspec.structs.replace(ref, uid="")
        spec = msgspec.structs.replace(pv.spec, claim_ref=claim_ref)
    unbound = msgspec.structs.replace(pv, metadata=meta, spec=spec)
    return _with_phase(unbound, VOLUME_AVAILABLE)


def _released(pv: PersistentVolume) -> PersistentVolume:
    """Released, unless already Released or Failed (a Failed volume stays so)."""
    if pv.status.phase in (VOLUME_RELEASED, VOLUME_FAILED):
        return pv
    return _with_phase(pv, VOLUME_RELEASED)


def _with_phase(pv: PersistentVolume, phase: str) -> PersistentVolume:
    if pv.status.phase == phase:
        return pv
    return msgspec.structs.replace(pv, status=msgspec.structs.replace(pv.status, phase=phase))


__all__ = ["reclaim_volume", "sync_volume", "unbind_volume"]
