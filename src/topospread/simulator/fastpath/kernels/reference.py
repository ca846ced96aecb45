"""The kernel of a plugin without one: its reference plugin, run node by node for that plugin
alone, its statuses interned into the same vector as every vectorised plugin's.

Per attempt: its PreFilter on the decision's cycle state (before any filter, as
RunPreFilterPlugins; not again where the scheduler already ran every PreFilter on it); its
Filter on each node every earlier filter passed; its PreScore over the nodes to score, its
Score on each of them and its NormalizeScore. Anything the vectors
cannot reproduce — a PreFilter that rejects, errs or narrows the nodes, a Filter, Score or
NormalizeScore that errs, a score out of range — declines the attempt: the reference cycle
then decides it from the start.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from topospread.framework.types import MAX_NODE_SCORE, MIN_NODE_SCORE, NodeScore
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel
from topospread.simulator.fastpath.vectors import I32, I64, Rows


class ReferenceKernel(Kernel):
    """Upstream's extension points for one plugin, over the table's NodeInfos. The cycle
    calls each method only for the points the profile enables the plugin at."""

    dynamic = True
    # NOTE: what it reads is unknown, so nominated pods may change its verdicts: the vectors
    # never count them for it (the scheduler runs the reference filters on their nodes).
    reads_nominated = True

    def pre_filter(self, attempt: Attempt) -> None:
        if attempt.prefiltered:
            # NOTE: the scheduler ran every PreFilter on this state and checked that none
            # rejects or narrows the nodes; running this one again would replace the state
            # the nominated nodes' filters wrote (VolumeBinding's volumes per node).
            return
        result, status = self.plugin.pre_filter(
            attempt.state, attempt.pod, self.path.cluster.list()
        )
        if status.is_skip:
            attempt.state.skip_filter_plugins.add(self.name)
        elif not status.is_success or (result is not None and result.node_names is not None):
            attempt.declined = True

    def filter(self, attempt: Attempt) -> I32 | None:
        if self.name in attempt.state.skip_filter_plugins:
            return None
        n = len(self.path.cluster.list())
        first = attempt.first
        rows = np.arange(n) if first is None else np.flatnonzero(first == 0)
        found = self.filter_rows(attempt, rows)
        if attempt.declined or not found.any():
            return None
        out = np.zeros(n, np.int32)
        out[rows] = found
        return out

    def filter_rows(self, attempt: Attempt, rows: Rows) -> I32:
        pl = self.plugin
        infos = self.path.cluster.list()
        out = np.zeros(len(rows), np.int32)
        for j, i in enumerate(rows.tolist()):
            status = pl.filter(attempt.state, attempt.pod, infos[i])
            if status.is_success:
                continue
            if not status.is_rejected:
                attempt.declined = True  # an error: the reference reports it
                return out
            out[j] = self.path.statuses.intern(status.with_plugin(self.name))
        return out

    def pre_score(self, attempt: Attempt, take: Rows) -> None:
        infos = self.path.cluster.list()
        status = self.plugin.pre_score(
            attempt.state, attempt.pod, [infos[i] for i in take.tolist()]
        )
        if status.is_skip:
            attempt.state.skip_score_plugins.add(self.name)
        elif not status.is_success:
            attempt.declined = True

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        pl: Any = self.plugin
        if self.name in attempt.state.skip_score_plugins:
            return None
        infos = self.path.cluster.list()
        scores: list[NodeScore] = []
        for i in take.tolist():
            score, status = pl.score(attempt.state, attempt.pod, infos[i])
            if not status.is_success:
                attempt.declined = True
                return None
            scores.append(NodeScore(infos[i].name, score))
        ext = pl.score_extensions()
        normalized = ext is None or ext.normalize_score(attempt.state, attempt.pod, scores)
        if normalized is not True and not normalized.is_success:
            attempt.declined = True
            return None
        out = np.fromiter((s.score for s in scores), np.int64, len(scores))
        if len(out) and (int(out.max()) > MAX_NODE_SCORE or int(out.min()) < MIN_NODE_SCORE):
            attempt.declined = True  # the reference fails the attempt with its message
            return None
        return out
