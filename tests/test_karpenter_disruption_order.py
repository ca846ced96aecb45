"""Which nodes Karpenter's disruption takes first and how many its budgets allow: candidates
by savings per unit of disruption (upstream sortCandidates, Candidate.SavingsRatio), NodePools
in turn for single-node consolidation (shuffleCandidates), nodes whose pods all cost nothing
to evict are empty (Candidate.IsEmpty), and budgets count initialized nodes, a NotReady one
using the budget (BuildDisruptionBudgetMapping)."""

from __future__ import annotations

import msgspec

from builders import make_node, make_pod
from karpenter_helpers import AT_ONCE, Env, nodepool
from test_karpenter_consolidation import karpenter_node, rs_pod
from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeCondition,
    NodeStatus,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.karpenter import Karpenter, parse_catalogue
from topospread.autoscaler.karpenter.requirements import CAPACITY_TYPE_LABEL, NODEPOOL_LABEL

ALL = {"budgets": [{"nodes": "100%"}]}


def not_ready(node: Node) -> Node:
    conditions = [NodeCondition(type="Ready", status="False")]
    status = msgspec.structs.replace(node.status, conditions=conditions)
    assert isinstance(status, NodeStatus)
    return msgspec.structs.replace(node, status=status)


def test_the_dearest_node_per_unit_of_disruption_goes_first() -> None:
    # node-a is an m5.2xlarge with two pods, node-b a t3.medium with one: both could go, and
    # node-a saves more per evicted pod (its pods move to node-b). Sorting by disruption cost
    # alone would take node-b (one pod).
    env = Env(nodepool(disruption=ALL))
    env.add_node(karpenter_node("node-a", "m5.2xlarge"), rs_pod("a1"), rs_pod("a2"))
    env.add_node(karpenter_node("node-b"), rs_pod("b1"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("node-a",))


def test_single_node_consolidation_takes_the_nodepools_in_turn() -> None:
    # Savings order is a1, a2 (pool a, m5.2xlarge), b1 (pool b, t3.medium); a1's pod is pinned
    # to it. Taking the pools in turn, b1 is tried before a2.
    env = Env(nodepool("a", disruption=ALL), nodepool("b", disruption=ALL))
    pinned = make_pod("pinned").owner("ReplicaSet", "rs").req(cpu="100m")
    pinned = pinned.node_selector(LABEL_HOSTNAME, "a1")
    env.add_node(karpenter_node("a1", "m5.2xlarge", pool="a"), pinned.obj())
    env.add_node(karpenter_node("a2", "m5.2xlarge", pool="a"), rs_pod("x"))
    env.add_node(karpenter_node("b1", pool="b"), rs_pod("y"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("b1",))


def test_a_node_whose_pods_cost_nothing_to_evict_is_empty() -> None:
    # Eviction cost 1 + priority/2^25 clamps to -10, counted as 0: the node is Empty.
    env = Env(nodepool(disruption=ALL))
    cheap = make_pod("batch").owner("ReplicaSet", "rs").req(cpu="100m").priority(-1_000_000_000)
    env.add_node(karpenter_node("node-0"), cheap.obj())
    env.add_node(karpenter_node("node-1"), rs_pod("web"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.reason, d.nodes) == ("emptiness", "Empty", ("node-0",))


def test_a_not_ready_node_uses_the_budget() -> None:
    # Ten nodes, 10%: one disruption allowed, and the NotReady node takes it.
    env = Env()
    for i in range(9):
        env.add_node(karpenter_node(f"node-{i}"))
    env.add_node(not_ready(karpenter_node("node-9")), rs_pod("web"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []


def test_budgets_count_only_initialized_nodes() -> None:
    # 50% of the two initialized nodes is one; the two still starting neither count nor go.
    env = Env(nodepool(disruption={"budgets": [{"nodes": "50%"}]}))
    for i in range(4):
        env.add_node(karpenter_node(f"node-{i}"))
    result = env.karpenter.run_once(0.0, env.cluster, [], not_initialized=["node-2", "node-3"])
    [d] = result.disruptions
    assert (d.method, d.nodes) == ("emptiness", ("node-0",))


def test_the_dearest_empty_node_goes_first_within_the_budget() -> None:
    env = Env(nodepool(disruption={"budgets": [{"nodes": "1"}]}))
    env.add_node(karpenter_node("node-0"))
    env.add_node(karpenter_node("node-1", "m5.2xlarge"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.nodes) == ("emptiness", ("node-1",))


def _typed_node(name: str, instance_type: str, cpu: str) -> Node:
    b = make_node(name).capacity(cpu=cpu, memory="8Gi", pods="20")
    labels = {
        NODEPOOL_LABEL: "default",
        LABEL_INSTANCE_TYPE_STABLE: instance_type,
        CAPACITY_TYPE_LABEL: "on-demand",
        LABEL_TOPOLOGY_ZONE: "test-zone-1",
        LABEL_HOSTNAME: name,
    }
    for k, v in labels.items():
        b = b.label(k, v)
    return b.obj()


def test_multi_node_replacement_is_not_one_of_the_candidates_types_at_its_price() -> None:
    # Replacing "big" (1.0) and "small" (0.3) by one new "big" would save 0.3, but keeping the
    # big node and deleting the small one does the same with fewer pods moved:
    # filterOutSameInstanceType drops "big" (not cheaper than the big candidate) and "mid"
    # (1.2), so multi-node finds nothing and single-node deletes "small".
    def offering(price: float) -> list[dict[str, object]]:
        return [{"zone": "test-zone-1", "capacityType": "on-demand", "price": price}]

    catalogue = parse_catalogue(
        [
            {"name": "small", "cpu": "1", "memory": "8Gi", "offerings": offering(0.3)},
            {"name": "big", "cpu": "4", "memory": "8Gi", "offerings": offering(1.0)},
            {"name": "mid", "cpu": "4", "memory": "8Gi", "offerings": offering(1.2)},
        ],
        "types.yaml",
    )
    on_demand = [{"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": ["on-demand"]}]
    env = Env()
    env.karpenter = Karpenter(
        [nodepool(disruption=ALL, requirements=on_demand)], catalogue, **AT_ONCE
    )
    env.add_node(_typed_node("node-big", "big", "4"), rs_pod("a", cpu="1500m"))
    env.add_node(_typed_node("node-small", "small", "1"), rs_pod("b", cpu="500m"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == (
        "single-node consolidation",
        "delete",
        ("node-small",),
    )


def test_no_pod_is_consolidated_onto_a_node_still_under_consolidate_after() -> None:
    # Upstream Scheduler.addToExistingNode skips nodes under consolidateAfter for pods that
    # are not pending (IsConsolidationSimulation): node-1 just got a pod, so node-0's pods
    # have nowhere to go and node-0 stays (spot is not replaced by spot).
    env = Env(nodepool(disruption={"consolidateAfter": "30s"}))
    env.add_node(karpenter_node("node-0"), rs_pod("a"), rs_pod("b"))
    env.add_node(karpenter_node("node-1"), rs_pod("c"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    env.cluster.bind(with_node_name(rs_pod("d"), "node-1"), "node-1")
    assert env.karpenter.run_once(100.0, env.cluster, []).disruptions == []
    assert env.karpenter.run_once(110.0, env.cluster, []).disruptions == []
    # node-1 settles at 130s, but that is no change the methods watch: having found nothing
    # at 100s they wait for the cluster state's 5-minute reset (upstream: IsConsolidated,
    # ConsolidationState in state/cluster.go; open PR #3291 would trigger on it).
    assert env.karpenter.run_once(131.0, env.cluster, []).disruptions == []
    assert env.karpenter.run_once(399.0, env.cluster, []).disruptions == []
    # Then both are candidates (equal savings ratio: node-0 by name).
    [d] = env.karpenter.run_once(400.0, env.cluster, []).disruptions
    assert (d.decision, d.nodes) == ("delete", ("node-0",))
