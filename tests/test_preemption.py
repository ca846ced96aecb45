"""DefaultPreemption, the preemption Evaluator and nominated pods.

Tables are translated by meaning from upstream's
pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go (TestPostFilter,
TestDryRunPreemption, TestSelectBestCandidate, TestPodEligibleToPreemptOthers, TestPreempt) at
a v1.35-era commit; ids carry the upstream case names. End-to-end runs go through the Scheduler
with the default profile and check the FailedScheduling text byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec
import pytest

from builders import exists, make_node, make_pod, match_labels
from topospread.api.types import Node, Pod, PodDisruptionBudget
from topospread.cluster.state import ClusterState
from topospread.errors import ConfigError
from topospread.framework.config import (
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    PluginRef,
    PluginSet,
    Profile,
    default_config,
)
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.handle import FrameworkHandle
from topospread.framework.interface import Handle, PostFilterResult, PreFilterResult
from topospread.framework.preemption import (
    Candidate,
    Evaluator,
    Victims,
    aggregate_message,
    more_important_pod,
    pick_one_node_for_preemption,
)
from topospread.framework.runtime import Framework, PluginFactory
from topospread.framework.schedule_one import SchedulingAlgorithm
from topospread.framework.status import SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins import defaultpreemption
from topospread.plugins.defaultpreemption import (
    ERR_NO_VICTIMS,
    ERR_PREEMPTION_POLICY_NEVER,
    ERR_TERMINATING_ON_NOMINATED_NODE,
    DefaultPreemption,
    DefaultPreemptionArgs,
    resolve_default_preemption_args,
)
from topospread.plugins.registry import in_tree_registry
from topospread.simulator.scheduler import Decision, Scheduler

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000

SMALL: Final = {"cpu": "100m", "memory": "100"}
MEDIUM: Final = {"cpu": "200m", "memory": "200"}
LARGE: Final = {"cpu": "300m", "memory": "300"}
VERY_LARGE: Final = {"cpu": "500m", "memory": "500"}

# metav1.NewTime(time.Unix(0, n)) in upstream's tables; whole seconds here, as manifests carry.
EPOCH = [f"1970-01-01T00:00:0{n}Z" for n in range(7)]

NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
INSUFFICIENT_CPU: Final = "Insufficient cpu"
SPREAD_MISMATCH: Final = "node(s) didn't match pod topology spread constraints"
UNTOLERATED: Final = "node(s) had untolerated taint(s)"

UNSCHEDULABLE = new_status(Code.Unschedulable)
UNRESOLVABLE = new_status(Code.UnschedulableAndUnresolvable)


# ---------------------------------------------------------------------------------------------
# Test plugins and framework set-up


class _ErrorOnLabelledNodes:
    """Upstream's TestPlugin: AddPod/RemovePod fail on nodes labelled error=true."""

    @property
    def name(self) -> str:
        return "test-plugin"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        return None, SUCCESS

    def pre_filter_extensions(self) -> _ErrorOnLabelledNodes:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        if node_info.node.metadata.labels.get("error") == "true":
            return as_status(f"failed to add pod: {pod_to_schedule.metadata.name}")
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        if node_info.node.metadata.labels.get("error") == "true":
            return as_status(f"failed to remove pod: {pod_to_schedule.metadata.name}")
        return SUCCESS


class _CountingFilter:
    """Upstream's FakeFilterPlugin: passes every node and counts its calls."""

    calls = 0

    @property
    def name(self) -> str:
        return "FakeFilter"

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        type(self).calls += 1
        return SUCCESS


def _registry() -> dict[str, PluginFactory]:
    registry = in_tree_registry()
    registry["test-plugin"] = lambda args, handle, features: _ErrorOnLabelledNodes()
    registry["FakeFilter"] = lambda args, handle, features: _CountingFilter()
    return registry


def _profile(*names: str, args: Mapping[str, Any] | None = None) -> Profile:
    plugins = {point: PluginSet() for point in EXTENSION_POINTS}
    base = ["PrioritySort", "DefaultBinder", "DefaultPreemption"]
    plugins["multiPoint"] = PluginSet(enabled=[PluginRef(name=n) for n in (*base, *names)])
    plugin_args = {} if args is None else {"DefaultPreemption": args}
    return Profile(DEFAULT_SCHEDULER_NAME, None, plugins, plugin_args)


def _framework(
    nodes: Iterable[Node],
    pods: Iterable[Pod],
    *plugins: str,
    pdbs: Iterable[PodDisruptionBudget] = (),
    args: Mapping[str, Any] | None = None,
) -> tuple[ClusterState, Framework, DefaultPreemption]:
    cluster = ClusterState(nodes, pods)
    handle = FrameworkHandle(cluster, cluster, DEFAULT_FEATURES, pdbs=pdbs)
    fwk = Framework(_profile(*plugins, args=args), _registry(), handle, DEFAULT_FEATURES)
    plugin = fwk.plugins["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    return cluster, fwk, plugin


def _pre_filter(fwk: Framework, pod: Pod, cluster: ClusterState) -> CycleState:
    state = CycleState()
    _, status, _ = fwk.run_pre_filter_plugins(state, pod, cluster.list())
    assert status.is_success, status
    return state


def _pod(name: str, priority: int | None = None, node: str = "", /, **req: str) -> Pod:
    b = make_pod(name)
    if priority is not None:
        b = b.priority(priority)
    if node:
        b = b.node(node)
    if req:
        b = b.req(**req)
    return b.obj()


def _node(spec: str, **capacity: str) -> Node:
    """``name[/zone[/region]]`` as upstream's tables write nodes: labels hostname, zone, region."""
    parts = spec.split("/")
    b = make_node(parts[0]).capacity(**(capacity or VERY_LARGE))
    for key, value in zip(("hostname", "zone", "region"), parts, strict=False):
        b = b.label(key, value)
    return b.obj()


def _pdb(
    selector: Mapping[str, Any] | None,
    allowed: int,
    disrupted: Sequence[str] = (),
    namespace: str = "default",
    name: str = "pdb",
) -> PodDisruptionBudget:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": selector},
            "status": {
                "disruptionsAllowed": allowed,
                "disruptedPods": {p: "2024-01-01T00:00:00Z" for p in disrupted},
            },
        },
        PodDisruptionBudget,
    )


def _names(pods: Iterable[Pod]) -> list[str]:
    return [p.metadata.name for p in pods]


# ---------------------------------------------------------------------------------------------
# DefaultPreemptionArgs


def test_args_default_to_ten_percent_and_a_hundred_nodes() -> None:
    args = resolve_default_preemption_args(None)
    assert args == DefaultPreemptionArgs(
        min_candidate_nodes_percentage=10, min_candidate_nodes_absolute=100
    )
    assert resolve_default_preemption_args({"minCandidateNodesAbsolute": 0}).percentage == 10


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {"minCandidateNodesPercentage": -1},
            "minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100]",
            id="negative minCandidateNodesPercentage",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 900},
            "minCandidateNodesPercentage: Invalid value: 900: not in valid range [0, 100]",
            id="too large minCandidateNodesPercentage",
        ),
        pytest.param(
            {"minCandidateNodesAbsolute": -1},
            "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
            id="negative minCandidateNodesAbsolute",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0},
            "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
            "minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be "
            "zero at the same time as minCandidateNodesPercentage]",
            id="all zero",
        ),
        pytest.param(
            {"minCandidateNodesPercentage": -1, "minCandidateNodesAbsolute": -1},
            "[minCandidateNodesPercentage: Invalid value: -1: not in valid range [0, 100], "
            "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]",
            id="both negative",
        ),
    ],
)
def test_invalid_args_are_rejected_with_the_schedulers_message(
    raw: Mapping[str, Any], message: str
) -> None:
    # Upstream: TestValidateDefaultPreemptionArgs (validation_pluginargs_test.go)
    with pytest.raises(ConfigError) as err:
        defaultpreemption.new(raw, _handle(), DEFAULT_FEATURES)
    assert str(err.value) == message


def _handle() -> Handle:
    cluster = ClusterState()
    return FrameworkHandle(cluster, cluster, DEFAULT_FEATURES)


@pytest.mark.parametrize(
    ("percentage", "absolute", "nodes", "want"),
    [
        pytest.param(10, 100, 10, 10, id="at most every node"),
        pytest.param(10, 100, 1000, 100, id="at least the absolute minimum"),
        pytest.param(10, 100, 5000, 500, id="the percentage when it is larger"),
        pytest.param(40, 1, 5, 2, id="40 percent of five nodes"),
        pytest.param(0, 3, 10, 3, id="only the absolute minimum"),
    ],
)
def test_number_of_candidates(percentage: int, absolute: int, nodes: int, want: int) -> None:
    # Upstream: TestCalculateNumCandidates (default_preemption_test.go)
    plugin = defaultpreemption.new(
        {"minCandidateNodesPercentage": percentage, "minCandidateNodesAbsolute": absolute},
        _handle(),
        DEFAULT_FEATURES,
    )
    assert plugin.calculate_num_candidates(nodes) == want
    offset, num = plugin.get_offset_and_num_candidates(nodes)
    assert 0 <= offset < nodes and num == want


# ---------------------------------------------------------------------------------------------
# PostFilter (TestPostFilter)

ONE_POD: Final = {"pods": "1"}
NODE_RES: Final = {"cpu": "200m", "memory": "400"}


def _post_filter_case(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    statuses: Mapping[str, Status],
    want_result: PostFilterResult | None,
    want_status: Status,
    pdbs: Sequence[PodDisruptionBudget] = (),
) -> Any:
    return (pod, pods, nodes, statuses, want_result, want_status, pdbs)


POST_FILTER_CASES = [
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH),
            [_pod("p1", None, "node1")],
            [make_node("node1").capacity(**ONE_POD).obj()],
            {"node1": UNSCHEDULABLE},
            PostFilterResult("node1"),
            SUCCESS,
        ),
        id="pod with higher priority can be made schedulable",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p"),
            [_pod("p1", None, "node1")],
            [make_node("node1").capacity(**ONE_POD).obj()],
            {"node1": UNSCHEDULABLE},
            PostFilterResult(""),
            new_status(
                Code.Unschedulable,
                "preemption: 0/1 nodes are available: 1 No preemption victims found for "
                "incoming pod.",
            ),
        ),
        id="pod with tied priority is still unschedulable",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH),
            [_pod("p1", None, "node1")],
            [make_node("node1").capacity(**ONE_POD).obj()],
            {"node1": UNRESOLVABLE},
            PostFilterResult(""),
            new_status(
                Code.Unschedulable,
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ),
        id="preemption should respect filteredNodesStatuses",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH),
            [_pod("p1", None, "node1")],
            [make_node("node1").capacity(**ONE_POD).obj()],
            {},
            PostFilterResult(""),
            new_status(
                Code.Unschedulable,
                "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ),
        ),
        id="preemption should respect absent NodeToStatusReader entry meaning "
        "UnschedulableAndUnresolvable",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", MID),
            [_pod("p1", HIGH, "node1"), _pod("p2", LOW, "node2")],
            [make_node(n).capacity(**ONE_POD).obj() for n in ("node1", "node2")],
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
            PostFilterResult("node2"),
            SUCCESS,
        ),
        id="pod can be made schedulable on one node",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", VERY_HIGH),
            [
                make_pod("p1").label("pdb", "non-violating").priority(HIGH).node("node1").obj(),
                make_pod("p2").label("pdb", "violating").priority(LOW).node("node1").obj(),
                make_pod("p3").label("pdb", "violating").priority(MID).node("node2").obj(),
            ],
            [make_node(n).capacity(**ONE_POD).obj() for n in ("node1", "node2")],
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
            PostFilterResult("node2"),
            SUCCESS,
            [
                _pdb(match_labels(pdb="violating"), 0, name="violating-pdb"),
                _pdb(match_labels(pdb="non-violating"), 2**31 - 1, name="non-violating-pdb"),
            ],
        ),
        id="pod can be made schedulable on minHighestPriority node",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH, **LARGE),
            [_pod("p1", None, "node1"), _pod("p2", None, "node2")],
            [make_node(n).capacity(**NODE_RES).obj() for n in ("node1", "node2")],
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
            PostFilterResult(""),
            new_status(
                Code.Unschedulable, "preemption: 0/2 nodes are available: 2 Insufficient cpu."
            ),
        ),
        id="no candidate nodes found, no enough resource after removing low priority pods",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH, **LARGE),
            [_pod("p1", HIGH, "node1"), _pod("p2", None, "node2"), _pod("p3", HIGH, "node3")],
            [
                make_node("node1").capacity(**ONE_POD).obj(),
                make_node("node2").capacity(**NODE_RES).obj(),
                make_node("node3").capacity(**ONE_POD).obj(),
            ],
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE, "node3": UNSCHEDULABLE},
            PostFilterResult(""),
            new_status(
                Code.Unschedulable,
                "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims "
                "found for incoming pod.",
            ),
        ),
        id="no candidate nodes found with mixed reasons, no lower priority pod and no enough "
        "CPU resource",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH, **LARGE),
            [_pod("p1", None, "node1"), _pod("p2", None, "node2")],
            [make_node(f"node{i}").capacity(**NODE_RES).obj() for i in range(1, 5)],
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE, "node4": UNRESOLVABLE},
            PostFilterResult(""),
            new_status(
                Code.Unschedulable,
                "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not "
                "helpful for scheduling.",
            ),
        ),
        id="no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes "
        "and 2 nodes don't have enough CPU resource",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH, **LARGE),
            [_pod("p1", None, "node1")],
            [make_node("node1").capacity(**LARGE).label("error", "true").obj()],
            {"node1": UNSCHEDULABLE},
            None,
            as_status(
                'preemption: running RemovePod on PreFilter plugin "test-plugin": '
                "failed to remove pod: p"
            ),
        ),
        id="only one node but failed with TestPlugin",
    ),
    pytest.param(
        *_post_filter_case(
            _pod("p", HIGH, **LARGE),
            [_pod("p1", None, "node1"), _pod("p2", None, "node2", **MEDIUM)],
            [
                make_node("node1").capacity(**LARGE).label("error", "true").obj(),
                make_node("node2").capacity(**LARGE).obj(),
            ],
            {"node1": UNSCHEDULABLE, "node2": UNSCHEDULABLE},
            PostFilterResult("node2"),
            SUCCESS,
        ),
        id="one failed with TestPlugin and the other pass",
    ),
]


@pytest.mark.parametrize(
    ("pod", "pods", "nodes", "statuses", "want_result", "want_status", "pdbs"), POST_FILTER_CASES
)
def test_post_filter(
    pod: Pod,
    pods: list[Pod],
    nodes: list[Node],
    statuses: Mapping[str, Status],
    want_result: PostFilterResult | None,
    want_status: Status,
    pdbs: Sequence[PodDisruptionBudget],
) -> None:
    cluster, fwk, plugin = _framework(nodes, pods, "NodeResourcesFit", "test-plugin", pdbs=pdbs)
    state = _pre_filter(fwk, pod, cluster)
    result, status = plugin.post_filter(state, pod, statuses)
    assert (status.code, status.reasons) == (want_status.code, want_status.reasons)
    assert result == want_result


# ---------------------------------------------------------------------------------------------
# DryRunPreemption (TestDryRunPreemption)


def _dry_run(
    node_specs: Sequence[str],
    init_pods: Sequence[Pod],
    preemptor: Pod,
    *plugins: str,
    pdbs: Sequence[PodDisruptionBudget] = (),
    args: Mapping[str, Any] | None = None,
    offset: int = 0,
) -> tuple[list[Candidate], dict[str, Status]]:
    cluster, fwk, plugin = _framework(
        [_node(s) for s in node_specs], init_pods, "FakeFilter", *plugins, args=args
    )
    state = _pre_filter(fwk, preemptor, cluster)
    infos = sorted(cluster.list(), key=lambda info: info.name)
    evaluator = Evaluator("DefaultPreemption", fwk.handle, plugin)
    num = plugin.calculate_num_candidates(len(infos))
    candidates, statuses, errors = evaluator.dry_run_preemption(
        state, preemptor, infos, pdbs, offset, num
    )
    assert not errors
    return candidates, statuses


def _sorted(candidates: Iterable[Candidate]) -> list[tuple[str, list[str], int]]:
    """As upstream compares them: candidates by node name, victims by pod name."""
    return sorted(
        (c.name, sorted(_names(c.victims.pods)), c.victims.num_pdb_violations) for c in candidates
    )


FIT = "NodeResourcesFit"

DRY_RUN_CASES = [
    pytest.param(
        ["node1", "node2"],
        [_pod("p1", MID, "node1", **LARGE), _pod("p2", MID, "node2", **LARGE)],
        _pod("p", HIGH, **LARGE),
        (FIT,),
        [],
        [("node1", ["p1"], 0), ("node2", ["p2"], 0)],
        4,
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        [_pod("p1", MID, "node1", **LARGE), _pod("p2", MID, "node2", **LARGE)],
        _pod("p", LOW, **LARGE),
        (FIT,),
        [],
        [],
        0,
        id="a pod that would fit on the nodes, but other pods running are higher priority, "
        "no preemption would happen",
    ),
    pytest.param(
        ["node1", "node2"],
        [
            _pod("p1.1", LOW, "node1", **SMALL),
            _pod("p1.2", MID, "node1", **LARGE),
            _pod("p2", MID, "node2", **LARGE),
        ],
        _pod("p", HIGH, **LARGE),
        (FIT,),
        [],
        [("node1", ["p1.2"], 0), ("node2", ["p2"], 0)],
        5,
        id="medium priority pod is preempted, but lower priority one stays as it is small",
    ),
    pytest.param(
        ["node1", "node2"],
        [
            _pod("p1.1", MID, "node1", **SMALL),
            _pod("p1.2", LOW, "node1", **SMALL),
            _pod("p1.3", MID, "node1", **MEDIUM),
            _pod("p1.4", HIGH, "node1", **SMALL),
            _pod("p2", HIGH, "node2", **LARGE),
        ],
        _pod("p", HIGH, **LARGE),
        (FIT,),
        [],
        [("node1", ["p1.2", "p1.3"], 0)],
        4,
        id="mixed priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2"],
        [
            make_pod("p1.1").node("node1").priority(LOW).req(**SMALL).start_time(EPOCH[5]).obj(),
            make_pod("p1.2").node("node1").priority(LOW).req(**SMALL).start_time(EPOCH[4]).obj(),
            make_pod("p1.3").node("node1").priority(MID).req(**MEDIUM).start_time(EPOCH[3]).obj(),
            make_pod("p1.4").node("node1").priority(HIGH).req(**SMALL).start_time(EPOCH[2]).obj(),
            make_pod("p2").node("node2").priority(HIGH).req(**LARGE).start_time(EPOCH[1]).obj(),
        ],
        _pod("p", HIGH, **LARGE),
        (FIT,),
        [],
        [("node1", ["p1.1", "p1.3"], 0)],
        4,
        id="mixed priority pods are preempted, pick later StartTime one when priorities are equal",
    ),
    pytest.param(
        ["node1", "node2"],
        [
            make_pod("p1.1")
            .node("node1")
            .label("foo")
            .priority(LOW)
            .req(**SMALL)
            .spec_field(
                "affinity",
                {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {"labelSelector": exists("foo"), "topologyKey": "hostname"}
                        ]
                    }
                },
            )
            .obj(),
            _pod("p1.2", MID, "node1", **SMALL),
            _pod("p1.3", HIGH, "node1", **SMALL),
            _pod("p2", HIGH, "node2", **SMALL),
        ],
        make_pod("p").label("foo").priority(HIGH).req(**SMALL).obj(),
        (FIT, "InterPodAffinity"),
        [],
        [("node1", ["p1.1"], 0)],
        3,
        id="pod with anti-affinity is preempted",
    ),
    pytest.param(
        ["node-a/zone1", "node-b/zone1", "node-x/zone2"],
        [
            make_pod("pod-a1").node("node-a").label("foo").priority(MID).obj(),
            make_pod("pod-a2").node("node-a").label("foo").priority(LOW).obj(),
            make_pod("pod-b1").node("node-b").label("foo").priority(LOW).obj(),
            make_pod("pod-x1").node("node-x").label("foo").priority(HIGH).obj(),
            make_pod("pod-x2").node("node-x").label("foo").priority(HIGH).obj(),
        ],
        make_pod("p")
        .label("foo")
        .priority(HIGH)
        .spread_constraint(1, "zone", selector=exists("foo"))
        .spread_constraint(1, "hostname", selector=exists("foo"))
        .obj(),
        ("PodTopologySpread",),
        [],
        [("node-a", ["pod-a2"], 0), ("node-b", ["pod-b1"], 0)],
        5,
        id="preemption to resolve pod topology spread filter failure",
    ),
    pytest.param(
        ["node1"],
        [
            make_pod("p1.1").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj(),
            make_pod("p1.2").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj(),
        ],
        _pod("p", HIGH, **VERY_LARGE),
        (FIT,),
        [_pdb(match_labels(app="foo"), 1)],
        [("node1", ["p1.1", "p1.2"], 1)],
        3,
        id="preemption with violation of same pdb",
    ),
    pytest.param(
        ["node1"],
        [
            make_pod("p1.1").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj(),
            make_pod("p1.2").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj(),
        ],
        _pod("p", HIGH, **VERY_LARGE),
        (FIT,),
        [_pdb(match_labels(app="foo"), 1, disrupted=["p2"])],
        [("node1", ["p1.1", "p1.2"], 1)],
        3,
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim doesn't belong to DisruptedPods",
    ),
    pytest.param(
        ["node1"],
        [
            make_pod("p1.1").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj(),
            make_pod("p1.2").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj(),
        ],
        _pod("p", HIGH, **VERY_LARGE),
        (FIT,),
        [_pdb(match_labels(app="foo"), 1, disrupted=["p1.2"])],
        [("node1", ["p1.1", "p1.2"], 0)],
        3,
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim belongs to DisruptedPods",
    ),
    pytest.param(
        ["node1"],
        [
            make_pod(f"p1.{i}").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj()
            for i in (1, 2, 3)
        ],
        _pod("p", HIGH, **VERY_LARGE),
        (FIT,),
        [_pdb(match_labels(app="foo"), 1, disrupted=["p1.3"])],
        [("node1", ["p1.1", "p1.2", "p1.3"], 1)],
        4,
        id="preemption with violation of the pdb with pod whose eviction was processed, the "
        "victim which belongs to DisruptedPods is treated as 'nonViolating'",
    ),
]


@pytest.mark.parametrize(
    ("nodes", "init_pods", "pod", "plugins", "pdbs", "want", "filter_calls"), DRY_RUN_CASES
)
def test_dry_run_preemption(
    nodes: Sequence[str],
    init_pods: Sequence[Pod],
    pod: Pod,
    plugins: Sequence[str],
    pdbs: Sequence[PodDisruptionBudget],
    want: list[tuple[str, list[str], int]],
    filter_calls: int,
) -> None:
    _CountingFilter.calls = 0
    candidates, _ = _dry_run(nodes, init_pods, pod, *plugins, pdbs=pdbs)
    assert _sorted(candidates) == want
    assert _CountingFilter.calls == filter_calls


def test_victims_are_listed_most_important_first_across_pdb_groups() -> None:
    # "preemption with violation of same pdb": p1.2 is reprieved first (it violates the PDB)
    # and stays a victim; the victims are then re-sorted by importance, p1.1 (bound first,
    # so started first) before p1.2.
    pods = [
        make_pod(f"p1.{i}").node("node1").label("app", "foo").priority(MID).req(**MEDIUM).obj()
        for i in (1, 2)
    ]
    candidates, _ = _dry_run(
        ["node1"], pods, _pod("p", HIGH, **VERY_LARGE), FIT, pdbs=[_pdb(exists("app"), 1)]
    )
    assert [_names(c.victims.pods) for c in candidates] == [["p1.1", "p1.2"]]


FIVE_NODES = ["node1", "node2", "node3", "node4", "node5"]
FORTY_PERCENT = {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 1}


@pytest.mark.parametrize(
    ("priorities", "labelled", "args", "offset", "want", "filter_calls"),
    [
        pytest.param(
            [MID] * 5,
            (),
            FORTY_PERCENT,
            4,
            [("node1", ["p1"], 0), ("node5", ["p5"], 0)],
            4,
            # offset 4: node5 (yes), node1 (yes)
            id="all nodes are possible candidates, but DefaultPreemptionArgs limits to 2",
        ),
        pytest.param(
            [MID, VERY_HIGH, MID, MID, VERY_HIGH],
            (),
            FORTY_PERCENT,
            4,
            [("node1", ["p1"], 0), ("node3", ["p3"], 0)],
            4,
            # offset 4: node5 (no), node1 (yes), node2 (no), node3 (yes)
            id="some nodes are not possible candidates, DefaultPreemptionArgs limits to 2",
        ),
        pytest.param(
            [MID] * 5,
            ("p1", "p2", "p5"),
            {"minCandidateNodesPercentage": 40, "minCandidateNodesAbsolute": 2},
            4,
            [("node1", ["p1"], 1), ("node3", ["p3"], 0), ("node5", ["p5"], 1)],
            8,
            # offset 4: node5 (yes, pdb), node1 (yes, pdb), node2 (dropped: two PDB-violating
            # candidates are kept already), node3 (yes): one respects every PDB, stop.
            id="preemption looks past numCandidates until a non-PDB violating node is found",
        ),
    ],
)
def test_dry_run_preemption_stops_after_enough_candidates(
    priorities: Sequence[int],
    labelled: Sequence[str],
    args: Mapping[str, Any],
    offset: int,
    want: list[tuple[str, list[str], int]],
    filter_calls: int,
) -> None:
    pods = []
    for i, priority in enumerate(priorities, start=1):
        b = make_pod(f"p{i}").node(f"node{i}").priority(priority).req(**LARGE)
        if f"p{i}" in labelled:
            b = b.label("app", "foo")
        pods.append(b.obj())
    _CountingFilter.calls = 0
    candidates, _ = _dry_run(
        FIVE_NODES,
        pods,
        _pod("p", HIGH, **LARGE),
        FIT,
        pdbs=[_pdb(match_labels(app="foo"), 0)],
        args=args,
        offset=offset,
    )
    assert _sorted(candidates) == want
    assert _CountingFilter.calls == filter_calls


def test_preemption_offset_across_scheduling_cycles_wraps_around() -> None:
    # "preemption offset across multiple scheduling cycles and wrap around": upstream's seeded
    # source draws offsets 4, 1 and 3 for the three cycles.
    pods = [_pod(f"p{i}", MID, f"node{i}", **LARGE) for i in range(1, 6)]
    want = [
        [("node1", ["p1"], 0), ("node5", ["p5"], 0)],
        [("node2", ["p2"], 0), ("node3", ["p3"], 0)],
        [("node4", ["p4"], 0), ("node5", ["p5"], 0)],
    ]
    for cycle, offset in enumerate((4, 1, 3)):
        candidates, _ = _dry_run(
            FIVE_NODES,
            pods,
            _pod(f"tp{cycle + 1}", HIGH, **LARGE),
            FIT,
            args=FORTY_PERCENT,
            offset=offset,
        )
        assert _sorted(candidates) == want[cycle]


# ---------------------------------------------------------------------------------------------
# SelectCandidate / pickOneNodeForPreemption (TestSelectBestCandidate)


def _timed(name: str, priority: int, node: str, res: Mapping[str, str], start: str) -> Pod:
    return make_pod(name).node(node).priority(priority).req(**res).start_time(start).obj()


SELECT_CASES = [
    pytest.param(
        ["node1", "node2"],
        _pod("p", HIGH, **LARGE),
        [
            _timed("p1", MID, "node1", LARGE, EPOCH[0]),
            _timed("p2", MID, "node2", LARGE, EPOCH[0]),
        ],
        {"node1", "node2"},
        id="a pod that fits on both nodes when lower priority pods are preempted",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", MEDIUM, EPOCH[0]),
            _timed("p1.2", MID, "node1", LARGE, EPOCH[0]),
            _timed("p2.1", MID, "node2", MEDIUM, EPOCH[0]),
            _timed("p2.2", LOW, "node2", MEDIUM, EPOCH[0]),
            _timed("p3.1", LOW, "node3", MEDIUM, EPOCH[0]),
            _timed("p3.2", LOW, "node3", MEDIUM, EPOCH[0]),
        ],
        {"node3"},
        id="node with min highest priority pod is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", MEDIUM, EPOCH[0]),
            _timed("p1.2", MID, "node1", LARGE, EPOCH[0]),
            _timed("p2.1", MID, "node2", LARGE, EPOCH[0]),
            _timed("p2.2", LOW, "node2", MEDIUM, EPOCH[0]),
            _timed("p3.1", MID, "node3", MEDIUM, EPOCH[0]),
            _timed("p3.2", MID, "node3", MEDIUM, EPOCH[0]),
        ],
        {"node2"},
        id="when highest priorities are the same, minimum sum of priorities is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", SMALL, EPOCH[0]),
            _timed("p1.2", NEG, "node1", SMALL, EPOCH[0]),
            _timed("p1.3", MID, "node1", SMALL, EPOCH[0]),
            _timed("p1.4", NEG, "node1", SMALL, EPOCH[0]),
            _timed("p2.1", MID, "node2", LARGE, EPOCH[0]),
            _timed("p2.2", NEG, "node2", MEDIUM, EPOCH[0]),
            _timed("p3.1", MID, "node3", MEDIUM, EPOCH[0]),
            _timed("p3.2", NEG, "node3", SMALL, EPOCH[0]),
            _timed("p3.3", LOW, "node3", SMALL, EPOCH[0]),
        ],
        {"node2"},
        id="when highest priority and sum are the same, minimum number of pods is picked",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", SMALL, EPOCH[0]),
            _timed("p1.2", NEG, "node1", SMALL, EPOCH[0]),
            _timed("p1.3", NEG, "node1", SMALL, EPOCH[0]),
            _timed("p2.1", MID, "node2", LARGE, EPOCH[0]),
            _timed("p2.2", NEG, "node2", MEDIUM, EPOCH[0]),
            _timed("p3.1", MID, "node3", MEDIUM, EPOCH[0]),
            _timed("p3.2", NEG, "node3", SMALL, EPOCH[0]),
            _timed("p3.3", LOW, "node3", SMALL, EPOCH[0]),
        ],
        {"node2"},
        id="sum of adjusted priorities is considered",
    ),
    pytest.param(
        ["node1", "node2", "node3", "node4"],
        _pod("p", VERY_HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", SMALL, EPOCH[0]),
            _timed("p1.2", LOW, "node1", SMALL, EPOCH[0]),
            _timed("p1.3", LOW, "node1", SMALL, EPOCH[0]),
            _timed("p2.1", HIGH, "node2", LARGE, EPOCH[0]),
            _timed("p3.1", MID, "node3", MEDIUM, EPOCH[0]),
            _timed("p3.2", LOW, "node3", SMALL, EPOCH[0]),
            _timed("p3.3", LOW, "node3", SMALL, EPOCH[0]),
            _timed("p3.4", LOW, "node3", MEDIUM, EPOCH[0]),
            _timed("p4.1", MID, "node4", MEDIUM, EPOCH[0]),
            _timed("p4.2", MID, "node4", SMALL, EPOCH[0]),
            _timed("p4.3", MID, "node4", SMALL, EPOCH[0]),
            _timed("p4.4", NEG, "node4", SMALL, EPOCH[0]),
        ],
        {"node1"},
        id="non-overlapping lowest high priority, sum priorities, and number of pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", MEDIUM, EPOCH[2]),
            _timed("p1.2", MID, "node1", MEDIUM, EPOCH[2]),
            _timed("p2.1", MID, "node2", MEDIUM, EPOCH[3]),
            _timed("p2.2", MID, "node2", MEDIUM, EPOCH[3]),
            _timed("p3.1", MID, "node3", MEDIUM, EPOCH[1]),
            _timed("p3.2", MID, "node3", MEDIUM, EPOCH[1]),
        ],
        {"node2"},
        id="same priority, same number of victims, different start time for each node's pod",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", MID, "node1", MEDIUM, EPOCH[4]),
            _timed("p1.2", MID, "node1", MEDIUM, EPOCH[2]),
            _timed("p2.1", MID, "node2", MEDIUM, EPOCH[5]),
            _timed("p2.2", MID, "node2", MEDIUM, EPOCH[1]),
            _timed("p3.1", MID, "node3", MEDIUM, EPOCH[3]),
            _timed("p3.2", MID, "node3", MEDIUM, EPOCH[6]),
        ],
        {"node3"},
        id="same priority, same number of victims, different start time for all pods",
    ),
    pytest.param(
        ["node1", "node2", "node3"],
        _pod("p", HIGH, **VERY_LARGE),
        [
            _timed("p1.1", LOW, "node1", MEDIUM, EPOCH[4]),
            _timed("p1.2", MID, "node1", MEDIUM, EPOCH[2]),
            _timed("p2.1", MID, "node2", MEDIUM, EPOCH[6]),
            _timed("p2.2", LOW, "node2", MEDIUM, EPOCH[1]),
            _timed("p3.1", LOW, "node3", MEDIUM, EPOCH[3]),
            _timed("p3.2", MID, "node3", MEDIUM, EPOCH[5]),
        ],
        {"node2"},
        id="different priority, same number of victims, different start time for all pods",
    ),
]


@pytest.mark.parametrize(("nodes", "pod", "pods", "expected"), SELECT_CASES)
@pytest.mark.parametrize("offset", [0, 1, 2])
def test_select_best_candidate(
    nodes: Sequence[str], pod: Pod, pods: Sequence[Pod], expected: set[str], offset: int
) -> None:
    cluster, fwk, plugin = _framework([_node(n) for n in nodes], pods, FIT)
    state = _pre_filter(fwk, pod, cluster)
    evaluator = Evaluator("DefaultPreemption", fwk.handle, plugin)
    infos = list(cluster.list())
    candidates, _, _ = evaluator.dry_run_preemption(
        state, pod, infos, (), offset % len(infos), len(infos)
    )
    best = evaluator.select_candidate(candidates)
    assert best is not None and best.name in expected


def _victims(*priorities: int, pdb: int = 0, starts: Sequence[str] = ()) -> Victims:
    pods = []
    for i, priority in enumerate(priorities):
        b = make_pod(f"v{i}").priority(priority)
        if i < len(starts):
            b = b.start_time(starts[i])
        pods.append(b.obj())
    return Victims(tuple(pods), pdb)


@pytest.mark.parametrize(
    ("nodes_to_victims", "want"),
    [
        pytest.param(
            {"a": _victims(LOW, pdb=1), "b": _victims(HIGH, MID, pdb=0)},
            "b",
            id="fewest PDB violations first",
        ),
        pytest.param(
            {"a": _victims(MID), "b": _victims(LOW, LOW, LOW)},
            "b",
            id="then the lowest highest-priority victim",
        ),
        pytest.param(
            {"a": _victims(MID, NEG, NEG), "b": _victims(MID, NEG)},
            "b",
            id="then the smallest sum of priorities shifted to be non-negative",
        ),
        pytest.param(
            {"a": _victims(MID, LOW), "b": _victims(MID, LOW)},
            "a",
            id="then, with no start times, the first candidate",
        ),
        pytest.param(
            {
                "a": _victims(MID, LOW, starts=[EPOCH[1], EPOCH[3]]),
                "b": _victims(MID, LOW, starts=[EPOCH[2], EPOCH[0]]),
            },
            "b",
            id="then the latest start among the highest-priority victims",
        ),
        pytest.param(
            {"a": _victims(MID, starts=[EPOCH[5]]), "b": _victims(MID)},
            "b",
            id="a victim without a start time started now, after any recorded start",
        ),
    ],
)
def test_pick_one_node_for_preemption(nodes_to_victims: Mapping[str, Victims], want: str) -> None:
    assert pick_one_node_for_preemption(nodes_to_victims) == want


def test_more_important_pod_orders_by_priority_then_start_time() -> None:
    early = make_pod("early").priority(MID).start_time(EPOCH[1]).obj()
    late = make_pod("late").priority(MID).start_time(EPOCH[2]).obj()
    unstarted = make_pod("unstarted").priority(MID).obj()
    high = make_pod("high").priority(HIGH).start_time(EPOCH[6]).obj()
    assert more_important_pod(high, early) and not more_important_pod(early, high)
    assert more_important_pod(early, late) and not more_important_pod(late, early)
    assert more_important_pod(late, unstarted)
    assert not more_important_pod(unstarted, unstarted)


def test_aggregate_message_deduplicates() -> None:
    assert aggregate_message(["a"]) == "a"
    assert aggregate_message(["a", "a"]) == "a"
    assert aggregate_message(["a", "b", "a"]) == "[a, b]"


# ---------------------------------------------------------------------------------------------
# PodEligibleToPreemptOthers (TestPodEligibleToPreemptOthers)


@pytest.mark.parametrize(
    ("pod", "pods", "nominated_status", "want", "message"),
    [
        pytest.param(
            make_pod("p_with_nominated_node").priority(HIGH).nominated_node("node1").obj(),
            [make_pod("p1").priority(LOW).node("node1").terminating().obj()],
            new_status(Code.UnschedulableAndUnresolvable, UNTOLERATED),
            True,
            "",
            id="Pod with nominated node",
        ),
        pytest.param(
            make_pod("p_without_nominated_node").priority(HIGH).obj(),
            [],
            UNRESOLVABLE,
            True,
            "",
            id="Pod without nominated node",
        ),
        pytest.param(
            make_pod("p_with_preempt_never_policy").priority(HIGH).preemption_policy("Never").obj(),
            [],
            UNRESOLVABLE,
            False,
            ERR_PREEMPTION_POLICY_NEVER,
            id="Pod with 'PreemptNever' preemption policy",
        ),
        pytest.param(
            make_pod("p_with_nominated_node").priority(HIGH).nominated_node("node1").obj(),
            [
                make_pod("p1")
                .priority(LOW)
                .node("node1")
                .terminating()
                .condition("DisruptionTarget", "True", "PreemptionByScheduler")
                .obj()
            ],
            UNSCHEDULABLE,
            False,
            ERR_TERMINATING_ON_NOMINATED_NODE,
            id="preemption victim pod terminating, as indicated by the dedicated "
            "DisruptionTarget condition",
        ),
        pytest.param(
            make_pod("p_with_nominated_node").priority(HIGH).nominated_node("node1").obj(),
            [make_pod("p1").priority(LOW).node("node1").terminating().obj()],
            UNSCHEDULABLE,
            True,
            "",
            id="non-victim Pods terminating",
        ),
    ],
)
def test_pod_eligible_to_preempt_others(
    pod: Pod, pods: list[Pod], nominated_status: Status, want: bool, message: str
) -> None:
    _, _, plugin = _framework([make_node("node1").obj()], pods)
    assert plugin.pod_eligible_to_preempt_others(pod, nominated_status) == (want, message)
    assert ERR_PREEMPTION_POLICY_NEVER == "not eligible due to preemptionPolicy=Never."
    assert ERR_TERMINATING_ON_NOMINATED_NODE == (
        "not eligible due to a terminating pod on the nominated node."
    )


# ---------------------------------------------------------------------------------------------
# Preempt through the Scheduler (TestPreempt)


def _scheduler(
    nodes: Iterable[Node],
    pods: Iterable[Pod],
    *plugins: str,
    pdbs: Iterable[PodDisruptionBudget] = (),
) -> Scheduler:
    """A Scheduler with the default profile, or with only ``plugins`` (plus queue sort,
    binder and DefaultPreemption) when some are named."""
    config = default_config()
    if plugins:
        config = type(config)(profiles=[_profile(*plugins)])
    return Scheduler(
        ClusterState(nodes, pods),
        config,
        _registry(),
        DEFAULT_FEATURES,
        tie_break="name",
        pod_disruption_budgets=pdbs,
    )


def _bound(scheduler: Scheduler) -> dict[str, str]:
    return {p.metadata.name: p.spec.node_name for p in scheduler.cluster.pods()}


@pytest.mark.parametrize(
    ("nodes", "pods", "pod", "plugins", "want_node", "want_victims"),
    [
        pytest.param(
            [_node(n) for n in ("node1", "node2", "node3")],
            [
                _pod("p1.1", LOW, "node1", **SMALL),
                _pod("p1.2", LOW, "node1", **SMALL),
                _pod("p2.1", HIGH, "node2", **LARGE),
                _pod("p3.1", MID, "node3", **MEDIUM),
            ],
            make_pod("p")
            .priority(HIGH)
            .req(**VERY_LARGE)
            .preemption_policy("PreemptLowerPriority")
            .obj(),
            (FIT,),
            "node1",
            ["default/p1.1", "default/p1.2"],
            id="basic preemption logic",
        ),
        pytest.param(
            [_node(n) for n in ("node-a/zone1", "node-b/zone1", "node-x/zone2")],
            [
                make_pod("p-a1").node("node-a").label("foo").priority(HIGH).obj(),
                make_pod("p-a2").node("node-a").label("foo").priority(HIGH).obj(),
                make_pod("p-b1").node("node-b").label("foo").priority(LOW).obj(),
                make_pod("p-x1").node("node-x").label("foo").priority(HIGH).obj(),
                make_pod("p-x2").node("node-x").label("foo").priority(HIGH).obj(),
            ],
            make_pod("p")
            .label("foo")
            .priority(HIGH)
            .spread_constraint(1, "zone", selector=exists("foo"))
            .spread_constraint(1, "hostname", selector=exists("foo"))
            .obj(),
            ("PodTopologySpread",),
            "node-b",
            ["default/p-b1"],
            id="preemption for topology spread constraints",
        ),
    ],
)
def test_preempt_evicts_the_victims_and_the_pod_lands_on_the_nominated_node(
    nodes: list[Node],
    pods: list[Pod],
    pod: Pod,
    plugins: Sequence[str],
    want_node: str,
    want_victims: list[str],
) -> None:
    scheduler = _scheduler(nodes, pods, *plugins)
    scheduler.add(pod)
    first, second = scheduler.run()
    assert first.node is None
    assert first.preempted == want_victims
    assert first.to_json()["preempted"] == want_victims
    assert first.pod.status.nominated_node_name == want_node
    assert second.node == want_node
    bound = _bound(scheduler)
    for key in want_victims:
        assert key.split("/")[1] not in bound
        assert scheduler.preempted[key][1] == "default/p"
    assert bound["p"] == want_node
    assert scheduler.nominator.nominated_node(pod) is None


def test_preempt_never_keeps_the_victims() -> None:
    # TestPreempt "no preempting in pod"
    nodes = [_node(n) for n in ("node1", "node2")]
    pods = [_pod("p1.1", LOW, "node1", **SMALL), _pod("p2.1", HIGH, "node2", **LARGE)]
    scheduler = _scheduler(nodes, pods)
    scheduler.add(make_pod("p").priority(HIGH).req(**VERY_LARGE).preemption_policy("Never").obj())
    (decision,) = scheduler.run()
    assert decision.message == (
        "0/2 nodes are available: 2 Insufficient cpu, 2 Insufficient memory. "
        "no new claims to deallocate, preemption: not eligible due to preemptionPolicy=Never."
    )
    assert decision.preempted == []
    assert set(_bound(scheduler)) == {"p1.1", "p2.1"}


# ---------------------------------------------------------------------------------------------
# FailedScheduling messages with the default profile


def _zone_node(name: str, zone: str) -> Node:
    return (
        make_node(name)
        .label("kubernetes.io/hostname", name)
        .label("topology.kubernetes.io/zone", zone)
        .capacity(cpu="1", memory="1Gi")
        .obj()
    )


def test_message_when_no_pod_has_a_lower_priority_to_evict() -> None:
    # Three nodes in two zones where a spread constraint asking for three zones fails on every
    # node (Unschedulable), and the pods already there are as important as the new one.
    nodes = [_zone_node("n1", "a"), _zone_node("n2", "a"), _zone_node("n3", "b")]
    pods = [
        make_pod("a1").label("app", "web").node("n1").obj(),
        make_pod("b1").label("app", "web").node("n3").obj(),
    ]
    scheduler = _scheduler(nodes, pods)
    scheduler.add(
        make_pod("web")
        .label("app", "web")
        .spread_constraint(
            1, "topology.kubernetes.io/zone", selector=match_labels(app="web"), min_domains=3
        )
        .obj()
    )
    (decision,) = scheduler.run()
    assert decision.node is None
    assert decision.message == (
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints. "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    assert ERR_NO_VICTIMS == "No preemption victims found for incoming pod"


def test_message_mixing_nodes_without_victims_and_nodes_preemption_cannot_help() -> None:
    # Two nodes are full of pods as important as the new one (Unschedulable: no victims); four
    # carry a taint it does not tolerate (UnschedulableAndUnresolvable: not worth a dry run).
    nodes = [make_node(f"n{i}").capacity(cpu="1", memory="1Gi").obj() for i in (1, 2)]
    nodes += [
        make_node(f"t{i}").capacity(cpu="1", memory="1Gi").taint("dedicated", "x").obj()
        for i in (1, 2, 3, 4)
    ]
    pods = [_pod(f"big{i}", 50, f"n{i}", cpu="800m") for i in (1, 2)]
    scheduler = _scheduler(nodes, pods)
    scheduler.add(_pod("web", 50, cpu="500m"))
    (decision,) = scheduler.run()
    assert decision.message == (
        "0/6 nodes are available: 2 Insufficient cpu, 4 node(s) had untolerated taint(s). "
        "no new claims to deallocate, "
        "preemption: 0/6 nodes are available: 2 No preemption victims found for incoming pod, "
        "4 Preemption is not helpful for scheduling."
    )
    assert decision.reasons["t1"] == [f"TaintToleration: {UNTOLERATED}"]


def test_message_when_preemption_succeeds_carries_no_post_filter_text() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="1", memory="1Gi").obj() for i in (1, 2)]
    pods = [_pod("v1", 10, "n1", cpu="600m"), _pod("v2", 5, "n2", cpu="600m")]
    scheduler = _scheduler(nodes, pods)
    scheduler.add(_pod("web", 100, cpu="600m"))
    first, second = scheduler.run()
    assert first.message == "0/2 nodes are available: 2 Insufficient cpu."
    # n2's victim has the lower priority (minHighestPriority).
    assert first.preempted == ["default/v2"]
    assert first.pod.status.nominated_node_name == "n2"
    assert (second.node, second.message) == ("n2", None)
    assert _bound(scheduler) == {"v1": "n1", "web": "n2"}


def test_decision_json_lists_preempted_pods() -> None:
    decision = Decision(pod=_pod("p"), node=None, attempt=1, preempted=["default/v"])
    assert decision.to_json()["preempted"] == ["default/v"]
    assert Decision(pod=_pod("p"), node="n", attempt=1).to_json()["preempted"] == []


# ---------------------------------------------------------------------------------------------
# Nominated pods


def test_equal_priority_pod_does_not_take_the_room_made_for_a_nominated_pod() -> None:
    # h preempts v on n1 and is nominated there; e (same priority, queued before h's retry)
    # must not take n1 while h, nominated, counts as running there.
    nodes = [make_node(f"n{i}").capacity(cpu="1", memory="1Gi").obj() for i in (1, 2)]
    pods = [_pod("v", 0, "n1", cpu="800m"), _pod("full", 100, "n2", cpu="1")]
    scheduler = _scheduler(nodes, pods)
    scheduler.add(_pod("h", 100, cpu="800m"))
    scheduler.add(_pod("e", 100, cpu="500m"))
    h1, e1, h2 = scheduler.run()
    assert (h1.key, h1.preempted, h1.pod.status.nominated_node_name) == (
        "default/h",
        ["default/v"],
        "n1",
    )
    assert e1.key == "default/e" and e1.node is None
    assert e1.reasons["n1"] == [f"NodeResourcesFit: {INSUFFICIENT_CPU}"]
    assert e1.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert (h2.key, h2.node) == ("default/h", "n1")


def test_lower_priority_pods_honour_a_nomination_from_the_cluster() -> None:
    # h arrives nominated to n1, where the victim of its preemption is still terminating: it
    # may not preempt again and keeps its nomination. l, of lower priority, would fit on n1
    # but for h, so it goes to n2; k, of higher priority than h, ignores the nomination.
    nodes = [
        make_node("n1").capacity(cpu="2", memory="1Gi").obj(),
        make_node("n2").capacity(cpu="1", memory="1Gi").obj(),
    ]
    victim = (
        make_pod("v")
        .priority(0)
        .node("n1")
        .req(cpu="800m")
        .terminating()
        .condition("DisruptionTarget", "True", "PreemptionByScheduler")
        .obj()
    )
    scheduler = _scheduler(nodes, [victim])
    scheduler.add(make_pod("h").priority(100).req(cpu="1500m").nominated_node("n1").obj())
    scheduler.add(_pod("l", 10, cpu="500m"))
    h, low = scheduler.run()
    assert h.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    assert h.pod.status.nominated_node_name == "n1"
    assert scheduler.nominator.nominated_node(h.pod) == "n1"
    assert low.node == "n2"
    assert low.reasons == {"n1": [f"NodeResourcesFit: {INSUFFICIENT_CPU}"]}

    # k, more important than h, may take the room h waits for (n2 is too full for it).
    scheduler.add(_pod("k", 200, cpu="600m"))
    (k,) = scheduler.run()
    assert (k.node, k.feasible) == ("n1", ["n1"])


def test_filter_with_nominated_pods_requires_both_passes() -> None:
    # Upstream: TestFilterPluginsWithNominatedPods. The pod's required affinity is met only
    # by the nominated pod: the first pass (with it) succeeds, the second (without) fails.
    node = make_node("n1").label("kubernetes.io/hostname", "n1").obj()
    cluster, fwk, _ = _framework([node], [], "InterPodAffinity")
    pod = (
        make_pod("p")
        .priority(10)
        .spec_field(
            "affinity",
            {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": match_labels(app="db"),
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            },
        )
        .obj()
    )
    state = CycleState()
    fwk.run_pre_filter_plugins(state, pod, cluster.list())
    info = cluster.list()[0]
    assert not fwk.run_filter_plugins(state, pod, info).is_success

    fwk.handle.nominator.add(make_pod("db").label("app", "db").priority(5).obj(), "n1")
    low = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
    assert low.reasons == ("node(s) didn't match pod affinity rules",)

    fwk.handle.nominator.add(make_pod("db").label("app", "db").priority(10).obj(), "n1")
    added, state_with, info_with, _ = fwk._add_ge_nominated_pods(state, pod, info)
    assert added and fwk.run_filter_plugins(state_with, pod, info_with).is_success
    both = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
    assert both.reasons == ("node(s) didn't match pod affinity rules",)
    assert info.pods == []  # the nominated pod was added to a copy only


def test_a_nominated_pod_is_tried_on_its_node_first() -> None:
    nodes = [make_node(f"n{i}").capacity(cpu="1", memory="1Gi").obj() for i in (1, 2, 3)]
    cluster, fwk, _ = _framework(nodes, [], FIT)
    pod = make_pod("p").req(cpu="100m").nominated_node("n3").obj()
    algorithm = SchedulingAlgorithm(tie_break="name")
    result = algorithm.schedule_pod(fwk, CycleState(), pod, cluster.list())
    assert (result.suggested_host, result.evaluated_nodes, result.feasible) == ("n3", 1, ["n3"])

    unknown = make_pod("q").req(cpu="100m").nominated_node("gone").obj()
    result = algorithm.schedule_pod(fwk, CycleState(), unknown, cluster.list())
    assert result.feasible_nodes == 3


def test_preemption_clears_lower_priority_nominations_on_the_chosen_node() -> None:
    nodes = [make_node("n1").capacity(cpu="1", memory="1Gi").obj()]
    scheduler = _scheduler(nodes, [_pod("v", 0, "n1", cpu="800m")])
    waiting = make_pod("w").priority(5).req(cpu="900m").nominated_node("n1").obj()
    scheduler.add(waiting)
    scheduler.add(_pod("h", 100, cpu="800m"))
    decisions = scheduler.run()
    h = next(d for d in decisions if d.key == "default/h" and d.preempted)
    assert h.preempted == ["default/v"]
    assert scheduler.nominator.nominated_node(waiting) is None
    assert _bound(scheduler)["h"] == "n1"
