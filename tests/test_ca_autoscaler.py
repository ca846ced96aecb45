"""``ClusterAutoscaler.run_once`` end to end: skipped groups and their reasons, the cluster
limits, scale-down after scale-down-unneeded-time, the cooldowns, min size, and the back-off
after max-node-provision-time; and the options with upstream's names and defaults."""

from __future__ import annotations

import msgspec
import pytest

from builders import make_pod
from topospread.api.types import Node, NodeCondition, ObjectMeta, Pod, ReplicaSet
from topospread.autoscaler.clusterautoscaler import (
    AutoscalingOptions,
    ClusterAutoscaler,
    NodeGroup,
    parse_options,
)
from topospread.autoscaler.clusterautoscaler.scaledown import UnremovableReason
from topospread.autoscaler.clusterautoscaler.scaleup import (
    BACKOFF_REASON,
    MAX_LIMIT_REACHED_REASON,
    SCALE_UP_NO_OPTIONS_AVAILABLE,
    SCALE_UP_NOT_NEEDED,
    SCALE_UP_NOT_TRIED,
    SCALE_UP_SUCCESSFUL,
)
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.state import ClusterState
from topospread.errors import ManifestError

CAP = {"cpu": "4", "memory": "16Gi", "pods": "110"}


def group(name: str, size: int = 1, max_size: int = 5, min_size: int = 0, **kw) -> NodeGroup:  # type: ignore[no-untyped-def]
    return NodeGroup(name, min_size, max_size, size, capacity=kw.pop("capacity", CAP), **kw)


def web(i: int, cpu: str = "1", node: str = "") -> Pod:
    pod = make_pod(f"web-{i}").label("app", "web").owner("ReplicaSet", "web").req(cpu=cpu).obj()
    if node:
        pod = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))
    return pod


def cluster_of(ca: ClusterAutoscaler, pods: list[Pod] = ()) -> ClusterState:  # type: ignore[assignment]
    objects = ObjectStore(
        replica_sets=[ReplicaSet(metadata=ObjectMeta(name="web", namespace="default"))]
    )
    nodes = [
        g.template_node(g.new_node_name(i))
        for g in ca.groups.values()
        for i in range(g.target_size)
    ]
    return ClusterState(nodes, pods, objects)


def test_pending_pods_that_fit_existing_nodes_need_no_scale_up() -> None:
    ca = ClusterAutoscaler([group("ng")])
    out = ca.run_once(0, cluster_of(ca), [web(0)])
    assert out.scale_up.result == SCALE_UP_NOT_NEEDED
    assert out.scale_up.pods_fit_existing == ["default/web-0"]


def test_a_scale_up_binpacks_the_pending_pods_onto_new_nodes() -> None:
    ca = ClusterAutoscaler([group("ng")])
    full = [web(i, "3", "ng-0") for i in range(1)]
    out = ca.run_once(0, cluster_of(ca, full), [web(10 + i, "2") for i in range(5)])
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    # 5 pods of 2 cpu: 2 per 4-cpu node, 3 nodes (the existing node has 1 cpu free).
    assert [(i.group, i.current_size, i.new_size) for i in out.scale_up.scale_up_infos] == [
        ("ng", 1, 4)
    ]
    assert out.target_sizes == {"ng": 4}
    # The next loop counts the three requested nodes as upcoming: nothing more to add.
    # (The cluster is rebuilt from a fresh autoscaler: the requested nodes have not registered.)
    again = ca.run_once(
        10, cluster_of(ClusterAutoscaler([group("ng")]), full), [web(10 + i, "2") for i in range(5)]
    )
    assert again.scale_up.result == SCALE_UP_NOT_NEEDED


def test_groups_at_max_size_or_backed_off_are_skipped_with_upstreams_reasons() -> None:
    ca = ClusterAutoscaler([group("full", size=2, max_size=2), group("ok")])
    full = [web(i, "4", n) for i, n in enumerate(["full-0", "full-1", "ok-0"])]
    out = ca.run_once(0, cluster_of(ca, full), [web(9, "4")])
    assert out.scale_up.skipped_node_groups == {"full": MAX_LIMIT_REACHED_REASON}
    assert [i.group for i in out.scale_up.scale_up_infos] == ["ok"]


def test_pods_that_fit_no_template_remain_unschedulable_with_each_groups_reason() -> None:
    ca = ClusterAutoscaler([group("small", capacity={"cpu": "1", "memory": "1Gi", "pods": "10"})])
    out = ca.run_once(0, cluster_of(ca), [web(0, "2")])
    assert out.scale_up.result == SCALE_UP_NO_OPTIONS_AVAILABLE
    (info,) = out.scale_up.pods_remain_unschedulable
    assert info.pod == "default/web-0"
    assert info.rejected_node_groups == {"small": "Insufficient cpu"}


def test_max_nodes_total_caps_the_scale_up() -> None:
    ca = ClusterAutoscaler([group("ng", max_size=10)], AutoscalingOptions(max_nodes_total=3))
    full = [web(0, "4", "ng-0")]
    out = ca.run_once(0, cluster_of(ca, full), [web(i, "4") for i in range(1, 6)])
    assert [(i.group, i.new_size) for i in out.scale_up.scale_up_infos] == [("ng", 3)]
    assert out.scale_up.estimated_nodes == 2  # the limiter already held binpacking to 2


def test_the_cores_limit_skips_a_group_with_upstreams_message() -> None:
    options = parse_options({"cores-total": "0:4"}, "test")
    ca = ClusterAutoscaler([group("ng")], options)
    out = ca.run_once(0, cluster_of(ca, [web(0, "4", "ng-0")]), [web(1, "4")])
    # Upstream: NewMaxResourceLimitReached names the quota --cores-total and --memory-total
    # make (ResourceLimiter.ID: "cluster-wide") and the resources it exceeds.
    assert out.scale_up.skipped_node_groups == {
        "ng": 'exceeded quota: "cluster-wide", resources: cpu'
    }


def test_both_cluster_limits_are_named_cpu_first() -> None:
    options = parse_options({"cores-total": "0:4", "memory-total": "0:16"}, "test")
    ca = ClusterAutoscaler([group("ng")], options)
    out = ca.run_once(0, cluster_of(ca, [web(0, "4", "ng-0")]), [web(1, "4")])
    assert out.scale_up.skipped_node_groups == {
        "ng": 'exceeded quota: "cluster-wide", resources: cpu, memory'
    }


def idle_cluster() -> tuple[ClusterAutoscaler, ClusterState]:
    ca = ClusterAutoscaler([group("ng", size=3, min_size=1)])
    pods = [web(0, "3", "ng-0"), web(1, "500m", "ng-1")]
    return ca, cluster_of(ca, pods)


def test_a_node_is_removed_only_after_scale_down_unneeded_time() -> None:
    ca, cluster = idle_cluster()
    first = ca.run_once(0, cluster, [])
    assert first.scale_down is not None
    assert set(first.scale_down.unneeded) == {"ng-1", "ng-2"}
    assert first.scale_down.removed == []
    reasons = {u.node: u.reason for u in first.scale_down.unremovable}
    assert reasons == {
        "ng-0": UnremovableReason.NotUnderutilized,
        "ng-1": UnremovableReason.NotUnneededLongEnough,
        "ng-2": UnremovableReason.NotUnneededLongEnough,
    }
    assert ca.run_once(590, cluster, []).scale_down.removed == []  # type: ignore[union-attr]
    last = ca.run_once(600, cluster, [])
    assert last.scale_down is not None
    # Both go in one loop: ng-2 as an empty node, ng-1 as the one drain max-drain-parallelism
    # allows (its 500m pod moves to ng-0, which has 1 cpu free).
    assert sorted((r.node, r.empty) for r in last.scale_down.removed) == [
        ("ng-1", False),
        ("ng-2", True),
    ]
    assert last.target_sizes == {"ng": 1}


def test_min_size_keeps_nodes_however_idle() -> None:
    ca = ClusterAutoscaler([group("ng", size=2, min_size=2)])
    cluster = cluster_of(ca)
    ca.run_once(0, cluster, [])
    out = ca.run_once(600, cluster, [])
    assert out.scale_down is not None and out.scale_down.removed == []
    assert {u.reason for u in out.scale_down.unremovable} == {
        UnremovableReason.NodeGroupMinSizeReached
    }


def test_scale_down_waits_scale_down_delay_after_add() -> None:
    ca, cluster = idle_cluster()
    ca.last_scale_up = 100.0  # a scale-up 500 s before the first loop below
    out = ca.run_once(600, cluster, [])
    assert out.scale_down is not None and out.scale_down.result == "ScaleDownInCooldown"
    assert ca.run_once(1200, cluster, []).scale_down.removed != []  # type: ignore[union-attr]


def test_a_group_that_does_not_deliver_in_max_node_provision_time_backs_off() -> None:
    ca = ClusterAutoscaler(
        [group("slow"), group("fast")],
        AutoscalingOptions(expander=("priority",), priorities={10: ["slow"], 1: ["fast"]}),
    )
    cluster = cluster_of(ca, [web(0, "4", "slow-0"), web(1, "4", "fast-0")])
    out = ca.run_once(0, cluster, [web(2, "4")])
    assert [i.group for i in out.scale_up.scale_up_infos] == ["slow"]
    # Fifteen minutes later the node has not registered; the request times out once its
    # expected add time (0s + 15m) is before the loop's time (upstream's updateScaleRequests):
    # not at 900s, at the next loop.
    assert ca.run_once(900, cluster, [web(2, "4")]).timeouts == []
    late = ca.run_once(910, cluster, [web(2, "4")])
    assert [(t.group, t.requested, t.registered) for t in late.timeouts] == [("slow", 2, 1)]
    assert late.scale_up.skipped_node_groups == {"slow": BACKOFF_REASON}
    assert [i.group for i in late.scale_up.scale_up_infos] == ["fast"]


def test_a_second_scale_up_of_a_group_restarts_its_max_node_provision_time() -> None:
    """Upstream's registerOrUpdateScaleUpNoLock shifts a scale-up request's Time and
    ExpectedAddTime whenever more nodes are asked of the group: overlapping scale-ups time out
    max-node-provision-time after the last one, not the first (the 5,000-node zone sweep's
    groups backed off with their newest nodes still starting, issue 23)."""
    ca = ClusterAutoscaler([group("ng")])
    cluster = cluster_of(ca, [web(0, "4", "ng-0")])
    first = ca.run_once(0, cluster, [web(1, "4")])
    assert [(i.group, i.new_size) for i in first.scale_up.scale_up_infos] == [("ng", 2)]
    # The first node is still upcoming (it holds web-1); web-2 asks for one more.
    second = ca.run_once(600, cluster, [web(1, "4"), web(2, "4")])
    assert [(i.group, i.new_size) for i in second.scale_up.scale_up_infos] == [("ng", 3)]
    assert ca.run_once(900, cluster, [web(1, "4"), web(2, "4")]).timeouts == []
    assert ca.run_once(1500, cluster, [web(1, "4"), web(2, "4")]).timeouts == []
    late = ca.run_once(1510, cluster, [web(1, "4"), web(2, "4")])
    assert [(t.group, t.requested, t.registered) for t in late.timeouts] == [("ng", 3, 1)]
    assert late.scale_up.skipped_node_groups == {"ng": BACKOFF_REASON}


# Upstream's flag defaults (pkg/config/flags/flags.go): --expander has been least-waste since
# the random default was retired (FAQ: "least-waste - this is the default expander").
DEFAULTS = {
    "scan_interval": 10.0,
    "expander": ("least-waste",),
    "max_nodes_total": 0,
    "scale_down_enabled": True,
    "scale_down_utilization_threshold": 0.5,
    "scale_down_unneeded_time": 600.0,
    "scale_down_delay_after_add": 600.0,
    "max_node_provision_time": 900.0,
    "balance_similar_node_groups": False,
    "skip_nodes_with_local_storage": True,
    "skip_nodes_with_system_pods": True,
    "new_pod_scale_up_delay": 0.0,
    "expendable_pods_priority_cutoff": -10,
}


def test_options_default_as_upstreams_flags() -> None:
    options = parse_options({}, "test")
    assert {k: getattr(options, k) for k in DEFAULTS} == DEFAULTS
    assert (options.cores_total.min, options.cores_total.max) == (0, 320000)
    assert (options.memory_total.min, options.memory_total.max) == (0, 6400000)


def test_options_parse_flag_names_and_go_durations() -> None:
    options = parse_options(
        {
            "scale-down-unneeded-time": "1h30m",
            "scan-interval": "500ms",
            "expander": "priority,least-waste",
            "balance-similar-node-groups": True,
            "balancing-ignore-label": ["a", "b"],
        },
        "test",
    )
    assert options.scale_down_unneeded_time == 5400.0
    assert options.scan_interval == 0.5
    assert options.expander == ("priority", "least-waste")
    assert options.balancing_ignore_label == ("a", "b")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"scan-interval": "10"}, "scenario.yaml: autoscaler: scan-interval: Invalid value: '10': "
         'expected a duration such as "10s", "10m" or "1h30m"'),
        ({"expander": "cheapest"}, "scenario.yaml: autoscaler: expander: Invalid value: "
         "'cheapest': unknown expander 'cheapest' (known: random, most-pods, least-waste, "
         "priority)"),
        ({"scale-down-utilization-threshold": 2}, "scenario.yaml: autoscaler: "
         "scale-down-utilization-threshold: Invalid value: 2: expected a number between 0 and 1"),
        ({"max-nodes-total": -1}, "scenario.yaml: autoscaler: max-nodes-total: Invalid value: "
         "-1: must be 0 or more"),
        ({"cores-total": "10"}, "scenario.yaml: autoscaler: cores-total: Invalid value: '10': "
         'expected "<min>:<max>" with min <= max'),
        ([], "scenario.yaml: autoscaler: expected a mapping of cluster-autoscaler flags"),
    ],
)  # fmt: skip
def test_bad_options_name_the_file_the_section_and_the_flag(data: object, message: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_options(data, "scenario.yaml: autoscaler")
    assert str(err.value) == message


def test_an_unknown_option_is_named() -> None:
    with pytest.raises(
        ManifestError, match="scale-down-unneded-time: unknown cluster-autoscaler option"
    ):
        parse_options({"scale-down-unneded-time": "1m"}, "scenario.yaml: autoscaler")


def test_expendable_pods_and_pods_pending_for_less_than_the_delay_trigger_nothing() -> None:
    options = AutoscalingOptions(new_pod_scale_up_delay=30.0)
    ca = ClusterAutoscaler([group("ng")], options)
    cluster = cluster_of(ca, [web(0, "4", "ng-0")])
    low = msgspec.structs.replace(
        web(1, "4"), spec=msgspec.structs.replace(web(1).spec, priority=-11)
    )
    young = web(2, "4")
    out = ca.run_once(100, cluster, [low, young], created={"default/web-2": 80})
    assert out.scale_up.result == SCALE_UP_NOT_NEEDED
    # Upstream: a pod is considered once its age is past the delay (podAge > delay).
    out = ca.run_once(110, cluster, [low, young], created={"default/web-2": 80})
    assert out.scale_up.result == SCALE_UP_NOT_NEEDED
    out = ca.run_once(111, cluster, [low, young], created={"default/web-2": 80})
    assert out.scale_up.pods_triggered_scale_up == ["default/web-2"]


def annotated(pod: Pod, delay: str) -> Pod:
    annotations = {"cluster-autoscaler.kubernetes.io/pod-scale-up-delay": delay}
    return msgspec.structs.replace(
        pod, metadata=msgspec.structs.replace(pod.metadata, annotations=annotations)
    )


@pytest.mark.parametrize(
    ("option", "annotation", "waits_at_age_40"),
    [
        (0.0, "1m", True),  # a longer annotation wins
        (60.0, "10s", True),  # a shorter one is refused (upstream logs an error)
        (0.0, "soon", False),  # an unreadable one is ignored
        (30.0, None, False),
    ],
    ids=["annotation-longer", "annotation-shorter", "annotation-unreadable", "option"],
)
def test_the_pod_scale_up_delay_annotation_only_lengthens_the_delay(
    option: float, annotation: str | None, waits_at_age_40: bool
) -> None:
    ca = ClusterAutoscaler([group("ng")], AutoscalingOptions(new_pod_scale_up_delay=option))
    cluster = cluster_of(ca, [web(0, "4", "ng-0")])
    pod = web(1, "4") if annotation is None else annotated(web(1, "4"), annotation)
    out = ca.run_once(140, cluster, [pod], created={"default/web-1": 100})
    assert (out.scale_up.result == SCALE_UP_NOT_NEEDED) is waits_at_age_40


def test_a_loop_whose_unschedulable_pods_are_all_younger_than_2s_waits_one_iteration() -> None:
    # Upstream: allPodsAreNew with unschedulablePodTimeBuffer (2s); scale-down waits too.
    ca = ClusterAutoscaler([group("ng")])
    cluster = cluster_of(ca, [web(0, "4", "ng-0")])
    out = ca.run_once(101, cluster, [web(1, "4")], created={"default/web-1": 100})
    assert out.scale_up.result == SCALE_UP_NOT_TRIED
    assert out.scale_up.pods_awaiting_evaluation == ["default/web-1"]
    # One old pod among them is enough, and at 2s the pod is old enough.
    out = ca.run_once(101, cluster, [web(1, "4"), web(2, "4")], created={"default/web-1": 100})
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    ca = ClusterAutoscaler([group("ng")])
    out = ca.run_once(102, cluster, [web(1, "4")], created={"default/web-1": 100})
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL


@pytest.mark.parametrize("seed", range(5))
def test_scale_up_balance_groups(seed: int) -> None:
    # Upstream: TestScaleUpBalanceGroups (core/scaleup/orchestrator/orchestrator_test.go).
    cap = {"cpu": "100m", "memory": "1000", "pods": "100"}
    sizes = {"ng1": (1, 1, 1), "ng2": (1, 2, 1), "ng3": (1, 5, 1), "ng4": (1, 5, 3)}
    groups = [NodeGroup(name, lo, hi, size, capacity=cap) for name, (lo, hi, size) in sizes.items()]
    options = AutoscalingOptions(balance_similar_node_groups=True, seed=seed)
    ca = ClusterAutoscaler(groups, options)
    nodes = [g.template_node(f"{g.name}-node-{i}") for g in groups for i in range(g.target_size)]
    pods = [
        msgspec.structs.replace(p, spec=msgspec.structs.replace(p.spec, node_name=n.metadata.name))
        for n in nodes
        for p in [make_pod(f"{n.metadata.name}-pod").req(cpu="80m", memory="0").obj()]
    ]
    pending = [make_pod(f"test-pod-{i}").req(cpu="80m", memory="0").obj() for i in range(2)]
    out = ca.run_once(0, ClusterState(nodes, pods), pending)
    assert out.scale_up.result == SCALE_UP_SUCCESSFUL
    assert out.target_sizes == {"ng1": 1, "ng2": 2, "ng3": 2, "ng4": 3}


def test_scale_down_keeps_the_cluster_at_the_cores_minimum() -> None:
    options = parse_options({"cores-total": "8:320000"}, "test")
    ca = ClusterAutoscaler([group("ng", size=3, min_size=0)], options)
    cluster = cluster_of(ca)
    ca.run_once(0, cluster, [])
    out = ca.run_once(600, cluster, [])
    assert out.scale_down is not None
    # 12 cores, a minimum of 8: one 4-core node may go, not two.
    assert len(out.scale_down.removed) == 1
    assert UnremovableReason.MinimalResourceLimitExceeded in {
        u.reason for u in out.scale_down.unremovable
    }


def test_a_failed_deletion_pauses_scale_down() -> None:
    ca, cluster = idle_cluster()
    ca.run_once(0, cluster, [])
    ca.node_deletion_failed(500)
    out = ca.run_once(600, cluster, [])
    assert out.scale_down is not None and out.scale_down.result == "ScaleDownInCooldown"
    assert ca.run_once(680, cluster, []).scale_down.removed != []  # type: ignore[union-attr]


def unready(node: Node) -> Node:
    status = msgspec.structs.replace(
        node.status, conditions=[NodeCondition(type="Ready", status="Unknown")]
    )
    return msgspec.structs.replace(node, status=status)


def cluster_with_unready(ca: ClusterAutoscaler, lost: set[str], pods: list[Pod]) -> ClusterState:
    base = cluster_of(ca)
    nodes = [unready(i.node) if i.name in lost else i.node for i in base.list()]
    objects = ObjectStore(
        replica_sets=[ReplicaSet(metadata=ObjectMeta(name="web", namespace="default"))]
    )
    return ClusterState(nodes, pods, objects)


@pytest.mark.parametrize(
    ("lost", "healthy"),
    [(3, True), (4, False)],
    ids=["ok-total-unready-count", "past-both-limits"],
)
def test_a_group_with_too_few_ready_nodes_is_not_ready_for_scale_up(
    lost: int, healthy: bool
) -> None:
    # Upstream: IsNodeGroupHealthy: unready nodes past --ok-total-unready-count (3) and
    # --max-total-unready-percentage (45) of the group make it unsafe to scale up.
    ca = ClusterAutoscaler(
        [group("lost", size=4), group("other", size=6, max_size=10)],
        AutoscalingOptions(expander=("priority",), priorities={10: ["lost"], 1: ["other"]}),
    )
    names = {f"lost-{i}" for i in range(lost)}
    full = [web(i, "4", f"other-{i}") for i in range(6)]
    full += [web(10 + i, "4", f"lost-{i}") for i in range(4)]
    out = ca.run_once(0, cluster_with_unready(ca, names, full), [web(9, "4")])
    assert out.healthy
    chosen = [i.group for i in out.scale_up.scale_up_infos]
    if healthy:
        assert chosen == ["lost"]
    else:
        assert chosen == ["other"]
        assert out.scale_up.skipped_node_groups["lost"] == "not ready for scale-up"


def test_too_many_unready_nodes_stop_the_loop_and_forget_the_unneeded_nodes() -> None:
    # 5 of 10 unready: past 3 and past 45%: "Cluster is not ready for autoscaling".
    ca = ClusterAutoscaler([group("ng", size=10, max_size=20)])
    lost = {f"ng-{i}" for i in range(5)}
    ca.unneeded.since["ng-9"] = 0.0
    out = ca.run_once(10, cluster_with_unready(ca, lost, []), [web(0, "8")])
    assert not out.healthy and out.scale_down is None
    assert out.scale_up.result == SCALE_UP_NOT_TRIED and out.scale_up.scale_up_infos == []
    assert ca.unneeded.since == {}
    # 4 of 10 (40%) is within the percentage: the loop runs.
    ca = ClusterAutoscaler([group("ng", size=10, max_size=20)])
    out = ca.run_once(10, cluster_with_unready(ca, lost - {"ng-4"}, []), [web(0, "8")])
    assert out.healthy and out.scale_down is not None


def test_the_unready_options_parse_with_upstreams_defaults() -> None:
    options = parse_options({}, "test")
    assert (options.max_total_unready_percentage, options.ok_total_unready_count) == (45.0, 3)
    options = parse_options(
        {"max-total-unready-percentage": 10, "ok-total-unready-count": 0}, "test"
    )
    assert (options.max_total_unready_percentage, options.ok_total_unready_count) == (10.0, 0)
    with pytest.raises(ManifestError, match="max-total-unready-percentage: Invalid value: 150"):
        parse_options({"max-total-unready-percentage": 150}, "test")


def never_delivered(options: AutoscalingOptions) -> tuple[ClusterAutoscaler, ClusterState]:
    ca = ClusterAutoscaler([group("ng")], options)
    return ca, cluster_of(ca, [web(0, "4", "ng-0")])


def test_a_group_is_still_backed_off_when_its_back_off_ends_and_doubles_after() -> None:
    # Upstream: BackoffStatus is backed off until backoffUntil is before now; Backoff doubles
    # the duration when the last back-off had run out. Scale-up at 0s, timed out at 910s,
    # backed off to 1210s: still at 1210s, a new scale-up at 1220s, timed out at 2130s and
    # backed off twice as long (to 2730s).
    ca, cluster = never_delivered(AutoscalingOptions())
    pending = [web(1, "4")]
    ca.run_once(0, cluster, pending)
    (timeout,) = ca.run_once(910, cluster, pending).timeouts
    assert timeout.backoff_until == 1210
    assert ca.run_once(1210, cluster, pending).scale_up.skipped_node_groups == {
        "ng": BACKOFF_REASON
    }
    assert ca.run_once(1220, cluster, pending).scale_up.result == SCALE_UP_SUCCESSFUL
    (again,) = ca.run_once(2130, cluster, pending).timeouts
    assert again.backoff_until == 2130 + 600


def test_a_back_off_older_than_the_reset_timeout_starts_over() -> None:
    # Upstream: RemoveStaleBackoffData forgets a back-off whose last failure is older than
    # --node-group-backoff-reset-timeout (3h by default): the next failure backs off 5m again.
    ca, cluster = never_delivered(AutoscalingOptions(node_group_backoff_reset_timeout=1000.0))
    pending = [web(1, "4")]
    ca.run_once(0, cluster, pending)
    ca.run_once(910, cluster, pending)
    ca.run_once(1220, cluster, pending)
    (again,) = ca.run_once(2130, cluster, pending).timeouts
    assert again.backoff_until == 2130 + 300
    assert parse_options({}, "t").node_group_backoff_reset_timeout == 10800.0
