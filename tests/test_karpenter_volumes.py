"""Karpenter launches where a pod's volumes can be reached (autoscaler/karpenter/
volumetopology.py): a bound claim's PersistentVolume's node affinity, an unbound claim's
StorageClass's allowedTopologies, merged over the pod's volumes into alternatives."""

from __future__ import annotations

from typing import Any

import pytest

from test_autoscaling import ZONE, changes, run
from topospread.api.loader import decode_manifests
from topospread.api.types import ObjectMeta, Pod, PodSpec
from topospread.autoscaler.karpenter.volumetopology import MissingVolume, volume_requirements
from topospread.cluster.storage import StorageState

POOL = {
    "name": "default",
    "requirements": [
        {"key": ZONE, "operator": "In", "values": ["zone-a", "zone-b", "zone-c"]},
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
    ],
}


def zone_term(*zones: str, hostname: str | None = None) -> dict[str, Any]:
    exprs: list[dict[str, Any]] = [{"key": ZONE, "operator": "In", "values": list(zones)}]
    if hostname is not None:
        exprs.append({"key": "kubernetes.io/hostname", "operator": "In", "values": [hostname]})
    return {"matchExpressions": exprs}


def storage_class(name: str = "zonal", *allowed: str) -> dict[str, Any]:
    sc: dict[str, Any] = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    if allowed:
        sc["allowedTopologies"] = [
            {"matchLabelExpressions": [{"key": ZONE, "values": list(allowed)}]}
        ]
    return sc


def volume(name: str, *terms: dict[str, Any], source: str = "csi") -> dict[str, Any]:
    src: dict[str, Any] = (
        {"csi": {"driver": "ebs.csi.aws.com", "volumeHandle": name}}
        if source == "csi"
        else {"local": {"path": "/mnt/disk"}}
    )
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "storageClassName": "zonal",
            **src,
            "nodeAffinity": {"required": {"nodeSelectorTerms": list(terms)}},
        },
    }


def claim(name: str, volume_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "storageClassName": "zonal",
        "resources": {"requests": {"storage": "10Gi"}},
    }
    if volume_name:
        spec["volumeName"] = volume_name
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": spec,
    }


def pod(*claims: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db"},
        "spec": {
            "containers": [
                {"name": "c", "image": "postgres:16", "resources": {"requests": {"cpu": "1"}}}
            ],
            "volumes": [
                {"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                for i, c in enumerate(claims)
            ],
        },
    }


def launched_zones(*objects: dict[str, Any]) -> tuple[list[str], Any]:
    doc = {
        "autoscaler": {"karpenter": {"nodePools": [POOL]}},
        "objects": list(objects),
        "timeline": [{"wait": "3m"}],
    }
    report = run(doc)
    return [c["zone"] for c in changes(report, "add")], report


def test_a_pod_whose_volume_is_in_one_zone_gets_a_node_there() -> None:
    # Before, the cheapest offering's zone (zone-a) was launched and the pod stayed Pending:
    # "node(s) didn't match PersistentVolume's node affinity".
    zones, report = launched_zones(
        storage_class(), volume("data", zone_term("zone-b")), claim("data", "data"), pod("data")
    )
    assert zones == ["zone-b"]
    assert report.steps[-1].pending == {}


def test_an_unbound_claim_follows_its_storage_class_allowed_topologies() -> None:
    zones, report = launched_zones(storage_class("zonal", "zone-c"), claim("data"), pod("data"))
    assert zones == ["zone-c"]
    assert report.steps[-1].pending == {}


def test_a_pod_whose_claim_is_missing_is_left_out_of_the_batch() -> None:
    zones, report = launched_zones(storage_class(), pod("nowhere"))
    assert zones == []
    assert list(report.steps[-1].pending) == ["default/db"]


def _storage(*objects: dict[str, Any]) -> StorageState:
    storage = StorageState()
    for obj in decode_manifests(list(objects), "t.yaml"):
        storage.add(obj)  # type: ignore[arg-type]
    return storage


def _pod(*claims: str) -> Pod:
    (obj,) = decode_manifests(pod(*claims), "t.yaml")
    assert isinstance(obj, Pod)
    return obj


def test_the_alternatives_of_two_volumes_are_merged_compatible_pairs_first() -> None:
    storage = _storage(
        storage_class("zonal", "zone-b"),
        volume("a", zone_term("zone-a"), zone_term("zone-b")),
        claim("bound", "a"),
        claim("unbound"),
    )
    alternatives = volume_requirements(_pod("bound", "unbound"), storage)
    assert alternatives is not None
    assert [str(a) for a in alternatives] == [f"{ZONE} In [zone-b]"]


def test_a_local_volume_pinned_to_its_host_alone_does_not_constrain_the_new_node() -> None:
    storage = _storage(
        storage_class(),
        volume(
            "l",
            {
                "matchExpressions": [
                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["gone"]}
                ]
            },
            source="local",
        ),
        claim("local", "l"),
    )
    alternatives = volume_requirements(_pod("local"), storage)
    assert alternatives is not None and [str(a) for a in alternatives] == [""]
    with pytest.raises(MissingVolume, match='persistentvolumeclaims "missing" not found'):
        volume_requirements(_pod("missing"), storage)


def test_a_pod_without_claims_is_unconstrained() -> None:
    pod_ = Pod(metadata=ObjectMeta(name="p", namespace="default"), spec=PodSpec())
    assert volume_requirements(pod_, StorageState()) is None
