"""The inter-pod affinity part of the cluster index: per node, the pods a predicate selects
(the pods an incoming pod's terms match), and the pods carrying each distinct term of existing
pods (what upstream's InterPodAffinity PreFilter and PreScore collect by walking every pod).

NOTE: kept exact on every bind and unbind and carried over rebuilds. The predicates must not
change their answer for a pod while they live; namespace labels are the one outside input, so
the counts by predicate are dropped when the namespaces change (``follow_namespaces``).
Carried terms are counted from the first ask on (until then no bind pays for them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from topospread.api.types import Pod
from topospread.plugins.interpodaffinity.terms import (
    TERMS_AS,
    AffinityTerm,
    NamespaceLabels,
    PodAffinityTerms,
    PodTermsCache,
    has_pod_affinity,
)

if TYPE_CHECKING:
    from topospread.cluster.index import ClusterIndex

I64 = npt.NDArray[np.int64]

# Kinds of inter-pod affinity terms carried by existing pods.
REQUIRED_AFFINITY: Final = 0
REQUIRED_ANTI_AFFINITY: Final = 1
PREFERRED_AFFINITY: Final = 2
PREFERRED_ANTI_AFFINITY: Final = 3

CarriedTerm = tuple[int, AffinityTerm, int, I64]  # kind, term, weight, carriers per row
CarriedKey = tuple[int, AffinityTerm, int]  # kind, term, weight


class PodCounts:
    """Per row, the bound pods a predicate holds for (terminating pods included, as
    InterPodAffinity counts them)."""

    __slots__ = ("match", "per_node")

    def __init__(self, match: Callable[[Pod], bool], n: int) -> None:
        self.match = match
        self.per_node: I64 = np.zeros(n, np.int64)


class AffinityIndex:
    """Inter-pod affinity's counts per row, kept with the cluster index."""

    def __init__(self, index: ClusterIndex) -> None:
        self.index = index
        self.terms_cache = PodTermsCache()
        self.pod_counts: dict[Any, PodCounts] = {}
        # (kind, term, weight) -> per row, the bound pods carrying that term; None until asked.
        self.carried: dict[CarriedKey, I64] | None = None
        self._keys_of: dict[int, tuple[PodAffinityTerms, list[CarriedKey]]] = {}
        self._carried_matching: dict[Any, list[CarriedTerm]] = {}
        self._last_carried: tuple[Pod | None, list[CarriedTerm]] = (None, [])
        self._objects: Any = None
        self._namespaces: Any = None

    def carry(self, carry: Callable[[I64], I64]) -> None:
        if self.carried is not None:
            self.carried = {key: carry(row) for key, row in self.carried.items()}
        self._carried_matching = {}
        self._last_carried = (None, [])
        for pc in self.pod_counts.values():
            pc.per_node = carry(pc.per_node)

    def counting(self) -> bool:
        """Whether ``count`` counts anything: terms carried, or pods by a predicate."""
        return self.carried is not None or bool(self.pod_counts)

    def count(self, pod: Pod, i: int, sign: int) -> None:
        if self.carried is not None and has_pod_affinity(pod):
            self._carry_terms(pod, i, sign)
        for pc in self.pod_counts.values():
            if pc.match(pod):
                pc.per_node[i] += sign

    def _carry_terms(self, pod: Pod, i: int, sign: int) -> None:
        """Count the inter-pod affinity terms a bound pod carries on its node."""
        for key in self._carried_keys(self.terms_cache.get(pod)):
            self._carried_row(key)[i] += sign

    def _carry_all(self, infos: Sequence[Any]) -> dict[CarriedKey, I64]:
        """Every bound pod's carried terms, counted per row: one vector per term, made at
        once from the rows of its carriers, the terms in the order ``_carry_terms`` would
        first add them.

        NOTE: the pods are grouped by what their terms are parsed from (namespace, and the
        identity of their podAffinity and podAntiAffinity objects: the pods of one template
        share them, or are known to have equal ones, ``terms_objects``), each group's terms
        found once; the ids are unique, as every pod (and every object ``TERMS_AS`` gives) is
        alive throughout.
        """
        rows: dict[CarriedKey, list[list[int]]] = {}
        groups: dict[tuple[str, int, int], list[int]] = {}
        aliases = TERMS_AS
        for i, info in enumerate(infos):
            for p in info.pods:
                affinity = p.spec.affinity
                if affinity is None:
                    continue
                pa, paa = affinity.pod_affinity, affinity.pod_anti_affinity
                if pa is None and paa is None:
                    continue
                alias = aliases.get(id(affinity))
                if alias is not None and alias[0] is affinity:  # ``terms_objects``, inlined
                    pa, paa = alias[1].pod_affinity, alias[1].pod_anti_affinity
                group = (p.metadata.namespace, id(pa), id(paa))
                at = groups.get(group)
                if at is None:
                    at = groups[group] = []
                    for key in self._carried_keys(self.terms_cache.get(p)):
                        rows.setdefault(key, []).append(at)
                at.append(i)
        n = len(infos)
        return {
            key: np.bincount(
                np.concatenate([np.asarray(at, np.int64) for at in ats]), minlength=n
            ).astype(np.int64, copy=False)
            for key, ats in rows.items()
        }

    def _carried_keys(self, terms: PodAffinityTerms) -> list[CarriedKey]:
        """The (kind, term, weight) keys of a pod's terms, in kind order; kept per parsed
        terms object (the pods of one template share it: ``PodTermsCache``).

        NOTE: keyed by id, the terms object kept beside its keys so that the id is not reused.
        """
        found = self._keys_of.get(id(terms))
        if found is not None and found[0] is terms:
            return found[1]
        keys: list[CarriedKey] = [(REQUIRED_AFFINITY, t, 0) for t in terms.required_affinity_terms]
        keys += [(REQUIRED_ANTI_AFFINITY, t, 0) for t in terms.required_anti_affinity_terms]
        keys += [(PREFERRED_AFFINITY, wt.term, wt.weight) for wt in terms.preferred_affinity_terms]
        keys += [
            (PREFERRED_ANTI_AFFINITY, wt.term, wt.weight)
            for wt in terms.preferred_anti_affinity_terms
        ]
        if len(self._keys_of) > 4096:
            self._keys_of.clear()
        self._keys_of[id(terms)] = (terms, keys)
        return keys

    def _carried_row(self, key: CarriedKey) -> I64:
        assert self.carried is not None
        row = self.carried.get(key)
        if row is None:
            row = self.carried[key] = np.zeros(len(self.index.names), np.int64)
            self._carried_matching.clear()  # a new term: every pod's matches are stale
            self._last_carried = (None, [])
        return row

    def kept_counts(self, key: Any) -> I64 | None:
        """``counts_of(key, ...)`` where that predicate is counted already; else None."""
        self.index.fresh()
        self.follow_namespaces()
        pc = self.pod_counts.get(key)
        return None if pc is None else pc.per_node

    def counts_of(self, key: Any, match: Callable[[Pod], bool]) -> I64:
        """Per row, the bound pods ``match`` holds for; counted once, then kept current.
        ``key`` names the predicate (what it is built from)."""
        index = self.index.fresh()
        self.follow_namespaces()
        pc = self.pod_counts.get(key)
        if pc is None:
            pc = self.pod_counts[key] = PodCounts(match, len(index.names))
            for i, info in enumerate(index.cluster.list()):
                pc.per_node[i] = sum(1 for p in info.pods if match(p))
        return pc.per_node

    def carried_matching(
        self, pod: Pod, namespace_labels: Callable[[], NamespaceLabels]
    ) -> list[CarriedTerm]:
        """The terms existing pods carry that select ``pod``, with their carriers per row
        (``namespace_labels``: asked for the labels lookup only when the terms are matched)."""
        index = self.index.fresh()
        self.follow_namespaces()
        if self.carried is None:
            self.carried = self._carry_all(index.cluster.list())
        if pod is self._last_carried[0]:
            return self._last_carried[1]  # Filter and Score of one attempt ask alike
        meta = pod.metadata
        key = (meta.namespace, tuple(sorted(meta.labels.items())))
        found = self._carried_matching.get(key)
        if found is None:
            ns = namespace_labels()
            found = [
                (kind, term, weight, row)
                for (kind, term, weight), row in self.carried.items()
                if term.matches(pod, ns)
            ]
            if len(self._carried_matching) > 4096:
                self._carried_matching.clear()
            self._carried_matching[key] = found
        self._last_carried = (pod, found)
        return found

    def follow_namespaces(self) -> None:
        """Drop what was counted with namespace labels that have since changed."""
        objects = self.index.cluster.objects
        if objects is self._objects:
            return
        self._objects = objects
        namespaces = [(ns.metadata.name, ns.metadata.labels) for ns in objects.namespaces()]
        if namespaces != self._namespaces:
            self._namespaces = namespaces
            self.pod_counts.clear()
            self._carried_matching.clear()
            self._last_carried = (None, [])
