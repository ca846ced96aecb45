"""The volume and dynamic resource plugins' kernels.

For a pod without claims or volumes these plugins read, their PreFilter skips, once per pod
shape (the shape's key holds the pod's volume sources). For a pod with claims (persistent
volume claims, generic ephemeral volumes) or a volume they check (inline disks), the volume
plugins run per attempt (``ClaimKernel``): what they read — claims, PVs, classes, the assume
cache, the volumes of the pods on each node — changes with every bind, and depends on the
pod's own claims, which pods of one shape do not share. Their Filters run only on the nodes
the search visits (``lazy.py``); VolumeBinding's once per distinct value of the node labels
its binder reads, NodeVolumeLimits' screened by the node table's per-node volume counts, each
falling back to the reference plugin node by node where the shortcut does not decide.
DynamicResources stays a skipping kernel: the path declines pods with resource claims.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Final

import numpy as np

from topospread.api.storage import ANN_MIGRATED_PLUGINS, CSINode
from topospread.framework.cycle_state import StateNotFoundError
from topospread.framework.status import Status
from topospread.plugins.nodevolumelimits.csi import volume_limits
from topospread.plugins.volumebinding.binder import PodVolumes
from topospread.plugins.volumebinding.volume_binding import STATE_KEY as BINDING_STATE
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel, SkippingKernel
from topospread.simulator.fastpath.kernels.reference import ReferenceKernel
from topospread.simulator.fastpath.vectors import I32, I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath

# A key the node has no limit for: no count exceeds it.
NO_LIMIT: Final = int(np.iinfo(np.int64).max)
# The attempt's memo: VolumeBinding's rows and, per row, the row whose Filter stood for it.
STOOD_FOR: Final = "VolumeBinding.stood_for"


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
    """Its Filter passes a node, without looking at its pods' volumes one by one, where the
    pod's new volumes fit under each of the node's limits even if every volume of its pods
    that could count (``NodeTable.attachable``) counted against that limit, and none of them
    has a lookup that can fail (``NodeTable.attach_risky``); the reference Filter decides the
    other nodes. NOTE: exact — the screen is the reference Filter's own
    (``_within_limits_at_most``), on counts the table keeps with every bind and unbind; the
    pod's new volumes are the reference's per CSINode migrated-plugins annotation."""

    def __init__(self, path: FastPath, plugin: Any) -> None:
        super().__init__(path, plugin)
        # Per row of the table: its CSINode, its limits (and, per key, as a column), whether
        # it has any, and the code of its CSINode's migrated-plugins annotation; kept while
        # the storage state, its CSINodes and the table's nodes stay the same (``_key``).
        self._key: tuple[Any, ...] | None = None
        self._csis: list[CSINode | None] = []
        self._limits: list[dict[str, int]] = []
        self._limit_columns: dict[str, I64] = {}
        self._has_limits = np.zeros(0, np.bool_)
        self._codes = np.zeros(0, np.intp)

    def _columns(self, storage: Any) -> None:
        """The per-row values, made again when the storage state, its CSINodes or the table's
        nodes changed since they were made."""
        table = self.path.table
        key = (storage.csi_node_generation, table.node_generation, storage, table.names)
        kept = self._key
        if (
            kept is not None
            and kept[:2] == key[:2]
            and all(a is b for a, b in zip(kept[2:], key[2:], strict=True))
        ):
            return
        self._key = key
        self._csis = [storage.csi_node(name) for name in table.names]
        self._limits = [
            volume_limits(info, csi) for info, csi in zip(table.row_infos, self._csis, strict=True)
        ]
        self._limit_columns = {}
        self._has_limits = np.fromiter(map(bool, self._limits), np.bool_, len(self._limits))
        migrated = [
            csi.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "") if csi else None
            for csi in self._csis
        ]
        code = {m: g for g, m in enumerate(dict.fromkeys(migrated))}
        self._codes = np.fromiter((code[m] for m in migrated), np.intp, len(migrated))

    def _limit_column(self, key: str) -> I64:
        column = self._limit_columns.get(key)
        if column is None:
            column = np.fromiter(
                (lim.get(key, NO_LIMIT) for lim in self._limits), np.int64, len(self._limits)
            )
            self._limit_columns[key] = column
        return column

    def filter_rows(self, attempt: Attempt, rows: Rows) -> I32:
        out = np.zeros(len(rows), np.int32)
        pod = attempt.pod
        if not pod.spec.volumes:
            return out
        table = self.path.table
        self._columns(self.plugin.storage())
        codes = self._codes[rows]
        # The pod's new volumes per migrated-plugins annotation (one group on most clusters),
        # each from the CSINode of the group's first row.
        present, first = np.unique(codes, return_index=True)
        has_limits = self._has_limits[rows]
        room = table.attachable[rows]
        risky = table.attach_risky[rows] > 0
        ask = np.zeros(len(rows), np.bool_)
        for code, at in zip(present.tolist(), first.tolist(), strict=True):
            found = self.plugin.new_volumes(attempt.state, pod, self._csis[int(rows[at])])
            in_group = codes == code
            if isinstance(found, Status):
                ask |= in_group  # the reference returns it (or errs)
                continue
            if not found:
                continue
            over = risky.copy()
            per_key: dict[str, int] = {}
            for key in found.values():
                per_key[key] = per_key.get(key, 0) + 1
            for key, n in per_key.items():
                over |= room + n > self._limit_column(key)[rows]
            ask |= in_group & has_limits & over
        if ask.any():
            out[ask] = self.reference.filter_rows(attempt, rows[ask])
        return out


class VolumeBinding(ClaimKernel):
    """Its PreScore skips for every pod (StorageCapacityScoring off, the v1.35 default): it
    scores nothing; for a pod with claims the reference PreScore says so per attempt. For a
    pod without claims its PreFilter writes an empty state before it skips, which Reserve and
    PreBind read; without it they decide the same (nothing to assume or bind), so the state is
    not seeded. For a pod with claims its PreFilter and Filter write the attempt's state (the
    volumes to bind per node), which Reserve and PreBind read."""

    def filter_rows(self, attempt: Attempt, rows: Rows) -> I32:
        """The reference Filter on one node per distinct value of the node labels the binder
        reads (``VolumeBinder.node_label_keys``) and, for bound in-tree PVs, of which of their
        plugins the node's CSINode migrated (``VolumeBinder.csi_node_view``), its status taken
        by every node with the same values. NOTE: exact as the binder's own answers by those
        values are (``_node_view``): node by node where it reads a node's name. The reference Filter
        writes the volumes it chose for each node it passes; only the chosen node's are read
        after the decision (Reserve, Unreserve, PreBind): ``chose`` copies them from the
        node that stood for it."""
        try:
            data = attempt.state.read(BINDING_STATE)
        except StateNotFoundError:
            data = None
        claims = data.claims if data is not None else None
        keys = self.plugin.binder.node_label_keys(claims) if claims is not None else None
        if data is None or keys is None or len(rows) < 2:
            return self.reference.filter_rows(attempt, rows)
        table = self.path.table
        cols = [table.codes(k)[0][rows] for k in keys]
        if claims is not None and claims.csi_plugins:
            binder, names = self.plugin.binder, table.names
            views = [binder.csi_node_view(claims, names[i]) for i in rows.tolist()]
            code = {v: j for j, v in enumerate(dict.fromkeys(views))}
            cols.append(np.fromiter((code[v] for v in views), np.int64, len(rows)))
        if cols:
            stacked = np.stack(cols, axis=1)
            _, first, inverse = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
            inverse = inverse.reshape(-1)
        else:
            first, inverse = np.zeros(1, np.intp), np.zeros(len(rows), np.intp)
        reps = rows[first]
        found = self.reference.filter_rows(attempt, reps)
        if attempt.declined:
            return np.zeros(len(rows), np.int32)
        out: I32 = found[inverse]
        stood_for: list[tuple[Rows, Rows]] = attempt.memo.setdefault(STOOD_FOR, [])
        stood_for.append((rows, reps[inverse]))
        return out

    def chose(self, attempt: Attempt, row: int) -> None:
        data = attempt.state.read(BINDING_STATE) if STOOD_FOR in attempt.memo else None
        if data is None:
            return
        names = self.path.table.names
        chosen = data.pod_volumes_by_node
        if names[row] in chosen:
            return
        for rows, reps in attempt.memo[STOOD_FOR]:
            hit = np.flatnonzero(rows == row)
            if len(hit):
                v = chosen[names[int(reps[hit[0]])]]
                chosen[names[row]] = PodVolumes(list(v.static_bindings), list(v.dynamic_provisions))
                return


class VolumeZone(ClaimKernel):
    pass


class DynamicResources(SkippingKernel):
    """Its PreFilter writes state before it skips, read by PostFilter, Reserve and PreBind:
    ``FastPath.seed_state`` runs it on the decision's cycle state."""

    seeds_state = True
