"""A scheduler configuration's apiVersion and kind, and each plugin args', as kube-scheduler's
decoder reads them before anything else: a document without a kind or an apiVersion, or of a
version or kind its scheme does not register (``kubescheduler.config.k8s.io/v1beta3``, removed
in v1.29), is refused with the decoder's message, never given defaults.

Upstream: SimpleMetaFactory.Interpret (apimachinery runtime/serializer/json/meta.go),
schema.ParseGroupVersion, Serializer.Decode and gvkWithDefaults (runtime/serializer/json/
json.go), Scheme.New and notRegisteredErr (runtime/scheme.go, runtime/error.go), loadConfig
(cmd/kube-scheduler/app/options/configfile.go) and PluginConfig.decodeNestedObjects
(k8s.io/kube-scheduler/config/v1 types.go), v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from topospread.api.go_errors import json_kind

API_GROUP: Final = "kubescheduler.config.k8s.io"
API_VERSION: Final = f"{API_GROUP}/v1"
KIND: Final = "KubeSchedulerConfiguration"

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
# Every kind the scheme registers for v1 (and for no other version).
_KINDS: Final = frozenset({KIND, *(f"{name}Args" for name in TYPED_ARGS_PLUGINS)})

# The scheme names itself by where it was made (naming.GetNameFromCallsite, the build's GOPATH
# trimmed): the line of ``Scheme = runtime.NewScheme()`` in
# pkg/scheduler/apis/config/scheme/scheme.go. Line 30 while the file imported six packages
# (v1.19-v1.28, as users' reports quote it); 29 since v1beta3's import went (v1.29).
SCHEME_NAME: Final = "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme/scheme.go:29"

# Upstream quotes the whole document in these two messages (the file's text, or the args' JSON);
# here the error's prefix names the file and the place instead, so the message stays one line.
_MISSING_KIND: Final = "Object 'Kind' is missing in '{...}'"
_MISSING_VERSION: Final = "Object 'apiVersion' is missing in '{...}'"


def _interpret(data: Mapping[str, Any]) -> tuple[str, str, str] | str:
    """(group, version, kind) as the decoder reads them first, or its error."""
    meta: dict[str, str] = {}
    for name in ("apiVersion", "kind"):
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            return (
                "couldn't get version/kind; json parse error: json: cannot unmarshal "
                f"{json_kind(value)} into Go struct field .{name} of type string"
            )
        meta[name] = value or ""  # null leaves Go's string empty
    api_version = meta["apiVersion"]
    if api_version.count("/") > 1:
        return f"unexpected GroupVersion string: {api_version}"
    group, _, version = api_version.rpartition("/")
    return group, version, meta["kind"]


def _not_registered(group: str, version: str, kind: str) -> str | None:
    if (group, version) == (API_GROUP, "v1") and kind in _KINDS:
        return None
    shown = f"{group}/{version}" if group else version
    return f'no kind "{kind}" is registered for version "{shown}" in scheme "{SCHEME_NAME}"'


def config_type_meta_error(data: Mapping[str, Any]) -> str | None:
    """Why kube-scheduler's loader would not take ``data`` as a v1 KubeSchedulerConfiguration
    by its apiVersion and kind, in its words (the kind is asked for first), or None."""
    read = _interpret(data)
    if isinstance(read, str):
        return read
    group, version, kind = read
    if not kind:
        return _MISSING_KIND
    if not version:
        return _MISSING_VERSION
    said = _not_registered(group, version, kind)
    if said is None and kind != KIND:
        # loadConfig's own message, its trailing ": " included.
        return f"couldn't decode as KubeSchedulerConfiguration, got {API_VERSION}, Kind={kind}: "
    return said


def args_type_meta_error(plugin: str, args: Mapping[str, Any]) -> str | None:
    """Why the args of ``plugin`` (one with a registered args type) would not decode as its
    args type by their own apiVersion and kind, or None. Both may be left out: the plugin's
    args type supplies them."""
    read = _interpret(args)
    if isinstance(read, str):
        return f"decoding args for plugin {plugin}: {read}"
    group, version, kind = read
    expected = f"{plugin}Args"
    # gvkWithDefaults: what the args leave out, the plugin's args type gives.
    kind = kind or expected
    if not version and (not group or group == API_GROUP):
        group, version = API_GROUP, "v1"
    if not version:
        return f"decoding args for plugin {plugin}: {_MISSING_VERSION}"
    said = _not_registered(group, version, kind)
    if said is not None:
        return f"decoding args for plugin {plugin}: {said}"
    if kind != expected:
        return (
            f"args for plugin {plugin} were not of type {expected}.{API_GROUP}, "
            f"got {kind}.{API_GROUP}"
        )
    return None


__all__ = [
    "API_GROUP",
    "API_VERSION",
    "KIND",
    "SCHEME_NAME",
    "TYPED_ARGS_PLUGINS",
    "args_type_meta_error",
    "config_type_meta_error",
]
