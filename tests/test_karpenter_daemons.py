"""The room Karpenter keeps for DaemonSet pods: per instance type on a new nodeclaim
(upstream buildDaemonOverheadGroups, isDaemonPodCompatible) and on existing or in-flight nodes
(getCompatibleDaemonPods, NewExistingNode)."""

from __future__ import annotations

from typing import Any

import msgspec

from builders import make_node, make_pod
from karpenter_helpers import TEST_ZONES, nodepool, zones_requirement
from topospread.api.types import LABEL_ARCH_STABLE, LABEL_TOPOLOGY_ZONE, DaemonSet
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.karpenter import Karpenter, builtin_catalogue
from topospread.cluster.state import ClusterState

SMALL_2CPU = ("t3.medium", "t3.large", "c5.large", "m5.large", "r5.large", "m6g.large")


def daemonset(cpu: str = "1", **spec: Any) -> DaemonSet:
    pod_spec = {"containers": [{"name": "a", "resources": {"requests": {"cpu": cpu}}}], **spec}
    return msgspec.convert(
        {
            "metadata": {"name": "agent", "namespace": "kube-system"},
            "spec": {"template": {"spec": pod_spec}},
        },
        DaemonSet,
    )


def _launch(ds: DaemonSet, cpu: str = "1500m", **pool: Any) -> str:
    karpenter = Karpenter([nodepool(**pool)], builtin_catalogue(TEST_ZONES), daemonsets=[ds])
    [launch] = karpenter.run_once(
        0.0, ClusterState([], []), [make_pod("p").req(cpu=cpu).obj()]
    ).launched
    return launch.instance_type


def test_a_daemonset_tolerates_a_prefer_no_schedule_nodepool_taint() -> None:
    # isDaemonPodCompatible adds a PreferNoSchedule toleration: the daemon's CPU is reserved,
    # so 1.5 + 1 CPU needs a 4-CPU type.
    pool = {"taints": [{"key": "soft", "effect": "PreferNoSchedule"}]}
    pod = make_pod("p").req(cpu="1500m").toleration("soft", "Exists", "", "PreferNoSchedule")
    karpenter = Karpenter(
        [nodepool(**pool)], builtin_catalogue(TEST_ZONES), daemonsets=[daemonset()]
    )
    [launch] = karpenter.run_once(0.0, ClusterState([], []), [pod.obj()]).launched
    assert launch.instance_type not in SMALL_2CPU


def test_a_preferred_node_affinity_does_not_keep_a_daemonset_off_a_nodepool() -> None:
    # Daemon pods are matched by their strict requirements (NewStrictPodRequirements).
    affinity = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {
                        "matchExpressions": [
                            {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["elsewhere"]}
                        ]
                    },
                }
            ]
        }
    }
    zones = zones_requirement(*TEST_ZONES)
    assert _launch(daemonset(affinity=affinity), requirements=zones) not in SMALL_2CPU


def test_a_later_required_term_lets_a_daemonset_onto_a_nodepool() -> None:
    # The terms are ORed: the first names another zone, the second any zone of the pool.
    def term(zone: str) -> dict[str, Any]:
        return {
            "matchExpressions": [{"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": [zone]}]
        }

    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [term("elsewhere"), term(TEST_ZONES[0])]
            }
        }
    }
    zones = zones_requirement(*TEST_ZONES)
    assert _launch(daemonset(affinity=affinity), requirements=zones) not in SMALL_2CPU


def test_an_arm_only_daemonset_leaves_amd64_types_their_room() -> None:
    # Overhead per instance type: the arm64 daemon only counts on arm64 types, so the cheap
    # amd64 2-CPU types still take the 1.5-CPU pod.
    ds = daemonset(nodeSelector={LABEL_ARCH_STABLE: "arm64"})
    assert _launch(ds) in SMALL_2CPU
    assert _launch(ds) != "m6g.large"


def test_an_in_flight_node_keeps_room_for_its_daemon_pods() -> None:
    # NewExistingNode subtracts the compatible daemon pods not yet running on the node: a
    # 2-CPU in-flight node with a 1-CPU daemon takes one 800m pod (still pending), not two.
    karpenter = Karpenter([nodepool()], builtin_catalogue(TEST_ZONES), daemonsets=[daemonset()])
    cluster = ClusterState([], [])
    a = make_pod("a").req(cpu="800m").obj()
    b = make_pod("b").req(cpu="800m").obj()
    first = karpenter.run_once(0.0, cluster, [a])
    [launch] = first.launched
    assert launch.instance_type in SMALL_2CPU
    second = karpenter.run_once(1.0, cluster, [a, b])
    assert second.scheduled_on_existing == {launch.name: ["default/a"]}
    assert [x.pods for x in second.launched] == [("default/b",)]


def test_a_daemon_pod_already_running_takes_no_more_room() -> None:
    karpenter = Karpenter([nodepool()], builtin_catalogue(TEST_ZONES), daemonsets=[daemonset()])
    node = (
        make_node("n1")
        .label("karpenter.sh/nodepool", "default")
        .capacity(cpu="2", memory="4Gi", pods="10")
    )
    cluster = ClusterState([node.obj()], [])
    agent = make_pod("agent-x").namespace("kube-system").req(cpu="1").owner("DaemonSet", "agent")
    cluster.bind(with_node_name(agent.obj(), "n1"), "n1")
    result = karpenter.run_once(0.0, cluster, [make_pod("p").req(cpu="1").obj()])
    assert result.launched == []
    assert result.scheduled_on_existing == {"n1": ["default/p"]}
