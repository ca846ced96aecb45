"""The in-tree plugin registry: every default plugin's name and factory.

Upstream: NewInTreeRegistry (pkg/scheduler/framework/plugins/registry.go, v1.35).
"""

from __future__ import annotations

from typing import Final

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
from topospread.plugins.podtopologyspread import plugin as podtopologyspread


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
