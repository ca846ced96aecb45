"""Scale-up: which node groups grow, by how much, and why the others do not.

The loop: pending pods that fit an existing or upcoming node are filtered out (placed one after
another by the scheduler's filters); the rest are grouped by equivalence; every node group that
is not backed off, below its max size and within the cluster's cpu and memory limits is tried:
the exemplar of each pod group must fit its template node (added to the snapshot beside the
real nodes, so spread sees every domain), then binpacking estimates the node count. The expander
picks one option; it is capped by ``max-nodes-total`` and the cpu/memory limits, then split
across the similar groups when ``balance-similar-node-groups`` is on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from topospread.api.types import Node, Pod
from topospread.autoscaler.clusterautoscaler.drainability import is_daemonset_pod
from topospread.autoscaler.clusterautoscaler.estimator import (
    BinpackingEstimator,
    EstimationLimiter,
    PodGroup,
    build_pod_groups,
    controller_key,
    node_limit,
    spec_key,
)
from topospread.autoscaler.clusterautoscaler.expander import ChainStrategy, Option
from topospread.autoscaler.clusterautoscaler.nodegroup import (
    GIB,
    NodeGroup,
    node_cores_and_memory,
    with_node_name,
)
from topospread.autoscaler.clusterautoscaler.nodegroupset import (
    ScaleUpInfo,
    balance_scale_up_between_groups,
    find_similar_node_groups,
    generic_ignored_labels,
)
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions
from topospread.autoscaler.clusterautoscaler.snapshot import PredicateChecker
from topospread.framework.types import NodeInfo

# Upstream: skippedreasons.go.
BACKOFF_REASON = "in backoff after failed scale-up"
MAX_LIMIT_REACHED_REASON = "max node group size reached"
NOT_READY_REASON = "not ready for scale-up"
# Upstream: status.ScaleUpResult values.
SCALE_UP_SUCCESSFUL = "ScaleUpSuccessful"
SCALE_UP_ERROR = "ScaleUpError"
SCALE_UP_NO_OPTIONS_AVAILABLE = "ScaleUpNoOptionsAvailable"
SCALE_UP_NOT_NEEDED = "ScaleUpNotNeeded"
SCALE_UP_NOT_TRIED = "ScaleUpNotTried"
MAX_NODES_TOTAL_REACHED = "max node total count already reached"


# Upstream: cloudprovider.ResourceLimiter.ID, the quota --cores-total and --memory-total make.
CLUSTER_WIDE_QUOTA = "cluster-wide"


def max_resource_limit_reached(resources: Sequence[str]) -> str:
    """The skip reason of a group whose next node exceeds the cluster-wide limits, the
    resources in cpu, memory order (upstream iterates a Go map: its order varies).

    Upstream: NewMaxResourceLimitReached (core/scaleup/orchestrator/skippedreasons.go)
    """
    return f'exceeded quota: "{CLUSTER_WIDE_QUOTA}", resources: {", ".join(resources)}'


@dataclass(slots=True)
class NoScaleUpInfo:
    """A pod no scale-up helps, with every group's reason. Upstream: status.NoScaleUpInfo"""

    pod: str
    rejected_node_groups: dict[str, str]
    skipped_node_groups: dict[str, str]


@dataclass(slots=True)
class ScaleUpResult:
    """Upstream: status.ScaleUpStatus (the parts a report shows)."""

    result: str
    scale_up_infos: list[ScaleUpInfo] = field(default_factory=list)
    best_option: str = ""
    estimated_nodes: int = 0
    pods_triggered_scale_up: list[str] = field(default_factory=list)
    pods_remain_unschedulable: list[NoScaleUpInfo] = field(default_factory=list)
    pods_awaiting_evaluation: list[str] = field(default_factory=list)
    pods_fit_existing: list[str] = field(default_factory=list)
    skipped_node_groups: dict[str, str] = field(default_factory=dict)
    similar_node_groups: list[str] = field(default_factory=list)
    message: str = ""


def _key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


def filter_out_schedulable(
    checker: PredicateChecker, pods: Sequence[Pod]
) -> tuple[list[Pod], list[Pod]]:
    """Pods that fit the nodes in the snapshot (existing and upcoming), placed there in turn by
    decreasing priority, and the pods that still need room.

    Upstream: FilterOutSchedulablePodListProcessor (processors/pods/filter_out_schedulable.go)
    """
    order = sorted(pods, key=lambda p: -(p.spec.priority or 0))
    fit: list[Pod] = []
    unschedulable: list[Pod] = []
    # NOTE: once a pod fails, its equivalent pods are not checked again: they would fail too,
    # unless a pod placed in between made room through pod affinity. Upstream's filter keeps
    # them unschedulable "based on caching" the same way.
    failed: set[tuple[object, bytes]] = set()
    for pod in order:
        key = (controller_key(pod) or id(pod), spec_key(pod))
        node = None if key in failed else checker.fits_any_node(pod)
        if node is None:
            failed.add(key)
            unschedulable.append(pod)
        else:
            checker.snapshot.add_pod(with_node_name(pod, node), node)
            fit.append(pod)
    return fit, unschedulable


@dataclass(slots=True)
class ResourcesLeft:
    """Cores and memory (bytes) the cluster limits still allow. Upstream: resource.Limits"""

    cores: int
    memory: int

    @classmethod
    def of(cls, nodes: Sequence[Node], options: AutoscalingOptions) -> ResourcesLeft:
        cores = memory = 0
        for node in nodes:
            c, m = node_cores_and_memory(node)
            cores += c
            memory += m
        return cls(
            max(0, options.cores_total.max - cores), max(0, options.memory_total.max * GIB - memory)
        )

    def exceeded(self, node: Node, count: int) -> list[str]:
        cores, memory = node_cores_and_memory(node)
        out = []
        if cores * count > self.cores:
            out.append("cpu")
        if memory * count > self.memory:
            out.append("memory")
        return out

    def apply_limits(self, node: Node, count: int) -> int:
        """Upstream: resource.Manager.ApplyLimits."""
        cores, memory = node_cores_and_memory(node)
        if cores:
            count = min(count, self.cores // cores)
        if memory:
            count = min(count, self.memory // memory)
        return count


class ScaleUpOrchestrator:
    """Upstream: orchestrator.ScaleUpOrchestrator.ScaleUp (core/scaleup/orchestrator)."""

    def __init__(
        self,
        checker: PredicateChecker,
        groups: Sequence[NodeGroup],
        templates: Mapping[str, NodeInfo],
        options: AutoscalingOptions,
        expander: ChainStrategy,
    ) -> None:
        self.checker = checker
        self.groups = list(groups)
        self.templates = templates
        self.options = options
        self.expander = expander
        self.ignored_labels = generic_ignored_labels(options.balancing_ignore_label)

    def schedulable_pod_groups(
        self, pod_groups: Sequence[PodGroup], group: NodeGroup
    ) -> list[PodGroup]:
        """The pod groups whose exemplar fits the group's template node beside the cluster.

        Upstream: ScaleUpOrchestrator.SchedulablePodGroups
        """
        template = self.templates[group.name]
        snapshot = self.checker.snapshot
        out = []
        with snapshot.forked():
            snapshot.add_node(template.node, list(template.pods))
            for eg in pod_groups:
                err = self.checker.check_predicates(eg.exemplar(), template.name)
                if err is None:
                    out.append(eg)
                    eg.schedulable = True
                    eg.schedulable_groups.append(group.name)
                else:
                    eg.scheduling_errors[group.name] = err
        return out

    def similar_groups(
        self,
        group: NodeGroup,
        schedulable: Mapping[str, list[PodGroup]],
        skipped: Mapping[str, str],
    ) -> list[NodeGroup]:
        """Similar groups that can take the same pods. Upstream: ComputeSimilarNodeGroups"""
        if not self.options.balance_similar_node_groups or not schedulable.get(group.name):
            return []
        wanted = {id(eg) for eg in schedulable[group.name]}
        out = []
        for g in find_similar_node_groups(group, self.groups, self.templates, self.ignored_labels):
            if g.name in skipped and skipped[g.name] == BACKOFF_REASON:
                continue
            if g.name in schedulable and wanted <= {id(eg) for eg in schedulable[g.name]}:
                out.append(g)
        return out

    def scale_up(
        self,
        pending: Sequence[Pod],
        node_count: int,
        nodes: Sequence[Node],
        backoff: set[str],
        all_new: Callable[[Sequence[Pod]], bool] | None = None,
        unhealthy: Collection[str] = (),
        young: Callable[[Pod], bool] | None = None,
    ) -> ScaleUpResult:
        """One scale-up decision for ``pending`` pods; ``node_count`` counts existing and
        upcoming nodes, ``nodes`` are every node of the cluster (for the cpu/memory totals).
        The pods that fit a node are placed there; of the rest, DaemonSet pods (a new node
        cannot help a pod bound to its node) and ``young`` pods trigger nothing.
        ``all_new`` says whether the pods no node fits are all very new: then the loop waits
        one iteration for more (ScaleUpNotTried). ``unhealthy`` groups are not ready for
        scale-up (too few of their nodes are ready).

        Upstream: the default pod list processors in order (filterOutSchedulable, then
        filterOutDaemonSetPodListProcessor), then filterOutYoungPods (static_autoscaler.go)
        """
        fit, unschedulable = filter_out_schedulable(self.checker, pending)
        fit_keys = [_key(p) for p in fit]
        unschedulable = [p for p in unschedulable if not is_daemonset_pod(p)]
        if young is not None:
            unschedulable = [p for p in unschedulable if not young(p)]
        if not unschedulable:
            return ScaleUpResult(SCALE_UP_NOT_NEEDED, pods_fit_existing=fit_keys)
        if all_new is not None and all_new(unschedulable):
            return ScaleUpResult(
                SCALE_UP_NOT_TRIED,
                pods_awaiting_evaluation=[_key(p) for p in unschedulable],
                pods_fit_existing=fit_keys,
            )
        pod_groups = build_pod_groups(unschedulable)
        left = ResourcesLeft.of(nodes, self.options)
        skipped: dict[str, str] = {}
        valid: list[NodeGroup] = []
        for g in self.groups:
            if g.name in unhealthy:
                skipped[g.name] = NOT_READY_REASON
            elif g.name in backoff:
                skipped[g.name] = BACKOFF_REASON
            elif g.target_size >= g.max_size:
                skipped[g.name] = MAX_LIMIT_REACHED_REASON
            elif g.name not in self.templates:
                skipped[g.name] = NOT_READY_REASON
            elif exceeded := left.exceeded(self.templates[g.name].node, 1):
                skipped[g.name] = max_resource_limit_reached(exceeded)
            else:
                valid.append(g)
        schedulable = {g.name: self.schedulable_pod_groups(pod_groups, g) for g in valid}
        options: list[Option] = []
        for g in valid:
            groups_for = schedulable[g.name]
            if not groups_for:
                continue
            similar = self.similar_groups(g, schedulable, skipped)
            limit = node_limit(
                max_nodes_per_scaleup=self.options.max_nodes_per_scaleup,
                group=g,
                similar_groups=similar,
                max_nodes_total=self.options.max_nodes_total,
                current_node_count=node_count,
            )
            estimator = BinpackingEstimator(self.checker, EstimationLimiter(limit))
            estimate = estimator.estimate(
                [eg.pods for eg in groups_for], self.templates[g.name], g.name
            )
            if estimate.node_count > 0 and estimate.pods:
                options.append(
                    Option(g.name, estimate.node_count, estimate.pods, [s.name for s in similar])
                )

        def remaining() -> list[NoScaleUpInfo]:
            return [
                NoScaleUpInfo(
                    _key(p), {k: v.message for k, v in eg.scheduling_errors.items()}, dict(skipped)
                )
                for eg in pod_groups
                if not eg.schedulable
                for p in eg.pods
            ]

        best = self.expander.best_option(options, self.templates) if options else None
        if best is None or best.node_count <= 0:
            return ScaleUpResult(
                SCALE_UP_NO_OPTIONS_AVAILABLE,
                pods_remain_unschedulable=remaining(),
                pods_fit_existing=fit_keys,
                skipped_node_groups=skipped,
            )
        new_nodes = best.node_count
        triggered = [_key(p) for p in best.pods]
        if (
            self.options.max_nodes_total > 0
            and new_nodes + node_count > self.options.max_nodes_total
        ):
            new_nodes = self.options.max_nodes_total - node_count
            if new_nodes < 1:
                return ScaleUpResult(
                    SCALE_UP_ERROR,
                    best_option=best.node_group,
                    estimated_nodes=best.node_count,
                    pods_triggered_scale_up=triggered,
                    message=MAX_NODES_TOTAL_REACHED,
                )
        new_nodes = left.apply_limits(self.templates[best.node_group].node, new_nodes)
        by_name = {g.name: g for g in self.groups}
        chosen = by_name[best.node_group]
        similar = self.similar_groups(chosen, schedulable, skipped)
        infos = balance_scale_up_between_groups([chosen, *similar], new_nodes)
        awaiting = [
            _key(p)
            for eg in pod_groups
            if eg.schedulable and best.node_group in eg.scheduling_errors
            for p in eg.pods
        ]
        return ScaleUpResult(
            SCALE_UP_SUCCESSFUL if infos else SCALE_UP_NO_OPTIONS_AVAILABLE,
            scale_up_infos=infos,
            best_option=best.node_group,
            estimated_nodes=best.node_count,
            pods_triggered_scale_up=triggered,
            pods_remain_unschedulable=remaining(),
            pods_awaiting_evaluation=awaiting,
            pods_fit_existing=fit_keys,
            skipped_node_groups=skipped,
            similar_node_groups=[s.name for s in similar],
        )
