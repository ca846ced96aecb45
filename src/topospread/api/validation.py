"""What kube-apiserver v1.35 and kube-scheduler v1.35 reject, with their messages and field paths.

Covers the parts of ``ValidatePodCreate`` that the scheduler's inputs depend on (metadata, node
selector, affinity, scheduling gates, topology spread constraints, node name, tolerations,
priority class and preemption policy), ``ValidateNode``'s metadata and taints, and the
scheduler's ``ValidatePodTopologySpreadArgs``. Every check runs with the v1.35 default feature
gates and the options of a create (no old object to be lenient with).

Go iterates maps in random order; label maps are checked here in sorted key order, so the
errors come out in a stable order (upstream's order among them varies from run to run).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

import msgspec

from topospread.api.admission import merge_match_label_keys, prepare_for_create
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    as_path,
    dedupe,
    duplicate,
    forbidden,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
)
from topospread.api.resource_validation import (
    validate_node_resources,
    validate_overhead,
    validate_resource_requirements,
)
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LIST_DEFAULTING,
    NODE_INCLUSION_POLICY_HONOR,
    NODE_INCLUSION_POLICY_IGNORE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Affinity,
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
    PodSchedulingGate,
    PodSpec,
    PodTopologySpreadArgs,
    PreferredSchedulingTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
)
from topospread.util.validation import (
    is_decimal_integer,
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

IS_NOT_POSITIVE_ERROR_MSG: Final = "must be greater than zero"

# sets.List order (sorted), as upstream passes them to field.NotSupported.
SUPPORTED_SCHEDULE_ACTIONS: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
SUPPORTED_NODE_INCLUSION_POLICIES: Final = (
    NODE_INCLUSION_POLICY_HONOR,
    NODE_INCLUSION_POLICY_IGNORE,
)
SUPPORTED_TAINT_EFFECTS: Final = (
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TAINT_EFFECT_NO_EXECUTE,
)
TOLERATION_OP_LT: Final = "Lt"
TOLERATION_OP_GT: Final = "Gt"
PREEMPT_LOWER_PRIORITY: Final = "PreemptLowerPriority"
PREEMPT_NEVER: Final = "Never"
OBJECT_NAME_FIELD: Final = "metadata.name"
TOTAL_ANNOTATION_SIZE_LIMIT_B: Final = 256 * (1 << 10)

# Name generation (storage/names.SimpleNameGenerator): a 58-byte prefix and 5 random characters.
_MAX_GENERATED_BASE_LENGTH: Final = 58
_GENERATED_SUFFIX: Final = "xxxxx"


# ---------------------------------------------------------------------------------------------
# Labels and label selectors (apimachinery/pkg/apis/meta/v1/validation)


def validate_label_name(name: str, path: Path) -> list[FieldError]:
    """Each problem of ``name`` as a label key, reported at ``path``.

    Upstream: ValidateLabelName (apimachinery/pkg/apis/meta/v1/validation/validation.go, v1.35)
    """
    return [invalid(path, name, msg) for msg in is_qualified_name(name)]


def validate_labels(labels: Mapping[str, str], path: Path) -> list[FieldError]:
    """Keys and values of a label map; every error is reported at ``path`` itself.

    Upstream: ValidateLabels (apimachinery/pkg/apis/meta/v1/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for key in sorted(labels):
        errs.extend(validate_label_name(key, path))
        errs.extend(invalid(path, labels[key], msg) for msg in is_valid_label_value(labels[key]))
    return errs


def validate_label_selector_requirement(
    req: LabelSelectorRequirement, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """Operator and values, key, then (unless allowed) each value as a label value.

    Upstream: ValidateLabelSelectorRequirement (apimachinery/pkg/apis/meta/v1/validation, v1.35)
    """
    errs: list[FieldError] = []
    if req.operator in ("In", "NotIn"):
        if not req.values:
            errs.append(
                required(
                    path.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"
                )
            )
    elif req.operator in ("Exists", "DoesNotExist"):
        if req.values:
            errs.append(
                forbidden(
                    path.child("values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                )
            )
    else:
        errs.append(
            invalid(path.child("operator"), GoJSON(req.operator), "not a valid selector operator")
        )
    errs.extend(validate_label_name(req.key, path.child("key")))
    if not allow_invalid_label_value:
        values = path.child("values")
        for i, value in enumerate(req.values):
            errs.extend(invalid(values.index(i), value, msg) for msg in is_valid_label_value(value))
    return errs


def validate_label_selector(
    selector: LabelSelector | None, path: Path, *, allow_invalid_label_value: bool = False
) -> list[FieldError]:
    """A nil selector is valid.

    Upstream: ValidateLabelSelector (apimachinery/pkg/apis/meta/v1/validation/validation.go, v1.35)
    """
    if selector is None:
        return []
    errs = validate_labels(selector.match_labels, path.child("matchLabels"))
    expressions = path.child("matchExpressions")
    for i, req in enumerate(selector.match_expressions):
        errs.extend(
            validate_label_selector_requirement(
                req, expressions.index(i), allow_invalid_label_value=allow_invalid_label_value
            )
        )
    return errs


# ---------------------------------------------------------------------------------------------
# matchLabelKeys / mismatchLabelKeys (pkg/apis/core/validation)


def _validate_label_keys(
    keys: Sequence[str], selector: LabelSelector | None, path: Path
) -> list[FieldError]:
    """Upstream: validateLabelKeys (pkg/apis/core/validation/validation.go, v1.35)"""
    if not keys:
        return []
    if selector is None:
        return [forbidden(path, "must not be specified when labelSelector is not set")]
    errs: list[FieldError] = []
    for i, key in enumerate(keys):
        errs.extend(validate_label_name(key, path.index(i)))
    return errs


def validate_match_label_keys_and_mismatch_label_keys(
    path: Path,
    match_label_keys: Sequence[str],
    mismatch_label_keys: Sequence[str],
    selector: LabelSelector | None,
) -> list[FieldError]:
    """The v1.34+ rules, written for a selector the API server has already merged into.

    A ``matchLabelKeys`` key may appear once in the selector (that is the merged requirement);
    a second appearance is an error reported at ``path[i]`` — the term's own path subscripted
    with the key's index, as in ``spec.topologySpreadConstraints[0][1]`` (upstream issue
    #130554), not at ``...matchLabelKeys[1]``.

    Upstream: ValidateMatchLabelKeysAndMismatchLabelKeys (pkg/apis/core/validation, v1.35)
    """
    errs = _validate_label_keys(match_label_keys, selector, path.child("matchLabelKeys"))
    errs += _validate_label_keys(mismatch_label_keys, selector, path.child("mismatchLabelKeys"))
    if selector is not None:
        key_index = {key: i for i, key in enumerate(match_label_keys)}  # the last index wins
        seen = set(selector.match_labels)
        for expression in selector.match_expressions:
            key = expression.key
            if key in key_index and key in seen:
                errs.append(
                    invalid(
                        path.index(key_index[key]),
                        key,
                        "exists in both matchLabelKeys and labelSelector",
                    )
                )
            seen.add(key)
    mismatch = set(mismatch_label_keys)
    for i, key in enumerate(match_label_keys):
        if key in mismatch:
            errs.append(
                invalid(
                    path.child("matchLabelKeys").index(i),
                    key,
                    "exists in both matchLabelKeys and mismatchLabelKeys",
                )
            )
    return errs


def validate_match_label_keys_in_topology_spread(
    path: Path, match_label_keys: Sequence[str], selector: LabelSelector | None
) -> list[FieldError]:
    """The pre-v1.34 rule, used when ``MatchLabelKeysInPodTopologySpreadSelectorMerge`` is off:
    no key of ``matchLabelKeys`` may appear anywhere in the selector.

    Upstream: ValidateMatchLabelKeysInTopologySpread (pkg/apis/core/validation, v1.35)
    """
    if not match_label_keys:
        return []
    errs: list[FieldError] = []
    selector_keys: set[str] = set()
    if selector is not None:
        selector_keys.update(selector.match_labels)
        selector_keys.update(e.key for e in selector.match_expressions)
    else:
        errs.append(forbidden(path, "must not be specified when labelSelector is not set"))
    for i, key in enumerate(match_label_keys):
        errs.extend(validate_label_name(key, path.index(i)))
        if key in selector_keys:
            errs.append(
                invalid(path.index(i), key, "exists in both matchLabelKeys and labelSelector")
            )
    return errs


# ---------------------------------------------------------------------------------------------
# Topology spread constraints


def validate_topology_spread_constraints(
    constraints: Sequence[TopologySpreadConstraint],
    path: Path | str = "spec.topologySpreadConstraints",
    pod_labels: Mapping[str, str] | None = None,
    *,
    selector_merge: bool = True,
) -> list[FieldError]:
    """Every rule the API server applies to a pod's ``topologySpreadConstraints`` on create.

    Per constraint, in upstream's order: ``maxSkew`` > 0; ``topologyKey`` non-empty (it is *not*
    checked to be a valid label key here, unlike in the scheduler's default constraints);
    ``whenUnsatisfiable`` one of DoNotSchedule/ScheduleAnyway; no later constraint with the same
    ``{topologyKey, whenUnsatisfiable}`` (reported on the earlier one); ``minDomains``, when set,
    > 0 and only with DoNotSchedule; ``nodeAffinityPolicy``/``nodeTaintsPolicy`` Honor or Ignore;
    ``matchLabelKeys``; ``labelSelector`` (values must be valid label values).

    Upstream validates after the create-time merge of ``matchLabelKeys`` into the selector. Pass
    the pod's labels as ``pod_labels`` to have each constraint merged first (constraints already
    merged are left as they are, see :mod:`topospread.api.admission`); leave it ``None`` to
    validate the constraints as given. ``selector_merge=False`` applies the legacy
    ``matchLabelKeys`` rule of a server with ``MatchLabelKeysInPodTopologySpreadSelectorMerge``
    off (and merges nothing).

    Upstream: validateTopologySpreadConstraints (pkg/apis/core/validation/validation.go, v1.35)
    """
    root = as_path(path)
    errs: list[FieldError] = []
    for i, given in enumerate(constraints):
        c = given
        if pod_labels is not None and selector_merge:
            c = merge_match_label_keys(given, pod_labels)
        sub = root.index(i)
        if c.max_skew <= 0:
            errs.append(invalid(sub.child("maxSkew"), c.max_skew, IS_NOT_POSITIVE_ERROR_MSG))
        if not c.topology_key:
            errs.append(required(sub.child("topologyKey"), "can not be empty"))
        if c.when_unsatisfiable not in SUPPORTED_SCHEDULE_ACTIONS:
            errs.append(
                not_supported(
                    sub.child("whenUnsatisfiable"),
                    GoJSON(c.when_unsatisfiable),
                    SUPPORTED_SCHEDULE_ACTIONS,
                )
            )
        for rest in constraints[i + 1 :]:
            if (rest.topology_key, rest.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errs.append(
                    duplicate(
                        sub.child("{topologyKey, whenUnsatisfiable}"),
                        f"{{{c.topology_key}, {c.when_unsatisfiable}}}",
                    )
                )
                break
        if c.min_domains is not None:
            min_domains = sub.child("minDomains")
            if c.min_domains <= 0:
                errs.append(invalid(min_domains, c.min_domains, IS_NOT_POSITIVE_ERROR_MSG))
            if c.when_unsatisfiable != DO_NOT_SCHEDULE:
                errs.append(
                    invalid(
                        min_domains,
                        GoJSON(c.min_domains),
                        f"can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}, "
                        f"not {c.when_unsatisfiable}",
                    )
                )
        for name, policy in (
            ("nodeAffinityPolicy", c.node_affinity_policy),
            ("nodeTaintsPolicy", c.node_taints_policy),
        ):
            if policy is not None and policy not in SUPPORTED_NODE_INCLUSION_POLICIES:
                errs.append(
                    not_supported(
                        sub.child(name), GoJSON(policy), SUPPORTED_NODE_INCLUSION_POLICIES
                    )
                )
        if selector_merge:
            errs += validate_match_label_keys_and_mismatch_label_keys(
                sub, c.match_label_keys, [], c.label_selector
            )
        else:
            errs += validate_match_label_keys_in_topology_spread(
                sub.child("matchLabelKeys"), c.match_label_keys, c.label_selector
            )
        errs += validate_label_selector(c.label_selector, sub.child("labelSelector"))
    return errs


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


# ---------------------------------------------------------------------------------------------
# Taints and tolerations


def _validate_taint_effect(effect: str, path: Path, *, allow_empty: bool) -> list[FieldError]:
    """Upstream: validateTaintEffect (pkg/apis/core/validation/validation.go, v1.35)"""
    if not effect:
        return [] if allow_empty else [required(path)]
    if effect in SUPPORTED_TAINT_EFFECTS:
        return []
    return [not_supported(path, GoJSON(effect), SUPPORTED_TAINT_EFFECTS)]


def _parse_int64_error(value: str) -> str | None:
    """The error text of Go's ``strconv.ParseInt(value, 10, 64)``, or None if it parses."""
    body = value[1:] if value[:1] in ("+", "-") else value
    if not body or not body.isascii() or not body.isdigit():
        return f"strconv.ParseInt: parsing {go_quote(value)}: invalid syntax"
    if not -(2**63) <= int(value) <= 2**63 - 1:
        return f"strconv.ParseInt: parsing {go_quote(value)}: value out of range"
    return None


def validate_tolerations(
    tolerations: Sequence[Toleration],
    path: Path,
    *,
    allow_comparison_operators: bool = False,
) -> list[FieldError]:
    """Keys, operators, values and effects of tolerations.

    With the alpha gate ``TaintTolerationComparisonOperators`` off (the v1.35 default), ``Lt``
    and ``Gt`` are rejected — with a list of supported values that names them anyway.

    Upstream: ValidateTolerations (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        idx = path.index(i)
        operator_path = idx.child("operator")
        if t.key:
            errs += validate_label_name(t.key, idx.child("key"))
        if not t.key and t.operator != TOLERATION_OP_EXISTS:
            errs.append(
                invalid(
                    operator_path,
                    GoJSON(t.operator),
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if t.toleration_seconds is not None and t.effect != TAINT_EFFECT_NO_EXECUTE:
            errs.append(
                invalid(
                    idx.child("effect"),
                    GoJSON(t.effect),
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if t.operator in (TOLERATION_OP_EQUAL, ""):
            value_errs = is_valid_label_value(t.value)
            if value_errs:
                errs.append(invalid(operator_path, t.value, ";".join(value_errs)))
        elif t.operator == TOLERATION_OP_EXISTS:
            if t.value:
                errs.append(
                    invalid(
                        operator_path, t.value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        elif t.operator in (TOLERATION_OP_LT, TOLERATION_OP_GT):
            if not allow_comparison_operators:
                errs.append(
                    not_supported(
                        operator_path,
                        GoJSON(t.operator),
                        (
                            TOLERATION_OP_EQUAL,
                            TOLERATION_OP_EXISTS,
                            TOLERATION_OP_LT,
                            TOLERATION_OP_GT,
                        ),
                    )
                )
            else:
                value_path = idx.child("value")
                errs.extend(invalid(value_path, t.value, m) for m in is_decimal_integer(t.value))
                parse_error = _parse_int64_error(t.value)
                if parse_error is not None:
                    errs.append(invalid(value_path, t.value, parse_error))
        else:
            errs.append(
                not_supported(
                    operator_path, GoJSON(t.operator), (TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS)
                )
            )
        if t.effect:
            errs += _validate_taint_effect(t.effect, idx.child("effect"), allow_empty=True)
    return errs


def _go_time_json(text: str | None) -> str | None:
    """A ``metav1.Time`` as it marshals: RFC 3339 in UTC, to the second."""
    if text is None:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def validate_taints(taints: Sequence[Taint], path: Path) -> list[FieldError]:
    """Key, value and (required) effect of each taint, and no repeated ``{key, effect}``.

    A repeat is reported as ``Duplicate value`` with the whole internal ``core.Taint`` marshalled
    to JSON (its fields have no JSON tags, hence ``{"Key":...,"TimeAdded":null}``) and the
    detail upstream writes into the error by hand.

    Upstream: validateNodeTaints (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    seen: dict[str, set[str]] = {}
    for i, taint in enumerate(taints):
        idx = path.index(i)
        errs += validate_label_name(taint.key, idx.child("key"))
        value_errs = is_valid_label_value(taint.value)
        if value_errs:
            errs.append(invalid(idx.child("value"), taint.value, ";".join(value_errs)))
        errs += _validate_taint_effect(taint.effect, idx.child("effect"), allow_empty=False)
        keys = seen.setdefault(taint.effect, set())
        if taint.key in keys:
            as_struct = {
                "Key": taint.key,
                "Value": taint.value,
                "Effect": taint.effect,
                "TimeAdded": _go_time_json(taint.time_added),
            }
            errs.append(
                duplicate(idx, GoJSON(as_struct), "taints must be unique by key and effect pair")
            )
            continue
        keys.add(taint.key)
    return errs


# ---------------------------------------------------------------------------------------------
# Object metadata


def _mask_trailing_dash(name: str) -> str:
    """Upstream's quirk: the last *two* bytes give way to one ``a``.

    Upstream: maskTrailingDash (apimachinery/pkg/api/validation/generic.go, v1.35)
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    """Upstream: NameIsDNSSubdomain (apimachinery/pkg/api/validation/generic.go, v1.35)"""
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    """Upstream: NameIsDNSLabel (apimachinery/pkg/api/validation/generic.go, v1.35)"""
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def validate_annotations(annotations: Mapping[str, str], path: Path) -> list[FieldError]:
    """Keys are label keys, compared in lower case; at most 256 KiB of keys and values.

    Upstream: ValidateAnnotations (apimachinery/pkg/api/validation/objectmeta.go, v1.35)
    """
    errs: list[FieldError] = []
    for key in sorted(annotations):
        errs.extend(invalid(path, key, msg) for msg in is_qualified_name(key.lower()))
    total = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errs.append(too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errs


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    """Upstream: NameIsDNS1035Label (apimachinery/pkg/api/validation/generic.go, v1.35)"""
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def validate_object_meta(
    meta: ObjectMeta,
    path: Path,
    *,
    requires_namespace: bool,
    name_rule: Callable[[str, bool], list[str]] = name_is_dns_subdomain,
    labels_too: bool = True,
) -> list[FieldError]:
    """Name (by ``name_rule``: a DNS subdomain for most kinds), generateName, namespace, labels
    and annotation keys (the last two only with ``labels_too``: they come last, and
    validate_pod keeps theirs).

    Owner references, finalizers and managed fields are not checked. Name generation is
    expected to have happened already (see :func:`validate_pod`).

    Upstream: ValidateObjectMetaAccessor (apimachinery/pkg/api/validation/objectmeta.go, v1.35)
    """
    errs: list[FieldError] = []
    if meta.generate_name:
        errs.extend(
            invalid(path.child("generateName"), meta.generate_name, msg)
            for msg in name_rule(meta.generate_name, True)
        )
    if not meta.name:
        errs.append(required(path.child("name"), "name or generateName is required"))
    else:
        errs.extend(
            invalid(path.child("name"), meta.name, msg) for msg in name_rule(meta.name, False)
        )
    namespace = path.child("namespace")
    if requires_namespace:
        if not meta.namespace:
            errs.append(required(namespace))
        else:
            errs.extend(
                invalid(namespace, meta.namespace, msg)
                for msg in name_is_dns_label(meta.namespace, False)
            )
    elif meta.namespace:
        errs.append(forbidden(namespace, "not allowed on this type"))
    if labels_too:
        errs += validate_labels(meta.labels, path.child("labels"))
        errs += validate_annotations(meta.annotations, path.child("annotations"))
    return errs


def generate_name(base: str) -> str:
    """A name as the API server generates it from ``generateName``, with a fixed suffix.

    Upstream appends five random characters from ``bcdfghjklmnpqrstvwxz2456789``; any of them
    validates the same, so a fixed ``xxxxx`` keeps results reproducible.

    Upstream: simpleNameGenerator.GenerateName (apiserver/pkg/storage/names/generate.go, v1.35)
    """
    return base[:_MAX_GENERATED_BASE_LENGTH] + _GENERATED_SUFFIX


# ---------------------------------------------------------------------------------------------
# Pods and nodes


def _validate_scheduling_gates(gates: Sequence[PodSchedulingGate], path: Path) -> list[FieldError]:
    """Upstream: validateSchedulingGates (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(gates):
        errs.extend(invalid(path.index(i), gate.name, m) for m in is_qualified_name(gate.name))
        if gate.name in seen:
            errs.append(duplicate(path.index(i), gate.name))
        seen.add(gate.name)
    return errs


def validate_pod(
    pod: Pod,
    *,
    allow_toleration_comparison_operators: bool = False,
    match_label_keys_selector_merge: bool = True,
) -> list[FieldError]:
    """What ``kubectl create`` of this pod would be refused for, on the fields the scheduler reads.

    The pod is first prepared as the API server prepares a new pod: a name is generated from
    ``generateName`` when ``name`` is empty, and ``matchLabelKeys`` of topology spread
    constraints and pod (anti)affinity terms are merged into their selectors (a pod read back
    from a cluster is already merged and stays as it is). The namespace is not defaulted: the
    API server takes it from the request, so give manifests one.

    Checked, in upstream's order: metadata (name, generateName, namespace, labels, annotation
    keys); containers' and init containers' resources; ``spec.nodeSelector``;
    ``spec.affinity``; ``spec.schedulingGates``; ``spec.topologySpreadConstraints``;
    ``spec.nodeName``; ``spec.tolerations``; ``spec.priorityClassName``;
    ``spec.preemptionPolicy``; overhead and pod-level resources; and that ``spec.nodeName`` is
    not set while scheduling gates remain. The rest of the containers, volumes and the spec is
    not checked.

    Upstream: ValidatePodCreate (pkg/apis/core/validation/validation.go, v1.35)
    """
    if not pod.metadata.name and pod.metadata.generate_name:
        meta = msgspec.structs.replace(pod.metadata, name=generate_name(pod.metadata.generate_name))
        pod = msgspec.structs.replace(pod, metadata=meta)
    meta = pod.metadata
    meta_path = Path.root("metadata")
    errs = validate_object_meta(meta, meta_path, requires_namespace=True, labels_too=False)
    spec = pod.spec
    # NOTE: the errors of the labels, the annotations and the spec depend on those, the two
    # switches and no other field: a controller's pods share them, so they are found once. The
    # key holds only the fields they read (not a bound pod's nodeName, volumes or images, which
    # differ from pod to pod); nodeName's own checks are made for each pod.
    key = _SPEC_KEY.encode(
        (
            meta.labels,
            meta.annotations,
            [c.resources for c in spec.containers],
            [c.resources for c in spec.init_containers],
            spec.node_selector,
            spec.affinity,
            spec.scheduling_gates,
            spec.topology_spread_constraints,
            spec.tolerations,
            spec.priority_class_name,
            spec.preemption_policy,
            spec.overhead,
            spec.resources,
            allow_toleration_comparison_operators,
            match_label_keys_selector_merge,
        )
    )
    found = _SPEC_ERRORS.get(key)
    if found is None:
        prepared = prepare_for_create(
            pod, merge_topology_spread_keys=match_label_keys_selector_merge
        )
        found = (
            validate_labels(meta.labels, meta_path.child("labels"))
            + validate_annotations(meta.annotations, meta_path.child("annotations")),
            *_validate_pod_spec(
                prepared.spec,
                allow_toleration_comparison_operators=allow_toleration_comparison_operators,
                match_label_keys_selector_merge=match_label_keys_selector_merge,
            ),
        )
        if len(_SPEC_ERRORS) >= _MAX_SPEC_ERRORS:
            _SPEC_ERRORS.clear()
        _SPEC_ERRORS[key] = found
    meta_errors, before_node_name, after_node_name = found
    errs += meta_errors
    errs += before_node_name
    if spec.node_name:
        spec_path = Path.root("spec")
        errs.extend(
            invalid(spec_path.child("nodeName"), spec.node_name, msg)
            for msg in name_is_dns_subdomain(spec.node_name, False)
        )
    errs += after_node_name
    # ValidatePodCreate's own checks, after validatePodMetadataAndSpec.
    if spec.node_name and spec.scheduling_gates:
        errs.append(
            forbidden(
                Path.root("spec").child("nodeName"),
                "cannot be set until all schedulingGates have been cleared",
            )
        )
    return errs


_SPEC_KEY: Final = msgspec.json.Encoder()
# The errors of the labels and annotations, then the spec's before and after nodeName's.
_SPEC_ERRORS: dict[bytes, tuple[list[FieldError], list[FieldError], list[FieldError]]] = {}
_MAX_SPEC_ERRORS: Final = 4096


def _validate_pod_spec(
    spec: PodSpec,
    *,
    allow_toleration_comparison_operators: bool,
    match_label_keys_selector_merge: bool,
) -> tuple[list[FieldError], list[FieldError]]:
    """validate_pod's checks of the (prepared) spec, in upstream's order: those before
    ``spec.nodeName``'s, and those after it but before ValidatePodCreate's own (validate_pod
    makes the ones that read nodeName)."""
    spec_path = Path.root("spec")
    errs: list[FieldError] = []
    for field, containers in (
        ("containers", spec.containers),
        ("initContainers", spec.init_containers),
    ):
        for i, container in enumerate(containers):
            resources = spec_path.child(field).index(i).child("resources")
            errs += validate_resource_requirements(container.resources, resources)
    errs += validate_labels(spec.node_selector, spec_path.child("nodeSelector"))
    errs += validate_affinity(spec.affinity, spec_path.child("affinity"))
    errs += _validate_scheduling_gates(spec.scheduling_gates, spec_path.child("schedulingGates"))
    errs += validate_topology_spread_constraints(
        spec.topology_spread_constraints,
        spec_path.child("topologySpreadConstraints"),
        selector_merge=match_label_keys_selector_merge,
    )
    before = errs
    errs = []
    if spec.tolerations:
        errs += validate_tolerations(
            spec.tolerations,
            spec_path.child("tolerations"),
            allow_comparison_operators=allow_toleration_comparison_operators,
        )
    if spec.priority_class_name:
        errs.extend(
            invalid(spec_path.child("priorityClassName"), spec.priority_class_name, msg)
            for msg in name_is_dns_subdomain(spec.priority_class_name, False)
        )
    if spec.preemption_policy is not None:
        policy_path = spec_path.child("preemptionPolicy")
        if not spec.preemption_policy:
            errs.append(required(policy_path))
        elif spec.preemption_policy not in (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER):
            errs.append(
                not_supported(
                    policy_path,
                    GoJSON(spec.preemption_policy),
                    (PREEMPT_LOWER_PRIORITY, PREEMPT_NEVER),
                )
            )
    if spec.overhead:
        errs += validate_overhead(spec.overhead, spec_path.child("overhead"))
    if spec.resources is not None:
        errs += validate_resource_requirements(spec.resources, spec_path.child("resources"))
    return before, errs


def validate_node(node: Node) -> list[FieldError]:
    """A node's metadata (cluster-scoped: no namespace) and its taints.

    Upstream reports taint errors under ``metadata.taints`` — it builds their path from the
    metadata path — and so does this.

    Upstream: ValidateNode (pkg/apis/core/validation/validation.go, v1.35)
    """
    meta_path = Path.root("metadata")
    errs = validate_object_meta(node.metadata, meta_path, requires_namespace=False)
    if node.spec.taints:
        errs += validate_taints(node.spec.taints, meta_path.child("taints"))
    errs += validate_node_resources(node)
    return errs


# ---------------------------------------------------------------------------------------------
# Scheduler configuration


def validate_pod_topology_spread_args(
    args: PodTopologySpreadArgs, path: Path | str = "args"
) -> list[FieldError]:
    """What kube-scheduler refuses in PodTopologySpreadArgs, after v1 defaulting.

    An empty ``defaultingType`` is defaulted to System first, as the v1 config API does.
    Default constraints get fewer checks than a pod's: ``minDomains``, ``nodeAffinityPolicy``,
    ``nodeTaintsPolicy`` and ``matchLabelKeys`` are not validated at all; repeats are reported
    on the *later* constraint (a pod's on the earlier), at the constraint's own path; and
    ``maxSkew`` has its own message. Errors are de-duplicated as ``ToAggregate`` does.

    Upstream: ValidatePodTopologySpreadArgs
    (pkg/scheduler/apis/config/validation/validation_pluginargs.go, v1.35)
    """
    root = as_path(path)
    errs: list[FieldError] = []
    defaulting = args.defaulting_type or SYSTEM_DEFAULTING
    constraints = args.default_constraints
    defaulting_path = root.child("defaultingType")
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        errs.append(
            not_supported(defaulting_path, GoJSON(defaulting), (SYSTEM_DEFAULTING, LIST_DEFAULTING))
        )
    elif defaulting == SYSTEM_DEFAULTING and constraints:
        errs.append(
            invalid(defaulting_path, GoJSON(defaulting), "when .defaultConstraints are not empty")
        )

    constraints_path = root.child("defaultConstraints")
    for i, c in enumerate(constraints):
        p = constraints_path.index(i)
        if c.max_skew <= 0:
            errs.append(invalid(p.child("maxSkew"), c.max_skew, "not in valid range (0, inf)"))
        if not c.topology_key:
            errs.append(required(p.child("topologyKey"), "can not be empty"))
        else:
            errs += validate_label_name(c.topology_key, p.child("topologyKey"))
        if not c.when_unsatisfiable:
            errs.append(required(p.child("whenUnsatisfiable"), "can not be empty"))
        elif c.when_unsatisfiable not in SUPPORTED_SCHEDULE_ACTIONS:
            errs.append(
                not_supported(
                    p.child("whenUnsatisfiable"),
                    GoJSON(c.when_unsatisfiable),
                    SUPPORTED_SCHEDULE_ACTIONS,
                )
            )
        if c.label_selector is not None:
            errs.append(
                forbidden(
                    p.child("labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for other in constraints[:i]:
            if (other.topology_key, other.when_unsatisfiable) == (
                c.topology_key,
                c.when_unsatisfiable,
            ):
                errs.append(duplicate(p, f"{{{c.topology_key}, {c.when_unsatisfiable}}}"))
                break
    return dedupe(errs)
