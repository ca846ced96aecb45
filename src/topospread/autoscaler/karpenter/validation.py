"""The disruption controller's clock: how often it looks, how long a command waits before it is
validated, how long a provisioning pass keeps a node from being a candidate, and the check a
command must pass after that wait.

A consolidation command is not carried out when it is computed: the controller waits 15s, takes
the candidates again (still candidates, none nominated for a pending pod meanwhile, all within
their budgets) and simulates the scheduling again; the command goes ahead only if that gives the
same kind of decision (a deletion, or one replacement whose instance types are among those the
new simulation offers). An emptiness command keeps whichever of its candidates are still empty
candidates within the budgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from topospread.autoscaler.karpenter.disruption import (
    METHOD_EMPTINESS,
    Candidate,
    Command,
    Rescheduling,
    consolidatable,
    outcome,
    within_budgets,
)

# Upstream: commandValidationDelay (disruption/consolidation.go).
COMMAND_VALIDATION_DELAY: Final = 15.0
# Upstream: pollingPeriod (disruption/controller.go): the next look after one that did nothing.
POLLING_PERIOD: Final = 10.0
# Upstream: ConsolidationState (state/cluster.go): the methods look again at least this often.
CONSOLIDATION_STATE_TTL: Final = 300.0
# Upstream: the kinds of validation errors (getValidationFailureReason, validation.go).
CHURN: Final = "churn"
BUDGET: Final = "budget"
SCHEDULING: Final = "scheduling"
# Upstream: what Emptiness.ComputeCommands logs when its command fails validation.
EMPTINESS_ABANDONED: Final = (
    "abandoning empty node consolidation attempt due to pod churn, command is no longer valid"
)


def rejected_message(command: Command, candidate: Candidate, kind: str) -> str:
    """What upstream tells of a consolidation command dropped at its validation, for one of
    its candidates (emptiness only logs EMPTINESS_ABANDONED).
    Upstream: Command.EmitRejectedEvents, ConsolidationRejected (disruption/events/events.go),
    Command.StringForNode and String (the command has no method yet), EstimatedSavings"""
    if command.method == METHOD_EMPTINESS:
        return EMPTINESS_ABANDONED
    if len(command.candidates) == 1:
        text = f"{command.decision}: [{candidate.name}]"
        if command.replacement is not None:
            text += " -> [1 replacement]"
    else:
        count = len(command.candidates)
        text = f"{command.decision}: [{candidate.name}] (part of {count}-node consolidation)"
    savings = sum(c.price for c in command.candidates)
    if command.replacement is not None:
        savings -= command.replacement_price
    return f"Consolidation rejected: {text}, reason: {kind} (savings: ${savings:.2f})"


def nomination_window(batch_max_duration: float) -> float:
    """How long a node a provisioning pass chose for a pending pod is not a candidate.
    Upstream: nominationWindow (state/statenode.go)"""
    return max(2 * batch_max_duration, 10.0)


@dataclass(slots=True)
class ConsolidationState:
    """When the cluster last changed as the disruption methods watch it, and per method the
    state in which it last found nothing to do: a method skips its work until the state
    moves on. It moves on when a node or nodeclaim comes or goes, is initialized or marked
    for deletion, or a pod is bound or deleted, and at least every 5 minutes; a node's pods
    settling past consolidateAfter, a nomination running out, a budget's window opening, a
    do-not-disrupt duration ending or a PodDisruptionBudget allowing more do not move it
    (upstream's open PR #3291 would add the first two), so those wait for the 5 minutes.
    Changes are seen at the model's passes, not when they happened.
    Upstream: Cluster.MarkUnconsolidated, ConsolidationState, triggerConsolidationOnChange
    (state/cluster.go), consolidation.IsConsolidated and markConsolidated"""

    changed: float | None = None
    key: object = None
    consolidated: dict[int, float] = field(default_factory=dict)

    def observe(self, now: float, key: object) -> None:
        """Note the cluster as it is now (``key``: what the triggers watch)."""
        if key != self.key:
            self.key = key
            self.changed = now

    def state(self, now: float) -> float:
        """Upstream: Cluster.ConsolidationState (reset when 5 minutes old)"""
        if self.changed is None or now - self.changed >= CONSOLIDATION_STATE_TTL:
            self.changed = now
        return self.changed

    def is_consolidated(self, method: int, now: float) -> bool:
        return self.consolidated.get(method) == self.state(now)

    def mark_consolidated(self, method: int, now: float) -> None:
        self.consolidated[method] = self.state(now)


@dataclass(frozen=True, slots=True)
class Awaiting:
    """A command computed at ``due`` less the validation delay, by the method at index
    ``method`` of the controller's order, waiting to be validated at ``due``."""

    command: Command
    method: int
    due: float


def validate(
    command: Command,
    current: Mapping[str, Candidate],
    nominated: frozenset[str],
    allowed: Mapping[str, int],
    where: Rescheduling | None,
) -> tuple[Command | None, str]:
    """The command as it may go ahead now, or None and the kind of error (CHURN, BUDGET,
    SCHEDULING). ``current``: the candidates
    now, by name; ``nominated``: nodes a provisioning pass chose for a pending pod since;
    ``allowed``: the budgets now for the command's reason; ``where``: the scheduling now
    (None for emptiness, which does not simulate).
    Upstream: EmptinessValidator.Validate, ConsolidationValidator.isValid (validation.go)"""
    if command.method == METHOD_EMPTINESS:
        still = [
            current[c.name]
            for c in command.candidates
            if c.name in current and current[c.name].is_empty and c.name not in nominated
        ]
        kept = within_budgets(still, allowed)
        if not still:
            return None, CHURN
        if not kept:
            return None, BUDGET
        return replace(command, candidates=tuple(kept)), ""
    still = consolidatable([current[c.name] for c in command.candidates if c.name in current])
    if len(still) != len(command.candidates):
        return None, CHURN
    if any(c.name in nominated for c in still):
        return None, BUDGET
    if len(within_budgets(still, allowed)) != len(still):
        return None, BUDGET
    assert where is not None
    found = outcome(still, where)
    if found is None:
        return None, SCHEDULING
    delete, claim = found
    if command.replacement is None:
        return (command, "") if delete else (None, SCHEDULING)
    if claim is None:
        return None, SCHEDULING
    offered = {it.name for it in claim.instance_types}
    if not {it.name for it in command.replacement.instance_types} <= offered:
        return None, SCHEDULING
    return command, ""
