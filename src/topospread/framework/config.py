"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), defaulted as kube-scheduler does.

Parsing keeps only what shapes scheduling decisions (profiles, plugins, weights, pluginConfig,
percentageOfNodesToScore, backoff). Defaulting follows the v1 defaults: one profile named
``default-scheduler``; the default plugins enabled through ``multiPoint``; a profile's own
plugin sets merged into the defaults (a re-configured default plugin keeps its place, ``*``
disables every default of an extension point); each plugin's args defaulted by the plugin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.api.decode_errors import explain
from topospread.api.go_errors import go_type_error, json_kind
from topospread.api.spread_validation import decode_pod_topology_spread_args
from topospread.errors import ConfigError
from topospread.framework.config_fields import unknown_args_fields, unknown_config_fields

API_VERSION: Final = "kubescheduler.config.k8s.io/v1"
KIND: Final = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"

# The plugins whose args kube-scheduler's v1 scheme registers a type for (<Name>Args in
# k8s.io/kube-scheduler/config/v1 register.go, v1.35); any other plugin's args stay raw.
TYPED_ARGS_PLUGINS: Final = frozenset(
    {
        "DefaultPreemption",
        "DynamicResources",
        "InterPodAffinity",
        "NodeAffinity",
        "NodeResourcesBalancedAllocation",
        "NodeResourcesFit",
        "PodTopologySpread",
        "VolumeBinding",
    }
)
# apimachinery's SimpleMetaFactory.Interpret reads apiVersion and kind into this anonymous struct
# first, so args that are not a JSON object fail there (as Go's reflect prints the type).
_TYPE_META_STRUCT: Final = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)

# Extension points in the order upstream lists them in v1.Plugins.
EXTENSION_POINTS: Final = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
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
    percentage_of_nodes_to_score: int | None = None
    pod_initial_backoff_seconds: int | None = None
    pod_max_backoff_seconds: int | None = None
    profiles: list[KubeSchedulerProfile] = []


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


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """The defaulted configuration the scheduler runs with."""

    percentage_of_nodes_to_score: int = 0
    pod_initial_backoff_seconds: int = 1
    pod_max_backoff_seconds: int = 10
    parallelism: int = 16
    profiles: Sequence[Profile] = ()

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


def _default_profile(p: KubeSchedulerProfile, index: int) -> Profile:
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
    for i, pc in enumerate(p.plugin_config):
        if pc.name in args:
            raise ConfigError(f'profiles[{index}].pluginConfig[{i}]: Duplicate value: "{pc.name}"')
        if pc.args is not None and not isinstance(pc.args, Mapping):
            _check_untyped_args(pc, f"profiles[{index}].pluginConfig[{i}].args")
            args[pc.name] = None
            continue
        unknown = unknown_args_fields(pc.name, pc.args)
        if unknown:
            raise ConfigError(
                f"profiles[{index}].pluginConfig[{i}].args: {_strict_decoding_error(unknown)}"
            )
        if pc.name == "PodTopologySpread":
            # Validated with the configuration, as ValidateKubeSchedulerConfiguration does, so
            # the error names the file and the args' place in it.
            decode_pod_topology_spread_args(pc.args, f"profiles[{index}].pluginConfig[{i}].args")
        args[pc.name] = pc.args
    return Profile(
        scheduler_name=p.scheduler_name or DEFAULT_SCHEDULER_NAME,
        percentage_of_nodes_to_score=p.percentage_of_nodes_to_score,
        plugins=sets,
        plugin_args=args,
    )


def default_config(config: KubeSchedulerConfiguration | None = None) -> SchedulerConfig:
    """Apply the v1 defaults and the scheduler's validation (its messages, field paths)."""
    cfg = config or KubeSchedulerConfiguration()
    errors: list[str] = []
    if cfg.api_version != API_VERSION:
        errors.append(
            f'apiVersion: Unsupported value: "{cfg.api_version}": supported values: "{API_VERSION}"'
        )
    if cfg.kind != KIND:
        errors.append(f'kind: Unsupported value: "{cfg.kind}": supported values: "{KIND}"')
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
    parallelism = cfg.parallelism if cfg.parallelism is not None else 16
    if parallelism <= 0:
        errors.append(
            _field_error("parallelism", parallelism, "should be an integer greater than 0")
        )
    raw_profiles = cfg.profiles or [KubeSchedulerProfile()]
    profiles = []
    names: set[str] = set()
    for i, raw in enumerate(raw_profiles):
        profile = _default_profile(raw, i)
        if profile.scheduler_name in names:
            errors.append(
                f'profiles[{i}].schedulerName: Duplicate value: "{profile.scheduler_name}"'
            )
        names.add(profile.scheduler_name)
        ppct = profile.percentage_of_nodes_to_score
        if ppct is not None and not 0 <= ppct <= 100:
            errors.append(
                _field_error(
                    f"profiles[{i}].percentageOfNodesToScore", ppct, "not in valid range [0-100]"
                )
            )
        profiles.append(profile)
    if errors:
        raise ConfigError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return SchedulerConfig(
        percentage_of_nodes_to_score=pct,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        parallelism=parallelism,
        profiles=profiles,
    )


def decode_config(data: Any, where: str) -> SchedulerConfig:
    """Parse a KubeSchedulerConfiguration document (already loaded YAML/JSON) and default it."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: a KubeSchedulerConfiguration must be a mapping")
    try:
        cfg = msgspec.convert(data, KubeSchedulerConfiguration)
    except msgspec.ValidationError as err:
        said = go_type_error(err, data, KubeSchedulerConfiguration) or explain(err, data)
        raise ConfigError(f"{where}: {said}") from err
    # Like sigs.k8s.io/json, the type errors above come before the unknown fields.
    unknown = unknown_config_fields(data)
    if unknown:
        raise ConfigError(f"{where}: {_strict_decoding_error(unknown)}")
    try:
        return default_config(cfg)
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from err
