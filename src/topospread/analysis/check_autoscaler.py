"""``check --autoscaler``: the chart's workloads placed on the cluster shape, then the
autoscaler (cluster-autoscaler or Karpenter, simulator/autoscaling.py) adds nodes for what is
Pending, on the clock, until nothing is or the recovery limit passes
(analysis/sweep_autoscaler.py's ``recover``). The check's verdict is read after it acted: the
workloads fit with the autoscaler (and how many nodes it would add per group), or they do not,
and the autoscaler's own reasons say why (a group at its max size, a zone spread no group's
template can keep, a stock-out)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from topospread.analysis.sweep_autoscaler import Recovery, summarize_changes
from topospread.simulator.autoscaling import NodeChange
from topospread.simulator.clock import SECOND, format_duration, seconds


def verdict_line(r: Recovery) -> str:
    """``fits with cluster-autoscaler adding 3 node(s) (node-region-1a +1, ...) in 1m30s``,
    ``fits without new nodes (...)`` or ``does not fit with cluster-autoscaler within 30m0s;
    it added ...``."""
    groups = ", ".join(f"{g} +{n}" for g, n in r.added.items())
    added = f"{sum(r.added.values())} node(s) ({groups})" if r.added else "no node"
    if r.recovered:
        assert r.took is not None
        if not r.pending_before:
            return f"fits without new nodes (nothing Pending for {r.autoscaler})"
        return (
            f"fits with {r.autoscaler} adding {added} in {format_duration(round(r.took * SECOND))}"
        )
    limit = format_duration(round(r.limit * SECOND))
    return f"does not fit with {r.autoscaler} within {limit}; it added {added}"


def with_hooks(
    r: Recovery, later: Sequence[NodeChange], sizes: dict[str, int], pods: int, took: int
) -> Recovery:
    """The recovery of the release's placement counting what the autoscaler did for Helm
    hooks' pods too: ``pods`` of theirs it was given in ``took`` nanoseconds (before and
    after), and ``later``, its changes once the release was placed (for post-install hooks);
    ``sizes``: the groups' sizes after them."""
    if not pods and not later:
        return r
    after = summarize_changes(r.autoscaler, later, sizes, took=0, limit=0, pending_before=0)
    return msgspec.structs.replace(
        r,
        took=None if r.took is None else r.took + seconds(took),
        pending_before=r.pending_before + pods,
        added=dict(sorted((Counter(r.added) + Counter(after.added)).items())),
        removed=dict(sorted((Counter(r.removed) + Counter(after.removed)).items())),
        node_groups=sizes,
        reasons=list(dict.fromkeys([*r.reasons, *after.reasons])),
        changes=[*r.changes, *after.changes],
    )


def reasons_text(r: Recovery, limit: int = 3) -> str:
    """Why the autoscaler could not place what stays Pending: its latest reasons (the
    earlier ones are often about pods it placed later)."""
    if not r.reasons:
        return "it found nothing to add"
    head = "latest: " if len(r.reasons) > limit else ""
    return head + "; ".join(r.reasons[-limit:])


__all__ = ["reasons_text", "verdict_line", "with_hooks"]
