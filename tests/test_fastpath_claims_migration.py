"""Pods with claims bound to in-tree volumes (EBS, GCE PD), on nodes whose CSINodes migrated
those plugins or not: VolumeBinding checks such a PV as its CSI driver sees it on a migrated
node (``csi_migration``), so its answer depends on the node's CSINode as well as its labels.
The fast path broadcasts the binder's answer per distinct value of both
(``kernels/volumes.py``, ``VolumeBinder.csi_node_view``); it decides as the reference path,
decision for decision, and the binder's memoised answers are its fresh ones on every node.

The random scenarios are ``test_fastpath_claims.storage_scenarios(migration=True)``: CSINodes
with no annotation, an empty one, or one listing either plugin or both; nodes with and without
the legacy zone label and the drivers' zone labels; in-tree PVs with GA or legacy zone
affinity, with zone labels only, or with an EBS ID the translation refuses.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from claims_harness import (
    assert_lean_decides_as_detailed,
    binder_answers_as_afresh,
    decide_both_ways,
    derandomized,
)
from test_fastpath_claims import _obj, storage_scenarios
from topospread.framework.config import default_config
from topospread.plugins.volumebinding import ERR_REASON_NODE_CONFLICT
from topospread.simulator.scenario import Scenario

MIGRATION: Counter[str] = Counter()


def in_tree_claims(scenario: Scenario) -> set[str]:
    """The claims bound to in-tree PVs."""
    return {
        o.spec.claim_ref.name
        for o in scenario.objects
        if getattr(o, "kind", "") == "PersistentVolume"
        and (o.spec.aws_elastic_block_store or o.spec.gce_persistent_disk)
        and o.spec.claim_ref is not None
    }


@derandomized(150)
@given(storage_scenarios(migration=True), st.integers(0, 3), st.sampled_from([None, 50]))
def test_pods_with_in_tree_claims_decide_on_the_fast_path_as_on_the_reference_path(
    scenario: Scenario, seed: int, percentage: int | None
) -> None:
    reference, fast = decide_both_ways(scenario, seed, percentage)
    assert [d.pod.status.nominated_node_name for d in fast.attempts] == [
        d.pod.status.nominated_node_name for d in reference.attempts
    ]
    assert_lean_decides_as_detailed(scenario, seed, percentage, fast)
    in_tree = in_tree_claims(scenario)
    for d in fast.attempts:
        claims = {v.persistent_volume_claim.claim_name for v in d.pod.spec.volumes
                  if v.persistent_volume_claim is not None}  # fmt: skip
        if claims & in_tree:
            MIGRATION["placed" if d.node else "failed"] += 1


@derandomized(150)
@given(storage_scenarios(migration=True))
def test_the_binders_answer_per_node_view_is_its_answer_node_by_node_with_migrated_csinodes(
    scenario: Scenario,
) -> None:
    """The binder's answer per node view (labels and the CSINode's migrated plugins) is the
    one it gives afresh on every node, migrated or not."""
    for kept, answers in binder_answers_as_afresh(scenario):
        if not kept.csi_plugins:
            continue
        MIGRATION["shared"] += len(kept.by_labels) < len(answers)
        for node, got in answers:
            migrated = node.metadata.name in migrated_nodes(scenario, kept.csi_plugins)
            outcome = (
                "error"
                if isinstance(got[0], str)
                else "conflict"
                if ERR_REASON_NODE_CONFLICT in got[1]
                else "other"
                if got[1]
                else "pass"
            )
            MIGRATION[f"{'migrated' if migrated else 'in-tree'} {outcome}"] += 1


def migrated_nodes(scenario: Scenario, plugins: frozenset[str]) -> set[str]:
    """The nodes whose CSINode migrated one of ``plugins``."""
    out = set()
    for o in scenario.objects:
        if getattr(o, "kind", "") == "CSINode":
            listed = o.metadata.annotations.get("storage.alpha.kubernetes.io/migrated-plugins", "")
            if plugins & set(listed.split(",")):
                out.add(o.metadata.name)
    return out


def test_in_tree_claims_were_decided_on_migrated_and_other_nodes() -> None:
    """The equivalences above saw every outcome: pods with in-tree claims placed and failed;
    on migrated nodes the translated PV passing, conflicting and failing to translate; on the
    others the in-tree PV passing and conflicting; and answers shared between nodes."""
    if not MIGRATION["placed"]:
        test_pods_with_in_tree_claims_decide_on_the_fast_path_as_on_the_reference_path()
    if not MIGRATION["shared"]:
        test_the_binders_answer_per_node_view_is_its_answer_node_by_node_with_migrated_csinodes()
    print(MIGRATION)
    assert MIGRATION["placed"] > 20 and MIGRATION["failed"] > 20
    for outcome in ("migrated pass", "migrated conflict", "in-tree pass", "in-tree conflict"):
        assert MIGRATION[outcome] > 10, outcome
    assert MIGRATION["migrated error"] > 0  # rarer: an EBS PV with a bad ID, EBS migrated
    assert MIGRATION["shared"] > 10


def _bad_ebs_id_scenario() -> Scenario:
    """n0 migrated EBS and holds a pod the queued one repels (InterPodAffinity, a vectorised
    filter after VolumeBinding); the queued pod's claim is bound to an EBS PV whose ID does
    not translate; n1 has no CSINode."""
    node_objs = [
        _obj({"kind": "Node", "apiVersion": "v1", "metadata": {"name": n, "labels": {
            "kubernetes.io/hostname": n, "topology.kubernetes.io/zone": "z0"}},
            "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
        for n in ("n0", "n1")
    ]  # fmt: skip
    container = [{"name": "c", "image": "web:1"}]
    bound = _obj({"kind": "Pod", "apiVersion": "v1",
                  "metadata": {"name": "b0", "namespace": "default", "labels": {"app": "a"}},
                  "spec": {"nodeName": "n0", "containers": container}})  # fmt: skip
    repel = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "a"}},
         "topologyKey": "kubernetes.io/hostname"}]}}  # fmt: skip
    volumes = [{"name": "v0", "persistentVolumeClaim": {"claimName": "data"}}]
    queued = _obj({"kind": "Pod", "apiVersion": "v1",
                   "metadata": {"name": "q0", "namespace": "default"},
                   "spec": {"containers": container, "affinity": repel,
                            "volumes": volumes}})  # fmt: skip
    objects = [
        _obj({"kind": "CSINode", "apiVersion": "storage.k8s.io/v1",
              "metadata": {"name": "n0", "annotations": {
                  "storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/aws-ebs"}},
              "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "n0"}]}}),
        _obj({"kind": "PersistentVolume", "apiVersion": "v1", "metadata": {"name": "pv"},
              "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                       "claimRef": {"namespace": "default", "name": "data"},
                       "awsElasticBlockStore": {"volumeID": "aws://z0/disk-pv"}},
              "status": {"phase": "Bound"}}),
        _obj({"kind": "PersistentVolumeClaim", "apiVersion": "v1",
              "metadata": {"name": "data", "namespace": "default",
                           "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
              "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv",
                       "resources": {"requests": {"storage": "1Gi"}}},
              "status": {"phase": "Bound"}}),
    ]  # fmt: skip
    return Scenario(nodes=node_objs, pods=[bound], queue=[queued], objects=objects,
                    config=default_config())  # fmt: skip


def test_an_ebs_id_that_does_not_translate_errs_alike_with_and_without_detail() -> None:
    """VolumeBinding's translation error on n0 ends the reference's cycle, though a later
    filter rejects n0: the fast path's run without detail does not skip the deferred filter
    there and place the pod on n1 (it did: its search asked the deferred filters only about
    nodes every vectorised filter passed)."""
    scenario = _bad_ebs_id_scenario()
    reference, fast = decide_both_ways(scenario, 0)
    (attempt,) = reference.attempts
    assert attempt.node is None
    assert attempt.message == (
        'running "VolumeBinding" filter plugin: could not translate pv: failed to translate '
        "Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://z0/disk-pv)"
    )
    assert_lean_decides_as_detailed(scenario, 0, None, fast)
