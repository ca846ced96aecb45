"""The pods spread constraints count: per namespace and selector, the matching bound pods per
node, and per constraint their sums per topology domain over its eligible nodes.

NOTE: kept exact by the table's bind and unbind (a ``RowCounter``), and carried over its
rebuilds (only the nodes that came or changed are recounted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from topospread.api.types import Pod
from topospread.labels.selector import Selector
from topospread.plugins.podtopologyspread.common import InternalConstraint
from topospread.simulator.fastpath.table import Carry
from topospread.simulator.fastpath.vectors import I32, I64, B

if TYPE_CHECKING:
    from topospread.simulator.fastpath.table import NodeTable


class SpreadCounter:
    """Matching pods per domain of one topology key, over the nodes eligible for a constraint.

    NOTE: kept exact by bind and unbind: a pod counts when ``spread_counts`` holds for it
    and it is bound to an eligible node.
    """

    __slots__ = ("codes", "counts", "eligible", "has", "namespace", "safe_codes", "selector")

    def __init__(self, selector: Selector, namespace: str, codes: I32,
                 eligible: B, n_domains: int) -> None:  # fmt: skip
        self.selector = selector
        self.namespace = namespace
        self.codes = codes
        self.has: B = codes >= 0
        self.safe_codes = np.where(self.has, codes, 0)
        self.eligible = eligible
        self.counts: I64 = np.zeros(max(n_domains, 1), np.int64)


def spread_counts(pod: Pod, namespace: str, selector: Selector) -> bool:
    """Whether a bound pod counts for a spread constraint of a pod in ``namespace``: in that
    namespace, not terminating, matched by the (non-empty) selector."""
    meta = pod.metadata
    return (
        meta.namespace == namespace
        and meta.deletion_timestamp is None
        and not selector.empty
        and selector.matches(meta.labels)
    )


@dataclass(slots=True)
class Matching:
    """Per node, the bound pods one spread selector counts in one namespace
    (``spread_counts``), and the counters built from it."""

    per_node: I64
    counters: list[SpreadCounter] = field(default_factory=list)


class SpreadCounts:
    """Every spread selector's matching pods per node, and their counters (a RowCounter)."""

    def __init__(self, table: NodeTable) -> None:
        self.table = table
        # Per namespace and spread selector, its pods per node and its counters: a bind asks
        # each selector once.
        self.matching: dict[str, dict[Selector, Matching]] = {}
        # (namespace, a pod's labels) -> the selectors' entries matching them.
        self._matched_by_labels: dict[tuple[str, tuple[tuple[str, str], ...]], list[Matching]] = {}
        self.counters: list[SpreadCounter] = []

    def carry(self, carry: Carry) -> None:
        self.counters.clear()
        for by_selector in self.matching.values():
            for m in by_selector.values():
                m.per_node = carry(m.per_node)
                m.counters.clear()

    def count(self, pod: Pod, i: int, sign: int) -> None:
        """The spread selectors a pod on node ``i`` counts for (``spread_counts``, each
        selector asked once), and their counters."""
        meta = pod.metadata
        if meta.deletion_timestamp is not None:
            return
        groups = self.matching.get(meta.namespace)
        if not groups:
            return
        key = (meta.namespace, tuple(meta.labels.items()))
        matched = self._matched_by_labels.get(key)
        if matched is None:
            labels = meta.labels
            matched = [m for sel, m in groups.items() if not sel.empty and sel.matches(labels)]
            if len(self._matched_by_labels) > 4096:
                self._matched_by_labels.clear()
            self._matched_by_labels[key] = matched
        for m in matched:
            m.per_node[i] += sign
            for c in m.counters:
                if c.eligible[i]:
                    c.counts[c.codes[i]] += sign

    def counter(
        self, c: InternalConstraint, namespace: str, eligible: B, *, per_node: bool = False
    ) -> SpreadCounter:
        """The counter of a constraint's selector over its eligible nodes, per domain of its
        topology key (``per_node``: per node), shared by every constraint asking alike."""
        table = self.table
        if per_node:
            codes = np.arange(len(table.names), dtype=np.int32)
            n_domains = len(table.names)
        else:
            codes, values = table.codes(c.topology_key)
            n_domains = len(values)
        for existing in self.counters:
            if (
                existing.selector == c.selector
                and existing.namespace == namespace
                and existing.codes is codes
                and np.array_equal(existing.eligible, eligible)
            ):
                return existing
        counter = SpreadCounter(c.selector, namespace, codes, eligible, n_domains)
        matching = self.matching_of(namespace, c.selector)
        counted = eligible & counter.has
        counter.counts[:] = np.bincount(
            codes[counted], weights=matching.per_node[counted], minlength=len(counter.counts)
        ).astype(np.int64)
        self.counters.append(counter)
        matching.counters.append(counter)
        return counter

    def matching_of(self, namespace: str, selector: Selector) -> Matching:
        """The selector's pods per node in the namespace: counted once (one walk over the
        pods), then kept current on every bind and over rebuilds."""
        by_selector = self.matching.setdefault(namespace, {})
        matching = by_selector.get(selector)
        if matching is None:
            per_node = np.zeros(len(self.table.names), np.int64)
            if not selector.empty:
                for i, info in enumerate(self.table.cluster.list()):
                    per_node[i] = sum(1 for p in info.pods if spread_counts(p, namespace, selector))
            matching = by_selector[selector] = Matching(per_node)
            self._matched_by_labels.clear()  # a new selector: every label set's list is stale
        return matching
