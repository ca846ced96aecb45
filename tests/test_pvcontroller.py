"""The PV controller and the provisioner for claims the scheduler does not bind: static PVs
matched to Immediate claims by findBestMatchForClaim's rules, Immediate claims provisioned in
a zone of the class's allowedTopologies (or of the nodes) drawn by the seed, and pods that
wait for an Immediate claim moved back when a PV arrives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.api.storage import CSINode, PersistentVolume, PersistentVolumeClaim, StorageClass
from topospread.api.types import Node
from topospread.cli import main
from topospread.cluster import pvcontroller
from topospread.cluster.pvcontroller import (
    check_volume_satisfy_claim,
    default_class,
    find_best_match_for_claim,
    immediate_segments,
    pvc_name_hash_and_index,
)
from topospread.cluster.state import ClusterState
from topospread.cluster.storage import StorageState

ZONE = "topology.kubernetes.io/zone"


def pv(name: str, size: str, modes: list[str], **extra: Any) -> PersistentVolume:
    spec = {"capacity": {"storage": size}, "accessModes": modes, **extra.pop("spec", {})}
    raw = {
        "metadata": {"name": name, "labels": extra.pop("labels", {})},
        "spec": spec,
        "status": {"phase": extra.pop("phase", "Available")},
    }
    return msgspec.convert(raw, PersistentVolume)


def pvc(name: str, size: str, modes: list[str], **spec: Any) -> PersistentVolumeClaim:
    raw = {
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": {"accessModes": modes, "resources": {"requests": {"storage": size}}, **spec},
    }
    return msgspec.convert(raw, PersistentVolumeClaim)


def node(name: str, zone: str) -> Node:
    raw = {
        "metadata": {"name": name, "labels": {ZONE: zone, "kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    return msgspec.convert(raw, Node)


def storage_class(name: str, provisioner: str, mode: str, **extra: Any) -> StorageClass:
    raw = {"metadata": {"name": name}, "provisioner": provisioner, "volumeBindingMode": mode}
    return msgspec.convert({**raw, **extra}, StorageClass)


RWO, ROX, RWX = "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"
DEFAULT = "storageclass.kubernetes.io/is-default-class"


@pytest.mark.parametrize(
    ("volumes", "claim", "want"),
    [
        pytest.param(
            [pv("big", "20Gi", [RWO]), pv("small", "5Gi", [RWO]), pv("tiny", "1Gi", [RWO])],
            pvc("c", "2Gi", [RWO]),
            "small",
            id="the smallest volume that is large enough",
        ),
        pytest.param(
            [pv("many", "5Gi", [RWO, ROX, RWX]), pv("two", "10Gi", [RWO, ROX])],
            pvc("c", "1Gi", [RWO]),
            "two",
            id="the fewest access modes come first, before size",
        ),
        pytest.param(
            [pv("rox", "5Gi", [ROX])],
            pvc("c", "1Gi", [RWO]),
            None,
            id="a volume missing a requested access mode never matches",
        ),
        pytest.param(
            [pv("fast", "5Gi", [RWO], spec={"storageClassName": "fast"}), pv("none", "9Gi", [RWO])],
            pvc("c", "1Gi", [RWO], storageClassName=""),
            "none",
            id="the claim's class must be the volume's",
        ),
        pytest.param(
            [
                pv("a", "5Gi", [RWO], labels={"tier": "a"}),
                pv("b", "9Gi", [RWO], labels={"tier": "b"}),
            ],
            pvc("c", "1Gi", [RWO], selector={"matchLabels": {"tier": "b"}}),
            "b",
            id="the claim's selector picks among volumes",
        ),
        pytest.param(
            [pv("taken", "5Gi", [RWO], spec={"claimRef": {"namespace": "x", "name": "y"}})],
            pvc("c", "1Gi", [RWO]),
            None,
            id="a volume bound to another claim is not available",
        ),
        pytest.param(
            [pv("released", "5Gi", [RWO], phase="Released")],
            pvc("c", "1Gi", [RWO]),
            None,
            id="a released volume is not available",
        ),
        pytest.param(
            [
                pv("free", "5Gi", [RWO]),
                pv("mine", "50Gi", [RWO], spec={"claimRef": {"namespace": "default", "name": "c"}}),
            ],
            pvc("c", "1Gi", [RWO]),
            "mine",
            id="a volume pre-bound to the claim wins",
        ),
        pytest.param(
            [pv("block", "5Gi", [RWO], spec={"volumeMode": "Block"})],
            pvc("c", "1Gi", [RWO]),
            None,
            id="a block volume never serves a filesystem claim",
        ),
    ],
)
def test_find_best_match_for_claim_follows_the_pv_controllers_rules(
    volumes: list[PersistentVolume], claim: PersistentVolumeClaim, want: str | None
) -> None:
    found = find_best_match_for_claim(claim, volumes, delay_binding=False)
    assert (found.metadata.name if found is not None else None) == want


def test_delayed_binding_only_takes_a_pre_bound_volume() -> None:
    free = pv("free", "5Gi", [RWO])
    mine = pv("mine", "5Gi", [RWO], spec={"claimRef": {"namespace": "default", "name": "c"}})
    claim = pvc("c", "1Gi", [RWO])
    assert find_best_match_for_claim(claim, [free], delay_binding=True) is None
    found = find_best_match_for_claim(claim, [free, mine], delay_binding=True)
    assert found is not None and found.metadata.name == "mine"


def test_an_immediate_claim_binds_to_a_static_volume_when_the_cluster_starts() -> None:
    storage = StorageState([pvc("c", "1Gi", [RWO]), pv("v", "5Gi", [RWO])])
    ClusterState([node("a1", "a")], storage=storage)
    claim, volume = storage.pvcs["default/c"], storage.pvs["v"]
    assert claim.spec.volume_name == "v" and claim.status.phase == "Bound"
    assert claim.metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes"
    assert volume.spec.claim_ref is not None and volume.spec.claim_ref.uid == "uid-c"
    assert volume.status.phase == "Bound"


def test_a_wait_for_first_consumer_claim_is_left_to_the_scheduler() -> None:
    wffc = storage_class("late", "ebs.csi.aws.com", "WaitForFirstConsumer")
    claim = pvc("c", "1Gi", [RWO], storageClassName="late")
    storage = StorageState([wffc, claim, pv("v", "5Gi", [RWO], spec={"storageClassName": "late"})])
    ClusterState([node("a1", "a")], storage=storage)
    assert storage.pvcs["default/c"].spec.volume_name == ""
    assert [v.metadata.name for v in storage.pvs.values()] == ["v"]


def test_an_immediate_claim_is_provisioned_in_an_allowed_topology() -> None:
    cls = storage_class(
        "zonal",
        "pd.csi.storage.gke.io",
        "Immediate",
        allowedTopologies=[{"matchLabelExpressions": [{"key": ZONE, "values": ["c"]}]}],
    )
    storage = StorageState([cls, pvc("c", "1Gi", [RWO], storageClassName="zonal")])
    ClusterState([node("a1", "a"), node("b1", "b")], storage=storage)
    name = storage.pvcs["default/c"].spec.volume_name
    volume = storage.pvs[name]
    assert volume.spec.node_affinity is not None and volume.spec.node_affinity.required
    (term,) = volume.spec.node_affinity.required.node_selector_terms
    assert [(e.key, e.operator, e.values) for e in term.match_expressions] == [(ZONE, "In", ["c"])]
    assert volume.spec.csi is not None and volume.spec.csi.driver == "pd.csi.storage.gke.io"


def _zone_of(storage: StorageState, claim: str) -> list[str]:
    volume = storage.pvs[storage.pvcs[f"default/{claim}"].spec.volume_name]
    affinity = volume.spec.node_affinity
    if affinity is None or affinity.required is None:
        return []
    (term,) = affinity.required.node_selector_terms
    return [v for e in term.match_expressions for v in e.values]


def test_immediate_volumes_of_a_statefulset_round_robin_over_the_zones_by_ordinal() -> None:
    # external-provisioner's preferred topology: the sorted requisite segments rotated by
    # FNV-1(set name) + ordinal, so ordinal n+1 lands in the zone after ordinal n's, and the
    # claims of one replica share its zone. FNV-1("web") % 3 == 0: ordinal 0 gets zone a.
    cls = storage_class("zonal", "pd.csi.storage.gke.io", "Immediate")
    nodes = [node("c1", "c"), node("a1", "a"), node("b1", "b"), node("a2", "a")]
    assert immediate_segments(cls, nodes, {}) == [((ZONE, "a"),), ((ZONE, "b"),), ((ZONE, "c"),)]
    claims = [
        pvc(f"{t}-web-{i}", "1Gi", [RWO], storageClassName="zonal")
        for t in ("data", "logs")
        for i in range(5)
    ]
    storage = StorageState([cls, *claims])
    ClusterState(nodes, storage=storage)
    for t in ("data", "logs"):
        assert [_zone_of(storage, f"{t}-web-{i}") for i in range(5)] == [
            ["a"],
            ["b"],
            ["c"],
            ["a"],
            ["b"],
        ]


@pytest.mark.parametrize(
    ("name", "hashed", "index"),
    [
        ("data-web-2", "web", 2),
        ("web-007", "web", 7),
        ("data", "data", 0),
        ("data-web-x", "data-web-x", 0),
        ("data-web-4294967296", "data-web-4294967296", 0),
        ("data-web-", "data-web-", 0),
    ],
)
def test_a_claims_name_hash_and_offset_are_the_external_provisioners(
    name: str, hashed: str, index: int
) -> None:
    # Go's hash/fnv New32 is FNV-1: "a" hashes to 0x050c5d7e, "foobar" to 0x31f0b262.
    assert pvcontroller._fnv1_32(b"a") == 0x050C5D7E
    assert pvcontroller._fnv1_32(b"foobar") == 0x31F0B262
    assert pvc_name_hash_and_index(name) == (pvcontroller._fnv1_32(hashed.encode()), index)


def test_immediate_segments_take_the_drivers_keys_from_its_csinode() -> None:
    cls = storage_class("zonal", "pd.csi.storage.gke.io", "Immediate")
    csi_node = msgspec.convert(
        {
            "metadata": {"name": "a1"},
            "spec": {"drivers": [{"name": "pd.csi.storage.gke.io", "nodeID": "a1",
                                  "topologyKeys": ["kubernetes.io/hostname"]}]},
        },
        CSINode,
    )  # fmt: skip
    other = msgspec.convert(
        {"metadata": {"name": "a1"}, "spec": {"drivers": [{"name": "x", "nodeID": "a1"}]}},
        CSINode,
    )
    nodes = [node("a1", "a"), node("b1", "b")]
    host = "kubernetes.io/hostname"
    # Every node labelled with the keys, whether or not it runs the driver.
    assert immediate_segments(cls, nodes, {"a1": csi_node}) == [((host, "a1"),), ((host, "b1"),)]
    # CSINodes without the driver's keys: a driver that takes no topology.
    assert immediate_segments(cls, nodes, {"a1": other}) == [()]
    # The keys on no node: "topologyKeys [...] were not found on any nodes", a retry.
    bare = [msgspec.convert({"metadata": {"name": "a1"}}, Node)]
    assert immediate_segments(cls, bare, {"a1": csi_node}) is None


SIM = """\
nodeGroups: [{name: node, zones: [zone-a, zone-b], perZone: 1}]
objects:
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: local}
  provisioner: kubernetes.io/no-provisioner
  volumeBindingMode: Immediate
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data}
  spec:
    accessModes: [ReadWriteOnce]
    storageClassName: local
    resources: {requests: {storage: 1Gi}}
- apiVersion: v1
  kind: Pod
  metadata: {name: db}
  spec:
    containers: [{name: c, image: x}]
    volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
timeline:
- name: a volume in zone-b appears
  apply:
    apiVersion: v1
    kind: PersistentVolume
    metadata: {name: disk-b}
    spec:
      capacity: {storage: 5Gi}
      accessModes: [ReadWriteOnce]
      storageClassName: local
      csi: {driver: local.csi.example.com, volumeHandle: disk-b}
      nodeAffinity:
        required:
          nodeSelectorTerms:
          - matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [zone-b]}]
    status: {phase: Available}
"""


def test_a_pod_waiting_for_its_immediate_claim_moves_when_a_matching_pv_is_applied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sim.yaml"
    path.write_text(SIM)
    with pytest.raises(SystemExit):
        main(["simulate", str(path), "-o", "json"])
    steps = json.loads(capsys.readouterr().out)["steps"]
    (pending,) = steps[0]["pending"]
    assert pending["pod"] == "default/db"
    assert "pod has unbound immediate PersistentVolumeClaims" in pending["message"]
    assert steps[1]["time"] == 0  # moved by the PV event, not by the unschedulable pool's flush
    assert steps[1]["placed"] == {"default/db": "node-zone-b-1"}


def test_a_claim_naming_a_free_volume_is_bound_to_it_and_no_other() -> None:
    claim = pvc("c", "1Gi", [RWO], volumeName="named")
    storage = StorageState([claim, pv("named", "1Gi", [RWO]), pv("other", "1Gi", [RWO])])
    ClusterState([node("a1", "a")], storage=storage)
    assert storage.pvcs["default/c"].status.phase == "Bound"
    named = storage.pvs["named"]
    assert named.spec.claim_ref is not None and named.spec.claim_ref.name == "c"
    assert storage.pvs["other"].spec.claim_ref is None


def test_a_claim_naming_a_volume_bound_elsewhere_stays_pending() -> None:
    claim = pvc("c", "1Gi", [RWO], volumeName="taken")
    taken = pv("taken", "5Gi", [RWO], spec={"claimRef": {"namespace": "x", "name": "y"}})
    storage = StorageState([claim, taken])
    ClusterState([node("a1", "a")], storage=storage)
    assert "pv.kubernetes.io/bind-completed" not in storage.pvcs["default/c"].metadata.annotations


@pytest.mark.parametrize(
    ("claim", "volume", "why"),
    [
        pytest.param(pvc("c", "2Gi", [RWO], volumeName="named"), pv("named", "1Gi", [RWO]),
                     "requested PV is too small", id="too small"),
        pytest.param(pvc("c", "1Gi", [RWO], volumeName="named", storageClassName="fast"),
                     pv("named", "1Gi", [RWO]), "storageClassName does not match",
                     id="another class"),
        pytest.param(pvc("c", "1Gi", [RWO], volumeName="named", volumeMode="Block"),
                     pv("named", "1Gi", [RWO]), "incompatible volumeMode", id="another mode"),
        pytest.param(pvc("c", "1Gi", [RWX], volumeName="named"), pv("named", "1Gi", [RWO]),
                     "incompatible accessMode", id="access mode not offered"),
    ],
)  # fmt: skip
def test_a_claim_naming_a_free_volume_that_does_not_satisfy_it_stays_pending(
    claim: PersistentVolumeClaim, volume: PersistentVolume, why: str
) -> None:
    assert check_volume_satisfy_claim(volume, claim) == why
    storage = StorageState([claim, volume])
    ClusterState([node("a1", "a")], storage=storage)
    assert "pv.kubernetes.io/bind-completed" not in storage.pvcs["default/c"].metadata.annotations
    assert storage.pvs["named"].spec.claim_ref is None


def test_a_claim_naming_a_volume_that_refers_to_it_is_bound_without_the_checks() -> None:
    # Upstream binds a volume already referring to the claim whatever its size (only a free
    # volume goes through checkVolumeSatisfyClaim).
    claim = pvc("c", "2Gi", [RWO], volumeName="named")
    ref = {"namespace": "default", "name": "c", "uid": "uid-c"}
    storage = StorageState([claim, pv("named", "1Gi", [RWO], spec={"claimRef": ref})])
    ClusterState([node("a1", "a")], storage=storage)
    assert storage.pvcs["default/c"].status.phase == "Bound"


@pytest.mark.parametrize(
    ("rejected_by", "event", "moves"),
    [
        pytest.param({"VolumeBinding"}, pv("v", "1Gi", [RWO]), True, id="a PV for VolumeBinding"),
        pytest.param(
            {"VolumeRestrictions"},
            pv("v", "1Gi", [RWO]),
            False,
            id="a PV not for VolumeRestrictions",
        ),
        pytest.param({"VolumeZone"}, pvc("data", "1Gi", [RWO]), True, id="the pod's own claim"),
        pytest.param({"VolumeZone"}, pvc("other", "1Gi", [RWO]), False, id="another claim"),
        pytest.param(
            {"NodeResourcesFit"}, pv("v", "1Gi", [RWO]), False, id="a plugin without storage events"
        ),
        pytest.param(
            {"VolumeBinding"},
            storage_class("s", "x", "Immediate"),
            True,
            id="a StorageClass for VolumeBinding",
        ),
    ],
)
def test_storage_events_move_only_the_pods_a_volume_plugin_registered_for(
    rejected_by: set[str], event: Any, moves: bool
) -> None:
    from builders import make_pod
    from topospread.simulator.storage_events import storage_event_may_help

    pod = make_pod("p").namespace("default").pvc("data").obj()
    assert storage_event_may_help(pod, frozenset(rejected_by), event) is moves


_NAMES = ("a", "b", "c")
_NAMESPACES = ("default", "other")


@st.composite
def _storage_objects(draw: st.DrawFn) -> list[Any]:
    """Classes that delay binding or not, PVs referring to claims of either namespace or to
    none, and claims of both classes, some naming a volume."""
    objects: list[Any] = [
        storage_class("late", "ebs.csi.aws.com", "WaitForFirstConsumer"),
        storage_class("now", "ebs.csi.aws.com", "Immediate"),
    ]
    for i in range(draw(st.integers(0, 8))):
        spec: dict[str, Any] = {"storageClassName": draw(st.sampled_from(["late", "now"]))}
        if draw(st.booleans()):
            ref = {"namespace": draw(st.sampled_from(_NAMESPACES))}
            ref["name"] = draw(st.sampled_from(_NAMES))
            if draw(st.booleans()):
                ref["uid"] = f"uid-{ref['name']}"
            spec["claimRef"] = ref
        size = draw(st.sampled_from(["1Gi", "5Gi"]))
        objects.append(pv(f"v{i}", size, [draw(st.sampled_from([RWO, RWX]))], spec=spec))
    for namespace in _NAMESPACES:
        for name in draw(st.lists(st.sampled_from(_NAMES), unique=True)):
            spec = {"storageClassName": draw(st.sampled_from(["late", "now"]))}
            if draw(st.booleans()):
                spec["volumeName"] = f"v{draw(st.integers(0, 8))}"
            claim = pvc(name, draw(st.sampled_from(["1Gi", "2Gi"])), [RWO], **spec)
            objects.append(
                msgspec.structs.replace(
                    claim, metadata=msgspec.structs.replace(claim.metadata, namespace=namespace)
                )
            )
    return objects


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(_storage_objects())
def test_the_pv_controllers_pass_binds_as_a_scan_of_every_volume_per_claim(
    objects: list[Any],
) -> None:
    """``sync_claims`` looks for a delayed claim's volume among the PVs referring to a claim of
    its name, found once per pass: the same bindings, in the same order, as looking at every PV
    for every claim (``_sync_if_unbound`` without them, what one claim's add does)."""
    nodes = [node("a1", "a"), node("b1", "b")]
    states = []
    for _ in range(2):
        storage = StorageState(objects)
        storage.node_of = {n.metadata.name: n for n in nodes}.get
        storage.list_nodes = lambda: nodes
        states.append(storage)
    indexed, scanned = states
    indexed.sync_claims()
    scanned._sync_volumes()  # the pass syncs the volumes first (it may free or delete some)
    for key in sorted(scanned.pvcs):
        scanned._sync_if_unbound(scanned.pvcs[key])
    assert list(indexed.pvs.items()) == list(scanned.pvs.items())
    assert list(indexed.pvcs.items()) == list(scanned.pvcs.items())


def test_a_claim_naming_no_class_is_given_the_default_one_by_the_pv_controller() -> None:
    # RetroactiveDefaultStorageClass: with no PV of class "" to take, syncUnboundClaim assigns
    # the default class (assignDefaultStorageClass); the claim is then synced under it.
    default = storage_class(
        "standard",
        "pd.csi.storage.gke.io",
        "Immediate",
        metadata={"name": "standard", "annotations": {DEFAULT: "true"}},
    )
    storage = StorageState([pvc("c", "1Gi", [RWO]), default])
    ClusterState([node("a1", "a")], storage=storage)
    claim = storage.pvcs["default/c"]
    assert claim.spec.storage_class_name == "standard"
    assert claim.status.phase == "Bound"
    assert storage.pvs[claim.spec.volume_name].spec.storage_class_name == "standard"


def test_a_claim_naming_no_class_first_takes_a_pv_of_no_class() -> None:
    default = storage_class(
        "standard",
        "pd.csi.storage.gke.io",
        "Immediate",
        metadata={"name": "standard", "annotations": {DEFAULT: "true"}},
    )
    storage = StorageState([pvc("c", "1Gi", [RWO]), default, pv("plain", "1Gi", [RWO])])
    ClusterState([node("a1", "a")], storage=storage)
    claim = storage.pvcs["default/c"]
    assert (claim.spec.storage_class_name, claim.spec.volume_name) == (None, "plain")


@pytest.mark.parametrize(
    ("stamps", "want"),
    [
        pytest.param({}, "a", id="same creation time: the first by name"),
        pytest.param({"b": "2025-01-02T00:00:00Z", "a": "2025-01-01T00:00:00Z"}, "b",
                     id="the newest"),
    ],
)  # fmt: skip
def test_the_default_class_is_the_newest_then_the_first_by_name(
    stamps: dict[str, str], want: str
) -> None:
    classes = [
        storage_class(name, "x", "Immediate", metadata={
            "name": name, "annotations": {DEFAULT: "true"},
            **({"creationTimestamp": stamps[name]} if name in stamps else {})})
        for name in ("c", "a", "b")
    ]  # fmt: skip
    assert default_class(classes) == want


@pytest.mark.parametrize(
    "phase", ["", "Pending", "Released"], ids=["no status", "pending", "released, claimRef dropped"]
)
def test_a_volume_referring_to_no_claim_is_made_available_and_taken(phase: str) -> None:
    # syncVolume sets an unused volume Available: a PV written without a status (Pending once
    # the API server defaults it) is matched like any other.
    claim = pvc("c", "1Gi", [RWO])
    storage = StorageState([claim, pv("v", "5Gi", [RWO], phase=phase)])
    ClusterState([node("a1", "a")], storage=storage)
    assert storage.pvcs["default/c"].spec.volume_name == "v"
    assert storage.pvs["v"].status.phase == "Bound"


def test_a_released_volume_still_referring_to_its_claim_stays_released() -> None:
    ref = {"namespace": "default", "name": "gone", "uid": "uid-gone"}
    released = pv("v", "5Gi", [RWO], phase="Released", spec={"claimRef": ref})
    storage = StorageState([pvc("c", "1Gi", [RWO]), released])
    ClusterState([node("a1", "a")], storage=storage)
    assert storage.pvcs["default/c"].spec.volume_name == ""
    assert storage.pvs["v"].status.phase == "Released"


RETRY_SIM = """\
nodeGroups: [{name: node, zones: [zone-a], perZone: 1}]
objects:
- apiVersion: storage.k8s.io/v1
  kind: CSINode
  metadata: {name: node-zone-a-1}
  spec:
    drivers: [{name: pd.csi.storage.gke.io, nodeID: n1, topologyKeys: [topology.gke.io/zone]}]
- apiVersion: storage.k8s.io/v1
  kind: StorageClass
  metadata: {name: now}
  provisioner: pd.csi.storage.gke.io
  volumeBindingMode: Immediate
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data}
  spec:
    accessModes: [ReadWriteOnce]
    storageClassName: now
    resources: {requests: {storage: 1Gi}}
- apiVersion: v1
  kind: Pod
  metadata: {name: db}
  spec:
    containers: [{name: c, image: x}]
    volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
timeline:
- name: a node labelled with the driver's topology key joins
  apply:
    apiVersion: v1
    kind: Node
    metadata:
      name: gke-1
      labels: {topology.gke.io/zone: zone-b, topology.kubernetes.io/zone: zone-b}
    status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def test_an_immediate_claim_waiting_for_its_topology_is_provisioned_when_a_node_has_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No node carries the driver's topology key: the provisioner retries ("topologyKeys
    # [...] were not found on any nodes") until one joins, then provisions in its segment.
    path = tmp_path / "retry.yaml"
    path.write_text(RETRY_SIM)
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", str(path), "-o", "json"])
    assert exit_.value.code == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    (pending,) = steps[0]["pending"]
    assert "pod has unbound immediate PersistentVolumeClaims" in pending["message"]
    assert steps[1]["placed"] == {"default/db": "gke-1"}


def test_an_immediate_claim_waiting_for_its_topology_is_provisioned_when_a_node_gets_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labelled = RETRY_SIM.replace("name: gke-1", "name: node-zone-a-1").replace(
        "a node labelled with the driver's topology key joins",
        "the node gets the driver's topology key",
    )
    path = tmp_path / "retry.yaml"
    path.write_text(labelled)
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", str(path), "-o", "json"])
    assert exit_.value.code == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert len(steps[0]["pending"]) == 1
    assert steps[1]["placed"] == {"default/db": "node-zone-a-1"}
