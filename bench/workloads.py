"""The clusters and pods of the benchmarks: upstream scheduler_perf's shapes.

Mirrors kube-scheduler's test/integration/scheduler_perf/topology_spreading/
performance-config.yaml and the templates it references (templates/node-default.yaml,
node-with-taint.yaml, pod-default.yaml, pod-with-topology-spreading.yaml,
pod-with-preferred-topology-spreading.yaml, pod-with-label.yaml,
pod-with-node-inclusion-policy.yaml, service.yaml), plus a Scale workload of our own; the
pod (anti-)affinity workloads of affinity/performance-config.yaml (templates/
pod-with-pod-anti-affinity.yaml, pod-with-pod-affinity.yaml, pod-with-preferred-pod-affinity.yaml,
pod-with-preferred-pod-anti-affinity.yaml); and Unschedulable and PreemptionBasic from
misc/performance-config.yaml (the base pod of scheduler_perf's util.go, pod-default.yaml,
pod-high-priority-large-cpu.yaml, pod-low-priority.yaml, pod-high-priority.yaml). Each workload
is built at upstream's largest ``performance``-labelled size (the ``_QueueingHintsEnabled`` and
``_AsyncAPICallsEnabled`` twins have the same shape and are left out). Objects
are built as typed structs with ``msgspec.convert`` (no YAML), then admitted as the API server
admits them (requests from limits, matchLabelKeys merged), as the scenario loader does.

Where upstream's harness draws at random, these builders are deterministic:
- ``generateName`` gets a counter instead of five random letters;
- ``labelNodePrepareStrategy`` assigns the zone values round robin (node i gets value i mod n);
- a ``createPods`` op without a namespace uses ``namespace-<op index>``, as scheduler_perf does;
- a ``churn`` op (Unschedulable) creates a pod every 200 ms of wall time; here one churn pod is
  enqueued after every ``churn_every`` measured pods bound, the rate upstream's threshold implies.

The ChartCluster and SimulateTimeline workloads (bench/chart.py, bench/timeline_scenario.py) are
not built here: they write manifests and run the ``topospread`` CLI end to end.
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
    # Pods enqueued while the measured ones are scheduled, one after every ``churn_every``
    # measured pods bound (upstream's churn op); they are not measured.
    churn: list[Pod] = field(default_factory=list)
    churn_every: int = 0


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
    affinity: dict[str, Any] | None = None,
    priority: int = 0,
    limits: bool = True,
) -> Pod:
    """A pause pod as scheduler_perf's templates write it, admitted as the API server would.

    With ``cpu``/``memory`` the container sets limits equal to requests (pod-default.yaml);
    ``port`` adds ``containerPort: 80`` (no hostPort: the NodePorts plugin has nothing to do);
    ``limits=False`` sets requests only (pod-high-priority-large-cpu.yaml).

    ``priority`` is written to ``spec.priority`` as the Priority admission plugin resolves it:
    scheduler_perf's templates set ``spec.priority`` themselves (pod-high-priority.yaml: 10) and
    name no PriorityClass, so a pod without it gets the default 0.
    """
    container: dict[str, Any] = {"name": "pause", "image": PAUSE_IMAGE}
    if port:
        container["ports"] = [{"containerPort": 80}]
    resources = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    if resources:
        container["resources"] = {"requests": resources}
        if limits:
            container["resources"]["limits"] = dict(resources)
    spec: dict[str, Any] = {
        "containers": [container],
        # What the Priority admission plugin writes (no PriorityClass is named).
        "priority": priority,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    if affinity:
        spec["affinity"] = affinity
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


# ---------------------------------------------------------------------------------------------
# Workloads (upstream: affinity/performance-config.yaml)

# The namespaces every (anti-)affinity template's term names: createNamespaces prefix sched,
# count 2; the init pods go to sched-0, the measured ones to sched-1.
SCHED_NAMESPACES: Final = ["sched-1", "sched-0"]
ZONE1: Final = ("zone1",)


def _affinity_term(color: str, key: str) -> dict[str, Any]:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": key,
        "namespaces": list(SCHED_NAMESPACES),
    }


def _affinity(kind: str, color: str, key: str, *, preferred: bool) -> dict[str, Any]:
    """``{kind: {required...: [term]}}`` or ``{kind: {preferred...: [{weight 1, term}]}}``."""
    term = _affinity_term(color, key)
    if preferred:
        terms = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 1, "podAffinityTerm": term}
            ]
        }
    else:
        terms = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    return {kind: terms}


def _pod_affinity_workload(
    prefix: str,
    color: str,
    affinity: dict[str, Any],
    *,
    nodes: int,
    init: int,
    measured: int,
    zones: tuple[str, ...] = (),
) -> Callable[[int], Setup]:
    """One template for init (sched-0) and measured (sched-1) pods; nodes from
    node-default.yaml, labelled ``zone1`` when the workload's createNodes op says so."""

    def pods(n: int, namespace: str) -> list[Pod]:
        labels = {"color": color}
        return [
            make_pod(f"{prefix}{i}", namespace, labels=labels, affinity=affinity) for i in range(n)
        ]

    def build(d: int) -> Setup:
        node_list = (
            zoned_nodes(nodes // d, zones)
            if zones
            else [make_node(f"scheduler-perf-{i}") for i in range(nodes // d)]
        )
        return Setup(
            nodes=node_list,
            init=pods(init // d, "sched-0"),
            measured=pods(measured // d, "sched-1"),
        )

    return build


# ---------------------------------------------------------------------------------------------
# Workloads (upstream: misc/performance-config.yaml)

# Upstream's churn op creates one pod every 200 ms; at the ~600 pods/s of Unschedulable's
# threshold that is one churn pod per 120 measured pods.
UNSCHEDULABLE_CHURN_EVERY: Final = 120


def _unschedulable(d: int) -> Setup:
    # ops: 0 createNodes, 1 createPods (init: the base pod, 100m / 500Mi, schedulable),
    # 2 churn (pod-high-priority-large-cpu.yaml: 9 CPU on 4-CPU nodes, never schedulable),
    # 3 createPods (measured: pod-default.yaml)
    measured = 10_000 // d
    return Setup(
        nodes=[make_node(f"scheduler-perf-{i}") for i in range(5000 // d)],
        init=default_pods(20_000 // d, "namespace-1"),
        measured=default_pods(measured, "namespace-3"),
        churn=[
            make_pod(f"pod-h-{i}", "namespace-2", cpu="9", priority=10, limits=False)
            for i in range(measured // UNSCHEDULABLE_CHURN_EVERY + 1)
        ],
        churn_every=UNSCHEDULABLE_CHURN_EVERY,
    )


def _preemption_basic(d: int) -> Setup:
    # ops: 0 createNodes, 1 createPods (init: pod-low-priority.yaml, 900m, 4 fill a 4-CPU
    # node), 2 createPods (measured: pod-high-priority.yaml, 3 CPU, priority 10: each preempts
    # three low-priority pods of one node)
    return Setup(
        nodes=[make_node(f"scheduler-perf-{i}") for i in range(1000 // d)],
        init=[make_pod(f"pod-{i}", "namespace-1", cpu="900m") for i in range(4000 // d)],
        measured=[
            make_pod(f"pod-{i}", "namespace-2", cpu="3000m", priority=10) for i in range(1000 // d)
        ],
    )


def _k(n: int) -> str:
    """scheduler_perf's short counts: 5000 -> 5k, 500 -> 500."""
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


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
    Workload(
        "SchedulingPodAntiAffinity",
        lambda d: f"{5000 // d}Nodes_{2000 // d}Pods",
        _pod_affinity_workload(
            "anti-affinity-pod-",
            "green",
            _affinity("podAntiAffinity", "green", LABEL_HOSTNAME, preferred=False),
            nodes=5000,
            init=1000,
            measured=2000,
        ),
    ),
    Workload(
        "SchedulingPodAffinity",
        lambda d: f"{5000 // d}Nodes_{5000 // d}Pods",
        _pod_affinity_workload(
            "affinity-pod-",
            "blue",
            _affinity("podAffinity", "blue", LABEL_TOPOLOGY_ZONE, preferred=False),
            nodes=5000,
            init=5000,
            measured=5000,
            zones=ZONE1,
        ),
    ),
    Workload(
        "SchedulingPreferredPodAffinity",
        lambda d: f"{5000 // d}Nodes_{5000 // d}Pods",
        _pod_affinity_workload(
            "preferred-affinity-pod-",
            "red",
            _affinity("podAffinity", "red", LABEL_HOSTNAME, preferred=True),
            nodes=5000,
            init=5000,
            measured=5000,
        ),
    ),
    Workload(
        "SchedulingPreferredPodAntiAffinity",
        lambda d: f"{5000 // d}Nodes_{5000 // d}Pods",
        _pod_affinity_workload(
            "preferred-anti-affinity-pod-",
            "yellow",
            _affinity("podAntiAffinity", "yellow", LABEL_HOSTNAME, preferred=True),
            nodes=5000,
            init=5000,
            measured=5000,
        ),
    ),
    Workload(
        "Unschedulable",
        lambda d: f"{_k(5000 // d)}Nodes/{_k(20_000 // d)}Init/{_k(10_000 // d)}Pods",
        _unschedulable,
    ),
    Workload(
        "PreemptionBasic",
        lambda d: f"{1000 // d}Nodes",
        _preemption_basic,
    ),
)
