"""The PV controller's sync of the input volumes (syncVolume, pv_controller.go): a volume
pre-bound by name is Available; one whose claim is gone is Released and reclaimed (Delete:
deleted; Retain: stays Released); one the controller bound to a claim since bound to another
volume is freed for other claims; a provisioned Delete volume whose claim is bound elsewhere is
deleted; one the user bound keeps its claim's name, pre-bound again."""

from __future__ import annotations

from typing import Any

from test_timeline import zones
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline

BOUND_BY_CONTROLLER = {"pv.kubernetes.io/bound-by-controller": "yes"}
PROVISIONED = {"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com"}


def volume(
    name: str,
    *,
    claim: str | None = None,
    uid: str | None = None,
    policy: str = "Retain",
    phase: str = "Bound",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "",
        "persistentVolumeReclaimPolicy": policy,
        "hostPath": {"path": f"/data/{name}"},
    }
    if claim is not None:
        spec["claimRef"] = {"namespace": "default", "name": claim}
        if uid is not None:
            spec["claimRef"]["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": spec,
        "status": {"phase": phase},
    }


def claim(name: str, uid: str, volume_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "",
        "resources": {"requests": {"storage": "1Gi"}},
    }
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": uid}
    status = {}
    if volume_name is not None:
        spec["volumeName"] = volume_name
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        status = {"phase": "Bound"}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": spec, "status": status}  # fmt: skip


def pod(name: str, claim_name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "c", "image": "x"}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        },
    }


def settled(objects: list[Any]) -> Simulation:
    sim = Simulation(parse_timeline({"nodeGroups": zones(1), "objects": objects}, "t.yaml"))
    sim.settle("t.yaml")
    return sim


def phases(sim: Simulation) -> dict[str, str]:
    return {name: pv.status.phase for name, pv in sorted(sim.cluster.storage_state.pvs.items())}


def test_a_volume_pre_bound_by_name_is_available_whatever_phase_it_was_given() -> None:
    sim = settled([volume("pre", claim="later", phase="Released")])
    assert phases(sim) == {"pre": "Available"}
    ref = sim.cluster.storage_state.pvs["pre"].spec.claim_ref
    assert ref is not None and (ref.name, ref.uid) == ("later", "")


def test_a_volume_whose_claim_is_gone_is_released_and_reclaimed_by_its_policy() -> None:
    # Claim "data" was deleted (none of that name; "other" exists under another uid than the
    # volume remembers): the Delete volume goes, the Retain one stays Released, still
    # referring to the deleted claim, which no claim can take.
    sim = settled(
        [
            volume("kept", claim="data", uid="u-old", policy="Retain"),
            volume("gone", claim="data", uid="u-old", policy="Delete"),
            volume("renamed", claim="other", uid="u-old-other", policy="Retain"),
            claim("other", "u-new-other"),
            pod("user", "other"),
        ]
    )
    assert phases(sim) == {"kept": "Released", "renamed": "Released"}
    ref = sim.cluster.storage_state.pvs["renamed"].spec.claim_ref
    assert ref is not None and ref.uid == "u-old-other"
    assert not sim.pods["default/user"].spec.node_name
    assert sim.pending_message(sim.pods["default/user"]) == (
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found"
    )


def test_a_volume_the_controller_bound_to_a_claim_bound_elsewhere_is_freed_for_another() -> None:
    # "spare" was bound by the controller to claim "a", which is bound to "v-a": the controller
    # unbinds "spare" (claimRef and annotation removed, Available), and claim "b" takes it.
    sim = settled(
        [
            volume("v-a", claim="a", uid="u-a"),
            volume("spare", claim="a", uid="u-a", annotations=BOUND_BY_CONTROLLER),
            claim("a", "u-a", volume_name="v-a"),
            claim("b", "u-b"),
            pod("user", "b"),
        ]
    )
    storage = sim.cluster.storage_state
    assert storage.pvcs["default/b"].spec.volume_name == "spare"
    spare = storage.pvs["spare"]
    assert spare.spec.claim_ref is not None and spare.spec.claim_ref.uid == "u-b"
    assert phases(sim) == {"spare": "Bound", "v-a": "Bound"}
    assert sim.pods["default/user"].spec.node_name


def test_a_provisioned_delete_volume_of_a_claim_bound_elsewhere_is_deleted() -> None:
    # "pvc-a" was provisioned for claim "a", then "a" got bound to "v-a": the provisioned
    # volume is Released and deleted. "mine" was bound to "a" by the user: it keeps the
    # claim's name, pre-bound again (uid cleared), Available.
    sim = settled(
        [
            volume("v-a", claim="a", uid="u-a"),
            volume("pvc-a", claim="a", uid="u-a", policy="Delete", annotations=PROVISIONED),
            volume("mine", claim="a", uid="u-a", policy="Delete"),
            claim("a", "u-a", volume_name="v-a"),
        ]
    )
    storage = sim.cluster.storage_state
    assert phases(sim) == {"mine": "Available", "v-a": "Bound"}
    ref = storage.pvs["mine"].spec.claim_ref
    assert ref is not None and (ref.name, ref.uid) == ("a", "")
