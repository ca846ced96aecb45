"""The descheduler model reads its constraints' pods from the cluster index (kept current from
the cluster's changes) and decides exactly as the walk over every pod per constraint it
replaced, through any churn between cycles."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod
from topospread.analysis.descheduler import (
    DeschedulerEviction,
    DeschedulerOptions,
    _allowed_actions,
    _limit_evictions,
    _Pick,
    _pod_filter,
    balance_domains,
    descheduler_evictions,
    evictor_filter,
    ready_nodes,
    topology_is_balanced,
)
from topospread.analysis.descheduler_domains import (
    Constraint,
    Domain,
    Placed,
    new_topology_spread_constraint,
)
from topospread.analysis.descheduler_node import NodeView
from topospread.api.types import Node, NodeCondition, Pod, Taint
from topospread.cluster.state import ClusterState
from topospread.framework.types import NodeInfo
from topospread.labels.selector import SelectorError

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
SELECTORS: list[dict[str, Any] | None] = [
    {"matchLabels": {"app": "a"}},
    {"matchLabels": {"app": "b"}},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    {},
    None,
]


# ------------------------------------------------------------------ the walk it replaced


def walked_evictions(
    nodes: Sequence[NodeInfo], options: DeschedulerOptions
) -> list[DeschedulerEviction]:
    """One cycle as the model computed it before the index: every listed pod of the
    namespace walked for each constraint's domains."""
    ready = [NodeView(info.node, info.pods) for info in ready_nodes(nodes, None)]
    selector = options.node_selector
    views = (
        ready
        if selector is None
        else [v for v in ready if selector.matches(v.node.metadata.labels)]
    )
    by_namespace: dict[str, list[Placed]] = {}
    for view in views:
        for pod in view.pods:
            if _pod_filter(pod, options):
                placed = Placed(pod, view.name, (sum(map(len, by_namespace.values())), 0))
                by_namespace.setdefault(pod.metadata.namespace, []).append(placed)
    allowed = _allowed_actions(options)
    picks: list[_Pick] = []
    picked: set[str] = set()
    for namespace in sorted(by_namespace):
        pods = by_namespace[namespace]
        constraints: list[Constraint] = []
        for placed in pods:
            for c in placed.pod.spec.topology_spread_constraints:
                if c.when_unsatisfiable not in allowed:
                    continue
                try:
                    tsc = new_topology_spread_constraint(c, placed.pod)
                except SelectorError:
                    continue
                if tsc not in constraints:
                    constraints.append(tsc)
        for tsc in constraints:
            key = tsc.topology_key
            domains: dict[str, Domain] = {}
            for view in views:
                value = view.node.metadata.labels.get(key)
                if value is not None and tsc.match_node_inclusion_policies(view.node):
                    domains.setdefault(value, Domain(value, []))
            labels = {v.name: v.node.metadata.labels for v in views}
            total = 0
            for placed in pods:
                pod = placed.pod
                if pod.metadata.deletion_timestamp is not None:
                    continue
                if not tsc.internal.selector.matches(pod.metadata.labels):
                    continue
                value = labels[placed.node].get(key)
                if value is None:
                    continue
                domains.setdefault(value, Domain(value, [])).pods.append(placed)
                total += 1
            listed = list(domains.values())
            if topology_is_balanced(listed, tsc.max_skew):
                continue
            for pick in balance_domains(
                tsc,
                listed,
                total,
                views,
                lambda p: evictor_filter(p, options),
                options.topology_balance_node_fit,
            ):
                if pick.placed.pod.key not in picked:
                    picked.add(pick.placed.pod.key)
                    picks.append(pick)
    return _limit_evictions(picks, ready, options)


# ------------------------------------------------------------------ random clusters


@st.composite
def a_node(draw: st.DrawFn, name: str) -> Node:
    b = make_node(name).label(HOST, name).capacity(cpu="4", memory="8Gi", pods="20")
    if draw(st.integers(0, 5)):
        b = b.label(ZONE, draw(st.sampled_from(["z0", "z1", "z2"])))
    if draw(st.integers(0, 4)) == 0:
        b = b.label("pool", "x")
    node = b.obj()
    if draw(st.integers(0, 6)) == 0:
        taint = Taint(key="dedicated", value="x", effect="NoSchedule")
        node = msgspec.structs.replace(
            node, spec=msgspec.structs.replace(node.spec, taints=[taint])
        )
    if draw(st.integers(0, 6)) == 0:
        node = _with_ready(node, "False")
    return node


def _with_ready(node: Node, status: str) -> Node:
    conditions = [NodeCondition(type="Ready", status=status)]
    return msgspec.structs.replace(
        node, status=msgspec.structs.replace(node.status, conditions=conditions)
    )


@st.composite
def a_pod(draw: st.DrawFn, name: str, node: str) -> Pod:
    app = draw(st.sampled_from(["a", "a", "b", None]))
    b = make_pod(name).node(node).namespace(draw(st.sampled_from(["default", "default", "other"])))
    if app is not None:
        b = b.label("app", app).label("pod-template-hash", draw(st.sampled_from(["h1", "h2"])))
    if draw(st.integers(0, 6)):
        b = b.owner("ReplicaSet", f"rs-{app}")
    for _ in range(draw(st.integers(0, 2))):
        b = b.spread_constraint(
            draw(st.integers(1, 2)),
            draw(st.sampled_from([ZONE, ZONE, HOST])),
            draw(st.sampled_from(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"])),
            draw(st.sampled_from(SELECTORS)),
            match_label_keys=draw(st.sampled_from([None, ["pod-template-hash"]])),
            node_taints_policy=draw(st.sampled_from([None, "Honor"])),
        )
    if draw(st.integers(0, 5)) == 0:
        b = b.node_selector("pool", "x")
    if draw(st.integers(0, 5)) == 0:
        b = b.toleration("dedicated")
    if draw(st.integers(0, 3)) == 0:
        b = b.priority(draw(st.sampled_from([0, 100, 1000])))
    if draw(st.integers(0, 12)) == 0:
        b = b.terminating()
    b = b.req(cpu=draw(st.sampled_from(["100m", "500m", "1"])))
    pod = b.obj()
    if draw(st.integers(0, 12)) == 0:
        status = msgspec.structs.replace(pod.status, phase="Succeeded")
        pod = msgspec.structs.replace(pod, status=status)
    return pod


OPTIONS = st.builds(
    DeschedulerOptions,
    include_soft_constraints=st.booleans(),
    topology_balance_node_fit=st.booleans(),
    namespaces=st.sampled_from([(), ("default",)]),
    node_fit=st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_index_decides_as_the_walk_over_every_pod_through_any_churn(
    data: st.DataObject,
) -> None:
    cluster = ClusterState(
        [data.draw(a_node(f"n{i}")) for i in range(data.draw(st.integers(1, 8)))]
    )
    for i in range(data.draw(st.integers(0, 30))):
        name = data.draw(st.sampled_from([info.name for info in cluster.list()]))
        cluster.bind(data.draw(a_pod(f"p{i}", name)), name)
    options = data.draw(OPTIONS)
    added = 0
    for step in range(data.draw(st.integers(1, 12))):
        names = [info.name for info in cluster.list()]
        op = data.draw(
            st.sampled_from(["bind", "bind", "unbind", "add", "remove", "relabel", "ready", "ask"])
        )
        if op == "bind":
            name = data.draw(st.sampled_from(names))
            cluster.bind(data.draw(a_pod(f"q{step}", name)), name)
        elif op == "unbind" and cluster.pods():
            assert cluster.unbind(data.draw(st.sampled_from(cluster.pods())))
        elif op == "add":
            added += 1
            cluster.add_node(data.draw(a_node(f"x{added}")))
        elif op == "remove" and len(names) > 1:
            cluster.remove_node(data.draw(st.sampled_from(names)))
        elif op == "relabel":
            node = cluster.infos[data.draw(st.sampled_from(names))].node
            labels = {**node.metadata.labels, ZONE: data.draw(st.sampled_from(["z0", "z1", "z9"]))}
            meta = msgspec.structs.replace(node.metadata, labels=labels)
            cluster.update_node(msgspec.structs.replace(node, metadata=meta))
        elif op == "ready":
            node = cluster.infos[data.draw(st.sampled_from(names))].node
            cluster.update_node(_with_ready(node, data.draw(st.sampled_from(["True", "False"]))))
        else:
            options = data.draw(OPTIONS)
            assert descheduler_evictions(cluster, options) == walked_evictions(
                cluster.list(), options
            )
    walked = walked_evictions(cluster.list(), options)
    assert descheduler_evictions(cluster, options) == walked
    # A plain list of nodes (no index) lists the same pods from the nodes themselves.
    assert descheduler_evictions(list(cluster.list()), options) == walked


def test_a_cluster_built_for_the_check_has_something_to_evict() -> None:
    """The comparison above is not vacuous: a skewed cluster makes both pick the same pods."""
    nodes = [make_node(f"n{z}").label(HOST, f"n{z}").label(ZONE, z).obj() for z in "ab"]
    cluster = ClusterState(nodes)
    for i in range(4):
        pod = (
            make_pod(f"w{i}")
            .node("na")
            .label("app", "a")
            .owner("ReplicaSet", "rs")
            .spread_constraint(1, ZONE, "DoNotSchedule", {"matchLabels": {"app": "a"}})
            .obj()
        )
        cluster.bind(pod, "na")
    got = descheduler_evictions(cluster, DeschedulerOptions(topology_balance_node_fit=False))
    assert [e.pod for e in got] == ["default/w2", "default/w3"]
    assert got == walked_evictions(
        cluster.list(), DeschedulerOptions(topology_balance_node_fit=False)
    )
    assert cluster.unbind(cluster.infos["na"].pods[3])  # the index follows: one fewer to move
    got = descheduler_evictions(cluster, DeschedulerOptions(topology_balance_node_fit=False))
    assert [e.pod for e in got] == ["default/w2"]
