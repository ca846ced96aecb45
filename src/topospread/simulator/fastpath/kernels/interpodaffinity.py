"""InterPodAffinity's kernel: Filter and Score from pod counts kept per node.

What upstream's PreFilter and PreScore collect by walking every pod is kept incrementally by
the cluster index (``cluster/affinity_index.py``): per node, the pods matching each term an
incoming pod asks about, and the pods carrying each distinct term of existing pods; each
decision sums them per topology domain with one vector operation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from topospread.api.types import Pod
from topospread.cluster.affinity_index import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
)
from topospread.framework.status import Code, new_status
from topospread.framework.types import MAX_NODE_SCORE
from topospread.plugins.interpodaffinity.filtering import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    pod_matches_all_affinity_terms,
)
from topospread.plugins.interpodaffinity.plugin import InterPodAffinity as Plugin
from topospread.plugins.interpodaffinity.terms import AffinityTerm, NamespaceLabels
from topospread.simulator.fastpath.kernels.base import Attempt, Kernel
from topospread.simulator.fastpath.vectors import I32, I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath


class InterPodAffinity(Kernel):
    """Upstream: InterPodAffinity.Filter, PreScore, Score and NormalizeScore (filtering.go,
    scoring.go, v1.35), over every node at once."""

    dynamic = True
    reads_nominated = True

    def __init__(self, path: FastPath, plugin: Any) -> None:
        super().__init__(path, plugin)
        self.ipa: Plugin = plugin
        statuses, name = path.statuses, self.name
        self.affinity = statuses.intern(
            new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
            .with_plugin(name)
        )  # fmt: skip
        self.anti = statuses.intern(
            new_status(Code.Unschedulable, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)
            .with_plugin(name)
        )  # fmt: skip
        self.existing = statuses.intern(
            new_status(Code.Unschedulable, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
            .with_plugin(name)
        )  # fmt: skip

    @classmethod
    def supports(cls, plugin: Any) -> bool:
        return isinstance(plugin, Plugin)

    def filter(self, attempt: Attempt) -> I32 | None:
        """The pod's required affinity, its required anti-affinity, then existing pods'
        required anti-affinity. None: no required term on either side, so every node
        passes."""
        pod, table = attempt.pod, self.path.table
        counts = self.path.cluster.index().affinity
        n = len(table.names)
        terms = attempt.sig.static.terms
        carried = counts.carried_matching(pod, self.ipa.namespace_labels)
        if (
            not terms.required_affinity_terms
            and not terms.required_anti_affinity_terms
            and not any(k == REQUIRED_ANTI_AFFINITY for k, *_ in carried)
        ):
            return None
        ns = self.ipa.namespace_labels()
        affinity_fails = np.zeros(n, np.bool_)
        if terms.required_affinity_terms:
            required = terms.required_affinity_terms
            matching = counts.counts_of(
                ("all", required), functools.partial(_all_terms_match, required, ns)
            )
            has_all = np.ones(n, np.bool_)
            exist = np.ones(n, np.bool_)
            any_counted = False
            for t in required:
                has, at, total = table.domain_sums(t.topology_key, matching)
                has_all &= has
                exist &= at > 0
                any_counted = any_counted or total > 0
            ok = exist
            if not any_counted and pod_matches_all_affinity_terms(required, pod, ns):
                ok = np.ones(n, np.bool_)  # the first pod of a group that selects itself
            affinity_fails = ~(has_all & ok)
        anti_fails = np.zeros(n, np.bool_)
        for t in terms.required_anti_affinity_terms:
            per_node = counts.counts_of(("term", t), _matcher(t, ns))
            anti_fails |= table.domain_sums(t.topology_key, per_node)[1] > 0
        existing_fails = np.zeros(n, np.bool_)
        for kind, term, _, carriers in carried:
            if kind == REQUIRED_ANTI_AFFINITY:
                existing_fails |= table.domain_sums(term.topology_key, carriers)[1] > 0
        status = np.where(existing_fails, self.existing, 0).astype(np.int32)
        status = np.where(anti_fails, self.anti, status).astype(np.int32)
        status = np.where(affinity_fails, self.affinity, status).astype(np.int32)
        return status

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        """The normalized scores, or None when PreScore skips.

        The weights PreScore accumulates per topology pair are, per term, a weight times the
        pods counted in the pair's domain: the incoming pod's preferred terms against existing
        pods, and existing pods' required affinity (the hard weight) and preferred terms
        against the incoming pod.
        """
        static = attempt.sig.static
        args = self.ipa.args
        if args.ignore_preferred_terms_of_existing_pods and not static.has_preferred_terms:
            return None
        counts = self.path.cluster.index().affinity
        terms = static.terms
        contributions: list[tuple[str, int, I64]] = []
        for sign, preferred in (
            (1, terms.preferred_affinity_terms),
            (-1, terms.preferred_anti_affinity_terms),
        ):
            for wt in preferred:
                t = wt.term
                # The namespaces' labels are looked up only to count a term the first time.
                per_node = counts.kept_counts(("term", t))
                if per_node is None:
                    ns = self.ipa.namespace_labels()
                    per_node = counts.counts_of(("term", t), _matcher(t, ns))
                contributions.append((t.topology_key, sign * wt.weight, per_node))
        hard_weight = args.weight
        for kind, term, weight, carriers in counts.carried_matching(
            attempt.pod, self.ipa.namespace_labels
        ):
            if kind == REQUIRED_AFFINITY and hard_weight > 0:
                contributions.append((term.topology_key, hard_weight, carriers))
            elif kind == PREFERRED_AFFINITY:
                contributions.append((term.topology_key, weight, carriers))
            elif kind == PREFERRED_ANTI_AFFINITY:
                contributions.append((term.topology_key, -weight, carriers))
        if not contributions:
            return None  # no pair can be counted: PreScore skips
        raw = np.zeros(len(take), np.int64)
        counted = False
        for key, weight, per_node in contributions:
            _, at, total = self.path.table.domain_sums(key, per_node)
            if total:
                counted = True
                raw += weight * at[take]
        if not counted:
            return None  # no pair was counted: PreScore skips
        lo, hi = int(raw.min()), int(raw.max())
        diff = hi - lo
        if diff <= 0:
            return np.zeros(len(take), np.int64)
        scaled = float(MAX_NODE_SCORE) * ((raw - lo).astype(np.float64) / float(diff))
        return scaled.astype(np.int64)  # truncation toward zero, as Go's int64(float64)


def _matcher(term: AffinityTerm, ns: NamespaceLabels) -> Callable[[Pod], bool]:
    """Whether a pod is one the term selects (a partial, so that snapshots can pickle it)."""
    return functools.partial(_term_matches, term, ns)


def _term_matches(term: AffinityTerm, ns: NamespaceLabels, pod: Pod) -> bool:
    return term.matches(pod, ns)


def _all_terms_match(terms: Sequence[AffinityTerm], ns: NamespaceLabels, pod: Pod) -> bool:
    return pod_matches_all_affinity_terms(terms, pod, ns)
