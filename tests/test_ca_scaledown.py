"""Scale-down: eligibility from upstream's TestFilterOutUnremovable
(core/scaledown/eligibility/eligibility_test.go), the removal simulation in the spirit of
TestFindNodesToRemove (simulator/cluster_test.go), and the unneeded clock of the planner."""

from __future__ import annotations

from dataclasses import dataclass, replace

import msgspec
import pytest

from builders import make_pod
from ca_helpers import build_test_node, build_test_pod, checker_for, with_labels, with_meta
from topospread.api.types import Node, NodeCondition, NodeStatus, Pod, Taint
from topospread.autoscaler.clusterautoscaler.autoscaler import CLOCK_ORIGIN
from topospread.autoscaler.clusterautoscaler.drainability import (
    DeleteOptions,
    DrainContext,
    RemainingPdbTracker,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import NODE_GROUP_LABEL, NodeGroup
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions
from topospread.autoscaler.clusterautoscaler.scaledown import (
    SCALE_DOWN_DISABLED_KEY,
    TO_BE_DELETED_TAINT,
    UnremovableReason,
    filter_out_unremovable,
    simulate_node_removal,
)
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.state import ClusterState
from topospread.framework.types import NodeInfo

NOW = 1_000_000.0
GROUPS = {"ng1": NodeGroup("ng1", 1, 10, 2)}


def in_group(node: Node) -> Node:
    return with_labels(node, **{NODE_GROUP_LABEL: "ng1"})


def ready(node: Node, is_ready: bool) -> Node:
    cond = NodeCondition(type="Ready", status="True" if is_ready else "False")
    status = msgspec.structs.replace(node.status, conditions=[cond])
    return msgspec.structs.replace(node, status=status)


REGULAR = ready(in_group(build_test_node("regular", 1000, 10)), True)
JUST_DELETED = msgspec.structs.replace(
    ready(in_group(build_test_node("justDeleted", 1000, 10)), True),
    spec=msgspec.structs.replace(
        REGULAR.spec, taints=[Taint(key=TO_BE_DELETED_TAINT, value=str(int(NOW) - 30))]
    ),
)
NO_SCALE_DOWN = with_meta(
    ready(in_group(build_test_node("noScaleDown", 1000, 10)), True),
    annotations={SCALE_DOWN_DISABLED_KEY: "true"},
)
UNREADY = ready(in_group(build_test_node("unready", 1000, 10)), False)


def on(pod: Pod, node: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


BIG = on(build_test_pod("bigPod", 600, 0), "regular")
SMALL = on(build_test_pod("smallPod", 100, 0), "regular")
DS = on(make_pod("dsPod").owner("DaemonSet", "ds").req(cpu="500m", memory="0").obj(), "regular")


@dataclass
class Case:
    desc: str
    nodes: list[Node]
    pods: list[Pod]
    want: list[str]
    scale_down_unready: bool = True
    ignore_daemonsets_utilization: bool = False


CASES = [
    Case("regular node stays", [REGULAR], [], ["regular"]),
    Case("recently deleted node is filtered out", [REGULAR, JUST_DELETED], [], ["regular"]),
    Case("marked no scale down is filtered out", [NO_SCALE_DOWN, REGULAR], [], ["regular"]),
    Case("highly utilized node is filtered out", [REGULAR], [BIG], []),
    Case("underutilized node stays", [REGULAR], [SMALL], ["regular"]),
    Case("unready node stays", [UNREADY], [], ["unready"]),
    Case("unready node is filtered oud when scale-down of unready is disabled", [UNREADY], [],
         [], scale_down_unready=False),
]  # fmt: skip
ALL = [
    *CASES,
    *(replace(c, desc=c.desc + " IgnoreDaemonsetUtilization=true",
              ignore_daemonsets_utilization=True) for c in CASES),
    Case("high utilization daemonsets node is filtered out", [REGULAR], [SMALL, DS], []),
    Case("high utilization daemonsets node stays", [REGULAR], [SMALL, DS], ["regular"],
         ignore_daemonsets_utilization=True),
]  # fmt: skip


@pytest.mark.parametrize("case", ALL, ids=[c.desc for c in ALL])
def test_filter_out_unremovable(case: Case) -> None:
    options = AutoscalingOptions(
        scale_down_unready_enabled=case.scale_down_unready,
        ignore_daemonsets_utilization=case.ignore_daemonsets_utilization,
    )
    infos = []
    for node in case.nodes:
        pods = [p for p in case.pods if p.spec.node_name == node.metadata.name]
        infos.append(NodeInfo(node, pods))
    got, _, _ = filter_out_unremovable(infos, GROUPS, options, NOW, CLOCK_ORIGIN)
    assert got == case.want


def test_unremovable_nodes_carry_upstreams_reasons() -> None:
    infos = [NodeInfo(n) for n in (JUST_DELETED, NO_SCALE_DOWN, build_test_node("other", 1, 1))]
    infos.append(NodeInfo(REGULAR, [BIG]))
    _, util, unremovable = filter_out_unremovable(
        infos, GROUPS, AutoscalingOptions(), NOW, CLOCK_ORIGIN
    )
    assert [(u.node, u.reason) for u in unremovable] == [
        ("justDeleted", UnremovableReason.CurrentlyBeingDeleted),
        ("noScaleDown", UnremovableReason.ScaleDownDisabledAnnotation),
        ("other", UnremovableReason.NotAutoscaled),
        ("regular", UnremovableReason.NotUnderutilized),
    ]
    assert util["regular"].utilization == pytest.approx(0.6)
    assert util["regular"].resource_name == "cpu"


def rs_pod(name: str, node: str, cpu: int) -> Pod:
    return on(make_pod(name).owner("ReplicaSet", "rs").req(cpu=f"{cpu}m").obj(), node)


def removal(nodes: list[Node], pods: list[Pod], candidate: str, destinations: list[str]):  # type: ignore[no-untyped-def]
    from topospread.api.types import ObjectMeta, ReplicaSet

    checker = checker_for(nodes, pods)
    objects = ObjectStore(
        replica_sets=[ReplicaSet(metadata=ObjectMeta(name="rs", namespace="default"))]
    )
    ctx = DrainContext(RemainingPdbTracker([]), objects, CLOCK_ORIGIN)
    return checker, simulate_node_removal(
        checker, candidate, set(destinations), ctx, DeleteOptions()
    )


def n(name: str, cpu: int = 1000) -> Node:
    return in_group(build_test_node(name, cpu, 2**30))


def test_an_empty_node_is_removable() -> None:
    _, got = removal([n("n1"), n("n2")], [], "n1", ["n1", "n2"])
    assert got.node == "n1" and got.pods_to_reschedule == []  # type: ignore[union-attr]


def test_a_node_whose_pods_fit_elsewhere_is_removable_and_the_move_persists() -> None:
    pods = [rs_pod("p1", "n1", 300), rs_pod("p2", "n2", 500)]
    checker, got = removal([n("n1"), n("n2")], pods, "n1", ["n1", "n2"])
    assert [p.metadata.name for p in got.pods_to_reschedule] == ["p1"]  # type: ignore[union-attr]
    assert got.destinations == {"default/p1": "n2"}  # type: ignore[union-attr]
    assert [p.metadata.name for p in checker.snapshot.get("n2").pods] == ["p2", "p1"]  # type: ignore[union-attr]


def test_a_node_whose_pods_do_not_fit_is_not_removable_and_nothing_moves() -> None:
    pods = [rs_pod("p1", "n1", 600), rs_pod("p2", "n2", 500)]
    checker, got = removal([n("n1"), n("n2")], pods, "n1", ["n1", "n2"])
    assert got.reason is UnremovableReason.NoPlaceToMovePods  # type: ignore[union-attr]
    assert [p.metadata.name for p in checker.snapshot.get("n1").pods] == ["p1"]  # type: ignore[union-attr]
    assert [p.metadata.name for p in checker.snapshot.get("n2").pods] == ["p2"]  # type: ignore[union-attr]


def test_a_node_with_a_blocking_pod_is_not_removable() -> None:
    pods = [on(build_test_pod("lonely", 100, 0), "n1")]
    _, got = removal([n("n1"), n("n2")], pods, "n1", ["n1", "n2"])
    assert got.reason is UnremovableReason.BlockedByPod  # type: ignore[union-attr]
    assert got.blocking_pod.pod.metadata.name == "lonely"  # type: ignore[union-attr]


def test_moved_pods_keep_their_spread_constraints() -> None:
    # Zone spread with maxSkew 1 over two zones holding one pod each: moving a-1 from zone a
    # to zone b would give a skew of 2, so the node cannot go although b has room.
    zone = "topology.kubernetes.io/zone"
    na = with_labels(n("na"), **{zone: "a"})
    nb = with_labels(n("nb"), **{zone: "b"})

    def spread(name: str, node: str) -> Pod:
        pod = (
            make_pod(name)
            .label("app", "web")
            .owner("ReplicaSet", "rs")
            .req(cpu="100m")
            .spread_constraint(1, zone, selector={"matchLabels": {"app": "web"}})
            .obj()
        )
        return on(pod, node)

    _, got = removal([na, nb], [spread("a-1", "na"), spread("b-1", "nb")], "na", ["na", "nb"])
    assert got.reason is UnremovableReason.NoPlaceToMovePods  # type: ignore[union-attr]


def test_node_status_without_conditions_counts_as_ready() -> None:
    from topospread.autoscaler.clusterautoscaler.scaledown import is_node_ready

    assert is_node_ready(build_test_node("x", 1, 1))
    assert not is_node_ready(UNREADY)
    assert NodeStatus().conditions == []


def test_the_planner_looks_for_no_more_unneeded_nodes_than_it_could_remove() -> None:
    from topospread.autoscaler.clusterautoscaler import ClusterAutoscaler
    from topospread.autoscaler.clusterautoscaler.scaledown import unneeded_nodes_limit

    options = AutoscalingOptions()
    assert unneeded_nodes_limit(options, 0) == 20
    assert unneeded_nodes_limit(options, 600) == 610  # 10 per loop for 60 loops, plus 10
    ca = ClusterAutoscaler([NodeGroup("ng1", 0, 100, 30)], options)
    nodes = [in_group(build_test_node(f"n{i:02d}", 1000, 2**30)) for i in range(30)]
    cluster = ClusterState(nodes)
    first = ca.run_once(0, cluster, [])
    assert first.scale_down is not None and len(first.scale_down.unneeded) == 20
    second = ca.run_once(10, cluster, [])
    assert second.scale_down is not None and len(second.scale_down.unneeded) == 30
    # The nodes found first keep their clock.
    assert second.scale_down.unneeded["n00"] == 0


def test_a_node_exactly_at_the_utilization_threshold_is_underutilized() -> None:
    # Upstream: isNodeAtOrBelowUtilizationThreshold refuses only utilization > threshold.
    half = on(build_test_pod("half", 500, 0), "regular")
    got, util, _ = filter_out_unremovable(
        [NodeInfo(REGULAR, [half])], GROUPS, AutoscalingOptions(), NOW, CLOCK_ORIGIN
    )
    assert got == ["regular"] and util["regular"].utilization == 0.5


def test_ignored_daemonset_pods_come_off_the_allocatable() -> None:
    # Upstream: CalculateUtilizationOfResource subtracts the skipped DaemonSet (and mirror)
    # pods' requests from the allocatable: 300m of the 500m left is 60%, above the threshold.
    pod = on(build_test_pod("pod", 300, 0), "regular")
    options = AutoscalingOptions(ignore_daemonsets_utilization=True)
    got, util, unremovable = filter_out_unremovable(
        [NodeInfo(REGULAR, [pod, DS])], GROUPS, options, NOW, CLOCK_ORIGIN
    )
    assert got == [] and util["regular"].cpu == pytest.approx(0.6)
    assert [(u.node, u.reason) for u in unremovable] == [
        ("regular", UnremovableReason.NotUnderutilized)
    ]


def test_equal_cpu_and_memory_utilization_is_reported_as_memory() -> None:
    # Upstream: utilization.Calculate takes cpu only when it is strictly the larger.
    node = in_group(build_test_node("even", 1000, 1000))
    pod = on(build_test_pod("p", 200, 200), "even")
    _, util, _ = filter_out_unremovable(
        [NodeInfo(node, [pod])], GROUPS, AutoscalingOptions(), NOW, CLOCK_ORIGIN
    )
    assert (util["even"].utilization, util["even"].resource_name) == (0.2, "memory")
