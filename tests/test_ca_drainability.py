"""The drain rules, from upstream's rule tests (simulator/drainability/rules/*/rule_test.go):
each rule on its own, then the default rules in order (rules_test.go) and GetPodsToMove."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest

from builders import make_pod
from ca_helpers import with_meta
from topospread.api.types import (
    LabelSelector,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    PodDisruptionBudgetSpec,
    PodDisruptionBudgetStatus,
    PodStatus,
    ReplicationController,
    ReplicationControllerSpec,
)
from topospread.autoscaler.clusterautoscaler.drainability import (
    SAFE_TO_EVICT_LOCAL_VOLUMES_KEY,
    BlockingPodReason,
    DeleteOptions,
    DrainContext,
    Outcome,
    RemainingPdbTracker,
    drainable,
    get_pods_to_move,
    local_storage_rule,
    pdb_rule,
    system_rule,
)
from topospread.cluster.snapshot import ObjectStore

TEST_TIME = datetime(2020, 12, 18, 17, 0, 0, tzinfo=UTC)
RC = ReplicationController(
    metadata=ObjectMeta(name="rc", namespace="default"), spec=ReplicationControllerSpec(replicas=5)
)
KUBE_SYSTEM_RC = ReplicationController(
    metadata=ObjectMeta(name="rc", namespace="kube-system"),
    spec=ReplicationControllerSpec(replicas=5),
)
OBJECTS = ObjectStore(replication_controllers=[RC, KUBE_SYSTEM_RC])


def rc_pod(name: str = "bar", namespace: str = "default", **labels: str) -> Any:
    b = make_pod(name).namespace(namespace).node("node")
    for k, v in labels.items():
        b = b.label(k, v)
    return b.owner("ReplicationController", "rc", api_version="v1")


def pdb(namespace: str, allowed: int = 1, name: str = "pdb", **match: str) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=PodDisruptionBudgetSpec(selector=LabelSelector(match_labels=dict(match))),
        status=PodDisruptionBudgetStatus(disruptions_allowed=allowed),
    )


EMPTY_PDB = PodDisruptionBudget()


def ctx(pdbs: list[PodDisruptionBudget] = ()) -> DrainContext:  # type: ignore[assignment]
    return DrainContext(RemainingPdbTracker(list(pdbs)), OBJECTS, TEST_TIME)


OPTS = DeleteOptions()


def scratch(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "emptyDir": {"medium": ""}} for n in names]


LOCAL_STORAGE = [
    ("pod with EmptyDir", scratch("scratch"), None, True),
    ("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation", scratch("scratch"),
     "scratch", False),
    ("pod with EmptyDir and empty value for SafeToEvictLocalVolumesKey annotation",
     scratch("scratch"), "", True),
    ("pod with EmptyDir and non-matching value for SafeToEvictLocalVolumesKey annotation",
     scratch("scratch-1"), "scratch-2", True),
    ("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with matching values",
     scratch("scratch-1", "scratch-2", "scratch-3"), "scratch-1,scratch-2,scratch-3", False),
    ("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with non-matching values",
     scratch("scratch-1", "scratch-2", "scratch-3"), "scratch-1,scratch-2,scratch-5", True),
    ("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with some matching values",
     scratch("scratch-1", "scratch-2", "scratch-3"), "scratch-1,scratch-2", True),
    ("pod with EmptyDir and SafeToEvictLocalVolumesKey annotation empty values",
     scratch("scratch-1", "scratch-2", "scratch-3"), ",", True),
    ("pod with memory-backed EmptyDir", [{"name": "m", "emptyDir": {"medium": "Memory"}}],
     None, False),
    ("pod with HostPath", [{"name": "h", "hostPath": {"path": "/tmp"}}], None, True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("volumes", "annotation", "blocked"),
    [c[1:] for c in LOCAL_STORAGE],
    ids=[c[0] for c in LOCAL_STORAGE],
)
def test_local_storage_rule(volumes: list[Any], annotation: str | None, blocked: bool) -> None:
    pod = rc_pod().spec_field("volumes", volumes).obj()
    if annotation is not None:
        pod = with_meta(pod, annotations={SAFE_TO_EVICT_LOCAL_VOLUMES_KEY: annotation})
    status = local_storage_rule(pod, ctx(), OPTS)
    if blocked:
        assert status.outcome is Outcome.Block
        assert status.reason is BlockingPodReason.LocalStorageRequested
        assert status.message == "pod with local storage present: bar"
    else:
        assert status.outcome is Outcome.Undefined


SYSTEM = [
    ("empty PDB with RC-managed pod", "default", [EMPTY_PDB], False),
    ("kube-system PDB with matching kube-system pod", "kube-system",
     [pdb("kube-system", **{"k8s-app": "bar"})], False),
    ("kube-system PDB with non-matching kube-system pod", "kube-system",
     [pdb("kube-system", **{"k8s-app": "foo"})], True),
    ("kube-system PDB with default namespace pod", "default",
     [pdb("kube-system", **{"k8s-app": "bar"})], False),
    ("default namespace PDB with matching labels kube-system pod", "kube-system",
     [pdb("default", **{"k8s-app": "PDB-managed pod"})], True),
]  # fmt: skip


@pytest.mark.parametrize(
    ("namespace", "pdbs", "blocked"), [c[1:] for c in SYSTEM], ids=[c[0] for c in SYSTEM]
)
def test_system_rule(namespace: str, pdbs: list[PodDisruptionBudget], blocked: bool) -> None:
    pod = rc_pod(namespace=namespace, **{"k8s-app": "bar"}).obj()
    status = system_rule(pod, ctx(pdbs), OPTS)
    if blocked:
        assert status.reason is BlockingPodReason.UnmovableKubeSystemPod
        assert status.message == (
            "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: bar"
        )
    else:
        assert status.outcome is Outcome.Undefined


@pytest.mark.parametrize(
    ("name", "pdbs", "blocked"),
    [
        ("no pdbs", [], False),
        ("no matching pdbs", [pdb("default", 0, app="other")], False),
        ("matching pdb with disruptions allowed", [pdb("default", 1, app="web")], False),
        ("matching pdb without disruptions allowed", [pdb("default", 0, app="web")], True),
        ("one of two matching pdbs exhausted",
         [pdb("default", 1, "a", app="web"), pdb("default", 0, "b", app="web")], True),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_pdb_rule(name: str, pdbs: list[PodDisruptionBudget], blocked: bool) -> None:
    pod = rc_pod(app="web").obj()
    status = pdb_rule(pod, ctx(pdbs), OPTS)
    if blocked:
        assert status.reason is BlockingPodReason.NotEnoughPdb
        assert status.message == "not enough pod disruption budget to move default/bar"
    else:
        assert status.outcome is Outcome.Undefined


def annotated(pod: Pod, **annotations: str) -> Pod:
    return with_meta(pod, annotations=dict(annotations))


SAFE = "cluster-autoscaler.kubernetes.io/safe-to-evict"
PLAIN = make_pod("bar").node("node").obj()
DEFAULT_RULES = [
    ("replicated pod", rc_pod().obj(), Outcome.Undefined, BlockingPodReason.NoReason),
    ("not replicated pod", PLAIN, Outcome.Block, BlockingPodReason.NotReplicated),
    ("not replicated pod annotated safe-to-evict", annotated(PLAIN, **{SAFE: "true"}),
     Outcome.Drain, BlockingPodReason.NoReason),
    ("replicated pod annotated not safe-to-evict", annotated(rc_pod().obj(), **{SAFE: "false"}),
     Outcome.Block, BlockingPodReason.NotSafeToEvictAnnotation),
    ("mirror pod", annotated(PLAIN, **{"kubernetes.io/config.mirror": "x"}), Outcome.Skip,
     BlockingPodReason.NoReason),
    ("daemonset pod", make_pod("ds").node("node").owner("DaemonSet", "ds").obj(), Outcome.Drain,
     BlockingPodReason.NoReason),
    ("failed pod", msgspec.structs.replace(PLAIN, status=PodStatus(phase="Failed")),
     Outcome.Drain, BlockingPodReason.NoReason),
    ("long terminating pod", with_meta(PLAIN, deletion_timestamp="2020-12-18T16:58:00Z"),
     Outcome.Skip, BlockingPodReason.NoReason),
    ("recently terminating pod", with_meta(PLAIN, deletion_timestamp="2020-12-18T16:59:45Z"),
     Outcome.Block, BlockingPodReason.NotReplicated),
    ("pod of a missing replication controller",
     make_pod("gone").node("node").owner("ReplicationController", "missing", "v1").obj(),
     Outcome.Block, BlockingPodReason.ControllerNotFound),
    ("kube-system pod without pdb", rc_pod(namespace="kube-system").obj(), Outcome.Block,
     BlockingPodReason.UnmovableKubeSystemPod),
    ("pod of a custom controller", make_pod("c").node("node").owner("Custom", "c").obj(),
     Outcome.Block, BlockingPodReason.NotReplicated),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "outcome", "reason"),
    [c[1:] for c in DEFAULT_RULES],
    ids=[c[0] for c in DEFAULT_RULES],
)
def test_default_rules_in_upstreams_order(
    pod: Pod, outcome: Outcome, reason: BlockingPodReason
) -> None:
    status = drainable(pod, ctx(), OPTS)
    assert (status.outcome, status.reason) == (outcome, reason)


def test_options_turn_the_system_and_local_storage_rules_off() -> None:
    pod = rc_pod(namespace="kube-system").spec_field("volumes", scratch("s")).obj()
    assert drainable(pod, ctx(), OPTS).reason is BlockingPodReason.UnmovableKubeSystemPod
    opts = DeleteOptions(skip_nodes_with_system_pods=False)
    assert drainable(pod, ctx(), opts).reason is BlockingPodReason.LocalStorageRequested
    opts = DeleteOptions(skip_nodes_with_system_pods=False, skip_nodes_with_local_storage=False)
    assert drainable(pod, ctx(), opts).outcome is Outcome.Undefined


def test_get_pods_to_move_separates_daemonset_pods_and_stops_at_the_first_blocking_pod() -> None:
    web = rc_pod("web").obj()
    ds = make_pod("ds").node("node").owner("DaemonSet", "ds").obj()
    mirror = annotated(PLAIN, **{"kubernetes.io/config.mirror": "x"})
    to_move, daemonset, blocking = get_pods_to_move([web, ds, mirror], ctx(), OPTS)
    assert [p.metadata.name for p in to_move] == ["web"]
    assert [p.metadata.name for p in daemonset] == ["ds"]
    assert blocking is None
    to_move, daemonset, blocking = get_pods_to_move([web, PLAIN], ctx(), OPTS)
    assert (to_move, daemonset) == ([], [])
    assert blocking is not None
    assert (blocking.pod.metadata.name, blocking.reason) == ("bar", BlockingPodReason.NotReplicated)


def test_the_pdb_tracker_counts_disruptions_across_nodes() -> None:
    tracker = RemainingPdbTracker([pdb("default", 1, app="web")])
    a, b = rc_pod("a", app="web").obj(), rc_pod("b", app="web").obj()
    assert tracker.can_remove_pods([a]) == (True, True, None)
    # Upstream (basicRemainingPdbTracker.CanRemovePods): two pods of a budget that allows one
    # disruption may go, but not at once (the node is risky); none may once it allows none.
    assert tracker.can_remove_pods([a, b]) == (True, False, b)
    tracker.remove_pods([a])
    assert tracker.can_remove_pods([b]) == (False, False, b)
    status = pdb_rule(b, DrainContext(tracker, OBJECTS, TEST_TIME), OPTS)
    assert status.reason is BlockingPodReason.NotEnoughPdb


BSP_TIMEOUT = 60.0  # upstream's test: bspDisruptionTimeout = time.Minute


@pytest.mark.parametrize(
    ("created_offset", "blocked"),
    [
        pytest.param(-BSP_TIMEOUT - 1, False, id="allow non-pdb system pod existing for more"),
        pytest.param(-BSP_TIMEOUT + 1, True, id="block non-pdb system pod existing for less"),
        pytest.param(None, True, id="block non-pdb system pod with no creation time"),
    ],
)
def test_system_pods_without_a_budget_block_only_until_the_bsp_disruption_timeout(
    created_offset: float | None, blocked: bool
) -> None:
    # Upstream: rules/system's isBspPassedDisruptionTimeout (--blocking-system-pod-distruption-
    # timeout, 1h by default): a kube-system pod with no budget older than it is drainable.
    from datetime import timedelta

    pod = rc_pod(namespace="kube-system").obj()
    if created_offset is not None:
        stamp = (TEST_TIME + timedelta(seconds=created_offset)).strftime("%Y-%m-%dT%H:%M:%SZ")
        pod = with_meta(pod, creation_timestamp=stamp)
    ctx = DrainContext(RemainingPdbTracker([]), OBJECTS, TEST_TIME)
    opts = DeleteOptions(bsp_disruption_timeout=timedelta(seconds=BSP_TIMEOUT))
    status = system_rule(pod, ctx, opts)
    if blocked:
        assert status.outcome is Outcome.Block
        assert status.reason is BlockingPodReason.UnmovableKubeSystemPod
        assert status.message == (
            "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: bar"
        )
    else:
        assert status.outcome is Outcome.Drain


def test_the_bsp_disruption_timeout_defaults_to_an_hour_and_is_a_flag() -> None:
    from datetime import timedelta

    from topospread.autoscaler.clusterautoscaler.options import parse_options

    assert DeleteOptions().bsp_disruption_timeout == timedelta(hours=1)
    assert parse_options({}, "t").blocking_system_pod_distruption_timeout == 3600.0
    flag = {"blocking-system-pod-distruption-timeout": "30m"}
    assert parse_options(flag, "t").blocking_system_pod_distruption_timeout == 1800.0
