"""NodeVolumeLimits (CSILimits), ported from upstream's csi_test.go TestCSILimits (v1.35):
CSINode allocatable counts, unbound claims counted by their StorageClass's driver, in-tree
AWS EBS volumes (PVs and inline) counted under the CSI driver once the node migrated them,
generic ephemeral volumes, and the PreFilter Skip for pods without countable volumes.

Left out: upstream's cases counting VolumeAttachments (``vaCount``), which topospread does
not model. Not-found texts are the informer lister's (``persistentvolumeclaim``), where
upstream's fake lister says ``persistentvolumeclaims``.
"""

from __future__ import annotations

from typing import Any

import pytest

from builders import api, make_pod, storage_handle
from topospread.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from topospread.api.types import Node, Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.nodevolumelimits import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, new

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH_IN_TREE = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE_NAME = "node-for-max-pd-test-1"
EXCEEDED = new_status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)


def pvc_pod(*claims: str, name: str = "p") -> Pod:
    b = make_pod(name)
    for c in claims:
        b.pvc(c)
    return b.obj()


def volume_pod(
    *volumes: dict[str, Any], name: str = "p", ns: str = "default", uid: str = ""
) -> Pod:
    b = make_pod(name).namespace(ns).uid(uid)
    for v in volumes:
        b.volume(v)
    return b.obj()


RUNNING = pvc_pod("csi-ebs.csi.aws.com-3")
PENDING_VOLUME = pvc_pod("csi-4")
UNBOUND_PVC_POD2 = pvc_pod("csi-4", name="p2")
MISSING_PV = pvc_pod("csi-6")
NO_SC_PVC = pvc_pod("csi-5")
GCE_TWO_VOL = pvc_pod("csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2")
IN_TREE_ONE_VOL = pvc_pod("csi-kubernetes.io/aws-ebs-0")
IN_TREE_TWO_VOL = pvc_pod("csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2")
CSI_EBS_ONE_VOL = pvc_pod("csi-ebs.csi.aws.com-0")
CSI_EBS_TWO_VOL = pvc_pod("csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2")
IN_TREE_NON_MIGRATABLE = pvc_pod("csi-kubernetes.io/hostpath-0")
EPHEMERAL = volume_pod({"name": "xyz", "ephemeral": {}}, name="abc", ns="test", uid="12345")
EPHEMERAL_TWO = volume_pod(
    {"name": "x", "ephemeral": {}}, {"name": "y", "ephemeral": {}},
    name="abc", ns="test", uid="12345II",
)  # fmt: skip
CONFIG_AND_SECRET: list[dict[str, Any]] = [
    {"name": "cm", "configMap": {}},
    {"name": "s", "secret": {}},
]
INLINE_EBS = {"name": "ebs", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}
IN_TREE_INLINE = volume_pod(INLINE_EBS)
IN_TREE_INLINE_SAME_ID = volume_pod(
    {"name": "ebs", "awsElasticBlockStore": {"volumeID": "csi-ebs.csi.aws.com-1"}}
)
ONLY_CONFIG_AND_SECRET = volume_pod(*CONFIG_AND_SECRET)
PVC_WITH_CONFIG_AND_SECRET = volume_pod(
    *CONFIG_AND_SECRET,
    {"name": "c", "persistentVolumeClaim": {"claimName": "csi-ebs.csi.aws.com-0"}},
)
EPHEMERAL_WITH_CONFIG_AND_SECRET = volume_pod(
    *CONFIG_AND_SECRET, {"name": "xyz", "ephemeral": {}}, name="abc", ns="test"
)
INLINE_MIGRATABLE_WITH_CONFIG_AND_SECRET = volume_pod(*CONFIG_AND_SECRET, INLINE_EBS)


def ephemeral_claim(pod: Pod, volume: str, *, owned: bool = True) -> PersistentVolumeClaim:
    owners = (
        [{"kind": "Pod", "name": pod.metadata.name, "uid": pod.metadata.uid, "controller": True}]
        if owned
        else []
    )
    meta = {"name": f"{pod.metadata.name}-{volume}", "namespace": "test", "ownerReferences": owners}
    return api(PersistentVolumeClaim, {"metadata": meta, "spec": {"storageClassName": SC_NAME}})


EPHEMERAL_CLAIM = ephemeral_claim(EPHEMERAL, "xyz")
CONFLICTING_CLAIM = ephemeral_claim(EPHEMERAL, "xyz", owned=False)
EPHEMERAL_CLAIM_X = ephemeral_claim(EPHEMERAL_TWO, "x")
EPHEMERAL_CLAIM_Y = ephemeral_claim(EPHEMERAL_TWO, "y")


def fixtures(drivers: list[str]) -> list[Any]:
    """Upstream: getFakeCSIPVLister, getFakeCSIPVCLister, getFakeCSIStorageClassLister."""
    out: list[Any] = []
    for driver in drivers:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            if driver == EBS_IN_TREE:
                source: dict[str, Any] = {"awsElasticBlockStore": {"volumeID": handle}}
            elif driver == HOSTPATH_IN_TREE:
                source = {}
            else:
                source = {"csi": {"driver": driver, "volumeHandle": handle}}
            out.append(api(PersistentVolume, {"metadata": {"name": handle}, "spec": source}))
            out.append(claim(handle, {"volumeName": handle}))
    out.append(claim("csi-4", {"storageClassName": SC_NAME}))
    out.append(claim("csi-5", {}))
    out.append(claim("csi-6", {"storageClassName": SC_NAME, "volumeName": "missing-in-action"}))
    out.append(api(StorageClass, {"metadata": {"name": SC_NAME}, "provisioner": drivers[0]}))
    return out


def claim(name: str, spec: dict[str, Any]) -> PersistentVolumeClaim:
    return api(
        PersistentVolumeClaim, {"metadata": {"name": name, "namespace": "default"}, "spec": spec}
    )


def csi_node(limit_source: str, limit: int, drivers: list[str]) -> CSINode | None:
    """Upstream: getNodeWithPodAndVolumeLimits and enableMigrationOnNode (aws-ebs)."""
    if limit_source not in ("csinode", "csinode-with-no-limit"):
        return None
    entries = [
        {"name": d, "nodeID": NODE_NAME}
        | ({"allocatable": {"count": limit}} if limit_source == "csinode" else {})
        for d in drivers
    ]
    meta = {
        "name": NODE_NAME,
        "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": EBS_IN_TREE},
    }
    return api(CSINode, {"metadata": meta, "spec": {"drivers": entries}})


def not_found(name: str) -> Status:
    return new_status(
        Code.UnschedulableAndUnresolvable,
        f'looking up PVC test/{name}: persistentvolumeclaim "{name}" not found',
    )


# (new pod, existing pods, extra claims, max volumes, drivers, limit source, want)
CASES: list[Any] = [
    ("fits when node volume limit >= new pods CSI volume",
     CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 4, [EBS], "csinode", SUCCESS),
    ("doesn't when node volume limit <= pods CSI volume",
     CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode", EXCEEDED),
    ("should when driver does not support volume limits",
     CSI_EBS_ONE_VOL, [RUNNING, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode-with-no-limit", SUCCESS),
    ("count pending PVCs towards volume limit <= pods CSI volume",
     CSI_EBS_ONE_VOL, [PENDING_VOLUME, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode", EXCEEDED),
    ("count multiple pending pvcs towards volume limit >= pods CSI volume",
     CSI_EBS_ONE_VOL, [PENDING_VOLUME, UNBOUND_PVC_POD2, CSI_EBS_TWO_VOL], [], 4, [EBS],
     "csinode", SUCCESS),
    ("should count PVCs with invalid PV name but valid SC",
     CSI_EBS_ONE_VOL, [MISSING_PV, CSI_EBS_TWO_VOL], [], 2, [EBS], "csinode", EXCEEDED),
    ("don't count pvcs with missing SC towards volume limit",
     CSI_EBS_ONE_VOL, [RUNNING, NO_SC_PVC], [], 2, [EBS], "csinode", SUCCESS),
    ("count pvcs with the same type towards volume limit",
     CSI_EBS_ONE_VOL, [GCE_TWO_VOL, CSI_EBS_TWO_VOL], [], 2, [EBS, GCE], "csinode", EXCEEDED),
    ("don't count pvcs with different type towards volume limit",
     GCE_TWO_VOL, [CSI_EBS_TWO_VOL, RUNNING], [], 2, [EBS, GCE], "csinode", SUCCESS),
    ("should count in-tree volumes if migration is enabled",
     IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, [EBS_IN_TREE, EBS], "csinode", EXCEEDED),
    ("nil csi node",
     IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 0, [EBS_IN_TREE, EBS], "", SUCCESS),
    ("should count unbound in-tree volumes if migration is enabled",
     PENDING_VOLUME, [IN_TREE_TWO_VOL], [], 2, [EBS_IN_TREE, EBS], "csinode", EXCEEDED),
    ("should not limit pod if volume used does not report limits",
     IN_TREE_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, [EBS_IN_TREE, EBS], "csinode-with-no-limit",
     SUCCESS),
    ("should not count non-migratable in-tree volumes",
     IN_TREE_NON_MIGRATABLE, [CSI_EBS_TWO_VOL], [], 2, [HOSTPATH_IN_TREE, EBS], "csinode",
     SUCCESS),
    ("should count in-tree inline volumes if migration is enabled",
     IN_TREE_INLINE, [IN_TREE_TWO_VOL], [], 2, [EBS_IN_TREE, EBS], "csinode", EXCEEDED),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling in-tree "
     "volumes)",
     IN_TREE_ONE_VOL, [CSI_EBS_TWO_VOL], [], 2, [EBS_IN_TREE, EBS], "csinode", EXCEEDED),
    ("should count in-tree, inline and csi volumes if migration is enabled (when scheduling "
     "in-tree volumes)",
     IN_TREE_INLINE, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, [EBS_IN_TREE, EBS], "csinode",
     EXCEEDED),
    ("should not count in-tree, inline and csi volumes if migration is enabled (when scheduling "
     "in-tree volumes)",
     IN_TREE_INLINE_SAME_ID, [CSI_EBS_TWO_VOL, IN_TREE_ONE_VOL], [], 3, [EBS_IN_TREE, EBS],
     "csinode", SUCCESS),
    ("should count in-tree and csi volumes if migration is enabled (when scheduling csi volumes)",
     CSI_EBS_ONE_VOL, [IN_TREE_TWO_VOL], [], 2, [EBS_IN_TREE, EBS], "csinode", EXCEEDED),
    ("ephemeral volume missing",
     EPHEMERAL, [], [], 0, [EBS], "csinode-with-no-limit", not_found("abc-xyz")),
    ("ephemeral volume not owned",
     EPHEMERAL, [], [CONFLICTING_CLAIM], 0, [EBS], "csinode-with-no-limit",
     as_status("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")),
    ("ephemeral volume unbound",
     EPHEMERAL, [], [EPHEMERAL_CLAIM], 0, [EBS], "csinode-with-no-limit", SUCCESS),
    ("ephemeral doesn't when node volume limit <= pods CSI volume",
     EPHEMERAL, [RUNNING, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 2, [EBS], "csinode", EXCEEDED),
    ("ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL_TWO], [EPHEMERAL_CLAIM_X, EPHEMERAL_CLAIM_Y], 2, [EBS],
     "csinode", EXCEEDED),
    ("persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 3, [EBS],
     "csinode", EXCEEDED),
    ("persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
     CSI_EBS_ONE_VOL, [RUNNING, EPHEMERAL, CSI_EBS_TWO_VOL], [EPHEMERAL_CLAIM], 5, [EBS],
     "csinode", SUCCESS),
    ("skip Filter when the pod only uses secrets and configmaps",
     ONLY_CONFIG_AND_SECRET, [], [], 2, [EBS], "csinode", SKIP),
    ("don't skip Filter when the pod has pvcs",
     PVC_WITH_CONFIG_AND_SECRET, [], [], 2, [EBS], "csinode", SUCCESS),
    ("don't skip Filter when the pod has ephemeral volumes",
     EPHEMERAL_WITH_CONFIG_AND_SECRET, [], [], 0, [EBS], "csinode-with-no-limit",
     not_found("abc-xyz")),
    ("don't skip Filter when the pod has inline migratable volumes",
     INLINE_MIGRATABLE_WITH_CONFIG_AND_SECRET, [IN_TREE_TWO_VOL], [], 2, [EBS_IN_TREE, EBS],
     "csinode", EXCEEDED),
]  # fmt: skip


@pytest.mark.parametrize(
    ("new_pod", "existing", "extra", "max_vols", "drivers", "limit_source", "want"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_csi_limits(
    new_pod: Pod,
    existing: list[Pod],
    extra: list[PersistentVolumeClaim],
    max_vols: int,
    drivers: list[str],
    limit_source: str,
    want: Status,
) -> None:
    node = api(Node, {"metadata": {"name": NODE_NAME}})
    objects = fixtures(drivers) + extra
    cn = csi_node(limit_source, max_vols, drivers)
    if cn is not None:
        objects.append(cn)
    plugin = new(None, storage_handle([node], [], objects), DEFAULT_FEATURES)
    state = CycleState()
    _, pre = plugin.pre_filter(state, new_pod, [])
    if pre.is_skip:
        assert want == SKIP
        return
    assert pre == SUCCESS
    assert plugin.filter(state, new_pod, NodeInfo(node, list(existing))) == want


def test_node_allocatable_attachable_volumes_limit_a_driver_without_a_csinode() -> None:
    """Limits from the Node object (``attachable-volumes-csi-<driver>``) count too."""
    node = api(
        Node,
        {"metadata": {"name": NODE_NAME},
         "status": {"allocatable": {f"attachable-volumes-csi-{EBS}": "2"}}},
    )  # fmt: skip
    plugin = new(None, storage_handle([node], [], fixtures([EBS])), DEFAULT_FEATURES)
    info = NodeInfo(node, [CSI_EBS_TWO_VOL])
    assert plugin.filter(CycleState(), CSI_EBS_ONE_VOL, info) == EXCEEDED


def test_an_ephemeral_claim_is_the_pods_only_through_its_first_controller_reference() -> None:
    """Upstream's VolumeIsForPod reads metav1.IsControlledBy: the first owner reference
    marked controller, and the claim in the pod's namespace."""
    from topospread.api.meta_types import ObjectMeta, OwnerReference
    from topospread.api.storage import PersistentVolumeClaim
    from topospread.api.types import Pod
    from topospread.plugins.helper.storage import ephemeral_volume_is_for_pod

    owner = Pod(metadata=ObjectMeta(name="abc", namespace="test", uid="pod-uid"))

    def claim(*refs: tuple[str, bool], namespace: str = "test") -> PersistentVolumeClaim:
        return PersistentVolumeClaim(
            metadata=ObjectMeta(
                name="abc-xyz",
                namespace=namespace,
                owner_references=[
                    OwnerReference(kind="Pod", name="abc", uid=uid, controller=c) for uid, c in refs
                ],
            )
        )

    refused = "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"
    assert ephemeral_volume_is_for_pod(owner, claim(("pod-uid", True))) is None
    assert ephemeral_volume_is_for_pod(owner, claim(("other", False), ("pod-uid", True))) is None
    assert ephemeral_volume_is_for_pod(owner, claim(("other", True), ("pod-uid", True))) == refused
    assert ephemeral_volume_is_for_pod(owner, claim(("pod-uid", False))) == refused
    elsewhere = claim(("pod-uid", True), namespace="other")
    assert ephemeral_volume_is_for_pod(owner, elsewhere) == (
        "PVC other/abc-xyz was not created for pod test/abc (pod is not owner)"
    )
