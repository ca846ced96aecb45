"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), defaulted as kube-scheduler does.

Decoding is kube-scheduler's: apiVersion and kind first (config_kind), unknown fields
(config_fields) and every value's type, plugin args included (config_types), then validation.
What is kept is what shapes scheduling decisions (profiles, plugins, weights, pluginConfig,
percentageOfNodesToScore, backoff); of the rest, what changes no decision (leaderElection,
clientConnection, profiling, parallelism, delayCacheUntilActive) is taken, extenders are refused
(they change decisions that cannot be known here) and a backoff the simulator does not model is
warned about. Defaulting follows the v1 defaults: one profile named ``default-scheduler``; the
default plugins enabled through ``multiPoint``; a profile's own plugin sets merged into the
defaults (a re-configured default plugin keeps its place, ``*`` disables every default of an
extension point); each plugin's args defaulted by the plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

import msgspec

from topospread.api.decode_errors import explain
from topospread.api.field import Path, invalid, required
from topospread.api.go_errors import go_first_error, go_type_error, json_kind
from topospread.api.spread_validation import decode_pod_topology_spread_args
from topospread.errors import ConfigError
from topospread.framework.config_fields import (
    EXTENSION_POINTS,
    unknown_args_fields,
    unknown_config_fields,
)
from topospread.framework.config_kind import (
    API_VERSION,
    KIND,
    TYPED_ARGS_PLUGINS,
    args_type_meta_error,
    config_type_meta_error,
)
from topospread.framework.config_types import (
    ARGS_TYPES,
    ClientConnectionConfiguration,
    Extender,
    LeaderElectionConfiguration,
    wire_type_error,
)
from topospread.framework.config_validation import (
    QueueSortSet,
    validate_client_connection,
    validate_common_queue_sort,
    validate_leader_election,
)

DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
_LEASES_ONLY: Final = 'resourceLock value must be "leases"'
_DEFAULT_INITIAL_BACKOFF: Final = 1
_DEFAULT_MAX_BACKOFF: Final = 10
# apimachinery's SimpleMetaFactory.Interpret reads apiVersion and kind into this anonymous struct
# first, so args that are not a JSON object fail there (as Go's reflect prints the type).
_TYPE_META_STRUCT: Final = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)


class _Cfg(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    pass


class PluginRef(_Cfg, frozen=True):
    name: str = ""
    weight: int | None = None


class PluginSet(_Cfg, frozen=True):
    enabled: list[PluginRef] = []
    disabled: list[PluginRef] = []


class Plugins(_Cfg, frozen=True):
    pre_enqueue: PluginSet = PluginSet()
    queue_sort: PluginSet = PluginSet()
    pre_filter: PluginSet = PluginSet()
    filter: PluginSet = PluginSet()
    post_filter: PluginSet = PluginSet()
    pre_score: PluginSet = PluginSet()
    score: PluginSet = PluginSet()
    reserve: PluginSet = PluginSet()
    permit: PluginSet = PluginSet()
    pre_bind: PluginSet = PluginSet()
    bind: PluginSet = PluginSet()
    post_bind: PluginSet = PluginSet()
    multi_point: PluginSet = PluginSet()


class PluginConfig(_Cfg, frozen=True):
    name: str = ""
    # A runtime.RawExtension upstream: any JSON value decodes; the plugin's args type, if it
    # has one, decides afterwards (_plugin_args).
    args: Any = None


class KubeSchedulerProfile(_Cfg, frozen=True):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: int | None = None
    plugins: Plugins | None = None
    plugin_config: list[PluginConfig] = []


class KubeSchedulerConfiguration(_Cfg, frozen=True):
    api_version: str = API_VERSION
    kind: str = KIND
    parallelism: int | None = None
    # Decoded for their types only: they change no decision (see _UNMODELLED).
    leader_election: LeaderElectionConfiguration | None = None
    client_connection: ClientConnectionConfiguration | None = None
    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[KubeSchedulerProfile] | None = None
    extenders: list[Extender] | None = None
    delay_cache_until_active: bool | None = None


# The default plugins of kube-scheduler v1.35 with default feature gates, in order
# (pkg/scheduler/apis/config/v1/default_plugins.go; DynamicResources is on since its GA in 1.34
# and sits just before DefaultPreemption).
DEFAULT_MULTI_POINT: Final[tuple[PluginRef, ...]] = (
    PluginRef(name="SchedulingGates"),
    PluginRef(name="PrioritySort"),
    PluginRef(name="NodeUnschedulable"),
    PluginRef(name="NodeName"),
    PluginRef(name="TaintToleration", weight=3),
    PluginRef(name="NodeAffinity", weight=2),
    PluginRef(name="NodePorts"),
    PluginRef(name="NodeResourcesFit", weight=1),
    PluginRef(name="VolumeRestrictions"),
    PluginRef(name="NodeVolumeLimits"),
    PluginRef(name="VolumeBinding"),
    PluginRef(name="VolumeZone"),
    PluginRef(name="PodTopologySpread", weight=2),
    PluginRef(name="InterPodAffinity", weight=2),
    PluginRef(name="DynamicResources"),
    PluginRef(name="DefaultPreemption"),
    PluginRef(name="NodeResourcesBalancedAllocation", weight=1),
    PluginRef(name="ImageLocality", weight=1),
    PluginRef(name="DefaultBinder"),
)


@dataclass(frozen=True, slots=True)
class Profile:
    """A defaulted profile: merged plugin sets per extension point, and raw args per plugin."""

    scheduler_name: str
    percentage_of_nodes_to_score: int | None
    plugins: Mapping[str, PluginSet]  # extension point (camelCase) or "multiPoint" -> set
    plugin_args: Mapping[str, Mapping[str, Any] | None] = field(default_factory=dict)
    # Where each plugin's args were written (``config.yaml: profiles[0].pluginConfig[1].args``),
    # so that a plugin refusing them at construction names the file and the field.
    args_where: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """The defaulted configuration the scheduler runs with."""

    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = _DEFAULT_INITIAL_BACKOFF
    pod_max_backoff_seconds: int = _DEFAULT_MAX_BACKOFF
    parallelism: int = 16
    profiles: Sequence[Profile] = ()
    # What the configuration sets that the simulation cannot honour, said once on stderr.
    warnings: tuple[str, ...] = ()

    def profile(self, scheduler_name: str) -> Profile | None:
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        return None


def merge_plugin_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """Merge a profile's plugin set into the defaults.

    A default plugin that the profile re-enables keeps its place with the profile's settings;
    other custom plugins are appended; ``*`` in disabled drops every default.
    Upstream: mergePluginSet (pkg/scheduler/apis/config/v1/default_plugins.go, v1.35)
    """
    disabled = [PluginRef(name=p.name) for p in custom.disabled]
    disabled += [PluginRef(name=p.name) for p in default.disabled]
    disabled_names = {p.name for p in disabled}
    custom_index = {p.name: i for i, p in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled_names:
        for plugin in default.enabled:
            if plugin.name in disabled_names:
                continue
            i = custom_index.get(plugin.name)
            if i is not None:
                plugin = custom.enabled[i]
                replaced.add(i)
            enabled.append(plugin)
    enabled += [p for i, p in enumerate(custom.enabled) if i not in replaced]
    return PluginSet(enabled=enabled, disabled=disabled)


def _field_error(path: str, value: object, detail: str) -> str:
    return f"{path}: Invalid value: {value}: {detail}"


def _strict_decoding_error(unknown: Sequence[str]) -> str:
    """Upstream: runtime.NewStrictDecodingError (apimachinery runtime/error.go)"""
    return "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)


def _check_untyped_args(pc: PluginConfig, path: str) -> None:
    """Args that are not a mapping: an error for a plugin with an args type, else left unread.

    Upstream: PluginConfig.decodeNestedObjects (k8s.io/kube-scheduler/config/v1 types.go) and
    SimpleMetaFactory.Interpret (apimachinery runtime/serializer/json/meta.go), v1.35
    """
    if pc.name not in TYPED_ARGS_PLUGINS:
        return
    raise ConfigError(
        f"{path}: decoding args for plugin {pc.name}: couldn't get version/kind; json parse "
        f"error: json: cannot unmarshal {json_kind(pc.args)} into Go value of type "
        f"{_TYPE_META_STRUCT}"
    )


# A plugin's validation of its (raw) args at ``path``: kube-scheduler's field errors, as
# ValidateKubeSchedulerConfiguration finds them (validatePluginConfig). The plugins' own, given
# by the layer above (plugins.registry.ARGS_VALIDATORS).
ArgsValidator: TypeAlias = Callable[[Mapping[str, Any] | None, str], Sequence[str]]


def _check_typed_args(plugin: str, raw: Mapping[str, Any] | None, path: str) -> None:
    """The args of a plugin with a registered args type, decoded as kube-scheduler decodes
    them: their apiVersion and kind, then unknown fields, then each value's type.

    Upstream: PluginConfig.decodeNestedObjects (k8s.io/kube-scheduler/config/v1 types.go, v1.35)
    """
    said = args_type_meta_error(plugin, raw or {})
    if said is not None:
        raise ConfigError(f"{path}: {said}")
    unknown = unknown_args_fields(plugin, raw)
    if unknown:
        raise ConfigError(f"{path}: {_strict_decoding_error(unknown)}")
    wire = ARGS_TYPES.get(plugin)
    said = None if wire is None or raw is None else wire_type_error(raw, wire)
    if said is not None:
        raise ConfigError(f"{path}: decoding args for plugin {plugin}: {said}")


def _default_profile(
    p: KubeSchedulerProfile,
    scheduler_name: str,
    index: int,
    validators: Mapping[str, ArgsValidator],
    errors: list[str],
    source: str,
) -> Profile:
    custom = p.plugins or Plugins()
    sets: dict[str, PluginSet] = {
        "multiPoint": merge_plugin_set(
            PluginSet(enabled=list(DEFAULT_MULTI_POINT)), custom.multi_point
        )
    }
    for point in EXTENSION_POINTS:
        attr = "".join("_" + c.lower() if c.isupper() else c for c in point)
        sets[point] = merge_plugin_set(PluginSet(), getattr(custom, attr))
    args: dict[str, Mapping[str, Any] | None] = {}
    args_where: dict[str, str] = {}
    for i, pc in enumerate(p.plugin_config):
        args_path = f"profiles[{index}].pluginConfig[{i}].args"
        if source:
            args_where[pc.name] = f"{source}: {args_path}"
        if pc.name in args:
            raise ConfigError(f'profiles[{index}].pluginConfig[{i}]: Duplicate value: "{pc.name}"')
        if pc.args is not None and not isinstance(pc.args, Mapping):
            _check_untyped_args(pc, args_path)
            args[pc.name] = None
            continue
        if pc.name in TYPED_ARGS_PLUGINS:
            _check_typed_args(pc.name, pc.args, args_path)
        if pc.name == "PodTopologySpread":
            # Validated with the configuration, as ValidateKubeSchedulerConfiguration does, so
            # the error names the file and the args' place in it.
            decode_pod_topology_spread_args(pc.args, args_path)
        elif pc.name in validators:
            errors.extend(validators[pc.name](pc.args, args_path))
        args[pc.name] = pc.args
    return Profile(
        scheduler_name=scheduler_name,
        percentage_of_nodes_to_score=p.percentage_of_nodes_to_score,
        plugins=sets,
        plugin_args=args,
        args_where=args_where,
    )


def default_config(
    config: KubeSchedulerConfiguration | None = None,
    validators: Mapping[str, ArgsValidator] | None = None,
    source: str = "",
) -> SchedulerConfig:
    """Apply the v1 defaults and the scheduler's validation (its messages, field paths);
    ``validators`` check the plugins' args, ``source`` names where they were written."""
    cfg = config or KubeSchedulerConfiguration()
    # In ValidateKubeSchedulerConfiguration's order (validation.go, v1.35), one aggregate.
    errors: list[str] = []
    if cfg.api_version != API_VERSION:
        errors.append(
            f'apiVersion: Unsupported value: "{cfg.api_version}": supported values: "{API_VERSION}"'
        )
    if cfg.kind != KIND:
        errors.append(f'kind: Unsupported value: "{cfg.kind}": supported values: "{KIND}"')
    errors.extend(str(e) for e in validate_client_connection(cfg.client_connection))
    errors.extend(str(e) for e in validate_leader_election(cfg.leader_election))
    election = cfg.leader_election or LeaderElectionConfiguration()
    lock = election.resource_lock or "leases"
    if election.leader_elect is not False and lock != "leases":
        # Upstream's own check after component-base's (leaderElect defaults to true).
        errors.append(str(invalid(Path.root("leaderElection", "resourceLock"), lock, _LEASES_ONLY)))
    parallelism = cfg.parallelism if cfg.parallelism is not None else 16
    if parallelism <= 0:
        errors.append(
            _field_error("parallelism", parallelism, "should be an integer value greater than zero")
        )
    raw_profiles = cfg.profiles or [KubeSchedulerProfile()]
    profiles = []
    names: set[str] = set()
    for i, raw in enumerate(raw_profiles):
        # The default name is given only to a lone profile (SetDefaults_KubeSchedulerConfiguration);
        # with several, each must name its scheduler.
        name = raw.scheduler_name
        if name is None and len(raw_profiles) == 1:
            name = DEFAULT_SCHEDULER_NAME
        if not name:
            errors.append(str(required(Path.root("profiles").index(i).child("schedulerName"))))
        ppct = raw.percentage_of_nodes_to_score
        if ppct is not None and not 0 <= ppct <= 100:
            errors.append(
                _field_error(
                    f"profiles[{i}].percentageOfNodesToScore", ppct, "not in valid range [0-100]"
                )
            )
        profile = _default_profile(raw, name or "", i, validators or {}, errors, source)
        if profile.scheduler_name in names:
            errors.append(
                f'profiles[{i}].schedulerName: Duplicate value: "{profile.scheduler_name}"'
            )
        names.add(profile.scheduler_name)
        profiles.append(profile)
    errors.extend(
        validate_common_queue_sort(
            [_queue_sort_set(p.plugins["queueSort"]) for p in profiles],
            [[(pc.name, pc.args) for pc in raw.plugin_config] for raw in raw_profiles],
        )
    )
    pct = cfg.percentage_of_nodes_to_score if cfg.percentage_of_nodes_to_score is not None else 0
    if not 0 <= pct <= 100:
        errors.append(_field_error("percentageOfNodesToScore", pct, "not in valid range [0-100]"))
    initial = cfg.pod_initial_backoff_seconds if cfg.pod_initial_backoff_seconds is not None else 1
    maximum = cfg.pod_max_backoff_seconds if cfg.pod_max_backoff_seconds is not None else 10
    if initial <= 0:
        errors.append(_field_error("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        errors.append(
            _field_error(
                "podMaxBackoffSeconds",
                maximum,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    if errors:
        raise ConfigError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return SchedulerConfig(
        percentage_of_nodes_to_score=pct,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        parallelism=parallelism,
        profiles=profiles,
        warnings=_backoff_warnings(initial, maximum),
    )


def _queue_sort_set(merged: PluginSet) -> QueueSortSet:
    # As the internal config.PluginSet holds it: a weight left out is 0.
    return (
        tuple((p.name, p.weight or 0) for p in merged.enabled),
        tuple(p.name for p in merged.disabled),
    )


def _backoff_warnings(initial: int, maximum: int) -> tuple[str, ...]:
    """A backoff other than v1's default decides when a failed pod is tried again, which the
    simulator's queue (no backoff queue, logical time) does not model: said, not refused, as
    the placements themselves are the scheduler's."""
    if (initial, maximum) == (_DEFAULT_INITIAL_BACKOFF, _DEFAULT_MAX_BACKOFF):
        return ()
    return (
        f"podInitialBackoffSeconds {initial}, podMaxBackoffSeconds {maximum}: not modelled (the "
        "simulated queue has no backoff: a pod a cluster event may help is tried again at once)",
    )


def decode_config(
    data: Any, where: str, validators: Mapping[str, ArgsValidator] | None = None
) -> SchedulerConfig:
    """Parse a KubeSchedulerConfiguration document (already loaded YAML/JSON) and default it;
    ``validators``: the plugins' args checks, run as kube-scheduler runs them on loading."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: a KubeSchedulerConfiguration must be a mapping")
    said = config_type_meta_error(data)
    if said is not None:
        raise ConfigError(f"{where}: {said}")
    try:
        cfg = msgspec.convert(data, KubeSchedulerConfiguration)
    except msgspec.ValidationError as err:
        said = go_type_error(err, data, KubeSchedulerConfiguration) or explain(err, data)
        raise ConfigError(f"{where}: {said}") from err
    # What msgspec takes and Go's decoder does not: a duration Go cannot parse.
    said = go_first_error(data, KubeSchedulerConfiguration)
    if said is not None:
        raise ConfigError(f"{where}: {said}")
    # Like sigs.k8s.io/json, the type errors above come before the unknown fields.
    unknown = unknown_config_fields(data)
    if unknown:
        raise ConfigError(f"{where}: {_strict_decoding_error(unknown)}")
    try:
        config = default_config(cfg, validators, where)
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from err
    if cfg.extenders:
        # Refused, not dropped: each extender is an HTTP service whose filter, prioritize,
        # preempt and bind answers change the decisions, and they cannot be known here.
        raise ConfigError(
            f"{where}: extenders: Forbidden: scheduler extenders are not modelled (an extender "
            "is an HTTP service whose filter, prioritize, preempt and bind answers topospread "
            "cannot know); remove them to see what the scheduler decides without them"
        )
    return config
