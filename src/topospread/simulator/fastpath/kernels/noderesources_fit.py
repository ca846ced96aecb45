"""NodeResourcesFit's kernel: Filter (fitsRequest) and the LeastAllocated score over the
table's resource columns.

A shape's shortage bits and scores on every node are kept between decisions and replayed row
by row as binds change the table (``Shapes.kept``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from topospread.framework.status import Code, new_status
from topospread.framework.types import MAX_NODE_SCORE
from topospread.plugins.noderesources.fit import (
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
)
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel
from topospread.simulator.fastpath.vectors import I32, I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath
    from topospread.simulator.fastpath.shapes import Static

# NodeResourcesFit's reasons by bit, in fitsRequest's order.
FIT_REASONS: Final = (
    REASON_TOO_MANY_PODS,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_MEMORY,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
)
FIT_UNRESOLVABLE: Final = 16
LEAST: Final = "least"
FIT: Final = "fit"


class NodeResourcesFit(Kernel):
    """Upstream: Fit.Filter / fitsRequest and leastResourceScorer (fit.go,
    least_allocated.go, v1.35)."""

    dynamic = True

    def __init__(self, path: FastPath, plugin: Any) -> None:
        super().__init__(path, plugin)
        self.fit_table = np.zeros(32, np.int32)
        for bits in range(1, 32):
            if bits & 15:
                reasons = [r for b, r in enumerate(FIT_REASONS) if bits & (1 << b)]
                code = Code.UnschedulableAndUnresolvable if bits & 16 else Code.Unschedulable
                self.fit_table[bits] = path.statuses.intern(
                    new_status(code, *reasons).with_plugin(self.name)
                )
        self.weights = [int(r.weight) for r in plugin.scorer.resources]

    @classmethod
    def supports(cls, plugin: Any) -> bool:
        scorer = getattr(plugin, "scorer", None)
        if scorer is None or scorer.name != "LeastAllocated":
            return False
        return [r.name for r in scorer.resources] == ["cpu", "memory"]

    # ------------------------------------------------------------------ Filter

    def filter(self, attempt: Attempt) -> I32 | None:
        """``attempt.nominated``: requests that nominated pods hold on each node, taken off
        the free room. None: every node fits."""
        static = attempt.sig.static
        nominated = attempt.nominated
        t = self.path.table
        if nominated is None:
            bits = self.kept_bits(static)
        else:
            bits = self.fit_bits(
                static,
                t.free_cpu - nominated[0],
                t.free_mem - nominated[1],
                t.free_eph - nominated[2],
                t.free_pods - nominated[3],
            )
        if not bits.any():
            return None
        status: I32 = self.fit_table[bits]
        return status

    def kept_bits(self, static: Static) -> I32:
        """``fit_bits`` on every node from the free room as it stands, kept between
        decisions (``Shapes.kept``)."""
        bits: I32 = self.path.shapes.kept(static, FIT, self.fit_bits_now, self.fit_row)
        return bits

    def fit_bits_now(self, static: Static) -> I32:
        """``fit_bits`` from the free room as it stands."""
        t = self.path.table
        return self.fit_bits(static, t.free_cpu, t.free_mem, t.free_eph, t.free_pods)

    def fit_bits(self, static: Static, free_cpu: I64, free_mem: I64, free_eph: I64,
                 free_pods: I64) -> I32:  # fmt: skip
        """Per node, what the pod is short of as ``FIT_REASONS`` bits (0: it fits), with
        ``FIT_UNRESOLVABLE`` where a request exceeds the node's allocatable."""
        t = self.path.table
        bits = (free_pods < 1).astype(np.int32)
        for bit, req, free, alloc in (
            (2, static.req_cpu, free_cpu, t.alloc_cpu),
            (4, static.req_mem, free_mem, t.alloc_mem),
            (8, static.req_eph, free_eph, t.alloc_eph),
        ):
            if req > 0:
                short = free < req
                bits |= np.where(short, bit, 0).astype(np.int32)
                bits |= np.where(short & (alloc < req), FIT_UNRESOLVABLE, 0).astype(np.int32)
        return bits

    def fit_row(self, static: Static, i: int) -> int:
        """``fit_bits`` for one node, from its free room as it stands."""
        t = self.path.table
        bits = 1 if t.free_pods[i] < 1 else 0
        for bit, req, free, alloc in (
            (2, static.req_cpu, t.free_cpu[i], t.alloc_cpu[i]),
            (4, static.req_mem, t.free_mem[i], t.alloc_mem[i]),
            (8, static.req_eph, t.free_eph[i], t.alloc_eph[i]),
        ):
            if req > 0 and int(free) < req:
                bits |= bit
                if int(alloc) < req:
                    bits |= FIT_UNRESOLVABLE
        return bits

    # ------------------------------------------------------------------ Score

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        static = attempt.sig.static
        if self.path.table.all_alloc:
            scores: I64 = self.kept_least(static)[take]
            return scores
        return self.least_allocated_at(static, take)

    def kept_least(self, static: Static) -> I64:
        """``least_allocated_at`` every node, kept between decisions (``Shapes.kept``; only
        while every node has allocatable cpu and memory)."""
        kept: I64 = self.path.shapes.kept(static, LEAST, self.least_allocated_everywhere,
                                          self.least_row)  # fmt: skip
        return kept

    def least_allocated_everywhere(self, static: Static) -> I64:
        return self.least_allocated_at(
            static, self.path.table.double_order[: len(self.path.table.names)]
        )

    def least_row(self, static: Static, i: int) -> int:
        """``least_allocated_at`` for one node (every node has allocatable cpu and memory)."""
        t = self.path.table
        w_cpu, w_mem = self.weights
        total = 0
        for alloc, used, req, w in (
            (int(t.alloc_cpu[i]), int(t.nz_cpu[i]), static.score_req[0], w_cpu),
            (int(t.alloc_mem[i]), int(t.nz_mem[i]), static.score_req[1], w_mem),
        ):
            free = alloc - (used + req)
            total += (0 if free < 0 else free * MAX_NODE_SCORE // alloc) * w
        return total // (w_cpu + w_mem)

    def least_allocated_at(self, static: Static, take: Rows) -> I64:
        t = self.path.table
        weights = self.weights
        columns = (
            (t.alloc_cpu[take], t.nz_cpu[take], static.score_req[0], weights[0]),
            (t.alloc_mem[take], t.nz_mem[take], static.score_req[1], weights[1]),
        )
        if t.all_alloc:
            total = np.zeros(len(take), np.int64)
            for alloc, used, req, w in columns:
                free = alloc - (used + req)
                total += np.where(free < 0, 0, free * MAX_NODE_SCORE // alloc) * w
            mean: I64 = total // (weights[0] + weights[1])
            return mean
        score = np.zeros(len(take), np.int64)
        weight_sum = np.zeros(len(take), np.int64)
        for alloc, used, req, w in columns:
            requested = used + req
            has = alloc != 0
            safe = np.where(has, alloc, 1)
            s = np.where(requested > alloc, 0, (alloc - requested) * MAX_NODE_SCORE // safe)
            score += np.where(has, s * w, 0)
            weight_sum += np.where(has, w, 0)
        return np.where(weight_sum == 0, 0, score // np.where(weight_sum == 0, 1, weight_sum))
