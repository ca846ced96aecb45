"""NodeResourcesFit: does the pod fit in what the node has left, and how full would it be.

PreFilter computes the pod's requests once (the larger of its running containers and any init
container phase, pod-level requests and overhead included). Filter compares them, resource by
resource, with the node's allocatable minus what its pods already request: a node short of a
resource fails with ``Insufficient <resource>`` (and ``Too many pods`` when its ``pods``
allocatable is used up); when the pod alone asks for more than the node's allocatable, no
preemption can help and the code is UnschedulableAndUnresolvable. Extended resources listed in
``ignoredResources`` or whose domain is in ``ignoredResourceGroups`` are not checked.

PreScore/Score apply the configured scoring strategy (LeastAllocated by default;
MostAllocated; RequestedToCapacityRatio with its shape) over the configured resources.

Upstream: pkg/scheduler/framework/plugins/noderesources/fit.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.resource_names import (
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    is_extended_resource_name,
)
from topospread.api.types import Pod
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from topospread.framework.status import SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.noderesources.args import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesFitArgs,
    config_error,
    decode_node_resources_fit_args,
    validate_node_resources_fit_args,
)
from topospread.plugins.noderesources.least_allocated import least_resource_scorer
from topospread.plugins.noderesources.most_allocated import most_resource_scorer
from topospread.plugins.noderesources.requested_to_capacity_ratio import (
    requested_to_capacity_ratio_scorer,
)
from topospread.plugins.noderesources.resource_allocation import ResourceAllocationScorer
from topospread.plugins.noderesources.resource_helpers import (
    NodeResources,
    Resource,
    has_restartable_init_container,
    node_resources,
    pod_level_enabled,
    pod_requests,
)

NAME: Final = "NodeResourcesFit"

REASON_TOO_MANY_PODS: Final = "Too many pods"
REASON_INSUFFICIENT_CPU: Final = "Insufficient cpu"
REASON_INSUFFICIENT_MEMORY: Final = "Insufficient memory"
REASON_INSUFFICIENT_EPHEMERAL_STORAGE: Final = "Insufficient ephemeral-storage"
ERR_REASON_SIDECAR_DISABLED: Final = (
    "Pod has a restartable init container and the SidecarContainers feature is disabled"
)


def insufficient_reason(resource: str) -> str:
    """``Insufficient <resource>``, the reason for any resource the node is short of."""
    return f"Insufficient {resource}"


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """A resource the node is short of; ``unresolvable`` when the pod alone exceeds the
    node's allocatable (so evicting pods cannot make room).

    Upstream: InsufficientResource (fit.go, v1.35)
    """

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclass(slots=True)
class PreFilterState:
    """The pod's requests, computed once per cycle. Upstream: preFilterState (fit.go, v1.35)."""

    resource: Resource

    def clone(self) -> PreFilterState:
        # Never modified after PreFilter, so sharing is safe (upstream returns itself too).
        return self


@dataclass(slots=True)
class PreScoreState:
    """The pod's request of each scored resource. Upstream: preScoreState (fit.go, v1.35)."""

    pod_requests: list[int]

    def clone(self) -> PreScoreState:
        # Never modified after PreScore, so sharing is safe (upstream returns itself too).
        return self


PRE_FILTER_STATE_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilter" + NAME)
PRE_SCORE_STATE_KEY: Final[StateKey[PreScoreState]] = StateKey("PreScore" + NAME)


def compute_pod_resource_request(pod: Pod, enable_pod_level_resources: bool) -> Resource:
    """The pod's requests as int64 values: cpu in millicores, scalar resources by name.

    Upstream: computePodResourceRequest (fit.go, v1.35)
    """
    result = Resource()
    result.set_max_resource(
        pod_requests(pod, skip_pod_level_resources=not enable_pod_level_resources)
    )
    return result


def fits_request(
    pod_request: Resource,
    node_info: NodeInfo,
    features: Features,
    ignored_extended_resources: Collection[str] = (),
    ignored_resource_groups: Collection[str] = (),
) -> list[InsufficientResource]:
    """Every resource the node is short of for this request, in upstream's order: pods, cpu,
    memory, ephemeral-storage, then scalar resources (sorted by name here; upstream walks a
    Go map). A resource the pod requests zero of is never short.

    Upstream: fitsRequest (fit.go, v1.35)
    """
    return fits_totals(
        pod_request,
        node_resources(node_info, features),
        ignored_extended_resources,
        ignored_resource_groups,
    )


def fits_totals(
    pod_request: Resource,
    totals: NodeResources,
    ignored_extended_resources: Collection[str] = (),
    ignored_resource_groups: Collection[str] = (),
) -> list[InsufficientResource]:
    """``fits_request`` over a node's totals (its allocatable and the sums over its pods)."""
    alloc = totals.allocatable
    used = totals.requested
    out: list[InsufficientResource] = []
    if totals.pod_count + 1 > alloc.allowed_pod_number:
        out.append(
            InsufficientResource(
                RESOURCE_PODS,
                REASON_TOO_MANY_PODS,
                1,
                totals.pod_count,
                alloc.allowed_pod_number,
            )
        )
    if (
        pod_request.milli_cpu == 0
        and pod_request.memory == 0
        and pod_request.ephemeral_storage == 0
        and not pod_request.scalar_resources
    ):
        return out
    if pod_request.milli_cpu > 0 and pod_request.milli_cpu > alloc.milli_cpu - used.milli_cpu:
        out.append(
            InsufficientResource(
                RESOURCE_CPU,
                REASON_INSUFFICIENT_CPU,
                pod_request.milli_cpu,
                used.milli_cpu,
                alloc.milli_cpu,
                pod_request.milli_cpu > alloc.milli_cpu,
            )
        )
    if pod_request.memory > 0 and pod_request.memory > alloc.memory - used.memory:
        out.append(
            InsufficientResource(
                RESOURCE_MEMORY,
                REASON_INSUFFICIENT_MEMORY,
                pod_request.memory,
                used.memory,
                alloc.memory,
                pod_request.memory > alloc.memory,
            )
        )
    storage = pod_request.ephemeral_storage
    if storage > 0 and storage > alloc.ephemeral_storage - used.ephemeral_storage:
        out.append(
            InsufficientResource(
                RESOURCE_EPHEMERAL_STORAGE,
                REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
                storage,
                used.ephemeral_storage,
                alloc.ephemeral_storage,
                storage > alloc.ephemeral_storage,
            )
        )
    for name in sorted(pod_request.scalar_resources):
        quantity = pod_request.scalar_resources[name]
        if quantity == 0:
            continue
        if is_extended_resource_name(name):
            # Extended resource names always have a domain ("example.com/gpu").
            group = name.split("/", 1)[0] if ignored_resource_groups else ""
            if name in ignored_extended_resources or group in ignored_resource_groups:
                continue
        capacity = alloc.scalar_resources.get(name, 0)
        in_use = used.scalar_resources.get(name, 0)
        if quantity > capacity - in_use:
            out.append(
                InsufficientResource(
                    name,
                    insufficient_reason(name),
                    quantity,
                    in_use,
                    capacity,
                    quantity > capacity,
                )
            )
    return out


def fits(pod: Pod, node_info: NodeInfo, features: Features) -> list[InsufficientResource]:
    """What the node is short of to host the pod (no resource is ignored).

    Upstream: Fits (fit.go, v1.35)
    """
    request = compute_pod_resource_request(pod, pod_level_enabled(features))
    return fits_request(request, node_info, features)


def _build_scorer(args: NodeResourcesFitArgs, features: Features) -> ResourceAllocationScorer:
    """The scoring strategy's scorer. Like upstream's, it leaves pod-level resources out of the
    incoming pod's requests: NewFit never passes the feature gate on to its scorer.

    Upstream: nodeResourceStrategyTypeMap and NewFit (fit.go, v1.35)
    """
    strategy = args.scoring_strategy
    if strategy is None:
        raise ConfigError("scoring strategy not specified")
    resources = list(strategy.resources)
    if strategy.type == LEAST_ALLOCATED:
        scorer = least_resource_scorer(resources)
    elif strategy.type == MOST_ALLOCATED:
        scorer = most_resource_scorer(resources)
    elif strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        param = strategy.requested_to_capacity_ratio
        if param is None:
            # Upstream dereferences the missing parameter and kube-scheduler crashes.
            raise ConfigError(
                "scoringStrategy.requestedToCapacityRatio: Required value: the "
                "RequestedToCapacityRatio strategy needs a shape (kube-scheduler v1.35 "
                "crashes without one)"
            )
        scorer = requested_to_capacity_ratio_scorer(resources, param.shape)
    else:
        raise ConfigError(f"scoring strategy {strategy.type} is not supported")
    return ResourceAllocationScorer(
        name=strategy.type, scorer=scorer, resources=resources, features=features
    )


class Fit:
    """Filters out nodes without room for the pod's requests; scores by the strategy.

    ``args`` must be defaulted (see ``decode_node_resources_fit_args``) and valid.
    Upstream: Fit and NewFit (fit.go, v1.35)
    """

    def __init__(self, args: NodeResourcesFitArgs, handle: Handle | None, features: Features):
        self.handle = handle
        self.features = features
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        self.enable_pod_level_resources = pod_level_enabled(features)
        self.enable_sidecar_containers = features.enable_sidecar_containers
        self.scorer = _build_scorer(args, features)

    @property
    def name(self) -> str:
        return NAME

    # -- PreFilter / Filter -------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Upstream: Fit.PreFilter (fit.go, v1.35)."""
        if not self.enable_sidecar_containers and has_restartable_init_container(pod):
            return None, new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_SIDECAR_DISABLED)
        state.write(
            PRE_FILTER_STATE_KEY,
            PreFilterState(compute_pod_resource_request(pod, self.enable_pod_level_resources)),
        )
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        """The state does not depend on other pods. Upstream: Fit.PreFilterExtensions."""
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: Fit.Filter (fit.go, v1.35)."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError as err:
            return as_status(f'error reading "{err.args[0]}" from cycleState: not found')
        return self.filter_totals(s, node_resources(node_info, self.features))

    def filter_totals(self, s: PreFilterState, totals: NodeResources) -> Status:
        """Filter's verdict on a node with these totals (what preemption's dry run asks as it
        gives victims back, without rebuilding the node)."""
        insufficient = fits_totals(
            s.resource, totals, self.ignored_resources, self.ignored_resource_groups
        )
        if not insufficient:
            return SUCCESS
        code = (
            Code.UnschedulableAndUnresolvable
            if any(r.unresolvable for r in insufficient)
            else Code.Unschedulable
        )
        return new_status(code, *(r.reason for r in insufficient))

    # -- PreScore / Score ---------------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Upstream: Fit.PreScore (fit.go, v1.35)."""
        state.write(
            PRE_SCORE_STATE_KEY, PreScoreState(self.scorer.calculate_pod_resource_request_list(pod))
        )
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Without PreScore's state the requests are computed here. Upstream: Fit.Score."""
        try:
            requests = state.read(PRE_SCORE_STATE_KEY).pod_requests
        except StateNotFoundError:
            requests = self.scorer.calculate_pod_resource_request_list(pod)
        return self.scorer.score(pod, node_info, requests)

    def score_extensions(self) -> None:
        return None


def new(args: Any | None, handle: Handle, features: Features) -> Fit:
    """Decode, default and validate the args, then build the plugin; invalid args raise
    ConfigError with the scheduler's field errors. Upstream: NewFit (fit.go, v1.35)
    """
    parsed = decode_node_resources_fit_args(args)
    errors = validate_node_resources_fit_args(parsed)
    if errors:
        raise config_error(errors)
    return Fit(parsed, handle, features)


__all__ = [
    "ERR_REASON_SIDECAR_DISABLED",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "Fit",
    "InsufficientResource",
    "PreFilterState",
    "PreScoreState",
    "compute_pod_resource_request",
    "fits",
    "fits_request",
    "fits_totals",
    "insufficient_reason",
    "new",
]
