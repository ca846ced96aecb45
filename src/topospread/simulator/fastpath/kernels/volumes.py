"""The volume and dynamic resource plugins' kernels: the path takes no pod with persistent
volume claims, ephemeral volumes or resource claims, so their PreFilter skips for every pod it
decides (a pod for which one does not skip is declined at its shape)."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import Attempt, SkippingKernel
from topospread.simulator.fastpath.vectors import I64, Rows


class VolumeRestrictions(SkippingKernel):
    pass


class NodeVolumeLimits(SkippingKernel):
    pass


class VolumeBinding(SkippingKernel):
    """Its PreScore skips for every pod (StorageCapacityScoring off, the v1.35 default): it
    scores nothing. Its PreFilter writes an empty state before it skips, which Reserve and
    PreBind read; without it they decide the same (nothing to assume or bind), so the state is
    not seeded."""

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        del attempt, take
        return None


class VolumeZone(SkippingKernel):
    pass


class DynamicResources(SkippingKernel):
    """Its PreFilter writes state before it skips, read by PostFilter, Reserve and PreBind:
    ``FastPath.seed_state`` runs it on the decision's cycle state."""

    seeds_state = True
