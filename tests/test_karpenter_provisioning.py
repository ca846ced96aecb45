"""Karpenter's provisioning: requirements, NodePool weight and limits, instance choice by price,
offerings and stock-outs, in-flight nodeclaims (scenarios after scheduling/suite_test.go), and
the parsers' error messages."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from builders import make_node, make_pod
from karpenter_helpers import TEST_ZONES, Env, nodepool, zones_requirement
from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE,
    DaemonSet,
)
from topospread.autoscaler.karpenter import (
    Karpenter,
    builtin_catalogue,
    load_catalogue,
    parse_catalogue,
    parse_nodepool,
    stock_out,
)
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    Requirement,
    Requirements,
)
from topospread.cluster.state import ClusterState
from topospread.errors import ManifestError


@pytest.mark.parametrize(
    ("a", "b", "values"),
    [
        (("In", ["a", "b"]), ("In", ["b", "c"]), {"b"}),
        (("In", ["a", "b"]), ("NotIn", ["b"]), {"a"}),
        (("Exists", []), ("In", ["x"]), {"x"}),
        (("DoesNotExist", []), ("In", ["x"]), set()),
        (("Gt", ["4"]), ("In", ["2", "5", "9"]), {"5", "9"}),
        (("Lt", ["6"]), ("In", ["2", "5", "9"]), {"2", "5"}),
    ],
    ids=["in-in", "in-notin", "exists-in", "doesnotexist-in", "gt-in", "lt-in"],
)
def test_requirement_intersection(
    a: tuple[str, list[str]], b: tuple[str, list[str]], values: set[str]
) -> None:
    got = Requirement.new("k", *a).intersection(Requirement.new("k", *b))
    assert set(got.values) == values
    assert not got.complement


def test_gt_and_lt_leave_nothing_when_they_do_not_overlap() -> None:
    r = Requirement.new("k", "Gt", ["5"]).intersection(Requirement.new("k", "Lt", ["6"]))
    assert len(r) == 0


def test_compatible_allows_undefined_well_known_labels_only() -> None:
    pool = Requirements([Requirement.new("team", "In", ["a"])])
    assert pool.compatible(Requirements([Requirement.new(LABEL_TOPOLOGY_ZONE, "In", ["z"])])) == ""
    assert (
        pool.compatible(Requirements([Requirement.new("custom", "In", ["x"])]))
        == 'label "custom" does not have known values'
    )
    assert pool.compatible(Requirements([Requirement.new("custom", "DoesNotExist")])) == ""


def test_chooses_the_cheapest_offering_spot_when_allowed() -> None:
    env = Env()
    result = env.provision(make_pod("p").req(cpu="1", memory="1Gi").obj())
    [launch] = result.launched
    # t3.medium spot is the cheapest type that fits 1 CPU; spot is cheaper than on-demand.
    assert (launch.instance_type, launch.capacity_type) == ("t3.medium", "spot")
    assert launch.instance_type_options[0] == "t3.medium"
    assert launch.price == min(
        o.price for it in builtin_catalogue(TEST_ZONES) for o in it.offerings
    )


def test_on_demand_only_nodepool_launches_on_demand() -> None:
    on_demand = [{"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": ["on-demand"]}]
    env = Env(nodepool(requirements=on_demand))
    [launch] = env.provision(make_pod("p").req(cpu="1").obj()).launched
    assert (launch.instance_type, launch.capacity_type, launch.price) == (
        "t3.medium",
        "on-demand",
        0.0416,
    )


def test_pod_node_selector_narrows_instance_types() -> None:
    env = Env()
    pod = make_pod("p").req(cpu="1").node_selector(LABEL_ARCH_STABLE, "arm64").obj()
    [launch] = env.provision(pod).launched
    assert launch.instance_type == "m6g.large"
    assert set(launch.instance_type_options) == {"m6g.large", "m6g.xlarge"}


def test_pods_pack_onto_one_nodeclaim_until_it_is_full() -> None:
    env = Env()
    pods = [make_pod(f"p-{i}").req(cpu="3").obj() for i in range(3)]
    result = env.provision(*pods)
    # 3 + 3 + 3 CPUs, largest first: two share an 8-CPU type, the third needs a 4-CPU one; the
    # cheapest compatible offerings are c5.2xlarge spot and m6g.xlarge spot (arm64 is cheaper).
    got = sorted((len(launch.pods), launch.instance_type) for launch in result.launched)
    assert got == [(1, "m6g.xlarge"), (2, "c5.2xlarge")]


def test_nodepool_weight_decides_which_pool_launches() -> None:
    heavy = nodepool("heavy", weight=50, requirements=zones_requirement("test-zone-2"))
    light = nodepool("light", weight=10)
    env = Env(light, heavy)
    [launch] = env.provision(make_pod("p").req(cpu="1").obj()).launched
    assert (launch.nodepool, launch.zone) == ("heavy", "test-zone-2")


def test_nodepool_limits_stop_provisioning() -> None:
    env = Env(nodepool(limits={"cpu": "4"}))
    pods = [make_pod(f"p-{i}").req(cpu="1500m").obj() for i in range(4)]
    result = env.provision(*pods)
    assert sum(len(launch.pods) for launch in result.launched) < 4
    assert any("exceed limits" in e or "exhausted" in e for e in result.pod_errors.values())


def test_falls_back_to_a_pool_with_room_when_the_heavier_is_at_its_limit() -> None:
    capped = nodepool("capped", weight=50, limits={"cpu": "0"})
    other = nodepool("other", weight=1)
    env = Env(capped, other)
    [launch] = env.provision(make_pod("p").req(cpu="1").obj()).launched
    assert launch.nodepool == "other"


def test_a_stocked_out_zone_is_avoided_but_still_counts_for_spread() -> None:
    catalogue = stock_out(builtin_catalogue(TEST_ZONES), zone="test-zone-3")
    karpenter = Karpenter([nodepool()], catalogue)
    pods = [
        make_pod(f"p-{i}")
        .label("app", "web")
        .spread_constraint(1, LABEL_TOPOLOGY_ZONE, selector={"matchLabels": {"app": "web"}})
        .obj()
        for i in range(4)
    ]
    result = karpenter.run_once(0.0, ClusterState([], []), pods)
    # test-zone-3 is a domain (count 0) that cannot be provisioned: one pod per reachable zone
    # keeps the skew at 1, the rest wait (the stock-out deadlock of kubernetes/enhancements#3990).
    assert sorted(launch.zone for launch in result.launched) == ["test-zone-1", "test-zone-2"]
    assert len(result.pod_errors) == 2


def test_in_flight_nodeclaims_are_not_launched_twice() -> None:
    karpenter = Karpenter([nodepool()], builtin_catalogue(TEST_ZONES))
    cluster = ClusterState([], [])
    pod = make_pod("p").req(cpu="500m").obj()
    first = karpenter.run_once(0.0, cluster, [pod])
    assert len(first.launched) == 1
    # Before the node registers the pod is still pending: it fits the in-flight nodeclaim.
    second = karpenter.run_once(10.0, cluster, [pod])
    assert second.launched == []
    assert second.scheduled_on_existing == {first.launched[0].name: ["default/p"]}


def test_daemonset_overhead_is_reserved_on_new_nodes() -> None:
    ds = msgspec.convert(
        {
            "metadata": {"name": "agent", "namespace": "kube-system"},
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}
                }
            },
        },
        DaemonSet,
    )
    karpenter = Karpenter([nodepool()], builtin_catalogue(TEST_ZONES), daemonsets=[ds])
    [launch] = karpenter.run_once(
        0.0, ClusterState([], []), [make_pod("p").req(cpu="1500m").obj()]
    ).launched
    # 1.5 + 1 CPU does not fit a 2-CPU type.
    assert launch.instance_type not in ("t3.medium", "t3.large", "c5.large", "m5.large")


def test_created_node_carries_the_launch_labels() -> None:
    env = Env()
    [launch] = env.provision(make_pod("p").req(cpu="1").obj()).launched
    labels = launch.node.metadata.labels
    assert labels[LABEL_INSTANCE_TYPE_STABLE] == launch.instance_type
    assert labels[LABEL_TOPOLOGY_ZONE] == launch.zone
    assert labels[CAPACITY_TYPE_LABEL] == launch.capacity_type
    assert labels["karpenter.sh/nodepool"] == "default"


def test_parses_a_nodepool_manifest() -> None:
    pool = parse_nodepool(
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": "general"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"team": "a"}},
                    "spec": {
                        "nodeClassRef": {
                            "group": "karpenter.k8s.aws",
                            "kind": "EC2NodeClass",
                            "name": "default",
                        },
                        "requirements": [
                            {
                                "key": "karpenter.sh/capacity-type",
                                "operator": "In",
                                "values": ["spot"],
                            }
                        ],
                        "taints": [{"key": "dedicated", "value": "a", "effect": "NoSchedule"}],
                    },
                },
                "limits": {"cpu": "100", "memory": "400Gi"},
                "weight": 10,
                "disruption": {
                    "consolidationPolicy": "WhenEmpty",
                    "consolidateAfter": "1m",
                    "budgets": [{"nodes": "20%"}, {"nodes": "0", "reasons": ["Drifted"]}],
                },
            },
        },
        "nodepools.yaml",
    )
    assert (pool.name, pool.weight, pool.limits_cpu_milli, pool.limits_memory) == (
        "general",
        10,
        100_000,
        400 * 1024**3,
    )
    assert pool.consolidation_policy == "WhenEmpty" and pool.consolidate_after == 60.0
    assert pool.allowed_disruptions(10, 0, "Underutilized") == 2
    assert pool.allowed_disruptions(10, 0, "Drifted") == 0
    assert pool.labels == {"team": "a"} and pool.taints[0].key == "dedicated"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"name": "p", "requirements": [{"key": "k", "operator": "Near", "values": []}]},
            'nodepools.yaml[0] (NodePool p): requirements[0].operator: Unsupported value: "Near": '
            'supported values: "Gte", "Lte", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            {"name": "p", "requirements": [{"key": "k", "operator": "Gt", "values": ["x"]}]},
            'nodepools.yaml[0] (NodePool p): requirements: Invalid value: "array": type '
            "conversion error from 'string' to 'int' evaluating rule: requirements operator "
            "'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",
        ),
        (
            {"name": "p", "weight": 200},
            "nodepools.yaml[0] (NodePool p): weight: Invalid value: 200: weight in body should "
            "be less than or equal to 100",
        ),
        (
            {"name": "p", "disruption": {"budgets": [{"nodes": "ten"}]}},
            'nodepools.yaml[0] (NodePool p): disruption.budgets[0].nodes: Invalid value: "ten": '
            "disruption.budgets[0].nodes in body should match '^((100|[0-9]{1,2})%|[0-9]+)$'",
        ),
        (
            {"name": "p", "disruption": {"consolidationPolicy": "Always"}},
            "nodepools.yaml[0] (NodePool p): disruption.consolidationPolicy: Unsupported value: "
            '"Always": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized", "Balanced"',
        ),
        (
            {"name": "p", "limits": {"cpu": "lots"}},
            'nodepools.yaml[0] (NodePool p): limits.cpu: Invalid value: "lots": limits.cpu in '
            "body should match",
        ),
        ({"weight": 1}, "nodepools.yaml[0]: name: Required value"),
    ],
    ids=["operator", "gt value", "weight", "budget nodes", "policy", "limit", "name"],
)
def test_nodepool_errors_name_the_pool_and_field(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_nodepool(raw, "nodepools.yaml[0]")
    assert str(err.value).startswith(message)


def test_parses_a_catalogue_and_reports_bad_offerings() -> None:
    catalogue = parse_catalogue(
        {
            "instanceTypes": [
                {
                    "name": "x1",
                    "cpu": "4",
                    "memory": "8Gi",
                    "pods": 50,
                    "offerings": [
                        {"zone": "a", "capacityType": "spot", "price": 0.05},
                        {"zone": "b", "price": 0.1, "available": False},
                    ],
                }
            ]
        },
        "types.yaml",
    )
    [x1] = catalogue
    assert (x1.cpu_milli, x1.memory, x1.pods) == (4000, 8 * 1024**3, 50)
    assert [o.available for o in x1.offerings] == [True, False]
    with pytest.raises(ManifestError) as err:
        parse_catalogue(
            [{"name": "y", "cpu": "1", "memory": "1Gi", "offerings": [{"zone": "a", "price": -1}]}],
            "t.yaml",
        )
    assert (
        str(err.value)
        == "t.yaml[0].offerings[0]: price: Invalid value: -1: expected a price (0 or more)"
    )


def test_a_cordoned_node_is_not_a_destination() -> None:
    from builders import make_node

    env = Env()
    env.add_node(make_node("cordoned").capacity(cpu="8", memory="32Gi").unschedulable().obj())
    env.add_node(make_node("open").capacity(cpu="8", memory="32Gi").obj())
    result = env.karpenter.run_once(0.0, env.cluster, [make_pod("p").req(cpu="1").obj()])
    assert result.launched == []
    assert result.scheduled_on_existing == {"open": ["default/p"]}


def test_a_catalogue_file_replaces_the_built_in_one(tmp_path: Path) -> None:
    path = tmp_path / "types.yaml"
    path.write_text(
        "instanceTypes:\n"
        "- name: tiny\n  cpu: '1'\n  memory: 2Gi\n  pods: 10\n"
        "  offerings:\n  - {zone: test-zone-1, capacityType: on-demand, price: 0.01}\n"
    )
    karpenter = Karpenter([nodepool()], load_catalogue(path))
    [launch] = karpenter.run_once(
        0.0, ClusterState([], []), [make_pod("p").req(cpu="500m").obj()]
    ).launched
    assert (launch.instance_type, launch.zone, launch.price) == ("tiny", "test-zone-1", 0.01)
    bad = tmp_path / "bad.yaml"
    bad.write_text("- name: x\n  cpu: '1'\n  memory: 1Gi\n  offerings: []\n")
    with pytest.raises(ManifestError) as err:
        load_catalogue(bad)
    assert str(err.value) == f"{bad}[0]: offerings: expected a non-empty list of offerings"


def test_nodepool_labels_reach_the_node_and_satisfy_node_selectors() -> None:
    env = Env(nodepool(labels={"team": "a"}))
    pod = make_pod("p").req(cpu="1").node_selector("team", "a").obj()
    [launch] = env.provision(pod).launched
    assert launch.node.metadata.labels["team"] == "a"
    other = make_pod("q").req(cpu="1").node_selector("team", "b").obj()
    result = env.provision(other)
    assert result.launched == []
    assert "incompatible requirements, key team" in result.pod_errors["default/q"]


def test_the_beta_zone_label_means_the_zone() -> None:
    # Upstream: NormalizedLabels translate failure-domain.beta.kubernetes.io/zone.
    env = Env()
    pod = make_pod("p").req(cpu="1").node_selector(LABEL_FAILURE_DOMAIN_BETA_ZONE, TEST_ZONES[1])
    [launch] = env.provision(pod.obj()).launched
    assert launch.zone == TEST_ZONES[1]


def test_a_nodes_capacity_counts_against_the_nodepool_limits() -> None:
    # Upstream updateRemainingResources subtracts StateNode.Capacity: 6 - 4.5 leaves 1.5 CPU,
    # too little for any type (the node's 4 allocatable CPUs would leave 2).
    env = Env(nodepool(limits={"cpu": "6"}))
    node = make_node("n1").label("karpenter.sh/nodepool", "default").obj()
    status = msgspec.structs.replace(
        node.status,
        capacity={"cpu": "4500m", "memory": "8Gi", "pods": "10"},
        allocatable={"cpu": "4", "memory": "8Gi", "pods": "10"},
    )
    full = make_pod("full").req(cpu="4").obj()
    env.add_node(msgspec.structs.replace(node, status=status), full)
    result = env.provision(make_pod("p").req(cpu="1").obj())
    assert result.launched == []
    assert result.pod_errors == {
        "default/p": "all available instance types exceed limits for nodepool"
    }


def test_equal_weights_go_by_name_last_first() -> None:
    # Upstream OrderByWeight: equal weights sorted by name descending.
    env = Env(nodepool("alpha"), nodepool("beta"))
    [launch] = env.provision(make_pod("p").req(cpu="1").obj()).launched
    assert launch.nodepool == "beta"
