"""PodDisruptionBudgets as the eviction subresource enforces them, for ``drain``.

The API server's eviction subresource refuses to evict a pod whose budget allows no
disruption (429) and takes one disruption from the budget's status for each eviction it
grants. The statuses it reads are the disruption controller's (simulator/controllers/
disruption.py), which ``simulate`` runs in every round of its settle loop; preemption reads the
same statuses from the scheduler's list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import msgspec

from topospread.api.field import JSONable, go_json
from topospread.api.types import LabelSelector, Pod, PodDisruptionBudget, PodDisruptionBudgetSpec
from topospread.errors import ValidationError
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.simulator.controllers.active_pods import (
    POD_FAILED,
    POD_PENDING,
    POD_SUCCEEDED,
    pod_phase,
)
from topospread.simulator.controllers.disruption import (
    sync_failure,
    update_disruption_allowed_condition,
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


def _selector_json(selector: LabelSelector | None) -> JSONable:
    """metav1.LabelSelector as encoding/json prints it (its json tags, omitempty)."""
    if selector is None:
        return None
    out: dict[str, JSONable] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(sorted(selector.match_labels.items()))
    if selector.match_expressions:
        expressions: list[JSONable] = []
        for req in selector.match_expressions:
            item: dict[str, JSONable] = {"key": req.key, "operator": req.operator}
            if req.values:
                item["values"] = list(req.values)
            expressions.append(item)
        out["matchExpressions"] = expressions
    return out


def _spec_as_go_json(spec: PodDisruptionBudgetSpec) -> str:
    """The whole spec, the bad value of the both-set error: encoding/json of the internal
    policy.PodDisruptionBudgetSpec (no json tags, so Go's field names in declaration order; an
    IntOrString prints as its number or string)."""
    return go_json(
        {
            "MinAvailable": spec.min_available,
            "Selector": _selector_json(spec.selector),
            "MaxUnavailable": spec.max_unavailable,
            "UnhealthyPodEvictionPolicy": spec.unhealthy_pod_eviction_policy,
        }
    )


def validate_pdb(pdb: PodDisruptionBudget, where: str) -> None:
    """The spec checks the budget arithmetic relies on.

    Upstream: ValidatePodDisruptionBudgetSpec (pkg/apis/policy/validation/validation.go, v1.35)
    """
    spec = pdb.spec
    label = f"{where} (PodDisruptionBudget {pdb_key(pdb)})"
    if spec.min_available is not None and spec.max_unavailable is not None:
        raise ValidationError(
            f"{label}: spec: Invalid value: {_spec_as_go_json(spec)}: minAvailable and "
            "maxUnavailable cannot be both set"
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
class Refusal:
    """An eviction the API server refused: ``reason`` (TooManyRequests is retried, an
    InternalError is not), its message, the cause it details, and the budgets involved."""

    reason: str
    message: str
    cause: str
    pdbs: tuple[str, ...]


class Evictions:
    """The eviction subresource over the budgets as they stand: each granted eviction takes
    one disruption from its budget's status and hands the budget to ``write`` (the status
    update the disruption controller's next sync replaces)."""

    def __init__(
        self,
        pdbs: Sequence[PodDisruptionBudget],
        write: Callable[[PodDisruptionBudget], None] = lambda pdb: None,
    ):
        self.pdbs = list(pdbs)
        self.write = write

    def evict(self, pod: Pod) -> Refusal | None:
        """None when the pod may be evicted (the budget's allowance then taken), else why not.

        The pod is not recorded in ``status.disruptedPods``: the simulator deletes an evicted
        pod at once, and the controller's next sync would drop the entry of a pod that is gone.

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
        status = pdb.status
        if status.disruptions_allowed > 0:
            status = msgspec.structs.replace(
                status, disruptions_allowed=status.disruptions_allowed - 1
            )
            if status.disruptions_allowed == 0:
                status = update_disruption_allowed_condition(status)
            updated = msgspec.structs.replace(pdb, status=status)
            self.pdbs[self.pdbs.index(pdb)] = updated
            self.write(updated)
            return None
        name = pdb.metadata.name
        failure = sync_failure(status)
        if failure is not None:
            cause = (
                f"The disruption budget {name} does not allow evicting pods currently because "
                f"it failed sync: {failure}"
            )
        else:
            cause = (
                f"The disruption budget {name} needs {status.desired_healthy} healthy pods and "
                f"has {status.current_healthy} currently"
            )
        return Refusal(REASON_TOO_MANY_REQUESTS, EVICTION_REFUSED, cause, (pdb_key(pdb),))


__all__ = [
    "EVICTION_REFUSED",
    "MULTIPLE_PDBS",
    "Evictions",
    "Refusal",
    "get_pod_disruption_budgets",
    "pdb_key",
    "validate_pdb",
]
