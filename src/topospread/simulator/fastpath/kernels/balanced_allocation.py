"""NodeResourcesBalancedAllocation's kernel: its score over the table's resource columns,
kept per shape between decisions and replayed row by row (``Shapes.kept``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from topospread.framework.types import MAX_NODE_SCORE
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel
from topospread.simulator.fastpath.vectors import I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.shapes import Static

BALANCED: Final = "balanced"


class NodeResourcesBalancedAllocation(Kernel):
    """Upstream: BalancedAllocation.Score / balancedResourceScorer (balanced_allocation.go,
    v1.35); a best-effort pod skips it (PreScore), as the shape records."""

    dynamic = True

    @classmethod
    def supports(cls, plugin: Any) -> bool:
        scorer = getattr(plugin, "scorer", None)
        return scorer is not None and [r.name for r in scorer.resources] == ["cpu", "memory"]

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        scores: I64 = self.kept_balanced(attempt.sig.static)[take]
        return scores

    def kept_balanced(self, static: Static) -> I64:
        """``balanced_at`` every node, kept between decisions (``Shapes.kept``)."""
        kept: I64 = self.path.shapes.kept(static, BALANCED, self.balanced_everywhere,
                                          self.balanced_row)  # fmt: skip
        return kept

    def balanced_everywhere(self, static: Static) -> I64:
        return self.balanced_at(static, self.path.table.double_order[: len(self.path.table.names)])

    def balanced_row(self, static: Static, i: int) -> int:
        """``balanced_at`` for one node."""
        assert static.balanced_req is not None
        t = self.path.table
        fractions: list[float] = []
        present: list[bool] = []
        for alloc, used, req in (
            (int(t.alloc_cpu[i]), int(t.req_cpu[i]), static.balanced_req[0]),
            (int(t.alloc_mem[i]), int(t.req_mem[i]), static.balanced_req[1]),
        ):
            has = alloc != 0
            fraction = float(used + req) / float(alloc if has else 1)
            fractions.append(min(fraction, 1.0))
            present.append(has)
        std = abs((fractions[0] - fractions[1]) / 2) if present[0] and present[1] else 0.0
        return int((1 - std) * float(MAX_NODE_SCORE))

    def balanced_at(self, static: Static, take: Rows) -> I64:
        assert static.balanced_req is not None
        t = self.path.table
        fractions = []
        present = []
        for alloc, used, req in (
            (t.alloc_cpu[take], t.req_cpu[take], static.balanced_req[0]),
            (t.alloc_mem[take], t.req_mem[take], static.balanced_req[1]),
        ):
            has = alloc != 0
            f = (used + req).astype(np.float64) / np.where(has, alloc, 1).astype(np.float64)
            fractions.append(np.minimum(f, 1.0))
            present.append(has)
        both = present[0] & present[1]
        std = np.where(both, np.abs((fractions[0] - fractions[1]) / 2), 0.0)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
