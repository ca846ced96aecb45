"""The chart cluster, the end-to-end benchmarks' ``schedule`` input (the ChartCluster workloads).

``write_chart_cluster`` writes an EKS-like cluster as one ``kubectl get
nodes,pods,daemonsets,deployments,replicasets,... -A -o yaml`` List: five node groups
(instance types, capacities, taints: eks_nodes.py), three zones, about ten bound pods a node
(three DaemonSet pods on every node: aws-node, kube-proxy, node-exporter with hostPort 9100;
CoreDNS; some thirty Helm-chart Deployments, each pod with a preferred podAntiAffinity on its
own app over hostnames), then the Pending pods of one Deployment being scaled up, with a hard
zone spread, a soft hostname spread and a preferred podAntiAffinity. Every pod carries what the
API server and the kubelet add (kube_objects.py), so loading is measured on realistic objects.
``topospread schedule --nodes FILE`` reads it all. Its stateful variant is chart_storage.py's.

Deterministic: one seeded ``random.Random`` draws every name suffix and placement.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import chart_storage
import yaml
from eks_nodes import make_nodes, place
from kube_objects import (
    DEFAULT_TOLERATIONS,
    HOSTNAME,
    SYSTEM_CLUSTER_CRITICAL,
    SYSTEM_NODE_CRITICAL,
    ZONE,
    daemon_set,
    deployment,
    object_meta,
    pod,
    preferred_anti_affinity,
    suffix,
)

SEED: Final = 20250601

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

    node_objs, nodes = make_nodes(rng, divisor)
    yield from node_objs
    if stateful:
        yield chart_storage.storage_class(object_meta(rng, chart_storage.STORAGE_CLASS))
        for node in nodes:
            yield chart_storage.csi_node(object_meta(rng, node.name), node.name)
    namespaces = sorted({"kube-system", "monitoring", QUEUED_APP[1]} | {c[1] for c in CHARTS})
    for ns in namespaces:
        yield {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": object_meta(rng, ns, labels={"kubernetes.io/metadata.name": ns}),
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
        obj, owner = daemon_set(rng, name, ns, image, len(nodes))
        yield obj
        for node in nodes:
            node.free_milli -= cpu
            node.pods += 1
            placed += 1
            yield pod(
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
    objs, owner, pod_hash = deployment(
        rng, "coredns", "kube-system", dns_labels, dns_replicas, template
    )
    yield from objs
    dns_nodes: set[str] = set()
    for _ in range(dns_replicas):
        node = place(rng, general, 100, dns_nodes)
        dns_nodes.add(node.name)
        placed += 1
        yield pod(
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
            affinity=preferred_anti_affinity({"k8s-app": "kube-dns"}),
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
            yield from chart_storage.stateful_chart(
                rng, (name, ns, image, cpu, mem), replicas, general
            )
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
        objs, owner, pod_hash = deployment(rng, name, ns, labels, replicas, template)
        yield from objs
        on: set[str] = set()
        for _ in range(replicas):
            node = place(rng, gpu_nodes if gpu else general, cpu, on)
            on.add(node.name)
            affinity = preferred_anti_affinity({"app.kubernetes.io/name": name})
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
            yield pod(
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
        yield from chart_storage.stateful_queue(
            rng, QUEUED_APP, labels, constraints, queued, template
        )
        return
    objs, owner, pod_hash = deployment(rng, name, ns, labels, queued, template)
    yield from objs
    for _ in range(queued):
        yield pod(
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
            affinity=preferred_anti_affinity({"app.kubernetes.io/name": name}),
            constraints=constraints,
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
