"""Drift: a node whose NodePool changed since it was launched is replaced.

A nodeclaim is drifted when its NodePool's template's static fields (labels, annotations,
taints, startup taints, terminationGracePeriod, expireAfter: ``template_key``; the node class
reference when both give one) are
no longer those it was launched with (NodePoolDrifted), or when its labels no longer satisfy
the NodePool's requirements (RequirementsDrifted). The disruption controller's drift method
then takes the drifted candidates, in the order they drifted, empty ones first, and disrupts
the first whose pods all schedule elsewhere or on new nodeclaims (its replacements), within
the NodePool's Drifted budgets. Drift is an eventual disruption: a command is carried out at
once (no validation wait), and a node whose pods' budgets or do-not-disrupt annotations block
eviction is still a candidate when its NodePool sets a terminationGracePeriod.

Upstream: Drift.Reconcile, isDrifted, areStaticFieldsDrifted and areRequirementsDrifted
(nodeclaim/disruption/drift.go); Drift.ComputeCommands (disruption/drift.go); NewCandidate's
eventual candidates (disruption/types.go)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
)
from topospread.autoscaler.karpenter.disruption import Candidate, Command, Rescheduling
from topospread.autoscaler.karpenter.nodepool import REASON_DRIFTED, NodePool
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    NODEPOOL_LABEL,
    Requirements,
    from_labels,
)

METHOD_DRIFT: Final = "drift"
# Upstream: the drift reasons a nodeclaim's Drifted condition carries.
NODEPOOL_DRIFTED: Final = "NodePoolDrifted"
REQUIREMENTS_DRIFTED: Final = "RequirementsDrifted"


# The labels every node the model launches carries (nodeclaim.node_for).
_MODEL_LABELS: Final = frozenset(
    {
        NODEPOOL_LABEL,
        CAPACITY_TYPE_LABEL,
        LABEL_INSTANCE_TYPE_STABLE,
        LABEL_ARCH_STABLE,
        LABEL_OS_STABLE,
        LABEL_TOPOLOGY_ZONE,
        LABEL_HOSTNAME,
    }
)


@dataclass(frozen=True, slots=True)
class Drifted:
    """A node's Drifted condition: since when (seconds) and why."""

    since: float
    reason: str


def launch_key(pool: NodePool) -> tuple[str, str]:
    """What a node launched from ``pool`` keeps of it: its template key and node class."""
    return (pool.template_key, pool.node_class)


def drift_reason(node: Node, pool: NodePool, launched_with: tuple[str, str]) -> str:
    """Why the node has drifted from ``pool`` ("" when it has not); ``launched_with`` is the
    ``launch_key`` of the NodePool it was launched from. A node class reference counts only
    when both NodePools give one (a short form gives none: a manifest applied over it, which
    must give one, would otherwise make every node drift).
    Upstream: isDrifted (static fields first, then requirements; the cloud provider's own
    drift, its AMIs and the like, is not modelled)"""
    key, node_class = launched_with
    if key != pool.template_key or (
        node_class and pool.node_class and node_class != pool.node_class
    ):
        return NODEPOOL_DRIFTED
    labels = node.metadata.labels
    # NOTE: a node the model launched carries only the labels it knows of (the built-in
    # catalogue labels no instance family, say), where upstream's carries every label of its
    # instance type: a requirement on a label the node lacks is not taken for drift.
    known = [r for r in pool.requirements if r.key in labels or r.key in _MODEL_LABELS]
    if from_labels(labels).compatible(Requirements(known), allow_undefined_well_known=False):
        return REQUIREMENTS_DRIFTED
    return ""


def drift(
    candidates: Sequence[Candidate],
    drifted: Mapping[str, Drifted],
    allowed: Mapping[str, int],
    where: Rescheduling,
) -> Command | None:
    """The first drifted candidate (in the order they drifted, empty ones first) whose
    NodePool's Drifted budget allows one more and whose pods all schedule without it: the
    command deletes it, with the new nodeclaims the simulation needed as its replacements.
    Upstream: Drift.ComputeCommands"""
    mine = sorted(
        (c for c in candidates if c.name in drifted),
        key=lambda c: (drifted[c.name].since, c.name),
    )
    ordered = [c for c in mine if not c.pods] + [c for c in mine if c.pods]
    for c in ordered:
        if allowed.get(c.pool.name, 0) <= 0:
            continue
        claims = where.simulate([c])
        if claims is None:
            continue  # upstream publishes a Blocked event and tries the next candidate
        first = claims[0] if claims else None
        more = tuple(claims[1:])
        return Command(METHOD_DRIFT, REASON_DRIFTED, (c,), first, extra_replacements=more)
    return None


__all__ = [
    "METHOD_DRIFT",
    "NODEPOOL_DRIFTED",
    "REQUIREMENTS_DRIFTED",
    "Drifted",
    "drift",
    "drift_reason",
    "launch_key",
]
