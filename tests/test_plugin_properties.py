"""Invariants of PodTopologySpread on random clusters (hypothesis).

The oracle below recounts everything from scratch with set arithmetic, written independently of
the plugin's critical paths and per-constraint maps; the plugin must agree with it node for node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topospread.api.types import LABEL_HOSTNAME, Node, Pod, PodTopologySpreadArgs
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.framework.cycle_state import CycleState
from topospread.framework.status import Code
from topospread.framework.types import NodeScore
from topospread.labels.selector import label_selector_as_selector
from topospread.nodeaffinity import get_required_node_affinity
from topospread.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.taints import do_not_schedule_taints_filter, find_matching_untolerated_taint

ZONES = ["z1", "z2", "z3"]
LIST_ARGS = PodTopologySpreadArgs(defaulting_type="List")

selectors = st.sampled_from(
    [
        {"matchLabels": {"app": "a"}},
        {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["b"]}]},
        {},
        None,
    ]
)


@st.composite
def nodes_strategy(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(1, 7))
    nodes = []
    for i in range(count):
        labels: dict[str, str] = {LABEL_HOSTNAME: f"n{i}"}
        zone = draw(st.sampled_from([*ZONES, None]))
        if zone is not None:
            labels["zone"] = zone
        taints = []
        if draw(st.booleans()) and draw(st.booleans()):
            taints.append({"key": "dedicated", "value": "x", "effect": "NoSchedule"})
        nodes.append(
            msgspec.convert(
                {"metadata": {"name": f"n{i}", "labels": labels}, "spec": {"taints": taints}}, Node
            )
        )
    return nodes


@st.composite
def pods_strategy(draw: st.DrawFn, nodes: Sequence[Node]) -> list[Pod]:
    pods = []
    for i in range(draw(st.integers(0, 14))):
        meta: dict[str, Any] = {
            "name": f"p{i}",
            "namespace": draw(st.sampled_from(["default", "default", "other"])),
            "labels": draw(st.sampled_from([{"app": "a"}, {"app": "b"}, {}])),
        }
        if draw(st.integers(0, 5)) == 0:
            meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        node = draw(st.sampled_from(nodes)).metadata.name
        pods.append(msgspec.convert({"metadata": meta, "spec": {"nodeName": node}}, Pod))
    return pods


@st.composite
def incoming_pod(draw: st.DrawFn, when: str) -> Pod:
    constraints = []
    keys = draw(st.lists(st.sampled_from(["zone", LABEL_HOSTNAME]), min_size=1, max_size=2))
    for key in keys:
        c: dict[str, Any] = {
            "maxSkew": draw(st.integers(1, 3)),
            "topologyKey": key,
            "whenUnsatisfiable": when,
        }
        selector = draw(selectors)
        if selector is not None:
            c["labelSelector"] = selector
        if when == "DoNotSchedule" and draw(st.booleans()):
            c["minDomains"] = draw(st.integers(1, 5))
        c["nodeAffinityPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
        c["nodeTaintsPolicy"] = draw(st.sampled_from(["Honor", "Ignore"]))
        constraints.append(c)
    spec: dict[str, Any] = {"topologySpreadConstraints": constraints}
    if draw(st.booleans()):
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "zone",
                                    "operator": "In",
                                    "values": draw(st.lists(st.sampled_from(ZONES), min_size=1)),
                                }
                            ]
                        }
                    ]
                }
            }
        }
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    labels = draw(st.sampled_from([{"app": "a"}, {"app": "b"}, {}]))
    return msgspec.convert(
        {"metadata": {"name": "incoming", "namespace": "default", "labels": labels}, "spec": spec},
        Pod,
    )


@st.composite
def scenarios(draw: st.DrawFn, when: str = "DoNotSchedule") -> tuple[list[Node], list[Pod], Pod]:
    nodes = draw(nodes_strategy())
    return nodes, draw(pods_strategy(nodes)), draw(incoming_pod(when))


def _plugin(nodes: Sequence[Node], pods: Sequence[Pod]) -> tuple[PodTopologySpread, Snapshot]:
    snapshot = Snapshot(nodes, pods)
    handle = SnapshotHandle(snapshot)
    return PodTopologySpread(LIST_ARGS, handle, handle.features), snapshot


def oracle_counts(nodes: Sequence[Node], pods: Sequence[Pod], pod: Pod) -> list[dict[str, int]]:
    """Per hard constraint: eligible domain -> matching pods, recounted from scratch."""
    hard = [
        c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"
    ]
    keys = {c.topology_key for c in hard}
    required = get_required_node_affinity(pod)
    result = []
    for c in hard:
        selector = label_selector_as_selector(c.label_selector)
        eligible = [
            n
            for n in nodes
            if keys <= n.metadata.labels.keys()
            and (c.node_affinity_policy == "Ignore" or required.match(n))
            and (
                c.node_taints_policy != "Honor"
                or find_matching_untolerated_taint(
                    n.spec.taints, pod.spec.tolerations, do_not_schedule_taints_filter
                )
                is None
            )
        ]
        counts = {n.metadata.labels[c.topology_key]: 0 for n in eligible}
        eligible_names = {n.metadata.name for n in eligible}
        by_name = {n.metadata.name: n for n in nodes}
        for p in pods:
            if (
                p.spec.node_name in eligible_names
                and p.metadata.namespace == pod.metadata.namespace
                and p.metadata.deletion_timestamp is None
                and not selector.empty
                and selector.matches(p.metadata.labels)
            ):
                counts[by_name[p.spec.node_name].metadata.labels[c.topology_key]] += 1
        result.append(counts)
    return result


def oracle_fits(nodes: Sequence[Node], pods: Sequence[Pod], pod: Pod, node: Node) -> bool:
    hard = [
        c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"
    ]
    for c, counts in zip(hard, oracle_counts(nodes, pods, pod), strict=True):
        value = node.metadata.labels.get(c.topology_key)
        if value is None:
            return False
        min_domains = c.min_domains or 1
        global_min = min(counts.values()) if len(counts) >= min_domains else 0
        self_match = (
            1 if label_selector_as_selector(c.label_selector).matches(pod.metadata.labels) else 0
        )
        if counts.get(value, 0) + self_match - global_min > c.max_skew:
            return False
    return True


SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(scenarios())
def test_filter_agrees_with_a_from_scratch_recount(
    scenario: tuple[list[Node], list[Pod], Pod],
) -> None:
    nodes, pods, pod = scenario
    plugin, snapshot = _plugin(nodes, pods)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, snapshot.list())
    assert status.code is Code.Success
    counts = [dict(m) for m in state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num]
    assert counts == oracle_counts(nodes, pods, pod)
    for info in snapshot.list():
        got = plugin.filter(state, pod, info)
        assert got.is_success == oracle_fits(nodes, pods, pod, info.node), info.name
        if not got.is_success:
            assert got.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable)


def _max_skew_exceeded(nodes: Sequence[Node], pods: Sequence[Pod], pod: Pod) -> bool:
    hard = [
        c for c in pod.spec.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"
    ]
    for c, counts in zip(hard, oracle_counts(nodes, pods, pod), strict=True):
        if counts and max(counts.values()) - min(counts.values()) > c.max_skew:
            return True
    return False


@SETTINGS
@given(scenarios())
def test_placing_on_a_feasible_node_keeps_a_balanced_cluster_within_max_skew(
    scenario: tuple[list[Node], list[Pod], Pod],
) -> None:
    nodes, pods, pod = scenario
    if _max_skew_exceeded(nodes, pods, pod):
        return
    plugin, snapshot = _plugin(nodes, pods)
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    for info in snapshot.list():
        if plugin.filter(state, pod, info).is_success:
            placed = msgspec.structs.replace(
                pod, spec=msgspec.structs.replace(pod.spec, node_name=info.name)
            )
            assert not _max_skew_exceeded(nodes, [*pods, placed], pod), info.name


@SETTINGS
@given(scenarios(), st.data())
def test_add_then_remove_pod_restores_the_prefilter_counts(
    scenario: tuple[list[Node], list[Pod], Pod], data: st.DataObject
) -> None:
    nodes, pods, pod = scenario
    plugin, snapshot = _plugin(nodes, pods)
    state = CycleState()
    plugin.pre_filter(state, pod, snapshot.list())
    before = state.read(PRE_FILTER_STATE_KEY)
    copy = state.clone()
    info = data.draw(st.sampled_from(list(snapshot.list())))
    other = msgspec.convert(
        {"metadata": {"name": "x", "namespace": "default", "labels": {"app": "a"}}}, Pod
    )
    plugin.add_pod(copy, pod, other, info)
    plugin.remove_pod(copy, pod, other, info)
    after = copy.read(PRE_FILTER_STATE_KEY)
    assert after.tp_value_to_match_num == before.tp_value_to_match_num
    assert after is not before
    for i in range(len(after.constraints)):
        c = after.constraints[i]
        assert after.min_match_num(i, c.min_domains) == before.min_match_num(i, c.min_domains)


@SETTINGS
@given(scenarios("ScheduleAnyway"))
def test_scores_are_normalized_and_ignore_other_namespaces_and_terminating_pods(
    scenario: tuple[list[Node], list[Pod], Pod],
) -> None:
    nodes, pods, pod = scenario

    def scores(existing: Sequence[Pod]) -> dict[str, int]:
        plugin, snapshot = _plugin(nodes, existing)
        state = CycleState()
        status = plugin.pre_score(state, pod, snapshot.list())
        assert status.code is Code.Success
        result = [NodeScore(i.name, plugin.score(state, pod, i)[0]) for i in snapshot.list()]
        plugin.normalize_score(state, pod, result)
        return {s.name: s.score for s in result}

    got = scores(pods)
    assert all(0 <= s <= 100 for s in got.values())
    relevant = [
        p
        for p in pods
        if p.metadata.namespace == pod.metadata.namespace and p.metadata.deletion_timestamp is None
    ]
    assert scores(relevant) == got
