"""Which pending pods a cluster-autoscaler loop tries to help: upstream's default pod list
processors in order (core/podlistprocessor: filterOutExpendable with its pods waiting for a
preemption, currentlyDrainedNodes, filterOutSchedulable, filterOutDaemonSet), then
filterOutYoungPods (core/static_autoscaler.go)."""

from __future__ import annotations

import msgspec

from builders import make_pod
from test_ca_autoscaler import cluster_of, group, web
from topospread.api.types import Pod
from topospread.autoscaler.clusterautoscaler import AutoscalingOptions, ClusterAutoscaler
from topospread.autoscaler.clusterautoscaler.scaleup import (
    SCALE_UP_NOT_NEEDED,
    SCALE_UP_SUCCESSFUL,
)


def nominated(pod: Pod, node: str) -> Pod:
    status = msgspec.structs.replace(pod.status, nominated_node_name=node)
    return msgspec.structs.replace(pod, status=status)


def prioritised(pod: Pod, priority: int) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, priority=priority))


def test_a_pod_waiting_for_preemption_takes_its_nominated_nodes_room_and_triggers_nothing() -> None:
    # ng-0 has 3 of its 4 cpus free. A 3-cpu pod nominated to ng-0 (its victims not gone yet)
    # is forced onto it: it triggers nothing, and the 2-cpu pod that would have fit ng-0 no
    # longer does, so it alone triggers the scale-up.
    ca = ClusterAutoscaler([group("ng")])
    cluster = cluster_of(ca, [web(0, "1", "ng-0")])
    waiting = nominated(web(1, "3"), "ng-0")
    out = ca.run_once(0, cluster, [waiting, web(2, "2")])
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    assert out.scale_up.pods_triggered_scale_up == ["default/web-2"]
    assert out.scale_up.pods_fit_existing == []
    assert [(i.group, i.new_size) for i in out.scale_up.scale_up_infos] == [("ng", 2)]


def test_a_pod_nominated_to_a_node_that_is_gone_is_an_ordinary_pending_pod() -> None:
    ca = ClusterAutoscaler([group("ng")])
    cluster = cluster_of(ca, [web(0, "3", "ng-0")])
    out = ca.run_once(0, cluster, [nominated(web(1, "3"), "ng-9")])
    assert out.scale_up.pods_triggered_scale_up == ["default/web-1"]


def test_an_expendable_pod_nominated_to_a_node_takes_no_room() -> None:
    ca = ClusterAutoscaler([group("ng")])
    cluster = cluster_of(ca, [web(0, "1", "ng-0")])
    low = prioritised(nominated(web(1, "3"), "ng-0"), -11)
    out = ca.run_once(0, cluster, [low, web(2, "2")])
    assert out.scale_up.result == SCALE_UP_NOT_NEEDED
    assert out.scale_up.pods_fit_existing == ["default/web-2"]


def test_a_pending_daemonset_pod_never_triggers_a_scale_up() -> None:
    # A new node cannot help a DaemonSet pod bound by affinity to its own node.
    ca = ClusterAutoscaler([group("ng")])
    cluster = cluster_of(ca, [web(0, "4", "ng-0")])
    ds = make_pod("agent-ng-0").owner("DaemonSet", "agent").req(cpu="1").obj()
    out = ca.run_once(0, cluster, [ds])
    assert out.scale_up.result == SCALE_UP_NOT_NEEDED
    assert out.scale_up.pods_remain_unschedulable == []
    assert out.target_sizes == {"ng": 1}


def test_a_young_pod_still_takes_the_room_it_fits_before_it_is_set_aside() -> None:
    # ng-0 has 2 cpus free. The young pod (higher priority, so packed first) takes them; it is
    # then too young to trigger anything, but the old pod no longer fits: it triggers the
    # scale-up. Set aside first, the young pod would have left the old one room.
    ca = ClusterAutoscaler([group("ng")], AutoscalingOptions(new_pod_scale_up_delay=30.0))
    cluster = cluster_of(ca, [web(0, "2", "ng-0")])
    young = prioritised(web(1, "2"), 100)
    old = web(2, "2")
    out = ca.run_once(100, cluster, [old, young], created={"default/web-1": 90})
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    assert out.scale_up.pods_fit_existing == ["default/web-1"]
    assert out.scale_up.pods_triggered_scale_up == ["default/web-2"]


def test_the_pods_on_a_node_being_drained_are_pending_pods_for_the_scale_up() -> None:
    # ng-1's drain is in progress (its evictions refused so far): its pod will be recreated,
    # and with no room on ng-0 it triggers a scale-up of its own.
    ca = ClusterAutoscaler([group("ng", size=2)])
    cluster = cluster_of(ca, [web(0, "3", "ng-0"), web(1, "3", "ng-1")])
    out = ca.run_once(0, cluster, [], draining=["ng-1"])
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    assert out.scale_up.pods_triggered_scale_up == ["default/web-1"]
    assert [(i.group, i.new_size) for i in out.scale_up.scale_up_infos] == [("ng", 3)]
    # Without the drain nothing is pending.
    calm = ClusterAutoscaler([group("ng", size=2)])
    assert calm.run_once(0, cluster, []).scale_up.result == SCALE_UP_NOT_NEEDED


def test_a_kube_system_pod_older_than_the_bsp_timeout_no_longer_blocks_its_nodes_removal() -> None:
    # Upstream: rules/system's isBspPassedDisruptionTimeout, on the loop's wall clock
    # (ClusterAutoscaler.clock_origin: the simulation sets its own epoch there). ng-1 holds
    # a 500m kube-system pod with no budget; ng-0 has room for it.
    from datetime import UTC, datetime

    from ca_helpers import with_meta
    from topospread.api.types import ObjectMeta, ReplicaSet
    from topospread.autoscaler.clusterautoscaler.drainability import BlockingPodReason
    from topospread.autoscaler.clusterautoscaler.scaledown import UnremovableReason
    from topospread.cluster.snapshot import ObjectStore
    from topospread.cluster.state import ClusterState

    origin = datetime(2026, 1, 1, tzinfo=UTC)

    def run(created: str) -> tuple[list[str], dict[str, object]]:
        ca = ClusterAutoscaler([group("ng", size=2)])
        ca.clock_origin = origin
        sys_pod = make_pod("dns").namespace("kube-system").owner("ReplicaSet", "dns")
        pod = with_meta(sys_pod.req(cpu="500m").node("ng-1").obj(), creation_timestamp=created)
        nodes = [ca.groups["ng"].template_node(f"ng-{i}") for i in range(2)]
        objects = ObjectStore(
            replica_sets=[ReplicaSet(metadata=ObjectMeta(name="dns", namespace="kube-system"))]
        )
        cluster = ClusterState(nodes, [web(0, "3", "ng-0"), pod], objects)
        ca.run_once(0, cluster, [])
        out = ca.run_once(600, cluster, [])
        assert out.scale_down is not None
        why = {
            u.node: (u.reason, u.blocking_pod.reason if u.blocking_pod else None)
            for u in out.scale_down.unremovable
        }
        return [r.node for r in out.scale_down.removed], why

    # Created two hours before the clock's 0: past the hour, drainable; ng-1 goes.
    removed, _ = run("2025-12-31T22:00:00Z")
    assert removed == ["ng-1"]
    # Created at the clock's 0: ten minutes old at 600s, it blocks.
    removed, why = run("2026-01-01T00:00:00Z")
    assert removed == []
    assert why["ng-1"] == (UnremovableReason.BlockedByPod, BlockingPodReason.UnmovableKubeSystemPod)
