"""PodTopologySpread: construction from its args, the system default constraints.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
    TopologySpreadConstraint,
)
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


__all__ = ["NAME", "SYSTEM_DEFAULT_CONSTRAINTS", "PodTopologySpread"]
