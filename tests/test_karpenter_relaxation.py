"""Karpenter's preference relaxation inside a batch: a pod that fails goes back to the queue
with its preferences (upstream Scheduler.Solve relaxes a deep copy), and NodePools with a
PreferNoSchedule taint add a last relaxation that tolerates it (Preferences.Relax)."""

from __future__ import annotations

from builders import make_pod
from karpenter_helpers import TEST_ZONES, Env, nodepool
from topospread.api.types import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Pod


def _follower() -> Pod:
    """Required pod affinity to app=leader on the same host, and a preference for the last
    zone. Larger than the leader, so it is tried first and fails (no leader placed yet)."""
    affinity = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "leader"}},
                    "topologyKey": LABEL_HOSTNAME,
                }
            ]
        },
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 10,
                    "preference": {
                        "matchExpressions": [
                            {
                                "key": LABEL_TOPOLOGY_ZONE,
                                "operator": "In",
                                "values": [TEST_ZONES[2]],
                            }
                        ]
                    },
                }
            ]
        },
    }
    return make_pod("follower").req(cpu="1").spec_field("affinity", affinity).obj()


def test_a_pod_that_failed_is_retried_with_its_preferences() -> None:
    # Upstream Solve: "If we don't schedule it, we store the original pod (with preferences)
    # in the queue". The follower fails first (its leader is not placed yet), even relaxed;
    # retried after the leader, it keeps its zone preference, so the leader's nodeclaim is
    # narrowed to the preferred zone instead of the cheapest one (TEST_ZONES[0]).
    env = Env()
    leader = make_pod("leader").label("app", "leader").req(cpu="100m").obj()
    result = env.provision(_follower(), leader)
    assert result.pod_errors == {}
    [launch] = result.launched
    assert launch.pods == ("default/leader", "default/follower")
    assert launch.zone == TEST_ZONES[2]


def _prefer_no_schedule_pool() -> Env:
    return Env(
        nodepool(
            "soft",
            taints=[{"key": "team", "value": "x", "effect": "PreferNoSchedule"}],
        )
    )


def test_a_prefer_no_schedule_taint_is_tolerated_as_the_last_relaxation() -> None:
    env = _prefer_no_schedule_pool()
    result = env.provision(make_pod("p").req(cpu="1").obj())
    assert result.pod_errors == {}
    [launch] = result.launched
    assert launch.nodepool == "soft"
    assert launch.pods == ("default/p",)


def test_without_a_prefer_no_schedule_nodepool_nothing_is_tolerated() -> None:
    env = Env(nodepool("hard", taints=[{"key": "team", "value": "x", "effect": "NoSchedule"}]))
    result = env.provision(make_pod("p").req(cpu="1").obj())
    assert result.launched == []
    assert list(result.pod_errors) == ["default/p"]
    assert "did not tolerate taint team=x:NoSchedule" in result.pod_errors["default/p"]
