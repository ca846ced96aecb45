"""DefaultPreemption's args: decoding, defaults and validation, with the scheduler's messages.

Upstream: DefaultPreemptionArgs in pkg/scheduler/apis/config (types_pluginargs.go,
v1/defaults.go and validation/validation_pluginargs.go), v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from topospread.errors import ConfigError

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE: Final = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE: Final = 100


class DefaultPreemptionArgs(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True
):
    """The args as written in a profile's pluginConfig (apiVersion and kind are ignored);
    ``None`` until defaulted."""

    min_candidate_nodes_percentage: int | None = None
    min_candidate_nodes_absolute: int | None = None

    @property
    def percentage(self) -> int:
        p = self.min_candidate_nodes_percentage
        return DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE if p is None else p

    @property
    def absolute(self) -> int:
        a = self.min_candidate_nodes_absolute
        return DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE if a is None else a


def decode_default_preemption_args(
    raw: Mapping[str, Any] | DefaultPreemptionArgs | None,
) -> DefaultPreemptionArgs:
    """The args of a profile's pluginConfig entry, as written (not yet defaulted)."""
    if raw is None:
        return DefaultPreemptionArgs()
    if isinstance(raw, DefaultPreemptionArgs):
        return raw
    try:
        return msgspec.convert(dict(raw), DefaultPreemptionArgs)
    except msgspec.ValidationError as err:
        raise ConfigError(f"decoding DefaultPreemptionArgs: {err}") from err


def set_defaults_default_preemption_args(args: DefaultPreemptionArgs) -> DefaultPreemptionArgs:
    """Unset fields default to 10 (percentage) and 100 (absolute); explicit zeros stay.

    Upstream: SetDefaults_DefaultPreemptionArgs (pkg/scheduler/apis/config/v1/defaults.go)
    """
    return DefaultPreemptionArgs(
        min_candidate_nodes_percentage=args.percentage,
        min_candidate_nodes_absolute=args.absolute,
    )


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def validate_default_preemption_args(args: DefaultPreemptionArgs, path: str = "") -> list[str]:
    """Field errors of the (defaulted) args, in upstream's order.

    ``path`` is where the args sit (empty when the plugin validates its own args).
    Upstream: ValidateDefaultPreemptionArgs, validateMinCandidateNodesPercentage and
    validateMinCandidateNodesAbsolute (validation_pluginargs.go, v1.35)
    """
    percentage_path = _child(path, "minCandidateNodesPercentage")
    absolute_path = _child(path, "minCandidateNodesAbsolute")
    percentage, absolute = args.percentage, args.absolute
    errors: list[str] = []
    if percentage < 0 or percentage > 100:
        errors.append(
            f"{percentage_path}: Invalid value: {percentage}: not in valid range [0, 100]"
        )
    if absolute < 0:
        errors.append(f"{absolute_path}: Invalid value: {absolute}: not in valid range [0, inf)")
    if percentage == 0 and absolute == 0:
        errors.append(
            f"{percentage_path}: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesAbsolute"
        )
        errors.append(
            f"{absolute_path}: Invalid value: 0: "
            "cannot be zero at the same time as minCandidateNodesPercentage"
        )
    return errors


def resolve_default_preemption_args(
    raw: Mapping[str, Any] | DefaultPreemptionArgs | None,
) -> DefaultPreemptionArgs:
    """Decode, default and validate; raises ConfigError with the scheduler's message."""
    args = set_defaults_default_preemption_args(decode_default_preemption_args(raw))
    errors = validate_default_preemption_args(args)
    if errors:
        raise ConfigError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return args


__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "DefaultPreemptionArgs",
    "decode_default_preemption_args",
    "resolve_default_preemption_args",
    "set_defaults_default_preemption_args",
    "validate_default_preemption_args",
]
