"""The normalization most score plugins share: scale raw scores to [0, maxPriority].

A scalar form for the plugins and a numpy form for the simulator's fast path, side by side
(tests/test_gomath.py checks that they agree).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from topospread.framework.status import SUCCESS, Status
from topospread.framework.types import NodeScore
from topospread.plugins.helper.gomath import go_div


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
        score = go_div(max_priority * ns.score, max_count)
        if reverse:
            score = max_priority - score
        ns.score = score
    return SUCCESS


def default_normalize_score_array(
    max_priority: int, reverse: bool, raw: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """``default_normalize_score`` over an array of non-negative scores, returning the result.

    NOTE: the scores are non-negative, so Go's truncating division is numpy's floor division.
    When every score is 0 and not ``reverse``, ``raw`` itself is returned (not a copy).
    Upstream: DefaultNormalizeScore (plugins/helper/normalize_score.go, v1.35)
    """
    top = int(raw.max()) if len(raw) else 0
    if top == 0:
        return np.full(len(raw), max_priority, np.int64) if reverse else raw
    scaled = max_priority * raw // top
    return max_priority - scaled if reverse else scaled
