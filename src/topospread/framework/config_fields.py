"""The fields kube-scheduler's strict decoder knows in a KubeSchedulerConfiguration and in each
plugin's registered args type, so a misspelled one is refused as upstream refuses it
(``strict decoding error: unknown field "profiles[0].pluginz"``) instead of being dropped.

The tables list upstream's fields, not the ones topospread reads: ``leaderElection``,
``clientConnection`` or VolumeBindingArgs' ``shape`` change nothing here, yet a file
kube-scheduler takes must be taken, and one it refuses refused (``extenders`` are checked here,
then refused as not modelled). Core API types inside args
(a default constraint, an added node affinity) are checked against the API schema ``strict``
holds. Each type maps a field to None (a scalar, or a list or map of scalars), the name of the
type it holds, or ``[name]`` for a list of them.

Upstream: k8s.io/kube-scheduler/config/v1 types.go and types_pluginargs.go (v0.35.4);
k8s.io/component-base/config/v1alpha1 types.go (LeaderElection-, ClientConnection- and
DebuggingConfiguration).
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.goyaml import json_key
from topospread.api.strict import unknown_fields as api_unknown_fields

_Fields = dict[str, str | list[str] | None]

# Extension points in the order upstream lists them in v1.Plugins (multiPoint aside).
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

_TYPE_META: Final[_Fields] = {"apiVersion": None, "kind": None}
_SHAPE_POINT: Final[_Fields] = {"utilization": None, "score": None}
_RESOURCE_SPEC: Final[_Fields] = {"name": None, "weight": None}
_PLUGIN_SET: Final[_Fields] = {"enabled": ["Plugin"], "disabled": ["Plugin"]}

_TYPES: Final[dict[str, _Fields]] = {
    "KubeSchedulerConfiguration": {
        **_TYPE_META,
        "parallelism": None,
        "leaderElection": "LeaderElectionConfiguration",
        "clientConnection": "ClientConnectionConfiguration",
        # DebuggingConfiguration, inlined.
        "enableProfiling": None,
        "enableContentionProfiling": None,
        "percentageOfNodesToScore": None,
        "podInitialBackoffSeconds": None,
        "podMaxBackoffSeconds": None,
        "profiles": ["KubeSchedulerProfile"],
        "extenders": ["Extender"],
        "delayCacheUntilActive": None,
    },
    "LeaderElectionConfiguration": {
        "leaderElect": None,
        "leaseDuration": None,
        "renewDeadline": None,
        "retryPeriod": None,
        "resourceLock": None,
        "resourceName": None,
        "resourceNamespace": None,
    },
    "ClientConnectionConfiguration": {
        "kubeconfig": None,
        "acceptContentTypes": None,
        "contentType": None,
        "qps": None,
        "burst": None,
    },
    "KubeSchedulerProfile": {
        "schedulerName": None,
        "percentageOfNodesToScore": None,
        "plugins": "Plugins",
        "pluginConfig": ["PluginConfig"],
    },
    "Plugins": {point: "PluginSet" for point in (*EXTENSION_POINTS, "multiPoint")},
    "PluginSet": _PLUGIN_SET,
    "Plugin": {"name": None, "weight": None},
    # args is a runtime.RawExtension: decoded afterwards, as the plugin's own args type.
    "PluginConfig": {"name": None, "args": None},
    "Extender": {
        "urlPrefix": None,
        "filterVerb": None,
        "preemptVerb": None,
        "prioritizeVerb": None,
        "weight": None,
        "bindVerb": None,
        "enableHTTPS": None,
        "tlsConfig": "ExtenderTLSConfig",
        "httpTimeout": None,
        "nodeCacheCapable": None,
        "managedResources": ["ExtenderManagedResource"],
        "ignorable": None,
    },
    "ExtenderManagedResource": {"name": None, "ignoredByScheduler": None},
    "ExtenderTLSConfig": {
        "insecure": None,
        "serverName": None,
        "certFile": None,
        "keyFile": None,
        "caFile": None,
        "certData": None,
        "keyData": None,
        "caData": None,
    },
    # The args types register.go registers (the plugin's name + "Args").
    "DefaultPreemptionArgs": {
        **_TYPE_META,
        "minCandidateNodesPercentage": None,
        "minCandidateNodesAbsolute": None,
    },
    "DynamicResourcesArgs": {**_TYPE_META, "filterTimeout": None, "bindingTimeout": None},
    "InterPodAffinityArgs": {
        **_TYPE_META,
        "hardPodAffinityWeight": None,
        "ignorePreferredTermsOfExistingPods": None,
    },
    "NodeAffinityArgs": {**_TYPE_META, "addedAffinity": "V1NodeAffinity"},
    "NodeResourcesBalancedAllocationArgs": {**_TYPE_META, "resources": ["ResourceSpec"]},
    "NodeResourcesFitArgs": {
        **_TYPE_META,
        "ignoredResources": None,
        "ignoredResourceGroups": None,
        "scoringStrategy": "ScoringStrategy",
    },
    "PodTopologySpreadArgs": {
        **_TYPE_META,
        "defaultConstraints": ["V1TopologySpreadConstraint"],
        "defaultingType": None,
    },
    "VolumeBindingArgs": {
        **_TYPE_META,
        "bindTimeoutSeconds": None,
        "shape": ["UtilizationShapePoint"],
    },
    "ScoringStrategy": {
        "type": None,
        "resources": ["ResourceSpec"],
        "requestedToCapacityRatio": "RequestedToCapacityRatioParam",
    },
    "RequestedToCapacityRatioParam": {"shape": ["UtilizationShapePoint"]},
    "ResourceSpec": _RESOURCE_SPEC,
    "UtilizationShapePoint": _SHAPE_POINT,
}


def unknown_config_fields(data: Any) -> list[str]:
    """The paths of a KubeSchedulerConfiguration's fields that v1 does not have, as kube-scheduler's
    strict decoder names them (``profiles[0].plugins.scor``); plugin args are not looked into."""
    found: list[str] = []
    _walk(data, "KubeSchedulerConfiguration", "", found)
    return found


def unknown_args_fields(plugin: str, args: Any) -> list[str]:
    """The paths of the fields of ``plugin``'s args that its args type does not have (none for a
    plugin without a registered args type: its args are not decoded)."""
    found: list[str] = []
    if f"{plugin}Args" in _TYPES:
        _walk(args, f"{plugin}Args", "", found)
    return found


def _walk(data: Any, type_name: str, path: str, found: list[str]) -> None:
    if type_name not in _TYPES:
        # A core API type: the API schema knows its fields.
        found.extend(f"{path}.{u}" if path else u for u in api_unknown_fields(data, type_name))
        return
    if not isinstance(data, dict):
        return  # a mistyped value: the typed decode names it
    fields = _TYPES[type_name]
    for key, value in data.items():
        name = str(json_key(key))
        here = f"{path}.{name}" if path else name
        if name not in fields:
            found.append(here)
            continue
        ref = fields[name]
        if isinstance(ref, str):
            if value is not None:
                _walk(value, ref, here, found)
        elif isinstance(ref, list) and isinstance(value, list):
            for i, item in enumerate(value):
                _walk(item, ref[0], f"{here}[{i}]", found)


__all__ = ["EXTENSION_POINTS", "unknown_args_fields", "unknown_config_fields"]
