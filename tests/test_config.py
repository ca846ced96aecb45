"""KubeSchedulerConfiguration: v1 defaults, plugin-set merging, weights, and clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from topospread.cluster.state import ClusterState
from topospread.errors import ConfigError
from topospread.framework.config import (
    PluginRef,
    PluginSet,
    decode_config,
    default_config,
    merge_plugin_set,
)
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.handle import FrameworkHandle
from topospread.framework.runtime import Framework
from topospread.plugins.registry import IN_TREE


def framework(config: dict[str, Any] | None = None) -> Framework:
    cfg = decode_config(config, "config.yaml") if config else default_config()
    cluster = ClusterState()
    handle = FrameworkHandle(cluster, cluster, DEFAULT_FEATURES)
    return Framework(cfg.profiles[0], IN_TREE, handle, DEFAULT_FEATURES)


def cfg(*profiles: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": list(profiles),
        **top,
    }


def test_the_default_profile_has_upstreams_plugins_order_and_weights() -> None:
    fwk = framework()
    described = fwk.describe()
    assert described["filter"] == [
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ]
    assert described["score"] == [
        "TaintToleration=3",
        "NodeAffinity=2",
        "NodeResourcesFit=1",
        "VolumeBinding=1",
        "PodTopologySpread=2",
        "InterPodAffinity=2",
        "NodeResourcesBalancedAllocation=1",
        "ImageLocality=1",
    ]
    # VolumeBinding serves PreScore as upstream does (it skips: StorageCapacityScoring is off).
    assert described["preScore"][3] == "VolumeBinding"
    # DynamicResources comes just before DefaultPreemption in multiPoint (applyDynamicResources):
    # its PostFilter runs first, and it serves PreEnqueue, Reserve and PreBind too.
    assert described["preEnqueue"] == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert described["preFilter"][-1] == "DynamicResources"
    assert described["postFilter"] == ["DynamicResources", "DefaultPreemption"]
    assert described["reserve"] == ["VolumeBinding", "DynamicResources"]
    assert described["preBind"] == ["VolumeBinding", "DynamicResources"]
    assert fwk.profile_name == "default-scheduler"


def test_a_reconfigured_default_plugin_keeps_its_place_and_takes_the_new_weight() -> None:
    fwk = framework(
        cfg({"plugins": {"multiPoint": {"enabled": [{"name": "PodTopologySpread", "weight": 5}]}}})
    )
    assert fwk.score_plugin_weight["PodTopologySpread"] == 5
    assert fwk.describe()["score"][4] == "PodTopologySpread=5"


def test_disabling_a_plugin_at_one_extension_point_keeps_it_elsewhere() -> None:
    fwk = framework(cfg({"plugins": {"score": {"disabled": [{"name": "PodTopologySpread"}]}}}))
    assert "PodTopologySpread" in fwk.describe()["filter"]
    assert not any(s.startswith("PodTopologySpread") for s in fwk.describe()["score"])


def test_star_disables_every_default_of_an_extension_point() -> None:
    fwk = framework(
        cfg(
            {
                "plugins": {
                    "score": {
                        "disabled": [{"name": "*"}],
                        "enabled": [{"name": "PodTopologySpread", "weight": 1}],
                    }
                }
            }
        )
    )
    assert fwk.describe()["score"] == ["PodTopologySpread=1"]


def test_plugin_args_reach_the_plugin() -> None:
    fwk = framework(
        cfg(
            {
                "pluginConfig": [
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": "topology.kubernetes.io/zone",
                                    "whenUnsatisfiable": "DoNotSchedule",
                                }
                            ],
                        },
                    }
                ]
            }
        )
    )
    plugin = fwk.plugins["PodTopologySpread"]
    assert plugin.system_defaulted is False  # type: ignore[attr-defined]
    assert len(plugin.default_constraints) == 1  # type: ignore[attr-defined]


def test_merge_plugin_set_appends_custom_plugins_after_the_defaults() -> None:
    merged = merge_plugin_set(
        PluginSet(enabled=[PluginRef(name="A"), PluginRef(name="B")]),
        PluginSet(enabled=[PluginRef(name="C"), PluginRef(name="A", weight=7)]),
    )
    assert [(p.name, p.weight) for p in merged.enabled] == [("A", 7), ("B", None), ("C", None)]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            cfg(percentageOfNodesToScore=120),
            "config.yaml: percentageOfNodesToScore: Invalid value: 120: not in valid range [0-100]",
            id="percentage out of range",
        ),
        pytest.param(
            cfg({"schedulerName": "a"}, {"schedulerName": "a"}),
            'config.yaml: profiles[1].schedulerName: Duplicate value: "a"',
            id="two profiles with the same name",
        ),
        pytest.param(
            {**cfg(), "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            'config.yaml: no kind "KubeSchedulerConfiguration" is registered for version '
            '"kubescheduler.config.k8s.io/v1beta3" in scheme '
            '"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme/scheme.go:29"',
            id="an old API version",
        ),
        pytest.param(
            cfg(parallelism="many"),
            "config.yaml: json: cannot unmarshal string into Go struct field "
            "KubeSchedulerConfiguration.parallelism of type int32",
            id="a wrong type",
        ),
    ],
)
def test_invalid_configurations_are_rejected_with_one_clear_message(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        decode_config(config, "config.yaml")
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("config", "message"),
    [
        pytest.param(
            cfg({"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}),
            'FilterPlugin "NoSuchPlugin" does not exist',
            id="an unknown plugin",
        ),
        pytest.param(
            # Not under queueSort: there validateCommonQueueSort refuses two enabled plugins
            # before the framework is built (test_config_queue_sort_and_component_base.py).
            cfg({"plugins": {"filter": {"enabled": [{"name": "NodeName"}, {"name": "NodeName"}]}}}),
            'plugin "NodeName" already registered as "FilterPlugin"',
            id="a plugin enabled twice",
        ),
        pytest.param(
            cfg({"plugins": {"bind": {"disabled": [{"name": "*"}]}}}),
            "at least one bind plugin is needed for profile with scheduler name "
            '"default-scheduler"',
            id="no bind plugin",
        ),
        pytest.param(
            cfg(
                {
                    "pluginConfig": [
                        {
                            "name": "PodTopologySpread",
                            "args": {
                                "defaultingType": "System",
                                "defaultConstraints": [
                                    {
                                        "maxSkew": 1,
                                        "topologyKey": "zone",
                                        "whenUnsatisfiable": "DoNotSchedule",
                                    }
                                ],
                            },
                        }
                    ]
                }
            ),
            "config.yaml: profiles[0].pluginConfig[0].args.defaultingType: "
            'Invalid value: "System": when .defaultConstraints are not empty',
            id="System defaulting with constraints",
        ),
    ],
)
def test_invalid_profiles_fail_when_the_framework_is_built(
    config: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        framework(config)
    assert message in str(err.value)
