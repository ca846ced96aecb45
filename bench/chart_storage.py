"""The stateful variant of the chart cluster (chart.py's ``chart_cluster(stateful=True)``):
a gp3 StorageClass (WaitForFirstConsumer, the EBS CSI driver, zonal), a CSINode per node with
the driver's attach limit, and StatefulSets with a ``data`` volumeClaimTemplate in place of a
third of the chart Deployments — each bound replica's claim bound to a volume in its node's
zone — and in place of the Deployment being scaled up, whose Pending replicas each have a fresh
claim that the scheduler binds (provisioned in the chosen node's zone).

Objects are written as ``kubectl get -o yaml`` prints them, like the rest of the List.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any, Final

from eks_nodes import Node, place
from kube_objects import Owner, object_meta, pod, preferred_anti_affinity

DRIVER: Final = "ebs.csi.aws.com"
STORAGE_CLASS: Final = "gp3"
ZONE: Final = "topology.kubernetes.io/zone"
# The EBS CSI driver's attach limit on Nitro instances (28 slots less the ENI and root disk).
ATTACH_LIMIT: Final = 25


def storage_class(meta: dict[str, Any]) -> dict[str, Any]:
    meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": meta,
        "parameters": {"type": "gp3"},
        "provisioner": DRIVER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


def csi_node(meta: dict[str, Any], instance_id: str) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": meta,
        "spec": {
            "drivers": [
                {
                    "name": DRIVER,
                    "nodeID": instance_id,
                    "topologyKeys": [ZONE],
                    "allocatable": {"count": ATTACH_LIMIT},
                }
            ]
        },
    }


def claim_template() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "20Gi"}},
            "storageClassName": STORAGE_CLASS,
            "volumeMode": "Filesystem",
        },
    }


def statefulset(
    meta: dict[str, Any], labels: dict[str, str], replicas: int, template: dict[str, Any]
) -> dict[str, Any]:
    name = meta["name"]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": template},
            "volumeClaimTemplates": [claim_template()],
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Retain",
                "whenScaled": "Retain",
            },
        },
    }


def claim(meta: dict[str, Any], labels: dict[str, str], volume: str | None) -> dict[str, Any]:
    """A replica's claim: bound to ``volume``, or Pending (WaitForFirstConsumer)."""
    spec = claim_template()["spec"]
    meta["labels"] = labels
    status: dict[str, Any] = {"phase": "Pending"}
    if volume is not None:
        spec["volumeName"] = volume
        meta["annotations"] = {
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
            "volume.beta.kubernetes.io/storage-provisioner": DRIVER,
            "volume.kubernetes.io/storage-provisioner": DRIVER,
        }
        status = {
            "phase": "Bound",
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "20Gi"},
        }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def volume(meta: dict[str, Any], claim_meta: dict[str, Any], zone: str) -> dict[str, Any]:
    """The volume provisioned for a bound replica's claim, in its node's zone."""
    meta["annotations"] = {"pv.kubernetes.io/provisioned-by": DRIVER}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta,
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "20Gi"},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "name": claim_meta["name"],
                "namespace": claim_meta["namespace"],
                "uid": claim_meta["uid"],
            },
            "csi": {"driver": DRIVER, "fsType": "ext4", "volumeHandle": f"vol-{meta['uid'][:17]}"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
                    ]
                }
            },
            "persistentVolumeReclaimPolicy": "Delete",
            "storageClassName": STORAGE_CLASS,
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Bound"},
    }


def stateful_chart(
    rng: random.Random,
    chart: tuple[str, str, str, int, int],
    replicas: int,
    nodes: list[Node],
) -> Iterator[dict[str, Any]]:
    """A chart as a StatefulSet: its replicas bound, each with its claim bound to a volume in
    its node's zone."""
    name, ns, image, cpu, mem = chart
    labels = {"app.kubernetes.io/instance": name, "app.kubernetes.io/name": name}
    template = {"containers": [{"image": image, "name": name}]}
    meta = object_meta(rng, name, ns, generation=1, labels=dict(labels))
    yield statefulset(meta, labels, replicas, template)
    owner = Owner("StatefulSet", name, meta["uid"])
    on: set[str] = set()
    for ordinal in range(replicas):
        node = place(rng, nodes, cpu, on)
        on.add(node.name)
        pod_name = f"{name}-{ordinal}"
        claim_meta = object_meta(rng, f"data-{pod_name}", ns)
        volume_meta = object_meta(rng, f"pvc-{claim_meta['uid']}")
        yield claim(claim_meta, labels, volume_meta["name"])
        yield volume(volume_meta, claim_meta, node.zone)
        yield pod(
            rng,
            name=pod_name,
            namespace=ns,
            labels={**labels, "statefulset.kubernetes.io/pod-name": pod_name},
            owner=owner,
            image=image,
            cpu_milli=cpu,
            memory_mi=mem,
            node=node,
            service_account=name,
            affinity=preferred_anti_affinity({"app.kubernetes.io/name": name}),
            claim=claim_meta["name"],
        )


def stateful_queue(
    rng: random.Random,
    app: tuple[str, str, str],
    labels: dict[str, str],
    constraints: list[dict[str, Any]],
    queued: int,
    template: dict[str, Any],
) -> Iterator[dict[str, Any]]:
    """The workload being scaled up as a StatefulSet: its Pending replicas, each with a fresh
    claim (WaitForFirstConsumer) for the scheduler to bind."""
    name, ns, image = app
    meta = object_meta(rng, name, ns, generation=1, labels=dict(labels))
    yield statefulset(meta, labels, queued, template)
    owner = Owner("StatefulSet", name, meta["uid"])
    for ordinal in range(queued):
        pod_name = f"{name}-{ordinal}"
        claim_meta = object_meta(rng, f"data-{pod_name}", ns)
        yield claim(claim_meta, labels, None)
        yield pod(
            rng,
            name=pod_name,
            namespace=ns,
            labels={**labels, "statefulset.kubernetes.io/pod-name": pod_name},
            owner=owner,
            image=image,
            cpu_milli=250,
            memory_mi=256,
            node=None,
            service_account=name,
            affinity=preferred_anti_affinity({"app.kubernetes.io/name": name}),
            constraints=constraints,
            claim=claim_meta["name"],
        )
