"""The normalization most score plugins share: scale raw scores to [0, maxPriority]."""

from __future__ import annotations

from topospread.framework.status import SUCCESS, Status
from topospread.framework.types import NodeScore


def _go_div(a: int, b: int) -> int:
    """Go's integer division, which truncates toward zero (Python's // floors)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> Status:
    """Scale scores from [0, max(scores)] to [0, max_priority] in place, integer-truncating.

    With ``reverse`` every score becomes ``max_priority - score`` (fewest is best); when every
    score is 0, reverse gives every node ``max_priority`` and non-reverse leaves them at 0.
    Scores are assumed non-negative, as upstream assumes.
    Upstream: DefaultNormalizeScore (plugins/helper/normalize_score.go, v1.35)
    """
    max_count = 0
    for ns in scores:
        max_count = max(max_count, ns.score)
    if max_count == 0:
        if reverse:
            for ns in scores:
                ns.score = max_priority
        return SUCCESS
    for ns in scores:
        score = _go_div(max_priority * ns.score, max_count)
        if reverse:
            score = max_priority - score
        ns.score = score
    return SUCCESS
