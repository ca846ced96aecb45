"""VolumeRestrictions, ported from upstream's volume_restrictions_test.go (v1.35): disk
conflicts of GCE PD, AWS EBS, Ceph RBD and iSCSI volumes, ReadWriteOncePod conflicts, and the
PreFilter extensions preemption uses."""

from __future__ import annotations

from typing import Any

import pytest

from builders import api, make_node, make_pod, storage_handle
from topospread.api.storage import PersistentVolumeClaim
from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.status import SKIP, SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.volumerestrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    new,
)

DISK_CONFLICT = new_status(Code.Unschedulable, ERR_REASON_DISK_CONFLICT)
NODE = make_node("node-1").obj()


def node_info(*pods: Pod) -> NodeInfo:
    return NodeInfo(NODE, list(pods))


def with_volume(volume: dict[str, Any]) -> Pod:
    return make_pod("p").volume({"name": "v", **volume}).obj()


def run(pod: Pod, info: NodeInfo, handle: Any = None) -> tuple[Status, Status | None]:
    plugin = new(None, handle or storage_handle([NODE]), DEFAULT_FEATURES)
    state = CycleState()
    _, pre = plugin.pre_filter(state, pod, [info])
    if not pre.is_success:
        return pre, None
    return pre, plugin.filter(state, pod, info)


DISKS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "GCE": ({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}),
    "AWS": (
        {"awsElasticBlockStore": {"volumeID": "foo"}},
        {"awsElasticBlockStore": {"volumeID": "bar"}},
    ),
    "RBD": (
        {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
        {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
    ),
    "ISCSI": (
        {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01",
                   "fsType": "ext4", "lun": 0}},
        {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01",
                   "fsType": "ext4", "lun": 0}},
    ),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(DISKS))
@pytest.mark.parametrize(
    ("case", "pre_want", "want"),
    [
        ("nothing", SKIP, None),
        ("one state", SKIP, None),
        ("same state", SUCCESS, DISK_CONFLICT),
        ("different state", SUCCESS, SUCCESS),
    ],
)
def test_disk_conflicts(kind: str, case: str, pre_want: Status, want: Status | None) -> None:
    vol_state, vol_state2 = DISKS[kind]
    empty = make_pod("p").obj()
    existing = with_volume(vol_state)
    pod, info = {
        "nothing": (empty, node_info()),
        "one state": (empty, node_info(existing)),
        "same state": (with_volume(vol_state), node_info(existing)),
        "different state": (with_volume(vol_state2), node_info(existing)),
    }[case]
    pre, got = run(pod, info)
    assert pre == pre_want
    assert got == want


def test_a_gce_volume_without_restrictions_is_skipped() -> None:
    pod = make_pod("p").volume({"name": "volume with no restriction"}).obj()
    assert run(pod, node_info()) == (SKIP, None)


def test_two_read_only_gce_mounts_of_one_disk_do_not_conflict() -> None:
    ro = {"gcePersistentDisk": {"pdName": "foo", "readOnly": True}}
    assert run(with_volume(ro), node_info(with_volume(ro)))[1] == SUCCESS


def test_an_rbd_image_in_the_default_pool_conflicts_with_it_named() -> None:
    # The API server defaults an RBD volume's pool to "rbd" (SetDefaults_RBDVolumeSource).
    unset = {"rbd": {"monitors": ["a"], "image": "bar"}}
    named = {"rbd": {"monitors": ["a"], "pool": "rbd", "image": "bar"}}
    assert run(with_volume(unset), node_info(with_volume(named)))[1] == DISK_CONFLICT


def rwop(name: str, mode: str = "ReadWriteOncePod") -> PersistentVolumeClaim:
    return api(
        PersistentVolumeClaim,
        {"metadata": {"name": name, "namespace": "default"}, "spec": {"accessModes": [mode]}},
    )


POD_WITH_ONE_PVC = make_pod("pod-with-one-pvc").pvc("claim-with-rwop-1").node("node-1").obj()
POD_WITH_TWO_PVCS = (
    make_pod("pod-with-two-pvcs").pvc("claim-with-rwop-1").pvc("claim-with-rwop-2")
    .node("node-1").obj()
)  # fmt: skip
POD_WITH_ONE_CONFLICT = make_pod("pod-with-one-conflict").pvc("claim-with-rwop-1").obj()
POD_WITH_TWO_CONFLICTS = (
    make_pod("pod-with-two-conflicts").pvc("claim-with-rwop-1").pvc("claim-with-rwop-2").obj()
)
POD_WITH_RWX = make_pod("pod-with-rwx").pvc("claim-with-rwx").node("node-1").obj()
RWOP_1, RWOP_2, RWX = (
    rwop("claim-with-rwop-1"),
    rwop("claim-with-rwop-2"),
    rwop("claim-with-rwx", "ReadWriteMany"),
)
RWOP_CONFLICT = new_status(Code.Unschedulable, ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)


@pytest.mark.parametrize(
    ("pod", "existing", "pvcs", "pre_want", "want"),
    [
        pytest.param(make_pod("p").obj(), [], [], SKIP, None, id="nothing"),
        pytest.param(
            POD_WITH_ONE_PVC, [], [],
            new_status(
                Code.UnschedulableAndUnresolvable,
                'persistentvolumeclaim "claim-with-rwop-1" not found',
            ),
            None,
            id="failed to get PVC",
        ),
        pytest.param(
            POD_WITH_ONE_PVC, [POD_WITH_RWX], [RWOP_1, RWX], SKIP, None,
            id="no access mode conflict",
        ),
        pytest.param(
            POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX], [RWOP_1, RWX],
            SUCCESS, RWOP_CONFLICT,
            id="access mode conflict, unschedulable",
        ),
        pytest.param(
            POD_WITH_TWO_CONFLICTS, [POD_WITH_TWO_PVCS, POD_WITH_RWX], [RWOP_1, RWOP_2, RWX],
            SUCCESS, RWOP_CONFLICT,
            id="two conflicts, unschedulable",
        ),
    ],
)  # fmt: skip
def test_access_mode_conflicts(
    pod: Pod,
    existing: list[Pod],
    pvcs: list[PersistentVolumeClaim],
    pre_want: Status,
    want: Status | None,
) -> None:
    handle = storage_handle([NODE], existing, pvcs)
    assert run(pod, node_info(*existing), handle) == (pre_want, want)


def test_removing_the_pod_holding_a_read_write_once_pod_claim_lifts_the_conflict() -> None:
    """Preemption's what-if: RemovePod lowers the count, AddPod raises it back."""
    handle = storage_handle([NODE], [POD_WITH_ONE_PVC], [RWOP_1])
    plugin = new(None, handle, DEFAULT_FEATURES)
    info = node_info(POD_WITH_ONE_PVC)
    state = CycleState()
    _, pre = plugin.pre_filter(state, POD_WITH_ONE_CONFLICT, [info])
    assert pre == SUCCESS
    copy = state.clone()
    ext = plugin.pre_filter_extensions()
    assert ext is not None
    assert ext.remove_pod(copy, POD_WITH_ONE_CONFLICT, POD_WITH_ONE_PVC, info) == SUCCESS
    assert plugin.filter(copy, POD_WITH_ONE_CONFLICT, node_info()) == SUCCESS
    assert plugin.filter(state, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT
    assert ext.add_pod(copy, POD_WITH_ONE_CONFLICT, POD_WITH_ONE_PVC, info) == SUCCESS
    assert plugin.filter(copy, POD_WITH_ONE_CONFLICT, info) == RWOP_CONFLICT
