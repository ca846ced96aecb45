"""cluster-autoscaler's readiness bookkeeping (clusterstate.py), from upstream's own tables in
cluster-autoscaler/clusterstate/clusterstate_test.go and utils/kubernetes/ready_test.go: a node
that is not ready and younger than --max-node-startup-time is NotStarted (upcoming, not
unready), the health gates count only Unready nodes, and the loop replaces NotStarted nodes by
template copies until the window closes."""

from __future__ import annotations

import msgspec
import pytest

from ca_helpers import build_test_node, with_labels, with_meta
from test_ca_autoscaler import cluster_of, group, web
from topospread.api.types import Node, NodeCondition, Taint
from topospread.autoscaler.clusterautoscaler import ClusterAutoscaler
from topospread.autoscaler.clusterautoscaler.clusterstate import (
    is_cluster_healthy,
    is_node_ready,
    readiness_of,
    unhealthy_groups,
    upcoming_nodes,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import NODE_GROUP_LABEL
from topospread.autoscaler.clusterautoscaler.options import parse_options
from topospread.autoscaler.clusterautoscaler.scaleup import SCALE_UP_SUCCESSFUL
from topospread.cluster.state import ClusterState

NOW = 10_000.0
MINUTE = 60.0
# Upstream's tests: MaxTotalUnreadyPercentage 10, OkTotalUnreadyCount 1.
STRICT = parse_options({"max-total-unready-percentage": 10, "ok-total-unready-count": 1}, "test")


def node(name: str, ready: bool = True, *conditions: tuple[str, str]) -> Node:
    """``BuildTestNode`` in group ``ng<n>`` (the name's prefix) with ``SetNodeReadyState``."""
    n = with_labels(build_test_node(name, 1000, 1000), **{NODE_GROUP_LABEL: name.split("-")[0]})
    conds = [NodeCondition(type="Ready", status="True" if ready else "False")]
    conds += [NodeCondition(type=t, status=s) for t, s in conditions]
    return msgspec.structs.replace(n, status=msgspec.structs.replace(n.status, conditions=conds))


def tainted(n: Node, key: str = "node.kubernetes.io/not-ready") -> Node:
    """``SetNodeNotReadyTaint``."""
    taints = [*n.spec.taints, Taint(key=key, effect="NoSchedule")]
    return msgspec.structs.replace(n, spec=msgspec.structs.replace(n.spec, taints=taints))


@pytest.mark.parametrize(
    ("n", "ready"),
    [
        pytest.param(node("ng1-1"), True, id="ready"),
        pytest.param(node("ng1-1", False), False, id="ready condition false"),
        pytest.param(node("ng1-1", True, ("DiskPressure", "True")), False, id="disk pressure"),
        pytest.param(
            node("ng1-1", True, ("NetworkUnavailable", "True")), False, id="network unavailable"
        ),
        pytest.param(node("ng1-1", True, ("DiskPressure", "False")), True, id="no disk pressure"),
        pytest.param(tainted(node("ng1-1")), False, id="not-ready taint"),
        pytest.param(
            tainted(node("ng1-1"), "node.kubernetes.io/network-unavailable"),
            False,
            id="network-unavailable taint",
        ),
        pytest.param(
            tainted(node("ng1-1"), "node.kubernetes.io/unreachable"), True, id="unreachable taint"
        ),
        # FilterOutNodesWithStartupTaints: the default TaintConfig's startup taints make the
        # node not ready; a status taint does not.
        pytest.param(
            tainted(node("ng1-1"), "startup-taint.cluster-autoscaler.kubernetes.io/cni"),
            False,
            id="startup taint",
        ),
        pytest.param(
            tainted(node("ng1-1"), "ignore-taint.cluster-autoscaler.kubernetes.io/gpu"),
            False,
            id="ignore taint (a startup taint too)",
        ),
        pytest.param(
            tainted(node("ng1-1"), "status-taint.cluster-autoscaler.kubernetes.io/x"),
            True,
            id="status taint",
        ),
    ],
)
def test_get_node_readiness(n: Node, ready: bool) -> None:
    # Upstream: GetNodeReadiness reads the Ready, DiskPressure and NetworkUnavailable
    # conditions and the not-ready, disk-pressure and network-unavailable taints.
    assert is_node_ready(n) is ready


def test_upcoming_nodes() -> None:
    # Upstream: TestUpcomingNodes. ng1: 6 nodes to come; ng2: one, its unready node (old)
    # makes no difference; ng3: two, one registered a minute ago and not ready yet
    # (NotStarted, a registered upcoming node) and one not there; ng4: none.
    nodes = [node("ng1-1"), node("ng2-1", False), node("ng3-1", False), node("ng4-1", False)]
    created = {"ng3-1": NOW - MINUTE}
    readiness = readiness_of(nodes, NOW, created, STRICT)
    targets = {"ng1": 7, "ng2": 2, "ng3": 2, "ng4": 1}
    assert upcoming_nodes(readiness, targets) == {"ng1": 6, "ng2": 1, "ng3": 2}
    assert readiness.not_started() == ["ng3-1"]
    assert readiness.per_group["ng2"].unready == ["ng2-1"]


def test_unready_long_after_creation() -> None:
    # Upstream: TestUnreadyLongAfterCreation: created 30m ago, not ready: Unready.
    nodes = [node("ng1-1"), node("ng2-1", False)]
    readiness = readiness_of(nodes, NOW, {"ng2-1": NOW - 30 * MINUTE}, STRICT)
    assert readiness.total.unready == ["ng2-1"]
    assert readiness.total.not_started == []
    assert upcoming_nodes(readiness, {"ng1": 1, "ng2": 1}) == {}


def test_unready_after_creation_with_increased_startup_time() -> None:
    # Upstream: TestUnreadyAfterCreationWithIncreasedStartupTime: the same node with a 35m
    # MaxNodeStartupTime is still starting.
    options = parse_options(
        {
            "max-total-unready-percentage": 10,
            "ok-total-unready-count": 1,
            "max-node-startup-time": "35m",
        },
        "test",
    )
    nodes = [node("ng1-1"), node("ng2-1", False)]
    readiness = readiness_of(nodes, NOW, {"ng2-1": NOW - 30 * MINUTE}, options)
    assert readiness.total.unready == []
    assert readiness.total.not_started == ["ng2-1"]
    assert upcoming_nodes(readiness, {"ng1": 1, "ng2": 1}) == {"ng2": 1}


def test_not_started_follows_the_not_ready_taint() -> None:
    # Upstream: TestNotStarted: created 10m ago, Ready False and tainted not-ready:
    # NotStarted; Ready True but still tainted: NotStarted; the taint gone: Ready.
    created = {"ng2-1": NOW - 10 * MINUTE}
    starting = tainted(node("ng2-1", False))
    readiness = readiness_of([node("ng1-1"), starting], NOW, created, STRICT)
    assert (len(readiness.total.not_started), len(readiness.total.ready)) == (1, 1)
    posted_ready = tainted(node("ng2-1"))
    readiness = readiness_of([node("ng1-1"), posted_ready], NOW, created, STRICT)
    assert (len(readiness.total.not_started), len(readiness.total.ready)) == (1, 1)
    readiness = readiness_of([node("ng1-1"), node("ng2-1")], NOW, created, STRICT)
    assert (len(readiness.total.not_started), len(readiness.total.ready)) == (0, 2)


@pytest.mark.parametrize(
    ("created", "healthy"),
    [
        # Upstream: TestTooManyUnready: two old unready nodes of two: the cluster is unhealthy,
        # each group (one node short of nothing) is not.
        pytest.param({}, False, id="old nodes: unready"),
        # The same two nodes registered a minute ago are still starting: healthy.
        pytest.param({"ng1-1": NOW - MINUTE, "ng2-1": NOW - MINUTE}, True, id="young: starting"),
    ],
)
def test_too_many_unready(created: dict[str, float], healthy: bool) -> None:
    nodes = [node("ng1-1", False), node("ng2-1", False)]
    readiness = readiness_of(nodes, NOW, created, STRICT)
    assert is_cluster_healthy(readiness, STRICT) is healthy
    assert "ng1" not in unhealthy_groups(readiness, {"ng1": 1, "ng2": 1}, {}, STRICT)


def test_ok_one_unready_node() -> None:
    # Upstream: TestOKOneUnreadyNode: one unready node of two is within OkTotalUnreadyCount.
    readiness = readiness_of([node("ng1-1"), node("ng2-1", False)], NOW, {}, STRICT)
    assert is_cluster_healthy(readiness, STRICT)
    assert unhealthy_groups(readiness, {"ng1": 1, "ng2": 1}, {}, STRICT) == set()


def broken(n: Node) -> Node:
    """A node that stopped reporting: Ready Unknown, tainted unreachable by the node lifecycle
    controller."""
    status = msgspec.structs.replace(
        n.status, conditions=[NodeCondition(type="Ready", status="Unknown")]
    )
    return tainted(msgspec.structs.replace(n, status=status), "node.kubernetes.io/unreachable")


def test_a_node_that_breaks_in_its_startup_window_stands_in_as_upcoming_until_it_closes() -> None:
    # Upstream: TestStaticAutoscalerRunOnceWithUnreadyNodes (static_autoscaler_test.go): until
    # MaxNodeStartupTime after its creation an unready node is NotStarted, left out of the
    # snapshot with a template copy standing in (the pending pod fits the copy: no scale-up)
    # and no scale-down candidate; from then on it is Unready and the pod asks for a node.
    # It stands in only while its group's scale-up is in progress (GetUpcomingNodes): here
    # the scale-up at 0s that asked for it, which ends when the node turns Unready.
    ca = ClusterAutoscaler([group("ng", size=1, max_size=3)])
    first = ca.run_once(0, cluster_of(ca, [web(0, "3", "ng-0")]), [web(1, "3")])
    assert first.target_sizes == {"ng": 2}
    base = cluster_of(ca, [web(0, "3", "ng-0")])
    nodes = [broken(i.node) if i.name == "ng-1" else i.node for i in base.list()]
    cluster = ClusterState(nodes, [web(0, "3", "ng-0")], base.objects)
    created = {"ng-1": 0.0}
    young = ca.run_once(15 * MINUTE - 1, cluster, [web(1, "3")], node_created=created)
    assert young.scale_up.result != SCALE_UP_SUCCESSFUL
    assert young.healthy
    old = ca.run_once(15 * MINUTE, cluster, [web(1, "3")], node_created=created)
    assert old.scale_up.result == SCALE_UP_SUCCESSFUL
    assert old.target_sizes == {"ng": 3}


def test_a_starting_node_without_a_scale_up_in_progress_is_no_upcoming_node() -> None:
    # Upstream (GetUpcomingNodes, "no active scale-up request"): a group's target raised by
    # someone else has no upcoming nodes; its NotStarted node stays in the snapshot, NotReady
    # and tainted, so the pending pod asks for a node at once.
    ca = ClusterAutoscaler([group("ng", size=2, max_size=3)])
    base = cluster_of(ca, [web(0, "3", "ng-0")])
    nodes = [broken(i.node) if i.name == "ng-1" else i.node for i in base.list()]
    cluster = ClusterState(nodes, [web(0, "3", "ng-0")], base.objects)
    out = ca.run_once(60, cluster, [web(1, "3")], node_created={"ng-1": 0.0})
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    assert out.target_sizes == {"ng": 3}


def test_young_broken_nodes_keep_the_cluster_healthy_until_their_window_closes() -> None:
    # Four nodes a scale-up added a minute ago break down: NotStarted, not Unready, so the
    # health gate (more than ok-total-unready-count 3 and 45%) holds until 15m after their
    # creation; then the loop stops autoscaling.
    ca = ClusterAutoscaler([group("ng", size=5, max_size=10)])
    base = cluster_of(ca)
    lost = {"ng-1", "ng-2", "ng-3", "ng-4"}
    nodes = [broken(i.node) if i.name in lost else i.node for i in base.list()]
    cluster = ClusterState(nodes, [], base.objects)
    created = dict.fromkeys(lost, 60.0)
    assert ca.run_once(2 * MINUTE, cluster, [], node_created=created).healthy
    assert not ca.run_once(16 * MINUTE, cluster, [], node_created=created).healthy


def test_a_node_with_a_creation_time_outside_the_map_is_old() -> None:
    n = with_meta(node("ng1-1", False), creation_timestamp="2026-01-01T00:00:00Z")
    # The model reads creation times only from the caller's map (seconds on its clock).
    assert readiness_of([n], NOW, {}, STRICT).total.unready == ["ng1-1"]


def test_a_scale_up_whose_node_registered_but_never_started_times_out_keeping_the_node() -> None:
    # The scale-up's node registered but is still NotStarted when max-node-provision-time
    # (5m) runs out: the request times out and the group backs off, but the target size keeps
    # the registered node (upstream's fixNodeGroupSize compares the target with Registered;
    # only instances that never registered are dropped).
    options = parse_options({"max-node-provision-time": "5m"}, "test")
    ca = ClusterAutoscaler([group("ng", size=1, max_size=3)], options)
    cluster = cluster_of(ca, [web(0, "3", "ng-0")])
    up = ca.run_once(0, cluster, [web(1, "3")])
    assert up.target_sizes == {"ng": 2}
    new = broken(ca.groups["ng"].template_node("ng-1"))
    grown = ClusterState([*(i.node for i in cluster.list()), new], [web(0, "3", "ng-0")])
    out = ca.run_once(6 * MINUTE, grown, [web(1, "3")], node_created={"ng-1": 0.0})
    (timeout,) = out.timeouts
    assert (timeout.requested, timeout.registered) == (2, 2)
    assert out.target_sizes == {"ng": 2}


def test_a_node_with_a_startup_taint_is_starting_while_young_then_unready() -> None:
    # GetUnreadyNodeCopy: not ready since its creation, so NotStarted within
    # --max-node-startup-time (15m) of it, Unready after.
    startup = "startup-taint.cluster-autoscaler.kubernetes.io/cni"
    nodes = [node("ng1-1"), tainted(node("ng1-2"), startup)]
    options = parse_options({}, "test")
    young = readiness_of(nodes, NOW, {"ng1-2": NOW - MINUTE}, options).per_group["ng1"]
    assert (young.ready, young.not_started, young.unready) == (["ng1-1"], ["ng1-2"], [])
    old = readiness_of(nodes, NOW, {"ng1-2": NOW - 20 * MINUTE}, options).per_group["ng1"]
    assert (old.ready, old.not_started, old.unready) == (["ng1-1"], [], ["ng1-2"])
