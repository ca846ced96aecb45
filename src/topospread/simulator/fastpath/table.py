"""The node table: one row per node in node-tree order, the resource columns the kernels read,
kept current on every bind and unbind and carried over rebuilds.

It listens to the cluster state through its FastPath: a bind changes one row; nodes coming or
going mark it stale, and it is rebuilt before its next use (with the cluster index, whose rows
are the same), carrying over the rows of nodes that did not change and counting only the
others. tests/test_fastpath.py checks the table against one built from scratch after random
node and pod churn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np

from topospread.api.types import Node, Pod, Taint
from topospread.framework.features import Features
from topospread.framework.nominator import pod_priority
from topospread.framework.types import NodeInfo
from topospread.plugins.noderesources.resource_helpers import (
    allocatable_resource,
    calculate_resource,
)
from topospread.plugins.nodevolumelimits.csi import attachable_at_most
from topospread.simulator.fastpath.vectors import I32, I64, MAX_INT32, B, Rows

if TYPE_CHECKING:
    from topospread.cluster.state import ClusterState

# The node table's per-node int64 columns carried over a rebuild (min_priority aside: its
# fill is not 0; the free_* columns are derived).
ROW_COLUMNS: Final = (
    "alloc_cpu",
    "alloc_mem",
    "alloc_eph",
    "alloc_pods",
    "req_cpu",
    "req_mem",
    "req_eph",
    "pod_count",
    "nz_cpu",
    "nz_mem",
    "attachable",
    "attach_risky",
)
# How long the log of changed rows grows before it restarts.
CHANGED_ROWS_KEPT: Final = 1 << 16
# How many distinct taint sets the table numbers before it numbers its rows' afresh.
TAINT_SETS_KEPT: Final = 1 << 12

Carry = Callable[[I64], I64]


@dataclass(slots=True)
class Requests:
    """The requests of some pods (one priority's bound or nominated pods) summed per node."""

    cpu: I64
    mem: I64
    eph: I64
    pods: I64
    with_affinity: int = 0  # how many carry pod (anti-)affinity

    @classmethod
    def zeros(cls, n: int) -> Requests:
        cpu, mem, eph, pods = (np.zeros(n, np.int64) for _ in range(4))
        return cls(cpu, mem, eph, pods)

    def carried(self, carry: Carry) -> Requests:
        return Requests(carry(self.cpu), carry(self.mem), carry(self.eph), carry(self.pods))


@dataclass(slots=True)
class Rebuilt:
    """What a rebuild carried: the rows kept, their rows in the old table, the fresh rows."""

    infos: Sequence[NodeInfo]
    kept: Rows
    from_rows: Rows
    fresh: list[int]
    old_images: bool


class NodeTable:
    """The nodes' resource columns, in node-tree order, and their topology domains."""

    alloc_cpu: I64
    alloc_mem: I64
    alloc_eph: I64
    alloc_pods: I64
    req_cpu: I64
    req_mem: I64
    req_eph: I64
    pod_count: I64
    nz_cpu: I64
    nz_mem: I64
    # Per node, its pods' volumes that could count against a volume limit, and those whose
    # lookup can fail (``attachable_at_most``): NodeVolumeLimits' kernel screens with them.
    attachable: I64
    attach_risky: I64
    min_priority: I64  # the lowest priority among each node's pods
    free_cpu: I64  # alloc - req, kept with each bind
    free_mem: I64
    free_eph: I64
    free_pods: I64  # alloc_pods - pod_count - 1 >= 0 means room

    def __init__(self, cluster: ClusterState, features: Features) -> None:
        self.cluster = cluster
        self.features = features
        # Bound pods' requests per priority, per node: what preemption can take from each node
        # for a pod of a higher priority (``preemption_screen``).
        self.bound: dict[int, Requests] = {}
        self.stale = False  # nodes came or went: the table is rebuilt before its next use
        # The rows of the table as last built (NodeInfo and Node objects), and the nodes whose
        # pods changed while the table was stale: a rebuild recounts only those rows and the
        # rows of nodes that came or changed.
        self.row_infos: list[NodeInfo] = []
        self.row_nodes: list[Node] = []
        # Counts the changes of ``row_nodes`` (a rebuild, a node changed in place): a reader
        # that keeps values per row's Node keeps them while it stays the same.
        self.node_generation = 0
        self.dirty: set[str] = set()
        self.images = False  # whether any node reports images
        # The rows whose resources changed, in order (the shapes' kept values replay it).
        self.changed_rows: list[int] = []
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self.all_alloc = False
        self.double_order: Rows = np.zeros(0, np.intp)
        for column in (*ROW_COLUMNS, "min_priority"):
            setattr(self, column, np.zeros(0, np.int64))
        # Each row's taint set, numbered (``taint_sets[k]``: set k and a node that has it):
        # verdicts that read only a node's taints are taken once per set, not once per node.
        self.taint_set: I32 = np.zeros(0, np.int32)
        self.taint_sets: list[tuple[tuple[Taint, ...], Node]] = []
        self._taint_numbers: dict[tuple[Taint, ...], int] = {}
        self._forget_domains()

    def _forget_domains(self) -> None:
        self._single_valued: dict[str, bool] = {}
        self._every_node_has: dict[str, bool] = {}
        self._has: dict[str, B] = {}  # per key, which nodes have it (read only)
        self.sums_memo: dict[tuple[str, int], tuple[I64, tuple[B, I64, int]]] = {}

    def rebuild(self) -> Rebuilt:
        """Build the table for the cluster's nodes in node-tree order. Rows of nodes the last
        table had, unchanged (the same NodeInfo, Node and pods), are carried over with
        everything counted on them, and only the other rows are computed, so that a node's
        loss or return costs its own rows, not a recount of every pod (a sweep's node
        failures)."""
        self.stale = False
        self.changed_rows = []
        infos = list(self.cluster.list())
        n = len(infos)
        old_index, old_infos, old_nodes = self.index, self.row_infos, self.row_nodes
        src = np.full(n, -1, np.int64)  # each row's row in the last table (-1: none)
        for i, info in enumerate(infos):
            j = old_index.get(info.name)
            if (
                j is not None
                and old_infos[j] is info
                and old_nodes[j] is info.node
                and info.name not in self.dirty
            ):
                src[i] = j
        self.dirty.clear()
        kept = np.flatnonzero(src >= 0)
        fresh = np.flatnonzero(src < 0).tolist()
        from_rows = src[kept]

        def carry(old: I64, fill: int = 0) -> I64:
            new = np.full(n, fill, np.int64)
            new[kept] = old[from_rows]
            return new

        self.names = [i.name for i in infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        self.row_infos = infos
        self.row_nodes = [info.node for info in infos]
        self.node_generation += 1
        old_images, self.images = self.images, any(info.node.status.images for info in infos)
        for column in ROW_COLUMNS:
            setattr(self, column, carry(getattr(self, column)))
        self.bound = {p: level.carried(carry) for p, level in self.bound.items()}
        self.min_priority = carry(self.min_priority, MAX_INT32 + 1)
        # Derived below; account() keeps them as it counts the fresh rows' pods.
        self.free_cpu, self.free_mem, self.free_eph, self.free_pods = (
            np.zeros(n, np.int64) for _ in range(4)
        )
        self._forget_domains()
        old_sets = self.taint_set
        self.taint_set = np.zeros(n, np.int32)
        if len(self.taint_sets) > TAINT_SETS_KEPT:
            self.taint_sets, self._taint_numbers = [], {}
            renumber = list(range(n))
        else:
            self.taint_set[kept] = old_sets[from_rows]
            renumber = fresh
        for i in renumber:
            self.taint_set[i] = self._taint_number(infos[i].node)
        for i in fresh:
            a = allocatable_resource(infos[i].node)
            self.alloc_cpu[i] = a.milli_cpu
            self.alloc_mem[i] = a.memory
            self.alloc_eph[i] = a.ephemeral_storage
            self.alloc_pods[i] = a.allowed_pod_number
        self._account_all(infos, fresh)
        self.free_cpu = self.alloc_cpu - self.req_cpu
        self.free_mem = self.alloc_mem - self.req_mem
        self.free_eph = self.alloc_eph - self.req_eph
        self.free_pods = self.alloc_pods - self.pod_count  # - 1 >= 0 means room
        # Two copies of 0..n-1: the visiting order from any start is a slice, not a new array.
        self.double_order = np.concatenate((np.arange(n), np.arange(n)))
        self.all_alloc = bool((self.alloc_cpu != 0).all() and (self.alloc_mem != 0).all())
        return Rebuilt(infos, kept, from_rows, fresh, old_images)

    def _account_all(self, infos: Sequence[NodeInfo], rows: list[int]) -> None:
        """``account(pod, i, 1)`` for every pod on the nodes of ``rows``, summed per column in
        one call each (the free columns aside: the rebuild derives them afterwards).

        NOTE: a rebuild from scratch counts every bound pod (the chart cluster's 10,000):
        element by element, that was a dozen numpy scalar updates per pod.
        """
        at: list[int] = []
        cpu: list[int] = []
        mem: list[int] = []
        eph: list[int] = []
        nz_cpu: list[int] = []
        nz_mem: list[int] = []
        attachable: list[int] = []
        risky: list[int] = []
        priorities: list[int] = []
        features = self.features
        for i in rows:
            for pod in infos[i].pods:
                r = calculate_resource(pod, features)
                at.append(i)
                cpu.append(r.resource.milli_cpu)
                mem.append(r.resource.memory)
                eph.append(r.resource.ephemeral_storage)
                nz_cpu.append(r.non0_cpu)
                nz_mem.append(r.non0_mem)
                count, risk = attachable_at_most(pod) if pod.spec.volumes else (0, 0)
                attachable.append(count)
                risky.append(risk)
                priorities.append(pod_priority(pod))
        if not at:
            return
        self.changed_rows += at
        where = np.array(at, np.intp)
        requests = [np.array(values, np.int64) for values in (cpu, mem, eph)]
        sums: list[tuple[I64, list[int]]] = [
            (self.nz_cpu, nz_cpu),
            (self.nz_mem, nz_mem),
            (self.attachable, attachable),
            (self.attach_risky, risky),
        ]
        req = (self.req_cpu, self.req_mem, self.req_eph)
        for column, values in zip(req, requests, strict=True):
            np.add.at(column, where, values)
        for column, counted in sums:
            np.add.at(column, where, np.array(counted, np.int64))
        np.add.at(self.pod_count, where, 1)
        by_priority = np.array(priorities, np.int64)
        np.minimum.at(self.min_priority, where, by_priority)
        for priority in dict.fromkeys(priorities):  # levels made in the order pods show them
            level = self.bound.get(priority)
            if level is None:
                level = self.bound[priority] = Requests.zeros(len(self.names))
            mine = by_priority == priority
            for column, values in zip((level.cpu, level.mem, level.eph), requests, strict=True):
                np.add.at(column, where[mine], values[mine])
            np.add.at(level.pods, where[mine], 1)

    def account(self, pod: Pod, i: int, sign: int) -> None:
        """A pod came to (sign 1) or left (-1) the node at row ``i``: its resources and its
        priority."""
        self.changed_rows.append(i)
        r = calculate_resource(pod, self.features)
        self.req_cpu[i] += sign * r.resource.milli_cpu
        self.req_mem[i] += sign * r.resource.memory
        self.req_eph[i] += sign * r.resource.ephemeral_storage
        self.free_cpu[i] -= sign * r.resource.milli_cpu
        self.free_mem[i] -= sign * r.resource.memory
        self.free_eph[i] -= sign * r.resource.ephemeral_storage
        self.free_pods[i] -= sign
        self.nz_cpu[i] += sign * r.non0_cpu
        self.nz_mem[i] += sign * r.non0_mem
        self.pod_count[i] += sign
        if pod.spec.volumes:
            count, risky = attachable_at_most(pod)
            self.attachable[i] += sign * count
            self.attach_risky[i] += sign * risky
        priority = pod_priority(pod)
        level = self.bound.get(priority)
        if level is None:
            level = self.bound[priority] = Requests.zeros(len(self.names))
        level.cpu[i] += sign * r.resource.milli_cpu
        level.mem[i] += sign * r.resource.memory
        level.eph[i] += sign * r.resource.ephemeral_storage
        level.pods[i] += sign
        if sign > 0:
            self.min_priority[i] = min(int(self.min_priority[i]), priority)
        elif priority == self.min_priority[i]:
            # The pod has left the NodeInfo already: the minimum of those that remain.
            pods = self.cluster.infos[self.names[i]].pods
            self.min_priority[i] = min((pod_priority(p) for p in pods), default=MAX_INT32 + 1)

    def _taint_number(self, node: Node) -> int:
        taints = tuple(node.spec.taints)
        k = self._taint_numbers.get(taints)
        if k is None:
            k = self._taint_numbers[taints] = len(self.taint_sets)
            self.taint_sets.append((taints, node))
        return k

    def update_resources(self, i: int, new: Node) -> None:
        """A node changed in place (labels and images the same): its row's allocatable and
        its taint set."""
        self.row_nodes[i] = new
        self.node_generation += 1
        self.taint_set[i] = self._taint_number(new)
        self.changed_rows.append(i)
        a = allocatable_resource(new)
        self.alloc_cpu[i], self.alloc_mem[i] = a.milli_cpu, a.memory
        self.alloc_eph[i], self.alloc_pods[i] = a.ephemeral_storage, a.allowed_pod_number
        self.free_cpu[i] = self.alloc_cpu[i] - self.req_cpu[i]
        self.free_mem[i] = self.alloc_mem[i] - self.req_mem[i]
        self.free_eph[i] = self.alloc_eph[i] - self.req_eph[i]
        self.free_pods[i] = self.alloc_pods[i] - self.pod_count[i]
        if not (self.all_alloc and a.milli_cpu and a.memory):
            self.all_alloc = bool((self.alloc_cpu != 0).all() and (self.alloc_mem != 0).all())

    # ------------------------------------------------------------------ topology domains

    def codes(self, key: str) -> tuple[I32, dict[str, int]]:
        """Each node's domain code for ``key`` (-1: no such label) and the value -> code map:
        the cluster index's, kept there once for the fast path and the reports alike.

        NOTE: the table and the index are rebuilt together from one node order (a label
        change makes both stale), so the index's rows are this table's."""
        return self.cluster.index().codes(key)

    def has_all(self, keys: Sequence[str]) -> B:
        """Per node, whether it has every one of the label keys."""
        mask = np.ones(len(self.names), np.bool_)
        for key in keys:
            mask &= self.codes(key)[0] >= 0
        return mask

    def all_have(self, key: str) -> bool:
        every = self._every_node_has.get(key)
        if every is None:
            every = self._every_node_has[key] = bool((self.codes(key)[0] >= 0).all())
        return every

    def one_node_per_value(self, key: str) -> bool:
        single = self._single_valued.get(key)
        if single is None:
            codes, values = self.codes(key)
            single = self._single_valued[key] = len(values) == int((codes >= 0).sum())
        return single

    def domain_sums(self, key: str, per_node: I64) -> tuple[B, I64, int]:
        """For each node: whether it has ``key``, and the sum of ``per_node`` over its domain
        (0 without the key); and the sum over every node that has the key."""
        memo_key = (key, id(per_node))
        found = self.sums_memo.get(memo_key)
        if found is not None and found[0] is per_node:
            return found[1]  # one attempt's Filter and Score sum the same counts
        codes, values = self.codes(key)
        has = self._has.get(key)
        if has is None:
            has = self._has[key] = codes >= 0
        out: tuple[B, I64, int]
        if not values:
            out = has, np.zeros(len(codes), np.int64), 0
        elif self.one_node_per_value(key):
            # NOTE: each domain is one node (hostname): its sum is the node's own count; read
            # only by the callers, so where every node has the key it is ``per_node`` itself.
            at: I64 = per_node if self.all_have(key) else np.where(has, per_node, 0)
            out = has, at, int(at.sum())
        elif self.all_have(key) and len(values) == 1:
            # NOTE: one domain holds every node (upstream's affinity workloads label every
            # node zone1): each node's sum is the total, without the bincount and the gather.
            total = int(per_node.sum())
            out = has, np.full(len(codes), total, np.int64), total
        elif self.all_have(key):
            sums = np.bincount(codes, weights=per_node, minlength=len(values))
            sums_int = sums.astype(np.int64)  # exact: counts are far below 2**53
            out = has, sums_int[codes], int(sums_int.sum())
        else:
            sums = np.bincount(codes[has], weights=per_node[has], minlength=len(values))
            sums_int = sums.astype(np.int64)
            at = np.where(has, sums_int[np.where(has, codes, 0)], 0)
            out = has, at, int(sums_int.sum())
        self.sums_memo[memo_key] = (per_node, out)
        return out
