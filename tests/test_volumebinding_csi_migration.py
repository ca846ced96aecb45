"""VolumeBinding's CSI migration: a bound in-tree PV is checked against a node as its CSI
driver sees it when the node's CSINode lists the plugin in its migrated-plugins annotation
(upstream's tryTranslatePVToCSI in checkBoundClaims and checkBindings, binder.go v1.35), its
zone affinity rewritten to the driver's topology key by csi-translation-lib
(translateTopologyFromInTreeToCSI, v0.35).
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from builders import api, make_pod, storage_handle
from topospread.api.storage import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)
from topospread.api.types import Node
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.status import SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.nodevolumelimits.translation import (
    TranslationError,
    ebs_volume_id,
    gce_region_from_zones,
    is_csi_migration_on_for_plugin,
)
from topospread.plugins.volumebinding import ERR_REASON_NODE_CONFLICT, new
from topospread.plugins.volumebinding.csi_migration import translate_in_tree_pv_to_csi

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GKE_ZONE = "topology.gke.io/zone"
EBS_ZONE = "topology.ebs.csi.aws.com/zone"
GCE_PD = "kubernetes.io/gce-pd"
AWS_EBS = "kubernetes.io/aws-ebs"
MIGRATED = "storage.alpha.kubernetes.io/migrated-plugins"
WAIT = api(StorageClass, {"metadata": {"name": "wait-sc"},
                          "volumeBindingMode": "WaitForFirstConsumer"})  # fmt: skip


def make_node(name: str, **labels: str) -> Node:
    return api(Node, {"metadata": {"name": name, "labels": {HOSTNAME: name, **labels}}})


def csi_node(name: str, migrated: str | None) -> CSINode:
    annotations = {} if migrated is None else {MIGRATED: migrated}
    return api(CSINode, {"metadata": {"name": name, "annotations": annotations}})


def in_tree_pv(
    name: str,
    source: dict[str, Any],
    *,
    labels: dict[str, str] | None = None,
    terms: list[list[tuple[str, list[str]]]] | None = None,
    bound_to: str | None = None,
) -> PersistentVolume:
    spec: dict[str, Any] = {
        "storageClassName": "wait-sc",
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        **source,
    }
    if terms is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": k, "operator": "In", "values": v} for k, v in t]}
            for t in terms
        ]}}  # fmt: skip
    if bound_to is not None:
        spec["claimRef"] = {"namespace": "default", "name": bound_to, "uid": f"uid-{bound_to}"}
    return api(
        PersistentVolume,
        {"metadata": {"name": name, "labels": labels or {}}, "spec": spec,
         "status": {"phase": "Bound" if bound_to else "Available"}},
    )  # fmt: skip


def claim(name: str, bound_pv: str = "") -> PersistentVolumeClaim:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    spec: dict[str, Any] = {
        "storageClassName": "wait-sc",
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "5Gi"}},
    }
    if bound_pv:
        spec["volumeName"] = bound_pv
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    return api(PersistentVolumeClaim, {"metadata": meta, "spec": spec})


GCE = {"gcePersistentDisk": {"pdName": "disk-1"}}
EBS = {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-0abc"}}
# A GCE PD as the in-tree provisioner made it: zone labels and the legacy zone affinity.
GCE_PV = in_tree_pv(
    "pv-gce",
    GCE,
    labels={BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"},
    terms=[[(BETA_ZONE, ["us-central1-a"]), (BETA_REGION, ["us-central1"])]],
    bound_to="data",
)
# An EBS volume with zone labels only (no affinity): translation adds the driver's zone term.
EBS_PV = in_tree_pv("pv-ebs", EBS, labels={ZONE: "us-east-1a"}, bound_to="data")

# (case, PV, node name, node labels, the CSINode's annotation (None: no CSINode), passes)
NODES: list[Any] = [
    ("gce: migrated, the driver's zone label in the PV's zone", GCE_PV, "n1",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1", GKE_ZONE: "us-central1-a",
      REGION: "us-central1"}, GCE_PD, True),
    ("gce: migrated, legacy labels only", GCE_PV, "n2",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"}, GCE_PD, False),
    ("gce: migrated, the driver's zone label in another zone", GCE_PV, "n3",
     {BETA_ZONE: "us-central1-a", GKE_ZONE: "us-central1-b", REGION: "us-central1"},
     GCE_PD, False),
    ("gce: migrated, the driver's zone but no GA region", GCE_PV, "n4",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1", GKE_ZONE: "us-central1-a"},
     GCE_PD, False),
    ("gce: migrated among others", GCE_PV, "n5",
     {GKE_ZONE: "us-central1-a", REGION: "us-central1"}, f"{AWS_EBS},{GCE_PD}", True),
    ("gce: not migrated, legacy labels in the PV's zone", GCE_PV, "n6",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"}, "", True),
    ("gce: no CSINode, legacy labels in the PV's zone", GCE_PV, "n7",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"}, None, True),
    ("gce: only another plugin migrated", GCE_PV, "n8",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"}, AWS_EBS, True),
    ("gce: not migrated, the driver's labels only", GCE_PV, "n9",
     {GKE_ZONE: "us-central1-a", REGION: "us-central1"}, "", False),
    ("gce: annotation with a space is another name", GCE_PV, "n10",
     {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"}, f"{AWS_EBS}, {GCE_PD}", True),
    ("ebs: not migrated, no affinity: every node", EBS_PV, "n11", {}, None, True),
    ("ebs: migrated, the driver's zone label", EBS_PV, "n12", {EBS_ZONE: "us-east-1a"},
     AWS_EBS, True),
    ("ebs: migrated, the GA zone label only", EBS_PV, "n13", {ZONE: "us-east-1a"},
     AWS_EBS, False),
    ("ebs: migrated, the driver's label in another zone", EBS_PV, "n14",
     {EBS_ZONE: "us-east-1b"}, AWS_EBS, False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pv", "node_name", "labels", "migrated", "passes"),
    [pytest.param(*case[1:], id=case[0]) for case in NODES],
)
def test_a_bound_in_tree_pv_is_checked_as_its_csi_driver_sees_it_on_migrated_nodes(
    pv: PersistentVolume,
    node_name: str,
    labels: dict[str, str],
    migrated: str | None,
    passes: bool,
) -> None:
    node = make_node(node_name, **labels)
    objects: list[Any] = [WAIT, pv, claim("data", pv.metadata.name)]
    if migrated is not None:
        objects.append(csi_node(node_name, migrated))
    plugin = new(None, storage_handle([node], [], objects), DEFAULT_FEATURES)
    state = CycleState()
    pod = make_pod("p").pvc("data").obj()
    assert plugin.pre_filter(state, pod, [])[1] == SUCCESS
    want = SUCCESS if passes else new_status(Code.UnschedulableAndUnresolvable,
                                             ERR_REASON_NODE_CONFLICT)  # fmt: skip
    assert plugin.filter(state, pod, NodeInfo(node)) == want


def filter_all(objects: list[Any], nodes: list[Node]) -> list[Status]:
    plugin = new(None, storage_handle(nodes, [], objects), DEFAULT_FEATURES)
    state = CycleState()
    pod = make_pod("p").pvc("data").obj()
    assert plugin.pre_filter(state, pod, [])[1] == SUCCESS
    return [plugin.filter(state, pod, NodeInfo(n)) for n in nodes]


def test_nodes_differing_only_by_their_csinode_get_their_own_answers() -> None:
    """The binder answers once per view of the node: the CSINode's migrated plugins count."""
    labels = {BETA_ZONE: "us-central1-a", BETA_REGION: "us-central1"}
    nodes = [make_node(n, **labels) for n in ("a", "b", "c", "d")]
    objects = [WAIT, GCE_PV, claim("data", "pv-gce"), csi_node("b", GCE_PD),
               csi_node("c", AWS_EBS), csi_node("d", f"{GCE_PD},{AWS_EBS}")]  # fmt: skip
    conflict = new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_CONFLICT)
    assert filter_all(objects, nodes) == [SUCCESS, conflict, SUCCESS, conflict]


def test_an_untranslatable_pv_is_an_error_on_migrated_nodes_only() -> None:
    """An Azure Disk without a kind is a shared blob disk (the API server's default), which
    csi-translation-lib refuses; a regional GCE PD whose zones span regions too."""
    azure = in_tree_pv("pv-az", {"azureDisk": {"diskName": "d", "diskURI": "uri"}},
                       bound_to="data")  # fmt: skip
    nodes = [make_node("plain"), make_node("migrated")]
    objects = [
        WAIT,
        azure,
        claim("data", "pv-az"),
        csi_node("migrated", "kubernetes.io/azure-disk"),
    ]
    assert filter_all(objects, nodes) == [
        SUCCESS,
        as_status("could not translate pv: kind(Shared) is not supported in csi migration"),
    ]
    managed = msgspec.structs.replace(
        azure,
        spec=msgspec.structs.replace(
            azure.spec,
            azure_disk=msgspec.structs.replace(azure.spec.azure_disk, kind="managed"),
        ),
    )
    objects[1] = managed
    assert filter_all(objects, nodes) == [SUCCESS, SUCCESS]
    regional = in_tree_pv("pv-r", GCE, labels={BETA_ZONE: "us-east1-b__us-central1-a"},
                          bound_to="data")  # fmt: skip
    objects = [WAIT, regional, claim("data", "pv-r"), csi_node("migrated", GCE_PD)]
    assert filter_all(objects, nodes)[1] == as_status(
        "could not translate pv: failed to get region from zones: "
        "multiple or no regions gotten from zones, got: map[us-central1:{} us-east1:{}]"
    )


def test_pre_bind_checks_the_chosen_pv_as_the_csi_driver_sees_it() -> None:
    """Filter matches an unbound claim's PV by its in-tree affinity (FindMatchingVolume does
    not translate); PreBind's checkBindings translates it: on a migrated node without the
    driver's zone label the binding fails there, after its API writes, as upstream."""
    pv = in_tree_pv("pv-gce", GCE, labels={BETA_ZONE: "us-central1-a"},
                    terms=[[(BETA_ZONE, ["us-central1-a"])]])  # fmt: skip
    results = {}
    for name, labels in (
        ("legacy", {BETA_ZONE: "us-central1-a"}),
        ("both", {BETA_ZONE: "us-central1-a", GKE_ZONE: "us-central1-a"}),
    ):
        node = make_node(name, **labels)
        handle = storage_handle([node], [], [WAIT, pv, claim("data"), csi_node(name, GCE_PD)])
        plugin = new(None, handle, DEFAULT_FEATURES)
        state = CycleState()
        pod = make_pod("p").pvc("data").obj()
        assert plugin.pre_filter(state, pod, [])[1] == SUCCESS
        assert plugin.filter(state, pod, NodeInfo(node)) == SUCCESS
        assert plugin.reserve(state, pod, name) == SUCCESS
        results[name] = plugin.pre_bind(state, pod, name)
        bound = handle.object_lister().storage().persistent_volume("pv-gce")
        assert bound.spec.claim_ref.name == "data"  # written before the check, not rolled back
    assert results == {
        "legacy": as_status(
            'binding volumes: pv "pv-gce" node affinity doesn\'t match node "legacy": '
            "no matching NodeSelectorTerms"
        ),
        "both": SUCCESS,
    }


# -- csi-translation-lib -------------------------------------------------------------------


def affinity_of(pv: PersistentVolume) -> list[list[tuple[str, str, list[str]]]]:
    assert pv.spec.node_affinity is not None and pv.spec.node_affinity.required is not None
    return [
        [(e.key, e.operator, e.values) for e in t.match_expressions]
        for t in pv.spec.node_affinity.required.node_selector_terms
    ]


TOPOLOGY: list[Any] = [
    ("GA zone affinity renamed", GCE, {}, [[(ZONE, ["a"])], [(ZONE, ["b"]), ("x", ["y"])]],
     [[(GKE_ZONE, "In", ["a"])], [(GKE_ZONE, "In", ["b"]), ("x", "In", ["y"])]]),
    ("legacy zone and region renamed, region to GA", GCE, {},
     [[(BETA_ZONE, ["a"]), (BETA_REGION, ["r"])]],
     [[(GKE_ZONE, "In", ["a"]), (REGION, "In", ["r"])]]),
    ("GA zone wins over legacy: legacy kept", EBS, {},
     [[(ZONE, ["a"]), (BETA_ZONE, ["a"]), (BETA_REGION, ["r"])]],
     [[(EBS_ZONE, "In", ["a"]), (BETA_ZONE, "In", ["a"]), (BETA_REGION, "In", ["r"])]]),
    ("zones from the label, trimmed, distinct, sorted, to every term", EBS,
     {ZONE: "b__ a__b__"}, [[("x", ["1"])], [("y", ["2"])]],
     [[("x", "In", ["1"]), (EBS_ZONE, "In", ["a", "b"])],
      [("y", "In", ["2"]), (EBS_ZONE, "In", ["a", "b"])]]),
    ("a term made for the label's zones", {"cinder": {"volumeID": "c"}}, {BETA_ZONE: "z"}, None,
     [[("topology.cinder.csi.openstack.org/zone", "In", ["z"])]]),
    ("Azure Disk keeps its affinity",
     {"azureDisk": {"diskName": "d", "diskURI": "u", "kind": "Managed"}}, {ZONE: "z"},
     [[(ZONE, ["z"])]], [[(ZONE, "In", ["z"])]]),
    ("Portworx keeps its affinity", {"portworxVolume": {"volumeID": "p"}}, {},
     [[(ZONE, ["z"])]], [[(ZONE, "In", ["z"])]]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("source", "labels", "terms", "want"),
    [pytest.param(*case[1:], id=case[0]) for case in TOPOLOGY],
)
def test_translation_moves_zone_affinity_to_the_drivers_topology_key(
    source: dict[str, Any],
    labels: dict[str, str],
    terms: list[list[tuple[str, list[str]]]] | None,
    want: list[list[tuple[str, str, list[str]]]],
) -> None:
    pv = in_tree_pv("pv", source, labels=labels, terms=terms)
    translated = translate_in_tree_pv_to_csi(pv)
    assert affinity_of(translated) == want
    assert translated.spec.csi is not None
    for field in ("gce_persistent_disk", "aws_elastic_block_store", "cinder", "azure_disk"):
        assert getattr(translated.spec, field) is None
    assert pv.spec.csi is None  # the input is left as it was


@pytest.mark.parametrize(
    ("labels", "handle"),
    [
        ({BETA_ZONE: "us-central1-a", ZONE: "us-east1-b"}, "zones/us-central1-a/disks/disk-1"),
        ({ZONE: "us-east1-b"}, "zones/us-east1-b/disks/disk-1"),
        ({ZONE: "us-east1-b__us-east1-c"}, "regions/us-east1/disks/disk-1"),
        ({}, "zones/UNSPECIFIED/disks/disk-1"),
    ],
    ids=["legacy label first", "GA label", "regional", "unspecified"],
)  # fmt: skip
def test_a_gce_pd_gets_the_csi_drivers_volume_handle(labels: dict[str, str], handle: str) -> None:
    translated = translate_in_tree_pv_to_csi(in_tree_pv("pv", GCE, labels=labels))
    assert translated.spec.csi is not None
    assert (translated.spec.csi.driver, translated.spec.csi.volume_handle) == (
        "pd.csi.storage.gke.io",
        f"projects/UNSPECIFIED/{handle}",
    )


def test_ebs_volume_ids_and_gce_regions_parse_as_upstream() -> None:
    assert ebs_volume_id("vol-1") == "vol-1"
    assert ebs_volume_id("aws://us-east-1a/vol-0abc") == "vol-0abc"
    assert ebs_volume_id("aws:///vol-0abc") == "vol-0abc"
    with pytest.raises(TranslationError) as err:
        ebs_volume_id("aws://us-east-1a/disk-1")
    assert str(err.value) == (
        "failed to translate Kubernetes ID to EBS Volume ID "
        "Invalid format for AWS volume (aws://us-east-1a/disk-1)"
    )
    assert gce_region_from_zones(["us-east1-b", "us-east1-c"]) == "us-east1"
    with pytest.raises(TranslationError) as err:
        gce_region_from_zones(["zone1"])
    assert str(err.value) == (
        "zone in unexpected format, expected: {locale}-{region}-{zone}, got: zone1"
    )


def test_migration_is_on_for_the_plugins_upstream_lists() -> None:
    """isCSIMigrationOnForPlugin (v1.35): not vSphere nor Azure File, though translatable."""
    on = {p for p in ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                      "kubernetes.io/cinder", "kubernetes.io/portworx-volume",
                      "kubernetes.io/vsphere-volume", "kubernetes.io/azure-file")
          if is_csi_migration_on_for_plugin(p)}  # fmt: skip
    assert on == {"kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", "kubernetes.io/azure-disk",
                  "kubernetes.io/cinder", "kubernetes.io/portworx-volume"}  # fmt: skip
