"""The disruption controller: keep every PodDisruptionBudget's status current from its pods.

In a cluster, kube-controller-manager's disruption controller recomputes a budget's status
whenever one of its pods (or the budget) changes, and the API server's eviction subresource
and kube-scheduler's preemption read that status. ``simulate`` runs :func:`sync_budget` for
every budget in each round of its settle loop (simulator/simulation.py), so the statuses are
caught up whenever anything reads them; ``schedule``, ``explain`` and ``verify`` read the
status as the cluster reported it.

Not modelled: ``observedGeneration`` (the simulator keeps no ``metadata.generation``; the
eviction subresource's "being processed" refusal never happens), events, and the time-bound
part of ``disruptedPods``: the eviction subresource records an evicted pod there until it is
deleted, but the simulator deletes evicted pods at once, so the controller keeps no entry
(an entry from a saved cluster is taken as expired: a step lasts longer than the two minutes
upstream waits for the deletion).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, TypeAlias

import msgspec

from topospread.api.types import Condition, Pod, PodDisruptionBudget, PodDisruptionBudgetStatus
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.simulator.controllers.active_pods import (
    CONDITION_FALSE,
    CONDITION_TRUE,
    is_pod_ready,
)
from topospread.simulator.controllers.common import (
    get_controller_of,
    get_scaled_value_from_int_or_percent,
)

# k8s.io/api/policy/v1 types.go: the condition and its reasons.
DISRUPTION_ALLOWED_CONDITION: Final = "DisruptionAllowed"
SYNC_FAILED_REASON: Final = "SyncFailed"
SUFFICIENT_PODS_REASON: Final = "SufficientPods"
INSUFFICIENT_PODS_REASON: Final = "InsufficientPods"

# Controllers the scale finder maps to a resource that has no scale subresource: a budget
# that needs their scale fails its sync with "<resource> does not implement the scale
# subresource" (whether or not the controller exists).
NO_SCALE_RESOURCES: Final = {"DaemonSet": "daemonsets.apps", "Job": "jobs.batch"}

# A pod's controller as the controller's finders see it: (an identity of the controller whose
# scale counts, its scale), or None when no finder knows the controller.
ScaleOf: TypeAlias = Callable[[Pod], tuple[str, int] | None]


def is_healthy(pod: Pod) -> bool:
    """Counted as healthy: Ready and not being deleted. The simulator has no readiness delays:
    a pod is Ready from the moment it binds (controllers/active_pods.py's ``is_pod_ready``), so
    a replacement restores a budget's health as soon as it is bound.

    Upstream: countHealthyPods (pkg/controller/disruption/disruption.go, v1.35)
    """
    return pod.metadata.deletion_timestamp is None and is_pod_ready(pod)


def get_expected_pod_count(
    pdb: PodDisruptionBudget, pods: Sequence[Pod], scale_of: ScaleOf
) -> tuple[int, int] | str:
    """``(expectedPods, desiredHealthy)``, or the error that fails the sync.

    An integer ``minAvailable`` counts against the selected pods; ``maxUnavailable`` and a
    percentage ``minAvailable`` against the sum of the scales of the pods' controllers
    (percentages rounded up). Pods without a controller are left out of that sum (upstream
    only warns); a pod whose controller no finder knows, or has no scale subresource (a
    DaemonSet, a Job), fails the sync.

    Upstream: getExpectedPodCount and getExpectedScale (disruption.go, v1.35)
    """
    spec = pdb.spec
    where = f"poddisruptionbudget {pdb.metadata.namespace}/{pdb.metadata.name}: spec"
    max_unavailable, min_available = spec.max_unavailable, spec.min_available
    field: str
    value: int | str
    if max_unavailable is not None:
        field, value = "maxUnavailable", max_unavailable
    elif isinstance(min_available, str):
        field, value = "minAvailable", min_available
    else:
        return (len(pods), min_available) if min_available is not None else (0, 0)
    scales: dict[str, int] = {}
    for pod in pods:
        ref = get_controller_of(pod.metadata)
        if ref is None:
            continue
        if ref.kind in NO_SCALE_RESOURCES:
            return f"{NO_SCALE_RESOURCES[ref.kind]} does not implement the scale subresource"
        found = scale_of(pod)
        if found is None:
            return f'found no controllers for pod "{pod.metadata.name}"'
        scales[found[0]] = found[1]
    expected = sum(scales.values())
    scaled = get_scaled_value_from_int_or_percent(value, expected, True, f"{where}.{field}")
    if max_unavailable is not None:
        return expected, max(expected - scaled, 0)
    return expected, scaled


def set_status_condition(conditions: Sequence[Condition], new: Condition) -> list[Condition]:
    """Replace the condition of the same type (keeping its transition time when its status
    is unchanged) or append it.

    Upstream: SetStatusCondition (apimachinery/pkg/api/meta/conditions.go, v1.35)
    """
    out = list(conditions)
    for i, old in enumerate(out):
        if old.type == new.type:
            if old.status == new.status:
                new = msgspec.structs.replace(new, last_transition_time=old.last_transition_time)
            out[i] = new
            return out
    return [*out, new]


def update_disruption_allowed_condition(
    status: PodDisruptionBudgetStatus,
) -> PodDisruptionBudgetStatus:
    """``DisruptionAllowed``: True (SufficientPods) while a disruption is allowed, else False
    (InsufficientPods).

    Upstream: UpdateDisruptionAllowedCondition (pkg/apis/policy/v1/helper, v1.35)
    """
    allowed = status.disruptions_allowed > 0
    condition = Condition(
        type=DISRUPTION_ALLOWED_CONDITION,
        status=CONDITION_TRUE if allowed else CONDITION_FALSE,
        reason=SUFFICIENT_PODS_REASON if allowed else INSUFFICIENT_PODS_REASON,
    )
    return msgspec.structs.replace(
        status, conditions=set_status_condition(status.conditions, condition)
    )


def sync_failure(status: PodDisruptionBudgetStatus) -> str | None:
    """The message of a failed sync the status records, or None."""
    for condition in status.conditions:
        if condition.type == DISRUPTION_ALLOWED_CONDITION and condition.reason == (
            SYNC_FAILED_REASON
        ):
            return condition.message
    return None


def sync_budget(
    pdb: PodDisruptionBudget, pods: Sequence[Pod], scale_of: ScaleOf
) -> PodDisruptionBudget:
    """The budget with its status recomputed from ``pods`` (every pod of its namespace, in any
    phase, as the controller's lister lists them).

    A failed sync (an invalid selector, a controller without a scale) keeps the rest of the
    status as it was, allows no disruption and records why in a False ``DisruptionAllowed``
    condition with reason SyncFailed: the controller fails safe, and the eviction subresource
    quotes the message.

    Upstream: DisruptionController.sync, trySync, failSafe and updatePdbStatus
    (disruption.go, v1.35)
    """
    try:
        selector = label_selector_as_selector(pdb.spec.selector)
    except SelectorError as err:
        return _fail_safe(pdb, str(err))
    selected = [p for p in pods if selector.matches(p.metadata.labels)]
    counted = get_expected_pod_count(pdb, selected, scale_of)
    if isinstance(counted, str):
        return _fail_safe(pdb, counted)
    expected, desired = counted
    healthy = sum(1 for p in selected if is_healthy(p))
    # No disruption while no pod is expected: a budget whose first pods appear before the
    # controller syncs it again stays safe.
    allowed = max(healthy - desired, 0) if expected > 0 else 0
    status = msgspec.structs.replace(
        pdb.status,
        current_healthy=healthy,
        desired_healthy=desired,
        expected_pods=expected,
        disruptions_allowed=allowed,
        disrupted_pods={},
    )
    status = update_disruption_allowed_condition(status)
    return pdb if status == pdb.status else msgspec.structs.replace(pdb, status=status)


def _fail_safe(pdb: PodDisruptionBudget, message: str) -> PodDisruptionBudget:
    condition = Condition(
        type=DISRUPTION_ALLOWED_CONDITION,
        status=CONDITION_FALSE,
        reason=SYNC_FAILED_REASON,
        message=message,
    )
    status = msgspec.structs.replace(
        pdb.status,
        disruptions_allowed=0,
        conditions=set_status_condition(pdb.status.conditions, condition),
    )
    return pdb if status == pdb.status else msgspec.structs.replace(pdb, status=status)


__all__ = [
    "DISRUPTION_ALLOWED_CONDITION",
    "INSUFFICIENT_PODS_REASON",
    "NO_SCALE_RESOURCES",
    "SUFFICIENT_PODS_REASON",
    "SYNC_FAILED_REASON",
    "ScaleOf",
    "get_expected_pod_count",
    "is_healthy",
    "set_status_condition",
    "sync_budget",
    "sync_failure",
    "update_disruption_allowed_condition",
]
