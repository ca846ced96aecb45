"""Karpenter's consolidation, ported from pkg/controllers/disruption/consolidation_test.go: the
budgets table, "can delete nodes" and its do-not-disrupt variants, replacement by a cheaper
node, consolidateAfter and WhenEmpty; plus spread kept by the scheduler's own filters."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from builders import make_node, make_pod
from karpenter_helpers import AT_ONCE, Env, nodepool
from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
    Pod,
    PodDisruptionBudget,
    PodStatus,
)
from topospread.autoscaler.karpenter import Karpenter, parse_catalogue
from topospread.autoscaler.karpenter.disruption import DO_NOT_DISRUPT
from topospread.autoscaler.karpenter.requirements import CAPACITY_TYPE_LABEL, NODEPOOL_LABEL

TYPES = {"t3.medium": ("2", "4Gi", "17"), "m5.2xlarge": ("8", "32Gi", "58")}


def karpenter_node(
    name: str,
    instance_type: str = "t3.medium",
    capacity_type: str = "spot",
    zone: str = "test-zone-1",
    pool: str = "default",
    **annotations: str,
) -> Node:
    """A node Karpenter launched (upstream's test nodes are the least expensive instance)."""
    cpu, memory, pods = TYPES[instance_type]
    b = make_node(name).capacity(cpu=cpu, memory=memory, pods=pods)
    for k, v in {
        NODEPOOL_LABEL: pool,
        LABEL_INSTANCE_TYPE_STABLE: instance_type,
        CAPACITY_TYPE_LABEL: capacity_type,
        LABEL_TOPOLOGY_ZONE: zone,
        LABEL_HOSTNAME: name,
    }.items():
        b = b.label(k, v)
    node = b.obj()
    if annotations:
        meta = msgspec.structs.replace(node.metadata, annotations=dict(annotations))
        node = msgspec.structs.replace(node, metadata=meta)
    return node


def rs_pod(name: str, cpu: str = "100m", **annotations: str) -> Pod:
    b = make_pod(name).label("app", "test").owner("ReplicaSet", "rs").req(cpu=cpu)
    pod = b.obj()
    if annotations:
        meta = msgspec.structs.replace(pod.metadata, annotations=dict(annotations))
        pod = msgspec.structs.replace(pod, metadata=meta)
    return pod


def two_nodes(
    env: Env, node0: dict[str, Any] | None = None, pod2: dict[str, str] | None = None
) -> None:
    """Upstream's "can delete nodes" setup: pods 0 and 1 on node 0, pod 2 on node 1."""
    env.add_node(karpenter_node("node-0", **(node0 or {})), rs_pod("pod-0"), rs_pod("pod-1"))
    env.add_node(karpenter_node("node-1"), rs_pod("pod-2", **(pod2 or {})))


def test_can_delete_nodes() -> None:
    env = Env()
    two_nodes(env)
    result = env.karpenter.run_once(0.0, env.cluster, [])
    [d] = result.disruptions
    assert (d.method, d.decision, d.nodes, d.reason) == (
        "single-node consolidation",
        "delete",
        ("node-1",),
        "Underutilized",
    )


def test_can_delete_nodes_considers_do_not_disrupt_on_nodes() -> None:
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"), rs_pod("pod-1"))
    env.add_node(karpenter_node("node-1", **{DO_NOT_DISRUPT: "true"}), rs_pod("pod-2"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert d.nodes == ("node-0",)


def test_can_delete_nodes_considers_do_not_disrupt_on_pods() -> None:
    env = Env()
    two_nodes(env, pod2={DO_NOT_DISRUPT: "true"})
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert d.nodes == ("node-0",)


@pytest.mark.parametrize(
    ("budget", "expected"),
    [("30%", 3), ("100%", 10), ("0%", 0), ("2", 2)],
    ids=["only 3 empty nodes", "all empty nodes", "no empty nodes", "a count of 2"],
)
def test_empty_nodes_are_disrupted_within_the_budget(budget: str, expected: int) -> None:
    env = Env(nodepool(disruption={"budgets": [{"nodes": budget}]}))
    for i in range(10):
        env.add_node(karpenter_node(f"node-{i}"))
    result = env.karpenter.run_once(0.0, env.cluster, [])
    deleted = [n for d in result.disruptions for n in d.nodes]
    assert len(deleted) == expected
    assert all(d.method == "emptiness" and d.reason == "Empty" for d in result.disruptions)


def test_budgets_count_nodes_already_being_disrupted() -> None:
    env = Env(nodepool(disruption={"budgets": [{"nodes": "3"}]}))
    for i in range(10):
        env.add_node(karpenter_node(f"node-{i}"))
    first = env.karpenter.run_once(0.0, env.cluster, [])
    assert len(first.disruptions[0].nodes) == 3
    # The three are still there (draining): the budget is used up.
    assert env.karpenter.run_once(10.0, env.cluster, []).disruptions == []


def test_budget_for_another_reason_does_not_limit_emptiness() -> None:
    env = Env(nodepool(disruption={"budgets": [{"nodes": "0", "reasons": ["Underutilized"]}]}))
    for i in range(4):
        env.add_node(karpenter_node(f"node-{i}"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert len(d.nodes) == 4


def test_replaces_an_expensive_node_with_a_cheaper_one() -> None:
    env = Env()
    env.add_node(karpenter_node("big", "m5.2xlarge", "on-demand"), rs_pod("pod-0", cpu="500m"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.decision, d.nodes) == ("replace", ("big",))
    assert d.replacement is not None
    assert d.replacement.price < 0.384
    assert d.savings == pytest.approx(0.384 - d.replacement.price)


def test_wont_replace_on_demand_node_if_on_demand_replacement_is_more_expensive() -> None:
    on_demand = [{"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": ["on-demand"]}]
    env = Env(nodepool(requirements=on_demand))
    env.add_node(karpenter_node("node-0", capacity_type="on-demand"), rs_pod("pod-0", cpu="1500m"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []


def test_spot_is_not_replaced_by_spot() -> None:
    env = Env()
    env.add_node(karpenter_node("big", "m5.2xlarge", "spot"), rs_pod("pod-0", cpu="500m"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []


def price_catalogue(replacement: list[tuple[str, str, float]]) -> Any:
    """Upstream's fixture: the current on-demand type (0.5, unavailable in test-zone-1) and a
    replacement type with the given (capacity type, zone, price) offerings."""
    return parse_catalogue(
        [
            {
                "name": "t3.medium",
                "cpu": "2",
                "memory": "4Gi",
                "offerings": [
                    {"zone": "test-zone-1", "capacityType": "on-demand", "price": 0.5},
                ],
            },
            {
                "name": "replacement",
                "cpu": "1",
                "memory": "2Gi",
                "offerings": [
                    {"zone": zone, "capacityType": ct, "price": price}
                    for ct, zone, price in replacement
                ],
            },
        ],
        "types.yaml",
    )


def test_wont_replace_node_if_any_spot_replacement_is_more_expensive() -> None:
    # consolidation_test.go: the replacement's worst spot price (1.0 in test-zone-1) is above
    # the node's 0.5, though its cheapest (0.2) is below: Karpenter keeps the node.
    env = Env()
    env.karpenter = Karpenter(
        [nodepool()],
        price_catalogue(
            [
                ("spot", "test-zone-1", 1.0),
                ("spot", "test-zone-2", 0.2),
                ("spot", "test-zone-3", 0.4),
            ]
        ),
        **AT_ONCE,
    )
    env.add_node(karpenter_node("node-0", capacity_type="on-demand"), rs_pod("pod-0"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []


def test_an_on_demand_node_is_replaced_by_spot_only() -> None:
    # With spot and on-demand allowed the replacement is narrowed to spot: even a spot
    # offering dearer than the on-demand one (which a provisioning launch would skip) is what
    # it launches, and a spot launch the cloud refuses is not turned into an on-demand node:
    # the command fails instead.
    env = Env()
    env.karpenter = Karpenter(
        [nodepool()],
        price_catalogue([("on-demand", "test-zone-1", 0.3), ("spot", "test-zone-1", 0.35)]),
        **AT_ONCE,
    )
    env.add_node(karpenter_node("node-0", capacity_type="on-demand"), rs_pod("pod-0"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert d.replacement is not None
    assert (d.replacement.capacity_type, d.replacement.price) == ("spot", 0.35)

    def no_spot(instance_type: str, zone: str, capacity: str) -> str | None:
        return "InsufficientInstanceCapacity" if capacity == "spot" else None

    env.karpenter = Karpenter(
        [nodepool()],
        price_catalogue([("on-demand", "test-zone-1", 0.3), ("spot", "test-zone-1", 0.1)]),
        **AT_ONCE,
    )
    result = env.karpenter.run_once(0.0, env.cluster, [], create=no_spot)
    assert result.disruptions == []
    [failure] = result.launch_failures
    assert {ct for _, _, ct, _ in failure.tried} == {"spot"}


def test_consolidate_after_waits_for_the_pods_to_settle() -> None:
    env = Env(nodepool(disruption={"consolidateAfter": "30s"}))
    two_nodes(env)
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    assert env.karpenter.run_once(20.0, env.cluster, []).disruptions == []
    [d] = env.karpenter.run_once(30.0, env.cluster, []).disruptions
    assert d.nodes == ("node-1",)


def test_when_empty_policy_only_removes_empty_nodes() -> None:
    env = Env(nodepool(disruption={"consolidationPolicy": "WhenEmpty"}))
    two_nodes(env)
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    env.add_node(karpenter_node("node-2"))
    [d] = env.karpenter.run_once(1.0, env.cluster, []).disruptions
    assert (d.method, d.nodes) == ("emptiness", ("node-2",))


def test_multi_node_consolidation_deletes_several_underused_nodes() -> None:
    env = Env(nodepool(disruption={"budgets": [{"nodes": "100%"}]}))
    env.add_node(karpenter_node("node-0"), rs_pod("a"), rs_pod("b"))
    env.add_node(karpenter_node("node-1"), rs_pod("c"))
    env.add_node(karpenter_node("node-2"), rs_pod("d"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.decision) == ("multi-node consolidation", "delete")
    assert sorted(d.nodes) == ["node-1", "node-2"]


def test_default_budget_of_ten_percent_rounds_up_to_one_node_of_three() -> None:
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("a"), rs_pod("b"))
    env.add_node(karpenter_node("node-1"), rs_pod("c"))
    env.add_node(karpenter_node("node-2"), rs_pod("d"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.nodes) == ("single-node consolidation", ("node-1",))


def test_consolidation_keeps_required_anti_affinity_by_the_schedulers_filters() -> None:
    # One replica per node with required hostname anti-affinity: no replica can move to another
    # node (InterPodAffinity, the project's filter run through the CA core's predicate checker),
    # and each node is the cheapest type, so nothing is consolidated.
    env = Env(nodepool(disruption={"budgets": [{"nodes": "100%"}]}))
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": LABEL_HOSTNAME}
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    for i in range(3):
        pod = (
            make_pod(f"web-{i}")
            .label("app", "web")
            .owner("ReplicaSet", "web")
            .req(cpu="100m")
            .spec_field("affinity", anti)
            .obj()
        )
        env.add_node(karpenter_node(f"node-{i}", zone=f"test-zone-{i + 1}"), pod)
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []
    # With a fourth node free of web pods, one replica can move there: node-2 goes, the one
    # with the most savings per unit of disruption (its spot price in test-zone-3 is the
    # dearest; upstream sortCandidates orders by Candidate.SavingsRatio).
    env.add_node(karpenter_node("node-3"), rs_pod("other"))
    [d] = env.karpenter.run_once(1.0, env.cluster, []).disruptions
    assert (d.decision, d.nodes) == ("delete", ("node-2",))


def _pdb(allowed: int, **spec: Any) -> PodDisruptionBudget:
    return msgspec.convert(
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "test"}}, **spec},
            "status": {"disruptionsAllowed": allowed},
        },
        PodDisruptionBudget,
    )


def test_a_pdb_allowing_no_disruption_keeps_its_pods_nodes() -> None:
    # Upstream StateNode.ValidatePodsDisruptable: "pdb prevents pod evictions", so neither
    # node is a candidate (we used to pick node-1 and have its drain refused).
    env = Env()
    two_nodes(env)
    assert env.karpenter.run_once(0.0, env.cluster, [], pdbs=[_pdb(0)]).disruptions == []
    [d] = env.karpenter.run_once(1.0, env.cluster, [], pdbs=[_pdb(1)]).disruptions
    assert d.nodes == ("node-1",)


def test_a_pdb_lets_an_unready_pod_go_with_always_allow() -> None:
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"), rs_pod("pod-1"))
    unready = msgspec.structs.replace(
        rs_pod("pod-2"),
        status=msgspec.convert({"conditions": [{"type": "Ready", "status": "False"}]}, PodStatus),
    )
    env.add_node(karpenter_node("node-1"), unready)
    pdbs = [_pdb(0, unhealthyPodEvictionPolicy="AlwaysAllow")]
    [d] = env.karpenter.run_once(0.0, env.cluster, [], pdbs=pdbs).disruptions
    assert d.nodes == ("node-1",)


def test_a_daemon_pods_do_not_disrupt_annotation_keeps_its_node() -> None:
    # Upstream checks every active pod, DaemonSet and mirror pods included.
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"), rs_pod("pod-1"))
    agent = make_pod("agent").owner("DaemonSet", "agent").req(cpu="10m").obj()
    meta = msgspec.structs.replace(agent.metadata, annotations={DO_NOT_DISRUPT: "true"})
    env.add_node(
        karpenter_node("node-1"), rs_pod("pod-2"), msgspec.structs.replace(agent, metadata=meta)
    )
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert d.nodes == ("node-0",)


def test_a_node_of_an_unknown_instance_type_is_not_consolidated() -> None:
    # Upstream consolidation.ShouldDisrupt: 'Instance Type "x" not found' (no price to compare).
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"), rs_pod("pod-1"))
    unknown = karpenter_node("node-1")
    labels = {**unknown.metadata.labels, LABEL_INSTANCE_TYPE_STABLE: "x9.huge"}
    unknown = msgspec.structs.replace(
        unknown, metadata=msgspec.structs.replace(unknown.metadata, labels=labels)
    )
    env.add_node(unknown, rs_pod("pod-2"))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert d.nodes == ("node-0",)


def _started_at(pod: Pod, start_time: str) -> Pod:
    return msgspec.structs.replace(
        pod, status=msgspec.structs.replace(pod.status, start_time=start_time)
    )


@pytest.mark.parametrize(
    ("value", "now", "expected"),
    [
        # Upstream IsDoNotDisruptActive: a duration protects the pod while it has run less
        # than that since its startTime (1970-01-01T00:00:00Z, the model's second 0 here).
        ("5m", 299.0, "node-0"),
        ("5m", 300.0, "node-1"),
        ("true", 3600.0, "node-0"),
        # Not a positive Go duration: ignored (an InvalidDoNotDisruptAnnotation event).
        ("0s", 0.0, "node-1"),
        ("soon", 0.0, "node-1"),
        ("-1m", 0.0, "node-1"),
    ],
)
def test_do_not_disrupt_on_a_pod_may_be_a_duration_since_it_started(
    value: str, now: float, expected: str
) -> None:
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"), rs_pod("pod-1"))
    pod2 = _started_at(rs_pod("pod-2", **{DO_NOT_DISRUPT: value}), "1970-01-01T00:00:00Z")
    env.add_node(karpenter_node("node-1"), pod2)
    [d] = env.karpenter.run_once(now, env.cluster, []).disruptions
    assert d.nodes == (expected,)


def test_do_not_disrupt_duration_of_a_pod_without_start_time_counts_from_when_it_was_seen() -> None:
    # The simulation's pods get no startTime (no kubelet): the model counts from the first
    # pass that saw the pod on its node.
    env = Env()
    env.add_node(karpenter_node("node-0"), rs_pod("pod-0"), rs_pod("pod-1"))
    env.add_node(karpenter_node("node-1"), rs_pod("pod-2", **{DO_NOT_DISRUPT: "1m"}))
    [first] = env.karpenter.run_once(100.0, env.cluster, []).disruptions
    assert first.nodes == ("node-0",)
    env.cluster.remove_node("node-0")
    env.add_node(karpenter_node("node-2"), rs_pod("pod-0"), rs_pod("pod-1"))
    [later] = env.karpenter.run_once(160.0, env.cluster, []).disruptions
    assert later.nodes == ("node-1",)


# 2026-11-27T08:00:00Z: the model's second 0 in the budget schedule tests.
EIGHT_AM = 1_795_766_400 * 10**9


@pytest.mark.parametrize(
    ("now", "deleted"),
    [
        # Upstream Budget.IsActive: the schedule fired within the last duration, in UTC; an
        # inactive budget allows every node (math.MaxInt32).
        (0.0, 2),  # 08:00: the 09:00-17:00 window is not open
        (3599.0, 2),
        (3600.0, 0),  # 09:00: fired just now
        (8 * 3600.0 + 3599.0, 0),  # 16:59:59
        (9 * 3600.0, 2),  # 17:00: fired exactly 8h ago, and that is past the window
    ],
)
def test_a_budget_with_a_schedule_applies_for_its_duration(now: float, deleted: int) -> None:
    budgets = [{"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}]
    env = Env(nodepool(disruption={"budgets": budgets}))
    env.karpenter.clock_origin = EIGHT_AM  # a Friday
    env.add_node(karpenter_node("node-0"))
    env.add_node(karpenter_node("node-1"))
    result = env.karpenter.run_once(now, env.cluster, [])
    assert sum(len(d.nodes) for d in result.disruptions) == deleted


def test_a_budget_whose_schedule_cron_cannot_parse_allows_nothing() -> None:
    # The CRD's pattern takes any five words; upstream's GetAllowedDisruptions fails closed.
    budgets = [{"nodes": "100%"}, {"nodes": "5", "schedule": "a b c d e", "duration": "1h"}]
    env = Env(nodepool(disruption={"budgets": budgets}))
    env.add_node(karpenter_node("node-0"))
    assert env.karpenter.run_once(0.0, env.cluster, []).disruptions == []


def test_single_node_consolidation_tries_every_candidate_its_budget_allows_one_more() -> None:
    # The default budget allows one of the three nodes. node-a comes first (tied with node-b,
    # by name) and cannot go (its pod fits nowhere, and spot is not replaced by spot); upstream
    # goes on to node-b, whose pod fits node-c (kept by its pod's do-not-disrupt).
    # Upstream: SingleNodeConsolidation.ComputeCommands does not count the budget down.
    env = Env()
    env.add_node(karpenter_node("node-a"), rs_pod("a", cpu="1950m"))
    env.add_node(karpenter_node("node-b"), rs_pod("b"))
    env.add_node(karpenter_node("node-c"), rs_pod("c", cpu="1", **{DO_NOT_DISRUPT: "true"}))
    [d] = env.karpenter.run_once(0.0, env.cluster, []).disruptions
    assert (d.method, d.decision, d.nodes) == ("single-node consolidation", "delete", ("node-b",))
