"""The descheduler's RemovePodsViolatingTopologySpreadConstraint (v0.34), one cycle: cases from
its documented behaviour and its own test table (topologyspreadconstraint_test.go), rebuilt
with our builders. Pods are listed node by node in the order given, which is the order the
upstream table's sorted fake listing produces for these names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from builders import NodeBuilder, PodBuilder, make_node, make_pod, match_labels
from topospread.analysis.descheduler import (
    DeschedulerEviction,
    DeschedulerOptions,
    descheduler_evictions,
    is_ready,
)
from topospread.analysis.simulate import settle_timeline
from topospread.api.types import LabelSelector, Node, NodeCondition, OwnerReference, Pod, Volume
from topospread.framework.types import NodeInfo
from topospread.labels.selector import label_selector_as_selector, parse
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline

WEB = match_labels(app="web")
ZONE = "topology.kubernetes.io/zone"
OPTS = DeschedulerOptions()

PodSpec = Callable[[PodBuilder], PodBuilder]
Tweak = Callable[[Pod], Pod]


def _same(b: PodBuilder) -> PodBuilder:
    return b


def web_pod(
    name: str,
    node: str,
    *,
    max_skew: int = 1,
    key: str = "zone",
    when: str = "DoNotSchedule",
    namespace: str = "default",
    extra: PodSpec = _same,
) -> Pod:
    """A ReplicaSet's pod labelled app=web with one spread constraint over app=web."""
    b = (
        make_pod(name)
        .namespace(namespace)
        .label("app", "web")
        .owner("ReplicaSet", "web-1")
        .node(node)
        .spread_constraint(max_skew, key, when, WEB)
    )
    return extra(b).obj()


def zone_node(name: str, zone: str, cpu: str = "2", **labels: str) -> Node:
    b = make_node(name).label("zone", zone).capacity(cpu=cpu, memory="3Gi", pods="10")
    for k, v in labels.items():
        b = b.label(k, v)
    return b.obj()


def _as_is(pod: Pod) -> Pod:
    return pod


def spread(
    sizes: dict[str, int],
    *,
    max_skew: int = 1,
    when: str = "DoNotSchedule",
    extra: PodSpec = _same,
    tweak: Tweak = _as_is,
) -> list[NodeInfo]:
    """One node per zone (n-<zone>) holding ``sizes[zone]`` web pods named <zone>-<i>."""
    return [
        NodeInfo(
            zone_node(f"n-{zone}", zone),
            [
                tweak(
                    web_pod(f"{zone}-{i}", f"n-{zone}", max_skew=max_skew, when=when, extra=extra)
                )
                for i in range(count)
            ],
        )
        for zone, count in sizes.items()
    ]


def evicted(nodes: list[NodeInfo], **options: Any) -> list[str]:
    return [e.pod for e in descheduler_evictions(nodes, DeschedulerOptions(**options))]


# ------------------------------------------------------------------ counting and moving


def test_two_domains_3_and_1_evict_one_pod_from_the_back_of_the_larger() -> None:
    (eviction,) = descheduler_evictions(spread({"a": 3, "b": 1}), DeschedulerOptions())
    assert eviction == DeschedulerEviction(
        pod="default/a-2",
        node="n-a",
        constraint="default/app=web zone",
        reason="zone=a has 3 matching pods, zone=b has 1 (ideal average 2.00, maxSkew 1): "
        "1 to move from zone=a toward zone=b",
    )


@pytest.mark.parametrize(
    "sizes, max_skew, want",
    [
        pytest.param({"a": 2, "b": 1}, 1, 0, id="2 domains [2,1] maxSkew=1 move 0"),
        pytest.param({"a": 5, "b": 5, "c": 5}, 1, 0, id="3 domains [5,5,5] move 0"),
        pytest.param({"a": 5, "b": 2}, 1, 1, id="2 domains [5,2] maxSkew=1 move 1 for [4,3]"),
        pytest.param({"a": 4, "b": 0}, 1, 2, id="2 domains [4,0] maxSkew=1 move 2 for [2,2]"),
        pytest.param({"a": 2, "b": 4}, 2, 0, id="2 domains [2,4] maxSkew=2 move 0"),
        pytest.param({"a": 2, "b": 6}, 2, 1, id="2 domains [2,6] maxSkew=2 move 1 for [3,5]"),
        pytest.param({"a": 0, "b": 1, "c": 100}, 1, 66, id="[0,1,100] move 66 for [34,33,34]"),
        pytest.param({"a": 0, "b": 1, "c": 3, "d": 5}, 1, 3, id="[0,1,3,5] move 3 for [2,2,3,2]"),
        pytest.param({"a": 8, "b": 7, "c": 0}, 1, 5, id="[8,7,0] move 5 for [5,5,5]"),
    ],
)
def test_upstream_domain_tables(sizes: dict[str, int], max_skew: int, want: int) -> None:
    assert len(evicted(spread(sizes, max_skew=max_skew))) == want


def test_five_one_zero_takes_two_toward_the_empty_domain_then_one_toward_the_other() -> None:
    # Sorted [c=0, b=1, a=5], average 2: a gives 2 to c (min of ceil(5-2), ceil(2-0),
    # ceil((5-0-1)/2)), then c=2 and a=3 are within the skew, so a gives 1 to b.
    evictions = descheduler_evictions(spread({"a": 5, "b": 1, "c": 0}), DeschedulerOptions())
    assert [e.pod for e in evictions] == ["default/a-3", "default/a-4", "default/a-2"]
    assert [e.reason.rsplit("toward ", 1)[1] for e in evictions] == ["zone=c", "zone=c", "zone=b"]


def test_pods_picked_for_two_constraints_are_evicted_once() -> None:
    def hostname_too(b: PodBuilder) -> PodBuilder:
        return b.spread_constraint(1, "kubernetes.io/hostname", "DoNotSchedule", WEB)

    nodes = spread({"a": 3, "b": 1}, extra=hostname_too)
    for info in nodes:
        labels = {**info.node.metadata.labels, "kubernetes.io/hostname": info.name}
        meta = msgspec.structs.replace(info.node.metadata, labels=labels)
        info.set_node(msgspec.structs.replace(info.node, metadata=meta))
    evictions = descheduler_evictions(nodes, DeschedulerOptions())
    # Both constraints see the same two domains and pick the same pod.
    assert [(e.pod, e.constraint) for e in evictions] == [("default/a-2", "default/app=web zone")]


# ------------------------------------------------------------------ which constraints count


@pytest.mark.parametrize(
    "include_soft, want",
    [
        pytest.param(False, [], id="ScheduleAnyway ignored by default"),
        pytest.param(True, ["default/a-2"], id="constraints DoNotSchedule and ScheduleAnyway"),
    ],
)
def test_soft_constraints_only_when_included(include_soft: bool, want: list[str]) -> None:
    nodes = spread({"a": 3, "b": 1}, when="ScheduleAnyway")
    assert evicted(nodes, include_soft_constraints=include_soft) == want


def test_match_label_keys_split_two_replica_sets_into_balanced_constraints() -> None:
    def hashed(value: str) -> PodSpec:
        def apply(b: PodBuilder) -> PodBuilder:
            return b.label("pod-template-hash", value)

        return apply

    def pod(name: str, hash_: str) -> Pod:
        b = make_pod(name).label("app", "web").owner("ReplicaSet", f"web-{hash_}").node("n-a")
        b = hashed(hash_)(b).spread_constraint(
            1, "zone", "DoNotSchedule", WEB, match_label_keys=["pod-template-hash"]
        )
        return b.obj()

    def cluster(*hashes: str) -> list[NodeInfo]:
        return [
            NodeInfo(zone_node("n-a", "a"), [pod(f"p-{i}", h) for i, h in enumerate(hashes)]),
            NodeInfo(zone_node("n-b", "b")),
        ]

    assert evicted(cluster("x", "x")) == ["default/p-1"]
    assert evicted(cluster("x", "y")) == []


def test_node_affinity_policy_honor_leaves_nodes_the_pods_cannot_use_out_of_the_domains() -> None:
    def os_node(name: str, os: str) -> NodeBuilder:
        return make_node(name).label("node", name).label("os", os)

    linux = [os_node(f"lin-{c}", "linux") for c in "abc"]
    windows = [os_node(f"win-{c}", "windows") for c in "abc"]

    def windows_pod(name: str, node: str) -> Pod:
        return (
            make_pod(name)
            .label("app", "web")
            .owner("ReplicaSet", "web-1")
            .node(node)
            .node_selector("os", "windows")
            .spread_constraint(1, "node", "DoNotSchedule", WEB)
            .obj()
        )

    def cluster(extra_windows_node: bool) -> list[NodeInfo]:
        sizes = {"win-a": 3, "win-b": 3, "win-c": 2}
        infos = [NodeInfo(b.capacity(cpu="2").obj()) for b in linux]
        infos += [
            NodeInfo(
                b.capacity(cpu="2").obj(),
                [windows_pod(f"{name}-{i}", name) for i in range(sizes[name])],
            )
            for b, name in zip(windows, sizes, strict=True)
        ]
        if extra_windows_node:
            infos.append(NodeInfo(os_node("win-d", "windows").capacity(cpu="2").obj()))
        return infos

    # [0,0,0,3,3,2] would be out of balance; the linux nodes are not domains of these pods.
    assert evicted(cluster(False)) == []
    assert len(evicted(cluster(True))) == 2


def test_a_pod_on_a_node_its_constraint_leaves_out_still_counts_in_a_domain_of_its_own() -> None:
    # kube-scheduler would see zones a and b only ([1, 1]); the descheduler adds zone c,
    # created by the pods on the relabelled node, and moves one of them.
    def blue(b: PodBuilder) -> PodBuilder:
        return b.node_selector("pool", "blue")

    def cluster_node(name: str, zone: str, pool: str, pods: int) -> NodeInfo:
        node = zone_node(name, zone, pool=pool)
        return NodeInfo(node, [web_pod(f"{zone}-{i}", name, extra=blue) for i in range(pods)])

    nodes = [
        cluster_node("n-a", "a", "blue", 1),
        cluster_node("n-b", "b", "blue", 1),
        cluster_node("n-c", "c", "green", 3),
    ]
    assert evicted(nodes) == ["default/c-2"]


def test_an_empty_label_selector_counts_every_pod_of_the_namespace() -> None:
    def pod(name: str, node: str, app: str) -> Pod:
        b = make_pod(name).label("app", app).owner("ReplicaSet", app).node(node)
        return b.spread_constraint(1, "zone", "DoNotSchedule", {}).obj()

    nodes = [
        NodeInfo(zone_node("n-a", "a"), [pod("a-0", "n-a", "x"), pod("a-1", "n-a", "y")]),
        NodeInfo(zone_node("n-a2", "a"), [pod("a-2", "n-a2", "z")]),
        NodeInfo(zone_node("n-b", "b"), [pod("b-0", "n-b", "x")]),
    ]
    (eviction,) = descheduler_evictions(nodes, DeschedulerOptions())
    assert (eviction.pod, eviction.constraint) == ("default/a-2", "default/<every pod> zone")


# ------------------------------------------------------------------ Ready nodes only


def with_ready(node: Node, status: str | None) -> Node:
    """The node with its Ready condition set to ``status`` (None: no condition at all)."""
    conditions = [] if status is None else [NodeCondition(type="Ready", status=status)]
    pressure = NodeCondition(type="MemoryPressure", status="False")
    return msgspec.structs.replace(
        node, status=msgspec.structs.replace(node.status, conditions=[pressure, *conditions])
    )


@pytest.mark.parametrize(
    "status, ready",
    [
        pytest.param(None, True, id="no Ready condition counts as Ready"),
        pytest.param("True", True, id="Ready True"),
        pytest.param("False", False, id="Ready False"),
        pytest.param("Unknown", False, id="Ready Unknown (the kubelet stopped posting)"),
    ],
)
def test_is_ready_reads_the_ready_condition_only(status: str | None, ready: bool) -> None:
    assert is_ready(with_ready(zone_node("n", "a"), status)) is ready


def test_a_not_ready_nodes_pods_are_not_counted_and_its_domain_is_not_pre_filled() -> None:
    # Zone c's only node, empty, turns NotReady: Ready, [c=0, b=2, a=4] (average 2) moves
    # min(ceil(4-2), ceil(2-0), ceil((4-0-1)/2)) = 2 pods from a toward c (NodeFit reads no
    # condition); NotReady, c is no domain, and [b=2, a=4] (average 3) moves 1 toward b.
    nodes = spread({"a": 4, "b": 2, "c": 0})
    assert [(e.pod, e.reason.rsplit(" ", 1)[1]) for e in descheduler_evictions(nodes, OPTS)] == [
        ("default/a-2", "zone=c"),
        ("default/a-3", "zone=c"),
    ]
    nodes[2].set_node(with_ready(nodes[2].node, "Unknown"))
    assert [(e.pod, e.reason.rsplit(" ", 1)[1]) for e in descheduler_evictions(nodes, OPTS)] == [
        ("default/a-3", "zone=b")
    ]
    # Its pods are not listed either: Ready, [b=1, a=3, c=3] (average 7/3) moves 1 from the
    # last domain, c, toward b, and then b=2 and a=3 are within maxSkew; NotReady, [b=1, a=3]
    # moves 1 from a.
    nodes = spread({"a": 3, "b": 1, "c": 3})
    assert evicted(nodes) == ["default/c-2"]
    nodes[2].set_node(with_ready(nodes[2].node, "False"))
    assert evicted(nodes) == ["default/a-2"]


def test_the_policys_node_selector_picks_the_nodes_before_readiness() -> None:
    nodes = spread({"a": 4, "b": 2, "c": 0})
    for info in nodes[:2]:
        labels = {**info.node.metadata.labels, "pool": "web"}
        meta = msgspec.structs.replace(info.node.metadata, labels=labels)
        info.set_node(msgspec.structs.replace(info.node, metadata=meta))
    assert evicted(nodes) == ["default/a-2", "default/a-3"]
    assert evicted(nodes, node_selector=parse("pool=web")) == ["default/a-3"]


def lost_zone_c() -> Simulation:
    """One node per zone, a Deployment spread by zone with ScheduleAnyway; cordons steer its
    scale-ups so that zone a holds 5 pods, b 1 and c 6; then zone c is lost (the timeline's
    loseZone: NotReady, tainted unreachable), and nothing else has happened yet: its pods are
    still bound there, waiting out their 300 s toleration."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx:1"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE,
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": {"app": "web"}},
                        }
                    ],
                },
            },
        },
    }

    def scale(replicas: int) -> dict[str, Any]:
        return {"scale": {"workload": "deployment/web", "replicas": replicas}}

    doc = {
        "nodeGroups": [{"name": "pool", "zones": ["a", "b", "c"], "perZone": 1}],
        "objects": [deployment],
        "timeline": [
            {"cordon": ["pool-a-1", "pool-b-1"]},
            scale(6),
            {"uncordon": "pool-a-1"},
            {"cordon": "pool-c-1"},
            scale(11),
            {"uncordon": "pool-b-1"},
            {"cordon": "pool-a-1"},
            scale(12),
            {"uncordon": ["pool-a-1", "pool-c-1"]},
            {"loseZone": "c"},
        ],
    }
    return settle_timeline(parse_timeline(doc, "t.yaml"), 0)


def test_right_after_a_zone_loss_the_model_evicts_what_upstream_would() -> None:
    sim = lost_zone_c()
    nodes = sim.cluster.list()
    pods = {info.name: [p.key for p in info.pods] for info in nodes}
    assert {n: len(p) for n, p in pods.items()} == {"pool-a-1": 5, "pool-b-1": 1, "pool-c-1": 6}
    lost = sim.cluster.infos["pool-c-1"].node
    assert not is_ready(lost) and {t.key for t in lost.spec.taints} == {
        "node.kubernetes.io/unreachable"
    }
    options = DeschedulerOptions(include_soft_constraints=True)
    got = descheduler_evictions(nodes, options)

    # Upstream by hand: Balance gets pool-a-1 and pool-b-1 (ReadyNodes), so the domains are
    # a=5 and b=1 (sum 6, average 3). Sorted [b, a]: move min(ceil(5-3), ceil(3-1),
    # ceil((4-1)/2)) = 2 from a, the back of its list (equal pods keep listing order, and all
    # fit pool-b-1); then a=3 is not above the average and the walk ends.
    reason = (
        f"{ZONE}=a has 5 matching pods, {ZONE}=b has 1 (ideal average 3.00, maxSkew 1): "
        f"2 to move from {ZONE}=a toward {ZONE}=b"
    )
    constraint = f"default/app=web {ZONE}"
    assert got == [
        DeschedulerEviction(pod, "pool-a-1", constraint, reason) for pod in pods["pool-a-1"][-2:]
    ]

    # Taking every node as Ready gives another answer: [b=1, a=5, c=6], average 4, moves 2
    # from c (pods on the lost node) toward b, then 1 from a toward b.
    all_ready = [NodeInfo(with_ready(i.node, None), list(i.pods)) for i in nodes]
    every_node = descheduler_evictions(all_ready, options)
    assert [(e.node, e.pod) for e in every_node] == [
        *(("pool-c-1", pod) for pod in pods["pool-c-1"][-2:]),
        ("pool-a-1", pods["pool-a-1"][-1]),
    ]
    assert every_node != got


# ------------------------------------------------------------------ the DefaultEvictor


def _meta(**changes: Any) -> Tweak:
    """Replace fields of the built pod's metadata (owners, annotations)."""

    def apply(pod: Pod) -> Pod:
        meta = msgspec.structs.replace(pod.metadata, **changes)
        return msgspec.structs.replace(pod, metadata=meta)

    return apply


def _spec(**changes: Any) -> Tweak:
    def apply(pod: Pod) -> Pod:
        return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, **changes))

    return apply


def _owned_by(kind: str) -> Tweak:
    return _meta(owner_references=[OwnerReference(api_version="apps/v1", kind=kind, name="x")])


def _annotated(key: str, value: str = "") -> Tweak:
    return _meta(annotations={key: value})


@pytest.mark.parametrize(
    "kind, option",
    [
        pytest.param(_owned_by("DaemonSet"), "evict_daemon_set_pods", id="DaemonSet pods"),
        pytest.param(_annotated("kubernetes.io/config.mirror"), None, id="mirror pods"),
        pytest.param(_annotated("kubernetes.io/config.source", "file"), None, id="static pods"),
        pytest.param(_meta(owner_references=[]), None, id="pods without an owner"),
        pytest.param(
            _spec(volumes=[Volume(name="scratch", empty_dir={})]),
            "evict_local_storage_pods",
            id="pods with local storage (emptyDir)",
        ),
        pytest.param(
            _spec(priority=2_000_000_000), "evict_system_critical_pods", id="system-critical pods"
        ),
        pytest.param(_meta(deletion_timestamp="2024-01-01T00:00:00Z"), None, id="terminating pods"),
    ],
)
def test_pods_the_default_evictor_protects_are_neither_counted_nor_evicted(
    kind: Tweak, option: str | None
) -> None:
    # Three protected pods in zone a, one ordinary pod in zone b: the plugin sees [0, 1].
    nodes = [
        NodeInfo(zone_node("n-a", "a"), [kind(web_pod(f"a-{i}", "n-a")) for i in range(3)]),
        NodeInfo(zone_node("n-b", "b"), [web_pod("b-0", "n-b")]),
    ]
    assert evicted(nodes) == []
    if option is not None:
        assert evicted(nodes, **{option: True}) == ["default/a-2"]


def test_the_evict_annotation_overrides_the_evictors_protections() -> None:
    protected_but_annotated = _meta(
        owner_references=[], annotations={"descheduler.alpha.kubernetes.io/evict": ""}
    )

    bare = _meta(owner_references=[])
    assert evicted(spread({"a": 3, "b": 1}, tweak=bare)) == []
    assert evicted(spread({"a": 3, "b": 1}, tweak=protected_but_annotated)) == ["default/a-2"]


def test_bare_pods_stay_even_with_evict_failed_bare_pods_as_failed_pods_are_never_listed() -> None:
    bare = _meta(owner_references=[])
    assert evicted(spread({"a": 3, "b": 1}, tweak=bare), evict_failed_bare_pods=True) == []


# ------------------------------------------------------------------ namespace and label filters


def _two_namespaces() -> list[NodeInfo]:
    pods_a = [
        web_pod(f"{ns}-a-{i}", "n-a", namespace=ns) for ns in ("blue", "green") for i in range(3)
    ]
    pods_b = [web_pod(f"{ns}-b-0", "n-b", namespace=ns) for ns in ("blue", "green")]
    return [NodeInfo(zone_node("n-a", "a"), pods_a), NodeInfo(zone_node("n-b", "b"), pods_b)]


@pytest.mark.parametrize(
    "options, want",
    [
        pytest.param({}, ["blue/blue-a-2", "green/green-a-2"], id="every namespace, by name"),
        pytest.param({"namespaces": ("green",)}, ["green/green-a-2"], id="include"),
        pytest.param({"exclude_namespaces": ("green",)}, ["blue/blue-a-2"], id="exclude"),
    ],
)
def test_namespaces_are_balanced_separately_and_filtered(
    options: dict[str, Any], want: list[str]
) -> None:
    assert evicted(_two_namespaces(), **options) == want


@pytest.mark.parametrize(
    "selector, want",
    [
        pytest.param(match_labels(app="api"), [], id="unmatched label filtering moves 0"),
        pytest.param(match_labels(app="web"), ["default/a-1"], id="matched label filtering"),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["api"]}]},
            ["default/a-1"],
            id="matched label filtering (NotIn)",
        ),
    ],
)
def test_the_plugins_label_selector(selector: dict[str, Any], want: list[str]) -> None:
    nodes = spread({"a": 2, "b": 0})
    compiled = label_selector_as_selector(msgspec.convert(selector, LabelSelector))
    assert evicted(nodes, label_selector=compiled) == want


# ------------------------------------------------------------------ which pods go first


def test_the_highest_priority_unpinned_pods_are_taken_first() -> None:
    # Upstream sorts by ascending priority and takes from the back (its comment says the
    # opposite); pods with a nodeSelector or node affinity sort before all others.
    def with_priority(value: int | None, pinned: bool = False) -> PodSpec:
        def apply(b: PodBuilder) -> PodBuilder:
            if value is not None:
                b = b.priority(value)
            return b.node_selector("disk", "ssd") if pinned else b

        return apply

    specs = [
        with_priority(1000, pinned=True),
        with_priority(10),
        with_priority(None),
        with_priority(500),
    ]
    pods = [web_pod(f"a-{i}", "n-a", extra=s) for i, s in enumerate(specs)]
    nodes = [
        NodeInfo(zone_node("n-a", "a", disk="ssd"), pods),
        NodeInfo(zone_node("n-b", "b", disk="ssd")),
        NodeInfo(zone_node("n-c", "c", disk="ssd")),
        NodeInfo(zone_node("n-d", "d", disk="ssd")),
    ]
    # [4,0,0,0], average 1: three moves, one per empty domain, each the back of zone a's list
    # [a-0 (pinned), a-2 (no priority), a-1 (10), a-3 (500)].
    assert evicted(nodes) == ["default/a-3", "default/a-1", "default/a-2"]


def test_pods_that_fit_below_average_nodes_go_before_pods_that_do_not() -> None:
    # Upstream "3 domains, sizes [2, 1, 0] with selectors, nodeAffinityPolicy=Ignore".
    arm = {"kubernetes.io/arch": "arm64"}

    def pinned(*zone: str) -> PodSpec:
        def apply(b: PodBuilder) -> PodBuilder:
            b = b.node_selector("kubernetes.io/arch", "arm64")
            return b.node_selector("zone", zone[0]) if zone else b

        return apply

    def pod(name: str, node: str, spec: PodSpec) -> Pod:
        b = make_pod(name).label("app", "web").owner("ReplicaSet", "web-1").node(node)
        b = spec(b).spread_constraint(
            1, "zone", "DoNotSchedule", WEB, node_affinity_policy="Ignore"
        )
        return b.obj()

    nodes = [
        NodeInfo(
            zone_node("A1", "a", **arm),
            [pod("pod-0", "A1", pinned()), pod("pod-1", "A1", pinned("a"))],
        ),
        NodeInfo(zone_node("B1", "b", **arm), [pod("pod-2", "B1", pinned())]),
        NodeInfo(zone_node("C1", "c", **arm)),
    ]
    assert evicted(nodes) == ["default/pod-0"]


# ------------------------------------------------------------------ topologyBalanceNodeFit


@pytest.mark.parametrize(
    "node_fit, want",
    [
        pytest.param(True, [], id="topologyBalanceNodeFit refuses the move"),
        pytest.param(False, ["default/a-2", "default/a-3"], id="without it both are evicted"),
    ],
)
def test_no_eviction_toward_a_domain_where_the_pod_fits_nowhere(
    node_fit: bool, want: list[str]
) -> None:
    tainted = make_node("n-b").label("zone", "b").taint("hardware", "gpu", "NoSchedule")
    nodes = [
        NodeInfo(zone_node("n-a", "a"), [web_pod(f"a-{i}", "n-a") for i in range(4)]),
        NodeInfo(tainted.capacity(cpu="2", memory="3Gi", pods="10").obj()),
    ]
    assert evicted(nodes, topology_balance_node_fit=node_fit) == want


def test_a_toleration_or_a_prefer_no_schedule_taint_lets_the_pod_move() -> None:
    def cluster(effect: str, extra: PodSpec) -> list[NodeInfo]:
        tainted = make_node("n-b").label("zone", "b").taint("taint-test", "test", effect)
        return [
            NodeInfo(
                zone_node("n-a", "a"), [web_pod(f"a-{i}", "n-a", extra=extra) for i in range(2)]
            ),
            NodeInfo(tainted.capacity(cpu="2", memory="3Gi", pods="10").obj()),
        ]

    def tolerates(b: PodBuilder) -> PodBuilder:
        return b.toleration("taint-test", "Equal", "test", "NoSchedule")

    assert evicted(cluster("NoSchedule", _same)) == []
    assert evicted(cluster("NoSchedule", tolerates)) == ["default/a-1"]
    assert evicted(cluster("PreferNoSchedule", _same)) == ["default/a-1"]


def test_pinned_pods_are_counted_and_moved_but_not_evicted() -> None:
    # Upstream "[4,0], only move 1 pod since pods with nodeSelector and nodeAffinity aren't
    # evicted": two of the pods chosen cannot leave zone a, and still count as moved.
    def zone_a(b: PodBuilder) -> PodBuilder:
        return b.node_selector("zone", "a")

    def foo_bar(b: PodBuilder) -> PodBuilder:
        return b.node_affinity("foo", "In", ["bar"])

    pods = [
        web_pod("a-0", "n-a", extra=zone_a),
        web_pod("a-1", "n-a", extra=zone_a),
        web_pod("a-2", "n-a", extra=foo_bar),
        web_pod("a-3", "n-a"),
    ]
    nodes = [NodeInfo(zone_node("n-a", "a"), pods), NodeInfo(zone_node("n-b", "b"))]
    assert evicted(nodes) == ["default/a-3"]


@pytest.mark.parametrize(
    "node_fit, want",
    [
        pytest.param(True, 0, id="not enough cpu in zone a: nothing moves"),
        pytest.param(False, 1, id="topologyBalanceNodeFit false: 1 moves to force a scale-up"),
    ],
)
def test_requests_must_fit_what_the_below_average_node_has_left(node_fit: bool, want: int) -> None:
    def cpu(b: PodBuilder) -> PodBuilder:
        return b.req(cpu="100m", memory="500Mi")

    sizes = {"a": 2, "b": 3, "c": 4}
    cpus = {"a": "250m", "b": "1", "c": "1"}
    nodes = [
        NodeInfo(
            zone_node(f"n-{z}", z, cpu=cpus[z]),
            [web_pod(f"{z}-{i}", f"n-{z}", extra=cpu) for i in range(n)],
        )
        for z, n in sizes.items()
    ]
    assert len(evicted(nodes, topology_balance_node_fit=node_fit)) == want


# ------------------------------------------------------------------ per-cycle limits


@pytest.mark.parametrize(
    "options, want",
    [
        pytest.param({}, ["default/a-2", "default/a-3"], id="no limits"),
        pytest.param({"max_no_of_pods_to_evict_per_node": 1}, ["default/a-2"], id="per node"),
        pytest.param({"max_no_of_pods_to_evict_total": 1}, ["default/a-2"], id="total"),
        pytest.param(
            {"max_no_of_pods_to_evict_per_namespace": 1}, ["default/a-2"], id="per namespace"
        ),
    ],
)
def test_the_cycles_eviction_limits(options: dict[str, Any], want: list[str]) -> None:
    assert evicted(spread({"a": 4, "b": 0}), **options) == want
