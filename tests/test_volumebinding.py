"""VolumeBinding, ported from upstream's volume_binding_test.go TestVolumeBinding (v1.35): each
case's PreFilter result and status, and its Filter status per node. With the default feature
gates there is no scorer (StorageCapacityScoring is off), so upstream's PreScore skips and its
score columns, which need the gate, are not ported. Then the binder's Reserve (assume),
Unreserve (revert) and PreBind (bind) on the storage state.
"""

from __future__ import annotations

from typing import Any

import pytest

from builders import api, make_pod, storage_handle
from topospread.api.storage import (
    CSIDriver,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from topospread.api.types import Node, Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import PreFilterResult
from topospread.framework.status import SKIP, SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    new,
)
from topospread.plugins.volumebinding.matching import find_matching_volume
from topospread.plugins.volumebinding.volume_binding import STATE_KEY

HOSTNAME = "kubernetes.io/hostname"
CLASSES: list[Any] = [
    api(StorageClass, {"metadata": {"name": "immediate-sc"}, "volumeBindingMode": "Immediate"}),
    api(StorageClass, {"metadata": {"name": "wait-sc"},
                       "volumeBindingMode": "WaitForFirstConsumer"}),
    api(StorageClass, {"metadata": {"name": "wait-hdd-sc"},
                       "volumeBindingMode": "WaitForFirstConsumer"}),
]  # fmt: skip


def make_node(name: str, **labels: str) -> Node:
    return api(Node, {"metadata": {"name": name, "labels": {HOSTNAME: name, **labels}}})


def make_pvc(
    name: str, sc: str, *, bound_pv: str = "", phase: str = "", storage: str = ""
) -> PersistentVolumeClaim:
    """Upstream: makePVC(name, class).withBoundPV(pv).withPhase(p).withRequestStorage(q)."""
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    spec: dict[str, Any] = {"storageClassName": sc}
    if bound_pv:
        spec["volumeName"] = bound_pv
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    if storage:
        spec["resources"] = {"requests": {"storage": storage}}
    return api(PersistentVolumeClaim, {"metadata": meta, "spec": spec, "status": {"phase": phase}})


def make_pv(
    name: str,
    sc: str,
    *,
    phase: str = "",
    capacity: str = "",
    affinity: dict[str, list[str]] | None = None,
) -> PersistentVolume:
    """Upstream: makePV(name, class).withPhase(p).withCapacity(q).withNodeAffinity(kv)."""
    spec: dict[str, Any] = {"storageClassName": sc}
    if capacity:
        spec["capacity"] = {"storage": capacity}
    if affinity:
        exprs = [{"key": k, "operator": "In", "values": v} for k, v in affinity.items()]
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}
    return api(PersistentVolume, {"metadata": {"name": name}, "spec": spec,
                                  "status": {"phase": phase}})  # fmt: skip


def pod_with(*claims: str) -> Pod:
    b = make_pod("pod-a")
    for c in claims:
        b.pvc(c)
    return b.obj()


def unresolvable(*reasons: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, *reasons)


def local_pv(name: str, sc: str, capacity: str, node: str) -> PersistentVolume:
    return make_pv(name, sc, phase="Available", capacity=capacity, affinity={HOSTNAME: [node]})


# (name, pod, nodes, pvcs, pvs, PreFilter result, PreFilter status, Filter statuses per node)
CASES: list[Any] = [
    ("pod has not pvcs", pod_with(), ["node-a"], [], [], None, SKIP, [SUCCESS]),
    ("all bound", pod_with("pvc-a"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
     [make_pv("pv-a", "wait-sc", phase="Available")], None, SUCCESS, [SUCCESS]),
    ("all bound with local volumes", pod_with("pvc-a", "pvc-b"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc", bound_pv="pv-b")],
     [make_pv("pv-a", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]}),
      make_pv("pv-b", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]})],
     None, SUCCESS, [SUCCESS]),
    # Since v1.32 (kubernetes#127584) no PreFilterResult from a local PV's hostname affinity:
    # every node is filtered, and the others get the node affinity reason.
    ("all bound with local volumes, other nodes filtered", pod_with("pvc-a"), ["node-a", "node-b"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")],
     [make_pv("pv-a", "wait-sc", phase="Bound", affinity={HOSTNAME: ["node-a"]})],
     None, SUCCESS, [SUCCESS, unresolvable(ERR_REASON_NODE_CONFLICT)]),
    ("PVC does not exist", pod_with("pvc-a"), ["node-a"], [], [], None,
     unresolvable('persistentvolumeclaim "pvc-a" not found'), None),
    ("Part of PVCs do not exist", pod_with("pvc-a", "pvc-b"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], [], None,
     unresolvable('persistentvolumeclaim "pvc-b" not found'), None),
    ("immediate claims not bound", pod_with("pvc-a"), ["node-a"],
     [make_pvc("pvc-a", "immediate-sc")], [], None,
     unresolvable("pod has unbound immediate PersistentVolumeClaims"), None),
    ("unbound claims no matches", pod_with("pvc-a"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc")], [], None, SUCCESS,
     [unresolvable(ERR_REASON_BIND_CONFLICT)]),
    ("bound and unbound unsatisfied", pod_with("pvc-a", "pvc-b"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a"), make_pvc("pvc-b", "wait-sc")],
     [make_pv("pv-a", "wait-sc", phase="Available", affinity={"foo": ["bar"]})], None, SUCCESS,
     [unresolvable(ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT)]),
    ("pvc not found", pod_with("pvc-a"), ["node-a"], [], [], None,
     unresolvable('persistentvolumeclaim "pvc-a" not found'), None),
    ("pv not found", pod_with("pvc-a"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a")], [], None, SUCCESS,
     [unresolvable(ERR_REASON_PV_NOT_EXIST)]),
    ("pv not found claim lost", pod_with("pvc-a"), ["node-a"],
     [make_pvc("pvc-a", "wait-sc", bound_pv="pv-a", phase="Lost")], [], None,
     unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'),
     None),
    ("local volumes with close capacity are preferred", pod_with("pvc-a"),
     ["node-a", "node-b", "node-c"],
     [make_pvc("pvc-a", "wait-sc", storage="50Gi")],
     [local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"),
      local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
      local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"),
      local_pv("pv-b-1", "wait-sc", "100Gi", "node-b")],
     None, SUCCESS, [SUCCESS, SUCCESS, unresolvable(ERR_REASON_BIND_CONFLICT)]),
    ("local volumes with close capacity are preferred (multiple pvcs)", pod_with("pvc-0", "pvc-1"),
     ["node-a", "node-b", "node-c"],
     [make_pvc("pvc-0", "wait-sc", storage="50Gi"),
      make_pvc("pvc-1", "wait-hdd-sc", storage="100Gi")],
     [local_pv("pv-a-0", "wait-sc", "200Gi", "node-a"),
      local_pv("pv-a-1", "wait-sc", "200Gi", "node-a"),
      local_pv("pv-a-2", "wait-hdd-sc", "200Gi", "node-a"),
      local_pv("pv-a-3", "wait-hdd-sc", "200Gi", "node-a"),
      local_pv("pv-b-0", "wait-sc", "100Gi", "node-b"),
      local_pv("pv-b-1", "wait-sc", "100Gi", "node-b"),
      local_pv("pv-b-2", "wait-hdd-sc", "100Gi", "node-b"),
      local_pv("pv-b-3", "wait-hdd-sc", "100Gi", "node-b")],
     None, SUCCESS, [SUCCESS, SUCCESS, unresolvable(ERR_REASON_BIND_CONFLICT)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "node_names", "pvcs", "pvs", "want_result", "want_pre", "want_filter"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_volume_binding(
    pod: Pod,
    node_names: list[str],
    pvcs: list[PersistentVolumeClaim],
    pvs: list[PersistentVolume],
    want_result: PreFilterResult | None,
    want_pre: Status,
    want_filter: list[Status] | None,
) -> None:
    nodes = [make_node(n) if n != "node-a" else make_node(n, foo="barbar") for n in node_names]
    plugin = new(None, storage_handle(nodes, [], [*CLASSES, *pvcs, *pvs]), DEFAULT_FEATURES)
    state = CycleState()
    result, pre = plugin.pre_filter(state, pod, [])
    assert (result, pre) == (want_result, want_pre)
    if not (pre.is_success or pre.is_skip):
        assert want_filter is None
        return
    assert [plugin.filter(state, pod, NodeInfo(n)) for n in nodes] == want_filter


# -- Reserve, Unreserve, PreBind ------------------------------------------------------------


def scenario_objects() -> list[Any]:
    return [
        *CLASSES,
        make_pvc("pvc-a", "wait-sc", storage="5Gi"),
        make_pv("pv-small", "wait-sc", phase="Available", capacity="10Gi",
                affinity={HOSTNAME: ["node-a"]}),
        make_pv("pv-big", "wait-sc", phase="Available", capacity="100Gi",
                affinity={HOSTNAME: ["node-a"]}),
    ]  # fmt: skip


def reserved(objects: list[Any], pod: Pod, node: Node) -> tuple[Any, Any, CycleState]:
    handle = storage_handle([node], [], objects)
    plugin = new(None, handle, DEFAULT_FEATURES)
    state = CycleState()
    assert plugin.pre_filter(state, pod, [])[1] == SUCCESS
    assert plugin.filter(state, pod, NodeInfo(node)) == SUCCESS
    assert plugin.reserve(state, pod, node.metadata.name) == SUCCESS
    return plugin, handle.object_lister().storage(), state


def test_reserve_assumes_the_smallest_fitting_pv_and_unreserve_reverts_it() -> None:
    node = make_node("node-a")
    plugin, storage, state = reserved(scenario_objects(), pod_with("pvc-a"), node)
    assumed = storage.assumed_pv("pv-small")
    assert assumed.spec.claim_ref.name == "pvc-a"
    assert assumed.metadata.annotations["pv.kubernetes.io/bound-by-controller"] == "yes"
    assert storage.persistent_volume("pv-small").spec.claim_ref is None  # the API is untouched
    assert storage.assumed_pv("pv-big").spec.claim_ref is None
    plugin.unreserve(state, pod_with("pvc-a"), "node-a")
    assert storage.assumed_pv("pv-small").spec.claim_ref is None


def test_an_assumed_pv_is_not_offered_to_another_claim() -> None:
    node = make_node("node-a")
    objects = [*scenario_objects(), make_pvc("pvc-b", "wait-sc", storage="5Gi")]
    plugin, _, _ = reserved(objects, pod_with("pvc-a"), node)
    other = make_pod("b").pvc("pvc-b").obj()
    state = CycleState()
    assert plugin.pre_filter(state, other, [])[1] == SUCCESS
    assert plugin.filter(state, other, NodeInfo(node)) == SUCCESS
    volumes = state.read(STATE_KEY).pod_volumes_by_node["node-a"]
    assert [b.pv.metadata.name for b in volumes.static_bindings] == ["pv-big"]


def test_pre_bind_binds_the_claim_to_the_pv() -> None:
    node = make_node("node-a")
    plugin, storage, state = reserved(scenario_objects(), pod_with("pvc-a"), node)
    assert plugin.pre_bind(state, pod_with("pvc-a"), "node-a") == SUCCESS
    pv = storage.persistent_volume("pv-small")
    pvc = storage.persistent_volume_claim("default", "pvc-a")
    assert (pv.spec.claim_ref.name, pv.status.phase) == ("pvc-a", "Bound")
    assert (pvc.spec.volume_name, pvc.status.phase) == ("pv-small", "Bound")


def test_a_claim_to_provision_gets_the_selected_node_and_a_capacity_check() -> None:
    provisioned = api(StorageClass, {
        "metadata": {"name": "csi"}, "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}],
    })  # fmt: skip
    driver = api(
        CSIDriver,
        {"metadata": {"name": "ebs.csi.aws.com"}, "spec": {"storageCapacity": True}},
    )
    capacity = api(
        CSIStorageCapacity,
        {"metadata": {"name": "c", "namespace": "default"}, "storageClassName": "csi",
         "capacity": "10Gi", "nodeTopology": {"matchLabels": {"zone": "a"}}},
    )  # fmt: skip
    claim = make_pvc("pvc-c", "csi", storage="20Gi")
    objects = [provisioned, driver, capacity, claim]
    in_a, in_b = make_node("node-a", zone="a"), make_node("node-b", zone="b")
    handle = storage_handle([in_a, in_b], [], objects)
    plugin = new(None, handle, DEFAULT_FEATURES)
    state = CycleState()
    pod = pod_with("pvc-c")
    assert plugin.pre_filter(state, pod, [])[1] == SUCCESS
    assert plugin.filter(state, pod, NodeInfo(in_b)) == unresolvable(ERR_REASON_BIND_CONFLICT)
    assert plugin.filter(state, pod, NodeInfo(in_a)) == unresolvable(ERR_REASON_NOT_ENOUGH_SPACE)
    small = make_pvc("pvc-s", "csi", storage="5Gi")
    handle = storage_handle([in_a], [], [provisioned, driver, capacity, small])
    plugin = new(None, handle, DEFAULT_FEATURES)
    state = CycleState()
    pod = pod_with("pvc-s")
    assert plugin.pre_filter(state, pod, [])[1] == SUCCESS
    assert plugin.filter(state, pod, NodeInfo(in_a)) == SUCCESS
    assert plugin.reserve(state, pod, "node-a") == SUCCESS
    assert plugin.pre_bind(state, pod, "node-a") == SUCCESS
    storage = handle.object_lister().storage()
    annotated = storage.persistent_volume_claim("default", "pvc-s")
    assert annotated.metadata.annotations["volume.kubernetes.io/selected-node"] == "node-a"


def test_pre_score_skips_as_upstream_with_storage_capacity_scoring_off() -> None:
    plugin = new(None, storage_handle([], [], []), DEFAULT_FEATURES)
    assert plugin.pre_score(CycleState(), pod_with("pvc-a"), []) == SKIP
    assert plugin.score_extensions() is None


def test_a_pv_pre_bound_to_the_claim_with_another_attributes_class_is_not_taken() -> None:
    # FindMatchingVolume checks volumeAttributesClassName before the claim reference: the
    # pre-bound PV is passed over and the claim gets the available PV of its attributes class.
    claim = api(PersistentVolumeClaim, {
        "metadata": {"name": "pvc-a", "namespace": "default", "uid": "uid-pvc-a"},
        "spec": {"storageClassName": "wait-sc", "volumeAttributesClassName": "gold",
                 "resources": {"requests": {"storage": "1Gi"}}}})  # fmt: skip
    pre_bound = api(PersistentVolume, {
        "metadata": {"name": "pv-silver"},
        "spec": {"storageClassName": "wait-sc", "volumeAttributesClassName": "silver",
                 "capacity": {"storage": "1Gi"},
                 "claimRef": {"namespace": "default", "name": "pvc-a", "uid": "uid-pvc-a"}},
        "status": {"phase": "Available"}})  # fmt: skip
    gold = api(PersistentVolume, {
        "metadata": {"name": "pv-gold"},
        "spec": {"storageClassName": "wait-sc", "volumeAttributesClassName": "gold",
                 "capacity": {"storage": "1Gi"}},
        "status": {"phase": "Available"}})  # fmt: skip
    node = make_node("node-a")
    assert find_matching_volume(claim, [pre_bound, gold], node, set()) == gold
