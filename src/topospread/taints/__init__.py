"""Taints and tolerations as component-helpers/scheduling/corev1 matches them.

A toleration with an empty key and operator Exists tolerates every taint (of its effect, or of
every effect when its effect is empty); an empty operator means Equal; an unknown operator
tolerates nothing. The numeric Gt/Lt operators exist only behind the alpha feature gate
TaintTolerationComparisonOperators (off by default in v1.35).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from topospread.api.types import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Taint,
    Toleration,
)
from topospread.labels.selector import parse_int64

TaintFilter = Callable[[Taint], bool]


def tolerates_taint(
    toleration: Toleration, taint: Taint, *, enable_comparison_operators: bool = False
) -> bool:
    """Upstream: Toleration.ToleratesTaint (k8s.io/api/core/v1/toleration.go, v1.35)."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    op = toleration.operator
    if op in ("", TOLERATION_OP_EQUAL):
        return toleration.value == taint.value
    if op == TOLERATION_OP_EXISTS:
        return True
    if op in ("Gt", "Lt") and enable_comparison_operators:
        want = parse_int64(toleration.value)
        have = parse_int64(taint.value)
        if want is None or have is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def tolerations_tolerate_taint(
    tolerations: Sequence[Toleration], taint: Taint, *, enable_comparison_operators: bool = False
) -> bool:
    """Upstream: TolerationsTolerateTaint (component-helpers scheduling/corev1/helpers.go)."""
    return any(
        tolerates_taint(t, taint, enable_comparison_operators=enable_comparison_operators)
        for t in tolerations
    )


def find_matching_untolerated_taint(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    inclusion_filter: TaintFilter | None = None,
    *,
    enable_comparison_operators: bool = False,
) -> Taint | None:
    """The first taint (in the node's order) that passes the filter and is not tolerated.

    Upstream: FindMatchingUntoleratedTaint (component-helpers scheduling/corev1/helpers.go)
    """
    for taint in taints:
        if inclusion_filter is not None and not inclusion_filter(taint):
            continue
        if not tolerations_tolerate_taint(
            tolerations, taint, enable_comparison_operators=enable_comparison_operators
        ):
            return taint
    return None


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """NoSchedule and NoExecute taints keep pods off a node; PreferNoSchedule does not.

    Upstream: DoNotScheduleTaintsFilterFunc (scheduler framework/plugins/helper/taint.go)
    """
    return taint.effect in (TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE)


def prefer_no_schedule_taints_filter(taint: Taint) -> bool:
    return taint.effect == TAINT_EFFECT_PREFER_NO_SCHEDULE
