"""PrioritySort, SchedulingGates, NodeUnschedulable, NodeName, DefaultBinder, and the shared
DefaultNormalizeScore, translated from their upstream *_test.go tables (v1.35)."""

from __future__ import annotations

import pytest

from builders import make_node, make_pod
from topospread.api.types import Pod
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import (
    BindPlugin,
    FilterPlugin,
    PreEnqueuePlugin,
    QueuedPodInfo,
    QueueSortPlugin,
)
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo, NodeScore
from topospread.plugins import (
    defaultbinder,
    nodename,
    nodeunschedulable,
    queuesort,
    schedulinggates,
)
from topospread.plugins.helper.normalize_score import default_normalize_score

HANDLE = SnapshotHandle(Snapshot([]))

# ---------------------------------------------------------------------------------------------
# PrioritySort (queuesort/priority_sort_test.go: TestLess)

LOW_PRIORITY, HIGH_PRIORITY = 10, 100


def _queued(priority: int | None, timestamp: float) -> QueuedPodInfo:
    builder = make_pod("p")
    if priority is not None:
        builder = builder.priority(priority)
    return QueuedPodInfo(pod=builder.obj(), timestamp=timestamp)


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(
            _queued(LOW_PRIORITY, 1), _queued(HIGH_PRIORITY, 2), False, id="p1 priority is lower"
        ),
        pytest.param(
            _queued(HIGH_PRIORITY, 1), _queued(LOW_PRIORITY, 2), True, id="p1 priority is higher"
        ),
        pytest.param(
            _queued(HIGH_PRIORITY, 1),
            _queued(HIGH_PRIORITY, 2),
            True,
            id="equal priority, p1 was queued earlier",
        ),
        pytest.param(
            _queued(HIGH_PRIORITY, 2),
            _queued(HIGH_PRIORITY, 1),
            False,
            id="equal priority, p2 was queued earlier",
        ),
        pytest.param(
            _queued(HIGH_PRIORITY, 1),
            _queued(HIGH_PRIORITY, 1),
            False,
            id="equal priority and timestamp is not less",
        ),
        pytest.param(_queued(None, 2), _queued(-1, 1), True, id="an unset priority counts as 0"),
    ],
)
def test_priority_sort_orders_by_priority_then_queue_time(
    a: QueuedPodInfo, b: QueuedPodInfo, want: bool
) -> None:
    plugin = queuesort.new(None, HANDLE, DEFAULT_FEATURES)
    assert isinstance(plugin, QueueSortPlugin)
    assert plugin.name == "PrioritySort"
    assert plugin.less(a, b) is want


def test_pod_priority_is_zero_when_unset() -> None:
    assert queuesort.pod_priority(make_pod("p").obj()) == 0
    assert queuesort.pod_priority(make_pod("p").priority(2000000000).obj()) == 2000000000


# ---------------------------------------------------------------------------------------------
# SchedulingGates (schedulinggates/scheduling_gates_test.go: TestPreEnqueue)


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), SUCCESS, id="pod does not carry scheduling gates"),
        pytest.param(
            make_pod("p").scheduling_gates("foo", "bar").obj(),
            new_status(
                Code.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]"
            ),
            id="pod carries scheduling gates",
        ),
        pytest.param(
            make_pod("p").scheduling_gates("example.com/one").obj(),
            new_status(
                Code.UnschedulableAndUnresolvable,
                "waiting for scheduling gates: [example.com/one]",
            ),
            id="one gate prints as a one-element Go slice",
        ),
    ],
)
def test_scheduling_gates_pre_enqueue(pod: Pod, want: Status) -> None:
    plugin = schedulinggates.new(None, HANDLE, DEFAULT_FEATURES)
    assert isinstance(plugin, PreEnqueuePlugin)
    assert plugin.name == "SchedulingGates"
    assert plugin.pre_enqueue(pod) == want


def test_scheduling_gates_message_prefix_constant() -> None:
    assert schedulinggates.WAITING_FOR_GATES_PREFIX == "waiting for scheduling gates: "


# ---------------------------------------------------------------------------------------------
# NodeUnschedulable (nodeunschedulable/node_unschedulable_test.go: TestNodeUnschedulable)


@pytest.mark.parametrize(
    ("pod", "unschedulable", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            True,
            new_status(Code.UnschedulableAndUnresolvable, "node(s) were unschedulable"),
            id="Does not schedule pod to unschedulable node",
        ),
        pytest.param(make_pod("p").obj(), False, SUCCESS, id="Schedule pod to normal node"),
        pytest.param(
            make_pod("p")
            .toleration("node.kubernetes.io/unschedulable", operator="", effect="NoSchedule")
            .obj(),
            True,
            SUCCESS,
            id="Schedule pod with toleration to unschedulable node",
        ),
        pytest.param(
            make_pod("p").toleration(operator="Exists").obj(),
            True,
            SUCCESS,
            id="a tolerate-everything toleration tolerates the cordon",
        ),
        pytest.param(
            make_pod("p")
            .toleration("node.kubernetes.io/unschedulable", operator="Exists", effect="NoExecute")
            .obj(),
            True,
            new_status(Code.UnschedulableAndUnresolvable, "node(s) were unschedulable"),
            id="a toleration of another effect does not",
        ),
    ],
)
def test_node_unschedulable_filter(pod: Pod, unschedulable: bool, want: Status) -> None:
    plugin = nodeunschedulable.new(None, HANDLE, DEFAULT_FEATURES)
    assert isinstance(plugin, FilterPlugin)
    builder = make_node("n1")
    if unschedulable:
        builder = builder.unschedulable()
    assert plugin.filter(CycleState(), pod, NodeInfo(builder.obj())) == want


def test_node_unschedulable_reason_constant() -> None:
    assert nodeunschedulable.ERR_REASON_UNSCHEDULABLE == "node(s) were unschedulable"


# ---------------------------------------------------------------------------------------------
# NodeName (nodename/node_name_test.go: TestNodeName)


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(make_pod("p").obj(), SUCCESS, id="no host specified"),
        pytest.param(make_pod("p").node("foo").obj(), SUCCESS, id="host matches"),
        pytest.param(
            make_pod("p").node("bar").obj(),
            new_status(
                Code.UnschedulableAndUnresolvable, "node(s) didn't match the requested node name"
            ),
            id="host doesn't match",
        ),
    ],
)
def test_node_name_filter(pod: Pod, want: Status) -> None:
    plugin = nodename.new(None, HANDLE, DEFAULT_FEATURES)
    assert isinstance(plugin, FilterPlugin)
    assert plugin.name == "NodeName"
    assert plugin.filter(CycleState(), pod, NodeInfo(make_node("foo").obj())) == want


def test_node_name_reason_constant() -> None:
    assert nodename.ERR_REASON == "node(s) didn't match the requested node name"


# ---------------------------------------------------------------------------------------------
# DefaultBinder


def test_default_binder_reports_success() -> None:
    plugin = defaultbinder.new(None, HANDLE, DEFAULT_FEATURES)
    assert isinstance(plugin, BindPlugin)
    assert plugin.name == "DefaultBinder"
    assert plugin.bind(CycleState(), make_pod("p").obj(), "n1") is SUCCESS


# ---------------------------------------------------------------------------------------------
# DefaultNormalizeScore (helper/normalize_score_test.go: TestDefaultNormalizeScore)


@pytest.mark.parametrize(
    ("reverse", "scores", "want"),
    [
        pytest.param(False, [1, 2, 3, 4], [25, 50, 75, 100], id="scales to the maximum"),
        pytest.param(True, [1, 2, 3, 4], [75, 50, 25, 0], id="reverse scales and inverts"),
        pytest.param(False, [1000, 10, 20, 30], [100, 1, 2, 3], id="truncates toward zero"),
        pytest.param(True, [1000, 10, 20, 30], [0, 99, 98, 97], id="reverse truncates first"),
        pytest.param(False, [1, 1, 1, 1], [100, 100, 100, 100], id="equal scores all max"),
        pytest.param(False, [0, 0, 0, 0], [0, 0, 0, 0], id="all zero stays zero"),
        pytest.param(True, [0, 0, 0, 0], [100, 100, 100, 100], id="all zero reversed is max"),
    ],
)
def test_default_normalize_score(reverse: bool, scores: list[int], want: list[int]) -> None:
    node_scores = [NodeScore(f"n{i}", s) for i, s in enumerate(scores)]
    assert default_normalize_score(100, reverse, node_scores) is SUCCESS
    assert [ns.score for ns in node_scores] == want
