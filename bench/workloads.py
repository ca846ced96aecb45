"""The clusters and pods of the benchmarks: upstream scheduler_perf's topology-spreading shapes.

Mirrors kube-scheduler's test/integration/scheduler_perf/topology_spreading/
performance-config.yaml and the templates it references (templates/node-default.yaml,
node-with-taint.yaml, pod-default.yaml, pod-with-topology-spreading.yaml,
pod-with-preferred-topology-spreading.yaml, pod-with-label.yaml,
pod-with-node-inclusion-policy.yaml, service.yaml), plus a Scale workload of our own. Objects
are built as typed structs with ``msgspec.convert`` (no YAML), then admitted as the API server
admits them (requests from limits, matchLabelKeys merged), as the scenario loader does.

Where upstream's harness draws at random, these builders are deterministic:
- ``generateName`` gets a counter instead of five random letters;
- ``labelNodePrepareStrategy`` assigns the zone values round robin (node i gets value i mod n);
- a ``createPods`` op without a namespace uses ``namespace-<op index>``, as scheduler_perf does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.api.admission import prepare_for_create
from topospread.api.defaults import default_node, default_pod
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    NODE_INCLUSION_POLICY_HONOR,
    SCHEDULE_ANYWAY,
    Node,
    Pod,
    Service,
)

MOONS: Final = ("moon-1", "moon-2", "moon-3")
PAUSE_IMAGE: Final = "registry.k8s.io/pause:3.10.1"
# templates/node-default.yaml: the capacity every scheduler_perf node reports.
NODE_CAPACITY: Final = {"pods": "110", "cpu": "4", "memory": "32Gi"}


@dataclass(slots=True)
class Setup:
    """One workload's inputs: the cluster, the unmeasured pods, then the measured ones.

    ``bound`` pods start on their nodes (no scheduling); ``init`` pods are scheduled first,
    unmeasured; ``measured`` pods are the ones whose scheduling is timed.
    """

    nodes: list[Node]
    bound: list[Pod] = field(default_factory=list)
    init: list[Pod] = field(default_factory=list)
    measured: list[Pod] = field(default_factory=list)
    objects: list[Service] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Workload:
    """A named benchmark; ``build(divisor)`` makes its inputs at 1/divisor of the full size."""

    family: str
    size_name: Callable[[int], str]
    build: Callable[[int], Setup]

    def name(self, divisor: int) -> str:
        return f"{self.family}/{self.size_name(divisor)}"


# ---------------------------------------------------------------------------------------------
# Objects


def make_node(
    name: str, labels: dict[str, str] | None = None, taints: list[dict[str, str]] | None = None
) -> Node:
    """templates/node-default.yaml (or node-with-taint.yaml with ``taints``), with the hostname
    label scheduler_perf's node preparer adds to every node it creates."""
    raw: dict[str, Any] = {
        "metadata": {"name": name, "labels": {LABEL_HOSTNAME: name, **(labels or {})}},
        "spec": {"taints": taints or []},
        "status": {"capacity": dict(NODE_CAPACITY)},
    }
    return default_node(msgspec.convert(raw, Node))


def zoned_nodes(n: int, zones: tuple[str, ...], prefix: str = "scheduler-perf-") -> list[Node]:
    return [
        make_node(f"{prefix}{i}", {LABEL_TOPOLOGY_ZONE: zones[i % len(zones)]}) for i in range(n)
    ]


def make_pod(
    name: str,
    namespace: str,
    *,
    labels: dict[str, str] | None = None,
    cpu: str | None = "100m",
    memory: str | None = "500Mi",
    constraints: list[dict[str, Any]] | None = None,
    node_name: str = "",
    port: bool = True,
) -> Pod:
    """A pause pod as scheduler_perf's templates write it, admitted as the API server would.

    With ``cpu``/``memory`` the container sets limits equal to requests (pod-default.yaml);
    ``port`` adds ``containerPort: 80`` (no hostPort: the NodePorts plugin has nothing to do).
    """
    container: dict[str, Any] = {"name": "pause", "image": PAUSE_IMAGE}
    if port:
        container["ports"] = [{"containerPort": 80}]
    resources = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    if resources:
        container["resources"] = {"limits": dict(resources), "requests": resources}
    spec: dict[str, Any] = {
        "containers": [container],
        # What the Priority admission plugin writes when no PriorityClass is named.
        "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if constraints:
        spec["topologySpreadConstraints"] = constraints
    if node_name:
        spec["nodeName"] = node_name
    raw = {
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
        "spec": spec,
    }
    return prepare_for_create(default_pod(msgspec.convert(raw, Pod)))


def spread(
    key: str, max_skew: int, when: str, selector: dict[str, str], **policies: str
) -> dict[str, Any]:
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": selector},
        **policies,
    }


def service(name: str, namespace: str, selector: dict[str, str]) -> Service:
    """templates/service.yaml: a Service whose selector feeds the default spread constraints."""
    raw = {"metadata": {"name": name, "namespace": namespace}, "spec": {"selector": selector}}
    return msgspec.convert(raw, Service)


def default_pods(n: int, namespace: str) -> list[Pod]:
    """templates/pod-default.yaml: no labels, 100m / 500Mi."""
    return [make_pod(f"pod-{i}", namespace) for i in range(n)]


# ---------------------------------------------------------------------------------------------
# Workloads (upstream: topology_spreading/performance-config.yaml)


def _topology_spreading(when: str) -> Callable[[int], Setup]:
    def build(d: int) -> Setup:
        # ops: 0 createNodes, 1 createPods (init), 2 createPods (measured)
        blue = {"color": "blue"}
        constraint = spread(LABEL_TOPOLOGY_ZONE, 5, when, blue)
        return Setup(
            nodes=zoned_nodes(5000 // d, MOONS),
            init=default_pods(5000 // d, "namespace-1"),
            measured=[
                make_pod(f"spreading-pod-{i}", "namespace-2", labels=blue, constraints=[constraint])
                for i in range(5000 // d)
            ],
        )

    return build


def _default_topology_spreading(d: int) -> Setup:
    # ops: 0 createNodes, 1 createAny (Service in service-ns), 2 createPods, 3 createPods
    app = {"app": "scheduler-perf"}
    return Setup(
        nodes=zoned_nodes(5000 // d, MOONS),
        objects=[service("service-0", "service-ns", app)],
        init=default_pods(5000 // d, "namespace-2"),
        # templates/pod-with-label.yaml: no requests, no ports, no constraints of its own.
        measured=[
            make_pod(f"pod-{i}", "service-ns", labels=app, cpu=None, memory=None, port=False)
            for i in range(50_000 // d)
        ],
    )


def _node_inclusion_policy(d: int) -> Setup:
    # ops: 0 createNodes (normal), 1 createNodes (tainted), 2 createPods (measured)
    foo = {"foo": "bar"}
    taint = [{"key": "foo", "effect": "NoSchedule"}]
    constraint = spread(
        LABEL_HOSTNAME,
        1,
        DO_NOT_SCHEDULE,
        foo,
        nodeAffinityPolicy=NODE_INCLUSION_POLICY_HONOR,
        nodeTaintsPolicy=NODE_INCLUSION_POLICY_HONOR,
    )
    nodes = [make_node(f"scheduler-perf-{i}") for i in range(4000 // d)]
    nodes += [make_node(f"taint-node-{i}", taints=taint) for i in range(1000 // d)]
    return Setup(
        nodes=nodes,
        measured=[
            make_pod(
                f"spreading-pod-with-node-inclusion-policy-{i}",
                "namespace-2",
                labels=foo,
                constraints=[constraint],
            )
            for i in range(4000 // d)
        ],
    )


# The Scale workload: a large, busy cluster. 500,000 pods of 50 apps already run on 65,000
# nodes (about 8 per node); one app, already 10,000 pods strong, is scaled up by 10,000 pods
# that must stay balanced across zones (hard) and should spread over nodes (soft).
SCALE_ZONES: Final = tuple(f"zone-{z}" for z in range(5))
SCALE_APPS: Final = 50


def _bound_scale_pods(n: int, nodes: list[Node]) -> Iterator[Pod]:
    for i in range(n):
        app = f"app-{i % SCALE_APPS}"
        yield make_pod(
            f"{app}-{i // SCALE_APPS}",
            "scale",
            labels={"app": app, "tier": "backend" if i % 3 else "frontend"},
            cpu="50m",
            memory="128Mi",
            node_name=nodes[i % len(nodes)].metadata.name,
        )


def _scale(d: int) -> Setup:
    nodes = zoned_nodes(65_000 // d, SCALE_ZONES, prefix="node-")
    app = {"app": "app-0", "tier": "frontend"}
    selector = {"app": "app-0"}
    constraints = [
        spread(LABEL_TOPOLOGY_ZONE, 1, DO_NOT_SCHEDULE, selector),
        spread(LABEL_HOSTNAME, 1, SCHEDULE_ANYWAY, selector),
    ]
    return Setup(
        nodes=nodes,
        bound=list(_bound_scale_pods(500_000 // d, nodes)),
        measured=[
            make_pod(f"app-0-new-{i}", "scale", labels=app, constraints=constraints)
            for i in range(10_000 // d)
        ],
    )


WORKLOADS: Final = (
    Workload(
        "TopologySpreading",
        lambda d: f"{5000 // d}Nodes_{5000 // d}Pods",
        _topology_spreading(DO_NOT_SCHEDULE),
    ),
    Workload(
        "PreferredTopologySpreading",
        lambda d: f"{5000 // d}Nodes_{5000 // d}Pods",
        _topology_spreading(SCHEDULE_ANYWAY),
    ),
    Workload(
        "DefaultTopologySpreading",
        lambda d: f"{5000 // d}Nodes_{50_000 // d}Pods",
        _default_topology_spreading,
    ),
    Workload(
        "SchedulingWithNodeInclusionPolicy",
        lambda d: f"{5000 // d}Nodes",
        _node_inclusion_policy,
    ),
    Workload(
        "Scale",
        lambda d: f"{65_000 // d}Nodes_{500_000 // d}BoundPods_{10_000 // d}Pods",
        _scale,
    ),
)
