"""PodTopologySpread's kernel: Filter and Score over the spread counters (``SpreadCounts``).

A pod's constraints are resolved as the plugin resolves them (memoised by what
getConstraints reads), and against the table: each constraint's eligible nodes (node
inclusion policies) and its counter of matching pods per domain, in the pod's ``Signature``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    NODE_INCLUSION_POLICY_HONOR,
    SCHEDULE_ANYWAY,
    Pod,
    Taint,
)
from topospread.cluster.index import DomainCounter
from topospread.framework.status import Code, new_status
from topospread.framework.types import MAX_NODE_SCORE
from topospread.labels.selector import SelectorError
from topospread.nodeaffinity import get_required_node_affinity
from topospread.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    InternalConstraint,
)
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread as Plugin
from topospread.plugins.podtopologyspread.scoring import topology_normalizing_weight
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel
from topospread.simulator.fastpath.shapes import KEY_ENCODER, Signature
from topospread.simulator.fastpath.vectors import I32, I64, MAX_INT32, B, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath
    from topospread.simulator.fastpath.shapes import Static

MISSING: Final[Any] = object()


class PodTopologySpread(Kernel):
    """Upstream: PodTopologySpread.Filter, Score and NormalizeScore (filtering.go,
    scoring.go, v1.35), over every node at once."""

    dynamic = True
    reads_nominated = True

    def __init__(self, path: FastPath, plugin: Any) -> None:
        super().__init__(path, plugin)
        self.spread: Plugin = plugin
        statuses = path.statuses
        self.missing = statuses.intern(
            new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH)
            .with_plugin(self.name)
        )  # fmt: skip
        self.skew = statuses.intern(
            new_status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH).with_plugin(self.name)
        )
        self._objects: Any = None
        self._memo: dict[bytes, Any] = {}

    @classmethod
    def supports(cls, plugin: Any) -> bool:
        return isinstance(plugin, Plugin)

    # ------------------------------------------------------------------ signatures

    def constraints(self, pod: Pod) -> Any:
        """The pod's hard and soft constraints as the plugin resolves them, and whether they
        are its own; MISSING when one does not parse.

        NOTE: memoised by what getConstraints reads — the pod's namespace, labels, owners and
        constraints — for as long as the object lister (default constraints' Services and
        controllers) stays the same object.
        """
        objects = self.path.cluster.objects
        if objects is not self._objects:
            self._objects = objects
            self._memo.clear()
        meta = pod.metadata
        memo_key = KEY_ENCODER.encode(
            (meta.namespace, meta.labels, meta.owner_references,
             pod.spec.topology_spread_constraints)
        )  # fmt: skip
        found = self._memo.get(memo_key, MISSING)
        if found is not MISSING:
            return found
        try:
            found = (
                tuple(self.spread.get_constraints(pod, DO_NOT_SCHEDULE)),
                tuple(self.spread.get_constraints(pod, SCHEDULE_ANYWAY)),
                bool(pod.spec.topology_spread_constraints),
            )
        except SelectorError:
            found = MISSING
        if len(self._memo) > 65536:
            self._memo.clear()
        self._memo[memo_key] = found
        return found

    def signature(self, pod: Pod, static: Static, constraints: Any) -> Signature | None:
        """The pod's constraints against the table; None where the path declines them."""
        table = self.path.table
        n = len(table.names)
        skipped = set(static.skipped_scores)
        hard: list[tuple[InternalConstraint, DomainCounter, I64]] = []
        soft: list[tuple[InternalConstraint, DomainCounter | None]] = []
        soft_require_all = True
        soft_all = np.ones(n, np.bool_)
        host_counters: list[DomainCounter] = []
        hard_cs, soft_cs, own = constraints
        if not self.path.features.enable_node_inclusion_policy_in_pod_topology_spread:
            return None
        required = get_required_node_affinity(pod)
        namespace = pod.metadata.namespace
        index = self.path.cluster.index()
        hard_all = table.has_all([c.topology_key for c in hard_cs])
        for c in hard_cs:
            eligible = hard_all & self._policy_mask(c, pod, required)
            counter = index.counter(namespace, c.selector, c.topology_key, eligible)
            domains = _distinct(counter.codes[eligible & (counter.codes >= 0)])
            hard.append((c, counter, domains.astype(np.int64)))
        if not soft_cs:
            skipped.add(self.name)
        else:
            soft_require_all = own or not self.spread.system_defaulted
            soft_all = table.has_all([c.topology_key for c in soft_cs])
            if not soft_require_all and not soft_all.all():
                return None  # nodes without a key form a "" domain: left to the reference
            for c in soft_cs:
                base = soft_all if soft_require_all else np.ones(n, np.bool_)
                eligible = base & self._policy_mask(c, pod, required)
                if c.topology_key == LABEL_HOSTNAME:
                    every = np.ones(n, np.bool_)
                    host_counters.append(
                        index.counter(namespace, c.selector, c.topology_key, every, per_node=True)
                    )
                    soft.append((c, None))
                else:
                    counter = index.counter(namespace, c.selector, c.topology_key, eligible)
                    soft.append((c, counter))
        return Signature(
            static=static,
            hard=hard,
            soft=soft,
            soft_require_all=soft_require_all,
            soft_eligible_all=soft_all,
            skipped_scores=frozenset(skipped),
            host_counters=host_counters,
        )

    def _policy_mask(self, c: InternalConstraint, pod: Pod, required: Any) -> B:
        infos = self.path.cluster.list()
        comparison = self.path.features.enable_taint_toleration_comparison_operators
        table = self.path.table
        if (
            c.node_affinity_policy != NODE_INCLUSION_POLICY_HONOR or required.is_trivial
        ) and not table.stale:
            # NOTE: with no node affinity to honour, only a node's taints decide: nodes with
            # equal taints (most nodes have none, a lost zone's share its two) get one answer,
            # taken on a node of the set; the table numbers each row's set (carried over its
            # rebuilds), so a node added to a snapshot costs its own row, not a pass over all.
            present = _distinct(table.taint_set).tolist()
            verdicts = np.zeros(len(table.taint_sets), np.bool_)
            for k in present:
                verdicts[k] = c.match_node_inclusion_policies(
                    pod, table.taint_sets[k][1], required, enable_comparison_operators=comparison
                )
            mask: B = verdicts[table.taint_set]
            return mask
        if c.node_affinity_policy != NODE_INCLUSION_POLICY_HONOR or required.is_trivial:
            by_taints: dict[tuple[Taint, ...], bool] = {}
            out = np.empty(len(infos), np.bool_)
            for i, info in enumerate(infos):
                taints = tuple(info.node.spec.taints)
                verdict = by_taints.get(taints)
                if verdict is None:
                    verdict = by_taints[taints] = c.match_node_inclusion_policies(
                        pod, info.node, required, enable_comparison_operators=comparison
                    )
                out[i] = verdict
            return out
        return np.fromiter(
            (
                c.match_node_inclusion_policies(
                    pod, info.node, required, enable_comparison_operators=comparison
                )
                for info in infos
            ),
            np.bool_,
            len(infos),
        )

    # ------------------------------------------------------------------ Filter

    def filter(self, attempt: Attempt) -> I32 | None:
        """Constraint by constraint. None: every node passes (no hard constraint, or none
        rejects)."""
        pod, n = attempt.pod, len(self.path.table.names)
        status: I32 | None = None
        undecided: B | None = None  # None: every node
        for c, counter, domains in attempt.sig.hard:
            if len(domains) < c.min_domains:
                min_match = 0
            elif len(domains):
                min_match = int(counter.counts[domains].min())
            else:
                min_match = MAX_INT32
            self_match = 1 if c.selector.matches(pod.metadata.labels) else 0
            has = counter.has
            if not counter.has_all:
                missing = ~has if undecided is None else undecided & ~has
                if missing.any():
                    if status is None:
                        status = np.zeros(n, np.int32)
                    status[missing] = self.missing
                undecided = has if undecided is None else undecided & has
            # Past the skew is a domain's matter: the domains first, then their nodes.
            over_domain = counter.counts > c.max_skew - self_match + min_match
            if not over_domain.any():
                continue
            over = over_domain[counter.safe_codes]
            if undecided is not None:
                over &= undecided
            if over.any():
                if status is None:
                    status = np.zeros(n, np.int32)
                status[over] = self.skew
                undecided = ~over if undecided is None else undecided & ~over
        return status

    # ------------------------------------------------------------------ Score

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        """The nodes ``take`` at once. ``ignored``: the nodes lacking a soft constraint's key
        (None: there are none, and the masks are skipped)."""
        sig, table = attempt.sig, self.path.table
        ignored: B | None = None
        if sig.soft_require_all:
            ignored = ~sig.soft_eligible_all[take]
            if not ignored.any():
                ignored = None
        kept = len(take) if ignored is None else len(take) - int(np.count_nonzero(ignored))
        raw = np.zeros(len(take), np.float64)
        for c, counter in sig.soft:
            if c.topology_key == LABEL_HOSTNAME:
                size = kept
                counts = self._node_counts(sig, c)[take]
                has = None if table.all_have(LABEL_HOSTNAME) else table.codes(LABEL_HOSTNAME)[0]
            else:
                assert counter is not None
                codes = counter.codes[take]
                # The distinct values among the kept nodes (a missing key, -1, is one too).
                present = np.bincount((codes if ignored is None else codes[~ignored]) + 1)
                size = int(np.count_nonzero(present))
                if table.all_have(c.topology_key):
                    has = None
                    counts = counter.counts[codes]
                else:
                    has = counter.codes
                    counts = np.where(codes >= 0, counter.counts[np.where(codes >= 0, codes, 0)], 0)
            weight = topology_normalizing_weight(size)
            if has is None:
                raw += counts * weight + float(c.max_skew - 1)
            else:
                raw += np.where(has[take] >= 0, counts * weight + float(c.max_skew - 1), 0.0)
        # Every raw score is >= 0 (counts, weights and maxSkew - 1 are): Go's rounding
        # half away from zero is the floor plus one from a fraction of a half on.
        scores = np.floor(raw)
        scores += (raw - scores) >= 0.5
        scores = scores.astype(np.int64)
        if ignored is not None:
            scores[ignored] = -1
        valid = scores if ignored is None else scores[~ignored]
        if len(valid) == 0:  # every node ignored
            return np.zeros(len(take), np.int64)
        lo, hi = int(valid.min()), int(valid.max())
        if hi == 0:
            if ignored is None:
                return np.full(len(take), MAX_NODE_SCORE, np.int64)
            return np.where(ignored, 0, MAX_NODE_SCORE).astype(np.int64)
        # Every score lies in [lo, hi] (the ignored ones at -1) and lo >= 0: the numerators
        # are never negative, and Go's truncating division is the floor division.
        out: I64 = (MAX_NODE_SCORE * (hi + lo - scores) // hi).astype(np.int64, copy=False)
        if ignored is None:
            return out
        return np.where(ignored, 0, out).astype(np.int64)

    @staticmethod
    def _node_counts(sig: Signature, c: InternalConstraint) -> I64:
        """Matching pods per node for a hostname constraint (Score counts every node)."""
        for counter in sig.host_counters:
            # Mostly the very selector (Selector's == compares requirement by requirement).
            if counter.selector is c.selector or counter.selector == c.selector:
                return counter.counts
        raise AssertionError("hostname counter missing")


def _distinct(values: I32 | I64) -> Rows:
    """The distinct values of an array of small non-negative integers (domain codes, taint set
    numbers), ascending: ``np.unique``'s answer.

    NOTE: counted with ``np.bincount`` (the values are small indices): ``np.unique`` imports
    ``numpy.ma`` on its first call, several milliseconds of every command's start.
    """
    return np.flatnonzero(np.bincount(values))
