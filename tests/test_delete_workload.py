"""``deleteWorkload``: a workload deleted as ``kubectl delete`` deletes it — the garbage
collector takes its dependents (a Deployment's ReplicaSets, every pod they own) and a
StatefulSet's claims when its persistentVolumeClaimRetentionPolicy.whenDeleted is Delete; with
Retain (the default) the claims and their volumes stay, and a set created again reuses them."""

from __future__ import annotations

from typing import Any

import pytest

from test_timeline import deployment, zones
from topospread.errors import ManifestError
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.actions import apply_step

CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "zonal", "annotations": {"storageclass.kubernetes.io/is-default-class":
                                                  "true"}},
    "provisioner": "ebs.csi.aws.com",
    "volumeBindingMode": "WaitForFirstConsumer",
}  # fmt: skip


def database(when_deleted: str | None, replicas: int = 3) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": "db",
        "selector": {"matchLabels": {"app": "db"}},
        "template": {
            "metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "postgres:17"}]},
        },
        "volumeClaimTemplates": [
            {
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "10Gi"}},
                },
            }
        ],
    }
    if when_deleted is not None:
        spec["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": when_deleted}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
            "spec": spec}  # fmt: skip


def run_steps(objects: list[Any], steps: list[Any]) -> tuple[Simulation, list[list[str]]]:
    scenario = parse_timeline(
        {"nodeGroups": zones(), "objects": objects, "timeline": steps}, "t.yaml"
    )
    sim = Simulation(scenario)
    sim.settle("t.yaml")
    events = []
    for step in scenario.steps:
        events.append(apply_step(sim, step).events)
        sim.settle(step.where)
    return sim, events


def claims(sim: Simulation) -> list[str]:
    return sorted(sim.cluster.storage_state.pvcs)


def volumes_of(sim: Simulation) -> dict[str, str]:
    return {k: c.spec.volume_name for k, c in sim.cluster.storage_state.pvcs.items()}


def test_whenDeleted_Delete_deletes_the_sets_pods_claims_and_their_volumes() -> None:
    sim, (events,) = run_steps([CLASS, database("Delete")], [{"deleteWorkload": "sts/db"}])
    assert not sim.pods
    assert claims(sim) == []
    assert sim.cluster.storage_state.pvs == {}  # provisioned, reclaim policy Delete
    assert ("StatefulSet", "default", "db") not in sim.workloads
    assert events == [
        "deleted statefulset default/db",
        "the garbage collector deleted 3 pods (default/db-0, default/db-1, default/db-2)",
        "the garbage collector deleted 3 claims (default/data-db-0, default/data-db-1, "
        "default/data-db-2) (whenDeleted: Delete)",
    ]


@pytest.mark.parametrize("policy", ["Retain", None])
def test_whenDeleted_Retain_keeps_the_claims_bound_and_a_new_set_reuses_them(
    policy: str | None,
) -> None:
    sim, _ = run_steps([CLASS, database(policy)], [])
    before = volumes_of(sim)
    assert len(before) == 3 and all(before.values())
    sim, (deleted, recreated) = run_steps(
        [CLASS, database(policy)], [{"deleteWorkload": "sts/db"}, {"apply": database(policy)}]
    )
    assert deleted[-1] == (
        "kept 3 claims (default/data-db-0, default/data-db-1, default/data-db-2) "
        "(whenDeleted: Retain)"
    )
    assert "deleted 3 claims" not in " ".join(deleted)
    assert recreated == ["created statefulset default/db"]
    # The same claims, bound to the same volumes; each replica back in its volume's zone.
    assert volumes_of(sim) == before
    assert len(sim.pods) == 3 and all(p.spec.node_name for p in sim.pods.values())
    storage = sim.cluster.storage_state
    for pod in sim.pods.values():
        claim = storage.pvcs[f"default/data-{pod.metadata.name}"]
        pv = storage.pvs[claim.spec.volume_name]
        zone = sim.cluster.infos[pod.spec.node_name].node.metadata.labels[
            "topology.kubernetes.io/zone"
        ]
        terms = pv.spec.node_affinity.required.node_selector_terms  # type: ignore[union-attr]
        assert any(zone in e.values for t in terms for e in t.match_expressions)


def test_deleting_a_deployment_deletes_its_replica_sets_and_their_pods_and_nothing_else() -> None:
    sim, (events,) = run_steps(
        [deployment(4), deployment(2, name="other")], [{"deleteWorkload": "deployment/web"}]
    )
    assert sorted(k[0] for k in sim.workloads) == ["Deployment", "ReplicaSet"]
    assert len(sim.pods) == 2
    assert all(p.metadata.labels["app"] == "other" for p in sim.pods.values())
    assert events[0] == "deleted deployment default/web"
    assert events[1].startswith("the garbage collector deleted replicaset default/web-")
    assert events[2].startswith("the garbage collector deleted 4 pods (default/web-")


def test_deleting_an_unknown_workload_names_the_known_ones() -> None:
    with pytest.raises(ManifestError) as err:
        run_steps([deployment(1)], [{"deleteWorkload": "sts/db"}])
    assert str(err.value).startswith(
        't.yaml: timeline[0] (deleteWorkload): workload: Not found: "sts/db": no such workload '
        "(known: deployment/web, replicaset/web-"
    )


def test_a_delete_workload_step_takes_a_workload_reference() -> None:
    with pytest.raises(ManifestError) as err:
        parse_timeline({"nodeGroups": zones(), "timeline": [{"deleteWorkload": {"x": 1}}]}, "t")
    assert str(err.value) == (
        "t: timeline[0] (deleteWorkload): expected a workload, [namespace/]kind/name"
    )
