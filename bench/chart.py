"""Inputs for the end-to-end benchmarks, which run the ``topospread`` CLI on files.

``write_chart_cluster`` writes an EKS-like cluster as one ``kubectl get
nodes,pods,daemonsets,deployments,replicasets,... -A -o yaml`` List: five node groups
(instance types, capacities, taints), three zones, about ten bound pods a node (three DaemonSet
pods on every node: aws-node, kube-proxy, node-exporter with hostPort 9100; CoreDNS; some thirty
Helm-chart Deployments, each pod with a preferred podAntiAffinity on its own app over hostnames),
then the Pending pods of one Deployment being scaled up, with a hard zone spread, a soft hostname
spread and a preferred podAntiAffinity. Every pod carries what the API server and the kubelet
add (owner reference, a ``kube-api-access-<5 letters>`` projected volume, default tolerations,
status), so loading is measured on realistic objects. ``topospread schedule --nodes FILE`` reads
it all.

``write_timeline`` writes a ``topospread simulate`` scenario: node groups over three zones,
Deployments with zone and hostname spread constraints, and a timeline (scale up, rollout, loss
of a zone, wait, restore).

Both are deterministic: one seeded ``random.Random`` draws every name suffix and placement.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import chart_storage
import yaml

SEED: Final = 20250601
TIMESTAMP: Final = "2025-06-01T12:00:00Z"
REGION: Final = "us-west-2"
ZONES: Final = tuple(f"{REGION}{z}" for z in "abc")
# The alphabet of apimachinery's rand.String (generateName suffixes, pod-template-hash).
ALPHANUMS: Final = "bcdfghjklmnpqrstvwxz2456789"
SYSTEM_NODE_CRITICAL: Final = ("system-node-critical", 2_000_001_000)
SYSTEM_CLUSTER_CRITICAL: Final = ("system-cluster-critical", 2_000_000_000)
HOSTNAME: Final = "kubernetes.io/hostname"
ZONE: Final = "topology.kubernetes.io/zone"


@dataclass(frozen=True, slots=True)
class NodeGroup:
    """An EKS managed node group: one instance type, its kubelet's capacity and allocatable."""

    name: str
    instance_type: str
    count: int  # at full size
    cpu: int  # cores
    allocatable_cpu: str
    memory_ki: int
    allocatable_memory_ki: int
    pods: int
    taint: tuple[str, str, str] | None = None  # key, value, effect
    capacity_type: str = "ON_DEMAND"
    gpus: int = 0


NODE_GROUPS: Final = (
    NodeGroup("general", "m6i.2xlarge", 400, 8, "7910m", 32_386_408, 31_369_576, 58),
    NodeGroup("compute", "c6i.4xlarge", 250, 16, "15890m", 32_386_408, 30_659_880, 234),
    NodeGroup("memory", "r6i.2xlarge", 200, 8, "7910m", 65_049_352, 64_032_520, 58),
    NodeGroup(
        "spot",
        "m5.xlarge",
        100,
        4,
        "3920m",
        16_093_892,
        15_189_188,
        58,
        taint=("spot", "true", "PreferNoSchedule"),
        capacity_type="SPOT",
    ),
    NodeGroup(
        "gpu",
        "g5.2xlarge",
        50,
        8,
        "7910m",
        32_386_408,
        31_369_576,
        58,
        taint=("dedicated", "gpu", "NoSchedule"),
        gpus=1,
    ),
)

# A chart Deployment: name, namespace, image, cpu request (millicores), memory request (Mi).
CHARTS: Final = (
    (
        "ingress-nginx-controller",
        "ingress-nginx",
        "registry.k8s.io/ingress-nginx/controller:v1.11.2",
        100,
        90,
    ),
    ("cert-manager", "cert-manager", "quay.io/jetstack/cert-manager-controller:v1.15.3", 10, 32),
    (
        "cert-manager-webhook",
        "cert-manager",
        "quay.io/jetstack/cert-manager-webhook:v1.15.3",
        10,
        32,
    ),
    ("external-dns", "external-dns", "registry.k8s.io/external-dns/external-dns:v0.14.2", 50, 64),
    (
        "aws-load-balancer-controller",
        "kube-system",
        "public.ecr.aws/eks/aws-load-balancer-controller:v2.8.2",
        100,
        200,
    ),
    (
        "metrics-server",
        "kube-system",
        "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
        100,
        200,
    ),
    (
        "prometheus-kube-state-metrics",
        "monitoring",
        "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
        100,
        190,
    ),
    ("grafana", "monitoring", "docker.io/grafana/grafana:11.2.0", 250, 512),
    ("loki-gateway", "logging", "docker.io/nginxinc/nginx-unprivileged:1.27-alpine", 50, 64),
    ("argocd-server", "argocd", "quay.io/argoproj/argocd:v2.12.3", 250, 256),
    ("argocd-repo-server", "argocd", "quay.io/argoproj/argocd:v2.12.3", 250, 512),
    ("keda-operator", "keda", "ghcr.io/kedacore/keda:2.15.1", 100, 128),
    ("frontend", "shop", "registry.example.com/shop/frontend:4.2.1", 200, 256),
    ("cart", "shop", "registry.example.com/shop/cart:4.2.1", 200, 256),
    ("catalog", "shop", "registry.example.com/shop/catalog:4.2.1", 250, 384),
    ("payments", "shop", "registry.example.com/shop/payments:4.2.1", 250, 384),
    ("shipping", "shop", "registry.example.com/shop/shipping:4.2.1", 100, 128),
    ("recommendations", "shop", "registry.example.com/shop/recommendations:4.2.1", 500, 1024),
    ("search-api", "search", "registry.example.com/search/api:2.8.0", 300, 512),
    ("search-indexer", "search", "registry.example.com/search/indexer:2.8.0", 400, 768),
    ("accounts", "identity", "registry.example.com/identity/accounts:1.19.4", 150, 256),
    ("auth", "identity", "registry.example.com/identity/auth:1.19.4", 150, 256),
    ("notifications", "messaging", "registry.example.com/messaging/notifications:3.0.2", 100, 128),
    ("email-worker", "messaging", "registry.example.com/messaging/email-worker:3.0.2", 100, 192),
    ("orders", "shop", "registry.example.com/shop/orders:4.2.1", 250, 384),
    ("inventory", "shop", "registry.example.com/shop/inventory:4.2.1", 200, 256),
    ("pricing", "shop", "registry.example.com/shop/pricing:4.2.1", 150, 192),
    ("reviews", "shop", "registry.example.com/shop/reviews:4.2.1", 100, 128),
    (
        "analytics-collector",
        "analytics",
        "registry.example.com/analytics/collector:0.42.0",
        200,
        512,
    ),
    ("ml-inference", "ml", "registry.example.com/ml/inference:1.4.0", 1000, 4096),
)
GPU_CHART: Final = "ml-inference"  # tolerates dedicated=gpu, runs on the gpu group only
QUEUED_APP: Final = ("checkout", "shop", "registry.example.com/shop/checkout:4.3.0")


def suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _meta(
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


# ---------------------------------------------------------------------------------------------
# Nodes


@dataclass(slots=True)
class _Node:
    name: str
    group: NodeGroup
    zone: str
    ip: str
    free_milli: int
    pods: int = 0


def _nodes(rng: random.Random, divisor: int) -> tuple[list[dict[str, Any]], list[_Node]]:
    out: list[dict[str, Any]] = []
    nodes: list[_Node] = []
    i = 0
    for group in NODE_GROUPS:
        for j in range(max(group.count // divisor, 1)):
            zone = ZONES[j % len(ZONES)]
            ip = f"10.{i // 250 % 64 + 64 * (j % 3)}.{i % 250}.{rng.randrange(1, 255)}"
            name = f"ip-{ip.replace('.', '-')}.{REGION}.compute.internal"
            labels = {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/instance-type": group.instance_type,
                "beta.kubernetes.io/os": "linux",
                "eks.amazonaws.com/capacityType": group.capacity_type,
                "eks.amazonaws.com/nodegroup": group.name,
                "eks.amazonaws.com/nodegroup-image": "ami-0a1b2c3d4e5f67890",
                "failure-domain.beta.kubernetes.io/region": REGION,
                "failure-domain.beta.kubernetes.io/zone": zone,
                "k8s.io/cloud-provider-aws": "4c0d3e2f1a9b8c7d6e5f4a3b2c1d0e9f",
                "kubernetes.io/arch": "amd64",
                HOSTNAME: name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": group.instance_type,
                "topology.k8s.aws/zone-id": f"usw2-az{ZONES.index(zone) + 1}",
                "topology.kubernetes.io/region": REGION,
                ZONE: zone,
            }
            capacity = {
                "cpu": str(group.cpu),
                "ephemeral-storage": "104845292Ki",
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": f"{group.memory_ki}Ki",
                "pods": str(group.pods),
            }
            allocatable = {
                **capacity,
                "cpu": group.allocatable_cpu,
                "ephemeral-storage": "95551679124",
                "memory": f"{group.allocatable_memory_ki}Ki",
            }
            if group.gpus:
                capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(group.gpus)
            spec: dict[str, Any] = {
                "providerID": f"aws:///{zone}/i-0{rng.getrandbits(64):016x}",
            }
            if group.taint is not None:
                key, value, effect = group.taint
                spec["taints"] = [{"effect": effect, "key": key, "value": value}]
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": _meta(
                        rng,
                        name,
                        annotations={
                            "alpha.kubernetes.io/provided-node-ip": ip,
                            "node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                        },
                        labels=labels,
                    ),
                    "spec": spec,
                    "status": {
                        "addresses": [
                            {"address": ip, "type": "InternalIP"},
                            {"address": name, "type": "InternalDNS"},
                            {"address": name, "type": "Hostname"},
                        ],
                        "allocatable": allocatable,
                        "capacity": capacity,
                        "conditions": [
                            {
                                "lastHeartbeatTime": TIMESTAMP,
                                "lastTransitionTime": TIMESTAMP,
                                "message": message,
                                "reason": reason,
                                "status": status,
                                "type": kind,
                            }
                            for kind, status, reason, message in (
                                (
                                    "MemoryPressure",
                                    "False",
                                    "KubeletHasSufficientMemory",
                                    "kubelet has sufficient memory available",
                                ),
                                (
                                    "DiskPressure",
                                    "False",
                                    "KubeletHasNoDiskPressure",
                                    "kubelet has no disk pressure",
                                ),
                                (
                                    "PIDPressure",
                                    "False",
                                    "KubeletHasSufficientPID",
                                    "kubelet has sufficient PID available",
                                ),
                                (
                                    "Ready",
                                    "True",
                                    "KubeletReady",
                                    "kubelet is posting ready status",
                                ),
                            )
                        ],
                        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                        "nodeInfo": {
                            "architecture": "amd64",
                            "bootID": uid(rng),
                            "containerRuntimeVersion": "containerd://1.7.22",
                            "kernelVersion": "6.1.109-118.189.amzn2023.x86_64",
                            "kubeProxyVersion": "v1.35.0-eks-a737599",
                            "kubeletVersion": "v1.35.0-eks-a737599",
                            "machineID": f"{rng.getrandbits(128):032x}",
                            "operatingSystem": "linux",
                            "osImage": "Amazon Linux 2023.5.20240916",
                            "systemUUID": f"ec2{rng.getrandbits(116):029x}",
                        },
                    },
                }
            )
            milli = int(group.allocatable_cpu.rstrip("m"))
            nodes.append(_Node(name, group, zone, ip, milli))
            i += 1
    return out, nodes


# ---------------------------------------------------------------------------------------------
# Pods


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


def _preferred_anti_affinity(labels: dict[str, str]) -> dict[str, Any]:
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
class _Owner:
    kind: str
    name: str
    uid: str


def _pod(
    rng: random.Random,
    *,
    name: str,
    namespace: str,
    labels: dict[str, str],
    owner: _Owner,
    image: str,
    cpu_milli: int,
    memory_mi: int,
    node: _Node | None,
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
        spec["volumes"].append(chart_storage.data_volume(claim))
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
    meta = _meta(
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


def _daemon_set(
    rng: random.Random, name: str, namespace: str, image: str, nodes: int
) -> tuple[dict[str, Any], _Owner]:
    meta = _meta(rng, name, namespace, generation=1, labels={"k8s-app": name})
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
    return obj, _Owner("DaemonSet", name, meta["uid"])


def _deployment(
    rng: random.Random,
    name: str,
    namespace: str,
    labels: dict[str, str],
    replicas: int,
    template: dict[str, Any],
) -> tuple[list[dict[str, Any]], _Owner, str]:
    """A Deployment and its current ReplicaSet; returns them, the RS as owner, and the hash."""
    pod_hash = suffix(rng, 10)
    deploy_meta = _meta(rng, name, namespace, generation=1, labels=dict(labels))
    rs_name = f"{name}-{pod_hash}"
    rs_meta = _meta(
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
    return [deploy, rs], _Owner("ReplicaSet", rs_name, rs_meta["uid"]), pod_hash


def _place(rng: random.Random, nodes: list[_Node], cpu_milli: int, avoid: set[str]) -> _Node:
    """A random node with room for the request, preferring one without a pod of the app."""
    for tries in range(64):
        node = rng.choice(nodes)
        if (
            node.free_milli >= cpu_milli
            and node.pods < node.group.pods
            and (node.name not in avoid or tries >= 32)
        ):
            break
    node.free_milli -= cpu_milli
    node.pods += 1
    return node


def chart_cluster(divisor: int = 1, stateful: bool = False) -> Iterator[dict[str, Any]]:
    """The List's items: nodes, namespaces, workloads, bound pods, then the queued pods.
    ``stateful``: bench/chart_storage.py's variant (StatefulSets with claims)."""
    rng = random.Random(SEED)
    used: set[str] = set()

    def pod_name(prefix: str) -> str:
        """``prefix`` and five random letters, drawn again on a clash as the API server's
        generateName retries (27**5 names: 2,000 pods of one ReplicaSet would clash)."""
        while (name := f"{prefix}-{suffix(rng)}") in used:
            pass
        used.add(name)
        return name

    node_objs, nodes = _nodes(rng, divisor)
    yield from node_objs
    if stateful:
        yield chart_storage.storage_class(_meta(rng, chart_storage.STORAGE_CLASS))
        for node in nodes:
            yield chart_storage.csi_node(_meta(rng, node.name), node.name)
    namespaces = sorted({"kube-system", "monitoring", QUEUED_APP[1]} | {c[1] for c in CHARTS})
    for ns in namespaces:
        yield {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": _meta(rng, ns, labels={"kubernetes.io/metadata.name": ns}),
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        }
    bound_total = 10_000 // divisor
    placed = 0

    # DaemonSets: one pod per node each.
    daemons = (
        (
            "aws-node",
            "kube-system",
            "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.18.3",
            25,
            64,
            True,
            None,
        ),
        (
            "kube-proxy",
            "kube-system",
            "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.35.0",
            100,
            64,
            True,
            None,
        ),
        (
            "node-exporter",
            "monitoring",
            "quay.io/prometheus/node-exporter:v1.8.2",
            50,
            64,
            True,
            [{"containerPort": 9100, "hostPort": 9100, "name": "metrics", "protocol": "TCP"}],
        ),
    )
    for name, ns, image, cpu, mem, host_net, ports in daemons:
        obj, owner = _daemon_set(rng, name, ns, image, len(nodes))
        yield obj
        for node in nodes:
            node.free_milli -= cpu
            node.pods += 1
            placed += 1
            yield _pod(
                rng,
                name=pod_name(name),
                namespace=ns,
                labels={
                    "k8s-app": name,
                    "controller-revision-hash": "6b9c8d7f5d",
                    "pod-template-generation": "1",
                },
                owner=owner,
                image=image,
                cpu_milli=cpu,
                memory_mi=mem,
                node=node,
                service_account=name,
                ports=ports,
                # What the DaemonSet controller writes: the pod's own node, by field.
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchFields": [
                                        {
                                            "key": "metadata.name",
                                            "operator": "In",
                                            "values": [node.name],
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                },
                tolerations=[{"operator": "Exists"}],
                priority=SYSTEM_NODE_CRITICAL,
                host_network=host_net,
            )

    general = [n for n in nodes if n.group.name != "gpu"]
    gpu_nodes = [n for n in nodes if n.group.name == "gpu"]

    # CoreDNS: a preferred podAntiAffinity over hostnames.
    dns_labels = {"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}
    dns_replicas = max(20 // divisor, 2)
    template = {
        "containers": [{"image": "coredns", "name": "coredns"}],
        "priorityClassName": SYSTEM_CLUSTER_CRITICAL[0],
    }
    objs, owner, pod_hash = _deployment(
        rng, "coredns", "kube-system", dns_labels, dns_replicas, template
    )
    yield from objs
    dns_nodes: set[str] = set()
    for _ in range(dns_replicas):
        node = _place(rng, general, 100, dns_nodes)
        dns_nodes.add(node.name)
        placed += 1
        yield _pod(
            rng,
            name=pod_name(f"coredns-{pod_hash}"),
            namespace="kube-system",
            labels={**dns_labels, "pod-template-hash": pod_hash},
            owner=owner,
            image="602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1",
            cpu_milli=100,
            memory_mi=70,
            node=node,
            service_account="coredns",
            ports=[
                {"containerPort": 53, "name": "dns", "protocol": "UDP"},
                {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                {"containerPort": 9153, "name": "metrics", "protocol": "TCP"},
            ],
            affinity=_preferred_anti_affinity({"k8s-app": "kube-dns"}),
            tolerations=[
                {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"},
                {"key": "CriticalAddonsOnly", "operator": "Exists"},
                *DEFAULT_TOLERATIONS,
            ],
            priority=SYSTEM_CLUSTER_CRITICAL,
        )

    # The charts share what is left of the bound pods, in random proportions.
    remaining = max(bound_total - placed, len(CHARTS))
    weights = [rng.uniform(0.2, 3.0) for _ in CHARTS]
    gpu_replicas = min(max(len(gpu_nodes) * 2, 1), remaining // 10)
    rest = remaining - gpu_replicas
    general_weight = sum(w for c, w in zip(CHARTS, weights, strict=True) if c[0] != GPU_CHART)
    sizes = [
        gpu_replicas if c[0] == GPU_CHART else max(int(rest * w / general_weight), 1)
        for c, w in zip(CHARTS, weights, strict=True)
    ]
    sizes[0] += remaining - sum(sizes)  # the ingress controller takes the rounding
    for k, ((name, ns, image, cpu, mem), replicas) in enumerate(zip(CHARTS, sizes, strict=True)):
        labels = {"app.kubernetes.io/instance": name, "app.kubernetes.io/name": name}
        gpu = name == GPU_CHART
        if stateful and k % 3 == 1 and not gpu:
            yield from _stateful_chart(rng, (name, ns, image, cpu, mem), replicas, general)
            continue
        tolerations: list[dict[str, Any]] | None = (
            [
                {"effect": "NoSchedule", "key": "dedicated", "operator": "Equal", "value": "gpu"},
                *DEFAULT_TOLERATIONS,
            ]
            if gpu
            else None
        )
        template = {"containers": [{"image": image, "name": name}]}
        objs, owner, pod_hash = _deployment(rng, name, ns, labels, replicas, template)
        yield from objs
        on: set[str] = set()
        for _ in range(replicas):
            node = _place(rng, gpu_nodes if gpu else general, cpu, on)
            on.add(node.name)
            affinity = _preferred_anti_affinity({"app.kubernetes.io/name": name})
            if gpu:
                affinity["nodeAffinity"] = {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "eks.amazonaws.com/nodegroup",
                                        "operator": "In",
                                        "values": ["gpu"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            yield _pod(
                rng,
                name=pod_name(f"{name}-{pod_hash}"),
                namespace=ns,
                labels={**labels, "pod-template-hash": pod_hash},
                owner=owner,
                image=image,
                cpu_milli=cpu,
                memory_mi=mem,
                node=node,
                service_account=name,
                affinity=affinity,
                tolerations=tolerations,
                extra_resources={"nvidia.com/gpu": "1"} if gpu else None,
            )

    # The Deployment being scaled up: its new pods wait for the scheduler.
    name, ns, image = QUEUED_APP
    labels = {"app.kubernetes.io/instance": name, "app.kubernetes.io/name": name}
    selector = {"matchLabels": {"app.kubernetes.io/name": name}}
    constraints = [
        {
            "labelSelector": selector,
            "matchLabelKeys": ["pod-template-hash"],
            "maxSkew": 1,
            "topologyKey": ZONE,
            "whenUnsatisfiable": "DoNotSchedule",
        },
        {
            "labelSelector": selector,
            "matchLabelKeys": ["pod-template-hash"],
            "maxSkew": 1,
            "topologyKey": HOSTNAME,
            "whenUnsatisfiable": "ScheduleAnyway",
        },
    ]
    queued = 2000 // divisor
    template = {
        "containers": [{"image": image, "name": name}],
        "topologySpreadConstraints": constraints,
    }
    if stateful:
        yield from _stateful_queue(rng, labels, constraints, queued, template)
        return
    objs, owner, pod_hash = _deployment(rng, name, ns, labels, queued, template)
    yield from objs
    for _ in range(queued):
        yield _pod(
            rng,
            name=pod_name(f"{name}-{pod_hash}"),
            namespace=ns,
            labels={**labels, "pod-template-hash": pod_hash},
            owner=owner,
            image=image,
            cpu_milli=250,
            memory_mi=256,
            node=None,
            service_account=name,
            affinity=_preferred_anti_affinity({"app.kubernetes.io/name": name}),
            constraints=constraints,
        )


def _stateful_chart(
    rng: random.Random,
    chart: tuple[str, str, str, int, int],
    replicas: int,
    nodes: list[_Node],
) -> Iterator[dict[str, Any]]:
    """A chart as a StatefulSet: its replicas bound, each with its claim bound to a volume in
    its node's zone."""
    name, ns, image, cpu, mem = chart
    labels = {"app.kubernetes.io/instance": name, "app.kubernetes.io/name": name}
    template = {"containers": [{"image": image, "name": name}]}
    meta = _meta(rng, name, ns, generation=1, labels=dict(labels))
    yield chart_storage.statefulset(meta, labels, replicas, template)
    owner = _Owner("StatefulSet", name, meta["uid"])
    on: set[str] = set()
    for ordinal in range(replicas):
        node = _place(rng, nodes, cpu, on)
        on.add(node.name)
        pod_name = f"{name}-{ordinal}"
        claim_meta = _meta(rng, f"data-{pod_name}", ns)
        volume_meta = _meta(rng, f"pvc-{claim_meta['uid']}")
        yield chart_storage.claim(claim_meta, labels, volume_meta["name"])
        yield chart_storage.volume(volume_meta, claim_meta, node.zone)
        yield _pod(
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
            affinity=_preferred_anti_affinity({"app.kubernetes.io/name": name}),
            claim=claim_meta["name"],
        )


def _stateful_queue(
    rng: random.Random,
    labels: dict[str, str],
    constraints: list[dict[str, Any]],
    queued: int,
    template: dict[str, Any],
) -> Iterator[dict[str, Any]]:
    """The workload being scaled up as a StatefulSet: its Pending replicas, each with a fresh
    claim (WaitForFirstConsumer) for the scheduler to bind."""
    name, ns, image = QUEUED_APP
    meta = _meta(rng, name, ns, generation=1, labels=dict(labels))
    yield chart_storage.statefulset(meta, labels, queued, template)
    owner = _Owner("StatefulSet", name, meta["uid"])
    for ordinal in range(queued):
        pod_name = f"{name}-{ordinal}"
        claim_meta = _meta(rng, f"data-{pod_name}", ns)
        yield chart_storage.claim(claim_meta, labels, None)
        yield _pod(
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
            affinity=_preferred_anti_affinity({"app.kubernetes.io/name": name}),
            constraints=constraints,
            claim=claim_meta["name"],
        )


def write_chart_cluster(path: Path, divisor: int = 1, stateful: bool = False) -> tuple[int, int]:
    """Write the List; returns (bound pods, queued pods)."""
    bound = queued = 0
    with path.open("w", encoding="utf-8") as f:
        f.write("apiVersion: v1\nitems:\n")
        for item in chart_cluster(divisor, stateful):
            if item["kind"] == "Pod":
                if "nodeName" in item["spec"]:
                    bound += 1
                else:
                    queued += 1
            _write_item(f, item)
        f.write('kind: List\nmetadata:\n  resourceVersion: ""\n')
    return bound, queued


class _KubectlDumper(yaml.CSafeDumper):
    """No anchors and aliases for objects the generator shares (kubectl never writes them)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _write_item(f: Any, item: dict[str, Any]) -> None:
    # kubectl's YAML has sorted keys (sigs.k8s.io/yaml goes through a map).
    text = yaml.dump(
        item, Dumper=_KubectlDumper, default_flow_style=False, sort_keys=True, width=1 << 30
    )
    lines = text.splitlines(keepends=True)
    f.write("- " + lines[0] + "".join("  " + line for line in lines[1:]))


# ---------------------------------------------------------------------------------------------
# The timeline


TIMELINE_ZONES: Final = ("zone-a", "zone-b", "zone-c")
TIMELINE_APPS: Final = 10


def _spread_deployments(replicas: int) -> list[dict[str, Any]]:
    """``TIMELINE_APPS`` Deployments of ``replicas`` pods each (200m CPU, 256Mi): half spread over
    zones hard (DoNotSchedule), half soft; all soft over hostnames; both count each revision on
    its own (matchLabelKeys: [pod-template-hash])."""
    objects = []
    for i in range(TIMELINE_APPS):
        app = f"app-{i}"
        selector = {"matchLabels": {"app": app}}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": app, "namespace": "default"},
                "spec": {
                    "replicas": replicas,
                    "selector": selector,
                    "template": {
                        "metadata": {"labels": {"app": app}},
                        "spec": {
                            "containers": [
                                {
                                    "name": app,
                                    "image": f"registry.example.com/{app}:1.0.0",
                                    "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}},
                                }
                            ],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": ZONE,
                                    "whenUnsatisfiable": "DoNotSchedule"
                                    if i % 2 == 0
                                    else "ScheduleAnyway",
                                    "labelSelector": selector,
                                    "matchLabelKeys": ["pod-template-hash"],
                                },
                                {
                                    "maxSkew": 1,
                                    "topologyKey": HOSTNAME,
                                    "whenUnsatisfiable": "ScheduleAnyway",
                                    "labelSelector": selector,
                                    "matchLabelKeys": ["pod-template-hash"],
                                },
                            ],
                        },
                    },
                },
            }
        )
    return objects


def _node_group(per_zone: int | dict[str, int]) -> dict[str, Any]:
    """One node group over ``TIMELINE_ZONES``: 16 CPU, 64Gi, 110 pods a node (room for 80 of the
    Deployments' pods)."""
    return {
        "name": "node",
        "zones": list(TIMELINE_ZONES),
        "perZone": per_zone,
        "template": {
            "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
        },
    }


def timeline(divisor: int = 1) -> dict[str, Any]:
    """3,000 nodes over three zones; ten Deployments, 27,000 pods, scaled up to 30,000; then a
    rollout, the loss of a zone, the unreachable toleration running out, and the zone's return.
    """
    per_zone = 1000 // divisor
    replicas = 2700 // divisor
    return {
        "nodeGroups": [_node_group(per_zone)],
        "objects": _spread_deployments(replicas),
        "timeline": [
            {
                "name": "scale up app-0",
                "scale": {"workload": "deployment/app-0", "replicas": replicas + 3000 // divisor},
            },
            {
                "name": "roll out app-1",
                "rollout": {
                    "workload": "deployment/app-1",
                    "patch": {
                        "spec": {
                            "containers": [
                                {"name": "app-1", "image": "registry.example.com/app-1:1.1.0"}
                            ]
                        }
                    },
                },
            },
            {"name": "zone-c goes dark", "loseZone": "zone-c"},
            {"name": "zone-c stays dark", "wait": "6m"},
            {"name": "zone-c comes back", "restoreZone": "zone-c"},
        ],
    }


def write_timeline(path: Path, divisor: int = 1) -> int:
    """Write the timeline scenario; returns the pod count after the scale-up."""
    doc = timeline(divisor)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    return sum(int(d["spec"]["replicas"]) for d in doc["objects"]) + 3000 // divisor


# ---------------------------------------------------------------------------------------------
# The sweep's cluster


def sweep_cluster(nodes: int, pods: int) -> dict[str, Any]:
    """A ``topospread sweep`` input: the timeline's node group and Deployments, sized to
    ``nodes`` over the three zones (the first zones take the remainder) and ``pods`` over the
    ten Deployments, with no timeline of its own (the sweep's failures start from the settled
    cluster)."""
    per_zone = {
        zone: nodes // len(TIMELINE_ZONES) + (i < nodes % len(TIMELINE_ZONES))
        for i, zone in enumerate(TIMELINE_ZONES)
    }
    return {
        "nodeGroups": [_node_group(per_zone)],
        "objects": _spread_deployments(pods // TIMELINE_APPS),
    }


def write_sweep_cluster(path: Path, nodes: int, pods: int) -> tuple[int, int]:
    """Write the sweep's input; returns its (nodes, pods)."""
    doc = sweep_cluster(nodes, pods)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    written_nodes = sum(doc["nodeGroups"][0]["perZone"].values())
    return written_nodes, sum(int(d["spec"]["replicas"]) for d in doc["objects"])


def autoscaled_sweep_cluster(nodes: int, pods: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sweep's cluster as cluster-autoscaler keeps one, and its ``autoscaler:`` section:
    each pod asks for 1.2 CPU (ten a 16-CPU node: 75%, above the default
    scale-down-utilization-threshold of 0.5, so no packed node is a scale-down candidate); the
    zone constraints honour taints (``nodeTaintsPolicy: Honor``, the docs' remedy: a lost
    zone's tainted nodes leave the domains); a surviving node's 4 spare CPUs hold three of a
    lost zone's pods, so about two fifths of them stay Pending and the autoscaler scales the
    surviving zones' groups up; and the node group is autoscaled, one group per zone
    (``node-zone-a``, ...) of up to twice its nodes."""
    doc = sweep_cluster(nodes, pods)
    for d in doc["objects"]:
        spec = d["spec"]["template"]["spec"]
        for c in spec["containers"]:
            c["resources"]["requests"]["cpu"] = "1200m"
        for t in spec["topologySpreadConstraints"]:
            if t["topologyKey"] == ZONE:
                t["nodeTaintsPolicy"] = "Honor"
    most = 2 * max(doc["nodeGroups"][0]["perZone"].values())
    section = {
        "clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": most}]}
    }
    return doc, section


def write_autoscaled_sweep_cluster(
    path: Path, section_path: Path, nodes: int, pods: int
) -> tuple[int, int]:
    """Write the autoscaled sweep's input and its autoscaler section; returns (nodes, pods)."""
    doc, section = autoscaled_sweep_cluster(nodes, pods)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    section_path.write_text(yaml.safe_dump(section, sort_keys=False), encoding="utf-8")
    written_nodes = sum(doc["nodeGroups"][0]["perZone"].values())
    return written_nodes, sum(int(d["spec"]["replicas"]) for d in doc["objects"])


# ---------------------------------------------------------------------------------------------
# The rebalance cluster

REBALANCE_SKEWED: Final = 3


def rebalance_cluster(nodes: int, pods: int) -> dict[str, Any]:
    """A ``topospread rebalance`` input: the sweep's cluster (its Deployments kept to its three
    zones by required node affinity, so a new zone is not theirs), ``REBALANCE_SKEWED`` small
    Deployments of 6 replicas spread by zone (DoNotSchedule), then a fourth zone of two nodes
    joins: each small Deployment goes 2/2/2/0, past its maxSkew of 1, and needs one eviction."""
    doc = sweep_cluster(nodes, pods)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": ZONE, "operator": "In", "values": list(TIMELINE_ZONES)}
                        ]
                    }
                ]
            }
        }
    }
    for d in doc["objects"]:
        d["spec"]["template"]["spec"]["affinity"] = affinity
    for i in range(REBALANCE_SKEWED):
        app = f"skewed-{i}"
        selector = {"matchLabels": {"app": app}}
        doc["objects"].append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": app, "namespace": "default"},
                "spec": {
                    "replicas": 6,
                    "selector": selector,
                    "template": {
                        "metadata": {"labels": {"app": app}},
                        "spec": {
                            "containers": [{"name": app, "image": f"registry.example.com/{app}:1"}],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": ZONE,
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": selector,
                                    "matchLabelKeys": ["pod-template-hash"],
                                }
                            ],
                        },
                    },
                },
            }
        )
    extra = _node_group({"zone-d": 0})
    extra["name"] = "extra"
    extra["zones"] = ["zone-d"]
    doc["nodeGroups"].append(extra)
    doc["timeline"] = [
        {"name": "zone-d joins", "addNodes": {"group": "extra", "zone": "zone-d", "count": 2}}
    ]
    return doc


def write_rebalance_cluster(path: Path, nodes: int, pods: int) -> tuple[int, int]:
    """Write the rebalance input; returns its (nodes, pods) before zone-d joins."""
    doc = rebalance_cluster(nodes, pods)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    written_nodes = sum(doc["nodeGroups"][0]["perZone"].values())
    return written_nodes, sum(int(d["spec"]["replicas"]) for d in doc["objects"])


# ---------------------------------------------------------------------------------------------
# The HTML report's timeline


def html_timeline() -> dict[str, Any]:
    """The timeline's steps on 300 nodes and 4,000 pods (3,700 then a scale-up of 300): the
    size issue 13 names for the HTML report."""
    doc = timeline(10)
    for d in doc["objects"]:
        d["spec"]["replicas"] = 370
    doc["timeline"][0]["scale"]["replicas"] = 370 + 300
    return doc


def write_html_timeline(path: Path) -> int:
    doc = html_timeline()
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    return sum(int(d["spec"]["replicas"]) for d in doc["objects"]) + 300
