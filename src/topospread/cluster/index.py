"""One index of the cluster's pods, owned by its ClusterState and kept current from its change
notifications: per namespace and spread selector, the matching bound pods per node and per
topology domain; per inter-pod affinity term, the pods it selects and the pods carrying it, per
node (``affinity_index.py``).

Rows are the nodes in node-tree order (``ClusterState.list()``), the order the fast path's node
table has. Everything is counted on first ask (one walk over the pods), then kept on every bind
and unbind; when nodes come or go the index is rebuilt on next use, carrying over the rows of
nodes that did not change and recounting only the others. ``generation`` tells a reader holding
row-indexed arrays (the fast path) that they moved.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from topospread.api.types import Node, Pod
from topospread.cluster.affinity_index import AffinityIndex
from topospread.framework.types import NodeInfo
from topospread.labels.selector import Selector

if TYPE_CHECKING:
    from topospread.cluster.state import ClusterState

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]


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


def selected_pods(pods: Iterable[Pod], namespace: str, selector: Selector) -> list[Pod]:
    """The pods of ``namespace``, not terminating, that the selector matches (the empty
    selector: every such pod), in the order given: a row of ``ClusterIndex.pods_of``."""
    return [
        p
        for p in pods
        if p.metadata.namespace == namespace
        and p.metadata.deletion_timestamp is None
        and selector.matches(p.metadata.labels)
    ]


class DomainCounter:
    """Matching pods per domain of one topology key (``codes``: each row's domain, -1 without
    the key), over the rows ``eligible`` for a constraint.

    NOTE: kept exact on every bind and unbind: a pod counts when ``spread_counts`` holds for
    it and it is bound to an eligible node.
    """

    __slots__ = ("codes", "counts", "eligible", "has", "has_all", "namespace", "safe_codes",
                 "selector")  # fmt: skip

    def __init__(self, selector: Selector, namespace: str, codes: I32,
                 eligible: B, n_domains: int) -> None:  # fmt: skip
        self.selector = selector
        self.namespace = namespace
        self.codes = codes
        self.has: B = codes >= 0
        self.has_all = bool(self.has.all())  # every row has the key
        self.safe_codes = np.where(self.has, codes, 0)
        self.eligible = eligible
        self.counts: I64 = np.zeros(max(n_domains, 1), np.int64)


NodeDomains = Callable[[Node], tuple[str | None, ...]]


@dataclass(slots=True)
class Eligibility:
    """For one pod shape, which rows each of its constraints counts (``masks``; a row counts
    in its domain under the constraint's topology key), as of an index generation and a
    position in the log of nodes updated in place; and, per constraint, its eligible domains
    (value -> code) and its counter, taken on first ask."""

    generation: int
    epoch: int
    seen: int
    masks: list[B]
    domains: list[dict[str, int] | None]
    counters: list[DomainCounter | None]


@dataclass(slots=True)
class Matching:
    """Per row, the bound pods one spread selector counts in one namespace, and the domain
    counters built from it; once asked (``pods_of``), the pods themselves per row.

    ``counted`` is False for the empty selector, which a spread constraint counts nothing
    with (``spread_counts``) but the descheduler reads as every pod of the namespace: its
    ``per_node`` stays 0 and only its ``pods`` are kept.
    """

    per_node: I64
    counters: list[DomainCounter] = field(default_factory=list)
    counted: bool = True
    # NOTE: each row's list is in its NodeInfo's order (pods are appended on bind and taken
    # out in place on unbind, as NodeInfo.pods are), so a reader walking the rows in order
    # lists the pods as a walk over the nodes would.
    pods: list[list[Pod]] | None = None


# Nodes updated in place remembered; past it, every shape's eligibility is read again.
_UPDATES_KEPT: Final = 4096


def _carried_mask(old: B, kept: I64, from_rows: I64, n: int) -> B:
    new = np.zeros(n, np.bool_)
    new[kept] = old[from_rows]
    return new


class ClusterIndex:
    """Pod counts per node and per topology domain, for every selector and term asked about."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.generation = 0  # bumped on every rebuild: row-indexed arrays moved
        self.stale = True
        self.names: list[str] = []
        self.index: dict[str, int] = {}
        self._row_infos: list[NodeInfo] = []
        self._row_nodes: list[Node] = []
        self._dirty: set[str] = set()
        self._codes: dict[str, tuple[I32, dict[str, int]]] = {}
        # namespace -> selector -> its pods per row and its counters: a bind asks each once.
        self.matching: dict[str, dict[Selector, Matching]] = {}
        self._matched_by_labels: dict[tuple[str, tuple[tuple[str, str], ...]], list[Matching]] = {}
        self._counters: list[DomainCounter] = []
        self.affinity = AffinityIndex(self)
        # Rows whose node was updated in place (same labels) since the last rebuild, in
        # order: each shape's eligibility reads again these rows alone. ``epoch`` moves when
        # the log is cut short (a shape behind it reads every row again).
        self._updated: list[int] = []
        self._epoch = 0
        self._eligibility: dict[Hashable, Eligibility] = {}
        # The last rebuild: the epoch and log it ended, and each row's row before it (-1:
        # none, or its node or pods changed): a shape one rebuild behind carries its rows.
        self._carried: tuple[int, list[int], I64] | None = None

    # ------------------------------------------------------------------ rows

    def fresh(self) -> ClusterIndex:
        """The index, rebuilt first if nodes came, went or changed their labels."""
        if self.stale:
            self._rebuild()
        return self

    def _rebuild(self) -> None:
        self.stale = False
        self.generation += 1
        infos = list(self.cluster.list())
        n = len(infos)
        src = np.full(n, -1, np.int64)  # each row's row in the last index (-1: none)
        for i, info in enumerate(infos):
            j = self.index.get(info.name)
            if (
                j is not None
                and self._row_infos[j] is info
                and self._row_nodes[j] is info.node
                and info.name not in self._dirty
            ):
                src[i] = j
        self._dirty.clear()
        kept = np.flatnonzero(src >= 0)
        from_rows = src[kept]

        def carry(old: I64) -> I64:
            new = np.zeros(n, np.int64)
            new[kept] = old[from_rows]
            return new

        self.names = [info.name for info in infos]
        self.index = {name: i for i, name in enumerate(self.names)}
        self._row_infos = infos
        self._row_nodes = [info.node for info in infos]
        self._codes = {}
        self._counters.clear()
        self._carried = (self._epoch, list(self._updated), src)
        self._updated.clear()
        for by_selector in self.matching.values():
            for m in by_selector.values():
                m.per_node = carry(m.per_node)
                m.counters.clear()
                if m.pods is not None:
                    pods: list[list[Pod]] = [[] for _ in range(n)]
                    for new_row, old_row in zip(kept.tolist(), from_rows.tolist(), strict=True):
                        pods[new_row] = m.pods[old_row]
                    m.pods = pods
        self.affinity.carry(carry)
        if not self.matching and not self.affinity.counting():
            return  # nothing counted yet (the first build): _count has nothing to do
        for i in np.flatnonzero(src < 0).tolist():
            for pod in infos[i].pods:
                self._count(pod, i, 1)

    def codes(self, key: str) -> tuple[I32, dict[str, int]]:
        """Each row's domain code for ``key`` (-1: no such label) and the value -> code map."""
        self.fresh()
        cached = self._codes.get(key)
        if cached is None:
            # Codes by first appearance in row order; one array built from a list (a numpy
            # element assigned per node costs more than the label lookups).
            values: dict[str, int] = {}
            found = [info.node.metadata.labels.get(key) for info in self._row_infos]
            arr = np.array(
                [-1 if v is None else values.setdefault(v, len(values)) for v in found], np.int32
            ).reshape(len(found))
            cached = self._codes[key] = (arr, values)
        return cached

    # ------------------------------------------------------------------ ClusterListener

    def on_nodes_changed(self) -> None:
        self.stale = True

    def on_node_updated(self, old: Node, new: Node) -> None:
        if old.metadata.labels != new.metadata.labels:
            self.stale = True  # domains changed (and maybe the node's place in the order)
        elif not self.stale:
            i = self.index.get(new.metadata.name)
            if i is not None:
                self._row_nodes[i] = new  # same labels: every count stands
                if len(self._updated) >= _UPDATES_KEPT:
                    self._updated.clear()
                    self._epoch += 1
                self._updated.append(i)  # but its taints may change who counts it

    def on_bind(self, pod: Pod, node_name: str) -> None:
        if self.stale:
            self._dirty.add(node_name)  # the rebuild recounts its row
        else:
            self._count(pod, self.index[node_name], 1)

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        if self.stale:
            self._dirty.add(node_name)
        else:
            self._count(pod, self.index[node_name], -1)

    def _count(self, pod: Pod, i: int, sign: int) -> None:
        """A pod came to (1) or left (-1) row ``i``: the spread selectors it counts for (each
        asked once per label set), their counters, and the affinity terms."""
        self.affinity.count(pod, i, sign)
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
            matched = [
                m
                for sel, m in groups.items()
                if (m.counted or m.pods is not None) and sel.matches(labels)
            ]
            if len(self._matched_by_labels) > 4096:
                self._matched_by_labels.clear()
            self._matched_by_labels[key] = matched
        for m in matched:
            if m.pods is not None:
                row = m.pods[i]
                if sign > 0:
                    row.append(pod)
                else:
                    # The very object bound (ClusterState.unbind passes it): no field compare.
                    at = next((k for k, p in enumerate(row) if p is pod), None)
                    if at is not None:
                        del row[at]
            if not m.counted:
                continue
            m.per_node[i] += sign
            for c in m.counters:
                if c.eligible[i]:
                    c.counts[c.codes[i]] += sign

    # ------------------------------------------------------------------ spread selectors

    def matching_of(self, namespace: str, selector: Selector) -> Matching:
        """The selector's pods per row in the namespace (``spread_counts``): counted once,
        then kept current."""
        self.fresh()
        by_selector = self.matching.setdefault(namespace, {})
        matching = by_selector.get(selector)
        if matching is None:
            per_node = np.zeros(len(self.names), np.int64)
            if not selector.empty:
                for i, info in enumerate(self._row_infos):
                    per_node[i] = sum(1 for p in info.pods if spread_counts(p, namespace, selector))
            matching = by_selector[selector] = Matching(per_node, counted=not selector.empty)
            self._matched_by_labels.clear()  # a new selector: every label set's list is stale
        return matching

    def pods_of(self, namespace: str, selector: Selector) -> list[list[Pod]]:
        """Per row, the bound pods of ``namespace`` that are not terminating and that the
        selector matches (the empty selector: every such pod), in each node's order: listed
        once, then kept current. The descheduler's domains are read from it."""
        matching = self.matching_of(namespace, selector)
        if matching.pods is None:
            rows: list[list[Pod]] = [[] for _ in self.names]
            # A counted selector's rows without any match need no look.
            look = (
                np.flatnonzero(matching.per_node).tolist()
                if matching.counted
                else range(len(self.names))
            )
            for i in look:
                rows[i] = selected_pods(self._row_infos[i].pods, namespace, selector)
            matching.pods = rows
            self._matched_by_labels.clear()  # the empty selector now matches on bind
        return matching.pods

    def counter(
        self, namespace: str, selector: Selector, topology_key: str, eligible: B, *,
        per_node: bool = False,
    ) -> DomainCounter:  # fmt: skip
        """The selector's matching pods per domain of ``topology_key`` (``per_node``: per
        row) over the ``eligible`` rows, shared by every constraint asking alike."""
        self.fresh()
        if per_node:
            codes = np.arange(len(self.names), dtype=np.int32)
            n_domains = len(self.names)
        else:
            codes, values = self.codes(topology_key)
            n_domains = len(values)
            # NOTE: a row without the key counts in no domain (its code, -1, must never index).
            eligible = eligible & (codes >= 0)
        for existing in self._counters:
            if (
                existing.selector == selector
                and existing.namespace == namespace
                and existing.codes is codes
                and np.array_equal(existing.eligible, eligible)
            ):
                return existing
        counter = DomainCounter(selector, namespace, codes, eligible, n_domains)
        matching = self.matching_of(namespace, selector)
        counted = eligible & counter.has
        counter.counts[:] = np.bincount(
            codes[counted], weights=matching.per_node[counted], minlength=len(counter.counts)
        ).astype(np.int64)
        self._counters.append(counter)
        matching.counters.append(counter)
        return counter

    def domain_counts(
        self,
        namespace: str,
        selector: Selector,
        topology_key: str,
        eligible_rows: Sequence[bool] | B | None = None,
    ) -> dict[str, int]:
        """The pods a spread constraint of a pod in ``namespace`` counts (``spread_counts``)
        per value of ``topology_key``, over the nodes having it (and, if given, eligible by
        row): every such domain, 0 where none."""
        codes, values = self.codes(topology_key)
        eligible = (
            np.ones(len(self.names), np.bool_)
            if eligible_rows is None
            else np.asarray(eligible_rows, np.bool_)
        )
        counts = self.counter(namespace, selector, topology_key, eligible).counts
        present = set(codes[eligible & (codes >= 0)].tolist())
        return {value: int(counts[code]) for value, code in values.items() if code in present}

    # ------------------------------------------------------------------ per pod shape

    def eligibility(self, shape: Hashable, width: int, read: NodeDomains) -> Eligibility:
        """Which rows each of a pod shape's ``width`` constraints counts: ``read`` gives a
        node's domain under each (None: not eligible), e.g. PodTopologySpread's
        ``domain_reader``, and ``shape`` must stand for everything ``read`` depends on
        besides the node. Kept per shape: read again for the rows of nodes updated in place
        since the last ask, and after one rebuild for the rows it did not carry over (every
        row after more)."""
        self.fresh()
        entry = self._eligibility.get(shape)
        rows: Sequence[int] | set[int]
        if entry is not None and len(entry.masks) == width and entry.epoch == self._epoch:
            if entry.generation == self.generation:
                rows = set(self._updated[entry.seen :])
            else:
                rows = self._carry(entry)
        else:
            entry = None
        if entry is None:
            rows = range(len(self.names))
            masks = [np.zeros(len(self.names), np.bool_) for _ in range(width)]
            entry = Eligibility(self.generation, self._epoch, 0, masks, [None] * width,
                                [None] * width)  # fmt: skip
            self._eligibility[shape] = entry
        entry.seen = len(self._updated)
        changed = [False] * width
        for i in rows:
            for j, value in enumerate(read(self._row_infos[i].node)):
                now = value is not None
                if bool(entry.masks[j][i]) != now:
                    entry.masks[j][i] = now
                    changed[j] = True
        for j, moved in enumerate(changed):
            if moved:
                entry.domains[j] = entry.counters[j] = None
        return entry

    def _carry(self, entry: Eligibility) -> Sequence[int] | set[int]:
        """Move a shape's masks one rebuild on, where it is one behind (a full read else):
        the rows carried keep their verdicts; the rows to read again are returned."""
        n = len(self.names)
        carried = self._carried
        if carried is None or entry.generation != self.generation - 1 or entry.epoch != carried[0]:
            entry.masks = [np.zeros(n, np.bool_) for _ in entry.masks]
            rows: Sequence[int] | set[int] = range(n)
        else:
            _, log, src = carried
            kept = np.flatnonzero(src >= 0)
            entry.masks = [_carried_mask(m, kept, src[kept], n) for m in entry.masks]
            new_row = np.full(int(src.max(initial=-1)) + 1, -1, np.int64)
            new_row[src[kept]] = kept
            rows = set(np.flatnonzero(src < 0).tolist()) | set(self._updated)
            rows |= {
                int(new_row[j]) for j in log[entry.seen :] if j < len(new_row) and new_row[j] >= 0
            }
        entry.generation = self.generation
        entry.seen = 0
        entry.domains = [None] * len(entry.masks)
        entry.counters = [None] * len(entry.masks)
        return rows

    def eligible_domain_counts(
        self, shape: Hashable, namespace: str, constraints: Sequence[tuple[Selector, str]],
        read: NodeDomains,
    ) -> list[dict[str, int]]:  # fmt: skip
        """For a pod shape's constraints (selector, topology key) in ``namespace``, the pods
        each counts (``spread_counts``) per eligible domain (``eligibility``), 0 where none:
        calPreFilterState's counts, from the kept counters instead of a walk over the pods."""
        entry = self.eligibility(shape, len(constraints), read)
        out = []
        for j, (selector, key) in enumerate(constraints):
            counter = entry.counters[j]
            domains = entry.domains[j]
            # NOTE: a shape stands for the constraints' specs, not the pod's labels: the
            # selector is checked, in case one day it is merged with the pod's labels here.
            if counter is None or domains is None or counter.selector is not selector:
                codes, values = self.codes(key)
                eligible = entry.masks[j]
                present = set(codes[eligible & (codes >= 0)].tolist())
                domains = entry.domains[j] = {v: c for v, c in values.items() if c in present}
                counter = entry.counters[j] = self.counter(namespace, selector, key, eligible)
            counts = counter.counts
            out.append({value: int(counts[code]) for value, code in domains.items()})
        return out
