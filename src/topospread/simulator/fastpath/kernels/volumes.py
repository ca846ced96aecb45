"""The volume and dynamic resource plugins' kernels.

For a pod without claims or volumes these plugins read, their PreFilter skips, once per pod
shape (the shape's key holds the pod's volume sources). For a pod with claims (persistent
volume claims, generic ephemeral volumes) or a volume they check (inline disks), the volume
plugins run per attempt through their reference plugins (``ClaimKernel``): what they read —
claims, PVs, classes, the assume cache, the volumes of the pods on each node — changes with
every bind, and depends on the pod's own claims, which pods of one shape do not share.
DynamicResources stays a skipping kernel: the path declines pods with resource claims.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from topospread.simulator.fastpath.kernels.base import Attempt, Kernel, SkippingKernel
from topospread.simulator.fastpath.kernels.reference import ReferenceKernel
from topospread.simulator.fastpath.vectors import I32, I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath


class ClaimKernel(Kernel):
    """A volume plugin: skipped at the shape for pods whose PreFilter skips there; for the
    shapes that list it in ``Static.per_attempt``, its reference plugin per attempt
    (``ReferenceKernel``), every other plugin staying vectorised.

    NOTE: nominated pods count in its verdicts (NodeVolumeLimits counts their volumes,
    VolumeRestrictions' AddPod counts their ReadWriteOncePod claims): the path never counts
    nominated pods in the vectors for a pod with claims (``FastPath.counts_nominated``).
    """

    per_pod: ClassVar[bool] = True
    reads_nominated: ClassVar[bool] = True

    def __init__(self, path: FastPath, plugin: Any) -> None:
        super().__init__(path, plugin)
        self.reference = ReferenceKernel(path, plugin)

    def _in_play(self, attempt: Attempt) -> bool:
        return self.name in attempt.sig.static.per_attempt

    def pre_filter(self, attempt: Attempt) -> None:
        if self._in_play(attempt):
            self.reference.pre_filter(attempt)

    def filter(self, attempt: Attempt) -> I32 | None:
        return self.reference.filter(attempt) if self._in_play(attempt) else None

    def defers(self, attempt: Attempt) -> bool:
        """NOTE: its Filter runs node by node in Python, as the reference's does: only on the
        nodes the search visits, as the reference runs it (``lazy.py``)."""
        return self._in_play(attempt) and self.name not in attempt.state.skip_filter_plugins

    def filter_rows(self, attempt: Attempt, rows: Rows) -> I32:
        return self.reference.filter_rows(attempt, rows)

    def pre_score(self, attempt: Attempt, take: Rows) -> None:
        if self._in_play(attempt):
            self.reference.pre_score(attempt, take)

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        return self.reference.score(attempt, take) if self._in_play(attempt) else None


class VolumeRestrictions(ClaimKernel):
    pass


class NodeVolumeLimits(ClaimKernel):
    pass


class VolumeBinding(ClaimKernel):
    """Its PreScore skips for every pod (StorageCapacityScoring off, the v1.35 default): it
    scores nothing; for a pod with claims the reference PreScore says so per attempt. For a
    pod without claims its PreFilter writes an empty state before it skips, which Reserve and
    PreBind read; without it they decide the same (nothing to assume or bind), so the state is
    not seeded. For a pod with claims its PreFilter and Filter write the attempt's state (the
    volumes to bind per node), which Reserve and PreBind read."""


class VolumeZone(ClaimKernel):
    pass


class DynamicResources(SkippingKernel):
    """Its PreFilter writes state before it skips, read by PostFilter, Reserve and PreBind:
    ``FastPath.seed_state`` runs it on the decision's cycle state."""

    seeds_state = True
