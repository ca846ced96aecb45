"""NodeResourcesFit and NodeResourcesBalancedAllocation against upstream's tables.

Cases are translated by meaning from pkg/scheduler/framework/plugins/noderesources/
fit_test.go, least_allocated_test.go, most_allocated_test.go,
requested_to_capacity_ratio_test.go and balanced_allocation_test.go (v1.35); ids carry the
upstream case names. BalancedAllocation's expected scores are v1.35's (the balance after
placing the pod): the v1.36 tables changed the formula, and their comments still show the v1.35
score as the second number of "(before -> after)".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import msgspec
import pytest

from topospread.api.resource_names import (
    is_extended_resource_name,
    is_scalar_resource_name,
)
from topospread.api.types import Node, Pod
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo
from topospread.plugins import noderesources
from topospread.plugins.noderesources.args import (
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    decode_node_resources_balanced_allocation_args,
    decode_node_resources_fit_args,
    validate_node_resources_balanced_allocation_args,
    validate_node_resources_fit_args,
)
from topospread.plugins.noderesources.balanced_allocation import (
    BalancedAllocation,
    balanced_resource_scorer,
)
from topospread.plugins.noderesources.fit import (
    ERR_REASON_SIDECAR_DISABLED,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
    Fit,
    InsufficientResource,
    compute_pod_resource_request,
    fits_request,
    insufficient_reason,
)
from topospread.plugins.noderesources.requested_to_capacity_ratio import (
    build_broken_linear_function,
)
from topospread.plugins.noderesources.resource_helpers import (
    calculate_resource,
    node_resources,
    pod_requests,
)

HANDLE = SnapshotHandle(Snapshot([]))
FEATURES = DEFAULT_FEATURES

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"
EXTENDED_RES = "abc.com/xyz"

DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
EXTENDED_RESOURCE_SET = [*DEFAULT_RESOURCES, {"name": EXTENDED_RES, "weight": 1}]


# ---------------------------------------------------------------------------------------------
# Builders (upstream's newResourcePod, st.MakePod().Req(...), makeNode ...)


def usage(
    milli_cpu: int = 0,
    memory: int = 0,
    storage: int = 0,
    scalars: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """One container's requests as newResourcePod writes them (cpu, memory, pods, storage)."""
    reqs: dict[str, Any] = {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        "pods": "0",
        "ephemeral-storage": str(storage),
    }
    for name, value in (scalars or {}).items():
        reqs[name] = str(value)
    return reqs


def make_pod(
    *containers: Mapping[str, Any] | None,
    init: Sequence[Mapping[str, Any] | None] = (),
    sidecars: Sequence[int] = (),
    overhead: Mapping[str, Any] | None = None,
    pod_level: Mapping[str, Any] | None = None,
    node: str = "",
    name: str = "p",
) -> Pod:
    """A pod whose containers request ``containers``; ``sidecars`` are indexes into ``init``
    of restartable init containers. ``None`` is a container without requests."""
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "resources": {"requests": dict(r)} if r is not None else {}}
            for i, r in enumerate(containers)
        ]
    }
    if init:
        spec["initContainers"] = [
            {
                "name": f"i{i}",
                "resources": {"requests": dict(r)} if r is not None else {},
                **({"restartPolicy": "Always"} if i in sidecars else {}),
            }
            for i, r in enumerate(init)
        ]
    if overhead is not None:
        spec["overhead"] = dict(overhead)
    if pod_level is not None:
        spec["resources"] = {"requests": dict(pod_level)}
    if node:
        spec["nodeName"] = node
    return msgspec.convert({"metadata": {"name": name, "namespace": "default"}, "spec": spec}, Pod)


def make_node(name: str, allocatable: Mapping[str, Any]) -> Node:
    return msgspec.convert(
        {
            "metadata": {"name": name},
            "status": {"capacity": dict(allocatable), "allocatable": dict(allocatable)},
        },
        Node,
    )


def alloc(milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int) -> Any:
    """makeAllocatableResources (fit_test.go)."""
    return {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        "pods": str(pods),
        EXT_A: str(ext_a),
        "ephemeral-storage": str(storage),
        HUGE_A: str(huge_a),
    }


def resource_node(
    name: str, milli_cpu: int, memory: int, extended: Mapping[str, int] | None = None
) -> Node:
    """makeNode (test_util.go): cpu in millicores, memory in bytes, extended resources."""
    rl: dict[str, Any] = {k: str(v) for k, v in (extended or {}).items()}
    rl["cpu"] = f"{milli_cpu}m"
    rl["memory"] = str(memory)
    return make_node(name, rl)


def cap_node(name: str, capacity: Mapping[str, str]) -> Node:
    """st.MakeNode().Name(name).Capacity(capacity): capacity and allocatable alike."""
    return make_node(name, capacity)


def req(**kw: str) -> dict[str, str]:
    return dict(kw)


def node_infos(nodes: Sequence[Node], pods: Sequence[Pod]) -> list[NodeInfo]:
    """cache.NewSnapshot(pods, nodes): each pod on the node it names."""
    infos = [NodeInfo(n) for n in nodes]
    by_name = {i.name: i for i in infos}
    for p in pods:
        if p.spec.node_name in by_name:
            by_name[p.spec.node_name].add_pod(p)
    return infos


FIT_NODE = make_node("n", alloc(10, 20, 32, 5, 20, 5))


def run_fit_filter(
    pod: Pod,
    node_info: NodeInfo,
    args: Mapping[str, Any] | None = None,
    features: Features = FEATURES,
) -> Status:
    plugin = noderesources.new(args, HANDLE, features)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [node_info])
    assert status.is_success, status
    return plugin.filter(state, pod, node_info)


# ---------------------------------------------------------------------------------------------
# fit_test.go: TestEnoughRequests


def ir(
    name: str, requested: int, used: int, capacity: int, unresolvable: bool = False
) -> InsufficientResource:
    return InsufficientResource(
        name, insufficient_reason(name), requested, used, capacity, unresolvable
    )


ENOUGH_REQUESTS: list[Any] = [
    pytest.param(
        make_pod(),
        [make_pod(usage(10, 20))],
        None,
        [],
        id="no resources requested always fits",
    ),
    pytest.param(
        make_pod(usage(1, 1)),
        [make_pod(usage(10, 20))],
        None,
        [ir("cpu", 1, 10, 10), ir("memory", 1, 20, 20)],
        id="too many resources fails",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(3, 1)]),
        [make_pod(usage(8, 19))],
        None,
        [ir("cpu", 3, 8, 10)],
        id="too many resources fails due to init container cpu",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(3, 1), usage(2, 1)]),
        [make_pod(usage(8, 19))],
        None,
        [ir("cpu", 3, 8, 10)],
        id="too many resources fails due to highest init container cpu",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(1, 3)]),
        [make_pod(usage(9, 19))],
        None,
        [ir("memory", 3, 19, 20)],
        id="too many resources fails due to init container memory",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(1, 3), usage(1, 2)]),
        [make_pod(usage(9, 19))],
        None,
        [ir("memory", 3, 19, 20)],
        id="too many resources fails due to highest init container memory",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(1, 1)]),
        [make_pod(usage(9, 19))],
        None,
        [],
        id="init container fits because it's the max, not sum, of containers and init containers",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(1, 1), usage(1, 1)]),
        [make_pod(usage(9, 19))],
        None,
        [],
        id="multiple init containers fit because it's the max, not sum, of containers and init",
    ),
    pytest.param(make_pod(usage(1, 1)), [make_pod(usage(5, 5))], None, [], id="both resources fit"),
    pytest.param(
        make_pod(usage(2, 1)),
        [make_pod(usage(9, 5))],
        None,
        [ir("cpu", 2, 9, 10)],
        id="one resource memory fits",
    ),
    pytest.param(
        make_pod(usage(1, 2)),
        [make_pod(usage(5, 19))],
        None,
        [ir("memory", 2, 19, 20)],
        id="one resource cpu fits",
    ),
    pytest.param(make_pod(usage(5, 1)), [make_pod(usage(5, 19))], None, [], id="equal edge case"),
    pytest.param(
        make_pod(usage(4, 1), init=[usage(5, 1)]),
        [make_pod(usage(5, 19))],
        None,
        [],
        id="equal edge case for init container",
    ),
    pytest.param(
        make_pod(usage(scalars={EXT_A: 1})),
        [make_pod(usage())],
        None,
        [],
        id="extended resource fits",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(scalars={EXT_A: 1})]),
        [make_pod(usage())],
        None,
        [],
        id="extended resource fits for init container",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_A: 10})),
        [make_pod(usage(scalars={EXT_A: 0}))],
        None,
        [ir(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 10})]),
        [make_pod(usage(scalars={EXT_A: 0}))],
        None,
        [ir(EXT_A, 10, 0, 5, True)],
        id="extended resource capacity enforced for init container",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_A: 1})),
        [make_pod(usage(scalars={EXT_A: 5}))],
        None,
        [ir(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 1})]),
        [make_pod(usage(scalars={EXT_A: 5}))],
        None,
        [ir(EXT_A, 1, 5, 5)],
        id="extended resource allocatable enforced for init container",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_A: 3}), usage(1, 1, scalars={EXT_A: 3})),
        [make_pod(usage(scalars={EXT_A: 2}))],
        None,
        [ir(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 3}), usage(1, 1, scalars={EXT_A: 3})]),
        [make_pod(usage(scalars={EXT_A: 2}))],
        None,
        [],
        id="extended resource allocatable admits multiple init containers",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={EXT_A: 6}), usage(1, 1, scalars={EXT_A: 3})]),
        [make_pod(usage(scalars={EXT_A: 2}))],
        None,
        [ir(EXT_A, 6, 2, 5, True)],
        id="extended resource allocatable enforced for multiple init containers",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_B: 1})),
        [make_pod(usage())],
        None,
        [ir(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={EXT_B: 1})]),
        [make_pod(usage())],
        None,
        [ir(EXT_B, 1, 0, 0, True)],
        id="extended resource allocatable enforced for unknown resource for init container",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={K8S_IO_A: 10})),
        [make_pod(usage())],
        None,
        [ir(K8S_IO_A, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={K8S_IO_B: 10})]),
        [make_pod(usage())],
        None,
        [ir(K8S_IO_B, 10, 0, 0, True)],
        id="kubernetes.io resource capacity enforced for init container",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={HUGE_A: 10})),
        [make_pod(usage(scalars={HUGE_A: 0}))],
        None,
        [ir(HUGE_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced",
    ),
    pytest.param(
        make_pod(usage(), init=[usage(1, 1, scalars={HUGE_A: 10})]),
        [make_pod(usage(scalars={HUGE_A: 0}))],
        None,
        [ir(HUGE_A, 10, 0, 5, True)],
        id="hugepages resource capacity enforced for init container",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={HUGE_A: 3}), usage(1, 1, scalars={HUGE_A: 3})),
        [make_pod(usage(scalars={HUGE_A: 2}))],
        None,
        [ir(HUGE_A, 6, 2, 5, True)],
        id="hugepages resource allocatable enforced for multiple containers",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_B: 1})),
        [make_pod(usage())],
        {"ignoredResources": [EXT_B]},
        [],
        id="skip checking ignored extended resource",
    ),
    pytest.param(
        make_pod(usage(1, 1), overhead={"cpu": "3m", "memory": "13"}),
        [make_pod(usage(5, 5))],
        None,
        [],
        id="resources + pod overhead fits",
    ),
    pytest.param(
        make_pod(usage(1, 1), overhead={"cpu": "1m", "memory": "15"}),
        [make_pod(usage(5, 5))],
        None,
        [ir("memory", 16, 5, 20)],
        id="requests + overhead does not fit for memory",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_B: 1, K8S_IO_A: 1})),
        [make_pod(usage())],
        {"ignoredResourceGroups": ["example.com"]},
        [ir(K8S_IO_A, 1, 0, 0, True)],
        id="skip checking ignored extended resource via resource groups",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_A: 0})),
        [make_pod(usage(scalars={EXT_A: 6}))],
        None,
        [],
        id="skip checking extended resource request with quantity zero via resource groups",
    ),
    pytest.param(
        make_pod(usage(scalars={EXT_A: 1})),
        [make_pod(usage(20, 30, scalars={EXT_A: 1}))],
        None,
        [],
        id="skip checking resource request with quantity zero",
    ),
    pytest.param(
        make_pod(usage(1, 1), pod_level={"cpu": "1m", "memory": "2"}),
        [make_pod(usage(5, 5))],
        None,
        [],
        id="both pod-level and container-level resources fit",
    ),
    pytest.param(
        make_pod(usage(1, 1), pod_level={"cpu": "7m", "memory": "2"}),
        [make_pod(usage(5, 5))],
        None,
        [ir("cpu", 7, 5, 10)],
        id="pod-level cpu resource not fit",
    ),
    pytest.param(
        make_pod(usage(1, 1), pod_level={"cpu": "3m", "memory": "2"}),
        [make_pod(usage(5, 19))],
        None,
        [ir("memory", 2, 19, 20)],
        id="pod-level memory resource not fit",
    ),
    pytest.param(
        make_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}),
        [],
        None,
        [],
        id="pod-level hugepages resource fit",
    ),
    pytest.param(
        make_pod(
            usage(1, 1, scalars={HUGE_A: 3}), pod_level={"cpu": "3m", "memory": "2", HUGE_A: "5"}
        ),
        [],
        None,
        [],
        id="both pod-level and container-level hugepages resource fit",
    ),
    pytest.param(
        make_pod(pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"}),
        [],
        None,
        [ir(HUGE_A, 10, 0, 5, True)],
        id="pod-level hugepages resource not fit",
    ),
    pytest.param(
        make_pod(usage(1, 1), init=[usage(1, 1)], pod_level={"cpu": "3m", "memory": "2"}),
        [make_pod(usage(5, 19))],
        None,
        [ir("memory", 2, 19, 20)],
        id="one pod-level cpu resource fits and all init and non-init containers resources fit",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={DRA_EXT: 1})),
        [make_pod(usage())],
        None,
        [ir(DRA_EXT, 1, 0, 0, True)],
        id="extended resource backed by DRA not enabled",
    ),
    pytest.param(
        make_pod(usage(1, 1, scalars={EXT_B: 1})),
        [make_pod(usage())],
        None,
        [ir(EXT_B, 1, 0, 0, True)],
        id="extended resource NOT backed by DRA",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "args", "want"), ENOUGH_REQUESTS)
def test_enough_requests(
    pod: Pod, existing: list[Pod], args: Mapping[str, Any] | None, want: list[InsufficientResource]
) -> None:
    """Upstream: TestEnoughRequests (fit_test.go)."""
    info = NodeInfo(FIT_NODE, list(existing))
    status = run_fit_filter(pod, info, args)
    if not want:
        assert status == SUCCESS
    else:
        code = (
            Code.UnschedulableAndUnresolvable
            if any(r.unresolvable for r in want)
            else Code.Unschedulable
        )
        assert status == new_status(code, *(r.reason for r in want))
    plugin = noderesources.new(args, HANDLE, FEATURES)
    got = fits_request(
        compute_pod_resource_request(pod, True),
        info,
        FEATURES,
        plugin.ignored_resources,
        plugin.ignored_resource_groups,
    )
    assert got == want


def test_reason_strings_are_upstreams() -> None:
    assert REASON_TOO_MANY_PODS == "Too many pods"
    assert REASON_INSUFFICIENT_CPU == "Insufficient cpu"
    assert REASON_INSUFFICIENT_MEMORY == "Insufficient memory"
    assert REASON_INSUFFICIENT_EPHEMERAL_STORAGE == "Insufficient ephemeral-storage"
    assert insufficient_reason(EXT_A) == "Insufficient example.com/aaa"
    assert ERR_REASON_SIDECAR_DISABLED == (
        "Pod has a restartable init container and the SidecarContainers feature is disabled"
    )


def test_scalar_resources_are_reported_in_name_order() -> None:
    # Upstream walks a Go map (random order); here the order is fixed: sorted by name.
    pod = make_pod(usage(1, 1, scalars={"z.io/b": 1, "a.io/b": 1, EXT_B: 1}))
    status = run_fit_filter(pod, NodeInfo(FIT_NODE, []))
    assert status == new_status(
        Code.UnschedulableAndUnresolvable,
        "Insufficient a.io/b",
        "Insufficient example.com/bbb",
        "Insufficient z.io/b",
    )


def test_all_reasons_are_kept_in_upstreams_order() -> None:
    node = make_node("n", alloc(10, 20, 1, 5, 20, 5))
    pod = make_pod(usage(11, 1, 3, scalars={EXT_A: 6}))
    status = run_fit_filter(pod, NodeInfo(node, [make_pod(usage(0, 20, 18))]))
    assert status == new_status(
        Code.UnschedulableAndUnresolvable,
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient ephemeral-storage",
        "Insufficient example.com/aaa",
    )


def test_terminating_pods_still_count_towards_the_nodes_requests() -> None:
    terminating = msgspec.structs.replace(
        make_pod(usage(8, 10)),
        metadata=msgspec.structs.replace(
            make_pod().metadata, deletion_timestamp="2024-01-01T00:00:00Z"
        ),
    )
    status = run_fit_filter(make_pod(usage(5, 1)), NodeInfo(FIT_NODE, [terminating]))
    assert status == new_status(Code.Unschedulable, "Insufficient cpu")


def test_filter_without_prefilter_state_is_an_error() -> None:
    """Upstream: TestPreFilterDisabled (fit_test.go)."""
    plugin = noderesources.new(None, HANDLE, FEATURES)
    status = plugin.filter(CycleState(), make_pod(), NodeInfo(make_node("n", {}), []))
    assert status.code is Code.Error
    assert status.message == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


# fit_test.go: TestNotEnoughRequests (a node that allows one pod already has one)
NOT_ENOUGH: list[Any] = [
    pytest.param(
        make_pod(),
        make_pod(usage(10, 20)),
        id="even without specified resources, predicate fails when there's no space for "
        "additional pod",
    ),
    pytest.param(
        make_pod(usage(1, 1)),
        make_pod(usage(5, 5)),
        id="even if both resources fit, predicate fails when there's no space for additional pod",
    ),
    pytest.param(
        make_pod(usage(5, 1)),
        make_pod(usage(5, 19)),
        id="even for equal edge case, predicate fails when there's no space for additional pod",
    ),
    pytest.param(
        make_pod(usage(5, 1), init=[usage(5, 1)]),
        make_pod(usage(5, 19)),
        id="even for equal edge case, predicate fails when there's no space for additional pod "
        "due to init container",
    ),
]


@pytest.mark.parametrize(("pod", "existing"), NOT_ENOUGH)
def test_not_enough_requests(pod: Pod, existing: Pod) -> None:
    """Upstream: TestNotEnoughRequests (fit_test.go)."""
    node = make_node("n", alloc(10, 20, 1, 0, 0, 0))
    status = run_fit_filter(pod, NodeInfo(node, [existing]))
    assert status == new_status(Code.Unschedulable, REASON_TOO_MANY_PODS)


STORAGE: list[Any] = [
    pytest.param(
        make_pod(usage(1, 1)),
        make_pod(usage(2, 10)),
        SUCCESS,
        id="empty storage requested, and pod fits",
    ),
    pytest.param(
        make_pod(usage(storage=25)),
        make_pod(usage(2, 2)),
        new_status(Code.UnschedulableAndUnresolvable, REASON_INSUFFICIENT_EPHEMERAL_STORAGE),
        id="storage ephemeral local storage request exceeds allocatable",
    ),
    pytest.param(
        make_pod(usage(storage=5)),
        make_pod(usage(2, 2, 10)),
        SUCCESS,
        id="ephemeral local storage is sufficient",
    ),
    pytest.param(
        make_pod(usage(storage=16)),
        make_pod(usage(2, 2, 10)),
        new_status(Code.Unschedulable, REASON_INSUFFICIENT_EPHEMERAL_STORAGE),
        id="ephemeral local storage is short while the node could hold it empty",
    ),
    pytest.param(make_pod(usage(storage=10)), make_pod(usage(2, 2)), SUCCESS, id="pod fits"),
]


@pytest.mark.parametrize(("pod", "existing", "want"), STORAGE)
def test_storage_requests(pod: Pod, existing: Pod, want: Status) -> None:
    """Upstream: TestStorageRequests (fit_test.go)."""
    assert run_fit_filter(pod, NodeInfo(FIT_NODE, [existing])) == want


def sidecar_pod(request: str | None, sidecar_request: str | None) -> Pod:
    return make_pod(
        {"cpu": request} if request else None,
        init=[{"cpu": sidecar_request} if sidecar_request else None],
        sidecars=[0],
    )


RESTARTABLE: list[Any] = [
    pytest.param(
        make_pod(None),
        False,
        None,
        SUCCESS,
        id="allow pod without restartable init containers if sidecar containers is disabled",
    ),
    pytest.param(
        sidecar_pod(None, None),
        False,
        new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_SIDECAR_DISABLED),
        None,
        id="not allow pod with restartable init containers if sidecar containers is disabled",
    ),
    pytest.param(
        sidecar_pod(None, None),
        True,
        None,
        SUCCESS,
        id="allow pod with restartable init containers if sidecar containers is enabled",
    ),
    pytest.param(
        sidecar_pod("1m", "1m"),
        True,
        None,
        SUCCESS,
        id="allow pod if the total requested resources do not exceed the node's allocatable",
    ),
    pytest.param(
        sidecar_pod("1m", "2m"),
        True,
        None,
        new_status(Code.UnschedulableAndUnresolvable, REASON_INSUFFICIENT_CPU),
        id="not allow pod if the total requested resources do exceed the node's allocatable",
    ),
]


@pytest.mark.parametrize(("pod", "sidecars_on", "want_prefilter", "want_filter"), RESTARTABLE)
def test_restartable_init_containers(
    pod: Pod, sidecars_on: bool, want_prefilter: Status | None, want_filter: Status | None
) -> None:
    """Upstream: TestRestartableInitContainers (fit_test.go)."""
    node = make_node("n", alloc(2, 0, 1, 0, 0, 0))
    features = replace(FEATURES, enable_sidecar_containers=sidecars_on)
    plugin = noderesources.new(None, HANDLE, features)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, [])
    if want_prefilter is not None:
        assert status == want_prefilter
        return
    assert status == SUCCESS
    assert plugin.filter(state, pod, NodeInfo(node, [])) == want_filter


# ---------------------------------------------------------------------------------------------
# Scoring: fit_test.go TestFitScore and the strategy tables


def run_scores(
    plugin: Fit | BalancedAllocation,
    pod: Pod,
    nodes: Sequence[Node],
    existing: Sequence[Pod] = (),
    *,
    pre_score: bool = True,
    want_code: Code = Code.Success,
) -> list[int]:
    infos = node_infos(nodes, existing)
    state = CycleState()
    if pre_score:
        assert plugin.pre_score(state, pod, infos) == SUCCESS
    scores = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status.code is want_code, status
        scores.append(score)
    return scores


def fit_plugin(strategy: str, resources: Any, shape: Any = None) -> Fit:
    s: dict[str, Any] = {"type": strategy, "resources": resources}
    if shape is not None:
        s["requestedToCapacityRatio"] = {"shape": shape}
    return noderesources.new({"scoringStrategy": s}, HANDLE, FEATURES)


SCORE_NODES = [
    cap_node("node1", {"cpu": "4000", "memory": "10000"}),
    cap_node("node2", {"cpu": "6000", "memory": "10000"}),
]
SCORE_EXISTING = [
    make_pod(req(cpu="2000", memory="4000"), node="node1"),
    make_pod(req(cpu="1000", memory="2000"), node="node2"),
]
SHAPE_DOWN = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
SHAPE_UP = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
SIDECAR_NODES = [
    cap_node("node1", {"cpu": "4000", "memory": "10000"}),
    cap_node("node2", {"cpu": "4000", "memory": "10000"}),
]
SIDECAR_EXISTING = [
    make_pod(
        req(cpu="1000", memory="2000"),
        init=[req(cpu="1000", memory="2000")],
        sidecars=[0],
        node="node1",
    ),
    make_pod(req(cpu="1000", memory="2000"), node="node2"),
]

FIT_SCORE: list[Any] = []
for _pre_score, _suffix in ((True, ""), (False, " if PreScore is not called")):
    FIT_SCORE += [
        pytest.param(
            "RequestedToCapacityRatio",
            SHAPE_DOWN,
            make_pod(req(cpu="3000", memory="5000")),
            SCORE_NODES,
            SCORE_EXISTING,
            _pre_score,
            [10, 32],
            id="test case for ScoringStrategy RequestedToCapacityRatio case1" + _suffix,
        ),
        pytest.param(
            "RequestedToCapacityRatio",
            SHAPE_UP,
            make_pod(req(cpu="3000", memory="5000")),
            SCORE_NODES,
            SCORE_EXISTING,
            _pre_score,
            [95, 68],
            id="test case for ScoringStrategy RequestedToCapacityRatio case2" + _suffix,
        ),
        pytest.param(
            "MostAllocated",
            None,
            make_pod(req(cpu="1000", memory="2000")),
            SCORE_NODES,
            SCORE_EXISTING,
            _pre_score,
            [67, 36],
            id="test case for ScoringStrategy MostAllocated" + _suffix,
        ),
        pytest.param(
            "LeastAllocated",
            None,
            make_pod(req(cpu="1000", memory="2000")),
            SCORE_NODES,
            SCORE_EXISTING,
            _pre_score,
            [32, 63],
            id="test case for ScoringStrategy LeastAllocated" + _suffix,
        ),
    ]
FIT_SCORE += [
    pytest.param(
        "MostAllocated",
        None,
        make_pod(req(cpu="1000", memory="2000")),
        SIDECAR_NODES,
        SIDECAR_EXISTING,
        True,
        [67, 45],
        id="test case for ScoringStrategy MostAllocated with sidecar container",
    ),
    pytest.param(
        "LeastAllocated",
        None,
        make_pod(req(cpu="1000", memory="2000")),
        SIDECAR_NODES,
        SIDECAR_EXISTING,
        True,
        [32, 55],
        id="test case for ScoringStrategy LeastAllocated with sidecar container",
    ),
]


@pytest.mark.parametrize(
    ("strategy", "shape", "pod", "nodes", "existing", "pre_score", "want"), FIT_SCORE
)
def test_fit_score(
    strategy: str,
    shape: Any,
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    pre_score: bool,
    want: list[int],
) -> None:
    """Upstream: TestFitScore (fit_test.go)."""
    plugin = fit_plugin(strategy, DEFAULT_RESOURCES, shape)
    assert run_scores(plugin, pod, nodes, existing, pre_score=pre_score) == want


TWO_CONTAINERS = make_pod(req(cpu="1000", memory="2000"), req(cpu="2000", memory="3000"))
BIG_NODES = [
    cap_node("node1", {"cpu": "10000", "memory": "20000"}),
    cap_node("node2", {"cpu": "10000", "memory": "20000"}),
]
SMALL_NODES = [
    cap_node("node1", {"cpu": "4000", "memory": "10000"}),
    cap_node("node2", {"cpu": "4000", "memory": "10000"}),
]
EXT_NODES = [
    cap_node("node1", {"cpu": "6000", "memory": "10000"}),
    cap_node("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
]
EXT_NODES_BOTH = [
    cap_node("node1", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
    cap_node("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "10"}),
]
CPU_ONLY_EXISTING = [
    make_pod(req(cpu="3000", memory="0"), node="node1"),
    make_pod(req(cpu="3000", memory="0"), node="node1"),
    make_pod(req(cpu="3000", memory="0"), node="node2"),
    make_pod(req(cpu="3000", memory="5000"), node="node2"),
]
MIXED_EXISTING = [
    make_pod(req(cpu="3000", memory="0"), node="node1"),
    make_pod(req(cpu="3000", memory="5000"), node="node2"),
]

LEAST_ALLOCATED: list[Any] = [
    pytest.param(
        make_pod(),
        SMALL_NODES,
        [],
        DEFAULT_RESOURCES,
        [100, 100],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        TWO_CONTAINERS,
        SCORE_NODES,
        [],
        DEFAULT_RESOURCES,
        [37, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod(),
        SMALL_NODES,
        [
            make_pod(node="node1"),
            make_pod(node="node1"),
            make_pod(node="node2"),
            make_pod(node="node2"),
        ],
        DEFAULT_RESOURCES,
        [100, 100],
        id="no resources requested, pods scheduled",
    ),
    pytest.param(
        make_pod(),
        BIG_NODES,
        CPU_ONLY_EXISTING,
        DEFAULT_RESOURCES,
        [70, 57],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        TWO_CONTAINERS,
        BIG_NODES,
        MIXED_EXISTING,
        DEFAULT_RESOURCES,
        [57, 45],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        TWO_CONTAINERS,
        [
            cap_node("node1", {"cpu": "10000", "memory": "20000"}),
            cap_node("node2", {"cpu": "10000", "memory": "50000"}),
        ],
        MIXED_EXISTING,
        DEFAULT_RESOURCES,
        [57, 60],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        make_pod(req(cpu="3000", memory="0")),
        SMALL_NODES,
        MIXED_EXISTING,
        DEFAULT_RESOURCES,
        [50, 25],
        id="requested resources exceed node capacity",
    ),
    pytest.param(
        make_pod(),
        [make_node("node1", {}), make_node("node2", {})],
        MIXED_EXISTING,
        DEFAULT_RESOURCES,
        [0, 0],
        id="zero node resources, pods scheduled with resources",
    ),
    pytest.param(
        TWO_CONTAINERS,
        SCORE_NODES,
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        [41, 50],
        id="nothing scheduled, resources requested with different weight on CPU and memory, "
        "differently sized nodes",
    ),
    pytest.param(
        TWO_CONTAINERS,
        EXT_NODES,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 50],
        id="bypass extended resource if the pod does not request",
    ),
    pytest.param(
        make_pod(req(cpu="3000", memory="5000", **{EXTENDED_RES: "2"})),
        EXT_NODES_BOTH,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 60],
        id="honor extended resource if the pod requests",
    ),
    pytest.param(
        make_pod(req(cpu="3000", memory="4000")),
        EXT_NODES,
        [],
        [{"name": EXTENDED_RES, "weight": 2}, *DEFAULT_RESOURCES],
        [55, 55],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), LEAST_ALLOCATED)
def test_least_allocated_scoring_strategy(
    pod: Pod, nodes: list[Node], existing: list[Pod], resources: Any, want: list[int]
) -> None:
    """Upstream: TestLeastAllocatedScoringStrategy (least_allocated_test.go)."""
    assert run_scores(fit_plugin("LeastAllocated", resources), pod, nodes, existing) == want


MOST_ALLOCATED: list[Any] = [
    pytest.param(
        make_pod(),
        SMALL_NODES,
        [],
        DEFAULT_RESOURCES,
        [0, 0],
        id="nothing scheduled, nothing requested",
    ),
    pytest.param(
        TWO_CONTAINERS,
        SCORE_NODES,
        [],
        DEFAULT_RESOURCES,
        [62, 50],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        make_pod(),
        BIG_NODES,
        CPU_ONLY_EXISTING,
        DEFAULT_RESOURCES,
        [30, 42],
        id="no resources requested, pods scheduled with resources",
    ),
    pytest.param(
        TWO_CONTAINERS,
        BIG_NODES,
        MIXED_EXISTING,
        DEFAULT_RESOURCES,
        [42, 55],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        make_pod(req(cpu="2000", memory="4000"), req(cpu="3000", memory="5000")),
        [
            cap_node("node1", {"cpu": "5000", "memory": "10000"}),
            cap_node("node2", {"cpu": "10000", "memory": "9000"}),
        ],
        [],
        DEFAULT_RESOURCES,
        [95, 75],
        id="resources requested equal node capacity",
    ),
    pytest.param(
        TWO_CONTAINERS,
        SCORE_NODES,
        [],
        [{"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}],
        [58, 50],
        id="nothing scheduled, resources requested, differently sized nodes (weighted)",
    ),
    pytest.param(
        make_pod(None),
        [
            cap_node("node1", {"cpu": "250m", "memory": "1000Mi"}),
            cap_node("node2", {"cpu": "250m", "memory": "1000Mi"}),
        ],
        [make_pod(None, node="node1"), make_pod(None, node="node1")],
        DEFAULT_RESOURCES,
        [80, 30],
        id="no resources requested, pods scheduled, nonzero request for resource",
    ),
    pytest.param(
        TWO_CONTAINERS,
        EXT_NODES,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 50],
        id="bypass extended resource if the pod does not request",
    ),
    pytest.param(
        make_pod(req(cpu="3000", memory="5000", **{EXTENDED_RES: "2"})),
        EXT_NODES_BOTH,
        [],
        EXTENDED_RESOURCE_SET,
        [50, 40],
        id="honor extended resource if the pod request",
    ),
    pytest.param(
        make_pod(req(cpu="3000", memory="4000")),
        EXT_NODES,
        [],
        [{"name": EXTENDED_RES, "weight": 2}, *DEFAULT_RESOURCES],
        [45, 45],
        id="if the node doesn't have a resource",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), MOST_ALLOCATED)
def test_most_allocated_scoring_strategy(
    pod: Pod, nodes: list[Node], existing: list[Pod], resources: Any, want: list[int]
) -> None:
    """Upstream: TestMostAllocatedScoringStrategy (most_allocated_test.go)."""
    assert run_scores(fit_plugin("MostAllocated", resources), pod, nodes, existing) == want


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated"])
def test_resources_not_set_scores_zero_with_an_error(strategy: str) -> None:
    """Upstream: "Resources not set, pods scheduled with error" (least/most_allocated_test.go).

    The v1 defaults fill in cpu and memory, so only args built without defaulting get here.
    """
    args = NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(type=strategy, resources=[]))
    plugin = Fit(args, HANDLE, FEATURES)
    scores = run_scores(plugin, TWO_CONTAINERS, SCORE_NODES, want_code=Code.Error)
    assert scores == [0, 0]
    _, status = plugin.score(CycleState(), TWO_CONTAINERS, NodeInfo(SCORE_NODES[0]))
    assert status == Status(Code.Error, ("resources not found",))


RTCR: list[Any] = [
    pytest.param(
        make_pod(),
        SMALL_NODES,
        [make_pod(node="node1"), make_pod(node="node1")],
        [100, 100],
        id="nothing scheduled, nothing requested (default - least requested nodes have priority)",
    ),
    pytest.param(
        TWO_CONTAINERS,
        SCORE_NODES,
        [make_pod(node="node1"), make_pod(node="node1")],
        [38, 50],
        id="nothing scheduled, resources requested, differently sized nodes (default - least "
        "requested nodes have priority)",
    ),
    pytest.param(
        make_pod(),
        SCORE_NODES,
        [
            make_pod(req(cpu="3000", memory="5000"), node="node1"),
            make_pod(req(cpu="3000", memory="5000"), node="node2"),
        ],
        [38, 50],
        id="no resources requested, pods scheduled with resources (default - least requested "
        "nodes have priority)",
    ),
]


@pytest.mark.parametrize(("pod", "nodes", "existing", "want"), RTCR)
def test_requested_to_capacity_ratio_scoring_strategy(
    pod: Pod, nodes: list[Node], existing: list[Pod], want: list[int]
) -> None:
    """Upstream: TestRequestedToCapacityRatioScoringStrategy (requested_to_capacity_ratio_test)."""
    plugin = fit_plugin("RequestedToCapacityRatio", DEFAULT_RESOURCES, SHAPE_DOWN)
    assert run_scores(plugin, pod, nodes, existing) == want


BROKEN_LINEAR: list[Any] = [
    pytest.param(
        [(10, 1), (90, 9)],
        [
            (-10, 1),
            (0, 1),
            (9, 1),
            (10, 1),
            (15, 1),
            (19, 1),
            (20, 2),
            (89, 8),
            (90, 9),
            (99, 9),
            (100, 9),
            (110, 9),
        ],
        id="case_0",
    ),
    pytest.param(
        [(0, 2), (40, 10), (100, 0)],
        [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
        id="case_1",
    ),
    pytest.param(
        [(0, 2), (40, 2), (100, 2)],
        [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
        id="case_2",
    ),
    pytest.param(
        [(0, 10), (100, 0)],
        [(1, 10), (99, 1), (15, 9)],
        id="a falling segment truncates toward zero as Go's division does",
    ),
]


@pytest.mark.parametrize(("points", "assertions"), BROKEN_LINEAR)
def test_broken_linear_function(
    points: list[tuple[int, int]], assertions: list[tuple[int, int]]
) -> None:
    """Upstream: TestBrokenLinearFunction (requested_to_capacity_ratio_test.go)."""
    f = build_broken_linear_function(points)
    assert [f(p) for p, _ in assertions] == [want for _, want in assertions]


GIB_10K = 10000 * 1024 * 1024

BIN_PACKING_SINGLE: list[Any] = [
    pytest.param(make_pod(), [], [0, 0], id="nothing scheduled, nothing requested"),
    pytest.param(
        make_pod(req(**{"intel.com/foo": "2"})),
        [make_pod()],
        [2, 5],
        id="resources requested, pods scheduled with less resources",
    ),
    pytest.param(
        make_pod(req(**{"intel.com/foo": "2"})),
        [make_pod(req(**{"intel.com/foo": "2"}), node="node2")],
        [2, 10],
        id="resources requested, pods scheduled with resources, on node with existing pod running",
    ),
    pytest.param(
        make_pod(req(**{"intel.com/foo": "4"})),
        [make_pod()],
        [5, 10],
        id="resources requested, pods scheduled with more resources",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), BIN_PACKING_SINGLE)
def test_resource_bin_packing_single_extended(
    pod: Pod, existing: list[Pod], want: list[int]
) -> None:
    """Upstream: TestResourceBinPackingSingleExtended (requested_to_capacity_ratio_test.go)."""
    nodes = [
        resource_node("node1", 4000, GIB_10K, {"intel.com/foo": 8}),
        resource_node("node2", 4000, GIB_10K, {"intel.com/foo": 4}),
    ]
    plugin = fit_plugin(
        "RequestedToCapacityRatio",
        [{"name": "intel.com/foo", "weight": 1}],
        [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}],
    )
    assert run_scores(plugin, pod, nodes, existing) == want


BIN_PACKING_MULTIPLE: list[Any] = [
    pytest.param(make_pod(), [], [0, 0], id="nothing scheduled, nothing requested"),
    pytest.param(
        make_pod(req(**{"intel.com/foo": "2", "intel.com/bar": "2"})),
        [make_pod()],
        [4, 3],
        id="resources requested, pods scheduled with less resources",
    ),
    pytest.param(
        make_pod(req(**{"intel.com/foo": "2", "intel.com/bar": "2"})),
        [make_pod(req(**{"intel.com/foo": "4", "intel.com/bar": "2"}), node="node2")],
        [4, 7],
        id="resources requested, pods scheduled with resources, on node with existing pod running",
    ),
    pytest.param(
        make_pod(req(**{"intel.com/foo": "4", "intel.com/bar": "2"})),
        [make_pod()],
        [5, 5],
        id="resources requested, pods scheduled with more resources",
    ),
]


@pytest.mark.parametrize(("pod", "existing", "want"), BIN_PACKING_MULTIPLE)
def test_resource_bin_packing_multiple_extended(
    pod: Pod, existing: list[Pod], want: list[int]
) -> None:
    """Upstream: TestResourceBinPackingMultipleExtended (requested_to_capacity_ratio_test.go)."""
    nodes = [
        resource_node("node1", 4000, GIB_10K, {"intel.com/foo": 8, "intel.com/bar": 4}),
        resource_node("node2", 4000, GIB_10K, {"intel.com/foo": 4, "intel.com/bar": 8}),
    ]
    plugin = fit_plugin(
        "RequestedToCapacityRatio",
        [{"name": "intel.com/foo", "weight": 3}, {"name": "intel.com/bar", "weight": 5}],
        [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}],
    )
    assert run_scores(plugin, pod, nodes, existing) == want


# ---------------------------------------------------------------------------------------------
# balanced_allocation_test.go: TestNodeResourcesBalancedAllocation (v1.35 scores)

CPU_AND_MEMORY_AND_GPU = [
    req(cpu="1000m", memory="2000"),
    {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
]
CPU_ONLY = [req(cpu="1000m", memory="0"), req(cpu="2000m", memory="0")]
MEMORY_ONLY = [req(cpu="0", memory="2000"), req(cpu="0", memory="3000")]
CPU_AND_MEMORY = [req(cpu="1000m", memory="2000"), req(cpu="2000m", memory="3000")]
GPU_RESOURCES = [*DEFAULT_RESOURCES, {"name": "nvidia.com/gpu", "weight": 1}]


def spec_pod(containers: list[dict[str, str]], node: str = "") -> Pod:
    return make_pod(*containers, node=node)


BALANCED: list[Any] = [
    pytest.param(
        spec_pod(CPU_AND_MEMORY),
        [resource_node("node1", 4000, 10000), resource_node("node2", 6000, 10000)],
        [],
        None,
        [87, 100],
        id="nothing scheduled, resources requested, differently sized nodes",
    ),
    pytest.param(
        spec_pod(CPU_AND_MEMORY),
        [resource_node("node1", 10000, 20000), resource_node("node2", 10000, 20000)],
        [spec_pod(CPU_ONLY, "node1"), spec_pod(CPU_AND_MEMORY, "node2")],
        None,
        [82, 95],
        id="resources requested, pods scheduled with resources",
    ),
    pytest.param(
        spec_pod(CPU_AND_MEMORY),
        [resource_node("node1", 10000, 20000), resource_node("node2", 10000, 50000)],
        [spec_pod(CPU_ONLY, "node1"), spec_pod(CPU_AND_MEMORY, "node2")],
        None,
        [82, 80],
        id="resources requested, pods scheduled with resources, differently sized nodes",
    ),
    pytest.param(
        spec_pod(MEMORY_ONLY),
        [resource_node("node1", 3000, 5000), resource_node("node2", 3000, 5000)],
        [spec_pod(CPU_ONLY, "node1")],
        None,
        [100, 50],
        id="resources requested, pods scheduled with resources, nodes to reach min/max score",
    ),
    pytest.param(
        spec_pod(CPU_ONLY),
        [resource_node("node1", 6000, 10000), resource_node("node2", 6000, 10000)],
        [spec_pod(CPU_ONLY, "node1"), spec_pod(CPU_AND_MEMORY, "node2")],
        None,
        [50, 75],
        id="requested resources at node capacity",
    ),
    pytest.param(
        make_pod(req(memory="0", **{"nvidia.com/gpu": "1"})),
        [
            resource_node("node1", 3500, 40000, {"nvidia.com/gpu": 8}),
            resource_node("node2", 3500, 40000, {"nvidia.com/gpu": 8}),
        ],
        [spec_pod(CPU_AND_MEMORY, "node2"), spec_pod(CPU_AND_MEMORY_AND_GPU, "node1")],
        GPU_RESOURCES,
        [70, 65],
        id="include scalar resource on a node for balanced resource allocation",
    ),
    pytest.param(
        spec_pod(CPU_AND_MEMORY),
        [
            resource_node("node1", 3500, 40000, {"nvidia.com/gpu": 8}),
            resource_node("node2", 3500, 40000),
        ],
        [],
        GPU_RESOURCES,
        [63, 63],
        id="node without the scalar resource should skip the scalar resource",
    ),
]


def balanced_plugin(resources: Any) -> BalancedAllocation:
    raw = None if resources is None else {"resources": resources}
    return noderesources.new_balanced_allocation(raw, HANDLE, FEATURES)


@pytest.mark.parametrize("pre_score", [True, False], ids=["", "if PreScore not called"])
@pytest.mark.parametrize(("pod", "nodes", "existing", "resources", "want"), BALANCED)
def test_node_resources_balanced_allocation(
    pod: Pod,
    nodes: list[Node],
    existing: list[Pod],
    resources: Any,
    want: list[int],
    pre_score: bool,
) -> None:
    """Upstream: TestNodeResourcesBalancedAllocation (balanced_allocation_test.go)."""
    plugin = balanced_plugin(resources)
    assert run_scores(plugin, pod, nodes, existing, pre_score=pre_score) == want


def test_balanced_allocation_skips_best_effort_pods_in_prescore() -> None:
    """Upstream: "nothing scheduled, nothing requested, skip in PreScore"."""
    plugin = balanced_plugin(None)
    nodes = [resource_node("node1", 4000, 10000), resource_node("node2", 4000, 10000)]
    state = CycleState()
    assert plugin.pre_score(state, make_pod(None), node_infos(nodes, [])).code is Code.Skip
    # Without PreScore, Score gives a best-effort pod 0.
    assert plugin.score(CycleState(), make_pod(None), NodeInfo(nodes[0])) == (0, SUCCESS)


def test_balanced_resource_scorer_uses_the_population_standard_deviation() -> None:
    # Two resources: half the difference; three: sqrt(mean of squared deviations).
    assert balanced_resource_scorer([3, 5], [4, 10]) == 87
    assert balanced_resource_scorer([30, 5, 4], [35, 40, 8]) == 70
    # Fractions are capped at 1 and absent resources are left out.
    assert balanced_resource_scorer([20, 10, 7], [10, 10, 0]) == 100
    assert balanced_resource_scorer([], []) == 100


# ---------------------------------------------------------------------------------------------
# Pod requests and node accounting (component-helpers, framework/types.go)


def milli(rl: Mapping[str, Any], name: str = "cpu") -> int:
    q = rl[name]
    return int(q.milli_value())


def test_sidecars_run_with_containers_and_with_later_init_containers() -> None:
    # KEP-753: sidecar s1 (1), init i1 (5, runs with s1), sidecar s2 (2), init i2 (1, runs with
    # s1 and s2), container (3). Running: 3 + 1 + 2 = 6; peak init: max(1, 5+1, 3, 1+3) = 6.
    pod = make_pod(
        {"cpu": "3"},
        init=[{"cpu": "1"}, {"cpu": "5"}, {"cpu": "2"}, {"cpu": "1"}],
        sidecars=[0, 2],
    )
    assert milli(pod_requests(pod)) == 6000
    # A bigger init container before any sidecar dominates.
    pod = make_pod({"cpu": "1"}, init=[{"cpu": "10"}, {"cpu": "1"}], sidecars=[1])
    assert milli(pod_requests(pod)) == 10000
    # The same init container after the sidecar runs alongside it.
    pod = make_pod({"cpu": "1"}, init=[{"cpu": "1"}, {"cpu": "10"}], sidecars=[0])
    assert milli(pod_requests(pod)) == 11000


def test_pod_level_requests_replace_cpu_memory_and_hugepages_but_not_others() -> None:
    pod = make_pod(
        {"cpu": "1", "memory": "1Gi", "ephemeral-storage": "1Gi", EXT_A: "2"},
        pod_level={"cpu": "3", "memory": "2Gi"},
        overhead={"cpu": "250m"},
    )
    reqs = pod_requests(pod)
    assert milli(reqs) == 3250
    assert reqs["memory"].value() == 2 * 2**30
    assert reqs["ephemeral-storage"].value() == 2**30
    assert reqs[EXT_A].value() == 2
    assert milli(pod_requests(pod, skip_pod_level_resources=True)) == 1250


def test_a_bound_pod_counts_100m_and_200mi_per_container_without_requests() -> None:
    pod = make_pod(None, {"cpu": "0"}, {"memory": "1Gi"})
    pr = calculate_resource(pod, FEATURES)
    assert pr.resource.milli_cpu == 0
    assert pr.resource.memory == 2**30
    # c0 has neither; c1 has an explicit cpu 0; c2 has no cpu.
    assert pr.non0_cpu == 100 + 0 + 100
    assert pr.non0_mem == 2 * 200 * 2**20 + 2**30


def test_with_pod_level_requests_only_unmentioned_resources_get_defaults() -> None:
    pod = make_pod(None, None, pod_level={"cpu": "2"})
    pr = calculate_resource(pod, FEATURES)
    assert pr.non0_cpu == 2000
    assert pr.non0_mem == 2 * 200 * 2**20
    # Without the feature, pod-level requests are ignored altogether.
    off = calculate_resource(pod, Features(enable_pod_level_resources=False))
    assert (off.resource.milli_cpu, off.non0_cpu) == (0, 200)


def test_node_totals_sum_requests_and_non_zero_requests_of_every_pod() -> None:
    node = make_node("n", {"cpu": "4", "memory": "8Gi", "pods": "110", EXT_A: "4"})
    pods = [
        make_pod({"cpu": "500m", "memory": "1Gi", EXT_A: "1"}),
        make_pod(None),
        make_pod({"cpu": "0.0001"}, {"cpu": "0.0001"}),
    ]
    totals = node_resources(NodeInfo(node, pods), FEATURES)
    assert totals.requested.milli_cpu == 500 + 0 + 1
    assert totals.requested.memory == 2**30
    assert totals.requested.scalar_resources == {EXT_A: 1}
    assert totals.non_zero_requested.milli_cpu == 500 + 100 + 1
    assert totals.non_zero_requested.memory == 2**30 + 200 * 2**20 + 2 * 200 * 2**20
    assert totals.allocatable.allowed_pod_number == 110
    assert totals.pod_count == 3


def test_fit_scoring_ignores_the_incoming_pods_pod_level_requests() -> None:
    # NewFit never hands the PodLevelResources gate to its scorer, so LeastAllocated scores
    # the containers' requests; BalancedAllocation honours the pod-level ones.
    pod = make_pod(req(cpu="1000", memory="5000"), pod_level={"cpu": "3000"})
    nodes = [cap_node("node1", {"cpu": "4000", "memory": "10000"})]
    assert run_scores(fit_plugin("LeastAllocated", DEFAULT_RESOURCES), pod, nodes) == [62]
    assert run_scores(balanced_plugin(None), pod, nodes) == [87]


RESOURCE_NAMES = [
    ("cpu", False, False),
    ("pods", False, False),
    ("example.com/gpu", True, True),
    ("nvidia.com/gpu", True, True),
    ("kubernetes.io/something", False, True),
    ("subdomain.kubernetes.io/something", False, True),
    ("hugepages-2Mi", False, True),
    ("attachable-volumes-csi-x", False, True),
    ("requests.example.com/gpu", False, False),
    ("a/b/c", False, False),
    ("Example.com/gpu", False, False),
]


@pytest.mark.parametrize(
    ("name", "extended", "scalar"), RESOURCE_NAMES, ids=[n[0] for n in RESOURCE_NAMES]
)
def test_resource_name_kinds(name: str, extended: bool, scalar: bool) -> None:
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


# ---------------------------------------------------------------------------------------------
# Args: v1 defaults and validation (defaults.go, validation_pluginargs.go)


def test_fit_args_default_to_least_allocated_over_cpu_and_memory() -> None:
    args = decode_node_resources_fit_args(None)
    assert args.scoring_strategy == ScoringStrategy(
        type="LeastAllocated",
        resources=[ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)],
    )
    args = decode_node_resources_fit_args(
        {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "gpu"}]}}
    )
    assert args.scoring_strategy is not None
    assert args.scoring_strategy.resources == [ResourceSpec(name="gpu", weight=1)]
    args = decode_node_resources_fit_args({"scoringStrategy": {"type": "MostAllocated"}})
    assert args.scoring_strategy is not None
    assert [r.name for r in args.scoring_strategy.resources] == ["cpu", "memory"]


def test_balanced_allocation_args_default_to_cpu_and_memory() -> None:
    args = decode_node_resources_balanced_allocation_args(None)
    assert args.resources == [
        ResourceSpec(name="cpu", weight=1),
        ResourceSpec(name="memory", weight=1),
    ]
    args = decode_node_resources_balanced_allocation_args({"resources": [{"name": "cpu"}]})
    assert args.resources == [ResourceSpec(name="cpu", weight=1)]


FIT_ARG_ERRORS: list[Any] = [
    pytest.param(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}],
            }
        },
        "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not "
        "in valid range (0, 100]",
        id="resource with negative weight",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "resources": [{"name": "memory", "weight": 101}],
            }
        },
        "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of memory not "
        "in valid range (0, 100]",
        id="resource weight larger than MaxNodeScore",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "Foo"}},
        'scoringStrategy.type: Unsupported value: "Foo": supported values: "LeastAllocated", '
        '"MostAllocated", "RequestedToCapacityRatio"',
        id="unsupported scoring strategy",
    ),
    pytest.param(
        {"ignoredResources": ["a/b/c"]},
        'ignoredResources[0]: Invalid value: "a/b/c": a valid label key must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and "
        "'/' (e.g. 'example.com/MyName')",
        id="invalid ignored resource name",
    ),
    pytest.param(
        {"ignoredResourceGroups": ["example.com/aa"]},
        'ignoredResourceGroups[0]: Invalid value: "example.com/aa": resource group name can\'t '
        "contain '/'",
        id="resource group with a slash",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 10, "score": 1}, {"utilization": 10, "score": 11}]
                },
            }
        },
        "[scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in "
        "increasing order, scoringStrategy.shape[1].score: Invalid value: 11: not in valid range "
        "[0, 10]]",
        id="shape not increasing, score out of range",
    ),
    pytest.param(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}},
        "scoringStrategy.shape: Required value: at least one point must be specified",
        id="empty shape",
    ),
    pytest.param(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "requestedToCapacityRatio": {"shape": [{"utilization": 101, "score": 0}]},
            }
        },
        "scoringStrategy.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]",
        id="utilization out of range",
    ),
]


@pytest.mark.parametrize(("raw", "message"), FIT_ARG_ERRORS)
def test_invalid_fit_args_fail_with_the_schedulers_message(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        noderesources.new(raw, HANDLE, FEATURES)
    assert str(err.value) == message


def test_a_zero_weight_is_invalid_when_not_defaulted() -> None:
    """Upstream: "resource with zero weight" (the test builds args without v1 defaulting)."""
    args = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            type="LeastAllocated",
            resources=[ResourceSpec(name="memory", weight=1), ResourceSpec(name="cpu", weight=0)],
        )
    )
    assert validate_node_resources_fit_args(args) == [
        "scoringStrategy.resources[1].weight: Invalid value: 0: resource weight of cpu not in "
        "valid range (0, 100]"
    ]


def test_requested_to_capacity_ratio_without_a_shape_is_refused() -> None:
    with pytest.raises(ConfigError, match="requestedToCapacityRatio"):
        noderesources.new(
            {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}, HANDLE, FEATURES
        )


BALANCED_ARG_ERRORS: list[Any] = [
    pytest.param(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]},
        'resources[1].name: Duplicate value: "cpu"',
        id="duplicated resource",
    ),
    pytest.param(
        {"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": -1}]},
        "[resources[0].weight: Invalid value: 2: must be 1, resources[1].weight: Invalid value: "
        "-1: must be 1]",
        id="weights other than 1",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BALANCED_ARG_ERRORS)
def test_invalid_balanced_allocation_args_fail_with_the_schedulers_message(
    raw: Any, message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        noderesources.new_balanced_allocation(raw, HANDLE, FEATURES)
    assert str(err.value) == message


def test_validation_prefixes_the_path_where_the_args_sit() -> None:
    from topospread.api.field import Path

    args = NodeResourcesBalancedAllocationArgs(resources=[ResourceSpec(name="cpu", weight=3)])
    path = Path.root("profiles").index(0).child("pluginConfig").index(1).child("args")
    assert validate_node_resources_balanced_allocation_args(args, path) == [
        "profiles[0].pluginConfig[1].args.resources[0].weight: Invalid value: 3: must be 1"
    ]


def test_plugins_name_themselves_as_upstream() -> None:
    assert noderesources.new(None, HANDLE, FEATURES).name == "NodeResourcesFit"
    assert balanced_plugin(None).name == "NodeResourcesBalancedAllocation"
    assert noderesources.NAME == "NodeResourcesFit"
    assert noderesources.BALANCED_ALLOCATION_NAME == "NodeResourcesBalancedAllocation"
    assert MAX_NODE_SCORE == 100


@pytest.mark.parametrize(
    "allocatable",
    [
        pytest.param({"cpu": "3920m", "memory": "15Gi", "pods": "58"}, id="strings"),
        pytest.param({"cpu": 4, "memory": "15Gi", "pods": 58.0}, id="numbers"),
        pytest.param({"cpu": "1", "example.com/gpu": "2"}, id="a scalar resource"),
    ],
)
def test_nodes_of_one_allocatable_get_the_resource_each_would_alone(
    allocatable: dict[str, Any],
) -> None:
    """allocatable_resource keeps one result per allocatable of string quantities: nodes of
    one instance type get equal resources, each what parsing its own allocatable gives."""
    from topospread.plugins.noderesources import resource_helpers

    def node(name: str) -> Node:
        doc = {"metadata": {"name": name}, "status": {"allocatable": allocatable}}
        return msgspec.convert(doc, Node)

    alone = resource_helpers.new_resource(
        {k: resource_helpers.parse_quantity(v) for k, v in allocatable.items()}
    )
    first, second = node("a"), node("b")
    assert resource_helpers.allocatable_resource(first) == alone
    assert resource_helpers.allocatable_resource(second) == alone
    assert resource_helpers.allocatable_resource(second) is resource_helpers.allocatable_resource(
        second
    )
