"""plugins/tainttoleration: TaintToleration."""

from topospread.plugins.tainttoleration.taint_toleration import (
    ERR_REASON_NOT_MATCH,
    ERR_REASON_UNTOLERATED,
    NAME,
    PRE_SCORE_STATE_KEY,
    PreScoreState,
    TaintToleration,
    get_all_toleration_prefer_no_schedule,
    new,
)

__all__ = [
    "ERR_REASON_NOT_MATCH",
    "ERR_REASON_UNTOLERATED",
    "NAME",
    "PRE_SCORE_STATE_KEY",
    "PreScoreState",
    "TaintToleration",
    "get_all_toleration_prefer_no_schedule",
    "new",
]
