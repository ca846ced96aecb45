"""The parts of ValidateKubeSchedulerConfiguration that look at more than one field: the
component-base checks of clientConnection and leaderElection, and the rule that every profile
sorts the one queue the same way.

Each check runs on the configuration as kube-scheduler's v1 defaulting leaves it, so what the
defaults fill in (a zero duration, an empty lock name, a zero burst) is never refused.

Upstream: ValidateClientConnectionConfiguration and ValidateLeaderElectionConfiguration
(k8s.io/component-base/config/validation, v0.35.4), validateCommonQueueSort
(pkg/scheduler/apis/config/validation/validation.go, v1.35).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from topospread.api.field import FieldError, GoJSON, JSONable, Path, go_json, invalid
from topospread.api.go_duration import SECOND, format_duration, parse_duration
from topospread.framework.config_types import (
    ClientConnectionConfiguration,
    LeaderElectionConfiguration,
)

# RecommendedDefaultLeaderElectionConfiguration (component-base config/v1alpha1, v0.35.4).
_DEFAULT_LEASE_DURATION: Final = 15 * SECOND
_DEFAULT_RENEW_DEADLINE: Final = 10 * SECOND
_DEFAULT_RETRY_PERIOD: Final = 2 * SECOND


def validate_client_connection(cc: ClientConnectionConfiguration | None) -> list[FieldError]:
    """Only burst is checked (qps is not); a zero burst is defaulted to 100 first.

    Upstream: ValidateClientConnectionConfiguration (component-base config/validation, v0.35.4)
    """
    burst = (cc.burst if cc is not None else None) or 100
    if burst < 0:
        return [invalid(Path.root("clientConnection", "burst"), burst, "must be non-negative")]
    return []


def _duration(text: str | None, default: int) -> int:
    # A zero (or absent) duration is defaulted: metav1.Duration{} is the zero value.
    nanos = parse_duration(text) if text is not None else 0
    return nanos or default


def validate_leader_election(le: LeaderElectionConfiguration | None) -> list[FieldError]:
    """With leaderElect (default true): each duration positive and leaseDuration longer than
    renewDeadline. The lock, its namespace and name are never empty after defaulting, so their
    Required errors cannot happen here.

    Upstream: ValidateLeaderElectionConfiguration (component-base config/validation, v0.35.4)
    """
    le = le or LeaderElectionConfiguration()
    if le.leader_elect is False:
        return []
    path = Path.root("leaderElection")
    lease = _duration(le.lease_duration, _DEFAULT_LEASE_DURATION)
    renew = _duration(le.renew_deadline, _DEFAULT_RENEW_DEADLINE)
    retry = _duration(le.retry_period, _DEFAULT_RETRY_PERIOD)
    errors: list[FieldError] = []
    # A metav1.Duration prints through its MarshalJSON: a quoted Go duration.
    for name, nanos in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
        if nanos <= 0:
            errors.append(
                invalid(
                    path.child(name), GoJSON(format_duration(nanos)), "must be greater than zero"
                )
            )
    if lease <= renew:
        # Upstream reports renewDeadline's value at leaseDuration's path.
        errors.append(
            invalid(
                path.child("leaseDuration"),
                GoJSON(format_duration(renew)),
                "must be greater than `RenewDeadline`",
            )
        )
    return errors


def _sorted_json(value: Any) -> JSONable:
    # The args of a plugin with no args type stay the raw JSON kube-scheduler's YAML-to-JSON
    # conversion made of them: map keys sorted.
    if isinstance(value, Mapping):
        return {str(k): _sorted_json(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted_json(v) for v in value]
    return value  # type: ignore[no-any-return]


def _plugin_set_json(enabled: Sequence[tuple[str, int]], disabled: Sequence[str]) -> JSONable:
    # The internal config.PluginSet, printed by encoding/json: Go field names, nil lists null.
    return {
        "Enabled": [{"Name": n, "Weight": w} for n, w in enabled] or None,
        "Disabled": [{"Name": n, "Weight": 0} for n in disabled] or None,
    }


QueueSortSet = tuple[tuple[tuple[str, int], ...], tuple[str, ...]]


def validate_common_queue_sort(
    queue_sorts: Sequence[QueueSortSet], plugin_configs: Sequence[Sequence[tuple[str, Any]]]
) -> list[str]:
    """Every profile's queueSort set (enabled names and weights, disabled names, after merging
    with the defaults) equal to the first profile's, one queue sort plugin enabled in the first,
    and the same args for that plugin wherever a profile configures it.

    ``plugin_configs`` holds each profile's (name, raw args) pairs in order. The args compared
    are the raw ones (a queue sort plugin has no registered args type; PrioritySort has no args).
    Upstream: validateCommonQueueSort (validation.go, v1.35)
    """
    errors: list[str] = []
    profiles = Path.root("profiles")
    canon = queue_sorts[0]
    enabled = canon[0]
    name = enabled[0][0] if enabled else ""
    if len(enabled) > 1:
        # "Enabled" capitalised: upstream names the Go field, not the JSON one.
        at = profiles.index(0).child("plugins", "queueSort", "Enabled")
        errors.append(
            str(invalid(at, GoJSON(len(enabled)), "only one queue sort plugin can be enabled"))
        )
    args: JSONable = None
    for pc_name, pc_args in plugin_configs[0]:
        if name and pc_name == name:
            args = _sorted_json(pc_args)
    for i in range(1, len(queue_sorts)):
        if queue_sorts[i] != canon:
            at = profiles.index(i).child("plugins", "queueSort")
            value = GoJSON(_plugin_set_json(*queue_sorts[i]))
            errors.append(str(invalid(at, value, "must be the same for all profiles")))
        for pc_name, pc_args in plugin_configs[i]:
            mine = _sorted_json(pc_args)
            # Compared as the JSON they are (true is not 1 there).
            if pc_name == name and go_json(mine) != go_json(args):
                # No index: upstream's path names the list, not the entry.
                at = profiles.index(i).child("pluginConfig", "args")
                errors.append(
                    str(invalid(at, GoJSON(mine), "queueSort must be the same for all profiles"))
                )
    return errors


__all__ = [
    "QueueSortSet",
    "validate_client_connection",
    "validate_common_queue_sort",
    "validate_leader_election",
]
