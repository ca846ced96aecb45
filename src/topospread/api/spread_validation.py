"""Topology spread constraints as kube-apiserver v1.35 validates a pod's (with matchLabelKeys
merged into the selector as admission does) and as kube-scheduler v1.35 validates
PodTopologySpreadArgs' default constraints, with their messages and field paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from topospread.api.admission import merge_match_label_keys
from topospread.api.decode_errors import explain, unknown_fields
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    as_path,
    dedupe,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from topospread.api.go_errors import go_type_error
from topospread.api.meta_validation import (
    validate_label_name,
    validate_label_selector,
    validate_match_label_keys_and_mismatch_label_keys,
)
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LIST_DEFAULTING,
    NODE_INCLUSION_POLICY_HONOR,
    NODE_INCLUSION_POLICY_IGNORE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    LabelSelector,
    PodTopologySpreadArgs,
    TopologySpreadConstraint,
)
from topospread.errors import ConfigError

IS_NOT_POSITIVE_ERROR_MSG: Final = "must be greater than zero"
# sets.List order (sorted), as upstream passes them to field.NotSupported.
SUPPORTED_SCHEDULE_ACTIONS: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)
SUPPORTED_NODE_INCLUSION_POLICIES: Final = (
    NODE_INCLUSION_POLICY_HONOR,
    NODE_INCLUSION_POLICY_IGNORE,
)


# ---------------------------------------------------------------------------------------------
# matchLabelKeys (pkg/apis/core/validation)


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
# Scheduler configuration


_TYPE_META: Final = frozenset({"apiVersion", "kind"})


def decode_pod_topology_spread_args(
    raw: Mapping[str, Any] | None, path: str
) -> PodTopologySpreadArgs:
    """PodTopologySpreadArgs decoded strictly (a misspelled field is an error, as kube-scheduler's
    strict decoding of a profile's args makes it), defaulted (defaultingType System) and
    validated; a ConfigError naming ``path`` (where the args are) otherwise."""
    data = dict(raw or {})
    unknown = unknown_fields(data, PodTopologySpreadArgs, _TYPE_META)
    if unknown:
        raise ConfigError(
            f"{path}: strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)
        )
    try:
        args = msgspec.convert(data, PodTopologySpreadArgs)
    except msgspec.ValidationError as err:
        said = go_type_error(err, data, PodTopologySpreadArgs)
        if said is None:
            raise ConfigError(f"{path}.{explain(err, data)}") from err
        # kube-scheduler decodes each plugin's args after the configuration, naming the plugin.
        raise ConfigError(f"{path}: decoding args for plugin PodTopologySpread: {said}") from err
    if not args.defaulting_type:
        args = msgspec.structs.replace(args, defaulting_type=SYSTEM_DEFAULTING)
    errors = validate_pod_topology_spread_args(args, path)
    if errors:
        raise ConfigError(str(errors[0]) if len(errors) == 1 else "; ".join(map(str, errors)))
    return args


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
