"""The in-tree plugin registry: every default plugin's name and factory.

Upstream: NewInTreeRegistry (pkg/scheduler/framework/plugins/registry.go, v1.35).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from topospread.api.field import as_path
from topospread.framework.config import ArgsValidator
from topospread.framework.runtime import PluginFactory
from topospread.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    noderesources,
    nodeunschedulable,
    nodevolumelimits,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from topospread.plugins.defaultpreemption.args import (
    decode_default_preemption_args,
    set_defaults_default_preemption_args,
    validate_default_preemption_args,
)
from topospread.plugins.dynamicresources.args import validate_dynamic_resources_args
from topospread.plugins.interpodaffinity.args import (
    decode_inter_pod_affinity_args,
    set_defaults_inter_pod_affinity_args,
    validate_inter_pod_affinity_args,
)
from topospread.plugins.nodeaffinity.args import (
    decode_node_affinity_args,
    validate_node_affinity_args,
)
from topospread.plugins.noderesources.args import (
    decode_node_resources_balanced_allocation_args,
    validate_node_resources_balanced_allocation_args,
)
from topospread.plugins.podtopologyspread import plugin as podtopologyspread
from topospread.plugins.volumebinding.args import validate_volume_binding_args


def in_tree_registry() -> dict[str, PluginFactory]:
    """Name -> factory for every plugin of the default profile."""
    registry: dict[str, PluginFactory] = {
        schedulinggates.NAME: schedulinggates.new,
        queuesort.NAME: queuesort.new,
        nodeunschedulable.NAME: nodeunschedulable.new,
        nodename.NAME: nodename.new,
        tainttoleration.NAME: tainttoleration.new,
        nodeaffinity.NAME: nodeaffinity.new,
        nodeports.NAME: nodeports.new,
        noderesources.NAME: noderesources.new,
        volumerestrictions.NAME: volumerestrictions.new,
        nodevolumelimits.NAME: nodevolumelimits.new,
        volumebinding.NAME: volumebinding.new,
        volumezone.NAME: volumezone.new,
        podtopologyspread.NAME: podtopologyspread.new,
        interpodaffinity.NAME: interpodaffinity.new,
        dynamicresources.NAME: dynamicresources.new,
        defaultpreemption.NAME: defaultpreemption.new,
        noderesources.BALANCED_ALLOCATION_NAME: noderesources.new_balanced_allocation,
        imagelocality.NAME: imagelocality.new,
        defaultbinder.NAME: defaultbinder.new,
    }
    return registry


IN_TREE: Final = in_tree_registry()


def _default_preemption(raw: Mapping[str, Any] | None, path: str) -> list[str]:
    args = set_defaults_default_preemption_args(decode_default_preemption_args(raw))
    return validate_default_preemption_args(args, path)


def _inter_pod_affinity(raw: Mapping[str, Any] | None, path: str) -> list[str]:
    args = set_defaults_inter_pod_affinity_args(decode_inter_pod_affinity_args(raw))
    return validate_inter_pod_affinity_args(args, path)


def _node_affinity(raw: Mapping[str, Any] | None, path: str) -> list[str]:
    return validate_node_affinity_args(decode_node_affinity_args(raw), path)


def _balanced_allocation(raw: Mapping[str, Any] | None, path: str) -> list[str]:
    args = decode_node_resources_balanced_allocation_args(raw)
    return validate_node_resources_balanced_allocation_args(args, as_path(path))


def _volume_binding(raw: Mapping[str, Any] | None, path: str) -> list[str]:
    return [str(e) for e in validate_volume_binding_args(raw, as_path(path))]


def _dynamic_resources(raw: Mapping[str, Any] | None, path: str) -> list[str]:
    return [str(e) for e in validate_dynamic_resources_args(raw, as_path(path))]


# The args kube-scheduler validates with the configuration, each at its place in the file
# (validatePluginConfig, pkg/scheduler/apis/config/validation/validation.go, v1.35; the args
# are defaulted first, as the decoder defaults them). PodTopologySpread's are checked by the
# configuration's decoder itself (api.spread_validation). NodeResourcesFit is not here: upstream
# lists it under "NodeResourcesFitArgs", a name no plugin has, so its args are checked only by
# the plugin's constructor (whose error the framework prefixes with the args' place).
# VolumeBinding's and DynamicResources' args are validated though topospread does not read them
# (timeouts and a scorer it does not model): kube-scheduler refuses what they refuse.
ARGS_VALIDATORS: Final[Mapping[str, ArgsValidator]] = {
    defaultpreemption.NAME: _default_preemption,
    interpodaffinity.NAME: _inter_pod_affinity,
    nodeaffinity.NAME: _node_affinity,
    noderesources.BALANCED_ALLOCATION_NAME: _balanced_allocation,
    volumebinding.NAME: _volume_binding,
    dynamicresources.NAME: _dynamic_resources,
}
