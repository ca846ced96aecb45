"""Whole runs with storage: a claim binds to the static PV of the right zone, a claim whose PV
is in a zone without nodes stays Pending with upstream's reason, a missing claim is named."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import msgspec
import pytest

from topospread.analysis.explain import explain
from topospread.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from topospread.api.types import Node, Pod
from topospread.cli import main
from topospread.framework.config import default_config
from topospread.simulator.run import schedule
from topospread.simulator.scenario import Scenario, load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def test_schedule_binds_a_claim_to_the_zonal_pv_and_leaves_the_dark_zone_pod_pending(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["schedule", str(SCENARIOS / "zonal-volumes.yaml"), "-o", "jsonl"])
    assert exit_.value.code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()][1:]
    by_pod = {line["pod"]: line for line in lines}
    assert by_pod["default/db-0"]["node"] == "b1"
    assert by_pod["default/db-1"]["node"] is None
    assert by_pod["default/db-1"]["message"].startswith(
        "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity."
    )
    (attempt,) = by_pod["default/db-1"]["attempts"]
    assert attempt["reasons"]["a1"] == [
        "VolumeBinding: node(s) didn't match PersistentVolume's node affinity"
    ]


def test_binding_writes_the_pv_claim_ref_and_binds_the_claim() -> None:
    run = schedule(load_scenario(SCENARIOS / "zonal-volumes.yaml"))
    storage = run.cluster.storage()
    pv = storage.persistent_volume("pv-b")
    pvc = storage.persistent_volume_claim("default", "data-0")
    assert pv is not None and pv.spec.claim_ref is not None
    assert (pv.spec.claim_ref.namespace, pv.spec.claim_ref.name) == ("default", "data-0")
    assert pv.status.phase == "Bound"
    assert pvc is not None and pvc.spec.volume_name == "pv-b"
    assert pvc.metadata.annotations["pv.kubernetes.io/bind-completed"] == "yes"


def test_a_pod_whose_claim_does_not_exist_is_pending_with_upstreams_not_found_message() -> None:
    node = msgspec.convert(
        {
            "metadata": {"name": "a", "labels": {"kubernetes.io/hostname": "a"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        Node,
    )
    pod = msgspec.convert(
        {
            "metadata": {"name": "v", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d0"}}],
            },
        },
        Pod,
    )
    run = schedule(
        Scenario(nodes=[node], pods=[], queue=[pod], objects=[], config=default_config())
    )
    # VolumeRestrictions' PreFilter runs first and names the claim; DynamicResources' PostFilter
    # then finds no state of its own (upstream appends its bare "not found").
    assert run.outcomes[0].message == (
        '0/1 nodes are available: persistentvolumeclaim "d0" not found. not found'
    )


def test_explain_shows_the_volume_reasons_on_every_node_as_they_stood_at_the_attempt() -> None:
    explanation = explain(load_scenario(SCENARIOS / "zonal-volumes.yaml"), "db-1")
    assert explanation.node is None
    assert explanation.pre_filter["VolumeBinding"] == "Success"  # the claim was found
    assert {v.node: v.filters["VolumeBinding"] for v in explanation.nodes} == {
        "a1": "UnschedulableAndUnresolvable: node(s) didn't match PersistentVolume's node affinity",
        "b1": "UnschedulableAndUnresolvable: node(s) didn't match PersistentVolume's node affinity",
    }
    assert explanation.nodes[0].filters["VolumeZone"] == (
        "UnschedulableAndUnresolvable: node(s) had no available volume zone"
    )


def test_explain_says_where_the_pods_volume_is_when_no_node_is_there() -> None:
    explanation = explain(load_scenario(SCENARIOS / "zonal-volumes.yaml"), "db-1")
    changes = [(s.change, s.lands_on) for s in explanation.suggestions]
    assert changes == [
        (
            "the pod's volume (pv-c) is in topology.kubernetes.io/zone=c: add a node there like a1",
            "a1-new-1",
        )
    ]


def test_a_zone_outage_keeps_the_pinned_replica_pending_until_the_zone_returns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    example = SCENARIOS.parent / "simulations" / "database-zone-outage.yaml"
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", str(example), "-o", "json"])
    assert exit_.value.code == 0
    report = json.loads(capsys.readouterr().out)
    steps = report["steps"]
    assert steps[0]["bound"]["default/db-1"].startswith("node-zone-c-")
    (pending,) = steps[2]["pending"]
    assert pending["pod"] == "default/db-1"
    assert "4 node(s) didn't match PersistentVolume's node affinity" in pending["message"]
    assert steps[3]["placed"]["default/db-1"].startswith("node-zone-c-")


def test_the_readme_shows_what_schedule_prints_for_the_zonal_volumes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    readme = (SCENARIOS.parents[1] / "README.md").read_text()
    command = "$ topospread schedule examples/scenarios/zonal-volumes.yaml\n"
    shown = readme.split(command, 1)[1].split("\n```", 1)[0]
    with pytest.raises(SystemExit):
        main(["schedule", str(SCENARIOS / "zonal-volumes.yaml")])
    assert capsys.readouterr().out.rstrip("\n") == shown


def _local_pv_scenario(nodes: list[Node]) -> Scenario:
    """A pod whose claim is bound to a local PV pinned to ``kubernetes.io/hostname=host-a``."""
    objects = [
        msgspec.convert(o, t)
        for t, o in [
        (StorageClass, {"metadata": {"name": "local"},
                        "provisioner": "kubernetes.io/no-provisioner",
                        "volumeBindingMode": "WaitForFirstConsumer"}),
        (PersistentVolume, {"metadata": {"name": "pv-a"},
         "spec": {"storageClassName": "local", "capacity": {"storage": "1Gi"},
                  "accessModes": ["ReadWriteOnce"], "local": {"path": "/mnt/a"},
                  "claimRef": {"namespace": "default", "name": "d0"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "kubernetes.io/hostname", "operator": "In",
                       "values": ["host-a"]}]}]}}},
         "status": {"phase": "Bound"}}),
        (PersistentVolumeClaim, {
         "metadata": {"name": "d0", "namespace": "default",
                      "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
         "spec": {"storageClassName": "local", "volumeName": "pv-a",
                  "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
         "status": {"phase": "Bound"}}),
        ]
    ]  # fmt: skip
    pod = msgspec.convert(
        {
            "metadata": {"name": "v", "namespace": "default"},
            "spec": {
                "containers": [{"name": "c", "image": "x"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "d0"}}],
            },
        },
        Pod,
    )
    return Scenario(nodes=nodes, pods=[], queue=[pod], objects=objects, config=default_config())


def _node(name: str, hostname: str, *, tainted: bool = False) -> Node:
    raw: dict[str, object] = {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": hostname}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    if tainted:
        raw["spec"] = {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}
    return msgspec.convert(raw, Node)


def test_a_local_pv_pinned_by_hostname_label_schedules_on_a_node_named_otherwise() -> None:
    # Upstream v1.32+ (kubernetes#127584): VolumeBinding's PreFilter no longer takes the
    # hostname label's values for node names; the node's labels satisfy the PV's affinity.
    run = schedule(_local_pv_scenario([_node("node-a.example", "host-a")]))
    assert run.outcomes[0].node == "node-a.example"


def test_nodes_a_local_pv_excludes_are_reported_with_the_node_affinity_reason() -> None:
    nodes = [_node("host-a", "host-a", tainted=True), _node("b", "b"), _node("c", "c")]
    run = schedule(_local_pv_scenario(nodes))
    assert run.outcomes[0].node is None
    assert run.outcomes[0].message.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), "
        "2 node(s) didn't match PersistentVolume's node affinity. "
    )


def test_a_claim_naming_its_class_by_the_beta_annotation_is_provisioned_for_its_node() -> None:
    # GetPersistentVolumeClaimClass reads the beta annotation first: the scheduler provisions
    # the claim for the chosen node, and the provisioner makes its volume of that class.
    claim = msgspec.convert(
        {
            "metadata": {
                "name": "d0",
                "namespace": "default",
                "annotations": {"volume.beta.kubernetes.io/storage-class": "late"},
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
            },
        },
        PersistentVolumeClaim,
    )
    late = msgspec.convert(
        {"metadata": {"name": "late"}, "provisioner": "ebs.csi.aws.com",
         "volumeBindingMode": "WaitForFirstConsumer"},
        StorageClass,
    )  # fmt: skip
    scenario = _local_pv_scenario([_node("a", "a")])
    run = schedule(dataclasses.replace(scenario, objects=[claim, late]))
    assert run.outcomes[0].node == "a"
    bound = run.cluster.storage().persistent_volume_claim("default", "d0")
    assert bound is not None and bound.status.phase == "Bound"
    pv = run.cluster.storage().persistent_volume(bound.spec.volume_name)
    assert pv is not None and pv.spec.storage_class_name == "late"
