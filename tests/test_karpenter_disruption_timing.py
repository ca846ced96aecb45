"""The disruption controller's timing beside the provisioner: it runs whatever the provisioner is
launching (its simulation packs the pending pods too, and a candidate's pods may not go to a
node still starting), it skips nodes a provisioning pass nominated for a pending pod, and a
command waits 15s for its validation, which drops it if its candidates changed.
Upstream: disruption/controller.go Reconcile, helpers.go SimulateScheduling, validation.go,
state/statenode.go Nominated."""

from __future__ import annotations

from karpenter_helpers import AT_ONCE, Env, nodepool
from test_karpenter_consolidation import _started_at, karpenter_node, rs_pod, two_nodes
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.karpenter import Karpenter, builtin_catalogue
from topospread.autoscaler.karpenter.disruption import DO_NOT_DISRUPT
from topospread.autoscaler.karpenter.validation import rejected_message

ZONES = ("test-zone-1", "test-zone-2", "test-zone-3")


def _env(**timing: float) -> Env:
    env = Env()
    env.karpenter = Karpenter([nodepool()], builtin_catalogue(ZONES), **timing)
    return env


def test_a_command_is_carried_out_only_after_its_15s_validation() -> None:
    env = _env()
    two_nodes(env)
    first = env.karpenter.run_once(0.0, env.cluster, [])
    assert first.disruptions == [] and env.karpenter.disruption_at == 15.0
    assert env.karpenter.run_once(14.0, env.cluster, []).disruptions == []
    [d] = env.karpenter.run_once(15.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("node-1",))
    # Then it looks again at once (nothing left: node-0 alone must stay) and polls 10s later.
    assert env.karpenter.awaiting is None and env.karpenter.disruption_at == 25.0


def test_a_command_whose_candidate_changed_is_dropped_at_its_validation() -> None:
    env = _env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"))
    env.add_node(karpenter_node("node-1"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    assert env.karpenter.awaiting is not None
    assert env.karpenter.awaiting.command.method == "emptiness"
    # A pod lands on the empty node meanwhile: the emptiness command is dropped, and the
    # consolidation methods after it look at the cluster as it is now.
    env.cluster.bind(with_node_name(rs_pod("late"), "node-1"), "node-1")
    result = env.karpenter.run_once(15.0, env.cluster, [])
    assert result.disruptions == []
    [(command, kind)] = result.rejected
    assert (command.method, kind) == ("emptiness", "churn")
    assert rejected_message(command, command.candidates[0], kind) == (
        "abandoning empty node consolidation attempt due to pod churn, command is no longer valid"
    )
    assert env.karpenter.awaiting is not None
    awaiting = env.karpenter.awaiting
    assert (awaiting.command.method, awaiting.due) == ("single-node consolidation", 30.0)


def test_consolidation_goes_on_while_a_nodeclaim_is_in_flight() -> None:
    # Upstream's disruption controller does not wait for the provisioner: node-1's pod fits
    # node-0, so node-1 goes in the pass that launches a nodeclaim for the big pending pod,
    # which the simulation packs onto that in-flight nodeclaim.
    env = _env(**AT_ONCE)
    two_nodes(env)
    big = rs_pod("big", cpu="3")
    result = env.karpenter.run_once(0.0, env.cluster, [big])
    [launch] = result.launched
    assert launch.pods == ("default/big",)
    [d] = result.disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("node-1",))


def test_a_candidates_pods_do_not_go_to_a_node_still_starting() -> None:
    # node-0's pod would fit only the in-flight nodeclaim: upstream's simulation refuses to
    # rely on an uninitialized node (UninitializedNodeError), and a replacement would cost
    # as much, so node-0 stays.
    env = _env(**AT_ONCE)
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0", cpu="1"))
    result = env.karpenter.run_once(0.0, env.cluster, [rs_pod("new", cpu="2500m")])
    assert [launch.pods for launch in result.launched] == [("default/new",)]
    assert result.disruptions == []


def test_a_node_nominated_for_a_pending_pod_is_not_a_candidate_for_20s() -> None:
    # The pending pod fits the empty node-1 by Karpenter's packing (the kube-scheduler has
    # not bound it yet): the pass nominates node-1 for max(2 x batchMaxDuration, 10s).
    env = _env(**AT_ONCE)
    env.add_node(karpenter_node("node-0", **{DO_NOT_DISRUPT: "true"}), rs_pod("pod-0", cpu="1800m"))
    env.add_node(karpenter_node("node-1"))
    pending = rs_pod("pending", cpu="500m")
    result = env.karpenter.run_once(0.0, env.cluster, [pending])
    assert result.scheduled_on_existing == {"node-1": ["default/pending"]}
    assert result.disruptions == [] and env.karpenter.nominated == {"node-1": 20.0}
    # The pod is deleted before it binds: node-1 is empty, and still nominated until 20s.
    assert env.karpenter.run_once(19.0, env.cluster, []).disruptions == []
    [d] = env.karpenter.run_once(20.0, env.cluster, []).disruptions
    assert (d.method, d.nodes) == ("emptiness", ("node-1",))


def test_the_pods_of_a_node_being_disrupted_keep_their_room_in_the_next_simulation() -> None:
    # node-z (kept by its pod's do-not-disrupt) has room for one of the 1200m pods. node-x's
    # deletion goes ahead at 15s and the controller looks again at once, while node-x's pod
    # is still there: upstream's simulation packs the deleting node's pods too, so node-y's
    # pod has no room left on node-z and node-y stays (spot is not replaced by spot).
    env = Env()
    pool = nodepool(disruption={"budgets": [{"nodes": "100%"}]})
    env.karpenter = Karpenter([pool], builtin_catalogue(ZONES))
    env.add_node(karpenter_node("node-x"), rs_pod("x", cpu="1200m"))
    env.add_node(karpenter_node("node-y"), rs_pod("y", cpu="1200m"))
    env.add_node(karpenter_node("node-z"), rs_pod("z", **{DO_NOT_DISRUPT: "true"}))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    [d] = env.karpenter.run_once(15.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("node-x",))
    assert env.karpenter.awaiting is None and env.karpenter.disruption_at == 25.0


def test_a_consolidation_whose_pods_no_longer_fit_is_rejected_at_its_validation() -> None:
    env = _env()
    two_nodes(env)
    env.karpenter.run_once(0.0, env.cluster, [])
    assert env.karpenter.awaiting is not None
    assert env.karpenter.awaiting.command.candidates[0].name == "node-1"
    # node-0 fills up meanwhile: node-1's pod has nowhere to go but a new node.
    env.cluster.bind(with_node_name(rs_pod("filler", cpu="1800m"), "node-0"), "node-0")
    result = env.karpenter.run_once(15.0, env.cluster, [])
    assert result.disruptions == []
    [(command, kind)] = result.rejected
    assert rejected_message(command, command.candidates[0], kind) == (
        "Consolidation rejected: delete: [node-1], reason: scheduling (savings: $0.01)"
    )
    # Single-node consolidation was the last method: the next look is a poll later.
    assert env.karpenter.awaiting is None and env.karpenter.disruption_at == 25.0


def test_a_method_that_found_nothing_waits_for_a_change_or_the_5_minute_reset() -> None:
    # At 0s single-node consolidation finds nothing (node-2's pod fits nowhere; node-1's pod
    # is protected for 1m) and marks the cluster consolidated. node-1's protection ends at 60s,
    # which is no change the cluster state watches: node-1 goes only when the state resets,
    # 5 minutes after it last changed. Upstream: consolidation.IsConsolidated,
    # Cluster.ConsolidationState (state/cluster.go).
    env = _env(**AT_ONCE)
    env.add_node(karpenter_node("node-0"), rs_pod("keep", cpu="1", **{DO_NOT_DISRUPT: "true"}))
    protected = rs_pod("pod-1", **{DO_NOT_DISRUPT: "1m"})
    env.add_node(karpenter_node("node-1"), _started_at(protected, "1970-01-01T00:00:00Z"))
    env.add_node(karpenter_node("node-2"), rs_pod("pod-2", cpu="1950m"))
    for now in (0.0, 60.0, 299.0):
        assert env.karpenter.run_once(now, env.cluster, []).disruptions == []
    [d] = env.karpenter.run_once(300.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("node-1",))


def test_a_pod_deleted_moves_the_cluster_state_on_at_once() -> None:
    env = _env(**AT_ONCE)
    env.add_node(karpenter_node("node-0"), rs_pod("keep", cpu="1", **{DO_NOT_DISRUPT: "true"}))
    env.add_node(karpenter_node("node-1"), rs_pod("pod-1", cpu="1950m"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    env.cluster.unbind(with_node_name(rs_pod("pod-1", cpu="1950m"), "node-1"), "node-1")
    [d] = env.karpenter.run_once(10.0, env.cluster, []).disruptions
    assert (d.method, d.nodes) == ("emptiness", ("node-1",))
