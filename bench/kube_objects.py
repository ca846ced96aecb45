"""Kubernetes objects as ``kubectl get -o yaml`` prints them, for the benchmarks' inputs: the
metadata the API server fills in (uid, resourceVersion, creationTimestamp), pods with what the
API server and the kubelet add (owner reference, a ``kube-api-access-<5 letters>`` projected
volume, default tolerations, status), DaemonSets, and Deployments with their ReplicaSet.

Every random draw (names, uids, addresses) comes from the caller's ``random.Random``, in the
order the caller makes them, so the generators stay deterministic.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from eks_nodes import Node

TIMESTAMP: Final = "2025-06-01T12:00:00Z"
# The alphabet of apimachinery's rand.String (generateName suffixes, pod-template-hash).
ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
SYSTEM_NODE_CRITICAL: Final = ("system-node-critical", 2_000_001_000)
SYSTEM_CLUSTER_CRITICAL: Final = ("system-cluster-critical", 2_000_000_000)
HOSTNAME: Final = "kubernetes.io/hostname"
ZONE: Final = "topology.kubernetes.io/zone"


def suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def object_meta(
    rng: random.Random, name: str, namespace: str | None = None, **extra: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "creationTimestamp": TIMESTAMP,
        "name": name,
        "resourceVersion": str(rng.randrange(10**6, 10**8)),
        "uid": uid(rng),
        **extra,
    }
    if namespace is not None:
        meta["namespace"] = namespace
    return meta


def api_access_volume(name: str) -> dict[str, Any]:
    """The ``kube-api-access-…`` projected volume the API server adds to every pod."""
    return {
        "name": name,
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        "name": "kube-root-ca.crt",
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                "path": "namespace",
                            }
                        ]
                    }
                },
            ],
        },
    }


DEFAULT_TOLERATIONS: Final = [
    {
        "effect": "NoExecute",
        "key": f"node.kubernetes.io/{key}",
        "operator": "Exists",
        "tolerationSeconds": 300,
    }
    for key in ("not-ready", "unreachable")
]


def preferred_anti_affinity(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": labels},
                        "topologyKey": HOSTNAME,
                    },
                    "weight": 100,
                }
            ]
        }
    }


@dataclass(frozen=True, slots=True)
class Owner:
    kind: str
    name: str
    uid: str


def pod(
    rng: random.Random,
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    owner: Owner,
    image: str,
    cpu_milli: int,
    memory_mi: int,
    node: Node | None,
    service_account: str = "default",
    ports: list[dict[str, Any]] | None = None,
    affinity: dict[str, Any] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    constraints: list[dict[str, Any]] | None = None,
    priority: tuple[str, int] | None = None,
    host_network: bool = False,
    extra_resources: dict[str, str] | None = None,
    claim: str | None = None,
) -> dict[str, Any]:
    """One pod as ``kubectl get -o yaml`` prints it: Running on ``node``, or Pending;
    ``claim``: a StatefulSet replica's claim, mounted as its ``data`` volume."""
    token = f"kube-api-access-{suffix(rng)}"
    container_name = labels.get("app.kubernetes.io/name", name.split("-")[0])
    requests = {"cpu": f"{cpu_milli}m", "memory": f"{memory_mi}Mi", **(extra_resources or {})}
    limits = {"memory": f"{memory_mi * 2}Mi", **(extra_resources or {})}
    container: dict[str, Any] = {
        "env": [
            {
                "name": "POD_NAME",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
            },
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}},
            },
            {"name": "LOG_LEVEL", "value": "info"},
            {
                "name": "OTEL_EXPORTER_OTLP_ENDPOINT",
                "value": "http://otel-collector.monitoring:4317",
            },
        ],
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": container_name,
        "ports": ports or [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        "resources": {"limits": limits, "requests": requests},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "volumeMounts": [
            {
                "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                "name": token,
                "readOnly": True,
            }
        ],
    }
    spec: dict[str, Any] = {
        "containers": [container],
        "dnsPolicy": "ClusterFirstWithHostNet" if host_network else "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": priority[1] if priority else 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccount": service_account,
        "serviceAccountName": service_account,
        "terminationGracePeriodSeconds": 30,
        "tolerations": tolerations if tolerations is not None else DEFAULT_TOLERATIONS,
        "volumes": [api_access_volume(token)],
    }
    if claim is not None:
        spec["volumes"].append(data_volume(claim))
        container["volumeMounts"].append({"mountPath": "/data", "name": "data"})
    if priority:
        spec["priorityClassName"] = priority[0]
    if host_network:
        spec["hostNetwork"] = True
    if affinity:
        spec["affinity"] = affinity
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    qos = "Burstable"
    meta = object_meta(
        rng,
        name,
        namespace,
        generateName=name[: name.rfind("-") + 1],
        labels=labels,
        ownerReferences=[
            {
                "apiVersion": "apps/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": owner.kind,
                "name": owner.name,
                "uid": owner.uid,
            }
        ],
    )
    if node is None:
        status: dict[str, Any] = {"phase": "Pending", "qosClass": qos}
    else:
        spec["nodeName"] = node.name
        pod_ip = (
            node.ip
            if host_network
            else f"10.{rng.randrange(64, 128)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        )
        status = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": TIMESTAMP,
                    "status": "True",
                    "type": t,
                }
                for t in (
                    "PodReadyToStartContainers",
                    "Initialized",
                    "Ready",
                    "ContainersReady",
                    "PodScheduled",
                )
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{rng.getrandbits(256):064x}",
                    "image": image,
                    "imageID": f"{image.split(':')[0]}@sha256:{rng.getrandbits(256):064x}",
                    "lastState": {},
                    "name": container_name,
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": TIMESTAMP}},
                }
            ],
            "hostIP": node.ip,
            "hostIPs": [{"ip": node.ip}],
            "phase": "Running",
            "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}],
            "qosClass": qos,
            "startTime": TIMESTAMP,
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def daemon_set(
    rng: random.Random, name: str, namespace: str, image: str, nodes: int
) -> tuple[dict[str, Any], Owner]:
    meta = object_meta(rng, name, namespace, generation=1, labels={"k8s-app": name})
    obj = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": meta,
        "spec": {
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"k8s-app": name}},
            "template": {
                "metadata": {"labels": {"k8s-app": name}},
                "spec": {
                    "containers": [{"image": image, "name": name}],
                    "priorityClassName": SYSTEM_NODE_CRITICAL[0],
                    "tolerations": [{"operator": "Exists"}],
                },
            },
            "updateStrategy": {
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"},
                "type": "RollingUpdate",
            },
        },
        "status": {
            "currentNumberScheduled": nodes,
            "desiredNumberScheduled": nodes,
            "numberAvailable": nodes,
            "numberMisscheduled": 0,
            "numberReady": nodes,
            "observedGeneration": 1,
            "updatedNumberScheduled": nodes,
        },
    }
    return obj, Owner("DaemonSet", name, meta["uid"])


def deployment(
    rng: random.Random,
    name: str,
    namespace: str,
    labels: dict[str, str],
    replicas: int,
    template: dict[str, Any],
) -> tuple[list[dict[str, Any]], Owner, str]:
    """A Deployment and its current ReplicaSet; returns them, the RS as owner, and the hash."""
    pod_hash = suffix(rng, 10)
    deploy_meta = object_meta(rng, name, namespace, generation=1, labels=dict(labels))
    rs_name = f"{name}-{pod_hash}"
    rs_meta = object_meta(
        rng,
        rs_name,
        namespace,
        generation=1,
        labels={**labels, "pod-template-hash": pod_hash},
        ownerReferences=[
            {
                "apiVersion": "apps/v1",
                "blockOwnerDeletion": True,
                "controller": True,
                "kind": "Deployment",
                "name": name,
                "uid": deploy_meta["uid"],
            }
        ],
    )
    selector = {"matchLabels": labels}
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": deploy_meta,
        "spec": {
            "replicas": replicas,
            "selector": selector,
            "strategy": {
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                "type": "RollingUpdate",
            },
            "template": {"metadata": {"labels": labels}, "spec": template},
        },
    }
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": rs_meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {**labels, "pod-template-hash": pod_hash}},
            "template": {
                "metadata": {"labels": {**labels, "pod-template-hash": pod_hash}},
                "spec": template,
            },
        },
    }
    return [deploy, rs], Owner("ReplicaSet", rs_name, rs_meta["uid"]), pod_hash


def data_volume(claim_name: str) -> dict[str, Any]:
    """A StatefulSet replica's ``data`` volume: its claim."""
    return {"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}
