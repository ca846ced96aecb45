"""PodTopologySpread beyond the shared conformance cases (v1.35 tables the case format cannot hold).

Translated from upstream's pkg/scheduler/framework/plugins/podtopologyspread tests:
- filtering_test.go: TestPreFilterStateAddPod, TestPreFilterStateRemovePod (preemption's
  incremental updates of the PreFilter state) and TestPreFilterDisabled;
- plugin_test.go: Test_isSchedulableAfterNodeChange and Test_isSchedulableAfterPodChange (the
  queueing hints), as of v1.35 (fwk types, pods with UIDs, the taint cases).

Each row keeps upstream's case name as its id. Upstream's pods live in namespace "", ours in
"default"; only the namespace differences matter, and those are kept. NodeInclusionPolicy is GA
and locked on in v1.35, but the plugin still honours ``Features`` with it off, so the
"... NodeInclusionPolicy disabled" rows run with it off, as upstream runs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgspec
import pytest

from builders import exists, make_node, make_pod
from topospread.api.types import LabelSelector, Node, Pod, PodTopologySpreadArgs
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.framework.config import default_config
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import QueueingHint
from topospread.framework.nominator import pod_key
from topospread.framework.status import Code
from topospread.labels.selector import label_selector_as_selector
from topospread.plugins.nodeunschedulable import TAINT_NODE_UNSCHEDULABLE
from topospread.plugins.podtopologyspread.common import InternalConstraint
from topospread.plugins.podtopologyspread.filtering import (
    MAX_INT32,
    PRE_FILTER_STATE_KEY,
    CriticalPaths,
)
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.simulator.run import schedule
from topospread.simulator.scenario import Scenario
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline

FOO = exists("foo")
BAR = exists("bar")
LIST_ARGS = PodTopologySpreadArgs(defaulting_type="List")
QUEUE = QueueingHint.Queue
SKIP = QueueingHint.QueueSkip


def _constraint(key: str, selector: dict[str, Any]) -> InternalConstraint:
    """Upstream's nodeConstraint / zoneConstraint: maxSkew 1, the policies' defaults."""
    return InternalConstraint(
        max_skew=1,
        topology_key=key,
        selector=label_selector_as_selector(msgspec.convert(selector, LabelSelector)),
    )


ZONE = _constraint("zone", FOO)
NODE = _constraint("node", FOO)
NODE_BAR = _constraint("node", BAR)


def _plugin(
    nodes: Sequence[Node] = (), pods: Sequence[Pod] = (), *, inclusion: bool = True
) -> tuple[PodTopologySpread, Snapshot]:
    snapshot = Snapshot(nodes, pods)
    features = replace(
        DEFAULT_FEATURES, enable_node_inclusion_policy_in_pod_topology_spread=inclusion
    )
    handle = SnapshotHandle(snapshot, features=features)
    return PodTopologySpread(LIST_ARGS, handle, features), snapshot


def _node(name: str, zone: str) -> Any:
    """``st.MakeNode().Name(name).Label("zone", zone).Label("node", name)``, open for more."""
    return make_node(name).label("zone", zone).label("node", name)


def _on(name: str, node: str) -> Any:
    return make_pod(name).node(node)


def _foo(name: str, node: str) -> Pod:
    """``st.MakePod().Name(name).Node(node).Label("foo", "")``."""
    return _on(name, node).label("foo").obj()


Path = tuple[str, int]


def _as_compared(paths: CriticalPaths) -> tuple[Path, Path]:
    """The two critical paths as upstream's stateCmpOpts compares them: when both hold the same
    count their topology values are put in alphabetical order (Go's map order fills them)."""
    first, second = paths.paths
    a, b = (first.topology_value, first.match_num), (second.topology_value, second.match_num)
    if a[1] == b[1] and a[0] > b[0]:
        a, b = (b[0], a[1]), (a[0], b[1])
    return a, b


def _paths(*pairs: tuple[Path, Path]) -> list[tuple[Path, Path]]:
    """Expected critical paths, normalised like the results they are compared with."""
    out = []
    for first, second in pairs:
        paths = CriticalPaths()
        paths.paths[0].topology_value, paths.paths[0].match_num = first
        paths.paths[1].topology_value, paths.paths[1].match_num = second
        out.append(_as_compared(paths))
    return out


# An unset second path: upstream's ``{MatchNum: math.MaxInt32}``.
UNSET: Path = ("", MAX_INT32)


# ---------------------------------------------------------------------------------------------
# TestPreFilterStateAddPod / TestPreFilterStateRemovePod


@dataclass(frozen=True)
class StateUpdate:
    preemptor: Pod
    nodes: list[Node]
    existing: list[Pod]
    pod: Pod  # the pod added to, or removed from, the PreFilter state
    node: str  # the node it is added on or removed from
    constraints: list[InternalConstraint]
    paths: list[tuple[Path, Path]]
    counts: list[dict[str, int]]
    inclusion: bool = True


def _preemptor(*constraints: tuple[str, dict[str, Any]]) -> Any:
    p = make_pod("p").label("foo")
    for key, selector in constraints:
        p = p.spread_constraint(1, key, selector=selector)
    return p


ZONE_P = _preemptor(("zone", FOO)).obj()
NODE_P = _preemptor(("node", FOO)).obj()
ZONE_NODE_P = _preemptor(("zone", FOO), ("node", FOO)).obj()

# The nodes and pods of upstream's NodeInclusionPolicy rows.
AFFINITY_NODES = [
    _node("node-a", "zone1").label("foo", "bar").obj(),
    _node("node-b", "zone2").label("foo", "").obj(),
]
TAINTED_NODES = [
    _node("node-a", "zone1").taint(TAINT_NODE_UNSCHEDULABLE).obj(),
    _node("node-b", "zone2").obj(),
]
A1_B2 = [
    _on("p-a1", "node-a").label("foo").label("zone", "zone1").obj(),
    _on("p-b2", "node-b").label("foo").label("zone", "zone2").obj(),
]
A2_B1 = [
    _on("p-a2", "node-a").label("foo").label("zone", "zone1").obj(),
    _on("p-b1", "node-b").label("foo").label("zone", "zone2").obj(),
]
NOT_IN_BAR = _preemptor(("zone", FOO)).node_affinity("foo", "NotIn", ["bar"]).obj()
A_B_X = [_node("node-a", "zone1").obj(), _node("node-x", "zone2").obj()]
A_B_X3 = [_node("node-a", "zone1").obj(), _node("node-b", "zone1").obj(), A_B_X[1]]
A_B = [_node("node-a", "zone1").obj(), _node("node-b", "zone1").obj()]
A_B_X_Y = [*A_B_X3, _node("node-y", "zone2").obj()]
P_A1, P_A0 = _foo("p-a1", "node-a"), _on("p-a0", "node-a").label("bar").obj()
B1_X1_Y1 = [_foo("p-b1", "node-b"), _foo("p-x1", "node-x"), _foo("p-y1", "node-y")]


def _inclusion_rows(verb: str, base: tuple[StateUpdate, StateUpdate]) -> list[Any]:
    """Upstream's "... NodeInclusionPolicy disabled/enabled" pairs: same data, gate off/on."""
    rows = []
    for case, what in zip(base, ("node affinity unmatched", "node affinity matched"), strict=True):
        for inclusion in (False, True):
            state = "enabled" if inclusion else "disabled"
            name = f"{verb} a pod when scheduling {what} pod with NodeInclusionPolicy {state}"
            rows.append(pytest.param(replace(case, inclusion=inclusion), id=name))
    return rows


ADD_POD_CASES = [
    pytest.param(
        StateUpdate(
            preemptor=NODE_P,
            nodes=A_B,
            existing=[],
            pod=_foo("p-a1", "node-a"),
            node="node-a",
            constraints=[NODE],
            paths=_paths((("node-b", 0), ("node-a", 1))),
            counts=[{"node-a": 1, "node-b": 0}],
        ),
        id="node a and b both impact current min match",
    ),
    pytest.param(
        StateUpdate(
            preemptor=NODE_P,
            nodes=A_B,
            existing=[_foo("p-b1", "node-b")],
            pod=_foo("p-a1", "node-a"),
            node="node-a",
            constraints=[NODE],
            paths=_paths((("node-a", 1), ("node-b", 1))),
            counts=[{"node-a": 1, "node-b": 1}],
        ),
        id="only node a impacts current min match",
    ),
    pytest.param(
        StateUpdate(
            preemptor=NODE_P,
            nodes=A_B,
            existing=[_foo("p-b1", "node-b")],
            pod=_on("p-a1", "node-a").namespace("ns1").label("foo").obj(),
            node="node-a",
            constraints=[NODE],
            paths=_paths((("node-a", 0), ("node-b", 1))),
            counts=[{"node-a": 0, "node-b": 1}],
        ),
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
    ),
    pytest.param(
        StateUpdate(
            preemptor=NODE_P,
            nodes=A_B,
            existing=[_foo("p-b1", "node-b")],
            pod=_foo("p-b2", "node-b"),
            node="node-b",
            constraints=[NODE],
            paths=_paths((("node-a", 0), ("node-b", 2))),
            counts=[{"node-a": 0, "node-b": 2}],
        ),
        id="add pod on non-critical node won't trigger re-calculation",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_NODE_P,
            nodes=A_B_X,
            existing=[],
            pod=_foo("p-a1", "node-a"),
            node="node-a",
            constraints=[ZONE, NODE],
            paths=_paths((("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))),
            counts=[{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}],
        ),
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_NODE_P,
            nodes=A_B_X,
            existing=[_foo("p-x1", "node-x")],
            pod=_foo("p-a1", "node-a"),
            node="node-a",
            constraints=[ZONE, NODE],
            paths=_paths((("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))),
            counts=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}],
        ),
        id="only node a impacts topologyKeyToMinPodsMap on zone and node",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_NODE_P,
            nodes=A_B_X3,
            existing=[
                _foo("p-b1", "node-b"),
                _foo("p-b2", "node-b"),
                _foo("p-x1", "node-x"),
            ],
            pod=_foo("p-a1", "node-a"),
            node="node-a",
            constraints=[ZONE, NODE],
            paths=_paths((("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))),
            counts=[{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}],
        ),
        id="node a impacts topologyKeyToMinPodsMap on node, "
        "node x impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        StateUpdate(
            preemptor=_preemptor(("zone", FOO), ("node", BAR)).label("bar").obj(),
            nodes=A_B_X3,
            existing=[
                _on("p-b1", "node-b").label("foo").label("bar").obj(),
                _on("p-x1", "node-x").label("foo").label("bar").obj(),
                _on("p-x2", "node-x").label("bar").obj(),
            ],
            pod=_foo("p-a1", "node-a"),
            node="node-a",
            constraints=[ZONE, NODE_BAR],
            paths=_paths((("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))),
            counts=[{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}],
        ),
        id="Constraints hold different labelSelectors, "
        "node a impacts topologyKeyToMinPodsMap on zone",
    ),
    pytest.param(
        StateUpdate(
            preemptor=_preemptor(("zone", FOO), ("node", BAR)).label("bar").obj(),
            nodes=A_B_X3,
            existing=[
                _on("p-b1", "node-b").label("bar").obj(),
                _on("p-x1", "node-x").label("foo").label("bar").obj(),
                _on("p-x2", "node-x").label("bar").obj(),
            ],
            pod=_on("p-a1", "node-a").label("foo").label("bar").obj(),
            node="node-a",
            constraints=[ZONE, NODE_BAR],
            paths=_paths((("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))),
            counts=[{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}],
        ),
        id="Constraints hold different labelSelectors, "
        "node a impacts topologyKeyToMinPodsMap on both zone and node",
    ),
    # node-a carries foo=bar, which the preemptor's required affinity (foo NotIn [bar]) refuses:
    # with the gate off the node is skipped outright, with it on nodeAffinityPolicy Honor skips
    # it; either way the pod added there counts nowhere.
    *_inclusion_rows(
        "add",
        (
            StateUpdate(
                preemptor=NOT_IN_BAR,
                nodes=AFFINITY_NODES,
                existing=A2_B1,
                pod=_on("p-a1", "node-a").label("foo").label("zone", "zone1").obj(),
                node="node-a",
                constraints=[ZONE],
                paths=_paths((("zone2", 1), UNSET)),
                counts=[{"zone2": 1}],
            ),
            StateUpdate(
                preemptor=ZONE_P,
                nodes=AFFINITY_NODES,
                existing=A1_B2,
                pod=_on("p-b1", "node-b").label("foo").label("zone", "zone2").obj(),
                node="node-b",
                constraints=[ZONE],
                paths=_paths((("zone1", 1), ("zone2", 2))),
                counts=[{"zone1": 1, "zone2": 2}],
            ),
        ),
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_P,
            nodes=AFFINITY_NODES,
            existing=A1_B2,
            pod=_on("p-b1", "node-b").label("zone", "zone2").obj(),
            node="node-b",
            constraints=[ZONE],
            paths=_paths((("zone1", 1), ("zone2", 1))),
            counts=[{"zone1": 1, "zone2": 1}],
        ),
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled",
    ),
    # nodeTaintsPolicy defaults to Ignore, so the tainted node-a counts whether or not the
    # preemptor tolerates its taint.
    pytest.param(
        StateUpdate(
            preemptor=ZONE_P,
            nodes=TAINTED_NODES,
            existing=A1_B2,
            pod=_on("p-b1", "node-b").label("foo").label("zone", "zone2").obj(),
            node="node-b",
            constraints=[ZONE],
            paths=_paths((("zone1", 1), ("zone2", 2))),
            counts=[{"zone2": 2, "zone1": 1}],
            inclusion=False,
        ),
        id="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled",
    ),
    pytest.param(
        StateUpdate(
            preemptor=_preemptor(("zone", FOO))
            .toleration(TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")
            .obj(),
            nodes=TAINTED_NODES,
            existing=A1_B2,
            pod=_on("p-b1", "node-b").label("foo").label("zone", "zone2").obj(),
            node="node-b",
            constraints=[ZONE],
            paths=_paths((("zone1", 1), ("zone2", 2))),
            counts=[{"zone2": 2, "zone1": 1}],
        ),
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled",
    ),
]

REMOVE_POD_CASES = [
    pytest.param(
        StateUpdate(
            preemptor=ZONE_P,
            nodes=A_B_X3,
            existing=[P_A1, *B1_X1_Y1[:2]],
            pod=P_A1,
            node="node-a",
            constraints=[ZONE],
            paths=_paths((("zone1", 1), ("zone2", 1))),
            counts=[{"zone1": 1, "zone2": 1}],
        ),
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_P,
            nodes=A_B_X_Y,
            existing=[P_A1, *B1_X1_Y1],
            pod=P_A1,
            node="node-a",
            constraints=[ZONE],
            paths=_paths((("zone1", 1), ("zone2", 2))),
            counts=[{"zone1": 1, "zone2": 2}],
        ),
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_P,
            nodes=A_B_X_Y,
            existing=[P_A0, P_A1, *B1_X1_Y1],
            pod=P_A0,
            node="node-a",
            constraints=[ZONE],
            paths=_paths((("zone1", 2), ("zone2", 2))),
            counts=[{"zone1": 2, "zone2": 2}],
        ),
        id="delete an irrelevant pod won't help",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_P,
            nodes=A_B_X_Y,
            existing=[P_A1, *B1_X1_Y1],
            pod=P_A0,
            node="node-a",
            constraints=[ZONE],
            paths=_paths((("zone1", 2), ("zone2", 2))),
            counts=[{"zone1": 2, "zone2": 2}],
        ),
        id="delete a non-existing pod won't help",
    ),
    pytest.param(
        StateUpdate(
            preemptor=ZONE_NODE_P,
            nodes=A_B_X3,
            existing=[
                P_A1,
                _foo("p-a2", "node-a"),
                _foo("p-b1", "node-b"),
                p_x1 := _foo("p-x1", "node-x"),
                _foo("p-x2", "node-x"),
            ],
            pod=p_x1,
            node="node-x",
            constraints=[ZONE, NODE],
            paths=_paths((("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))),
            counts=[{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}],
        ),
        id="two spreadConstraints",
    ),
    # Upstream's rows leave deletedPodIdx at 0, so they remove existingPods[0] (not the
    # deletedPod they spell out) from the node at nodeIdx; only its labels and namespace matter,
    # and they are the same.
    *_inclusion_rows(
        "remove",
        (
            StateUpdate(
                preemptor=NOT_IN_BAR,
                nodes=AFFINITY_NODES,
                existing=A2_B1,
                pod=A2_B1[0],
                node="node-a",
                constraints=[ZONE],
                paths=_paths((("zone2", 1), UNSET)),
                counts=[{"zone2": 1}],
            ),
            StateUpdate(
                preemptor=ZONE_P,
                nodes=AFFINITY_NODES,
                existing=A1_B2,
                pod=A1_B2[0],
                node="node-b",
                constraints=[ZONE],
                paths=_paths((("zone2", 0), ("zone1", 1))),
                counts=[{"zone2": 0, "zone1": 1}],
            ),
        ),
    ),
]


def _pre_filter(case: StateUpdate) -> tuple[PodTopologySpread, Snapshot, CycleState]:
    plugin, snapshot = _plugin(case.nodes, case.existing, inclusion=case.inclusion)
    state = CycleState()
    _, status = plugin.pre_filter(state, case.preemptor, snapshot.list())
    assert status.is_success, status
    return plugin, snapshot, state


def _assert_state(state: CycleState, case: StateUpdate) -> None:
    got = state.read(PRE_FILTER_STATE_KEY)
    assert got.constraints == case.constraints
    assert got.tp_value_to_match_num == case.counts
    assert [_as_compared(p) for p in got.critical_paths] == case.paths


@pytest.mark.parametrize("case", ADD_POD_CASES)
def test_add_pod_updates_the_prefilter_state(case: StateUpdate) -> None:
    plugin, snapshot, state = _pre_filter(case)
    info = snapshot.get(case.node)
    assert info is not None
    assert plugin.add_pod(state, case.preemptor, case.pod, info).is_success
    _assert_state(state, case)


@pytest.mark.parametrize("case", REMOVE_POD_CASES)
def test_remove_pod_updates_the_prefilter_state(case: StateUpdate) -> None:
    plugin, snapshot, state = _pre_filter(case)
    info = snapshot.get(case.node)
    assert info is not None
    assert plugin.remove_pod(state, case.preemptor, case.pod, info).is_success
    _assert_state(state, case)


def test_the_incremental_update_tracks_only_two_critical_paths() -> None:
    """Upstream's CAVEAT, which its tables never reach: only the two tracked domains are
    updated, so after pods are added to both, the untouched node-c's lower count goes unseen
    and the minimum reads 2 although node-c holds 1."""
    nodes = [_node(name, "z").obj() for name in ("node-a", "node-b", "node-c")]
    existing = [_on(f"p-{n[-1]}1", n).label("foo").obj() for n in ("node-a", "node-b", "node-c")]
    plugin, snapshot = _plugin(nodes, existing)
    preemptor = _preemptor(("node", FOO)).obj()
    state = CycleState()
    plugin.pre_filter(state, preemptor, snapshot.list())
    for name in ("node-a", "node-b"):
        info = snapshot.get(name)
        assert info is not None
        assert plugin.add_pod(
            state, preemptor, _on("new", name).label("foo").obj(), info
        ).is_success
    got = state.read(PRE_FILTER_STATE_KEY)
    assert got.tp_value_to_match_num == [{"node-a": 2, "node-b": 2, "node-c": 1}]
    assert [_as_compared(p) for p in got.critical_paths] == [(("node-a", 2), ("node-b", 2))]
    assert got.min_match_num(0, 1) == 2


def test_add_and_remove_pod_without_prefilter_state_are_errors() -> None:
    plugin, snapshot = _plugin([_node("node-a", "zone1").obj()])
    info = snapshot.get("node-a")
    assert info is not None
    pod = _preemptor(("zone", FOO)).obj()
    for status in (
        plugin.add_pod(CycleState(), pod, pod, info),
        plugin.remove_pod(CycleState(), pod, pod, info),
    ):
        assert status.code is Code.Error
        assert status.message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# TestPreFilterDisabled


def test_filter_without_prefilter_is_an_error() -> None:
    plugin, _ = _plugin()
    info = Snapshot([make_node("").obj()]).list()[0]
    status = plugin.filter(CycleState(), make_pod("").obj(), info)
    assert status.code is Code.Error
    # fwk.AsStatus wrapping fwk.ErrNotFound, as getPreFilterState words it.
    assert status.message == 'reading "PreFilterPodTopologySpread" from cycleState: not found'
    assert status.error == status.message


# ---------------------------------------------------------------------------------------------
# Test_isSchedulableAfterNodeChange


def _zone_pod() -> Pod:
    return make_pod("p").spread_constraint(1, "zone", selector=FOO).obj()


def _zone_node_pod() -> Pod:
    return (
        make_pod("p")
        .spread_constraint(1, "zone", selector=FOO)
        .spread_constraint(1, "node", selector=FOO)
        .obj()
    )


def _labelled(**labels: str) -> Any:
    node = make_node("node-a")
    for key, value in labels.items():
        node = node.label(key, value)
    return node


NODE_CHANGE_CASES = [
    pytest.param(
        _zone_pod(),
        _labelled(zone="zone1").obj(),
        _labelled(zone="zone2").obj(),
        QUEUE,
        id="node updates label which matches topologyKey",
    ),
    pytest.param(
        _zone_pod(),
        _labelled(foo="bar1").obj(),
        _labelled(foo="bar2").obj(),
        SKIP,
        id="node that doesn't match topologySpreadConstraints updates non-related label",
    ),
    pytest.param(
        _zone_node_pod(),
        _labelled(zone="zone1", node="node1", foo="bar").obj(),
        _labelled(zone="zone1", node="node1").obj(),
        SKIP,
        id="node that match topologySpreadConstraints adds non-related label",
    ),
    pytest.param(
        _zone_pod(),
        None,
        _labelled(foo="bar").obj(),
        SKIP,
        id="create node with non-related labels",
    ),
    pytest.param(
        _zone_pod(),
        None,
        _labelled(zone="zone1").obj(),
        QUEUE,
        id="create node with related labels",
    ),
    pytest.param(
        _zone_pod(),
        _labelled(foo="bar").obj(),
        None,
        SKIP,
        id="delete node with non-related labels",
    ),
    pytest.param(
        _zone_pod(),
        _labelled(zone="zone1").obj(),
        None,
        QUEUE,
        id="delete node with related labels",
    ),
    pytest.param(
        _zone_node_pod(),
        None,
        _labelled(zone="zone1").obj(),
        SKIP,
        id="add node with related labels that only match one of topologySpreadConstraints",
    ),
    pytest.param(
        _zone_node_pod(),
        None,
        _labelled(zone="zone1", node="node1").obj(),
        QUEUE,
        id="add node with related labels that match all topologySpreadConstraints",
    ),
    pytest.param(
        _zone_node_pod(),
        _labelled(zone="zone1").obj(),
        _labelled(zone="zone1").obj(),
        SKIP,
        id="update node with related labels that only match one of topologySpreadConstraints",
    ),
    pytest.param(
        _zone_node_pod(),
        _labelled(zone="zone1", node="node1").obj(),
        _labelled(zone="zone1", node="node2").obj(),
        QUEUE,
        id="update node with related labels that match all topologySpreadConstraints",
    ),
    pytest.param(
        _zone_node_pod(),
        _labelled(zone="zone1", node="node1").taint("aaa", "bbb").obj(),
        _labelled(zone="zone1", node="node1").taint("ccc", "bbb").obj(),
        QUEUE,
        id="update node with different taints that match all topologySpreadConstraints",
    ),
    pytest.param(
        _zone_node_pod(),
        _labelled(node="node1").taint("aaa", "bbb").obj(),
        _labelled(node="node1").taint("ccc", "bbb").obj(),
        SKIP,
        id="update node with different taints that only match one of topologySpreadConstraints",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new", "want"), NODE_CHANGE_CASES)
def test_is_schedulable_after_node_change(
    pod: Pod, old: Node | None, new: Node | None, want: QueueingHint
) -> None:
    plugin, _ = _plugin()
    assert plugin.is_schedulable_after_node_change(pod, old, new) is want


# ---------------------------------------------------------------------------------------------
# Test_isSchedulableAfterPodChange


def _target(*constraints: tuple[str, dict[str, Any]], taints_policy: str | None = None) -> Pod:
    """The unschedulable pod: UID p, label foo, its constraints (the first one may carry a
    nodeTaintsPolicy)."""
    p = make_pod("p").uid("p").label("foo")
    for i, (key, selector) in enumerate(constraints):
        policy = taints_policy if i == 0 else None
        p = p.spread_constraint(1, key, selector=selector, node_taints_policy=policy)
    return p.obj()


def _other(*labels: tuple[str, str], node: str = "fake-node", namespace: str = "default") -> Pod:
    """Another pod, UID p2 and nameless as upstream's; bound to ``node`` unless it is ""."""
    p = make_pod("").uid("p2").namespace(namespace)
    if node:
        p = p.node(node)
    for key, value in labels:
        p = p.label(key, value)
    return p.obj()


def _self(*labels: str, tolerate: bool = False) -> Pod:
    """The unschedulable pod itself (UID p) as an update event shows it."""
    p = make_pod("p").uid("p")
    for key in labels:
        p = p.label(key)
    if tolerate:
        p = p.toleration(TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")
    return p.obj()


ZONE_FOO = ("zone", FOO)
NODE_BAR_C = ("node", BAR)
FOO_L = ("foo", "")

POD_CHANGE_CASES = [
    pytest.param(
        _target(ZONE_FOO),
        None,
        _other(FOO_L),
        QUEUE,
        id="add pod with labels match topologySpreadConstraints selector",
    ),
    pytest.param(_target(ZONE_FOO), None, _other(FOO_L, node=""), SKIP, id="add un-scheduled pod"),
    pytest.param(
        _target(ZONE_FOO),
        _other(("bar", ""), node=""),
        _other(FOO_L, node=""),
        SKIP,
        id="update un-scheduled pod",
    ),
    pytest.param(
        _target(ZONE_FOO), _other(FOO_L, node=""), None, SKIP, id="delete un-scheduled pod"
    ),
    pytest.param(
        _target(ZONE_FOO),
        None,
        _other(FOO_L, namespace="fake-namespace"),
        SKIP,
        id="add pod with different namespace",
    ),
    pytest.param(
        _target(ZONE_FOO),
        None,
        _other(("bar", "")),
        SKIP,
        id="add pod with labels don't match topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(FOO_L),
        None,
        QUEUE,
        id="delete pod with labels that match topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(("bar", "")),
        None,
        SKIP,
        id="delete pod with labels that don't match topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(FOO_L, ("bar", "bar1")),
        _other(FOO_L, ("bar", "bar2")),
        SKIP,
        id="update pod's non-related label",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(),
        _other(FOO_L),
        QUEUE,
        id="add pod's label that matches topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(FOO_L),
        _other(),
        QUEUE,
        id="delete pod label that matches topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(("foo", "foo1")),
        _other(("foo", "foo2")),
        SKIP,
        id="change pod's label that matches topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO),
        _other(FOO_L, ("bar", "bar1")),
        _other(FOO_L, ("bar", "bar2")),
        SKIP,
        id="change pod's label that doesn't match topologySpreadConstraints selector",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C),
        _other(FOO_L),
        _other(FOO_L, ("bar", "bar2")),
        QUEUE,
        id="add pod's label that matches topologySpreadConstraints selector "
        "with multi topologySpreadConstraints",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C),
        _other(FOO_L),
        _other(FOO_L, ("baz", "")),
        SKIP,
        id="change pod's label that doesn't match topologySpreadConstraints selector "
        "with multi topologySpreadConstraints",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C),
        _other(FOO_L, ("bar", "")),
        _other(FOO_L, ("bar", "bar2")),
        SKIP,
        id="change pod's label that match topologySpreadConstraints selector "
        "with multi topologySpreadConstraints",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C, taints_policy="Honor"),
        _self("foo"),
        _self("foo", tolerate=True),
        QUEUE,
        id="the unschedulable Pod has topologySpreadConstraint with NodeTaintsPolicy:Honor "
        "and has got a new toleration",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C, taints_policy="Ignore"),
        _self("foo"),
        _self("foo", tolerate=True),
        SKIP,
        id="the unschedulable Pod has topologySpreadConstraint without NodeTaintsPolicy:Honor "
        "and has got a new toleration",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C, taints_policy="Ignore"),
        _self(),
        _self("foo"),
        QUEUE,
        id="the unschedulable Pod has topologySpreadConstraint "
        "and has got a new label matching the selector of the constraint",
    ),
    pytest.param(
        _target(ZONE_FOO, NODE_BAR_C, taints_policy="Ignore"),
        _self(),
        _self("unrelated"),
        SKIP,
        id="the unschedulable Pod has topologySpreadConstraint and has got a new unrelated label",
    ),
]


@pytest.mark.parametrize(("pod", "old", "new", "want"), POD_CHANGE_CASES)
def test_is_schedulable_after_pod_change(
    pod: Pod, old: Pod | None, new: Pod | None, want: QueueingHint
) -> None:
    plugin, _ = _plugin()
    assert plugin.is_schedulable_after_pod_change(pod, old, new) is want


def test_pods_without_uids_are_told_apart_by_namespace_and_name() -> None:
    """Upstream compares UIDs, which every API object has; manifests here may omit them, so an
    unbound pod without a UID is the pending pod only when its namespace and name are too."""
    plugin, _ = _plugin()
    pending = make_pod("p").label("foo").spread_constraint(1, "zone", selector=FOO).obj()
    stranger = make_pod("q").obj()
    assert (
        plugin.is_schedulable_after_pod_change(pending, stranger, make_pod("q").label("foo").obj())
        is SKIP
    )
    assert plugin.is_schedulable_after_pod_change(pending, make_pod("p").obj(), pending) is QUEUE


def test_a_selector_that_does_not_parse_queues_the_pod() -> None:
    plugin, _ = _plugin()
    bad = {"matchExpressions": [{"key": "foo", "operator": "In", "values": []}]}
    pod = make_pod("p").spread_constraint(1, "zone", selector=bad).obj()
    node = _labelled(foo="bar").obj()
    assert plugin.is_schedulable_after_node_change(pod, None, node) is QUEUE
    assert plugin.is_schedulable_after_pod_change(pod, None, _other(FOO_L)) is QUEUE


# ---------------------------------------------------------------------------------------------
# The simulator's scheduler asks these hints before retrying a pod PodTopologySpread rejected.


def _blocked_scenario() -> Scenario:
    """web-new must go to zone b (zone a already holds 2 web pods, maxSkew 1), whose only node
    is tainted: PodTopologySpread rejects node-a and TaintToleration node-b."""
    zone = "topology.kubernetes.io/zone"
    nodes = [
        make_node("node-a").label(zone, "a").capacity().obj(),
        make_node("node-b").label(zone, "b").capacity().taint("dedicated", "x").obj(),
    ]
    bound = [
        make_pod("web-1").label("app", "web").node("node-a").obj(),
        make_pod("web-2").label("app", "web").node("node-a").obj(),
        make_pod("batch").label("app", "batch").node("node-a").obj(),
    ]
    blocked = (
        make_pod("web-new")
        .label("app", "web")
        .spread_constraint(1, zone, selector={"matchLabels": {"app": "web"}})
        .obj()
    )
    return Scenario(nodes=nodes, pods=bound, queue=[blocked], objects=[], config=default_config())


def test_deleting_a_pod_the_selectors_ignore_does_not_retry_a_spread_rejected_pod() -> None:
    run = schedule(_blocked_scenario())
    sched = run.scheduler
    assert sched.unschedulable["default/web-new"].unschedulable_plugins == {
        "PodTopologySpread",
        "TaintToleration",
    }
    bound = {p.metadata.name: p for p in run.cluster.pods()}
    assert sched.delete_assigned_pod(bound["batch"])
    assert "default/web-new" in sched.unschedulable
    assert len(sched.active) == 0
    assert sched.delete_assigned_pod(bound["web-1"])
    assert "default/web-new" not in sched.unschedulable
    assert [pod_key(i.pod) for i in sched.active.infos()] == ["default/web-new"]


def test_only_a_node_change_the_hint_accepts_retries_a_pod_only_spread_rejected() -> None:
    """minDomains 2 with one zone makes the global minimum 0, so zone a's node is too full and
    node-b, without a zone label, is unresolvable: PodTopologySpread alone rejects web-new."""
    zone = "topology.kubernetes.io/zone"
    node_b = make_node("node-b").capacity().obj()
    web = {"matchLabels": {"app": "web"}}
    blocked = (
        make_pod("web-new")
        .label("app", "web")
        .spread_constraint(1, zone, selector=web, min_domains=2)
        .obj()
    )
    scenario = Scenario(
        nodes=[make_node("node-a").label(zone, "a").capacity().obj(), node_b],
        pods=[make_pod(f"web-{i}").label("app", "web").node("node-a").obj() for i in (1, 2)],
        queue=[blocked],
        objects=[],
        config=default_config(),
    )
    run = schedule(scenario)
    sched = run.scheduler
    assert sched.unschedulable["default/web-new"].unschedulable_plugins == {"PodTopologySpread"}

    relabelled = make_node("node-b").capacity().label("disk", "ssd").obj()
    run.cluster.update_node(relabelled)
    sched.on_node_change(node_b, relabelled)
    assert "default/web-new" in sched.unschedulable

    zoned = make_node("node-b").capacity().label("disk", "ssd").label(zone, "b").obj()
    run.cluster.update_node(zoned)
    sched.on_node_change(relabelled, zoned)
    assert "default/web-new" not in sched.unschedulable
    assert [d.node for d in sched.run()] == ["node-b"]


def test_the_timeline_tells_the_scheduler_which_node_changed_and_how(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The old node is read before the update (the NodeInfo changes in place)."""
    sim = Simulation(parse_timeline({"nodeGroups": [{"name": "pool", "count": 2}]}, "t.yaml"))
    calls: list[tuple[Node | None, Node | None]] = []
    monkeypatch.setattr(
        sim.scheduler, "on_node_change", lambda old=None, new=None: calls.append((old, new))
    )
    before, gone = sim.node("pool-1", "test"), sim.node("pool-2", "test")
    labelled = msgspec.structs.replace(
        before, metadata=msgspec.structs.replace(before.metadata, labels={"x": "1"})
    )
    sim.update_node(labelled)
    sim.remove_node("pool-2")
    assert calls == [(before, labelled), (gone, None)]
