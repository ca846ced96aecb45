"""PodDisruptionBudgets as the eviction subresource enforces them, for ``drain``.

Two upstream pieces meet here. The disruption controller keeps each budget's status
(``disruptionsAllowed = currentHealthy - desiredHealthy``); the API server's eviction
subresource refuses to evict a pod whose budget allows no disruption (429) and decrements the
allowance of each eviction it grants. The simulator has no separate controller loop for
budgets: :func:`budget_status` computes the status from the pods as they are when a drain pass
starts (the controller being caught up, ``observedGeneration`` always current), and
:class:`Evictions` plays the API server for one pass.

Preemption reads ``status.disruptionsAllowed`` as given in the manifest
(plugins/defaultpreemption); only drains compute it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, TypeAlias

from topospread.api.types import Pod, PodDisruptionBudget
from topospread.errors import ValidationError
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.simulator.controllers.common import (
    POD_FAILED,
    POD_PENDING,
    POD_SUCCEEDED,
    get_controller_of,
    get_scaled_value_from_int_or_percent,
    is_pod_ready,
    pod_phase,
)

# The API server's eviction refusals, byte for byte (pkg/registry/core/pod/storage/eviction.go).
EVICTION_REFUSED: Final = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS: Final = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)
# Status reasons: 429 TooManyRequests is retried by kubectl drain, 500 is not.
REASON_TOO_MANY_REQUESTS: Final = "TooManyRequests"
REASON_INTERNAL_ERROR: Final = "InternalError"

# A pod's controller as the disruption controller's finders see it: (kind/namespace/name of
# the controller whose scale counts, its scale), or None when no finder knows the controller.
ScaleOf: TypeAlias = Callable[[Pod], tuple[str, int] | None]


def pdb_key(pdb: PodDisruptionBudget) -> str:
    return f"{pdb.metadata.namespace}/{pdb.metadata.name}"


def get_pod_disruption_budgets(
    pod: Pod, pdbs: Iterable[PodDisruptionBudget]
) -> list[PodDisruptionBudget]:
    """The budgets of the pod's namespace whose selector selects it: a nil selector selects
    nothing and, in policy/v1, ``{}`` selects every pod (an invalid selector is skipped).
    Preemption's matching differs on ``{}`` (it selects nothing there), as upstream's does.

    Upstream: getPodDisruptionBudgets (pkg/registry/core/pod/storage/eviction.go, v1.35)
    """
    out = []
    for pdb in pdbs:
        if pdb.metadata.namespace != pod.metadata.namespace:
            continue
        try:
            selector = label_selector_as_selector(pdb.spec.selector)
        except SelectorError:
            continue
        if selector.matches(pod.metadata.labels):
            out.append(pdb)
    return out


def validate_pdb(pdb: PodDisruptionBudget, where: str) -> None:
    """The spec checks the budget arithmetic relies on.

    Upstream: ValidatePodDisruptionBudgetSpec (pkg/apis/policy/validation/validation.go, v1.35)
    """
    spec = pdb.spec
    label = f"{where} (PodDisruptionBudget {pdb_key(pdb)})"
    if spec.min_available is not None and spec.max_unavailable is not None:
        raise ValidationError(
            f"{label}: spec: Invalid value: minAvailable and maxUnavailable cannot be both set"
        )
    for name, value in (
        ("minAvailable", spec.min_available),
        ("maxUnavailable", spec.max_unavailable),
    ):
        if value is None:
            continue
        if isinstance(value, int):
            if value < 0:
                raise ValidationError(
                    f"{label}: spec.{name}: Invalid value: {value}: must be greater than or "
                    "equal to 0"
                )
            continue
        digits = value[:-1]
        if not value.endswith("%") or not digits.isdigit():
            raise ValidationError(
                f'{label}: spec.{name}: Invalid value: "{value}": must be an integer or '
                "percentage (e.g '5%')"
            )
        if int(digits) > 100:
            raise ValidationError(
                f'{label}: spec.{name}: Invalid value: "{value}": must not be greater than 100%'
            )


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """A budget's status as the disruption controller would write it; ``sync_error`` set when
    the controller could not sync it (it then allows no disruption: fail safe)."""

    expected_pods: int
    desired_healthy: int
    current_healthy: int
    disruptions_allowed: int
    sync_error: str = ""


def is_healthy(pod: Pod) -> bool:
    """Counted as healthy: Ready and not being deleted. The simulator has no readiness delays:
    a pod is Ready from the moment it binds (controllers/common.py's ``is_pod_ready``), so
    a replacement restores a budget's health as soon as it is bound."""
    return pod.metadata.deletion_timestamp is None and is_pod_ready(pod)


def budget_status(pdb: PodDisruptionBudget, pods: Sequence[Pod], scale_of: ScaleOf) -> BudgetStatus:
    """``pods``: the pods the budget selects (its namespace, its selector), bound or not.

    An integer ``minAvailable`` counts against the selected pods; ``maxUnavailable`` and a
    percentage ``minAvailable`` against the sum of the scales of the pods' controllers
    (percentages rounded up). Pods without a controller are left out of that sum; a pod whose
    controller has no scale (a DaemonSet, a Job) fails the sync.

    Upstream: getExpectedPodCount, getExpectedScale, countHealthyPods and updatePdbStatus
    (pkg/controller/disruption/disruption.go, v1.35)
    """
    spec = pdb.spec
    where = f"poddisruptionbudget {pdb_key(pdb)}: spec"
    healthy = sum(1 for p in pods if is_healthy(p))
    max_unavailable, min_available = spec.max_unavailable, spec.min_available
    expected, desired = 0, 0
    if max_unavailable is not None or isinstance(min_available, str):
        scales: dict[str, int] = {}
        for pod in pods:
            if get_controller_of(pod.metadata) is None:
                continue  # unmanaged: only a warning upstream
            found = scale_of(pod)
            if found is None:
                error = f'found no controllers for pod "{pod.metadata.name}"'
                return BudgetStatus(0, 0, healthy, 0, error)
            scales[found[0]] = found[1]
        expected = sum(scales.values())
        if max_unavailable is not None:
            unavailable = get_scaled_value_from_int_or_percent(
                max_unavailable, expected, True, f"{where}.maxUnavailable"
            )
            desired = max(expected - unavailable, 0)
        elif min_available is not None:
            desired = get_scaled_value_from_int_or_percent(
                min_available, expected, True, f"{where}.minAvailable"
            )
    elif min_available is not None:
        expected, desired = len(pods), min_available
    allowed = healthy - desired
    if expected <= 0 or allowed <= 0:
        allowed = 0
    return BudgetStatus(expected, desired, healthy, allowed)


@dataclass(frozen=True, slots=True)
class Refusal:
    """An eviction the API server refused: ``reason`` (TooManyRequests is retried, an
    InternalError is not), its message, the cause it details, and the budgets involved."""

    reason: str
    message: str
    cause: str
    pdbs: tuple[str, ...]


class Evictions:
    """The eviction subresource over one drain pass: each granted eviction lowers its budget's
    allowance for the rest of the pass (as the API server's status update does)."""

    def __init__(self, statuses: dict[str, BudgetStatus], pdbs: Sequence[PodDisruptionBudget]):
        self.statuses = statuses
        self.pdbs = pdbs
        self.allowed = {key: s.disruptions_allowed for key, s in statuses.items()}

    def evict(self, pod: Pod) -> Refusal | None:
        """None when the pod may be evicted (the budget's allowance then taken), else why not.

        Upstream: EvictionREST.Create and checkAndDecrement
        (pkg/registry/core/pod/storage/eviction.go, v1.35)
        """
        # Pods that are not running (finished, not started, already being deleted) do not
        # count as healthy: evicting them never needs a budget.
        phase = pod_phase(pod)
        if phase in (POD_SUCCEEDED, POD_FAILED, POD_PENDING):
            return None
        if pod.metadata.deletion_timestamp is not None:
            return None
        pdbs = get_pod_disruption_budgets(pod, self.pdbs)
        if not pdbs:
            return None
        if len(pdbs) > 1:
            keys = tuple(sorted(pdb_key(p) for p in pdbs))
            return Refusal(REASON_INTERNAL_ERROR, MULTIPLE_PDBS, "", keys)
        pdb = pdbs[0]
        key = pdb_key(pdb)
        if self.allowed[key] > 0:
            self.allowed[key] -= 1
            return None
        status = self.statuses[key]
        name = pdb.metadata.name
        if status.sync_error:
            cause = (
                f"The disruption budget {name} does not allow evicting pods currently because "
                f"it failed sync: {status.sync_error}"
            )
        else:
            cause = (
                f"The disruption budget {name} needs {status.desired_healthy} healthy pods and "
                f"has {status.current_healthy} currently"
            )
        return Refusal(REASON_TOO_MANY_REQUESTS, EVICTION_REFUSED, cause, (key,))


__all__ = [
    "EVICTION_REFUSED",
    "MULTIPLE_PDBS",
    "BudgetStatus",
    "Evictions",
    "Refusal",
    "budget_status",
    "get_pod_disruption_budgets",
    "is_healthy",
    "pdb_key",
    "validate_pdb",
]
