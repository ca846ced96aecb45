"""What kube-apiserver v1.35 writes into a pod's selectors when the pod is created.

Since v1.34 (feature gate ``MatchLabelKeysInPodTopologySpreadSelectorMerge``, beta, on by
default, together with ``MatchLabelKeysInPodTopologySpread``, beta, on) the API server turns each
topology spread constraint's ``matchLabelKeys`` into ``key In (value)`` requirements of its
``labelSelector``, as it has done for pod (anti)affinity terms since v1.29
(``MatchLabelKeysInPodAffinity``, GA and locked on since v1.33). The pod stored in etcd — and so
every pod the scheduler sees — carries the merged selector. The scheduler still merges
``matchLabelKeys`` itself as well (an AND of the same requirement, so it changes nothing unless
the pod's labels changed after creation).

Upstream is not idempotent: a second merge would append the requirements again, and validation
would then reject the pod ("exists in both matchLabelKeys and labelSelector"). A manifest may be
written by a user (never merged) or read back from a cluster (already merged), so the functions
here recognise a merged term by its fingerprint — the requirements the merge appends, at the end of
``matchExpressions``, in ``matchLabelKeys`` order — and leave it alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

import msgspec

from topospread.api.types import (
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)

_AffinityT = TypeVar("_AffinityT", PodAffinity, PodAntiAffinity)

LABEL_SELECTOR_OP_IN: Final = "In"
LABEL_SELECTOR_OP_NOT_IN: Final = "NotIn"


def _label_key_requirements(
    keys: Sequence[str], operator: str, pod_labels: Mapping[str, str]
) -> list[LabelSelectorRequirement]:
    """One ``key <operator> (value)`` requirement per key the pod has, in ``keys`` order.

    Keys missing from the pod's labels are skipped; a key listed twice gives two requirements.

    Upstream: applyLabelKeysToLabelSelector (pkg/registry/core/pod/strategy.go, v1.35)
    """
    return [
        LabelSelectorRequirement(key=key, operator=operator, values=[pod_labels[key]])
        for key in keys
        if key in pod_labels
    ]


def _merge_requirements(
    constraint_keys: Sequence[tuple[Sequence[str], str]], pod_labels: Mapping[str, str]
) -> list[LabelSelectorRequirement]:
    merged: list[LabelSelectorRequirement] = []
    for keys, operator in constraint_keys:
        merged.extend(_label_key_requirements(keys, operator, pod_labels))
    return merged


def _ends_with(
    expressions: Sequence[LabelSelectorRequirement], tail: Sequence[LabelSelectorRequirement]
) -> bool:
    return len(expressions) >= len(tail) and list(
        expressions[len(expressions) - len(tail) :]
    ) == list(tail)


def _merged_selector(
    selector: LabelSelector, additions: list[LabelSelectorRequirement]
) -> LabelSelector | None:
    """The selector with ``additions`` appended, or ``None`` if there is nothing to do."""
    if not additions or _ends_with(selector.match_expressions, additions):
        return None
    return msgspec.structs.replace(
        selector, match_expressions=[*selector.match_expressions, *additions]
    )


# ---------------------------------------------------------------------------------------------
# Topology spread constraints


def match_label_keys_requirements(
    constraint: TopologySpreadConstraint, pod_labels: Mapping[str, str]
) -> list[LabelSelectorRequirement]:
    """The requirements the API server appends to ``constraint``'s selector for these labels.

    Empty when nothing would be merged: no ``matchLabelKeys``, a nil ``labelSelector`` (it selects
    nothing, and validation forbids ``matchLabelKeys`` without one), or none of the keys among the
    pod's labels.

    Upstream: applyMatchLabelKeys (pkg/registry/core/pod/strategy.go, v1.35)
    """
    if not constraint.match_label_keys or constraint.label_selector is None:
        return []
    return _label_key_requirements(constraint.match_label_keys, LABEL_SELECTOR_OP_IN, pod_labels)


def is_match_label_keys_merged(
    constraint: TopologySpreadConstraint, pod_labels: Mapping[str, str]
) -> bool:
    """Whether ``constraint`` already carries the API server's merge for these pod labels.

    True when the merge has nothing to add, or when ``matchExpressions`` already ends with exactly
    the requirements it would append. A user who wrote those same requirements by hand at the end
    of the selector is indistinguishable from a merged pod (upstream would merge again and reject
    the duplicate).
    """
    additions = match_label_keys_requirements(constraint, pod_labels)
    if not additions:
        return True
    assert constraint.label_selector is not None  # additions imply a selector
    return _ends_with(constraint.label_selector.match_expressions, additions)


def merge_match_label_keys(
    constraint: TopologySpreadConstraint, pod_labels: Mapping[str, str]
) -> TopologySpreadConstraint:
    """``constraint`` as the API server stores it; the same object when already merged.

    ``matchLabelKeys`` itself is kept: only ``labelSelector.matchExpressions`` grows.

    Upstream: applyMatchLabelKeys (pkg/registry/core/pod/strategy.go, v1.35)
    """
    selector = constraint.label_selector
    if selector is None:
        return constraint
    merged = _merged_selector(selector, match_label_keys_requirements(constraint, pod_labels))
    if merged is None:
        return constraint
    return msgspec.structs.replace(constraint, label_selector=merged)


def apply_match_label_keys_merge(pod: Pod, *, enabled: bool = True) -> Pod:
    """The pod with its topology spread constraints merged as kube-apiserver v1.35 stores them.

    What upstream does, in ``podStrategy.PrepareForCreate`` — on create only, never on update, and
    before the pod is validated:

    - only when both feature gates ``MatchLabelKeysInPodTopologySpread`` and
      ``MatchLabelKeysInPodTopologySpreadSelectorMerge`` are on (the v1.35 defaults; pass
      ``enabled=False`` for a server with either gate off);
    - for each constraint with a non-empty ``matchLabelKeys`` and a non-nil ``labelSelector`` (a
      nil selector selects nothing and is left alone — validation then rejects the keys);
    - for each key of ``matchLabelKeys``, in order, that is among the pod's labels (with any
      value, the empty string included), it appends ``{key: <key>, operator: In, values:
      [<the pod's value>]}`` to ``labelSelector.matchExpressions``; keys the pod lacks are
      skipped silently; a key listed twice is appended twice;
    - ``matchLabelKeys`` is kept, ``matchLabels`` untouched.

    Unlike upstream this is idempotent: constraints that already end with these requirements
    (see :func:`is_match_label_keys_merged`) are left as they are. Returns ``pod`` itself when
    nothing changes.

    Upstream: mutateTopologySpreadConstraints (pkg/registry/core/pod/strategy.go, v1.35)
    """
    constraints = pod.spec.topology_spread_constraints
    if not enabled or not constraints:
        return pod
    merged = _merged_constraints(constraints, pod.metadata.labels)
    if merged is constraints:
        return pod
    spec = msgspec.structs.replace(pod.spec, topology_spread_constraints=merged)
    return msgspec.structs.replace(pod, spec=spec)


# Constraints lists (by identity: the pods a controller makes from one template share its
# list), each with its merged lists by the values of its matchLabelKeys among a pod's labels.
_MERGED: dict[int, tuple[list[TopologySpreadConstraint], dict[Any, list[Any]]]] = {}


def _merged_constraints(
    constraints: list[TopologySpreadConstraint], labels: Mapping[str, str]
) -> list[TopologySpreadConstraint]:
    """``merge_match_label_keys`` over the list (the list itself when nothing changes),
    computed once per list and values of its keys: the merged lists are shared (constraints
    are frozen, and no one changes a pod's list in place)."""
    values = tuple((k, labels.get(k)) for c in constraints for k in c.match_label_keys)
    kept = _MERGED.get(id(constraints))
    if kept is None or kept[0] is not constraints:
        if len(_MERGED) > 4096:
            _MERGED.clear()
        kept = _MERGED[id(constraints)] = (constraints, {})
    merged = kept[1].get(values)
    if merged is None:
        fresh = [merge_match_label_keys(c, labels) for c in constraints]
        unchanged = all(new is old for new, old in zip(fresh, constraints, strict=True))
        merged = kept[1][values] = constraints if unchanged else fresh
    return merged


# ---------------------------------------------------------------------------------------------
# Pod (anti)affinity terms


def merge_affinity_label_keys(
    term: PodAffinityTerm, pod_labels: Mapping[str, str]
) -> PodAffinityTerm:
    """``term`` with ``matchLabelKeys`` merged as ``In`` and ``mismatchLabelKeys`` as ``NotIn``.

    Skipped when the term has neither list or has a nil ``labelSelector``; idempotent like
    :func:`merge_match_label_keys`.

    Upstream: applyMatchLabelKeysAndMismatchLabelKeys (pkg/registry/core/pod/strategy.go, v1.35)
    """
    selector = term.label_selector
    if selector is None or not (term.match_label_keys or term.mismatch_label_keys):
        return term
    additions = _merge_requirements(
        [
            (term.match_label_keys, LABEL_SELECTOR_OP_IN),
            (term.mismatch_label_keys, LABEL_SELECTOR_OP_NOT_IN),
        ],
        pod_labels,
    )
    merged = _merged_selector(selector, additions)
    if merged is None:
        return term
    return msgspec.structs.replace(term, label_selector=merged)


def _merge_terms(
    terms: list[PodAffinityTerm], labels: Mapping[str, str]
) -> list[PodAffinityTerm] | None:
    merged = [merge_affinity_label_keys(t, labels) for t in terms]
    return None if all(a is b for a, b in zip(merged, terms, strict=True)) else merged


def _merge_weighted(
    terms: list[WeightedPodAffinityTerm], labels: Mapping[str, str]
) -> list[WeightedPodAffinityTerm] | None:
    merged = [
        msgspec.structs.replace(w, pod_affinity_term=t)
        if (t := merge_affinity_label_keys(w.pod_affinity_term, labels)) is not w.pod_affinity_term
        else w
        for w in terms
    ]
    return None if all(a is b for a, b in zip(merged, terms, strict=True)) else merged


def _merge_pod_affinity(
    affinity: _AffinityT | None, labels: Mapping[str, str]
) -> _AffinityT | None:
    if affinity is None:
        return None
    required = _merge_terms(affinity.required_during_scheduling_ignored_during_execution, labels)
    preferred = _merge_weighted(
        affinity.preferred_during_scheduling_ignored_during_execution, labels
    )
    if required is None and preferred is None:
        return affinity
    return msgspec.structs.replace(
        affinity,
        required_during_scheduling_ignored_during_execution=(
            required
            if required is not None
            else affinity.required_during_scheduling_ignored_during_execution
        ),
        preferred_during_scheduling_ignored_during_execution=(
            preferred
            if preferred is not None
            else affinity.preferred_during_scheduling_ignored_during_execution
        ),
    )


def apply_pod_affinity_label_keys_merge(pod: Pod) -> Pod:
    """The pod with its pod (anti)affinity terms merged as kube-apiserver v1.35 stores them.

    On create, before validation, for required and preferred terms of both podAffinity and
    podAntiAffinity (``MatchLabelKeysInPodAffinity`` is GA and locked on). Returns ``pod`` itself
    when nothing changes.

    Upstream: mutatePodAffinity (pkg/registry/core/pod/strategy.go, v1.35)
    """
    affinity = pod.spec.affinity
    if affinity is None:
        return pod
    labels = pod.metadata.labels
    pod_affinity = _merge_pod_affinity(affinity.pod_affinity, labels)
    anti_affinity = _merge_pod_affinity(affinity.pod_anti_affinity, labels)
    if pod_affinity is affinity.pod_affinity and anti_affinity is affinity.pod_anti_affinity:
        return pod
    new_affinity: Affinity = msgspec.structs.replace(
        affinity, pod_affinity=pod_affinity, pod_anti_affinity=anti_affinity
    )
    return msgspec.structs.replace(
        pod, spec=msgspec.structs.replace(pod.spec, affinity=new_affinity)
    )


def prepare_for_create(pod: Pod, *, merge_topology_spread_keys: bool = True) -> Pod:
    """Both selector merges the API server applies to a new pod, in upstream's order.

    Upstream: podStrategy.PrepareForCreate (pkg/registry/core/pod/strategy.go, v1.35)
    """
    pod = apply_pod_affinity_label_keys_merge(pod)
    return apply_match_label_keys_merge(pod, enabled=merge_topology_spread_keys)


# The node lifecycle controller's taints for a node that stopped reporting
# (k8s.io/api/core/v1 well_known_taints.go).
TAINT_NODE_NOT_READY: Final = "node.kubernetes.io/not-ready"
TAINT_NODE_UNREACHABLE: Final = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS: Final = 300


def _tolerates_no_execute(tolerations: Sequence[Toleration], key: str) -> bool:
    return any((t.key == key or not t.key) and (t.effect in ("NoExecute", "")) for t in tolerations)


def add_default_toleration_seconds(pod: Pod) -> Pod:
    """Tolerate not-ready and unreachable nodes for 300 s, unless the pod already tolerates
    them (a toleration with that key, or no key, and effect NoExecute or none).

    Upstream: the DefaultTolerationSeconds admission plugin
    (plugin/pkg/admission/defaulttolerationseconds/admission.go, v1.35)
    """
    added = [
        Toleration(
            key=key,
            operator="Exists",
            effect="NoExecute",
            toleration_seconds=DEFAULT_TOLERATION_SECONDS,
        )
        for key in (TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE)
        if not _tolerates_no_execute(pod.spec.tolerations, key)
    ]
    if not added:
        return pod
    spec = msgspec.structs.replace(pod.spec, tolerations=[*pod.spec.tolerations, *added])
    return msgspec.structs.replace(pod, spec=spec)
