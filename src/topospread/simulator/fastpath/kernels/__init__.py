"""One kernel per upstream plugin, registered by the plugin's name.

Adding a plugin to the fast path means adding its kernel module here; a plugin without one
runs through ``ReferenceKernel`` (its reference plugin, node by node, for that plugin alone).
"""

from __future__ import annotations

from typing import Final

from topospread.simulator.fastpath.kernels.balanced_allocation import (
    NodeResourcesBalancedAllocation,
)
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel
from topospread.simulator.fastpath.kernels.imagelocality import ImageLocality
from topospread.simulator.fastpath.kernels.interpodaffinity import InterPodAffinity
from topospread.simulator.fastpath.kernels.nodeaffinity import NodeAffinity
from topospread.simulator.fastpath.kernels.nodename import NodeName
from topospread.simulator.fastpath.kernels.nodeports import NodePorts
from topospread.simulator.fastpath.kernels.noderesources_fit import NodeResourcesFit
from topospread.simulator.fastpath.kernels.nodeunschedulable import NodeUnschedulable
from topospread.simulator.fastpath.kernels.podtopologyspread import PodTopologySpread
from topospread.simulator.fastpath.kernels.reference import ReferenceKernel
from topospread.simulator.fastpath.kernels.tainttoleration import TaintToleration
from topospread.simulator.fastpath.kernels.volumes import (
    DynamicResources,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeRestrictions,
    VolumeZone,
)

KERNELS: Final[dict[str, type[Kernel]]] = {
    kernel.__name__: kernel
    for kernel in (
        NodeUnschedulable,
        NodeName,
        TaintToleration,
        NodeAffinity,
        NodePorts,
        NodeResourcesFit,
        VolumeRestrictions,
        NodeVolumeLimits,
        VolumeBinding,
        VolumeZone,
        PodTopologySpread,
        InterPodAffinity,
        DynamicResources,
        NodeResourcesBalancedAllocation,
        ImageLocality,
    )
}

__all__ = ["KERNELS", "Attempt", "Kernel", "ReferenceKernel"]
