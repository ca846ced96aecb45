"""A StatefulSet's volumeClaimTemplates: a claim per ordinal, the pod's volume using it, the
default StorageClass given to a claim that names none; and ``check`` on cockroachdb's
StatefulSet from kubernetes/examples giving a verdict with the scheduler's reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from topospread.analysis.check import Shape, check
from topospread.api.loader import load_text
from topospread.simulator.controllers.claims import (
    admit_claim,
    get_persistent_volume_claims,
)

DATA = Path(__file__).resolve().parent / "data"
COCKROACH = (DATA / "cockroachdb-statefulset.yaml").read_text()
DEFAULT_CLASS = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: pd.csi.storage.gke.io
volumeBindingMode: WaitForFirstConsumer
"""
SHAPE = Shape(zones=3, nodes_per_zone=2)


def objects(text: str) -> list[tuple[str, Any]]:
    return [(f"in.yaml: object {i + 1}", o) for i, o in enumerate(load_text(text, "in.yaml"))]


def statefulset() -> Any:
    return next(o for _, o in objects(COCKROACH) if o.kind == "StatefulSet")


def test_each_ordinal_gets_a_claim_named_after_template_set_and_ordinal() -> None:
    (claim,) = get_persistent_volume_claims(statefulset(), 2)
    assert (claim.metadata.name, claim.metadata.namespace) == ("datadir-cockroachdb-2", "default")
    assert claim.metadata.labels == {"app": "cockroachdb"}
    assert claim.spec.access_modes == ["ReadWriteOnce"]
    assert claim.spec.storage_class_name is None


def test_a_claim_naming_no_class_gets_the_default_class() -> None:
    (claim,) = get_persistent_volume_claims(statefulset(), 0)
    classes = [o for _, o in objects(DEFAULT_CLASS)]
    assert admit_claim(claim, classes).spec.storage_class_name == "standard"
    assert admit_claim(claim, []).spec.storage_class_name is None


def test_check_on_cockroachdb_without_a_storage_class_names_the_unbound_claims() -> None:
    report = check(objects(COCKROACH), source="in.yaml", shape=SHAPE)
    assert not report.passed
    assert [f.rule for f in report.findings if f.rule == "not-modelled"] == []
    (pending,) = [f for f in report.errors if f.rule == "pending"]
    assert pending.obj == "StatefulSet default/cockroachdb"
    assert "pod has unbound immediate PersistentVolumeClaims" in pending.message


def test_check_on_cockroachdb_with_a_default_wait_for_first_consumer_class_passes() -> None:
    report = check(objects(COCKROACH + "---\n" + DEFAULT_CLASS), source="in.yaml", shape=SHAPE)
    assert report.passed, [f.message for f in report.findings]
    assert report.placed is not None


def test_the_pods_use_their_ordinals_claims_and_the_claims_exist() -> None:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    doc = {"nodeGroups": SHAPE.node_groups()}
    scenario = with_cluster(parse_timeline(doc, "t"), objects(COCKROACH + "---\n" + DEFAULT_CLASS))
    sim = Simulation(scenario, seed=0)
    sim.settle("t")
    pods = sorted(k for k, p in sim.pods.items() if p.spec.node_name)
    assert pods == [f"default/cockroachdb-{i}" for i in range(3)]
    pod = sim.pods["default/cockroachdb-1"]
    (volume,) = pod.spec.volumes
    assert volume.persistent_volume_claim is not None
    assert volume.persistent_volume_claim.claim_name == "datadir-cockroachdb-1"
    claim = sim.cluster.storage().persistent_volume_claim("default", "datadir-cockroachdb-1")
    assert claim is not None and claim.spec.storage_class_name == "standard"
    assert claim.metadata.annotations["volume.kubernetes.io/selected-node"] == pod.spec.node_name


def test_a_snapshot_carries_the_storage_and_its_restores_are_independent() -> None:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    doc = {"nodeGroups": SHAPE.node_groups()}
    scenario = with_cluster(parse_timeline(doc, "t"), objects(COCKROACH + "---\n" + DEFAULT_CLASS))
    sim = Simulation(scenario, seed=0)
    sim.settle("t")
    storage = sim.cluster.storage_state
    snap = sim.snapshot()
    first, second = snap.restore(), snap.restore()
    assert first.cluster.storage_state.pvcs == storage.pvcs
    assert sorted(first.cluster.storage_state.pvs) == sorted(storage.pvs)
    assert len(storage.pvs) == 3  # one provisioned volume per ordinal
    first.cluster.storage_state.pvcs.clear()
    assert second.cluster.storage_state.pvcs == storage.pvcs
    # The provisioner of a restored copy looks up its own cluster's nodes.
    node = next(iter(second.cluster.infos))
    assert second.cluster.storage_state.node_of is not None
    assert second.cluster.storage_state.node_of(node) is second.cluster.infos[node].node


@pytest.mark.parametrize(("policy", "kept"), [(None, True), ("Retain", True), ("Delete", False)])
def test_scaling_down_deletes_the_ordinals_claims_only_when_the_policy_says_delete(
    policy: str | None, kept: bool
) -> None:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    text = COCKROACH + "---\n" + DEFAULT_CLASS
    if policy is not None:
        text = text.replace(
            "  volumeClaimTemplates:",
            f"  persistentVolumeClaimRetentionPolicy: {{whenScaled: {policy}}}\n"
            "  volumeClaimTemplates:",
        )
    doc = {"nodeGroups": SHAPE.node_groups()}
    sim = Simulation(with_cluster(parse_timeline(doc, "t"), objects(text)), seed=0)
    sim.settle("t")
    storage = sim.cluster.storage_state
    volume = storage.pvcs["default/datadir-cockroachdb-2"].spec.volume_name
    assert volume in storage.pvs
    sts = next(o for _, o in objects(text) if o.kind == "StatefulSet")
    scaled = msgspec.structs.replace(sts, spec=msgspec.structs.replace(sts.spec, replicas=2))
    sim.apply(scaled, "t")
    sim.settle("t")
    assert "default/cockroachdb-2" not in sim.pods
    assert ("default/datadir-cockroachdb-2" in storage.pvcs) is kept
    assert (volume in storage.pvs) is kept  # the provisioned volume's reclaim policy: Delete
    assert "default/datadir-cockroachdb-1" in storage.pvcs


def test_schedule_pods_expands_a_statefulset_with_its_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from topospread.cli import main

    node = tmp_path / "nodes.yaml"
    node.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {kubernetes.io/hostname: n1,"
        " topology.kubernetes.io/zone: a}}\n"
        'status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}\n'
    )
    sc = tmp_path / "sc.yaml"
    sc.write_text(DEFAULT_CLASS)
    argv = ["schedule", "--nodes", str(node), "--pods", str(DATA / "cockroachdb-statefulset.yaml")]
    with pytest.raises(SystemExit):
        main([*argv, "--pods", str(sc)])
    out = capsys.readouterr().out
    assert "default/cockroachdb-2  -> n1" in out
    with pytest.raises(SystemExit):
        main(argv)
    assert "pod has unbound immediate PersistentVolumeClaims" in capsys.readouterr().out


def test_a_generic_ephemeral_volume_gets_its_claim_and_loses_it_with_the_pod() -> None:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    deployment = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: scratch}
spec:
  replicas: 2
  selector: {matchLabels: {app: s}}
  template:
    metadata: {labels: {app: s}}
    spec:
      containers: [{name: c, image: x}]
      volumes:
      - name: tmp
        ephemeral:
          volumeClaimTemplate:
            metadata: {labels: {kind: scratch}}
            spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""
    doc = {"nodeGroups": SHAPE.node_groups()}
    text = deployment + "---\n" + DEFAULT_CLASS
    sim = Simulation(with_cluster(parse_timeline(doc, "t"), objects(text)), seed=0)
    sim.settle("t")
    bound = [p for p in sim.pods.values() if p.spec.node_name]
    assert len(bound) == 2
    storage = sim.cluster.storage_state
    pod = bound[0]
    claim = storage.pvcs[f"default/{pod.metadata.name}-tmp"]
    assert claim.metadata.labels == {"kind": "scratch"}
    assert claim.metadata.owner_references[0].uid == pod.metadata.uid
    assert claim.spec.volume_name in storage.pvs  # provisioned where the pod landed
    sim.delete_pod(pod)
    assert f"default/{pod.metadata.name}-tmp" not in storage.pvcs


def _storage_warnings(text: str) -> list[tuple[str, str]]:
    report = check(objects(text), source="in.yaml", shape=SHAPE)
    return [
        (f.rule, f.message)
        for f in report.warnings
        if f.rule in ("storage-class", "immediate-binding")
    ]


def test_check_warns_when_no_storage_class_is_given_for_the_claims() -> None:
    ((rule, message),) = _storage_warnings(COCKROACH)
    assert rule == "storage-class"
    assert message.startswith(
        "volumeClaimTemplates[0] (datadir): names no storageClassName and no default "
        "StorageClass is given"
    )


def test_check_is_quiet_about_storage_with_a_wait_for_first_consumer_default() -> None:
    assert _storage_warnings(COCKROACH + "---\n" + DEFAULT_CLASS) == []


def test_check_warns_of_an_immediate_class_yet_places_the_pods_on_provisioned_volumes() -> None:
    immediate = DEFAULT_CLASS.replace("WaitForFirstConsumer", "Immediate")
    ((rule, message),) = _storage_warnings(COCKROACH + "---\n" + immediate)
    assert rule == "immediate-binding"
    assert 'StorageClass "standard" binds Immediate' in message
    report = check(objects(COCKROACH + "---\n" + immediate), source="in.yaml", shape=SHAPE)
    # The claims are provisioned before the pods (none left "unbound immediate"), and
    # cockroachdb has no hard spread for their zones to collide with.
    assert report.errors == [] and report.placed is not None


def test_check_warns_of_a_storage_class_nobody_gives() -> None:
    named = COCKROACH.replace(
        "      accessModes:", "      storageClassName: fast\n      accessModes:", 1
    )
    ((rule, message),) = _storage_warnings(named + "---\n" + DEFAULT_CLASS)
    assert rule == "storage-class"
    assert message.startswith('volumeClaimTemplates[0] (datadir): StorageClass "fast" is not given')


@pytest.mark.parametrize(("when_deleted", "owned"), [("Delete", True), ("Retain", False)])
def test_when_deleted_delete_makes_the_set_an_owner_of_its_claims(
    when_deleted: str, owned: bool
) -> None:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    text = (
        COCKROACH.replace(
            "  volumeClaimTemplates:",
            f"  persistentVolumeClaimRetentionPolicy: {{whenDeleted: {when_deleted}}}\n"
            "  volumeClaimTemplates:",
        )
        + "---\n"
        + DEFAULT_CLASS
    )
    sim = Simulation(
        with_cluster(parse_timeline({"nodeGroups": SHAPE.node_groups()}, "t"), objects(text)),
        seed=0,
    )
    sim.settle("t")
    pod = sim.pods["default/cockroachdb-0"]
    (controller,) = [r for r in pod.metadata.owner_references if r.controller]
    claim = sim.cluster.storage_state.pvcs["default/datadir-cockroachdb-0"]
    refs = [
        (r.api_version, r.kind, r.name, r.uid, r.controller, r.block_owner_deletion)
        for r in claim.metadata.owner_references
    ]
    # The set's controller reference (metav1.NewControllerRef), as updateClaimOwnerRefForSetAndPod
    # adds it since kubernetes#122499 (v1.31).
    expected = [("apps/v1", "StatefulSet", "cockroachdb", controller.uid, True, True)]
    if not owned:
        expected = []
    assert refs == expected and controller.uid


def test_a_claim_made_anew_after_scale_down_gets_a_new_volume_not_the_released_one() -> None:
    # whenScaled: Delete with a Retain class: the scaled-away ordinal's volume is Released,
    # still referring to the deleted claim by uid; the claim the controller makes on scale-up
    # is another object (a new uid), which upstream's matching passes the Released volume by.
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    retain = DEFAULT_CLASS.replace("volumeBindingMode", "reclaimPolicy: Retain\nvolumeBindingMode")
    text = (COCKROACH + "---\n" + retain).replace(
        "  volumeClaimTemplates:",
        "  persistentVolumeClaimRetentionPolicy: {whenScaled: Delete}\n  volumeClaimTemplates:",
    )
    sim = Simulation(with_cluster(parse_timeline({"nodeGroups": SHAPE.node_groups()}, "t"),
                                  objects(text)), seed=0)  # fmt: skip
    sim.settle("t")
    storage = sim.cluster.storage_state
    old = storage.pvcs["default/datadir-cockroachdb-2"]
    assert old.metadata.uid and old.spec.volume_name == f"pvc-{old.metadata.uid}"
    sts = next(o for _, o in objects(text) if o.kind == "StatefulSet")
    for replicas in (2, 3):
        scaled = msgspec.structs.replace(
            sts, spec=msgspec.structs.replace(sts.spec, replicas=replicas)
        )
        sim.apply(scaled, "t")
        sim.settle("t")
    new = storage.pvcs["default/datadir-cockroachdb-2"]
    assert new.metadata.uid not in ("", old.metadata.uid)
    assert new.spec.volume_name == f"pvc-{new.metadata.uid}"
    released = storage.pvs[old.spec.volume_name]
    assert released.status.phase == "Released"
    assert released.spec.claim_ref is not None and released.spec.claim_ref.uid == old.metadata.uid


def test_a_retention_policy_changed_to_delete_makes_the_set_own_its_existing_claims() -> None:
    # ClaimsMatchRetentionPolicy / UpdatePodClaimForRetentionPolicy: each replica's claims are
    # brought to the set's current policy, so whenDeleted: Delete set later still deletes them.
    from topospread.simulator.garbage_collector import delete_workload
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline, with_cluster

    text = COCKROACH + "---\n" + DEFAULT_CLASS
    sim = Simulation(with_cluster(parse_timeline({"nodeGroups": SHAPE.node_groups()}, "t"),
                                  objects(text)), seed=0)  # fmt: skip
    sim.settle("t")
    storage = sim.cluster.storage_state
    assert storage.pvcs["default/datadir-cockroachdb-0"].metadata.owner_references == []
    sts = next(o for _, o in objects(text) if o.kind == "StatefulSet")
    policy = {"whenDeleted": "Delete", "whenScaled": "Retain"}
    changed = msgspec.structs.replace(
        sts,
        spec=msgspec.structs.replace(sts.spec, persistent_volume_claim_retention_policy=policy),
    )
    sim.apply(changed, "t")
    sim.settle("t")
    stored = next(w for w in sim.workloads.values() if w.metadata.name == "cockroachdb")
    claims = [f"default/datadir-cockroachdb-{i}" for i in range(3)]
    for key in claims:
        refs = storage.pvcs[key].metadata.owner_references
        assert [(r.kind, r.name, r.uid) for r in refs] == [
            ("StatefulSet", "cockroachdb", stored.metadata.uid)
        ]
    deleted = delete_workload(sim, stored)
    assert sorted(deleted.claims) == claims
    assert not any(key in storage.pvcs for key in claims)
