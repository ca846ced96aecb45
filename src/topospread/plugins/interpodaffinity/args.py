"""InterPodAffinityArgs: their v1 defaulting and the scheduler's validation of them.

Upstream: InterPodAffinityArgs (pkg/scheduler/apis/config/types_pluginargs.go),
SetDefaults_InterPodAffinityArgs (pkg/scheduler/apis/config/v1/defaults.go) and
ValidateInterPodAffinityArgs (pkg/scheduler/apis/config/validation/validation_pluginargs.go),
v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from topospread.errors import ConfigError

# v1.DefaultHardPodAffinitySymmetricWeight
DEFAULT_HARD_POD_AFFINITY_WEIGHT: Final = 1
MIN_HARD_POD_AFFINITY_WEIGHT: Final = 0
MAX_HARD_POD_AFFINITY_WEIGHT: Final = 100


class InterPodAffinityArgs(
    msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True
):
    """The args as written in a profile's pluginConfig (apiVersion and kind are ignored).

    ``hardPodAffinityWeight`` scores a node for every existing pod whose *required* affinity
    term the incoming pod matches (the symmetric weight); ``None`` until defaulted to 1.
    ``ignorePreferredTermsOfExistingPods`` skips scoring when the incoming pod has no preferred
    terms of its own.
    """

    hard_pod_affinity_weight: int | None = None
    ignore_preferred_terms_of_existing_pods: bool = False

    @property
    def weight(self) -> int:
        """The hard pod affinity weight after defaulting."""
        w = self.hard_pod_affinity_weight
        return DEFAULT_HARD_POD_AFFINITY_WEIGHT if w is None else w


def decode_inter_pod_affinity_args(
    raw: Mapping[str, Any] | InterPodAffinityArgs | None,
) -> InterPodAffinityArgs:
    """The args of a profile's pluginConfig entry, as written (not yet defaulted)."""
    if raw is None:
        return InterPodAffinityArgs()
    if isinstance(raw, InterPodAffinityArgs):
        return raw
    try:
        return msgspec.convert(dict(raw), InterPodAffinityArgs)
    except msgspec.ValidationError as err:
        raise ConfigError(f"decoding InterPodAffinityArgs: {err}") from err


def set_defaults_inter_pod_affinity_args(args: InterPodAffinityArgs) -> InterPodAffinityArgs:
    """hardPodAffinityWeight defaults to 1 when unset (an explicit 0 stays 0).

    Upstream: SetDefaults_InterPodAffinityArgs (pkg/scheduler/apis/config/v1/defaults.go, v1.35)
    """
    if args.hard_pod_affinity_weight is None:
        return msgspec.structs.replace(
            args, hard_pod_affinity_weight=DEFAULT_HARD_POD_AFFINITY_WEIGHT
        )
    return args


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def validate_inter_pod_affinity_args(args: InterPodAffinityArgs, path: str = "") -> list[str]:
    """Field errors of the (defaulted) args: the weight must lie in [0, 100].

    ``path`` is where the args sit (``profiles[0].pluginConfig[1].args`` when a whole
    configuration is validated; empty when the plugin validates its own args).
    Upstream: ValidateInterPodAffinityArgs and validateHardPodAffinityWeight
    (validation_pluginargs.go, v1.35)
    """
    w = args.weight
    if w < MIN_HARD_POD_AFFINITY_WEIGHT or w > MAX_HARD_POD_AFFINITY_WEIGHT:
        return [
            f"{_child(path, 'hardPodAffinityWeight')}: Invalid value: {w}: "
            f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
        ]
    return []


def resolve_inter_pod_affinity_args(
    raw: Mapping[str, Any] | InterPodAffinityArgs | None,
) -> InterPodAffinityArgs:
    """Decode, default and validate; raises ConfigError with the scheduler's message.

    Upstream: New (plugin.go, v1.35) validating its defaulted args
    """
    args = set_defaults_inter_pod_affinity_args(decode_inter_pod_affinity_args(raw))
    errors = validate_inter_pod_affinity_args(args)
    if errors:
        raise ConfigError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return args
