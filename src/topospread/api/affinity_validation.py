"""A pod's node selector terms, node affinity and inter-pod affinity (with matchLabelKeys and
mismatchLabelKeys) as kube-apiserver v1.35 validates them, with its messages and field paths
(pkg/apis/core/validation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    required,
)
from topospread.api.meta_validation import (
    validate_label_name,
    validate_label_selector,
    validate_match_label_keys_and_mismatch_label_keys,
)
from topospread.api.types import (
    Affinity,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    WeightedPodAffinityTerm,
)
from topospread.util.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_label_value,
)

OBJECT_NAME_FIELD: Final = "metadata.name"


# ---------------------------------------------------------------------------------------------
# Node selectors and affinity


def validate_node_selector_requirement(
    req: NodeSelectorRequirement, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """``Gt``/``Lt`` need exactly one value, but it is not checked to be an integer here.

    Upstream: ValidateNodeSelectorRequirement (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    values = path.child("values")
    if req.operator in ("In", "NotIn"):
        if not req.values:
            errs.append(required(values, "must be specified when `operator` is 'In' or 'NotIn'"))
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(
                forbidden(
                    values, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            )
    elif req.operator in ("Gt", "Lt"):
        if len(req.values) != 1:
            errs.append(
                required(values, "must be specified single value when `operator` is 'Lt' or 'Gt'")
            )
    else:
        errs.append(
            invalid(path.child("operator"), GoJSON(req.operator), "not a valid selector operator")
        )
    errs.extend(validate_label_name(req.key, path.child("key")))
    if not allow_invalid_label_value:
        for i, value in enumerate(req.values):
            errs.extend(invalid(values.index(i), value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_node_field_selector_requirement(
    req: NodeSelectorRequirement, path: Path
) -> list[FieldError]:
    """``matchFields``: only ``metadata.name``, with In/NotIn and exactly one value.

    Upstream: ValidateNodeFieldSelectorRequirement (pkg/apis/core/validation, v1.35)
    """
    errs: list[FieldError] = []
    if req.operator in ("In", "NotIn"):
        if len(req.values) != 1:
            errs.append(
                required(
                    path.child("values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' "
                    "for node field selector",
                )
            )
    else:
        errs.append(
            invalid(path.child("operator"), GoJSON(req.operator), "not a valid selector operator")
        )
    if req.key != OBJECT_NAME_FIELD:
        errs.append(invalid(path.child("key"), req.key, "not a valid field selector key"))
    else:
        values = path.child("values")
        for i, value in enumerate(req.values):
            errs.extend(invalid(values.index(i), value, msg) for msg in is_dns1123_subdomain(value))
    return errs


def validate_node_selector_term(
    term: NodeSelectorTerm, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """Upstream: ValidateNodeSelectorTerm (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    for j, req in enumerate(term.match_expressions):
        errs += validate_node_selector_requirement(
            req,
            path.child("matchExpressions").index(j),
            allow_invalid_label_value=allow_invalid_label_value,
        )
    for j, req in enumerate(term.match_fields):
        errs += validate_node_field_selector_requirement(req, path.child("matchFields").index(j))
    return errs


def validate_node_selector(
    selector: NodeSelector, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """A required node selector needs at least one term.

    Upstream: ValidateNodeSelector (pkg/apis/core/validation/validation.go, v1.35)
    """
    terms = path.child("nodeSelectorTerms")
    if not selector.node_selector_terms:
        return [required(terms, "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(selector.node_selector_terms):
        errs += validate_node_selector_term(
            term, terms.index(i), allow_invalid_label_value=allow_invalid_label_value
        )
    return errs


def validate_preferred_scheduling_terms(
    terms: Sequence[PreferredSchedulingTerm], path: Path
) -> list[FieldError]:
    """Weights in 1-100; invalid label values are always allowed in preferred terms.

    Upstream: ValidatePreferredSchedulingTerms (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        if term.weight <= 0 or term.weight > 100:
            errs.append(
                invalid(path.index(i).child("weight"), term.weight, "must be in the range 1-100")
            )
        errs += validate_node_selector_term(
            term.preference, path.index(i).child("preference"), allow_invalid_label_value=True
        )
    return errs


def validate_node_affinity(affinity: NodeAffinity, path: Path) -> list[FieldError]:
    """Upstream: validateNodeAffinity (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    required_terms = affinity.required_during_scheduling_ignored_during_execution
    if required_terms is not None:
        errs += validate_node_selector(
            required_terms, path.child("requiredDuringSchedulingIgnoredDuringExecution")
        )
    preferred = affinity.preferred_during_scheduling_ignored_during_execution
    if preferred:
        errs += validate_preferred_scheduling_terms(
            preferred, path.child("preferredDuringSchedulingIgnoredDuringExecution")
        )
    return errs


def validate_pod_affinity_term(term: PodAffinityTerm, path: Path) -> list[FieldError]:
    """Selectors, namespaces (reported at ``...namespace``, singular, as upstream does), label
    keys, then ``topologyKey``: required *and* a valid label key, so an empty one gives three
    errors.

    Upstream: validatePodAffinityTerm (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs = validate_label_selector(term.label_selector, path.child("labelSelector"))
    errs += validate_label_selector(term.namespace_selector, path.child("namespaceSelector"))
    for name in term.namespaces:
        errs.extend(invalid(path.child("namespace"), name, msg) for msg in is_dns1123_label(name))
    errs += validate_match_label_keys_and_mismatch_label_keys(
        path, term.match_label_keys, term.mismatch_label_keys, term.label_selector
    )
    topology_key = path.child("topologyKey")
    if not term.topology_key:
        errs.append(required(topology_key, "can not be empty"))
    errs += validate_label_name(term.topology_key, topology_key)
    return errs


def _validate_pod_affinity_terms(
    required_terms: Sequence[PodAffinityTerm],
    preferred_terms: Sequence[WeightedPodAffinityTerm],
    path: Path,
) -> list[FieldError]:
    errs: list[FieldError] = []
    required_path = path.child("requiredDuringSchedulingIgnoredDuringExecution")
    for i, term in enumerate(required_terms):
        errs += validate_pod_affinity_term(term, required_path.index(i))
    preferred_path = path.child("preferredDuringSchedulingIgnoredDuringExecution")
    for j, weighted in enumerate(preferred_terms):
        if weighted.weight <= 0 or weighted.weight > 100:
            errs.append(
                invalid(
                    preferred_path.index(j).child("weight"),
                    weighted.weight,
                    "must be in the range 1-100",
                )
            )
        errs += validate_pod_affinity_term(
            weighted.pod_affinity_term, preferred_path.index(j).child("podAffinityTerm")
        )
    return errs


def validate_affinity(affinity: Affinity | None, path: Path) -> list[FieldError]:
    """Node affinity, pod affinity, pod anti-affinity, in that order.

    Upstream: validateAffinity (pkg/apis/core/validation/validation.go, v1.35)
    """
    if affinity is None:
        return []
    errs: list[FieldError] = []
    if affinity.node_affinity is not None:
        errs += validate_node_affinity(affinity.node_affinity, path.child("nodeAffinity"))
    if affinity.pod_affinity is not None:
        pa = affinity.pod_affinity
        errs += _validate_pod_affinity_terms(
            pa.required_during_scheduling_ignored_during_execution,
            pa.preferred_during_scheduling_ignored_during_execution,
            path.child("podAffinity"),
        )
    if affinity.pod_anti_affinity is not None:
        paa = affinity.pod_anti_affinity
        errs += _validate_pod_affinity_terms(
            paa.required_during_scheduling_ignored_during_execution,
            paa.preferred_during_scheduling_ignored_during_execution,
            path.child("podAntiAffinity"),
        )
    return errs
