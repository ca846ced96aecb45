"""A StatefulSet's persistentVolumeClaimRetentionPolicy as the controller carries it out: by
owner references on its replicas' claims, which the garbage collector then acts on
(simulator/garbage_collector.py). whenDeleted: Delete makes the set the claim's controller, so
the claim goes with the set; whenScaled: Delete makes a condemned pod (one whose ordinal is
scaled away) the controller of its claims, so they go once that pod is gone — not before, and
not at all if the set scales back up first (the pod's reference is then removed). A claim
still referring to an earlier pod of its ordinal is stale: the controller creates no pod for
that ordinal until the garbage collector has deleted the claim.

Upstream: getPersistentVolumeClaimRetentionPolicy, matchesRef, hasUnexpectedController,
hasNonControllerOwner, isClaimOwnerUpToDate, updateClaimOwnerRefForSetAndPod, hasOwnerRef,
hasStaleOwnerRef, addControllerRef (stateful_set_utils.go) and PodClaimIsStale
(stateful_pod_control.go), pkg/controller/statefulset, v1.35
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec

from topospread.api.storage import PersistentVolumeClaim
from topospread.api.types import OwnerReference, Pod, StatefulSet
from topospread.simulator.controllers.statefulset import get_ordinal

RETAIN: Final = "Retain"
DELETE: Final = "Delete"
_SET_KIND: Final = ("apps/v1", "StatefulSet")
_POD_KIND: Final = ("v1", "Pod")


def retention_policy(sts: StatefulSet) -> tuple[str, str]:
    """``(whenDeleted, whenScaled)``, each Retain unless given.

    Upstream: getPersistentVolumeClaimRetentionPolicy (stateful_set_utils.go, v1.35)
    """
    policy = sts.spec.persistent_volume_claim_retention_policy or {}
    return policy.get("whenDeleted") or RETAIN, policy.get("whenScaled") or RETAIN


def pod_in_ordinal_range(sts: StatefulSet, ordinal: int) -> bool:
    """Upstream: podInOrdinalRange (stateful_set_utils.go, v1.35)"""
    start = sts.spec.ordinals.start if sts.spec.ordinals is not None else 0
    replicas = sts.spec.replicas if sts.spec.replicas is not None else 1
    return start <= ordinal < start + replicas


def _matches(ref: OwnerReference, kind: tuple[str, str], name: str) -> bool:
    """Upstream: matchesRef (stateful_set_utils.go, v1.35)"""
    return (ref.api_version, ref.kind) == kind and ref.name == name


def has_owner_ref(claim: PersistentVolumeClaim, uid: str) -> bool:
    """Upstream: hasOwnerRef (stateful_set_utils.go, v1.35): by uid alone."""
    return any(r.uid == uid for r in claim.metadata.owner_references)


def has_stale_owner_ref(
    claim: PersistentVolumeClaim, kind: tuple[str, str], name: str, uid: str
) -> bool:
    """The first reference to an object of this kind and name names another uid (an earlier
    object of that name).

    Upstream: hasStaleOwnerRef (stateful_set_utils.go, v1.35)
    """
    for ref in claim.metadata.owner_references:
        if _matches(ref, kind, name):
            return ref.uid != uid
    return False


def has_unexpected_controller(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Under a policy that deletes, the claim has a controller other than the set and the pod,
    or a reference to an earlier set or pod of their names.

    Upstream: hasUnexpectedController (stateful_set_utils.go, v1.35)
    """
    if retention_policy(sts) == (RETAIN, RETAIN):
        return False
    for ref in claim.metadata.owner_references:
        if _matches(ref, _SET_KIND, sts.metadata.name):
            if ref.uid != sts.metadata.uid:
                return True
        elif _matches(ref, _POD_KIND, pod.metadata.name):
            if ref.uid != pod.metadata.uid:
                return True
        elif ref.controller:
            return True
    return False


def _has_non_controller_owner(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Upstream: hasNonControllerOwner (stateful_set_utils.go, v1.35)"""
    uids = (sts.metadata.uid, pod.metadata.uid)
    return any(r.uid in uids and not r.controller for r in claim.metadata.owner_references)


def is_claim_owner_up_to_date(claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod) -> bool:
    """Whether the claim's owner references are as the policy wants them for this pod: no
    reference (Retain, Retain); the set's (whenDeleted: Delete) unless the pod is condemned
    under whenScaled: Delete, when it is the pod's. A claim referring to an earlier set or pod
    of the names is left alone (True), as is one another controller manages.

    Upstream: isClaimOwnerUpToDate (stateful_set_utils.go, v1.35)
    """
    set_uid, pod_uid = sts.metadata.uid, pod.metadata.uid
    if has_stale_owner_ref(claim, _SET_KIND, sts.metadata.name, set_uid) or has_stale_owner_ref(
        claim, _POD_KIND, pod.metadata.name, pod_uid
    ):
        return True
    if has_unexpected_controller(claim, sts, pod):
        return not (has_owner_ref(claim, set_uid) or has_owner_ref(claim, pod_uid))
    if _has_non_controller_owner(claim, sts, pod):
        return False
    when_deleted, when_scaled = retention_policy(sts)
    scaled_down = when_scaled == DELETE and not pod_in_ordinal_range(sts, get_ordinal(pod))
    wants_set = when_deleted == DELETE and not scaled_down
    return has_owner_ref(claim, set_uid) == wants_set and has_owner_ref(claim, pod_uid) == (
        scaled_down
    )


def update_claim_owner_ref_for_set_and_pod(
    claim: PersistentVolumeClaim, sts: StatefulSet, pod: Pod
) -> PersistentVolumeClaim:
    """The claim with its references to the set and the pod (by kind and name) replaced by
    what the policy wants: the set as its controller under whenDeleted: Delete, the pod as
    its controller instead when the pod is condemned under whenScaled: Delete; none when
    another controller manages the claim. The same object when nothing changes.

    Upstream: updateClaimOwnerRefForSetAndPod and addControllerRef (stateful_set_utils.go,
    v1.35)
    """
    unexpected = has_unexpected_controller(claim, sts, pod)
    refs = [
        r
        for r in claim.metadata.owner_references
        if not (
            _matches(r, _SET_KIND, sts.metadata.name) or _matches(r, _POD_KIND, pod.metadata.name)
        )
    ]
    if not unexpected:
        when_deleted, when_scaled = retention_policy(sts)
        scaled_down = not pod_in_ordinal_range(sts, get_ordinal(pod))
        if when_scaled == DELETE and scaled_down:
            refs.append(_controller_ref(_POD_KIND, pod.metadata.name, pod.metadata.uid))
        elif when_deleted == DELETE and not (when_scaled == DELETE and scaled_down):
            refs.append(_controller_ref(_SET_KIND, sts.metadata.name, sts.metadata.uid))
    if refs == claim.metadata.owner_references:
        return claim
    meta = msgspec.structs.replace(claim.metadata, owner_references=refs)
    return msgspec.structs.replace(claim, metadata=meta)


def pod_claim_is_stale(
    sts: StatefulSet, pod: Pod, claims: Callable[[], list[PersistentVolumeClaim]]
) -> bool:
    """Under whenScaled other than Retain, one of the ordinal's existing claims (``claims``)
    refers to an earlier pod of the name: the pod is not created until the claim is gone.

    Upstream: PodClaimIsStale (stateful_pod_control.go, v1.35)
    """
    if retention_policy(sts)[1] == RETAIN:
        return False
    name, uid = pod.metadata.name, pod.metadata.uid
    return any(has_stale_owner_ref(c, _POD_KIND, name, uid) for c in claims())


def _controller_ref(kind: tuple[str, str], name: str, uid: str) -> OwnerReference:
    """Upstream: metav1.NewControllerRef"""
    return OwnerReference(
        api_version=kind[0],
        kind=kind[1],
        name=name,
        uid=uid,
        controller=True,
        block_owner_deletion=True,
    )


__all__ = [
    "has_owner_ref",
    "has_stale_owner_ref",
    "has_unexpected_controller",
    "is_claim_owner_up_to_date",
    "pod_claim_is_stale",
    "pod_in_ordinal_range",
    "retention_policy",
    "update_claim_owner_ref_for_set_and_pod",
]
