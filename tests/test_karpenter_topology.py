"""Karpenter's topology tests, ported from pkg/controllers/provisioning/scheduling/topology_test.go
(same setup, same expected skew)."""

from __future__ import annotations

import msgspec
import pytest

from builders import PodBuilder, make_node, make_pod
from karpenter_helpers import Env, nodepool, spread_pods, zones_requirement
from topospread.api.types import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Affinity, Pod, PodStatus
from topospread.autoscaler.karpenter import NodePool
from topospread.autoscaler.karpenter.requirements import CAPACITY_TYPE_LABEL


def test_should_balance_pods_across_zones_match_labels() -> None:
    env = Env()
    env.provision(*spread_pods(4))
    assert env.skew() == [1, 1, 2]


def test_should_respect_nodepool_zonal_constraints() -> None:
    env = Env(nodepool(requirements=zones_requirement("test-zone-1", "test-zone-2", "test-zone-3")))
    env.provision(*spread_pods(4))
    assert env.skew() == [1, 1, 2]


def test_should_respect_nodepool_zonal_constraints_subset_with_requirements() -> None:
    env = Env(nodepool(requirements=zones_requirement("test-zone-1", "test-zone-2")))
    env.provision(*spread_pods(4))
    assert env.skew() == [2, 2]


def test_should_respect_nodepool_zonal_constraints_existing_pod() -> None:
    env = Env()
    first = make_pod("first").label("test", "test").req(cpu="1.1")
    first = first.node_selector(LABEL_TOPOLOGY_ZONE, "test-zone-3").obj()
    env.provision(first)
    assert env.node_of(first) is not None
    env.set_pools(nodepool(requirements=zones_requirement("test-zone-1", "test-zone-2")))
    result = env.provision(*spread_pods(6, cpu="1.1"))
    # zone-3 holds one pod; zone-1 and zone-2 take two each before maxSkew 1 is violated.
    assert env.skew() == [1, 2, 2]
    assert len(result.pod_errors) == 2


def test_should_schedule_to_the_non_minimum_domain_if_its_all_thats_available() -> None:
    env = Env(nodepool(requirements=zones_requirement("test-zone-1")))
    env.provision(*spread_pods(1, max_skew=5, cpu="1.1", prefix="a"))
    assert env.skew() == [1]
    env.set_pools(nodepool(requirements=zones_requirement("test-zone-2")))
    env.provision(*spread_pods(1, max_skew=5, cpu="1.1", prefix="b"))
    assert env.skew() == [1, 1]
    env.set_pools(nodepool(requirements=zones_requirement("test-zone-3")))
    env.provision(*spread_pods(10, max_skew=5, cpu="1.1", prefix="c"))
    assert env.skew() == [1, 1, 6]


def test_should_not_violate_max_skew_when_unsat_is_do_not_schedule() -> None:
    env = Env(nodepool(requirements=zones_requirement("test-zone-1")))
    env.provision(*spread_pods(1, cpu="1.1", prefix="a"))
    assert env.skew() == [1]
    env.set_pools(nodepool(requirements=zones_requirement("test-zone-2", "test-zone-3")))
    result = env.provision(*spread_pods(10, cpu="1.1", prefix="b"))
    assert env.skew() == [1, 2, 2]
    assert len(result.pod_errors) == 6
    reason = next(iter(result.pod_errors.values()))
    assert "unsatisfiable topology constraint for topology spread" in reason


def test_should_respect_min_domains_constraints() -> None:
    env = Env(nodepool(requirements=zones_requirement("test-zone-1", "test-zone-2")))
    env.provision(*spread_pods(3, min_domains=3))
    assert env.skew() == [1, 1]


def test_satisfied_min_domains_constraints_equal_allow_expected_scheduling() -> None:
    env = Env(
        nodepool(requirements=zones_requirement(*("test-zone-1", "test-zone-2", "test-zone-3")))
    )
    env.provision(*spread_pods(11, min_domains=3))
    assert env.skew() == [3, 4, 4]


def test_hostname_should_balance_pods_across_nodes() -> None:
    env = Env()
    env.provision(*spread_pods(4, key=LABEL_HOSTNAME))
    assert env.skew(LABEL_HOSTNAME) == [1, 1, 1, 1]


def test_hostname_should_balance_pods_on_the_same_hostname_up_to_maxskew() -> None:
    env = Env()
    env.provision(*spread_pods(4, key=LABEL_HOSTNAME, max_skew=4))
    assert env.skew(LABEL_HOSTNAME) == [4]


def _anti_affinity(name: str, key: str) -> PodBuilder:
    term = {"labelSelector": {"matchLabels": {"test": "test"}}, "topologyKey": key}
    return (
        make_pod(name)
        .label("test", "test")
        .spec_field(
            "affinity",
            {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        )
    )


def test_should_respect_self_pod_anti_affinity_hostname() -> None:
    env = Env()
    pods = [_anti_affinity(f"p-{i}", LABEL_HOSTNAME).obj() for i in range(3)]
    result = env.provision(*pods)
    assert len(result.launched) == 3
    assert env.skew(LABEL_HOSTNAME) == [1, 1, 1]


def test_should_support_pod_anti_affinity_with_a_zone_topology() -> None:
    # Late committal: a pod with zonal anti-affinity leaves its nodeclaim free to launch in any
    # of the three zones, so it blocks all three for the rest of its batch; one pod per batch.
    env = Env()
    for batch, expected in enumerate(([1], [1, 1], [1, 1, 1], [1, 1, 1])):
        pods = [_anti_affinity(f"b{batch}-{i}", LABEL_TOPOLOGY_ZONE).obj() for i in range(3)]
        result = env.provision(*pods)
        assert env.skew() == expected
        assert len(result.pod_errors) == 3 - (1 if batch < 3 else 0)
    assert all("pod anti-affinity" in e for e in result.pod_errors.values())


def test_should_not_violate_pod_anti_affinity_on_zone() -> None:
    env = Env()
    zone_pods = [
        make_pod(f"zone{z}")
        .label("security", "s2")
        .req(cpu="2")
        .node_selector(LABEL_TOPOLOGY_ZONE, f"test-zone-{z}")
        .obj()
        for z in (1, 2, 3)
    ]
    term = {
        "labelSelector": {"matchLabels": {"security": "s2"}},
        "topologyKey": LABEL_TOPOLOGY_ZONE,
    }
    aff = (
        make_pod("aff")
        .spec_field(
            "affinity",
            {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
        )
        .obj()
    )
    result = env.provision(*zone_pods, aff)
    assert all(env.node_of(p) is not None for p in zone_pods)
    assert env.node_of(aff) is None
    assert list(result.pod_errors) == ["default/aff"]


def test_should_respect_pod_affinity_hostname() -> None:
    env = Env()
    target = make_pod("target").label("security", "s2").req(cpu="100m").obj()
    term = {"labelSelector": {"matchLabels": {"security": "s2"}}, "topologyKey": LABEL_HOSTNAME}
    follower = (
        make_pod("follower")
        .spec_field(
            "affinity", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
        )
        .obj()
    )
    env.provision(target, follower)
    node = env.node_of(follower)
    assert node is not None and env.node_of(target) is not None
    assert node.metadata.name == env.node_of(target).metadata.name  # type: ignore[union-attr]


def _capacity_type_pool(capacity_type: str) -> NodePool:
    return nodepool(
        requirements=[{"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": [capacity_type]}]
    )


@pytest.mark.parametrize(
    ("when", "expected", "failed"),
    [("DoNotSchedule", [1, 2], 3), ("ScheduleAnyway", [1, 5], 0)],
    ids=["do not schedule keeps max-skew", "schedule anyway is relaxed and violates it"],
)
def test_max_skew_on_capacity_type(when: str, expected: list[int], failed: int) -> None:
    env = Env(_capacity_type_pool("spot"))
    env.provision(*spread_pods(1, key=CAPACITY_TYPE_LABEL, cpu="1.1", prefix="a", when=when))
    assert env.skew(CAPACITY_TYPE_LABEL) == [1]
    env.set_pools(_capacity_type_pool("on-demand"))
    result = env.provision(
        *spread_pods(5, key=CAPACITY_TYPE_LABEL, cpu="1.1", prefix="b", when=when)
    )
    assert env.skew(CAPACITY_TYPE_LABEL) == expected
    assert len(result.pod_errors) == failed


def _preferring(name: str, zone: str) -> Pod:
    term = {
        "weight": 10,
        "preference": {
            "matchExpressions": [{"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": [zone]}]
        },
    }
    affinity = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [term]}}
    return make_pod(name).req(cpu="1").spec_field("affinity", affinity).obj()


def test_preferred_node_affinity_is_honoured_when_possible() -> None:
    env = Env()
    [launch] = env.provision(_preferring("p", "test-zone-2")).launched
    assert launch.zone == "test-zone-2"


def test_preferred_node_affinity_is_relaxed_when_impossible() -> None:
    env = Env(nodepool(requirements=zones_requirement("test-zone-1")))
    result = env.provision(_preferring("p", "test-zone-3"))
    assert result.pod_errors == {}
    assert [launch.zone for launch in result.launched] == ["test-zone-1"]


def test_required_node_affinity_terms_are_tried_in_turn() -> None:
    terms = [
        {
            "matchExpressions": [
                {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["nowhere"]}
            ]
        },
        {
            "matchExpressions": [
                {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["test-zone-3"]}
            ]
        },
    ]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
        }
    }
    env = Env()
    [launch] = env.provision(make_pod("p").spec_field("affinity", affinity).obj()).launched
    assert launch.zone == "test-zone-3"


@pytest.mark.parametrize(
    ("policy", "expected"),
    [("Ignore", [1]), ("Honor", [2])],
    ids=["NodeTaintsPolicy=ignore", "NodeTaintsPolicy=honor"],
)
def test_should_balance_pods_across_a_label_discovered_from_the_nodepool(
    policy: str, expected: list[int]
) -> None:
    # The tainted pool offers domain "bar", which the pods do not tolerate. Ignored, "bar" is a
    # domain with 0 pods, so only one pod fits "foo"; honoured, "bar" is no domain at all.
    plain = nodepool(
        "plain", requirements=[{"key": "fake-label", "operator": "In", "values": ["foo"]}]
    )
    tainted = nodepool(
        "tainted",
        requirements=[
            {"key": CAPACITY_TYPE_LABEL, "operator": "Exists"},
            {"key": "fake-label", "operator": "In", "values": ["bar"]},
        ],
        taints=[{"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}],
    )
    env = Env(plain, tainted)
    env.provision(*spread_pods(2, key="fake-label", node_taints_policy=policy))
    assert env.skew("fake-label") == expected


def test_a_finished_pod_counts_in_no_domain() -> None:
    # Upstream IgnoredForTopology: terminal pods are not counted, so zone-1, whose only
    # matching pod has Succeeded, still takes the new pod on its existing node.
    env = Env()
    node = (
        make_node("n1")
        .label(LABEL_TOPOLOGY_ZONE, "test-zone-1")
        .label(LABEL_HOSTNAME, "n1")
        .capacity(cpu="4", memory="8Gi", pods="10")
        .obj()
    )
    done = msgspec.structs.replace(
        spread_pods(1, prefix="done")[0], status=PodStatus(phase="Succeeded")
    )
    env.add_node(node, done)
    result = env.provision(*spread_pods(1, cpu="1"))
    assert result.launched == []
    assert result.scheduled_on_existing == {"n1": ["default/p-0"]}


def test_a_preferred_zone_does_not_narrow_the_spreads_domains() -> None:
    # Upstream counts a spread over the pod's strict requirements (node selector and required
    # terms; podData.StrictRequirements, MakeTopologyNodeFilter): zone-1 already holds a
    # matching pod and zones 2 and 3 none, so the preference for zone-1 is relaxed away and
    # the pod goes to zone-2. Counting only the preferred zone put it in zone-1 (skew 2).
    env = Env()
    node = (
        make_node("n1")
        .label(LABEL_TOPOLOGY_ZONE, "test-zone-1")
        .label(LABEL_HOSTNAME, "n1")
        .capacity(cpu="1", memory="1Gi", pods="10")
        .obj()
    )
    env.add_node(node, spread_pods(1, cpu="1", prefix="old")[0])
    preferred = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {
                        "matchExpressions": [
                            {
                                "key": LABEL_TOPOLOGY_ZONE,
                                "operator": "In",
                                "values": ["test-zone-1"],
                            }
                        ]
                    },
                }
            ]
        }
    }
    [pod] = spread_pods(1, cpu="1")
    pod = msgspec.structs.replace(
        pod, spec=msgspec.structs.replace(pod.spec, affinity=msgspec.convert(preferred, Affinity))
    )
    [launch] = env.provision(pod).launched
    assert launch.zone == "test-zone-2"
    assert env.skew() == [1, 1]
