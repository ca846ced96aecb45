"""What a pod requests and what a node has, as the scheduler computes it.

- ``pod_requests``: a pod's effective requests (component-helpers ``PodRequests``): the sum of
  its regular containers and its sidecars (init containers with ``restartPolicy: Always``),
  or, if larger, what any init container needs while it runs (itself plus the sidecars started
  before it); then pod-level ``spec.resources.requests`` replace cpu, memory and hugepages when
  set (PodLevelResources, beta and on by default in v1.35); then ``spec.overhead`` is added.
- ``Resource``: the scheduler's int64 view of a resource list (millicores, bytes, the ``pods``
  count, scalar resources such as extended resources and hugepages).
- ``calculate_resource``: one bound pod's contribution to its node (``Requested``, and the
  cpu/memory ``NonZeroRequested`` where a missing container request counts as 100m / 200Mi).
- ``node_resources``: a node's allocatable and the totals of every pod on it, terminating pods
  included (the scheduler cache keeps a pod until it is deleted).

Not modelled: pod status. In-place resize (InPlacePodVerticalScaling, GA and locked on in
v1.35) makes a bound pod count, per container, the larger of its spec and its container
status's actual and allocated resources while a resize is in flight; outside a resize those
equal the spec, which is what is summed here. DRA-backed extended resources
(DRAExtendedResource) are alpha and off in v1.35, so upstream's delegation never applies.

Upstream: k8s.io/component-helpers/resource/helpers.go, pkg/scheduler/framework/types.go
(NodeInfo, PodInfo.CalculateResource, Resource), pkg/scheduler/util/utils.go and
pkg/apis/core/v1/helper/helpers.go, v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Final

import msgspec

from topospread.api.resource import ZERO, Quantity, parse_quantity
from topospread.api.resource_names import (
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_HUGE_PAGES_PREFIX,
    RESOURCE_MEMORY,
    RESOURCE_PODS,
    is_extended_resource_name,
    is_hugepage_resource_name,
    is_native_resource,
    is_prefixed_native_resource,
    is_scalar_resource_name,
)
from topospread.api.types import Container, Node, Pod
from topospread.framework.features import Features
from topospread.framework.types import NodeInfo

CONTAINER_RESTART_POLICY_ALWAYS: Final = "Always"

# What a container that requests no cpu / memory counts as when scoring (schedutil).
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024

ResourceList = dict[str, Quantity]
_EMPTY: Final[Mapping[str, Quantity]] = {}


def is_supported_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* may be set at pod level.

    Upstream: IsSupportedPodLevelResource (component-helpers/resource/helpers.go, v1.35)
    """
    return name in (RESOURCE_CPU, RESOURCE_MEMORY) or name.startswith(RESOURCE_HUGE_PAGES_PREFIX)


# ---------------------------------------------------------------------------------------------
# Pod requests (component-helpers)


def pod_level_enabled(features: Features) -> bool:
    """PodLevelResources: beta and on by default since v1.34."""
    return features.enable_pod_level_resources


def _requests(resources: Mapping[str, str | int | float]) -> ResourceList:
    return {name: parse_quantity(q) for name, q in resources.items()} if resources else {}


def _add_resource_list(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    """Upstream: addResourceList (component-helpers/resource/helpers.go, v1.35)."""
    for name, q in other.items():
        current = into.get(name)
        into[name] = q if current is None else current + q


def _max_resource_list(into: ResourceList, other: Mapping[str, Quantity]) -> None:
    """Keep the larger of each resource; a missing one is taken as is.

    Upstream: maxResourceList (component-helpers/resource/helpers.go, v1.35)
    """
    for name, q in other.items():
        current = into.get(name)
        if current is None or q > current:
            into[name] = q


def _apply_non_missing(
    requests: Mapping[str, Quantity], non_missing: Mapping[str, Quantity]
) -> Mapping[str, Quantity]:
    """Fill in resources a container does not mention (an explicit 0 stays 0).

    Upstream: applyNonMissing (component-helpers/resource/helpers.go, v1.35)
    """
    out = dict(requests)
    for name, q in non_missing.items():
        if name not in requests:
            out[name] = q
    return out


def is_restartable_init_container(container: Container) -> bool:
    """A sidecar: an init container with restartPolicy Always."""
    return container.restart_policy == CONTAINER_RESTART_POLICY_ALWAYS


def has_restartable_init_container(pod: Pod) -> bool:
    """Upstream: hasRestartableInitContainer (noderesources/fit.go, v1.35)."""
    return any(is_restartable_init_container(c) for c in pod.spec.init_containers)


def aggregate_container_requests(
    pod: Pod, non_missing: Mapping[str, Quantity] = _EMPTY
) -> ResourceList:
    """Regular containers and sidecars run together; each init container runs alongside the
    sidecars declared before it; the pod needs the larger of the two, per resource.

    Upstream: AggregateContainerRequests (component-helpers/resource/helpers.go, v1.35)
    """
    result: ResourceList = {}
    for c in pod.spec.containers:
        reqs: Mapping[str, Quantity] = _requests(c.resources.requests)
        if non_missing:
            reqs = _apply_non_missing(reqs, non_missing)
        _add_resource_list(result, reqs)
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in pod.spec.init_containers:
        reqs = _requests(c.resources.requests)
        if non_missing:
            reqs = _apply_non_missing(reqs, non_missing)
        if is_restartable_init_container(c):
            _add_resource_list(result, reqs)
            _add_resource_list(sidecars, reqs)
            running: Mapping[str, Quantity] = sidecars
        else:
            combined: ResourceList = {}
            _add_resource_list(combined, reqs)
            _add_resource_list(combined, sidecars)
            running = combined
        _max_resource_list(init_peak, running)
    _max_resource_list(result, init_peak)
    return result


def is_pod_level_requests_set(pod: Pod) -> bool:
    """Upstream: IsPodLevelRequestsSet (component-helpers/resource/helpers.go, v1.35)."""
    resources = pod.spec.resources
    if resources is None or not resources.requests:
        return False
    return any(is_supported_pod_level_resource(name) for name in resources.requests)


def pod_requests(
    pod: Pod,
    *,
    skip_pod_level_resources: bool = False,
    non_missing_container_requests: Mapping[str, Quantity] = _EMPTY,
    exclude_overhead: bool = False,
) -> ResourceList:
    """A pod's effective requests, pod-level requests and overhead included.

    ``non_missing_container_requests`` stands in for every container's missing requests
    (the scheduler's 100m / 200Mi). Pod status is not read (see the module docstring).
    Upstream: PodRequests (component-helpers/resource/helpers.go, v1.35)
    """
    reqs = aggregate_container_requests(pod, non_missing_container_requests)
    if not skip_pod_level_resources and is_pod_level_requests_set(pod):
        assert pod.spec.resources is not None
        for name, raw in pod.spec.resources.requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = parse_quantity(raw)
    if not exclude_overhead and pod.spec.overhead:
        _add_resource_list(reqs, _requests(pod.spec.overhead))
    return reqs


DEFAULT_NON_MISSING_REQUESTS: Final[Mapping[str, Quantity]] = {
    RESOURCE_CPU: Quantity.new_milli_quantity(DEFAULT_MILLI_CPU_REQUEST),
    RESOURCE_MEMORY: Quantity.new_quantity(DEFAULT_MEMORY_REQUEST),
}


def get_non_missing_container_requests(
    requests: Mapping[str, Quantity], pod_level_resources_set: bool
) -> Mapping[str, Quantity]:
    """The defaults a bound pod's containers count with: both without pod-level requests,
    otherwise only those the pod mentions nowhere (containers, pod level, overhead).

    Upstream: getNonMissingContainerRequests (pkg/scheduler/framework/types.go, v1.35)
    """
    if not pod_level_resources_set:
        return DEFAULT_NON_MISSING_REQUESTS
    return {name: q for name, q in DEFAULT_NON_MISSING_REQUESTS.items() if name not in requests}


# ---------------------------------------------------------------------------------------------
# The scheduler's int64 view


@dataclass(slots=True)
class Resource:
    """Millicores, bytes, the pods count and scalar resources, as int64 values.

    ``scalar_resources`` keeps every scalar resource mentioned, zero or not: upstream tells a
    missing key from a zero one in places.
    Upstream: Resource (pkg/scheduler/framework/types.go, v1.35)
    """

    milli_cpu: int = 0
    memory: int = 0
    ephemeral_storage: int = 0
    allowed_pod_number: int = 0
    scalar_resources: dict[str, int] = field(default_factory=dict)

    def add(self, resources: Mapping[str, Quantity]) -> None:
        """Upstream: Resource.Add (pkg/scheduler/framework/types.go, v1.35)."""
        for name, q in resources.items():
            if name == RESOURCE_CPU:
                self.milli_cpu += q.milli_value()
            elif name == RESOURCE_MEMORY:
                self.memory += q.value()
            elif name == RESOURCE_PODS:
                self.allowed_pod_number += q.value()
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                self.ephemeral_storage += q.value()
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = self.scalar_resources.get(name, 0) + q.value()

    def set_max_resource(self, resources: Mapping[str, Quantity]) -> None:
        """Take the larger value per resource (the ``pods`` count is not a request).

        Upstream: Resource.SetMaxResource (pkg/scheduler/framework/types.go, v1.35)
        """
        for name, q in resources.items():
            if name == RESOURCE_MEMORY:
                self.memory = max(self.memory, q.value())
            elif name == RESOURCE_CPU:
                self.milli_cpu = max(self.milli_cpu, q.milli_value())
            elif name == RESOURCE_EPHEMERAL_STORAGE:
                self.ephemeral_storage = max(self.ephemeral_storage, q.value())
            elif is_scalar_resource_name(name):
                self.scalar_resources[name] = max(self.scalar_resources.get(name, 0), q.value())

    def add_resource(self, other: Resource) -> None:
        """Add another Resource in (as NodeInfo.update adds a pod's requests)."""
        self.milli_cpu += other.milli_cpu
        self.memory += other.memory
        self.ephemeral_storage += other.ephemeral_storage
        for name, v in other.scalar_resources.items():
            self.scalar_resources[name] = self.scalar_resources.get(name, 0) + v

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar_resources),
        )


def new_resource(resources: Mapping[str, Quantity]) -> Resource:
    """Upstream: NewResource (pkg/scheduler/framework/types.go, v1.35)."""
    r = Resource()
    r.add(resources)
    return r


@dataclass(frozen=True, slots=True)
class PodResource:
    """A bound pod's requests and its cpu/memory requests with defaults for missing ones.

    Upstream: fwk.PodResource (staging/src/k8s.io/kube-scheduler/framework, v1.35)
    """

    resource: Resource
    non0_cpu: int
    non0_mem: int


def _calculate_resource(pod: Pod, pod_level: bool) -> PodResource:
    requests = pod_requests(pod, skip_pod_level_resources=not pod_level)
    level_set = pod_level and is_pod_level_requests_set(pod)
    non_missing = get_non_missing_container_requests(requests, level_set)
    non0 = requests
    if non_missing:
        non0 = pod_requests(
            pod, skip_pod_level_resources=not pod_level, non_missing_container_requests=non_missing
        )
    return PodResource(
        resource=new_resource(requests),
        non0_cpu=non0.get(RESOURCE_CPU, ZERO).milli_value(),
        non0_mem=non0.get(RESOURCE_MEMORY, ZERO).value(),
    )


# NOTE: keyed by object identity. API objects are frozen, so a pod's resources never change
# while the same object lives; the entry keeps the pod alive, so its id cannot be reused.
_POD_RESOURCE_CACHE: dict[tuple[int, bool], tuple[Pod, PodResource]] = {}
_POD_RESOURCE_CACHE_LIMIT: Final = 1 << 18
# NOTE: behind it, keyed by what _calculate_resource reads (containers' and init containers'
# requests and restart policies, overhead, pod-level resources): the pods of one template, and
# a pod and its bound copy, share one result. Results are never mutated by their readers.
_POD_RESOURCE_BY_CONTENT: dict[bytes, PodResource] = {}
_RESOURCE_KEY_ENCODER: Final = msgspec.json.Encoder()
# NOTE: ahead of that content key, pods known to read as another pod does (admission's pods of
# one template share containers, init containers, overhead and pod-level resources, which
# AdmissionMemo's key holds), by identity, each with that pod: they get its result without a
# key of their own. An entry keeps its pod alive, so its id cannot be reused.
_RESOURCES_AS: dict[int, tuple[Pod, Pod]] = {}


def same_resources_as(pairs: Sequence[tuple[Pod, Pod]]) -> None:
    """Note that in each pair the first pod's containers and init containers (their requests
    and restart policies), overhead and pod-level resources are equal to the second's: what
    calculate_resource reads, so that it gives the first the second's result."""
    if len(_RESOURCES_AS) + len(pairs) > _POD_RESOURCE_CACHE_LIMIT:
        _RESOURCES_AS.clear()
    _RESOURCES_AS.update(zip(map(id, map(itemgetter(0), pairs)), pairs, strict=True))


def _resource_key(pod: Pod, pod_level: bool) -> bytes:
    spec = pod.spec
    return _RESOURCE_KEY_ENCODER.encode(
        (
            pod_level,
            [(c.resources.requests, c.restart_policy) for c in spec.containers],
            [(c.resources.requests, c.restart_policy) for c in spec.init_containers],
            spec.overhead,
            spec.resources,
        )
    )


def calculate_resource(pod: Pod, features: Features) -> PodResource:
    """What a bound pod adds to its node's ``Requested`` and ``NonZeroRequested``.

    Upstream: PodInfo.CalculateResource (pkg/scheduler/framework/types.go, v1.35)
    """
    pod_level = pod_level_enabled(features)
    key = (id(pod), pod_level)
    hit = _POD_RESOURCE_CACHE.get(key)
    if hit is not None and hit[0] is pod:
        return hit[1]
    twin = _RESOURCES_AS.get(id(pod))
    if twin is not None and twin[0] is pod and twin[1] is not pod:
        result = calculate_resource(twin[1], features)
    else:
        content = _resource_key(pod, pod_level)
        found = _POD_RESOURCE_BY_CONTENT.get(content)
        if found is None:
            found = _calculate_resource(pod, pod_level)
            if len(_POD_RESOURCE_BY_CONTENT) >= _POD_RESOURCE_CACHE_LIMIT:
                _POD_RESOURCE_BY_CONTENT.clear()
            _POD_RESOURCE_BY_CONTENT[content] = found
        result = found
    if len(_POD_RESOURCE_CACHE) >= _POD_RESOURCE_CACHE_LIMIT:
        _POD_RESOURCE_CACHE.clear()
    _POD_RESOURCE_CACHE[key] = (pod, result)
    return result


_ALLOCATABLE_CACHE: dict[int, tuple[Node, Resource]] = {}
# NOTE: behind it, keyed by the allocatable's items when every quantity is a string (as the
# API server writes them): the nodes of one instance type (a cluster's thousand nodes have a
# handful of allocatables) share one result, its quantities parsed once.
_ALLOCATABLE_BY_CONTENT: dict[tuple[tuple[str, str | int | float], ...], Resource] = {}


def allocatable_resource(node: Node) -> Resource:
    """The node's ``status.allocatable`` as a Resource (do not mutate the result).

    Upstream: NodeInfo.SetNode (pkg/scheduler/framework/types.go, v1.35)
    """
    hit = _ALLOCATABLE_CACHE.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    allocatable = node.status.allocatable
    content = tuple(allocatable.items())
    keyed = all(type(q) is str for _, q in content)
    found = _ALLOCATABLE_BY_CONTENT.get(content) if keyed else None
    if found is None:
        found = new_resource(_requests(allocatable))
        if keyed:
            if len(_ALLOCATABLE_BY_CONTENT) >= _POD_RESOURCE_CACHE_LIMIT:
                _ALLOCATABLE_BY_CONTENT.clear()
            _ALLOCATABLE_BY_CONTENT[content] = found
    if len(_ALLOCATABLE_CACHE) >= _POD_RESOURCE_CACHE_LIMIT:
        _ALLOCATABLE_CACHE.clear()
    _ALLOCATABLE_CACHE[id(node)] = (node, found)
    return found


@dataclass(slots=True)
class NodeResources:
    """A node's allocatable and the sums over its pods.

    ``non_zero_requested`` carries cpu and memory only, as upstream's does.
    Upstream: NodeInfo.Requested, NonZeroRequested, Allocatable (framework/types.go, v1.35)
    """

    allocatable: Resource
    requested: Resource
    non_zero_requested: Resource
    pod_count: int


_NODE_RESOURCES_KEY = "noderesources.totals"


def node_resources(node_info: NodeInfo, features: Features) -> NodeResources:
    """Sum every pod of the node (terminating ones too), as NodeInfo.AddPod accumulates them.

    Upstream: NodeInfo.update (pkg/scheduler/framework/types.go, v1.35)
    """
    cached = node_info.cache.get(_NODE_RESOURCES_KEY)
    if cached is not None and cached[0] == features:
        result: NodeResources = cached[1]
        return result
    requested = Resource()
    non_zero = Resource()
    for pod in node_info.pods:
        pr = calculate_resource(pod, features)
        requested.add_resource(pr.resource)
        non_zero.milli_cpu += pr.non0_cpu
        non_zero.memory += pr.non0_mem
    result = NodeResources(
        allocatable=allocatable_resource(node_info.node),
        requested=requested,
        non_zero_requested=non_zero,
        pod_count=len(node_info.pods),
    )
    node_info.cache[_NODE_RESOURCES_KEY] = (features, result)
    return result


__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "DEFAULT_NON_MISSING_REQUESTS",
    "NodeResources",
    "PodResource",
    "Resource",
    "ResourceList",
    "aggregate_container_requests",
    "allocatable_resource",
    "calculate_resource",
    "get_non_missing_container_requests",
    "has_restartable_init_container",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_native_resource",
    "is_pod_level_requests_set",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "new_resource",
    "node_resources",
    "pod_level_enabled",
    "pod_requests",
]
