"""The chart cluster's nodes: five EKS managed node groups (instance types, capacities, taints)
over three zones of us-west-2, each node as ``kubectl get -o yaml`` prints it, and the room
left on each as the generator places bound pods.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Final

from kube_objects import HOSTNAME, TIMESTAMP, ZONE, object_meta, uid

REGION: Final = "us-west-2"
ZONES: Final = tuple(f"{REGION}{z}" for z in "abc")


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


@dataclass(slots=True)
class Node:
    name: str
    group: NodeGroup
    zone: str
    ip: str
    free_milli: int
    pods: int = 0


def make_nodes(rng: random.Random, divisor: int) -> tuple[list[dict[str, Any]], list[Node]]:
    out: list[dict[str, Any]] = []
    nodes: list[Node] = []
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
                    "metadata": object_meta(
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
            nodes.append(Node(name, group, zone, ip, milli))
            i += 1
    return out, nodes


def place(rng: random.Random, nodes: list[Node], cpu_milli: int, avoid: set[str]) -> Node:
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
