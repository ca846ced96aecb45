"""TaintToleration, translated from taint_toleration_test.go (v1.35)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from builders import NodeBuilder, make_node, make_pod
from topospread.api.types import Node, Pod
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import (
    FilterPlugin,
    PreScorePlugin,
    QueueingHint,
    ScorePlugin,
)
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo, NodeScore
from topospread.plugins import tainttoleration
from topospread.plugins.tainttoleration import TaintToleration

UNTOLERATED = new_status(Code.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")


def test_reason_is_the_v1_35_generic_message() -> None:
    # kubernetes#134740: since v1.35 the reason no longer names the taint's key and value.
    assert tainttoleration.ERR_REASON_UNTOLERATED == "node(s) had untolerated taint(s)"


def _node(name: str, *taints: tuple[str, str, str]) -> Node:
    builder: NodeBuilder = make_node(name)
    for key, value, effect in taints:
        builder = builder.taint(key, value, effect)
    return builder.obj()


def _new() -> TaintToleration:
    return tainttoleration.new(None, SnapshotHandle(Snapshot([])), DEFAULT_FEATURES)


# ---------------------------------------------------------------------------------------------
# Filter (TestTaintTolerationFilter)


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            make_pod("pod1").obj(),
            _node("nodeA", ("dedicated", "user1", "NoSchedule")),
            UNTOLERATED,
            id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        ),
        pytest.param(
            make_pod("pod1").toleration("dedicated", "", "user1", "NoSchedule").obj(),
            _node("nodeA", ("dedicated", "user1", "NoSchedule")),
            SUCCESS,
            id="A pod which can be scheduled on a dedicated node assigned to user1",
        ),
        pytest.param(
            make_pod("pod1").toleration("dedicated", "Equal", "user2", "NoSchedule").obj(),
            _node("nodeA", ("dedicated", "user1", "NoSchedule")),
            UNTOLERATED,
            id="A pod which can't be scheduled on a dedicated node assigned to user2",
        ),
        pytest.param(
            make_pod("pod1").toleration("foo", "Exists", "", "NoSchedule").obj(),
            _node("nodeA", ("foo", "bar", "NoSchedule")),
            SUCCESS,
            id="A toleration with operator Exists tolerates the taints on the node",
        ),
        pytest.param(
            make_pod("pod1")
            .toleration("dedicated", "Equal", "user2", "NoSchedule")
            .toleration("foo", "Exists", "", "NoSchedule")
            .obj(),
            _node("nodeA", ("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")),
            SUCCESS,
            id="multiple tolerations tolerate all of the node's taints",
        ),
        pytest.param(
            make_pod("pod1").toleration("foo", "Equal", "bar", "PreferNoSchedule").obj(),
            _node("nodeA", ("foo", "bar", "NoSchedule")),
            UNTOLERATED,
            id="key and value match but the (non-empty) effect doesn't",
        ),
        pytest.param(
            make_pod("pod1").toleration("foo", "Equal", "bar").obj(),
            _node("nodeA", ("foo", "bar", "NoSchedule")),
            SUCCESS,
            id="key and value match and the toleration's empty effect matches all effects",
        ),
        pytest.param(
            make_pod("pod1").toleration("dedicated", "Equal", "user2", "NoSchedule").obj(),
            _node("nodeA", ("dedicated", "user1", "PreferNoSchedule")),
            SUCCESS,
            id="an untolerated PreferNoSchedule taint does not filter",
        ),
        pytest.param(
            make_pod("pod1").obj(),
            _node("nodeA", ("dedicated", "user1", "PreferNoSchedule")),
            SUCCESS,
            id="no toleration and only a PreferNoSchedule taint",
        ),
        pytest.param(
            make_pod("pod1").obj(),
            _node("nodeA", ("node.kubernetes.io/not-ready", "", "NoExecute")),
            UNTOLERATED,
            id="an untolerated NoExecute taint filters too",
        ),
    ],
)
def test_filter(pod: Pod, node: Node, want: Status) -> None:
    plugin = _new()
    assert isinstance(plugin, FilterPlugin)
    assert plugin.filter(CycleState(), pod, NodeInfo(node)) == want


@pytest.mark.parametrize(
    ("comparison_operators", "want"),
    [
        pytest.param(False, UNTOLERATED, id="Gt tolerates nothing while the alpha gate is off"),
        pytest.param(True, SUCCESS, id="Gt compares integers with the alpha gate on"),
    ],
)
def test_filter_comparison_operators_follow_the_feature_gate(
    comparison_operators: bool, want: Status
) -> None:
    features = replace(
        DEFAULT_FEATURES, enable_taint_toleration_comparison_operators=comparison_operators
    )
    plugin = tainttoleration.new(None, SnapshotHandle(Snapshot([])), features)
    pod = make_pod("p").toleration("gen", "Gt", "3", "NoSchedule").obj()
    node = _node("n", ("gen", "5", "NoSchedule"))
    assert plugin.filter(CycleState(), pod, NodeInfo(node)) == want


# ---------------------------------------------------------------------------------------------
# PreScore / Score / NormalizeScore (TestTaintTolerationScore)


@pytest.mark.parametrize(
    ("pod", "nodes", "want"),
    [
        pytest.param(
            make_pod("pod1").toleration("foo", "Equal", "bar", "PreferNoSchedule").obj(),
            [
                _node("nodeA", ("foo", "bar", "PreferNoSchedule")),
                _node("nodeB", ("foo", "blah", "PreferNoSchedule")),
            ],
            [100, 0],
            id="node with taints tolerated by the pod gets a higher score",
        ),
        pytest.param(
            make_pod("pod1")
            .toleration("cpu-type", "Equal", "arm64", "PreferNoSchedule")
            .toleration("disk-type", "Equal", "ssd", "PreferNoSchedule")
            .obj(),
            [
                _node("nodeA"),
                _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule")),
                _node(
                    "nodeC",
                    ("cpu-type", "arm64", "PreferNoSchedule"),
                    ("disk-type", "ssd", "PreferNoSchedule"),
                ),
            ],
            [100, 100, 100],
            id="the number of tolerated taints does not matter",
        ),
        pytest.param(
            make_pod("pod1").toleration("foo", "Equal", "bar", "PreferNoSchedule").obj(),
            [
                _node("nodeA"),
                _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule")),
                _node(
                    "nodeC",
                    ("cpu-type", "arm64", "PreferNoSchedule"),
                    ("disk-type", "ssd", "PreferNoSchedule"),
                ),
            ],
            [100, 50, 0],
            id="the more intolerable taints a node has, the lower score it gets",
        ),
        pytest.param(
            make_pod("pod1")
            .toleration("cpu-type", "Equal", "arm64", "NoSchedule")
            .toleration("disk-type", "Equal", "ssd", "NoSchedule")
            .obj(),
            [
                _node("nodeA"),
                _node("nodeB", ("cpu-type", "arm64", "NoSchedule")),
                _node(
                    "nodeC",
                    ("cpu-type", "arm64", "PreferNoSchedule"),
                    ("disk-type", "ssd", "PreferNoSchedule"),
                ),
            ],
            [100, 100, 0],
            id="only PreferNoSchedule taints and tolerations count",
        ),
        pytest.param(
            make_pod("pod1").obj(),
            [_node("nodeA"), _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule"))],
            [100, 0],
            id="no taints and tolerations, lands on the node without taints",
        ),
        pytest.param(
            make_pod("pod1").toleration("cpu-type", "Exists").obj(),
            [_node("nodeA"), _node("nodeB", ("cpu-type", "arm64", "PreferNoSchedule"))],
            [100, 100],
            id="a toleration without effect tolerates PreferNoSchedule",
        ),
    ],
)
def test_score(pod: Pod, nodes: list[Node], want: list[int]) -> None:
    plugin = _new()
    assert isinstance(plugin, PreScorePlugin)
    assert isinstance(plugin, ScorePlugin)
    infos = [NodeInfo(n) for n in nodes]
    state = CycleState()
    assert plugin.pre_score(state, pod, infos) is SUCCESS
    scores = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is SUCCESS
        scores.append(NodeScore(info.name, score))
    extensions = plugin.score_extensions()
    assert extensions is not None
    assert extensions.normalize_score(state, pod, scores) is SUCCESS
    assert [s.score for s in scores] == want


def test_score_without_pre_score_is_an_error() -> None:
    _, status = _new().score(CycleState(), make_pod("p").obj(), NodeInfo(_node("n")))
    assert status.code is Code.Error
    assert status.message == 'failed to read "PreScoreTaintToleration" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# Queueing hint (TestIsSchedulableAfterNodeChange; the wrong-object cases have no counterpart:
# the queue hands the hint nodes only)


def _tolerating(value: str) -> Pod:
    return make_pod("pod1").toleration("dedicated", "Equal", value, "NoSchedule").obj()


NODE_CHANGE_CASES = {
    "skip-queue-on-untoleratedtaint-node-added": (
        _tolerating("user2"),
        None,
        _node("nodeA", ("dedicated", "user1", "NoSchedule")),
        QueueingHint.QueueSkip,
    ),
    "queue-on-toleratedtaint-node-added": (
        _tolerating("user2"),
        None,
        _node("nodeA", ("dedicated", "user2", "NoSchedule")),
        QueueingHint.Queue,
    ),
    "skip-unrelated-change": (
        _tolerating("user2"),
        _node("nodeA", ("dedicated", "user1", "NoSchedule")),
        _node("nodeA", ("dedicated", "user1", "NoSchedule"), ("dedicated", "user3", "NoSchedule")),
        QueueingHint.QueueSkip,
    ),
    "queue-on-taint-change": (
        _tolerating("user2"),
        _node("nodeA", ("dedicated", "user1", "NoSchedule")),
        _node("nodeA", ("dedicated", "user2", "NoSchedule")),
        QueueingHint.Queue,
    ),
    # Not upstream's table: the plugin registers no NodeDelete event.
    "skip-node-deleted": (
        _tolerating("user2"),
        _node("nodeA", ("dedicated", "user1", "NoSchedule")),
        None,
        QueueingHint.QueueSkip,
    ),
}


@pytest.mark.parametrize(
    ("pod", "old", "new", "want"), NODE_CHANGE_CASES.values(), ids=NODE_CHANGE_CASES.keys()
)
def test_is_schedulable_after_node_change(
    pod: Pod, old: Node | None, new: Node | None, want: QueueingHint
) -> None:
    assert _new().is_schedulable_after_node_change(pod, old, new) is want


def test_a_pod_only_taints_rejected_is_retried_only_when_a_node_comes_to_tolerate_it() -> None:
    """In the simulator's queue: a taint added to a node the pod already could not tolerate
    leaves it waiting (QueueSkip, no attempt); removing the taints moves it, and it binds."""
    from topospread.analysis.simulate import carry_out, settle_timeline
    from topospread.simulator.timeline_format import parse_timeline
    from topospread.simulator.timeline_steps.actions import parse_step

    node = {
        "metadata": {"name": "n1"},
        "spec": {"taints": [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"pods": "110"}},
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "x"}]},
    }
    sim = settle_timeline(parse_timeline({"nodes": [node], "objects": [pod]}, "t.yaml"), 0)
    scheduler = sim.scheduler
    assert scheduler.last["default/p"].attempt == 1
    assert scheduler.unschedulable["default/p"].unschedulable_plugins == {"TaintToleration"}

    def step(doc: dict[str, object]) -> None:
        carry_out(sim, parse_step(doc, 0, "t.yaml"))
        sim.settle("t.yaml")

    step({"taint": {"node": "n1", "key": "other", "effect": "NoSchedule"}})
    assert scheduler.last["default/p"].attempt == 1  # not retried
    step({"untaint": {"node": "n1", "key": "other", "effect": "NoSchedule"}})
    assert scheduler.last["default/p"].attempt == 1  # still "dedicated": not retried
    step({"untaint": {"node": "n1", "key": "dedicated", "value": "x", "effect": "NoSchedule"}})
    assert [p.metadata.name for p in sim.cluster.infos["n1"].pods] == ["p"]
    assert scheduler.last["default/p"].attempt == 2
