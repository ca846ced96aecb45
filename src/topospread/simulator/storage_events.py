"""Which unschedulable pods a storage event moves back to the active queue: the events the
volume plugins register and their queueing hints, for the PVs, claims, StorageClasses, CSI
objects and capacities a simulation writes.

A pod moves when a plugin that rejected it registers for the event's kind and its hint does
not skip it; a claim event only helps the pods in its namespace that use it (VolumeBinding's,
VolumeZone's and VolumeRestrictions' hints). A pod rejected by another plugin too still moves,
as upstream's queue asks every rejecting plugin and requeues when any says Queue.

Upstream: EventsToRegister of volumebinding, volumezone, nodevolumelimits and
volumerestrictions (pkg/scheduler/framework/plugins, v1.35)
"""

from __future__ import annotations

from typing import Final

from topospread.api.storage import PersistentVolumeClaim, StorageObject
from topospread.api.types import Pod
from topospread.plugins.helper.storage import claim_name_of

VOLUME_BINDING: Final = "VolumeBinding"
VOLUME_ZONE: Final = "VolumeZone"
VOLUME_RESTRICTIONS: Final = "VolumeRestrictions"
NODE_VOLUME_LIMITS: Final = "NodeVolumeLimits"

# The plugins that register for an add or update of each storage kind.
REGISTERED: Final[dict[str, frozenset[str]]] = {
    "PersistentVolumeClaim": frozenset(
        {VOLUME_BINDING, VOLUME_ZONE, VOLUME_RESTRICTIONS, NODE_VOLUME_LIMITS}
    ),
    "PersistentVolume": frozenset({VOLUME_BINDING, VOLUME_ZONE}),
    "StorageClass": frozenset({VOLUME_BINDING, VOLUME_ZONE}),
    "CSINode": frozenset({VOLUME_BINDING, NODE_VOLUME_LIMITS}),
    "CSIDriver": frozenset({VOLUME_BINDING}),
    "CSIStorageCapacity": frozenset({VOLUME_BINDING}),
}


def uses_claim(pod: Pod, pvc: PersistentVolumeClaim) -> bool:
    """The claim is one of the pod's (by name, in its namespace, ephemeral ones included)."""
    if pod.metadata.namespace != pvc.metadata.namespace:
        return False
    for volume in pod.spec.volumes:
        claim = claim_name_of(pod, volume)
        if claim is not None and claim[0] == pvc.metadata.name:
            return True
    return False


def storage_event_may_help(pod: Pod, rejected_by: frozenset[str], obj: StorageObject) -> bool:
    """Whether adding or updating ``obj`` may make the pod, rejected by ``rejected_by``,
    schedulable."""
    helped = rejected_by & REGISTERED.get(obj.kind, frozenset())
    if not helped:
        return False
    if isinstance(obj, PersistentVolumeClaim):
        return uses_claim(pod, obj)
    return True
