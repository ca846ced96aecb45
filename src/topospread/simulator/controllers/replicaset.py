"""The ReplicaSet controller: keep ``spec.replicas`` active pods, creating the missing ones from
the template and deleting the surplus, the least valuable first.

Pods are named ``<replicaset>-<5 characters>`` (generateName with upstream's alphabet, drawn
from the seeded source). Scale-down victims are ranked as upstream ranks them
(ActivePodsWithRanks): the rank of a pod is the number of active pods, among the pods of every
ReplicaSet that shares this one's controller (its Deployment), on the pod's node. A ReplicaSet
that no Deployment controls has no related pods upstream, so all its ranks are equal.

Upstream: pkg/controller/replicaset/replica_set.go (v1.35)
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final, Protocol

import msgspec

from topospread.api.types import Pod, ReplicaSet
from topospread.labels.selector import Selector
from topospread.simulator.controllers.active_pods import (
    is_pod_active,
    is_pod_available,
    sort_active_pods_with_ranks,
)
from topospread.simulator.controllers.common import (
    Claim,
    ClaimMemo,
    PodActions,
    check_selector_matches_template,
    claim_pods,
    create_pod,
    get_pod_from_template,
    new_controller_ref,
    workload_selector,
)

BURST_REPLICAS: Final = 500
"""At most this many pods are created or deleted in one sync (upstream's burstReplicas)."""


def set_defaults_replica_set(rs: ReplicaSet) -> ReplicaSet:
    """``spec.replicas`` defaults to 1.

    Upstream: SetDefaults_ReplicaSet (pkg/apis/apps/v1/defaults.go, v1.35)
    """
    if rs.spec.replicas is not None:
        return rs
    return msgspec.structs.replace(rs, spec=msgspec.structs.replace(rs.spec, replicas=1))


def pods_ranked_by_related_pods_on_same_node(
    pods: Sequence[Pod], related_pods: Iterable[Pod]
) -> list[int]:
    """Each pod's rank: how many active related pods share its node.

    Upstream: getPodsRankedByRelatedPodsOnSameNode (replica_set.go, v1.35)
    """
    on_node = Counter(p.spec.node_name for p in related_pods if is_pod_active(p))
    return [on_node[p.spec.node_name] for p in pods]


def get_pods_to_delete(
    pods: Sequence[Pod], related_pods: Iterable[Pod], diff: int, now: int | None = None
) -> list[Pod]:
    """The ``diff`` pods to delete, first victim first; all of them, unsorted, when ``diff``
    covers every pod.

    Upstream: getPodsToDelete (replica_set.go, v1.35)
    """
    if diff < len(pods):
        ranks = pods_ranked_by_related_pods_on_same_node(pods, related_pods)
        pods = sort_active_pods_with_ranks(pods, ranks, now)
    return list(pods[:diff])


def manage_replicas(
    rs: ReplicaSet,
    active_pods: Sequence[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
    related_pods: Iterable[Pod] = (),
) -> PodActions:
    """Create or delete pods so that ``spec.replicas`` are active, at most BURST_REPLICAS.

    Upstream: ReplicaSetController.manageReplicas (replica_set.go, v1.35)
    """
    replicas = rs.spec.replicas if rs.spec.replicas is not None else 1
    diff = len(active_pods) - replicas
    if diff < 0:
        count = min(-diff, BURST_REPLICAS)
        ref = new_controller_ref(rs)
        created = tuple(
            create_pod(
                get_pod_from_template(rs.spec.template, rs.metadata.name, ref),
                rs.metadata.namespace,
                rng,
                now,
            )
            for _ in range(count)
        )
        return PodActions(create=created)
    if diff > 0:
        count = min(diff, BURST_REPLICAS)
        return PodActions(delete=tuple(get_pods_to_delete(active_pods, related_pods, count, now)))
    return PodActions()


class ReplicaSetClaims(Protocol):
    """The claims of a step's ReplicaSets: ``PodClaims`` (the reference), or the fast path's
    kept between steps (claim_index.py's ``IndexedClaims``)."""

    def claim(self, rs: ReplicaSet, selector: Selector) -> Claim[Pod]:
        """The ReplicaSet's claim of the active pods (Upstream: ClaimPods)."""
        ...

    def status(self, rs: ReplicaSet, selector: Selector, now: int | None) -> tuple[int, int]:
        """The ReplicaSet's status.replicas and status.availableReplicas, from its claim."""
        ...


class PodClaims:
    """The active pods each ReplicaSet claims from one list of pods, claimed once: within a
    Deployment's step, the Deployment's status pass and each ReplicaSet's sync claim the
    same pods. A claim reads of the ReplicaSet only its identity, its deletion and its
    selector, kept in the key (the selector by identity: scaling keeps the object).

    ``memos`` (kept by the caller from step to step) holds each claim's verdict per pod
    object, so that the next step's claim reads again only the pods that changed."""

    def __init__(self, pods: Sequence[Pod], memos: ClaimMemos | None = None) -> None:
        self.pods = pods
        self._found: dict[tuple[object, ...], tuple[object, Claim[Pod]]] = {}
        self._memos = memos

    def claim(self, rs: ReplicaSet, selector: Selector) -> Claim[Pod]:
        meta = rs.metadata
        selector_id = id(rs.spec.selector)
        key = (meta.namespace, meta.name, meta.uid, meta.deletion_timestamp, selector_id)
        hit = self._found.get(key)
        if hit is not None and hit[0] is rs.spec.selector:
            return hit[1]
        found = claim_pods(rs, selector, self.pods, keep=is_pod_active, memo=self._memo(rs))
        self._found[key] = (rs.spec.selector, found)
        return found

    def status(self, rs: ReplicaSet, selector: Selector, now: int | None) -> tuple[int, int]:
        owned = self.claim(rs, selector).owned
        min_ready = rs.spec.min_ready_seconds
        return len(owned), sum(1 for p in owned if is_pod_available(p, min_ready, now))

    def _memo(self, rs: ReplicaSet) -> ClaimMemo | None:
        memos = self._memos
        if memos is None:
            return None
        # The selector is checked by identity, not keyed by it: ids change when a snapshot
        # is restored, the objects' sharing does not.
        meta = rs.metadata
        key = (meta.namespace, meta.name, meta.uid, meta.deletion_timestamp)
        kept = memos.get(key)
        if kept is None or kept[0] is not rs.spec.selector:
            if len(memos) > _MAX_MEMOS:  # ReplicaSets long gone
                memos.clear()
            kept = memos[key] = (rs.spec.selector, {})
        memo = kept[1]
        if len(memo) > 2 * len(self.pods) + 1024:  # pods long gone
            memo.clear()
        return memo


# Claim verdicts kept between steps, per ReplicaSet identity, deletion and selector.
ClaimMemos = dict[tuple[object, ...], tuple[object, ClaimMemo]]
_MAX_MEMOS: Final = 4096


def sync_replica_set(
    rs: ReplicaSet,
    pods: Iterable[Pod],
    *,
    rng: random.Random,
    now: int | None = None,
    related_pods: Iterable[Pod] | None = None,
    claims: ReplicaSetClaims | None = None,
) -> PodActions:
    """One sync of a ReplicaSet.

    ``pods``: the pods of its namespace (any superset of its own); it claims the active ones
    (adopting orphans its selector matches, releasing its own that it no longer selects).
    ``related_pods``: the pods of every ReplicaSet controlled by this one's Deployment, this
    one's included (None for a ReplicaSet without a controller, as upstream). ``claims``:
    the claims already made from these same ``pods`` (a Deployment's step). A ReplicaSet
    being deleted neither adopts, releases, creates nor deletes.

    Upstream: ReplicaSetController.syncReplicaSet (replica_set.go, v1.35)
    """
    rs = set_defaults_replica_set(rs)
    selector = workload_selector(rs, rs.spec.selector)
    check_selector_matches_template(rs, selector, rs.spec.template)
    claim = (
        claims.claim(rs, selector)
        if claims is not None
        else claim_pods(rs, selector, pods, keep=is_pod_active)
    )
    updates = PodActions(update=tuple(claim.updated))
    if rs.metadata.deletion_timestamp is not None:
        return updates
    # Not ``related_pods or ()``: a LazyList would be made to answer.
    related = related_pods if related_pods is not None else ()
    return updates + manage_replicas(rs, claim.owned, rng=rng, now=now, related_pods=related)
