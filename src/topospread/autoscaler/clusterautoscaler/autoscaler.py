"""``ClusterAutoscaler.run_once``: one cluster-autoscaler loop over a cluster and its pending pods.

The facade owns only what cluster-autoscaler itself keeps between loops: each node group's
target size, when it last asked a group for nodes (for ``max-node-provision-time`` and the
back-off that follows a timeout), since when nodes are unneeded, and the times of the last
scale-up, deletion and failure (the scale-down cooldowns). It never changes the cluster it is
given: it works on its own snapshot and returns what it decided; the caller adds the nodes
(``NodeGroup.template_node``) and removes the ones it names.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from topospread.api.types import DaemonSet, Pod, PodDisruptionBudget
from topospread.autoscaler.clusterautoscaler.clusterstate import (
    Readiness,
    is_cluster_healthy,
    readiness_of,
    unhealthy_groups,
)
from topospread.autoscaler.clusterautoscaler.clusterstate import (
    upcoming_nodes as upcoming_nodes_of,
)
from topospread.autoscaler.clusterautoscaler.drainability import (
    DrainContext,
    RemainingPdbTracker,
    is_daemonset_pod,
    is_mirror_pod,
    is_static_pod,
)
from topospread.autoscaler.clusterautoscaler.expander import build_expander
from topospread.autoscaler.clusterautoscaler.nodegroup import (
    NodeGroup,
    copy_template_node,
    node_group_of,
    with_node_name,
)
from topospread.autoscaler.clusterautoscaler.nodeinfos import TemplateNodeInfoProvider
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions, parse_go_duration
from topospread.autoscaler.clusterautoscaler.scaledown import (
    RecentlyUnremovable,
    ScaleDownResult,
    UnneededNodes,
    plan_scale_down,
)
from topospread.autoscaler.clusterautoscaler.scaleup import (
    SCALE_UP_NOT_TRIED,
    SCALE_UP_SUCCESSFUL,
    ScaleUpOrchestrator,
    ScaleUpResult,
)
from topospread.autoscaler.clusterautoscaler.snapshot import ClusterSnapshot, PredicateChecker
from topospread.cluster.state import ClusterState
from topospread.framework.config import SchedulerConfig, default_config
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry

# The wall clock the model's seconds are counted from by default (the drain rules compare
# the pods' deletion and creation timestamps with it); a caller whose clock starts elsewhere
# sets ``ClusterAutoscaler.clock_origin``.
CLOCK_ORIGIN = datetime(1970, 1, 1, tzinfo=UTC)
# Upstream: podScaleUpDelayAnnotationKey, unschedulablePodTimeBuffer and
# unschedulablePodWithGpuTimeBuffer (core/static_autoscaler.go), gpu.ResourceNvidiaGPU.
POD_SCALE_UP_DELAY_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/pod-scale-up-delay"
UNSCHEDULABLE_POD_TIME_BUFFER: Final = 2.0
UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER: Final = 30.0
RESOURCE_NVIDIA_GPU: Final = "nvidia.com/gpu"
# Upstream: RunOnce's event when the cluster is unhealthy (ClusterUnhealthy).
CLUSTER_UNHEALTHY: Final = "Cluster is unhealthy"

AllNew = Callable[[Sequence[Pod]], bool]


def _key_of(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def _requests_gpu(pod: Pod) -> bool:
    """Upstream: gpu.PodRequestsGpu (a container requests nvidia.com/gpu)."""
    return any(RESOURCE_NVIDIA_GPU in c.resources.requests for c in pod.spec.containers)


@dataclass(slots=True)
class ProvisioningTimeout:
    """A group that did not deliver its nodes within max-node-provision-time."""

    group: str
    requested: int
    registered: int
    backoff_until: float


@dataclass(slots=True)
class RunOnceResult:
    """What one loop decided: the scale-up, the scale-down, timeouts and the target sizes."""

    now: float
    scale_up: ScaleUpResult
    scale_down: ScaleDownResult | None
    timeouts: list[ProvisioningTimeout] = field(default_factory=list)
    target_sizes: dict[str, int] = field(default_factory=dict)
    # False when too many nodes were unready to autoscale at all this loop.
    healthy: bool = True


@dataclass(slots=True)
class _Backoff:
    until: float
    duration: float


def drained_pods(snapshot: ClusterSnapshot, draining: Collection[str]) -> list[Pod]:
    """The pods still on the nodes whose scale-down drain is in progress, as pending pods:
    the ones their controllers will recreate (not DaemonSet, mirror or static pods), not
    already terminating, without their node name.

    Upstream: currentlyDrainedNodesPodListProcessor (core/podlistprocessor/
    currently_drained_nodes.go), FilterRecreatablePods and ClearPodNodeNames (utils/pod)
    """
    out = []
    for name in sorted(draining):
        info = snapshot.get(name)
        if info is None:
            continue
        for pod in info.pods:
            if pod.metadata.deletion_timestamp is not None:
                continue
            if is_mirror_pod(pod) or is_static_pod(pod) or is_daemonset_pod(pod):
                continue
            out.append(with_node_name(pod, ""))
    return out


class ClusterAutoscaler:
    """cluster-autoscaler's loop on the project's scheduler framework.

    Upstream: StaticAutoscaler.RunOnce (core/static_autoscaler.go)
    """

    def __init__(
        self,
        groups: Iterable[NodeGroup],
        options: AutoscalingOptions | None = None,
        *,
        config: SchedulerConfig | None = None,
        registry: Registry | None = None,
        features: Features = DEFAULT_FEATURES,
        daemonsets: Sequence[DaemonSet] = (),
        reuse_snapshot: bool = True,
    ) -> None:
        self.options = options if options is not None else AutoscalingOptions()
        self.groups = {g.name: dataclasses.replace(g) for g in groups}
        config = config if config is not None else default_config()
        self.profile = config.profiles[0]
        if registry is None:
            from topospread.plugins.registry import IN_TREE

            registry = IN_TREE
        self.registry = registry
        self.features = features
        self.daemonsets = list(daemonsets)
        self.rng = random.Random(self.options.seed)
        self.expander = build_expander(self.options.expander, self.rng, self.options.priorities)
        self.unneeded = UnneededNodes()
        self.recently_unremovable = RecentlyUnremovable()
        self.templates = TemplateNodeInfoProvider()
        self.requested_at: dict[str, float] = {}
        # Each group's scale-up in progress: how many nodes it still owes (its Increase).
        self.increase: dict[str, int] = {}
        self.backoff: dict[str, _Backoff] = {}
        self.last_scale_up = float("-inf")
        self.last_scale_down_delete = float("-inf")
        self.last_scale_down_fail = float("-inf")
        # The wall-clock time of the caller's second 0.
        self.clock_origin = CLOCK_ORIGIN
        # One snapshot (and checker) kept across loops and synced to the cluster each loop;
        # False builds both afresh every loop (the reference: tests compare the two).
        self.reuse_snapshot = reuse_snapshot
        self._kept: PredicateChecker | None = None

    def _provisioning_timeouts(
        self, now: float, registered: Counter[str], with_not_started: Counter[str]
    ) -> list[ProvisioningTimeout]:
        """Groups whose requested nodes did not all come up in time (``registered`` leaves
        out the NotStarted nodes): the target falls back to the registered nodes, NotStarted
        ones included (``with_not_started``: the cloud drops only the instances that never
        registered), and the group backs off (doubling up to the max back-off).

        Upstream: ClusterStateRegistry's scale-up request timeout and exponential back-off,
        fixNodeGroupSize (it compares the target with Registered)
        """
        # A back-off whose last failure is older than --node-group-backoff-reset-timeout is
        # forgotten: the next failure starts from the initial duration again.
        # Upstream: exponentialBackoff.RemoveStaleBackoffData (updateScaleRequests)
        reset = self.options.node_group_backoff_reset_timeout
        for name, b in list(self.backoff.items()):
            if b.until - b.duration + reset < now:
                del self.backoff[name]
        out = []
        for name, since in list(self.requested_at.items()):
            group = self.groups[name]
            if registered[name] >= group.target_size:
                del self.requested_at[name]
                self.increase.pop(name, None)
                continue
            # Upstream: the request times out once its ExpectedAddTime is before now.
            if now - since <= self.options.max_node_provision_time:
                continue
            previous = self.backoff.get(name)
            duration = self.options.initial_node_group_backoff_duration
            if previous is not None:
                # The same duration while still backed off (concurrent failures), doubled
                # (up to the max) after it ran out. Upstream: exponentialBackoff.Backoff
                duration = previous.duration
                if previous.until < now:
                    duration = min(duration * 2, self.options.max_node_group_backoff_duration)
            self.backoff[name] = _Backoff(now + duration, duration)
            kept = with_not_started[name]
            out.append(ProvisioningTimeout(name, group.target_size, kept, now + duration))
            group.target_size = kept
            del self.requested_at[name]
            self.increase.pop(name, None)
        return out

    def node_deletion_failed(self, now: float) -> None:
        """The caller could not start deleting a node this autoscaler chose (upstream:
        StartDeletion returned an error, e.g. the ToBeDeleted taint could not be set):
        scale-down pauses for --scale-down-delay-after-failure. A drain that fails later, its
        evictions refused until --max-pod-eviction-time, does not pause it (upstream's drain
        runs after StartDeletion has returned)."""
        self.last_scale_down_fail = now

    def _split_expendable(
        self, pending: Sequence[Pod], node_names: Collection[str]
    ) -> tuple[list[Pod], list[Pod]]:
        """The pending pods scale-up may help, and the pods waiting for the preemption of
        lower-priority pods on their nominated node (``status.nominatedNodeName`` names a node
        of the cluster): those go onto that node in the snapshot and trigger nothing. Pods
        below --expendable-pods-priority-cutoff are in neither (a pod without a priority is
        not expendable); a pod nominated to a node that is gone is an ordinary one.

        Upstream: filterOutExpendable.Process and FilterOutExpendableAndSplit
        (core/podlistprocessor/filter_out_expendable.go, core/utils/pod.go)
        """
        unschedulable: list[Pod] = []
        waiting: list[Pod] = []
        cutoff = self.options.expendable_pods_priority_cutoff
        for pod in pending:
            if pod.spec.priority is not None and pod.spec.priority < cutoff:
                continue
            nominated = pod.status.nominated_node_name
            if nominated and nominated in node_names:
                waiting.append(pod)
            else:
                unschedulable.append(pod)
        return unschedulable, waiting

    def _is_young(self, now: float, created: Mapping[str, float]) -> Callable[[Pod], bool]:
        """Whether a pod is no older than --new-pod-scale-up-delay (or its pod-scale-up-delay
        annotation, when it is a longer valid duration): it triggers no scale-up yet. A pod
        with no creation time is old.

        Upstream: filterOutYoungPods (core/static_autoscaler.go), applied after the pod list
        processors: a young pod still takes its room on the nodes it fits.
        """

        def young(pod: Pod) -> bool:
            key = f"{pod.metadata.namespace}/{pod.metadata.name}"
            if key not in created:
                return False
            delay = self.options.new_pod_scale_up_delay
            annotated = pod.metadata.annotations.get(POD_SCALE_UP_DELAY_ANNOTATION)
            if annotated is not None:
                try:
                    own = parse_go_duration(annotated)
                except ValueError:
                    own = delay  # upstream logs the parse error and keeps the flag's delay
                delay = max(delay, own)
            return not now - created[key] > delay

        return young

    def _all_pods_are_new(self, now: float, created: Mapping[str, float]) -> AllNew:
        """Whether the oldest of the pods no node fits is younger than 2s (30s for the
        oldest GPU pod): pods the scheduler has only just rejected.

        Upstream: allPodsAreNew (unschedulablePodTimeBuffer, unschedulablePodWithGpuTimeBuffer)
        """

        def all_new(pods: Sequence[Pod]) -> bool:
            times = [created.get(_key_of(p), float("-inf")) for p in pods]
            if times and min(times) + UNSCHEDULABLE_POD_TIME_BUFFER > now:
                return True
            gpu = [t for p, t in zip(pods, times, strict=True) if _requests_gpu(p)]
            return bool(gpu) and min(gpu) + UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER > now

        return all_new

    def run_once(
        self,
        now: float,
        cluster: ClusterState,
        pending: Sequence[Pod],
        pdbs: Sequence[PodDisruptionBudget] = (),
        created: Mapping[str, float] | None = None,
        node_created: Mapping[str, float] | None = None,
        draining: Collection[str] = (),
        ready_since: Mapping[str, float] | None = None,
    ) -> RunOnceResult:
        """One loop at ``now`` (seconds on the caller's clock) over ``cluster`` (not modified)
        and its ``pending`` pods; ``created`` (``namespace/name`` -> seconds on that clock,
        the pods' creationTimestamp) lets --new-pod-scale-up-delay hold back young pods, and
        a loop whose unschedulable pods are all very new waits one iteration for more.

        ``node_created`` holds the nodes' creationTimestamps as seconds on the same clock (a
        node not in it is old): an autoscaled node that is not ready and younger than
        --max-node-startup-time is NotStarted (clusterstate.py), counts as upcoming, a template
        copy stands in for it in the snapshot, and it is never a scale-down candidate.
        ``draining`` names the nodes whose scale-down drain the caller is still carrying out:
        they use up --max-drain-parallelism and --max-scale-down-parallelism.
        ``ready_since`` holds when each node's readiness last changed, as seconds on the same
        clock (a node not in it changed long ago): a node Ready for less than a minute gives
        its group no template yet (nodeinfos.py).
        Upstream: RunOnce's registeredUpcoming (subtractNodesByName, RemoveNodeInfo) and
        ScaleDownBudgetProcessor.CropNodes (its deletions in progress)
        """
        created = created or {}
        pending, waiting = self._split_expendable(pending, cluster.infos)
        readiness = readiness_of(
            (info.node for info in cluster.list()), now, node_created or {}, self.options
        )
        starting = {
            n for g in self.groups for n in readiness.per_group.get(g, Readiness()).not_started
        }
        registered = Counter(
            node_group_of(info.node) for info in cluster.list() if info.name not in starting
        )
        with_not_started = Counter(node_group_of(info.node) for info in cluster.list())
        timeouts = self._provisioning_timeouts(now, registered, with_not_started)
        targets = {name: g.target_size for name, g in self.groups.items()}
        # Upstream: BackoffStatus: backed off until the back-off's end is before now.
        backoff = {name for name, b in self.backoff.items() if not b.until < now}
        # Only a group with a scale-up in progress that is not backed off has upcoming nodes
        # (its NotStarted nodes among them): a target another step raised, or an instance
        # whose Node is gone, is no upcoming node, and its NotStarted nodes stay as they are.
        # Upstream: ClusterStateRegistry.GetUpcomingNodes ("no active scale-up request",
        # "backed-off node group")
        in_progress = {g for g in self.requested_at if g not in backoff}
        not_started = {
            n for g in in_progress for n in readiness.per_group.get(g, Readiness()).not_started
        }
        nodes = [info.node for info in cluster.list() if info.name not in not_started]
        # Upstream: TemplateNodeInfoRegistry.Recompute, before the health check.
        templates = self.templates.process(
            cluster.list(),
            self.groups,
            self.daemonsets,
            now,
            ready_since or {},
            self.options.taint_config,
        )
        if not is_cluster_healthy(readiness, self.options):
            # Upstream: "Cluster is not ready for autoscaling": nothing this loop, and the
            # unneeded nodes are forgotten (CleanUpUnneededNodes).
            self.unneeded.since.clear()
            up = ScaleUpResult(SCALE_UP_NOT_TRIED, message=CLUSTER_UNHEALTHY)
            return RunOnceResult(now, up, None, timeouts, targets, healthy=False)
        unhealthy = unhealthy_groups(readiness, targets, self.increase, self.options)
        checker = self._checker(cluster)
        snapshot = checker.snapshot
        snapshot.fork()
        try:
            for name in not_started:
                if snapshot.get(name) is not None:
                    snapshot.remove_node(name)
            # Upcoming nodes join the snapshot, so pods that will fit them do not trigger more.
            upcoming_nodes = []
            upcoming = upcoming_nodes_of(readiness, targets)
            for name, count in [(g, n) for g, n in upcoming.items() if g in in_progress]:
                for i in range(count):
                    node, ds_pods = copy_template_node(templates[name], f"{name}-upcoming-{i}")
                    snapshot.add_node(node, ds_pods)
                    upcoming_nodes.append(node)
            # Pods waiting for a preemption take their nominated node's room, unchecked.
            # Upstream: filterOutExpendable.addPreemptingPodsToSnapshot (ForceAddPod)
            for pod in waiting:
                nominated = pod.status.nominated_node_name
                if snapshot.get(nominated) is not None:
                    snapshot.add_pod(with_node_name(pod, nominated), nominated)
            orchestrator = ScaleUpOrchestrator(
                checker, list(self.groups.values()), templates, self.options, self.expander
            )
            scale_up = orchestrator.scale_up(
                [*pending, *drained_pods(snapshot, draining)],
                len(nodes) + len(upcoming_nodes),
                [*nodes, *upcoming_nodes],
                backoff,
                self._all_pods_are_new(now, created),
                unhealthy,
                self._is_young(now, created),
            )
            if scale_up.result == SCALE_UP_SUCCESSFUL:
                for info in scale_up.scale_up_infos:
                    self.groups[info.group].target_size = info.new_size
                    # A scale-up adding nodes to a group with one in progress moves the
                    # request's time (and so its max-node-provision-time deadline) to now:
                    # the nodes just asked for get their full time to come up. Upstream:
                    # registerOrUpdateScaleUpNoLock ("shift Time and ExpectedAddTime")
                    if info.delta > 0:
                        self.requested_at[info.group] = now
                    self.increase[info.group] = self.increase.get(info.group, 0) + info.delta
                self.last_scale_up = now
            scale_down = None
            if self.options.scale_down_enabled:
                scale_down = self._scale_down(
                    now, checker, cluster, pdbs, scale_up, not_started, len(draining)
                )
            return RunOnceResult(
                now,
                scale_up,
                scale_down,
                timeouts,
                {name: g.target_size for name, g in self.groups.items()},
            )
        finally:
            # The loop's what-ifs (upcoming nodes, pods placed) are undone: the snapshot is
            # the cluster again for the next loop's sync.
            snapshot.revert()

    def _checker(self, cluster: ClusterState) -> PredicateChecker:
        """The loop's predicate checker on a snapshot of ``cluster``: with ``reuse_snapshot``
        the last loop's snapshot brought up to date (ClusterSnapshot.sync), its scheduler
        framework and fast-path vectors kept; otherwise (the reference) built afresh. The
        checker's round-robin search starts at the first node either way."""
        kept = self._kept
        if kept is not None and self.reuse_snapshot:
            kept.snapshot.sync(cluster)
            kept.reset_search()
            return kept
        snapshot = ClusterSnapshot(cluster)
        checker = PredicateChecker(snapshot, self.profile, self.registry, self.features)
        if self.reuse_snapshot:
            self._kept = checker
        return checker

    def _scale_down(
        self,
        now: float,
        checker: PredicateChecker,
        cluster: ClusterState,
        pdbs: Sequence[PodDisruptionBudget],
        scale_up: ScaleUpResult,
        not_started: Collection[str] = (),
        draining: int = 0,
    ) -> ScaleDownResult:
        opts = self.options
        in_cooldown = (
            scale_up.result in (SCALE_UP_SUCCESSFUL, SCALE_UP_NOT_TRIED)
            or now - self.last_scale_up < opts.scale_down_delay_after_add
            or now - self.last_scale_down_delete < opts.scale_down_delay_after_delete_effective
            or now - self.last_scale_down_fail < opts.scale_down_delay_after_failure
        )
        real = [
            checker.snapshot.get(info.name)
            for info in cluster.list()
            if info.name not in not_started
        ]
        infos = [i for i in real if i is not None]
        candidates = [i for i in infos if node_group_of(i.node) in self.groups]
        ctx = DrainContext(
            RemainingPdbTracker(list(pdbs)),
            cluster.objects,
            self.clock_origin + timedelta(seconds=now),
        )
        result = plan_scale_down(
            checker,
            candidates,
            [i.name for i in infos],
            self.groups,
            opts,
            self.unneeded,
            ctx,
            now,
            in_cooldown=in_cooldown,
            draining=draining,
            recent=self.recently_unremovable,
        )
        for removed in result.removed:
            self.groups[removed.group].target_size -= 1
            self.unneeded.since.pop(removed.node, None)
        if result.removed:
            self.last_scale_down_delete = now
        return result
