"""The volume and dynamic resource plugins' kernels: the path takes no pod with persistent
volume claims, ephemeral volumes or resource claims, so their PreFilter skips for every pod it
decides (a pod for which one does not skip is declined at its shape)."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import SkippingKernel


class VolumeRestrictions(SkippingKernel):
    pass


class NodeVolumeLimits(SkippingKernel):
    pass


class VolumeBinding(SkippingKernel):
    pass


class VolumeZone(SkippingKernel):
    pass


class DynamicResources(SkippingKernel):
    """Its PreFilter writes state before it skips, read by PostFilter, Reserve and PreBind:
    ``FastPath.seed_state`` runs it on the decision's cycle state."""

    seeds_state = True
