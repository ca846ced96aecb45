"""Karpenter's preferences: soft constraints are honoured as if required, then relaxed one at a
time when the pod cannot be placed.

Until relaxed, the heaviest preferred node-affinity term joins the pod's requirements, and
preferred pod (anti-)affinity terms and ScheduleAnyway spread constraints join its topology
groups. On failure the next relaxation in upstream's order removes one of them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec

from topospread.api.types import Affinity, Pod, PodSpec, Toleration


def _with_affinity(pod: Pod, affinity: Affinity) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, affinity=affinity))


def _with_spec(pod: Pod, spec: PodSpec) -> Pod:
    return msgspec.structs.replace(pod, spec=spec)


def remove_required_node_affinity_term(pod: Pod) -> Pod | None:
    """With several required terms (ORed), drop the first and try the next."""
    a = pod.spec.affinity
    na = a.node_affinity if a else None
    req = na.required_during_scheduling_ignored_during_execution if na else None
    if a is None or na is None or req is None or len(req.node_selector_terms) < 2:
        return None
    req = msgspec.structs.replace(req, node_selector_terms=req.node_selector_terms[1:])
    na = msgspec.structs.replace(na, required_during_scheduling_ignored_during_execution=req)
    return _with_affinity(pod, msgspec.structs.replace(a, node_affinity=na))


def _drop_heaviest_preferred(pod: Pod, kind: str) -> Pod | None:
    """The pod with the heaviest preferred term of its ``kind`` of affinity (the Affinity
    field's name) removed; None when it has none."""
    a = pod.spec.affinity
    kept = getattr(a, kind) if a else None
    if a is None or kept is None or not kept.preferred_during_scheduling_ignored_during_execution:
        return None
    terms = sorted(
        kept.preferred_during_scheduling_ignored_during_execution, key=lambda t: -t.weight
    )
    kept = msgspec.structs.replace(
        kept, preferred_during_scheduling_ignored_during_execution=terms[1:]
    )
    return _with_affinity(pod, msgspec.structs.replace(a, **{kind: kept}))


def remove_preferred_pod_affinity_term(pod: Pod) -> Pod | None:
    return _drop_heaviest_preferred(pod, "pod_affinity")


def remove_preferred_pod_anti_affinity_term(pod: Pod) -> Pod | None:
    return _drop_heaviest_preferred(pod, "pod_anti_affinity")


def remove_preferred_node_affinity_term(pod: Pod) -> Pod | None:
    return _drop_heaviest_preferred(pod, "node_affinity")


def remove_topology_spread_schedule_anyway(pod: Pod) -> Pod | None:
    constraints = pod.spec.topology_spread_constraints
    for i, c in enumerate(constraints):
        if c.when_unsatisfiable == "ScheduleAnyway":
            rest = [*constraints[:i], *constraints[i + 1 :]]
            return _with_spec(
                pod, msgspec.structs.replace(pod.spec, topology_spread_constraints=rest)
            )
    return None


PREFER_NO_SCHEDULE_TOLERATION: Final = Toleration(operator="Exists", effect="PreferNoSchedule")


def tolerate_prefer_no_schedule_taints(pod: Pod) -> Pod | None:
    """The pod tolerating every PreferNoSchedule taint; None when it already does by that
    very toleration. Upstream: Preferences.toleratePreferNoScheduleTaints"""
    wanted = PREFER_NO_SCHEDULE_TOLERATION
    for t in pod.spec.tolerations:
        if (t.key, t.operator, t.value, t.effect) == ("", "Exists", "", wanted.effect):
            return None
    tolerations = [*pod.spec.tolerations, wanted]
    return _with_spec(pod, msgspec.structs.replace(pod.spec, tolerations=tolerations))


RELAXATIONS: tuple[Callable[[Pod], Pod | None], ...] = (
    remove_required_node_affinity_term,
    remove_preferred_pod_affinity_term,
    remove_preferred_pod_anti_affinity_term,
    remove_preferred_node_affinity_term,
    remove_topology_spread_schedule_anyway,
)


def relax(pod: Pod, tolerate_prefer_no_schedule: bool = False) -> Pod | None:
    """The pod with its next soft constraint removed; None when nothing is left to relax.
    With ``tolerate_prefer_no_schedule`` (a NodePool has a PreferNoSchedule taint) the last
    relaxation adds a toleration of PreferNoSchedule taints.

    Upstream: Preferences.Relax (preferences.go)
    """
    relaxations: tuple[Callable[[Pod], Pod | None], ...] = RELAXATIONS
    if tolerate_prefer_no_schedule:
        relaxations += (tolerate_prefer_no_schedule_taints,)
    for relaxation in relaxations:
        relaxed = relaxation(pod)
        if relaxed is not None:
            return relaxed
    return None
