"""The spread docs' scale-from-zero limitation, cluster-autoscaler and Karpenter side by side.

Three zones; zone-1 and zone-2 have one full node each, zone-3 has none (its node group is at 0).
Three replicas with a zone spread (maxSkew 1, DoNotSchedule) are pending.

- cluster-autoscaler (one node group per zone, the zone-3 group at size 0): it runs the
  scheduler's filters on each group's template node in its own fork, so each group can take just
  one replica before the skew blocks the next; the three options are equal and the expander
  picks one. One node is added per loop (kubernetes/autoscaler#9150), and the empty zone is only
  one of three equal choices.
- Karpenter (one NodePool over all three zones): its topology knows every zone of the NodePool's
  requirements, zone-3 included with count 0, so one pass launches three nodeclaims, one per zone.
"""

from __future__ import annotations

from builders import make_pod
from karpenter_helpers import nodepool, zones_requirement
from topospread.api.types import LABEL_TOPOLOGY_ZONE, Pod
from topospread.autoscaler.clusterautoscaler import AutoscalingOptions, ClusterAutoscaler, NodeGroup
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.karpenter import Karpenter, builtin_catalogue
from topospread.cluster.state import ClusterState

ZONES = ("zone-1", "zone-2", "zone-3")
CAPACITY = {"cpu": "2", "memory": "4Gi", "pods": "17"}


def groups() -> list[NodeGroup]:
    return [
        NodeGroup(f"pool-{z}", 0, 10, 0 if z == "zone-3" else 1, capacity=CAPACITY, zones=[z])
        for z in ZONES
    ]


def cluster_with_two_full_zones() -> ClusterState:
    cluster = ClusterState([], [])
    for g in groups()[:2]:
        node = g.template_node(g.new_node_name(0))
        cluster.add_node(node)
        filler = make_pod(f"filler-{g.zone}").req(cpu="1900m").obj()
        cluster.bind(with_node_name(filler, node.metadata.name), node.metadata.name)
    return cluster


def replicas() -> list[Pod]:
    return [
        make_pod(f"web-{i}")
        .label("app", "web")
        .req(cpu="1")
        .spread_constraint(1, LABEL_TOPOLOGY_ZONE, selector={"matchLabels": {"app": "web"}})
        .obj()
        for i in range(3)
    ]


def test_cluster_autoscaler_adds_one_node_per_loop_from_equal_zone_options() -> None:
    chosen = set()
    for seed in range(4):
        ca = ClusterAutoscaler(groups(), AutoscalingOptions(seed=seed))
        result = ca.run_once(0.0, cluster_with_two_full_zones(), replicas())
        [info] = result.scale_up.scale_up_infos
        assert info.new_size - info.current_size == 1
        chosen.add(info.group)
    assert chosen <= {"pool-zone-1", "pool-zone-2", "pool-zone-3"}


def test_karpenter_spreads_into_the_zone_without_nodes_in_one_pass() -> None:
    pool = nodepool(requirements=zones_requirement(*ZONES))
    karpenter = Karpenter([pool], builtin_catalogue(ZONES))
    result = karpenter.run_once(0.0, cluster_with_two_full_zones(), replicas())
    assert result.pod_errors == {}
    assert sorted(launch.zone for launch in result.launched) == list(ZONES)
    assert all(len(launch.pods) == 1 for launch in result.launched)


def test_karpenter_without_the_zone_in_its_nodepool_leaves_it_empty() -> None:
    # The remedy needs the zone in the NodePool: limited to zone-1 and zone-2 (the domains the
    # scheduler sees), the three replicas go 2 + 1 into those zones and zone-3 stays empty.
    pool = nodepool(requirements=zones_requirement("zone-1", "zone-2"))
    karpenter = Karpenter([pool], builtin_catalogue(ZONES))
    result = karpenter.run_once(0.0, cluster_with_two_full_zones(), replicas())
    assert result.pod_errors == {}
    per_zone: dict[str, int] = {}
    for launch in result.launched:
        per_zone[launch.zone] = per_zone.get(launch.zone, 0) + len(launch.pods)
    assert per_zone == {"zone-1": 2, "zone-2": 1}
