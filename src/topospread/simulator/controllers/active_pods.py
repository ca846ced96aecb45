"""A pod's state as a controller reads it (its phase, readiness, availability, deletion cost)
and the order in which controllers delete pods (ActivePods, ActivePodsWithRanks).

Pod state. The simulator has no kubelet, so a pod whose manifest gives no status is read this
way: bound (``spec.nodeName`` set) means Running and Ready, unbound means Pending and not ready.
A pod that carries a status (``phase``, a ``Ready`` condition) is read exactly as upstream reads
it.

Time. ``now`` is nanoseconds since the epoch, or None for a simulation without a clock; without
it, orders that depend on age fall back to upstream's "zero time" rules, and ``minReadySeconds``
is treated as already elapsed. A pod made ready by the simulator (no Ready condition) has no
ready time, so it is available at once.

Upstream: k8s.io/kubernetes/pkg/api/v1/pod (util.go) and pkg/controller/controller_utils.go
(v1.35)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from topospread.api.types import Pod
from topospread.simulator.controllers.common import creation_time, parse_time

# ---------------------------------------------------------------------------------------------
# Constants, spelled as upstream spells them

POD_PENDING: Final = "Pending"
POD_RUNNING: Final = "Running"
POD_SUCCEEDED: Final = "Succeeded"
POD_FAILED: Final = "Failed"
POD_UNKNOWN: Final = "Unknown"
POD_READY: Final = "Ready"
CONDITION_TRUE: Final = "True"
CONDITION_FALSE: Final = "False"

# k8s.io/api/core/v1 annotation_key_constants.go
POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"


_PHASE_ORDINAL: Final[Mapping[str, int]] = {POD_PENDING: 0, POD_UNKNOWN: 1, POD_RUNNING: 2}


# ---------------------------------------------------------------------------------------------
# Pod state


def _has_status(pod: Pod) -> bool:
    return bool(pod.status.phase)


def pod_phase(pod: Pod) -> str:
    """``status.phase``; without one, Running when bound and Pending when not."""
    if pod.status.phase:
        return pod.status.phase
    return POD_RUNNING if pod.spec.node_name else POD_PENDING


def _ready_condition(pod: Pod) -> tuple[bool, int | None] | None:
    for c in pod.status.conditions:
        if c.type == POD_READY:
            return c.status == CONDITION_TRUE, parse_time(c.last_transition_time)
    return None


def is_pod_ready(pod: Pod) -> bool:
    """The Ready condition; without one (and without a phase), whether the pod is bound.

    Upstream: IsPodReady (pkg/api/v1/pod/util.go, v1.35)
    """
    cond = _ready_condition(pod)
    if cond is not None:
        return cond[0]
    return not _has_status(pod) and bool(pod.spec.node_name)


def pod_ready_time(pod: Pod) -> int | None:
    """When a ready pod became ready; None (the zero time) when unknown or not ready.

    Upstream: podReadyTime (pkg/controller/controller_utils.go, v1.35)
    """
    if not is_pod_ready(pod):
        return None
    cond = _ready_condition(pod)
    return cond[1] if cond is not None else None


def is_pod_active(pod: Pod) -> bool:
    """Not finished and not being deleted.

    Upstream: IsPodActive (pkg/controller/controller_utils.go, v1.35)
    """
    phase = pod_phase(pod)
    return (
        phase != POD_SUCCEEDED and phase != POD_FAILED and pod.metadata.deletion_timestamp is None
    )


def is_pod_terminating(pod: Pod) -> bool:
    return pod.metadata.deletion_timestamp is not None


def is_pod_available(pod: Pod, min_ready_seconds: int, now: int | None) -> bool:
    """Ready for at least ``min_ready_seconds``.

    Without a clock (``now`` None) or a ready time (a pod the simulator made ready), a ready
    pod counts as available: the simulation has no notion of how long it has been ready.

    Upstream: IsPodAvailable (pkg/api/v1/pod/util.go, v1.35)
    """
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds == 0 or now is None:
        return True
    cond = _ready_condition(pod)
    if cond is None:
        return True
    since = cond[1]
    return since is not None and since + min_ready_seconds * 1_000_000_000 < now


def deletion_cost(pod: Pod) -> int:
    """The ``controller.kubernetes.io/pod-deletion-cost`` annotation, 0 when absent or invalid
    (no sign other than ``-``, no leading zeros, within int32).

    Upstream: GetDeletionCostFromPodAnnotations (pkg/apis/core/helper/helpers.go, v1.35)
    """
    value = pod.metadata.annotations.get(POD_DELETION_COST)
    if value is None or not value:
        return 0
    if not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return 0
    if re.fullmatch(r"-?[0-9]+", value) is None:
        return 0
    number = int(value)
    return number if -(2**31) <= number < 2**31 else 0


def max_container_restarts(pod: Pod) -> tuple[int, int]:
    """The most restarts of any regular container, and of any sidecar (an init container
    with restartPolicy Always).

    Upstream: maxContainerRestarts (pkg/controller/controller_utils.go, v1.35)
    """
    regular = max((c.restart_count for c in pod.status.container_statuses), default=0)
    sidecars = {c.name for c in pod.spec.init_containers if c.restart_policy == "Always"}
    sidecar = max(
        (c.restart_count for c in pod.status.init_container_statuses if c.name in sidecars),
        default=0,
    )
    return regular, sidecar


def compare_max_container_restarts(a: Pod, b: Pod) -> bool | None:
    """True when ``a`` restarted more, False when ``b`` did, None when even (regular
    containers first, then sidecars).

    Upstream: compareMaxContainerRestarts (pkg/controller/controller_utils.go, v1.35)
    """
    regular_a, sidecar_a = max_container_restarts(a)
    regular_b, sidecar_b = max_container_restarts(b)
    if regular_a != regular_b:
        return regular_a > regular_b
    if sidecar_a != sidecar_b:
        return sidecar_a > sidecar_b
    return None


# ---------------------------------------------------------------------------------------------
# The order in which controllers delete pods


def _after_or_zero(t1: int | None, t2: int | None) -> bool:
    """t1 after t2, the zero time counting as after any other.

    Upstream: afterOrZero (pkg/controller/controller_utils.go, v1.35)
    """
    if t1 is None or t2 is None:
        return t1 is None
    return t1 > t2


def _go_log2(x: float) -> float:
    # Go's math.Log2: exact for powers of two, else log(frac)/ln2 + exp.
    frac, exp = math.frexp(x)
    if frac == 0.5:
        return float(exp - 1)
    return math.log(frac) * (1 / math.log(2)) + exp


def logarithmic_rank_diff(t1: int, t2: int, now: int) -> int:
    """The difference of floor(log2(age in ns)) of two times; an age <= 0 ranks -1.

    Upstream: logarithmicRankDiff (pkg/controller/controller_utils.go, v1.35)
    """
    d1, d2 = now - t1, now - t2
    r1 = int(_go_log2(float(d1))) if d1 > 0 else -1
    r2 = int(_go_log2(float(d2))) if d2 > 0 else -1
    return r1 - r2


def _newer_first(t1: int | None, t2: int | None, uid1: str, uid2: str, now: int | None) -> bool:
    # LogarithmicScaleDown (GA since v1.31): ages in the same power-of-two bucket are equal,
    # and the UIDs (random) break the tie.
    if now is None or t1 is None or t2 is None:
        return _after_or_zero(t1, t2)
    diff = logarithmic_rank_diff(t1, t2, now)
    if diff == 0:
        return uid1 < uid2
    return diff < 0


def active_pods_with_ranks_less(a: Pod, rank_a: int, b: Pod, rank_b: int, now: int | None) -> bool:
    """Whether ``a`` should be deleted before ``b``: unassigned first; Pending, then Unknown,
    then Running; not ready first; lower pod-deletion-cost first; more related pods on the
    same node (higher rank) first; ready for less time first (logarithmic buckets); more
    restarts first; newer first (logarithmic buckets, then UID).

    Upstream: ActivePodsWithRanks.Less (pkg/controller/controller_utils.go, v1.35)
    """
    node_a, node_b = a.spec.node_name, b.spec.node_name
    if node_a != node_b and (not node_a or not node_b):
        return not node_a
    phase_a = _PHASE_ORDINAL.get(pod_phase(a), 0)
    phase_b = _PHASE_ORDINAL.get(pod_phase(b), 0)
    if phase_a != phase_b:
        return phase_a < phase_b
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return not ready_a
    cost_a, cost_b = deletion_cost(a), deletion_cost(b)
    if cost_a != cost_b:
        return cost_a < cost_b
    if rank_a != rank_b:
        return rank_a > rank_b
    if ready_a and ready_b:
        time_a, time_b = pod_ready_time(a), pod_ready_time(b)
        if time_a != time_b:
            return _newer_first(time_a, time_b, a.metadata.uid, b.metadata.uid, now)
    restarts = compare_max_container_restarts(a, b)
    if restarts is not None:
        return restarts
    created_a, created_b = creation_time(a.metadata), creation_time(b.metadata)
    if created_a != created_b:
        return _newer_first(created_a, created_b, a.metadata.uid, b.metadata.uid, now)
    return False


def active_pods_less(a: Pod, b: Pod) -> bool:
    """ActivePodsWithRanks' order without ranks, deletion cost or logarithmic buckets.

    Upstream: ActivePods.Less (pkg/controller/controller_utils.go, v1.35)
    """
    node_a, node_b = a.spec.node_name, b.spec.node_name
    if node_a != node_b and (not node_a or not node_b):
        return not node_a
    phase_a = _PHASE_ORDINAL.get(pod_phase(a), 0)
    phase_b = _PHASE_ORDINAL.get(pod_phase(b), 0)
    if phase_a != phase_b:
        return phase_a < phase_b
    ready_a, ready_b = is_pod_ready(a), is_pod_ready(b)
    if ready_a != ready_b:
        return not ready_a
    if ready_a and ready_b:
        time_a, time_b = pod_ready_time(a), pod_ready_time(b)
        if time_a != time_b:
            return _after_or_zero(time_a, time_b)
    restarts = compare_max_container_restarts(a, b)
    if restarts is not None:
        return restarts
    created_a, created_b = creation_time(a.metadata), creation_time(b.metadata)
    if created_a != created_b:
        return _after_or_zero(created_a, created_b)
    return False


def _sorted_by_less(
    items: Sequence[tuple[Pod, int]], less: Callable[[tuple[Pod, int], tuple[Pod, int]], bool]
) -> list[Pod]:
    # NOTE: Go's sort.Sort is not stable, so upstream leaves the order of equal pods to chance
    # (and to the informer's map order); here equal pods keep the caller's order, which
    # claim_pods makes the order of names.
    def cmp(x: tuple[Pod, int], y: tuple[Pod, int]) -> int:
        if less(x, y):
            return -1
        if less(y, x):
            return 1
        return 0

    return [pod for pod, _ in sorted(items, key=functools.cmp_to_key(cmp))]


def sort_active_pods_with_ranks(
    pods: Sequence[Pod], ranks: Sequence[int], now: int | None
) -> list[Pod]:
    """Pods in deletion order (first victim first).

    Upstream: sort.Sort(ActivePodsWithRanks) (pkg/controller/controller_utils.go, v1.35)
    """
    return _sorted_by_less(
        list(zip(pods, ranks, strict=True)),
        lambda x, y: active_pods_with_ranks_less(x[0], x[1], y[0], y[1], now),
    )


def sort_active_pods(pods: Sequence[Pod]) -> list[Pod]:
    """Upstream: sort.Sort(ActivePods) (pkg/controller/controller_utils.go, v1.35)"""
    return _sorted_by_less([(p, 0) for p in pods], lambda x, y: active_pods_less(x[0], y[0]))
