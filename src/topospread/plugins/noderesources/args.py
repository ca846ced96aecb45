"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs: decoding, v1 defaults, validation.

Defaults (kubescheduler.config.k8s.io/v1): NodeResourcesFit scores with LeastAllocated over cpu
and memory, weight 1 each; a strategy without resources gets those two; a weight of 0 becomes 1.
NodeResourcesBalancedAllocation balances cpu and memory; a weight of 0 becomes 1.

Upstream: SetDefaults_NodeResourcesFitArgs, SetDefaults_NodeResourcesBalancedAllocationArgs
(pkg/scheduler/apis/config/v1/defaults.go) and ValidateNodeResourcesFitArgs,
ValidateNodeResourcesBalancedAllocationArgs (pkg/scheduler/apis/config/validation/
validation_pluginargs.go), v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
)
from topospread.errors import ConfigError
from topospread.util.validation import is_qualified_name

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
# Sorted, as sets.List gives them in the NotSupported message.
SUPPORTED_SCORING_STRATEGY_TYPES: Final = (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
)

# The shape's score scale (config.MaxCustomPriorityScore).
MAX_CUSTOM_PRIORITY_SCORE: Final = 10


class _Args(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    pass


class ResourceSpec(_Args, frozen=True):
    """A resource to score and its weight."""

    name: str = ""
    weight: int = 0


class UtilizationShapePoint(_Args, frozen=True):
    """A point of the RequestedToCapacityRatio shape: utilization 0..100 -> score 0..10."""

    utilization: int = 0
    score: int = 0


class RequestedToCapacityRatioParam(_Args, frozen=True):
    shape: list[UtilizationShapePoint] = []


class ScoringStrategy(_Args, frozen=True):
    type: str = ""
    resources: list[ResourceSpec] = []
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


class NodeResourcesFitArgs(_Args, frozen=True):
    """Upstream: NodeResourcesFitArgs (pkg/scheduler/apis/config/types_pluginargs.go, v1.35)."""

    ignored_resources: list[str] = []
    ignored_resource_groups: list[str] = []
    scoring_strategy: ScoringStrategy | None = None


class NodeResourcesBalancedAllocationArgs(_Args, frozen=True):
    """Upstream: NodeResourcesBalancedAllocationArgs (types_pluginargs.go, v1.35)."""

    resources: list[ResourceSpec] = []


DEFAULT_RESOURCE_SPEC: Final = (
    ResourceSpec(name="cpu", weight=1),
    ResourceSpec(name="memory", weight=1),
)


def _decode(raw: Mapping[str, Any] | None, cls: type[_Args], kind: str) -> Any:
    try:
        return msgspec.convert(dict(raw or {}), cls)
    except msgspec.ValidationError as err:
        raise ConfigError(f"decoding {kind}: {err}") from err


def _default_weights(resources: list[ResourceSpec]) -> list[ResourceSpec]:
    return [r if r.weight != 0 else msgspec.structs.replace(r, weight=1) for r in resources]


def set_defaults_node_resources_fit_args(args: NodeResourcesFitArgs) -> NodeResourcesFitArgs:
    """Upstream: SetDefaults_NodeResourcesFitArgs (config/v1/defaults.go, v1.35)."""
    strategy = args.scoring_strategy
    if strategy is None:
        strategy = ScoringStrategy(type=LEAST_ALLOCATED, resources=list(DEFAULT_RESOURCE_SPEC))
    resources = strategy.resources or list(DEFAULT_RESOURCE_SPEC)
    strategy = msgspec.structs.replace(strategy, resources=_default_weights(resources))
    return msgspec.structs.replace(args, scoring_strategy=strategy)


def set_defaults_node_resources_balanced_allocation_args(
    args: NodeResourcesBalancedAllocationArgs,
) -> NodeResourcesBalancedAllocationArgs:
    """Upstream: SetDefaults_NodeResourcesBalancedAllocationArgs (defaults.go, v1.35)."""
    if not args.resources:
        return msgspec.structs.replace(args, resources=list(DEFAULT_RESOURCE_SPEC))
    return msgspec.structs.replace(args, resources=_default_weights(args.resources))


def decode_node_resources_fit_args(raw: Mapping[str, Any] | None) -> NodeResourcesFitArgs:
    """Decode a profile's raw args and apply the v1 defaults."""
    args: NodeResourcesFitArgs = _decode(raw, NodeResourcesFitArgs, "NodeResourcesFitArgs")
    return set_defaults_node_resources_fit_args(args)


def decode_node_resources_balanced_allocation_args(
    raw: Mapping[str, Any] | None,
) -> NodeResourcesBalancedAllocationArgs:
    """Decode a profile's raw args and apply the v1 defaults."""
    args: NodeResourcesBalancedAllocationArgs = _decode(
        raw, NodeResourcesBalancedAllocationArgs, "NodeResourcesBalancedAllocationArgs"
    )
    return set_defaults_node_resources_balanced_allocation_args(args)


def _child(path: Path | None, *names: str) -> Path:
    return path.child(*names) if path is not None else Path.root(*names)


def _validate_label_name(value: str, path: Path) -> list[FieldError]:
    """Upstream: ValidateLabelName (apimachinery/pkg/apis/meta/v1/validation, v1.35)."""
    return [invalid(path, value, msg) for msg in is_qualified_name(value)]


def validate_function_shape(shape: list[UtilizationShapePoint], path: Path) -> list[FieldError]:
    """At least one point, utilizations strictly increasing in [0, 100], scores in [0, 10].

    Upstream: validateFunctionShape (validation_pluginargs.go, v1.35)
    """
    if not shape:
        return [required(path, "at least one point must be specified")]
    errors: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.append(
                invalid(
                    path.index(i).child("utilization"),
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errors.append(
                invalid(
                    path.index(i).child("utilization"),
                    point.utilization,
                    "not in valid range [0, 100]",
                )
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(
                invalid(
                    path.index(i).child("score"),
                    point.score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errors


def _validate_resources(resources: list[ResourceSpec], path: Path) -> list[FieldError]:
    """Upstream: validateResources (validation_pluginargs.go, v1.35)."""
    return [
        invalid(
            path.index(i).child("weight"),
            r.weight,
            f"resource weight of {r.name} not in valid range (0, 100]",
        )
        for i, r in enumerate(resources)
        if r.weight <= 0 or r.weight > 100
    ]


def validate_node_resources_fit_args(
    args: NodeResourcesFitArgs, path: Path | None = None
) -> list[str]:
    """Field errors of the args; ``path`` is where they sit (None when the plugin checks its own).

    The shape's errors sit under ``scoringStrategy.shape``, not under
    ``scoringStrategy.requestedToCapacityRatio.shape``, as upstream reports them.
    Upstream: ValidateNodeResourcesFitArgs (validation_pluginargs.go, v1.35)
    """
    errors: list[FieldError] = []
    for i, res in enumerate(args.ignored_resources):
        errors.extend(_validate_label_name(res, _child(path, "ignoredResources").index(i)))
    for i, group in enumerate(args.ignored_resource_groups):
        p = _child(path, "ignoredResourceGroups").index(i)
        if "/" in group:
            errors.append(invalid(p, group, "resource group name can't contain '/'"))
        errors.extend(_validate_label_name(group, p))
    strategy = args.scoring_strategy
    if strategy is not None:
        strategy_path = _child(path, "scoringStrategy")
        if strategy.type not in SUPPORTED_SCORING_STRATEGY_TYPES:
            errors.append(
                not_supported(
                    strategy_path.child("type"),
                    GoJSON(strategy.type),
                    SUPPORTED_SCORING_STRATEGY_TYPES,
                )
            )
        errors.extend(_validate_resources(strategy.resources, strategy_path.child("resources")))
        if strategy.requested_to_capacity_ratio is not None:
            errors.extend(
                validate_function_shape(
                    strategy.requested_to_capacity_ratio.shape, strategy_path.child("shape")
                )
            )
    return [str(e) for e in errors]


def validate_node_resources_balanced_allocation_args(
    args: NodeResourcesBalancedAllocationArgs, path: Path | None = None
) -> list[str]:
    """Every resource once, each with weight 1.

    Upstream: ValidateNodeResourcesBalancedAllocationArgs (validation_pluginargs.go, v1.35)
    """
    errors: list[FieldError] = []
    seen: set[str] = set()
    resources_path = _child(path, "resources")
    for i, r in enumerate(args.resources):
        if r.name in seen:
            errors.append(duplicate(resources_path.index(i).child("name"), r.name))
        else:
            seen.add(r.name)
        if r.weight != 1:
            errors.append(invalid(resources_path.index(i).child("weight"), r.weight, "must be 1"))
    return [str(e) for e in errors]


def config_error(errors: list[str]) -> ConfigError:
    """The aggregate error the plugin's constructor returns (``[a, b]`` when several)."""
    unique = list(dict.fromkeys(errors))
    return ConfigError(unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]")


__all__ = [
    "DEFAULT_RESOURCE_SPEC",
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "config_error",
    "decode_node_resources_balanced_allocation_args",
    "decode_node_resources_fit_args",
    "set_defaults_node_resources_balanced_allocation_args",
    "set_defaults_node_resources_fit_args",
    "validate_function_shape",
    "validate_node_resources_balanced_allocation_args",
    "validate_node_resources_fit_args",
]
