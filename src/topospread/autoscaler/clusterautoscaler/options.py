"""cluster-autoscaler's options: upstream's flag names, types and defaults, parsed from a mapping.

Every default below is the flag's default in cluster-autoscaler's ``config/flags/flags.go``
(the flag declarations) and ``config/const.go`` (the ``Default*`` constants they use), as of the
current source (kubernetes-sigs/cluster-autoscaler, ``pkg/config``; formerly
kubernetes/autoscaler's ``cluster-autoscaler/config``). Keys are the flag names
(``scale-down-unneeded-time``); durations are Go duration strings (``10s``, ``1m30s``); a flag
upstream takes repeatedly (``balancing-ignore-label``, ``startup-taint``, ``status-taint``,
``ignore-taint``, ``startup-taint-prefix``) takes one string or a list of them. Two
keys are topospread's own and marked as such: ``seed`` (the random expander's source) and
``priorities`` (the priority expander's config map ``cluster-autoscaler-priority-expander``,
key ``priorities``, as a mapping).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Final

from topospread.autoscaler.clusterautoscaler.taints import TaintConfig, new_taint_config
from topospread.errors import ManifestError

EXPANDER_RANDOM: Final = "random"
EXPANDER_MOST_PODS: Final = "most-pods"
EXPANDER_LEAST_WASTE: Final = "least-waste"
EXPANDER_PRIORITY: Final = "priority"
EXPANDERS: Final = (EXPANDER_RANDOM, EXPANDER_MOST_PODS, EXPANDER_LEAST_WASTE, EXPANDER_PRIORITY)

_UNITS: Final = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string (``time.ParseDuration``): ``0``, ``10s``, ``1h30m``,
    ``1.5m``, an optional sign. Raises ValueError otherwise."""
    s = text.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(text)
    total = 0.0
    pos = 0
    while pos < len(s):
        m = _DURATION_PART.match(s, pos)
        if m is None:
            raise ValueError(text)
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    return sign * total


@dataclass(frozen=True, slots=True)
class ResourceRange:
    """A ``<min>:<max>`` flag (``cores-total``, ``memory-total``)."""

    min: int
    max: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AutoscalingOptions:
    """The options the modelled loop reads. Durations are in seconds.

    Upstream: AutoscalingOptions and NodeGroupAutoscalingOptions (config/autoscaling_options.go)
    """

    scan_interval: float = 10.0  # --scan-interval 10s
    expander: tuple[str, ...] = (EXPANDER_LEAST_WASTE,)  # --expander least-waste
    max_nodes_total: int = 0  # --max-nodes-total 0 (no limit)
    cores_total: ResourceRange = ResourceRange(0, 320000)  # --cores-total 0:320000
    memory_total: ResourceRange = ResourceRange(0, 6400000)  # --memory-total 0:6400000 (GiB)
    scale_down_enabled: bool = True  # --scale-down-enabled true
    scale_down_utilization_threshold: float = 0.5  # DefaultScaleDownUtilizationThreshold
    scale_down_unneeded_time: float = 600.0  # DefaultScaleDownUnneededTime 10m
    scale_down_unready_time: float = 1200.0  # DefaultScaleDownUnreadyTime 20m
    scale_down_unready_enabled: bool = True  # --scale-down-unready-enabled true
    scale_down_delay_after_add: float = 600.0  # --scale-down-delay-after-add 10m
    scale_down_delay_after_delete: float = 0.0  # --scale-down-delay-after-delete 0s
    scale_down_delay_after_failure: float = 180.0  # --scale-down-delay-after-failure 3m
    max_node_provision_time: float = 900.0  # DefaultMaxNodeProvisionTime 15m
    max_node_startup_time: float = 900.0  # --max-node-startup-time 15m (MaxNodeStartupTime)
    max_pod_eviction_time: float = 120.0  # --max-pod-eviction-time 2m
    unremovable_node_recheck_timeout: float = 300.0  # --unremovable-node-recheck-timeout 5m
    balance_similar_node_groups: bool = False  # --balance-similar-node-groups false
    balancing_ignore_label: tuple[str, ...] = ()  # --balancing-ignore-label (repeated)
    skip_nodes_with_local_storage: bool = True  # --skip-nodes-with-local-storage true
    skip_nodes_with_system_pods: bool = True  # --skip-nodes-with-system-pods true
    skip_nodes_with_custom_controller_pods: bool = True  # true
    # --blocking-system-pod-distruption-timeout 1h (upstream's spelling): a kube-system pod
    # without a PodDisruptionBudget blocks a drain only until it is this old.
    blocking_system_pod_distruption_timeout: float = 3600.0
    min_replica_count: int = 0  # --min-replica-count 0
    max_scale_down_parallelism: int = 10  # --max-scale-down-parallelism 10
    max_drain_parallelism: int = 1  # --max-drain-parallelism 1
    new_pod_scale_up_delay: float = 0.0  # --new-pod-scale-up-delay 0s
    expendable_pods_priority_cutoff: int = -10  # --expendable-pods-priority-cutoff -10
    max_nodes_per_scaleup: int = 1000  # --max-nodes-per-scaleup 1000
    max_nodegroup_binpacking_duration: float = 10.0  # --max-nodegroup-binpacking-duration 10s
    ignore_daemonsets_utilization: bool = False  # --ignore-daemonsets-utilization false
    ignore_mirror_pods_utilization: bool = False  # --ignore-mirror-pods-utilization false
    initial_node_group_backoff_duration: float = 300.0  # 5m
    max_node_group_backoff_duration: float = 1800.0  # 30m
    node_group_backoff_reset_timeout: float = 10800.0  # --node-group-backoff-reset-timeout 3h
    max_total_unready_percentage: float = 45.0  # --max-total-unready-percentage 45
    ok_total_unready_count: int = 3  # --ok-total-unready-count 3
    # Taint keys (each flag repeated, as a list here) and key prefixes: a startup taint makes
    # its node not ready; startup and status taints are dropped from template nodes.
    startup_taint: tuple[str, ...] = ()  # --startup-taint
    status_taint: tuple[str, ...] = ()  # --status-taint
    ignore_taint: tuple[str, ...] = ()  # --ignore-taint (deprecated: a startup taint)
    startup_taint_prefix: tuple[str, ...] = ()  # --startup-taint-prefix
    # topospread's own: the random expander's seed and the priority expander's config map.
    seed: int = 0
    priorities: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    # Not a flag: the taint flags' config, made once. Upstream: NewTaintConfig (its
    # StartupTaints are --ignore-taint's keys, then --startup-taint's)
    taint_config: TaintConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        config = new_taint_config(
            (*self.ignore_taint, *self.startup_taint),
            self.status_taint,
            self.startup_taint_prefix,
        )
        object.__setattr__(self, "taint_config", config)

    @property
    def scale_down_delay_after_delete_effective(self) -> float:
        """Upstream: a zero --scale-down-delay-after-delete falls back to --scan-interval."""
        return self.scale_down_delay_after_delete or self.scan_interval


def _flag(attr: str) -> str:
    return attr.replace("_", "-")


_FLAGS: Final = {_flag(f.name): f.name for f in fields(AutoscalingOptions) if f.init}


def _bad(where: str, key: str, value: object, detail: str) -> ManifestError:
    return ManifestError(f"{where}: {key}: Invalid value: {value!r}: {detail}")


def _as_bool(where: str, key: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise _bad(where, key, value, "expected true or false")


def _as_int(where: str, key: str, value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _bad(where, key, value, "expected an integer")


def _as_non_negative_int(where: str, key: str, value: object) -> int:
    n = _as_int(where, key, value)
    if n < 0:
        raise _bad(where, key, value, "must be 0 or more")
    return n


def _as_duration(where: str, key: str, value: object) -> float:
    if isinstance(value, str):
        try:
            seconds = parse_go_duration(value)
        except ValueError:
            pass
        else:
            if seconds < 0:
                raise _bad(where, key, value, "must not be negative")
            return seconds
    raise _bad(where, key, value, 'expected a duration such as "10s", "10m" or "1h30m"')


def _as_fraction(where: str, key: str, value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        f = float(value)
        if math.isfinite(f) and 0.0 <= f <= 1.0:
            return f
    raise _bad(where, key, value, "expected a number between 0 and 1")


def _as_percentage(where: str, key: str, value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        f = float(value)
        if math.isfinite(f) and 0.0 <= f <= 100.0:
            return f
    raise _bad(where, key, value, "expected a percentage between 0 and 100")


def _as_range(where: str, key: str, value: object) -> ResourceRange:
    if isinstance(value, str):
        parts = value.split(":")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            lo, hi = int(parts[0]), int(parts[1])
            if lo <= hi:
                return ResourceRange(lo, hi)
    raise _bad(where, key, value, 'expected "<min>:<max>" with min <= max')


def _as_expander(where: str, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        names = tuple(n.strip() for n in value.split(","))
        unknown = [n for n in names if n not in EXPANDERS]
        if not unknown and names:
            return names
        if unknown:
            detail = f"unknown expander {unknown[0]!r} (known: {', '.join(EXPANDERS)})"
            raise _bad(where, key, value, detail)
    raise _bad(where, key, value, "expected a comma-separated list of expander names")


def _as_strings(expected: str) -> Callable[[str, str, object], tuple[str, ...]]:
    """A repeated string flag: one value, or a list of them (the flag given once each)."""

    def parse(where: str, key: str, value: object) -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        raise _bad(where, key, value, expected)

    return parse


_as_labels = _as_strings("expected a label key or a list of label keys")
_as_taint_keys = _as_strings("expected a taint key or a list of taint keys")
_as_taint_key_prefixes = _as_strings("expected a taint key prefix or a list of them")


def _as_priorities(where: str, key: str, value: object) -> Mapping[int, tuple[str, ...]]:
    """The priority expander's config map: priority -> regular expressions of group names."""
    if not isinstance(value, Mapping):
        raise _bad(where, key, value, "expected a mapping of priority to a list of patterns")
    if not value:
        # Upstream: parsePrioritiesYAMLString's message for an empty configuration.
        detail = (
            "priority configuration in cluster-autoscaler-priority-expander configmap is empty; "
            "please provide valid configuration"
        )
        raise _bad(where, key, value, detail)
    out: dict[int, tuple[str, ...]] = {}
    for prio, patterns in value.items():
        if isinstance(prio, str) and prio.lstrip("-").isdigit():
            prio = int(prio)
        if not isinstance(prio, int) or isinstance(prio, bool):
            raise _bad(where, f"{key}.{prio}", prio, "a priority is an integer")
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise _bad(where, f"{key}.{prio}", patterns, "expected a list of regular expressions")
        for p in patterns:
            try:
                re.compile(p)
            except re.error as err:
                raise _bad(where, f"{key}.{prio}", p, f"not a regular expression: {err}") from err
        out[prio] = tuple(patterns)
    return out


_PARSERS: Final[Mapping[str, Callable[[str, str, object], Any]]] = {
    "scan_interval": _as_duration,
    "expander": _as_expander,
    "max_nodes_total": _as_non_negative_int,
    "cores_total": _as_range,
    "memory_total": _as_range,
    "scale_down_enabled": _as_bool,
    "scale_down_utilization_threshold": _as_fraction,
    "scale_down_unneeded_time": _as_duration,
    "scale_down_unready_time": _as_duration,
    "scale_down_unready_enabled": _as_bool,
    "scale_down_delay_after_add": _as_duration,
    "scale_down_delay_after_delete": _as_duration,
    "scale_down_delay_after_failure": _as_duration,
    "max_node_provision_time": _as_duration,
    "max_node_startup_time": _as_duration,
    "max_pod_eviction_time": _as_duration,
    "unremovable_node_recheck_timeout": _as_duration,
    "balance_similar_node_groups": _as_bool,
    "balancing_ignore_label": _as_labels,
    "skip_nodes_with_local_storage": _as_bool,
    "skip_nodes_with_system_pods": _as_bool,
    "skip_nodes_with_custom_controller_pods": _as_bool,
    "blocking_system_pod_distruption_timeout": _as_duration,
    "min_replica_count": _as_non_negative_int,
    "max_scale_down_parallelism": _as_non_negative_int,
    "max_drain_parallelism": _as_non_negative_int,
    "new_pod_scale_up_delay": _as_duration,
    "expendable_pods_priority_cutoff": _as_int,
    "max_nodes_per_scaleup": _as_non_negative_int,
    "max_nodegroup_binpacking_duration": _as_duration,
    "ignore_daemonsets_utilization": _as_bool,
    "ignore_mirror_pods_utilization": _as_bool,
    "initial_node_group_backoff_duration": _as_duration,
    "max_node_group_backoff_duration": _as_duration,
    "node_group_backoff_reset_timeout": _as_duration,
    "max_total_unready_percentage": _as_percentage,
    "ok_total_unready_count": _as_non_negative_int,
    "startup_taint": _as_taint_keys,
    "status_taint": _as_taint_keys,
    "ignore_taint": _as_taint_keys,
    "startup_taint_prefix": _as_taint_key_prefixes,
    "seed": _as_int,
    "priorities": _as_priorities,
}


def parse_options(data: object, where: str) -> AutoscalingOptions:
    """Options from a mapping of flag names to values; unknown names and bad values raise a
    ManifestError naming ``where`` and the flag (the CLI reports it with exit code 2)."""
    if data is None:
        return AutoscalingOptions()
    if not isinstance(data, Mapping):
        raise ManifestError(f"{where}: expected a mapping of cluster-autoscaler flags")
    values: dict[str, Any] = {}
    for key in data:
        if not isinstance(key, str) or key not in _FLAGS:
            known = ", ".join(sorted(_FLAGS))
            raise ManifestError(
                f"{where}: {key}: unknown cluster-autoscaler option (known: {known})"
            )
        attr = _FLAGS[key]
        values[attr] = _PARSERS[attr](where, key, data[key])
    return AutoscalingOptions(**values)
