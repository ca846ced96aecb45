"""Scale-down: which nodes are unneeded, for how long, and which to remove now.

Every loop the planner (1) filters the autoscaled nodes by eligibility (not being deleted, not
annotated scale-down-disabled, ready unless unready scale-down is on, utilization below the
threshold), (2) simulates removing each eligible node: its pods must pass the drain rules and
every pod that moves must fit another node by the scheduler's own filters (successful removals
persist, so the next candidate sees the moved pods and one node fewer), (3) tracks since when
each node has been unneeded, and (4) after ``scale-down-unneeded-time`` deletes them, empty
nodes in bulk and at most ``max-drain-parallelism`` nodes with pods, keeping each group at or
above its min size.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Final

from topospread.api.resource import parse_quantity
from topospread.api.types import Node, Pod
from topospread.autoscaler.clusterautoscaler.clusterstate import is_node_ready
from topospread.autoscaler.clusterautoscaler.drainability import (
    BlockingPod,
    DeleteOptions,
    DrainContext,
    RemainingPdbTracker,
    get_pods_to_move,
    is_daemonset_pod,
    is_mirror_pod,
    is_pod_long_terminating,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import (
    GIB,
    NodeGroup,
    node_cores_and_memory,
    node_group_of,
    with_node_name,
)
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions
from topospread.autoscaler.clusterautoscaler.snapshot import ClusterSnapshot, PredicateChecker
from topospread.autoscaler.clusterautoscaler.taints import TO_BE_DELETED_TAINT
from topospread.framework.types import NodeInfo
from topospread.plugins.noderesources.resource_helpers import pod_requests

SCALE_DOWN_DISABLED_KEY = "cluster-autoscaler.kubernetes.io/scale-down-disabled"
# Upstream: MaxCloudProviderNodeDeletionTime's default (5m), how long a ToBeDeleted taint counts.
MAX_CLOUD_PROVIDER_NODE_DELETION_TIME = 300.0


class UnremovableReason(Enum):
    """Upstream: simulator.UnremovableReason (simulator/cluster.go), same names."""

    NoReason = "NoReason"
    ScaleDownDisabledAnnotation = "ScaleDownDisabledAnnotation"
    ScaleDownUnreadyDisabled = "ScaleDownUnreadyDisabled"
    NotAutoscaled = "NotAutoscaled"
    NotUnneededLongEnough = "NotUnneededLongEnough"
    NotUnreadyLongEnough = "NotUnreadyLongEnough"
    NodeGroupMinSizeReached = "NodeGroupMinSizeReached"
    MinimalResourceLimitExceeded = "MinimalResourceLimitExceeded"
    CurrentlyBeingDeleted = "CurrentlyBeingDeleted"
    NotUnderutilized = "NotUnderutilized"
    RecentlyUnremovable = "RecentlyUnremovable"
    NoPlaceToMovePods = "NoPlaceToMovePods"
    BlockedByPod = "BlockedByPod"
    UnexpectedError = "UnexpectedError"


@dataclass(frozen=True, slots=True)
class UtilizationInfo:
    """Upstream: utilization.Info."""

    cpu: float
    memory: float
    utilization: float
    resource_name: str


# NOTE: keyed by object identity, as the scheduler's own calculate_resource cache: API objects
# are frozen, so a pod's requests (a node's allocatable) never change while the same object
# lives, and the entry keeps the object alive, so its id cannot be reused. Every loop weighs
# every autoscaled node's pods: parsing their quantities again each loop dominated scale-down.
_REQUESTS_CACHE: dict[int, tuple[Pod, tuple[int, int]]] = {}
_ALLOCATABLE_CACHE: dict[int, tuple[Node, tuple[int, int]]] = {}
_CACHE_LIMIT: Final = 1 << 18
_UTILIZATION_KEY: Final = "clusterautoscaler/utilization"


def _cpu_and_memory(pod: Pod) -> tuple[int, int]:
    """The pod's cpu (millicores) and memory (bytes) requests, as utilization counts them."""
    hit = _REQUESTS_CACHE.get(id(pod))
    if hit is not None and hit[0] is pod:
        return hit[1]
    reqs = pod_requests(pod)
    cpu = reqs["cpu"].milli_value() if "cpu" in reqs else 0
    mem = reqs["memory"].value() if "memory" in reqs else 0
    if len(_REQUESTS_CACHE) >= _CACHE_LIMIT:
        _REQUESTS_CACHE.clear()
    _REQUESTS_CACHE[id(pod)] = (pod, (cpu, mem))
    return cpu, mem


def _allocatable(node: Node) -> tuple[int, int]:
    """The node's allocatable cpu (millicores) and memory (bytes)."""
    hit = _ALLOCATABLE_CACHE.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    alloc = node.status.allocatable
    out = (
        parse_quantity(alloc.get("cpu", 0)).milli_value(),
        parse_quantity(alloc.get("memory", 0)).value(),
    )
    if len(_ALLOCATABLE_CACHE) >= _CACHE_LIMIT:
        _ALLOCATABLE_CACHE.clear()
    _ALLOCATABLE_CACHE[id(node)] = (node, out)
    return out


def calculate_utilization(
    info: NodeInfo, *, ignore_daemonsets: bool, ignore_mirror_pods: bool, now: datetime
) -> UtilizationInfo:
    """Requests over allocatable for cpu and memory, the larger of the two as the node's
    utilization (memory's when they are equal); long-terminating pods do not count, and
    DaemonSet and mirror pods optionally not, their requests then taken off the allocatable.

    Upstream: utilization.Calculate and CalculateUtilizationOfResource
    """
    # NOTE: the NodeInfo's cache is cleared whenever its node or pods change, and the kept
    # snapshot's NodeInfos live across loops: an unchanged node is weighed once. Only a node
    # without deleted pods is cached, as only a deleted pod's weight depends on ``now``.
    key = f"{_UTILIZATION_KEY}/{int(ignore_daemonsets)}{int(ignore_mirror_pods)}"
    cached = info.cache.get(key)
    if cached is not None:
        hit: UtilizationInfo = cached
        return hit
    used_cpu = used_mem = 0
    # The ignored DaemonSet and mirror pods' requests come off the allocatable as well.
    ignored_cpu = ignored_mem = 0
    terminating = False
    for pod in info.pods:
        terminating = terminating or pod.metadata.deletion_timestamp is not None
        if (ignore_daemonsets and is_daemonset_pod(pod)) or (
            ignore_mirror_pods and is_mirror_pod(pod)
        ):
            pod_cpu, pod_mem = _cpu_and_memory(pod)
            ignored_cpu += pod_cpu
            ignored_mem += pod_mem
            continue
        if is_pod_long_terminating(pod, now):
            continue
        pod_cpu, pod_mem = _cpu_and_memory(pod)
        used_cpu += pod_cpu
        used_mem += pod_mem
    cpu_alloc, mem_alloc = _allocatable(info.node)
    cpu = used_cpu / (cpu_alloc - ignored_cpu) if cpu_alloc else 0.0
    mem = used_mem / (mem_alloc - ignored_mem) if mem_alloc else 0.0
    util = (
        UtilizationInfo(cpu, mem, cpu, "cpu")
        if cpu > mem
        else UtilizationInfo(cpu, mem, mem, "memory")
    )
    if not terminating:
        info.cache[key] = util
    return util


def is_node_being_deleted(node: Node, now: float) -> bool:
    """Upstream: actuation.IsNodeBeingDeleted (ToBeDeleted taint younger than 5 minutes)."""
    for taint in node.spec.taints:
        if taint.key == TO_BE_DELETED_TAINT:
            try:
                since = float(taint.value)
            except ValueError:
                return True
            return now - since < MAX_CLOUD_PROVIDER_NODE_DELETION_TIME
    return False


@dataclass(frozen=True, slots=True)
class UnremovableNode:
    """Upstream: simulator.UnremovableNode."""

    node: str
    reason: UnremovableReason
    blocking_pod: BlockingPod | None = None


@dataclass(slots=True)
class RecentlyUnremovable:
    """The nodes whose removal simulation failed, each with the time until which it is not
    simulated again (--unremovable-node-recheck-timeout after the failure).

    Upstream: unremovable.Nodes (core/scaledown/unremovable/nodes.go): Update, AddTimeout,
    IsRecent
    """

    until: dict[str, float] = field(default_factory=dict)

    def update(self, present: Collection[str], now: float) -> None:
        """Forget the nodes that are gone and the timeouts that have run out."""
        self.until = {n: t for n, t in self.until.items() if n in present and t > now}

    def is_recent(self, name: str) -> bool:
        return name in self.until


def filter_out_unremovable(
    infos: Sequence[NodeInfo],
    groups: Mapping[str, NodeGroup],
    options: AutoscalingOptions,
    now: float,
    wall_now: datetime,
    recent: RecentlyUnremovable | None = None,
) -> tuple[list[str], dict[str, UtilizationInfo], list[UnremovableNode]]:
    """The candidates that may be unneeded, every candidate's utilization, and the rest with
    their reason; a node whose removal simulation failed within
    --unremovable-node-recheck-timeout is RecentlyUnremovable and not looked at.
    Upstream: eligibility.Checker.FilterOutUnremovable"""
    eligible: list[str] = []
    utilization: dict[str, UtilizationInfo] = {}
    ineligible: list[UnremovableNode] = []
    taints = options.taint_config
    for info in infos:
        node = info.node
        reason = UnremovableReason.NoReason
        if recent is not None and recent.is_recent(info.name):
            ineligible.append(UnremovableNode(info.name, UnremovableReason.RecentlyUnremovable))
            continue
        if is_node_being_deleted(node, now):
            reason = UnremovableReason.CurrentlyBeingDeleted
        elif node.metadata.annotations.get(SCALE_DOWN_DISABLED_KEY) == "true":
            reason = UnremovableReason.ScaleDownDisabledAnnotation
        elif node_group_of(node) not in groups:
            reason = UnremovableReason.NotAutoscaled
        else:
            util = calculate_utilization(
                info,
                ignore_daemonsets=options.ignore_daemonsets_utilization,
                ignore_mirror_pods=options.ignore_mirror_pods_utilization,
                now=wall_now,
            )
            if not options.scale_down_unready_enabled and not is_node_ready(node, taints):
                reason = UnremovableReason.ScaleDownUnreadyDisabled
            else:
                utilization[info.name] = util
                # Upstream: isNodeAtOrBelowUtilizationThreshold (at the threshold is below).
                if util.utilization > options.scale_down_utilization_threshold:
                    reason = UnremovableReason.NotUnderutilized
        if reason is UnremovableReason.NoReason:
            eligible.append(info.name)
        else:
            ineligible.append(UnremovableNode(info.name, reason))
    return eligible, utilization, ineligible


@dataclass(slots=True)
class NodeToRemove:
    """A node whose pods all find a place elsewhere. Upstream: simulator.NodeToBeRemoved."""

    node: str
    group: str
    pods_to_reschedule: list[Pod]
    daemonset_pods: list[Pod]
    destinations: dict[str, str] = field(default_factory=dict)  # pod key -> node
    cores_and_memory: tuple[int, int] = (0, 0)
    # Its pods' budgets do not allow evicting them all at once: drained after the others.
    risky: bool = False


def simulate_node_removal(
    checker: PredicateChecker,
    node_name: str,
    destinations: set[str],
    ctx: DrainContext,
    opts: DeleteOptions,
) -> NodeToRemove | UnremovableNode:
    """Whether the node could go: its pods pass the drain rules and each moved pod fits one of
    ``destinations`` by the scheduler's filters (placed one after another). On success the move
    stays in the snapshot, the caller's fork decides whether it persists.

    Upstream: RemovalSimulator.SimulateNodeRemoval and findPlaceFor (simulator/cluster.go)
    """
    snapshot = checker.snapshot
    info = snapshot.get(node_name)
    if info is None:
        return UnremovableNode(node_name, UnremovableReason.UnexpectedError)
    to_move, daemonset, blocking = get_pods_to_move(list(info.pods), ctx, opts)
    if blocking is not None:
        return UnremovableNode(node_name, UnremovableReason.BlockedByPod, blocking)
    placed: dict[str, str] = {}
    snapshot.fork()
    for pod in to_move:
        snapshot.remove_pod(pod)
    for pod in to_move:
        # The pod is scheduled afresh: without its node name (upstream: ClearPodNodeNames).
        target = checker.fits_any_node_matching(
            with_node_name(pod, ""), lambda i: i.name in destinations and i.name != node_name
        )
        if target is None:
            snapshot.revert()
            return UnremovableNode(node_name, UnremovableReason.NoPlaceToMovePods)
        snapshot.add_pod(with_node_name(pod, target), target)
        placed[f"{pod.metadata.namespace}/{pod.metadata.name}"] = target
    snapshot.commit()
    return NodeToRemove(
        node_name,
        node_group_of(info.node),
        to_move,
        daemonset,
        placed,
        node_cores_and_memory(info.node),
    )


@dataclass(slots=True)
class UnneededNodes:
    """Since when each node has been unneeded, kept across loops.

    Upstream: unneeded.Nodes (core/scaledown/unneeded/nodes.go)
    """

    since: dict[str, float] = field(default_factory=dict)

    def update(self, names: Sequence[str], now: float) -> None:
        self.since = {n: self.since.get(n, now) for n in names}

    def unneeded_for(self, name: str, now: float) -> float:
        return now - self.since[name]


@dataclass(slots=True)
class RemovedNode:
    """A node the scale-down deletes, and why it could."""

    node: str
    group: str
    empty: bool
    unneeded_since: float
    utilization: float
    pods_to_reschedule: list[str]


@dataclass(slots=True)
class ScaleDownResult:
    """What one scale-down pass decided.

    Upstream: status.ScaleDownStatus (ScaleDownNodeDeleteStarted / ScaleDownNoUnneeded /
    ScaleDownInCooldown / ScaleDownNoNodeDeleted)
    """

    result: str
    removed: list[RemovedNode] = field(default_factory=list)
    unneeded: dict[str, float] = field(default_factory=dict)  # node -> unneeded since
    unremovable: list[UnremovableNode] = field(default_factory=list)
    utilization: dict[str, UtilizationInfo] = field(default_factory=dict)


SCALE_DOWN_IN_COOLDOWN = "ScaleDownInCooldown"
SCALE_DOWN_NO_UNNEEDED = "ScaleDownNoUnneeded"
SCALE_DOWN_NO_NODE_DELETED = "ScaleDownNoNodeDeleted"
SCALE_DOWN_NODE_DELETE_STARTED = "ScaleDownNodeDeleteStarted"


def removable_now(
    candidates: Sequence[NodeToRemove],
    groups: Mapping[str, NodeGroup],
    tracker: UnneededNodes,
    utilization: Mapping[str, UtilizationInfo],
    options: AutoscalingOptions,
    now: float,
    ready: Mapping[str, bool],
    above_min: tuple[int, int] = (2**62, 2**62),
    draining: int = 0,
) -> tuple[list[RemovedNode], list[UnremovableNode]]:
    """The unneeded nodes to delete in this loop: unneeded long enough, their group above its
    min size and the cluster above --cores-total and --memory-total's minimums (``above_min``:
    how many cores and bytes of memory it has above them), the empty ones first, then those
    with pods (the risky ones last); then cropped to --max-scale-down-parallelism (the empty
    ones first) and the nodes with pods to --max-drain-parallelism and what the empty ones
    left; ``draining``, the drains still in progress, use up both. A node that passes the
    checks takes its group's and the cluster's room even if the crop leaves it for a later
    loop, as upstream's checks come before the crop.

    Upstream: unneeded.Nodes.RemovableAt, planner.NodesToDelete (sortByRisk) and
    ScaleDownBudgetProcessor.CropNodes (core/scaledown/budgets/budgets.go)
    """
    skipped: list[UnremovableNode] = []
    sizes = {name: g.target_size for name, g in groups.items()}
    cores_left, memory_left = above_min
    empty: list[NodeToRemove] = []
    drain: list[NodeToRemove] = []
    for c in [
        *(c for c in candidates if not c.pods_to_reschedule),
        *(c for c in candidates if c.pods_to_reschedule),
    ]:
        group = groups[c.group]
        is_ready = ready.get(c.node, True)
        needed = options.scale_down_unneeded_time if is_ready else options.scale_down_unready_time
        if tracker.unneeded_for(c.node, now) < needed:
            reason = (
                UnremovableReason.NotUnneededLongEnough
                if is_ready
                else UnremovableReason.NotUnreadyLongEnough
            )
            skipped.append(UnremovableNode(c.node, reason))
            continue
        if sizes[group.name] - 1 < group.min_size:
            skipped.append(UnremovableNode(c.node, UnremovableReason.NodeGroupMinSizeReached))
            continue
        cores, memory = c.cores_and_memory
        if cores > cores_left or memory > memory_left:
            reason = UnremovableReason.MinimalResourceLimitExceeded
            skipped.append(UnremovableNode(c.node, reason))
            continue
        sizes[group.name] -= 1
        cores_left -= cores
        memory_left -= memory
        (drain if c.pods_to_reschedule else empty).append(c)
    drain = [c for c in drain if not c.risky] + [c for c in drain if c.risky]
    parallelism = options.max_scale_down_parallelism - draining
    empty = _crop_by_group(empty, parallelism)
    drain = _crop_by_group(
        drain, min(parallelism - len(empty), options.max_drain_parallelism - draining)
    )
    removed = []
    for c in (*empty, *drain):
        util = utilization.get(c.node)
        removed.append(
            RemovedNode(
                c.node,
                c.group,
                not c.pods_to_reschedule,
                tracker.since[c.node],
                util.utilization if util is not None else 0.0,
                [f"{p.metadata.namespace}/{p.metadata.name}" for p in c.pods_to_reschedule],
            )
        )
    return removed, skipped


def _crop_by_group(nodes: Sequence[NodeToRemove], budget: int) -> list[NodeToRemove]:
    """At most ``budget`` of ``nodes``, taken group by group (groups in the order their first
    node comes, each group's nodes in theirs). Upstream: ScaleDownBudgetProcessor.group and
    cropIndividualNodes (core/scaledown/budgets/budgets.go)"""
    by_group: dict[str, list[NodeToRemove]] = {}
    for c in nodes:
        by_group.setdefault(c.group, []).append(c)
    return [c for group in by_group.values() for c in group][: max(budget, 0)]


def unneeded_nodes_limit(options: AutoscalingOptions, unneeded_now: int) -> int:
    """How many unneeded nodes are worth finding: the ones known plus twice
    --max-scale-down-parallelism, never more than it times the loops in
    --scale-down-unneeded-time, plus one buffer.

    Upstream: Planner.unneededNodesLimit (core/scaledown/planner/planner.go)
    """
    n = options.max_scale_down_parallelism
    limit = unneeded_now + 2 * n
    loops = int(
        max(options.scale_down_unneeded_time, options.scan_interval) // options.scan_interval
    )
    return min(limit, n * loops + n)


def candidate_order(
    names: Sequence[str],
    snapshot: ClusterSnapshot,
    tracker: UnneededNodes,
    ctx: DrainContext,
    opts: DeleteOptions,
) -> list[str]:
    """The scale-down candidates in the order they are simulated: empty nodes first (no pod to
    move, none blocking, read without budgets or controllers), then the nodes already
    unneeded (so they keep their place and their clock), the rest in order.

    Upstream: ScaleDownCandidatesSortingProcessor with EmptySorting then PreviousCandidates
    (processors/scaledowncandidates; builder/autoscaler.go)
    """
    bare = DrainContext(RemainingPdbTracker([]), None, ctx.now)

    def is_empty(name: str) -> bool:
        info = snapshot.get(name)
        if info is None:
            return False
        to_move, _, blocking = get_pods_to_move(list(info.pods), bare, opts)
        return blocking is None and not to_move

    return sorted(names, key=lambda n: (not is_empty(n), n not in tracker.since))


def plan_scale_down(
    checker: PredicateChecker,
    candidates: Sequence[NodeInfo],
    destinations: Sequence[str],
    groups: Mapping[str, NodeGroup],
    options: AutoscalingOptions,
    tracker: UnneededNodes,
    ctx: DrainContext,
    now: float,
    *,
    in_cooldown: bool,
    draining: int = 0,
    recent: RecentlyUnremovable | None = None,
) -> ScaleDownResult:
    """One pass of the planner: eligibility, removal simulation, unneeded tracking, and the
    nodes to delete unless scale-down is in cooldown. The snapshot is left as it was.
    ``recent`` (kept across loops) holds the nodes whose simulation failed lately.

    Upstream: planner.UpdateClusterState, categorizeNodes and NodesToDelete
    (core/scaledown/planner/planner.go)
    """
    ready = {info.name: is_node_ready(info.node, options.taint_config) for info in candidates}
    if recent is not None:
        recent.update({info.name for info in checker.snapshot.node_infos()}, now)
    eligible, utilization, unremovable = filter_out_unremovable(
        candidates, groups, options, now, ctx.now, recent
    )
    opts = DeleteOptions(
        skip_nodes_with_system_pods=options.skip_nodes_with_system_pods,
        skip_nodes_with_local_storage=options.skip_nodes_with_local_storage,
        skip_nodes_with_custom_controller_pods=options.skip_nodes_with_custom_controller_pods,
        min_replica_count=options.min_replica_count,
        bsp_disruption_timeout=timedelta(seconds=options.blocking_system_pod_distruption_timeout),
    )
    snapshot = checker.snapshot
    order = candidate_order(eligible, snapshot, tracker, ctx, opts)
    dest = set(destinations)
    removable: list[NodeToRemove] = []
    limit = unneeded_nodes_limit(options, len(tracker.since))
    with snapshot.forked():
        for name in order:
            if len(removable) >= limit:
                break  # more unneeded nodes than scale-down could remove: not simulated
            outcome = simulate_node_removal(checker, name, dest, ctx, opts)
            if isinstance(outcome, UnremovableNode):
                unremovable.append(outcome)
                if recent is not None:
                    recent.until[name] = now + options.unremovable_node_recheck_timeout
                continue
            dest.discard(name)
            _, in_parallel, _ = ctx.pdbs.can_remove_pods(outcome.pods_to_reschedule)
            outcome.risky = not in_parallel
            ctx.pdbs.remove_pods(outcome.pods_to_reschedule)
            removable.append(outcome)
    tracker.update([r.node for r in removable], now)
    result = ScaleDownResult(
        SCALE_DOWN_NO_UNNEEDED,
        unneeded={r.node: tracker.since[r.node] for r in removable},
        unremovable=unremovable,
        utilization=utilization,
    )
    if in_cooldown:
        result.result = SCALE_DOWN_IN_COOLDOWN
        return result
    if not removable:
        return result
    cores = memory = 0
    for name in destinations:
        info = snapshot.get(name)
        if info is not None:
            c, m = node_cores_and_memory(info.node)
            cores, memory = cores + c, memory + m
    above_min = (cores - options.cores_total.min, memory - options.memory_total.min * GIB)
    removed, skipped = removable_now(
        removable, groups, tracker, utilization, options, now, ready, above_min, draining
    )
    result.unremovable.extend(skipped)
    result.removed = removed
    result.result = SCALE_DOWN_NODE_DELETE_STARTED if removed else SCALE_DOWN_NO_NODE_DELETED
    return result
