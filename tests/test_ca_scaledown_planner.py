"""The scale-down planner across loops: the order candidates are simulated in (empty nodes
first, then the nodes already unneeded: upstream's ScaleDownCandidatesSortingProcessor with
EmptySorting and PreviousCandidates) and the nodes whose simulation failed, not looked at
again for --unremovable-node-recheck-timeout (upstream's RecentlyUnremovable,
core/scaledown/unremovable/nodes.go and planner.categorizeNodes)."""

from __future__ import annotations

from test_ca_autoscaler import cluster_of, group, web
from topospread.autoscaler.clusterautoscaler import AutoscalingOptions, ClusterAutoscaler
from topospread.autoscaler.clusterautoscaler.scaledown import UnremovableReason


def reasons(out: object) -> dict[str, UnremovableReason]:
    sd = out.scale_down  # type: ignore[attr-defined]
    return {u.node: u.reason for u in sd.unremovable}


def test_empty_nodes_are_simulated_first_so_they_are_the_ones_unneeded() -> None:
    # ng-0 has 0.5 cpu free, ng-1 a 1-cpu pod, ng-2 nothing. Empty first: ng-2 is unneeded,
    # and ng-1's pod then has nowhere to go. In node order ng-1's pod would have moved to
    # ng-2 and ng-1 would have been the unneeded one.
    ca = ClusterAutoscaler([group("ng", size=3)])
    cluster = cluster_of(ca, [web(0, "3500m", "ng-0"), web(1, "1", "ng-1")])
    out = ca.run_once(0, cluster, [])
    assert out.scale_down is not None
    assert list(out.scale_down.unneeded) == ["ng-2"]
    assert reasons(out)["ng-1"] is UnremovableReason.NoPlaceToMovePods


def test_a_node_whose_simulation_failed_is_not_looked_at_again_for_five_minutes() -> None:
    # ng-1's pod has nowhere to go at 0s. It is gone at 10s, but ng-1 is RecentlyUnremovable
    # until 5m: unneeded only from the 300s loop, so removable at 900s, not 610s.
    ca = ClusterAutoscaler([group("ng", size=2)])
    busy = cluster_of(ca, [web(0, "3500m", "ng-0"), web(1, "1", "ng-1")])
    first = ca.run_once(0, busy, [])
    assert reasons(first)["ng-1"] is UnremovableReason.NoPlaceToMovePods
    idle = cluster_of(ca, [web(0, "3500m", "ng-0")])
    for now in (10, 150, 290):
        out = ca.run_once(now, idle, [])
        assert out.scale_down is not None and out.scale_down.unneeded == {}
        assert reasons(out)["ng-1"] is UnremovableReason.RecentlyUnremovable
    assert ca.run_once(300, idle, []).scale_down.unneeded == {"ng-1": 300}  # type: ignore[union-attr]
    assert ca.run_once(890, idle, []).scale_down.removed == []  # type: ignore[union-attr]
    last = ca.run_once(900, idle, [])
    assert [r.node for r in last.scale_down.removed] == ["ng-1"]  # type: ignore[union-attr]


def test_the_recheck_timeout_is_a_flag() -> None:
    ca = ClusterAutoscaler(
        [group("ng", size=2)], AutoscalingOptions(unremovable_node_recheck_timeout=20.0)
    )
    busy = cluster_of(ca, [web(0, "3500m", "ng-0"), web(1, "1", "ng-1")])
    ca.run_once(0, busy, [])
    idle = cluster_of(ca, [web(0, "3500m", "ng-0")])
    assert reasons(ca.run_once(10, idle, []))["ng-1"] is UnremovableReason.RecentlyUnremovable
    assert ca.run_once(20, idle, []).scale_down.unneeded == {"ng-1": 20}  # type: ignore[union-attr]
