"""PodTopologySpread: construction from its args, the system default constraints.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (v1.35)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from topospread.api.spread_validation import decode_pod_topology_spread_args
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    NODE_INCLUSION_POLICY_HONOR,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    Node,
    Pod,
    PodTopologySpreadArgs,
    TopologySpreadConstraint,
)
from topospread.framework.features import Features
from topospread.framework.interface import Handle, QueueingHint
from topospread.framework.nominator import pod_key
from topospread.labels.selector import SelectorError
from topospread.plugins.podtopologyspread.common import (
    NAME,
    InternalConstraint,
    node_labels_match_spread_constraints,
    pod_labels_match_spread_constraints,
)
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

    # Queueing hints: would this cluster event help a pod this plugin rejected? Both answer for
    # the pod's hard constraints only, since only those make Filter reject. A selector that does
    # not parse queues the pod (upstream returns Queue with the error): its next attempt says why.

    def is_schedulable_after_node_change(
        self, pod: Pod, old: Node | None, new: Node | None
    ) -> QueueingHint:
        """Queue when a node carrying every topology key of the pod's constraints is added or
        deleted, starts or stops carrying them, or keeps them but changes a topology value or
        its taints (``old`` is None for an add, ``new`` None for a delete).

        Upstream: isSchedulableAfterNodeChange (plugin.go, v1.35)
        """
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QueueingHint.Queue
        old_matches = old is not None and node_labels_match_spread_constraints(
            old.metadata.labels, constraints
        )
        new_matches = new is not None and node_labels_match_spread_constraints(
            new.metadata.labels, constraints
        )
        if old is None or new is None:
            return QueueingHint.Queue if old_matches or new_matches else QueueingHint.QueueSkip
        if old_matches != new_matches:
            return QueueingHint.Queue
        if new_matches and (
            _topology_values_changed(old, new, constraints) or old.spec.taints != new.spec.taints
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip

    def is_schedulable_after_pod_change(
        self, pod: Pod, old: Pod | None, new: Pod | None
    ) -> QueueingHint:
        """Queue when a bound pod of the same namespace that the pod's selectors match is added
        or deleted, when an update makes a bound pod start or stop matching a selector, or when
        the pending pod itself gains labels that change its own match or, with a
        ``nodeTaintsPolicy: Honor`` constraint, new tolerations.

        Upstream: isSchedulableAfterPodChange (plugin.go, v1.35)
        """
        if any(p is not None and not _involved_in_topology_spreading(p, pod) for p in (old, new)):
            return QueueingHint.QueueSkip
        try:
            constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        except SelectorError:
            return QueueingHint.Queue
        if old is not None and new is not None:
            if (
                _same_pod(new, pod)
                and new.spec.tolerations != old.spec.tolerations
                and any(c.node_taints_policy == NODE_INCLUSION_POLICY_HONOR for c in constraints)
            ):
                return QueueingHint.Queue
            before, after = old.metadata.labels, new.metadata.labels
            if before != after and any(
                c.selector.matches(before) != c.selector.matches(after) for c in constraints
            ):
                return QueueingHint.Queue
            return QueueingHint.QueueSkip
        changed = new if new is not None else old
        if changed is not None and pod_labels_match_spread_constraints(
            constraints, changed.metadata.labels
        ):
            return QueueingHint.Queue
        return QueueingHint.QueueSkip


def _same_pod(a: Pod, b: Pod) -> bool:
    """Upstream compares UIDs, which the API server always sets; inputs here may lack them, so
    two pods without a UID are the same when their namespace and name are."""
    if a.metadata.uid and b.metadata.uid:
        return a.metadata.uid == b.metadata.uid
    return pod_key(a) == pod_key(b)


def _involved_in_topology_spreading(changed: Pod, pending: Pod) -> bool:
    """The pending pod itself, or a bound pod in its namespace (only those are counted).

    Upstream: involvedInTopologySpreading (plugin.go, v1.35)
    """
    return _same_pod(changed, pending) or (
        bool(changed.spec.node_name) and changed.metadata.namespace == pending.metadata.namespace
    )


def _topology_values_changed(
    old: Node, new: Node, constraints: Sequence[InternalConstraint]
) -> bool:
    """Upstream: checkTopologyKeyLabelsChanged (plugin.go, v1.35)."""
    before, after = old.metadata.labels, new.metadata.labels
    return any(before.get(c.topology_key) != after.get(c.topology_key) for c in constraints)


def decode_args(raw: Mapping[str, Any] | None) -> PodTopologySpreadArgs:
    """Decode, default (defaultingType System) and validate PodTopologySpreadArgs.

    Upstream: SetDefaults_PodTopologySpreadArgs (config/v1/defaults.go) and
    ValidatePodTopologySpreadArgs (config/validation/validation_pluginargs.go), v1.35
    """
    return decode_pod_topology_spread_args(raw, "args")


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> PodTopologySpread:
    """The plugin from a profile's raw pluginConfig args. Upstream: New (plugin.go, v1.35)."""
    return PodTopologySpread(decode_args(args), handle, features)


__all__ = ["NAME", "SYSTEM_DEFAULT_CONSTRAINTS", "PodTopologySpread", "decode_args", "new"]
