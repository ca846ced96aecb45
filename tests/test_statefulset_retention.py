"""A StatefulSet's persistentVolumeClaimRetentionPolicy carried out as upstream does: by owner
references on the claims, which the garbage collector acts on, with the kubernetes.io/pvc-
protection finalizer keeping a claim a bound pod uses. whenScaled: Delete makes a condemned
pod its claims' controller, so they go with the pod (not before), and the volume by its
reclaim policy; a claim still owned by an earlier pod of its ordinal blocks that ordinal's
pod until it is gone; a pod no longer condemned loses its claims again."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from test_delete_workload import CLASS, run_steps
from test_delete_workload import database as delete_workload_database
from topospread.api.storage import PersistentVolumeClaim
from topospread.api.types import OwnerReference, Pod, StatefulSet
from topospread.simulator.controllers.claim_retention import (
    is_claim_owner_up_to_date,
    pod_claim_is_stale,
    update_claim_owner_ref_for_set_and_pod,
)
from topospread.simulator.simulation import Simulation


def database(policy: dict[str, str], replicas: int = 3) -> dict[str, Any]:
    """test_delete_workload's StatefulSet of claims, with this retention policy."""
    doc = delete_workload_database(None, replicas)
    doc["spec"]["persistentVolumeClaimRetentionPolicy"] = policy
    return doc


def reader(claim: str, name: str = "backup") -> dict[str, Any]:
    """A pod that mounts a claim of the set (a backup job's, say)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }


def owners(sim: Simulation, key: str) -> list[tuple[str, str, str, bool | None]]:
    claim = sim.cluster.storage_state.pvcs[key]
    return [(r.kind, r.name, r.uid, r.controller) for r in claim.metadata.owner_references]


def test_a_scaled_away_claim_in_use_stays_terminating_and_blocks_its_ordinal_until_free() -> None:
    objects = [CLASS, database({"whenScaled": "Delete"})]
    steps = [
        {"apply": reader("data-db-2")},
        {"scale": {"workload": "sts/db", "replicas": 2}},
        {"scale": {"workload": "sts/db", "replicas": 3}},
        {"deletePods": "backup"},
    ]
    sim, _ = run_steps(objects, steps[:1])
    storage = sim.cluster.storage_state
    old = storage.pvcs["default/data-db-2"]
    old_pod = sim.pods["default/db-2"]
    assert sim.pods["default/backup"].spec.node_name

    # Scaled to 2: db-2 is gone; its claim, now owned by the pod (its controller), is deleted
    # by the garbage collector but kept Terminating while the backup pod uses it; the volume
    # stays bound.
    sim, _ = run_steps(objects, steps[:2])
    storage = sim.cluster.storage_state
    assert sorted(sim.pods) == ["default/backup", "default/db-0", "default/db-1"]
    claim = storage.pvcs["default/data-db-2"]
    assert claim.metadata.uid == old.metadata.uid
    assert claim.metadata.deletion_timestamp is not None
    assert owners(sim, "default/data-db-2") == [("Pod", "db-2", old_pod.metadata.uid, True)]
    assert storage.pvs[old.spec.volume_name].status.phase == "Bound"
    assert owners(sim, "default/data-db-1") == []

    # Scaled back to 3 while the claim is still there: it names the old db-2, so the
    # controller creates no db-2 (PodClaimIsStale).
    sim, _ = run_steps(objects, steps[:3])
    assert sorted(sim.pods) == ["default/backup", "default/db-0", "default/db-1"]
    assert sim.cluster.storage_state.pvcs["default/data-db-2"].metadata.deletion_timestamp

    # The backup pod goes: so do the claim and its volume (reclaim policy Delete); db-2 comes
    # back with a claim made anew, provisioned a new volume, and runs.
    sim, events = run_steps(objects, steps)
    storage = sim.cluster.storage_state
    assert old.spec.volume_name not in storage.pvs
    new = storage.pvcs["default/data-db-2"]
    assert new.metadata.uid not in ("", old.metadata.uid)
    assert new.metadata.deletion_timestamp is None
    assert new.spec.volume_name == f"pvc-{new.metadata.uid}"
    assert storage.pvs[new.spec.volume_name].status.phase == "Bound"
    assert sorted(sim.pods) == ["default/db-0", "default/db-1", "default/db-2"]
    assert sim.pods["default/db-2"].spec.node_name
    assert events[-1] == ["deleted 1 pod (default/backup)"]


def test_when_deleted_delete_keeps_a_claim_in_use_terminating_until_its_user_goes() -> None:
    retain = {**CLASS, "reclaimPolicy": "Retain"}
    objects = [retain, database({"whenDeleted": "Delete"})]
    steps = [{"apply": reader("data-db-0")}, {"deleteWorkload": "sts/db"}]
    sim, (_, deleted) = run_steps(objects, steps)
    storage = sim.cluster.storage_state
    assert deleted[-1] == (
        "the garbage collector deleted 3 claims (default/data-db-0, default/data-db-1, "
        "default/data-db-2) (whenDeleted: Delete)"
    )
    assert sorted(storage.pvcs) == ["default/data-db-0"]
    assert storage.pvcs["default/data-db-0"].metadata.deletion_timestamp is not None
    assert sorted(pv.status.phase for pv in storage.pvs.values()) == [
        "Bound",
        "Released",
        "Released",
    ]
    sim, _ = run_steps(objects, [*steps, {"deletePods": "backup"}])
    storage = sim.cluster.storage_state
    assert storage.pvcs == {}
    assert [pv.status.phase for pv in storage.pvs.values()] == ["Released"] * 3


def _orphan(name: str, *, node: str | None) -> dict[str, Any]:
    """A pod of the set's name and labels, adopted by it: bound to ``node``, or Pending on a
    node selector no node matches."""
    spec: dict[str, Any] = {
        "containers": [{"name": "db", "image": "postgres:17"}],
        "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}],
    }
    if node is not None:
        spec["nodeName"] = node
    else:
        spec["nodeSelector"] = {"disk": "none"}
    labels = {"app": "db", "statefulset.kubernetes.io/pod-name": name}
    meta = {"name": name, "uid": f"uid-{name}", "labels": labels}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _claim(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }


def test_a_condemned_pod_owns_its_claims_until_the_set_scales_back_up() -> None:
    # db-2, db-3 and db-4 are Pending. Scaled to 2, the controller makes each condemned pod
    # its claims' controller, then deletes the highest first... and waits: db-4 is neither
    # ready nor the first unhealthy pod (db-2). db-4 deleted by hand takes its claim with it.
    # Scaled back to 5, db-2 is no longer condemned: its claim loses the pod's reference and
    # outlives it. (db-3's keeps it: the controller, waiting for db-2, does not reach db-3.)
    objects: list[Any] = [CLASS, database({"whenScaled": "Delete"}, replicas=5)]
    objects += [_orphan("db-0", node="pool-a-1"), _orphan("db-1", node="pool-b-1")]
    objects += [_orphan(f"db-{i}", node=None) for i in (2, 3, 4)]
    objects += [_claim(f"data-db-{i}") for i in range(5)]
    steps: list[Any] = [{"scale": {"workload": "sts/db", "replicas": 2}}]
    sim, _ = run_steps(objects, steps)
    assert sorted(sim.pods) == [f"default/db-{i}" for i in range(5)]
    for i in (2, 3, 4):
        assert owners(sim, f"default/data-db-{i}") == [("Pod", f"db-{i}", f"uid-db-{i}", True)]
    assert owners(sim, "default/data-db-1") == []

    steps.append({"deletePods": "db-4"})
    sim, _ = run_steps(objects, steps)
    assert sorted(sim.pods) == [f"default/db-{i}" for i in range(4)]
    assert sorted(sim.cluster.storage_state.pvcs) == [f"default/data-db-{i}" for i in range(4)]

    steps.append({"scale": {"workload": "sts/db", "replicas": 5}})
    sim, _ = run_steps(objects, steps)
    assert owners(sim, "default/data-db-2") == []
    assert owners(sim, "default/data-db-3") == [("Pod", "db-3", "uid-db-3", True)]
    steps.append({"deletePods": "db-2"})
    sim, _ = run_steps(objects, steps)
    claim = sim.cluster.storage_state.pvcs["default/data-db-2"]
    assert claim.metadata.uid == "uid-data-db-2" and claim.metadata.deletion_timestamp is None


def _set(policy: dict[str, str], replicas: int) -> StatefulSet:
    raw = database(policy, replicas)
    raw["metadata"]["uid"] = "set-uid"
    return msgspec.convert(raw, StatefulSet)


def _pod(ordinal: int, uid: str = "pod-uid") -> Pod:
    return msgspec.convert({"metadata": {"name": f"db-{ordinal}", "uid": uid}}, Pod)


def _ref(kind: str, name: str, uid: str, controller: bool | None = True) -> OwnerReference:
    api = "apps/v1" if kind == "StatefulSet" else "v1"
    block = True if controller else None
    return OwnerReference(
        api_version=api,
        kind=kind,
        name=name,
        uid=uid,
        controller=controller,
        block_owner_deletion=block,
    )


def _pvc(*refs: OwnerReference) -> PersistentVolumeClaim:
    claim = msgspec.convert({"metadata": {"name": "data-db-2"}}, PersistentVolumeClaim)
    return msgspec.structs.replace(
        claim, metadata=msgspec.structs.replace(claim.metadata, owner_references=list(refs))
    )


SET = _ref("StatefulSet", "db", "set-uid")
POD = _ref("Pod", "db-2", "pod-uid")
OTHER = OwnerReference(api_version="v1", kind="ConfigMap", name="x", uid="x", controller=True)


@pytest.mark.parametrize(
    ("policy", "replicas", "refs", "want"),
    [
        pytest.param({}, 3, [SET, POD], [], id="retain retain: set and pod references dropped"),
        pytest.param({"whenDeleted": "Delete"}, 3, [], [SET], id="whenDeleted: the set"),
        pytest.param({"whenScaled": "Delete"}, 2, [], [POD], id="whenScaled, condemned: pod"),
        pytest.param(
            {"whenScaled": "Delete", "whenDeleted": "Delete"},
            2,
            [SET],
            [POD],
            id="both, condemned: the pod instead of the set",
        ),
        pytest.param(
            {"whenScaled": "Delete", "whenDeleted": "Delete"},
            3,
            [POD],
            [SET],
            id="both, scaled back up: the set instead of the pod",
        ),
        pytest.param({"whenScaled": "Delete"}, 3, [POD], [], id="scaled back up: pod dropped"),
        pytest.param(
            {"whenScaled": "Delete"},
            2,
            [OTHER, POD],
            [OTHER],
            id="another controller: ours dropped, none added",
        ),
        pytest.param(
            {"whenDeleted": "Delete"},
            3,
            [_ref("StatefulSet", "db", "set-uid", controller=None)],
            [SET],
            id="a plain reference made a controller one",
        ),
    ],
)
def test_claim_owner_references_follow_the_retention_policy(
    policy: dict[str, str],
    replicas: int,
    refs: list[OwnerReference],
    want: list[OwnerReference],
) -> None:
    sts, pod = _set(policy, replicas), _pod(2)
    claim = _pvc(*refs)
    updated = update_claim_owner_ref_for_set_and_pod(claim, sts, pod)
    assert updated.metadata.owner_references == want
    assert is_claim_owner_up_to_date(updated, sts, pod)
    assert is_claim_owner_up_to_date(claim, sts, pod) is (refs == want)


def test_a_claim_naming_an_earlier_pod_is_left_alone_and_is_stale() -> None:
    sts, pod = _set({"whenScaled": "Delete"}, 3), _pod(2, uid="new-uid")
    claim = _pvc(POD)
    assert is_claim_owner_up_to_date(claim, sts, pod)
    assert pod_claim_is_stale(sts, pod, lambda: [claim])
    assert not pod_claim_is_stale(sts, _pod(2), lambda: [claim])
    assert not pod_claim_is_stale(_set({}, 3), pod, lambda: [claim])
