"""Which pods preemption may not take lightly: those whose eviction a PodDisruptionBudget
forbids, and those already being deleted by an earlier preemption.

Upstream: filterPodsWithPDBViolation and podTerminatingByPreemption (default_preemption.go,
v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.api.types import Pod, PodDisruptionBudget
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector

# The condition the scheduler adds to a victim before deleting it (core/v1).
DISRUPTION_TARGET: Final = "DisruptionTarget"
POD_REASON_PREEMPTION_BY_SCHEDULER: Final = "PreemptionByScheduler"


def pod_terminating_by_preemption(pod: Pod) -> bool:
    """Being deleted, with the DisruptionTarget condition the scheduler's preemption adds.

    Upstream: podTerminatingByPreemption (default_preemption.go, v1.35)
    """
    if pod.metadata.deletion_timestamp is None:
        return False
    for condition in pod.status.conditions:
        if condition.type == DISRUPTION_TARGET:
            return condition.status == "True" and condition.reason == (
                POD_REASON_PREEMPTION_BY_SCHEDULER
            )
    return False


def filter_pods_with_pdb_violation(
    pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """Split the pods, keeping their order, into those whose eviction would exceed a matching
    budget's ``disruptionsAllowed`` (counting the pods before them) and the others.

    A PDB matches a pod in its namespace that its selector selects (a nil or empty selector
    selects nothing; an invalid one is skipped); pods already in its ``disruptedPods`` do not
    count against it.
    Upstream: filterPodsWithPDBViolation (default_preemption.go, v1.35)
    """
    allowed = [pdb.status.disruptions_allowed for pdb in pdbs]
    selectors = pdb_selectors(pdbs)
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violated = False
        for i, pdb in enumerate(pdbs):
            if counts_against(pdb, selectors[i], pod):
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(pod)
    return violating, non_violating


def pdb_selectors(pdbs: Sequence[PodDisruptionBudget]) -> list[Selector | None]:
    """Each budget's selector, None where it does not parse (such a budget is skipped)."""
    selectors: list[Selector | None] = []
    for pdb in pdbs:
        try:
            selectors.append(label_selector_as_selector(pdb.spec.selector))
        except SelectorError:
            selectors.append(None)
    return selectors


def counts_against(pdb: PodDisruptionBudget, selector: Selector | None, pod: Pod) -> bool:
    """Whether evicting the pod takes one of the budget's allowed disruptions: a pod with
    labels in its namespace that its (non-empty) selector selects, not already among its
    ``disruptedPods`` (that eviction was processed: it no longer counts).

    Upstream: the matching in filterPodsWithPDBViolation (default_preemption.go, v1.35)
    """
    labels = pod.metadata.labels
    if not labels or pdb.metadata.namespace != pod.metadata.namespace:
        return False
    if selector is None or selector.empty or not selector.matches(labels):
        return False
    return pod.metadata.name not in pdb.status.disrupted_pods


__all__ = [
    "DISRUPTION_TARGET",
    "POD_REASON_PREEMPTION_BY_SCHEDULER",
    "counts_against",
    "filter_pods_with_pdb_violation",
    "pdb_selectors",
    "pod_terminating_by_preemption",
]
