"""PodTopologySpread: construction from its args, the system default constraints.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import msgspec

from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
    TopologySpreadConstraint,
)
from topospread.api.validation import validate_pod_topology_spread_args
from topospread.errors import ConfigError
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.plugins.podtopologyspread.common import NAME
from topospread.plugins.podtopologyspread.filtering import Filtering
from topospread.plugins.podtopologyspread.scoring import Scoring

# Applied to pods without constraints of their own when defaultingType is System.
SYSTEM_DEFAULT_CONSTRAINTS: Final[Sequence[TopologySpreadConstraint]] = (
    TopologySpreadConstraint(
        max_skew=3, topology_key=LABEL_HOSTNAME, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
    TopologySpreadConstraint(
        max_skew=5, topology_key=LABEL_TOPOLOGY_ZONE, when_unsatisfiable=SCHEDULE_ANYWAY
    ),
)


class PodTopologySpread(Filtering, Scoring):
    """Spreads pods across topology domains (Filter for DoNotSchedule, Score for ScheduleAnyway).

    ``args`` must already be valid (see ``validate_pod_topology_spread_args``); an empty
    ``defaultingType`` means System, as the scheduler's config defaulting makes it.
    Upstream: New (plugin.go, v1.35)
    """

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle, features: Features) -> None:
        self.handle = handle
        self.features = features
        self.system_defaulted = args.defaulting_type in ("", SYSTEM_DEFAULTING)
        self.default_constraints = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else tuple(args.default_constraints)
        )


def decode_args(raw: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
    """Decode, default (defaultingType System) and validate PodTopologySpreadArgs.

    Upstream: SetDefaults_PodTopologySpreadArgs (config/v1/defaults.go) and
    ValidatePodTopologySpreadArgs (config/validation/validation_pluginargs.go), v1.35
    """
    try:
        args = msgspec.convert(dict(raw or {}), PodTopologySpreadArgs)
    except msgspec.ValidationError as err:
        raise ConfigError(f"PodTopologySpreadArgs: {err}") from err
    if not args.defaulting_type:
        args = msgspec.structs.replace(args, defaulting_type=SYSTEM_DEFAULTING)
    errors = validate_pod_topology_spread_args(args, "args")
    if errors:
        raise ConfigError(str(errors[0]) if len(errors) == 1 else "; ".join(map(str, errors)))
    return args


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> PodTopologySpread:
    """The plugin from a profile's raw pluginConfig args. Upstream: New (plugin.go, v1.35)."""
    return PodTopologySpread(decode_args(args), handle, features)


__all__ = ["NAME", "SYSTEM_DEFAULT_CONSTRAINTS", "PodTopologySpread", "decode_args", "new"]
