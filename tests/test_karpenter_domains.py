"""Karpenter's universe of topology domains after a zone is lost or its offerings run out.

Upstream builds the domains of a key from every NodePool that has instance types (the NodePool's
requirements and labels intersected key by key with each type's requirements, plus the values
of the NodePool's own ``In`` requirements: buildDomainGroups, topology.go) and from every
existing node that passes the spread's node filter (countDomains). The AWS provider's instance
types list every zone a type is offered in whether or not its offerings are available, so a
zone whose offerings are all in the unavailable-offerings cache stays a domain; a dark zone's
nodes, present but NotReady and tainted, stay domains unless the spread honours taints.
"""

from __future__ import annotations

from typing import Any

import pytest

from builders import make_node, make_pod
from karpenter_helpers import TEST_ZONES, Env, nodepool, spread_pods, zones_requirement
from topospread.api.types import LABEL_ARCH_STABLE, LABEL_TOPOLOGY_ZONE
from topospread.autoscaler.karpenter import Karpenter, builtin_catalogue, parse_catalogue
from topospread.autoscaler.karpenter.requirements import NODEPOOL_LABEL
from topospread.autoscaler.karpenter.scheduler import domain_sources
from topospread.cluster.state import ClusterState

UNREACHABLE = "node.kubernetes.io/unreachable"


def offering(zone: str, price: float = 0.1) -> dict[str, Any]:
    return {"zone": zone, "capacityType": "on-demand", "price": price}


def test_a_nodepool_zone_no_instance_type_offers_is_still_a_domain() -> None:
    # Upstream inserts the values of the NodePool's In requirements whether or not a type is
    # offered there (kubernetes-sigs/karpenter#3272, "Impossible topology domains"): the
    # fourth zone counts 0 pods, so only one pod per real zone keeps the skew at 1.
    env = Env(nodepool(requirements=zones_requirement(*TEST_ZONES, "test-zone-4")))
    result = env.provision(*spread_pods(4))
    assert sorted(launch.zone for launch in result.launched) == list(TEST_ZONES)
    assert len(result.pod_errors) == 1
    [why] = result.pod_errors.values()
    # The topology narrows the pod to the empty zone, where no instance type is offered.
    assert "no instance type met" in why and "topology.kubernetes.io/zone In [test-zone-4]" in why


def test_zones_come_from_every_instance_type_key_by_key() -> None:
    # An arm64 type offered only in zone-3 is no option for an amd64 NodePool, but upstream
    # intersects the requirements key by key, so its zone is still one of the NodePool's.
    catalogue = parse_catalogue(
        [
            {
                "name": "amd",
                "cpu": "4",
                "memory": "8Gi",
                "offerings": [offering("test-zone-1"), offering("test-zone-2")],
            },
            {
                "name": "arm",
                "cpu": "4",
                "memory": "8Gi",
                "arch": "arm64",
                "offerings": [offering("test-zone-3")],
            },
        ],
        "types.yaml",
    )
    pool = nodepool(
        requirements=[{"key": LABEL_ARCH_STABLE, "operator": "In", "values": ["amd64"]}]
    )
    [source] = domain_sources([pool], catalogue)
    assert source.domains[LABEL_TOPOLOGY_ZONE] == frozenset(TEST_ZONES)
    assert source.domains[LABEL_ARCH_STABLE] == frozenset({"amd64"})
    karpenter = Karpenter([pool], catalogue)
    result = karpenter.run_once(0.0, ClusterState([], []), spread_pods(3))
    assert sorted(launch.zone for launch in result.launched) == ["test-zone-1", "test-zone-2"]
    assert len(result.pod_errors) == 1


def test_a_nodepool_without_instance_types_adds_no_domain() -> None:
    pool = nodepool(requirements=zones_requirement("test-zone-9"))
    assert domain_sources([pool], []) == []


def test_a_not_in_value_of_a_key_no_instance_type_defines_is_inserted_as_upstream_does() -> None:
    # Upstream inserts Requirement.Values(), which for NotIn are the excluded values: with no
    # instance type defining "team", NodePool "p"'s NotIn [x] leaves "x" among its domains.
    # On a key the types define (zone) the intersection is an In list and nothing leaks.
    pool = nodepool(
        "p",
        requirements=[
            {"key": "team", "operator": "NotIn", "values": ["x"]},
            {"key": LABEL_TOPOLOGY_ZONE, "operator": "NotIn", "values": ["test-zone-3"]},
        ],
    )
    [source] = domain_sources([pool], builtin_catalogue(TEST_ZONES))
    assert source.domains["team"] == frozenset({"x"})
    assert source.domains[LABEL_TOPOLOGY_ZONE] == frozenset({"test-zone-1", "test-zone-2"})


def test_domains_of_other_nodepools_count_though_the_pod_cannot_use_them() -> None:
    # Upstream's domain groups are filtered by the NodePools' taints only, not by the pod's
    # node affinity (aws/karpenter-provider-aws#8637): the pods select NodePool "ab", but
    # NodePool "c"'s zone is a domain with 0 pods, so one pod per zone of "ab" is all the
    # skew allows.
    ab = nodepool("ab", requirements=zones_requirement("test-zone-1", "test-zone-2"))
    c = nodepool("c", requirements=zones_requirement("test-zone-3"))
    env = Env(ab, c)
    pods = [
        make_pod(f"p-{i}")
        .label("test", "test")
        .node_selector(NODEPOOL_LABEL, "ab")
        .spread_constraint(1, LABEL_TOPOLOGY_ZONE, selector={"matchLabels": {"test": "test"}})
        .obj()
        for i in range(4)
    ]
    result = env.provision(*pods)
    assert sorted(launch.zone for launch in result.launched) == ["test-zone-1", "test-zone-2"]
    assert len(result.pod_errors) == 2


def refuse_zone_3(instance_type: str, zone: str, capacity: str) -> str | None:
    """A cloud that has lost test-zone-3: every launch there is out of capacity."""
    return "InsufficientInstanceCapacity" if zone == "test-zone-3" else None


def test_a_cached_zone_is_still_a_domain_and_its_pods_wait_for_the_cache() -> None:
    # The AWS provider keeps a zone in its instance types' requirements while their
    # offerings there are in the unavailable-offerings cache: the spread still counts it.
    env = Env()
    pods = spread_pods(3, cpu="1")
    first = env.provision(*pods, create=refuse_zone_3)
    # One nodeclaim per zone; zone-3's fails on every spot offering its fleet asks for.
    assert sorted(launch.zone for launch in first.launched) == ["test-zone-1", "test-zone-2"]
    [failure] = first.launch_failures
    assert {(zone, ct) for _, zone, ct, _ in failure.tried} == {("test-zone-3", "spot")}
    [waiting] = [p for p in pods if env.node_of(p) is None]
    env.now = 10.0
    second = env.provision(waiting, create=refuse_zone_3)
    # Still a domain (count 0), so the pod can only go to zone-3, whose spot offerings are
    # cached: the launch falls back to on-demand there, which the cloud refuses too.
    assert second.launched == []
    [again] = second.launch_failures
    assert {(zone, ct) for _, zone, ct, _ in again.tried} == {("test-zone-3", "on-demand")}
    # Each later pass asks for what is left in zone-3 (on-demand gone, the spot offerings
    # the spot filter had dropped as dearer than on-demand come back) until all is cached.
    tried = {(it, zone, ct) for it, zone, ct, _ in failure.tried + again.tried}
    while True:
        env.now += 10.0
        result = env.provision(waiting, create=refuse_zone_3)
        assert result.launched == []
        if not result.launch_failures:
            break
        tried |= {(it, zone, ct) for it, zone, ct, _ in result.launch_failures[0].tried}
    assert {zone for _, zone, _ in tried} == {"test-zone-3"} and len(tried) == 2 * 12
    # Every zone-3 offering is cached: no nodeclaim at all until the cache lets go (3m). The
    # types meet the requirements but have no offering there (upstream's fits() counts no fit
    # without an offering): InstanceTypeFilterError's "resources or offering" case.
    [why] = result.pod_errors.values()
    assert why == (
        "no instance type had enough resources or had a required offering, "
        "requirements=karpenter.sh/nodepool In [default], "
        'topology.kubernetes.io/zone In [test-zone-3], resources={"cpu":"1","pods":"1"}'
    )
    env.now = 180.0
    assert len(env.provision(waiting, create=refuse_zone_3).launch_failures) == 1


def dark_zone_env(policy: str) -> tuple[Env, list[Any]]:
    """Two pods in zone-1 and zone-2, zone-3's node NotReady (unreachable) and its pod gone."""
    env = Env()
    for i, zone in enumerate(TEST_ZONES):
        node = make_node(f"n-{i}").label(LABEL_TOPOLOGY_ZONE, zone).capacity(cpu="1", memory="4Gi")
        if zone == "test-zone-3":
            node = node.taint(UNREACHABLE, effect="NoSchedule").taint(
                UNREACHABLE, effect="NoExecute"
            )
            env.add_node(node.obj())
        else:
            filler = spread_pods(1, cpu="1", prefix=f"run-{i}", node_taints_policy=policy)
            env.add_node(node.obj(), *filler)
    return env, spread_pods(1, cpu="1", prefix="new", node_taints_policy=policy)


@pytest.mark.parametrize("policy", ["Ignore", "Honor"])
def test_a_dark_zone_stays_a_domain_while_the_nodepool_offers_it(policy: str) -> None:
    # Ignore: the dark node's zone counts (countDomains); Honor: the node is filtered out, but
    # the NodePool's instance types still offer zone-3, so it is a domain either way and the
    # replacement pod must go there (maxSkew 1, zone-3 at 0).
    env, pods = dark_zone_env(policy)
    [launch] = env.provision(*pods).launched
    assert launch.zone == "test-zone-3"


@pytest.mark.parametrize(("policy", "zones"), [("Ignore", []), ("Honor", ["test-zone-1"])])
def test_a_dark_zone_outside_the_nodepool_counts_only_through_its_nodes(
    policy: str, zones: list[str]
) -> None:
    # With zone-3 taken out of the NodePool only the dark node can make it a domain: it does
    # when the spread ignores taints (the pod waits), not when it honours them.
    env, pods = dark_zone_env(policy)
    env.set_pools(nodepool(requirements=zones_requirement("test-zone-1", "test-zone-2")))
    result = env.provision(*pods)
    assert [launch.zone for launch in result.launched] == zones
    assert len(result.pod_errors) == (0 if zones else 1)


@pytest.mark.parametrize(
    ("policy", "pools", "skew"),
    [("Ignore", {"plain", "soft"}, [1, 2]), ("Honor", {"plain"}, [3])],
)
def test_a_prefer_no_schedule_taint_keeps_a_nodepool_out_of_an_honouring_spread(
    policy: str, pools: set[str], skew: list[int]
) -> None:
    # Karpenter checks every taint, PreferNoSchedule included (scheduling.Taints.Tolerates),
    # so a spread honouring taints has no domain in NodePool "soft" and all three pods fit
    # zone-1. A spread ignoring them counts zone-2 with 0 pods: the second pod fits nowhere
    # until its last relaxation tolerates PreferNoSchedule taints (a NodePool has one:
    # Preferences.ToleratePreferNoSchedule, set by NewScheduler), and it goes to "soft".
    plain = nodepool("plain", requirements=zones_requirement("test-zone-1"))
    soft = nodepool(
        "soft",
        requirements=zones_requirement("test-zone-2"),
        taints=[{"key": "soft", "effect": "PreferNoSchedule"}],
    )
    env = Env(plain, soft)
    result = env.provision(*spread_pods(3, node_taints_policy=policy))
    assert {launch.nodepool for launch in result.launched} == pools
    assert env.skew() == skew
    assert result.pod_errors == {}


ZONE_1 = {LABEL_TOPOLOGY_ZONE: "test-zone-1"}


@pytest.mark.parametrize(
    ("pools", "skew"),
    [
        ([nodepool(labels=ZONE_1)], [4]),
        (
            [nodepool(labels=ZONE_1, requirements=zones_requirement("test-zone-1", "test-zone-2"))],
            [4],
        ),
        (
            [
                nodepool(
                    labels=ZONE_1, requirements=zones_requirement("test-zone-1", "test-zone-2")
                ),
                nodepool("second", labels={LABEL_TOPOLOGY_ZONE: "test-zone-2"}),
            ],
            [2, 2],
        ),
    ],
    ids=["labels", "requirements and labels", "labels across NodePools"],
)
def test_should_respect_nodepool_zonal_constraints_subset(
    pools: list[Any], skew: list[int]
) -> None:
    # topology_test.go "should respect NodePool zonal constraints (subset) with ...": a
    # NodePool's zone label narrows its domains to that zone.
    env = Env(*pools)
    env.provision(*spread_pods(4))
    assert env.skew() == skew


def test_should_not_violate_max_skew_when_unsat_is_do_not_schedule_discover_domains() -> None:
    # topology_test.go: zone-1's existing node is a domain though the NodePool no longer
    # offers zone-1, as a dark zone's node is.
    env = Env(nodepool(requirements=zones_requirement("test-zone-1")))
    env.provision(make_pod("first").label("test", "test").req(cpu="1100m").obj())
    env.set_pools(nodepool(requirements=zones_requirement("test-zone-2", "test-zone-3")))
    env.provision(*spread_pods(10, cpu="1100m"))
    assert env.skew() == [1, 2, 2]
