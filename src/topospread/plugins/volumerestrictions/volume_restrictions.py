"""VolumeRestrictions: disks that cannot be mounted twice, and ReadWriteOncePod claims.

Upstream: pkg/scheduler/framework/plugins/volumerestrictions/volume_restrictions.go (v1.35).
A GCE PD conflicts with the same disk on the node unless both mounts are read-only, an AWS EBS
volume with the same volume always, an iSCSI volume with the same IQN and a Ceph RBD image with
the same image (sharing a monitor and pool) unless both are read-only. A claim with the
ReadWriteOncePod access mode conflicts with any scheduled pod using it, on any node; that
conflict is Unschedulable (preemption may help), and PreFilter's count follows preemption's
what-if pod removals (AddPod/RemovePod).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.storage import READ_WRITE_ONCE_POD
from topospread.api.types import Pod, Volume
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo

NAME: Final = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT: Final = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT: Final = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
PRE_FILTER_STATE_KEY_NAME: Final = "PreFilter" + NAME
# The pool the API server defaults an RBD volume's to (SetDefaults_RBDVolumeSource).
RBD_DEFAULT_POOL: Final = "rbd"


@dataclass(slots=True)
class PreFilterState:
    """The pod's ReadWriteOncePod claims and how many scheduled pods use them.

    Upstream: preFilterState (volume_restrictions.go)
    """

    read_write_once_pod_pvcs: frozenset[str]
    conflicting_pvc_ref_count: int

    def clone(self) -> PreFilterState:
        # The claim set is frozen and shared; the count is what AddPod/RemovePod change.
        return PreFilterState(self.read_write_once_pod_pvcs, self.conflicting_pvc_ref_count)

    def conflicting_pvc_ref_count_for_pod(self, pod: Pod) -> int:
        return sum(
            1
            for v in pod.spec.volumes
            if v.persistent_volume_claim is not None
            and v.persistent_volume_claim.claim_name in self.read_write_once_pod_pvcs
        )

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        self.conflicting_pvc_ref_count += multiplier * self.conflicting_pvc_ref_count_for_pod(pod)


PRE_FILTER_STATE_KEY: Final = StateKey[PreFilterState](PRE_FILTER_STATE_KEY_NAME)


def needs_restrictions_check(v: Volume) -> bool:
    """Upstream: needsRestrictionsCheck (volume_restrictions.go)."""
    return (
        v.gce_persistent_disk is not None
        or v.aws_elastic_block_store is not None
        or v.rbd is not None
        or v.iscsi is not None
    )


def is_volume_conflict(volume: Volume, pod: Pod) -> bool:
    """Upstream: isVolumeConflict (volume_restrictions.go)."""
    for existing in pod.spec.volumes:
        disk, other = volume.gce_persistent_disk, existing.gce_persistent_disk
        if (
            disk is not None
            and other is not None
            and disk.pd_name == other.pd_name
            and not (disk.read_only and other.read_only)
        ):
            return True
        ebs, other_ebs = volume.aws_elastic_block_store, existing.aws_elastic_block_store
        if ebs is not None and other_ebs is not None and ebs.volume_id == other_ebs.volume_id:
            return True
        iscsi, other_iscsi = volume.iscsi, existing.iscsi
        if (
            iscsi is not None
            and other_iscsi is not None
            and iscsi.iqn == other_iscsi.iqn
            and not (iscsi.read_only and other_iscsi.read_only)
        ):
            return True
        rbd, other_rbd = volume.rbd, existing.rbd
        if (
            rbd is not None
            and other_rbd is not None
            and bool(set(rbd.monitors) & set(other_rbd.monitors))
            and (rbd.pool or RBD_DEFAULT_POOL) == (other_rbd.pool or RBD_DEFAULT_POOL)
            and rbd.image == other_rbd.image
            and not (rbd.read_only and other_rbd.read_only)
        ):
            return True
    return False


def satisfy_volume_conflicts(pod: Pod, node_info: NodeInfo) -> bool:
    """Upstream: satisfyVolumeConflicts (volume_restrictions.go)."""
    for v in pod.spec.volumes:
        if not needs_restrictions_check(v):
            continue
        for existing in node_info.pods:
            if is_volume_conflict(v, existing):
                return False
    return True


class VolumeRestrictions:
    """Upstream: VolumeRestrictions (volume_restrictions.go)."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Upstream: PreFilter (volume_restrictions.go)."""
        needs_check = any(needs_restrictions_check(v) for v in pod.spec.volumes)
        storage = self._handle.object_lister().storage()
        rwop: set[str] = set()
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is None:
                continue
            claim = v.persistent_volume_claim.claim_name
            pvc = storage.persistent_volume_claim(pod.metadata.namespace, claim)
            if pvc is None:
                return None, new_status(
                    Code.UnschedulableAndUnresolvable,
                    f'persistentvolumeclaim "{claim}" not found',
                )
            if READ_WRITE_ONCE_POD in pvc.spec.access_modes:
                rwop.add(pvc.metadata.name)
        s = PreFilterState(frozenset(rwop), self._conflicting_ref_count(pod, rwop))
        if not needs_check and s.conflicting_pvc_ref_count == 0:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def _conflicting_ref_count(self, pod: Pod, rwop: set[str]) -> int:
        """Upstream: calPreFilterState (volume_restrictions.go), with the snapshot's
        StorageInfos().IsPVCUsedByPods: any scheduled pod referencing the claim."""
        if not rwop:
            return 0
        used: set[str] = set()
        namespace = pod.metadata.namespace
        for info in self._handle.snapshot_shared_lister().node_infos().list():
            for p in info.pods:
                if p.metadata.namespace != namespace:
                    continue
                for v in p.spec.volumes:
                    if v.persistent_volume_claim is not None:
                        used.add(v.persistent_volume_claim.claim_name)
        return len(rwop & used)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: AddPod (volume_restrictions.go)."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError:
            return as_status(f'cannot read "{PRE_FILTER_STATE_KEY_NAME}" from cycleState')
        s.update_with_pod(pod_to_add, 1)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: RemovePod (volume_restrictions.go)."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError:
            return as_status(f'cannot read "{PRE_FILTER_STATE_KEY_NAME}" from cycleState')
        s.update_with_pod(pod_to_remove, -1)
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: Filter (volume_restrictions.go)."""
        if not satisfy_volume_conflicts(pod, node_info):
            return new_status(Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError:
            return as_status(f'cannot read "{PRE_FILTER_STATE_KEY_NAME}" from cycleState')
        if s.conflicting_pvc_ref_count > 0:
            return new_status(Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return SUCCESS


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> VolumeRestrictions:
    """VolumeRestrictions takes no args. Upstream: New (volume_restrictions.go)."""
    return VolumeRestrictions(handle)
