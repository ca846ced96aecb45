"""The fast path's claims of ReplicaSets' pods: kept per ReplicaSet from one sync to the next
and brought up to date from the pods changed since (the pod store's journal), so that a
Deployment's step costs what changed, not every pod of the Deployment.

The reference path (replicaset.py's ``PodClaims``) claims afresh at every step, from the pods
it is given. A claim is a function of the ReplicaSet (its identity, deletion and selector) and
of each pod alone (common.py's ``claim_verdict``): so the claims kept here hold, per
ReplicaSet, every pod whose verdict is not to skip it, with its verdict, and re-read a pod only
when the store says it changed. The pods a ReplicaSet may claim are those whose controller
reference names it and the orphans of its namespace (the store's indexes), which is where a
claim starts afresh (a new ReplicaSet, a changed one, or a journal that no longer reaches back).

Statuses come from the same place: the ready pods among those owned are counted as they come
and go, which is ``status.availableReplicas`` whenever ``minReadySeconds`` does not matter (no
clock, or 0 seconds); otherwise they are counted from the owned pods as the reference does.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Final, Protocol

from topospread.api.types import Pod, ReplicaSet
from topospread.labels.selector import Selector
from topospread.simulator.controllers.active_pods import (
    is_pod_active,
    is_pod_available,
    is_pod_ready,
)
from topospread.simulator.controllers.common import (
    CLAIM_ADOPT,
    CLAIM_OWNED,
    CLAIM_SKIP,
    Claim,
    claim_candidates,
    claim_verdict,
)


class PodJournal(Protocol):
    """What the claims read of the pod store (simulator/stores.py's ``PodStore``)."""

    def get(self, key: str, /) -> Pod | None: ...
    def claimable(self, namespace: str, owner: ReplicaSet) -> tuple[AbstractSet[str], ...]: ...
    def journal_position(self) -> int: ...
    def changed_since(self, position: int) -> list[str] | None: ...


_Identity = tuple[str, str, str, str, str, str | None]
_MAX_ENTRIES: Final = 4096


def _identity(rs: ReplicaSet) -> _Identity:
    """What a claim reads of the ReplicaSet besides its selector: what its controller
    reference is made of, and its deletion."""
    meta = rs.metadata
    return (rs.api_version, rs.kind, meta.namespace, meta.name, meta.uid, meta.deletion_timestamp)


class _Entry:
    """One ReplicaSet's claim as of ``position`` in the store's journal."""

    __slots__ = (
        "identity",
        "owned",
        "owned_keys",
        "position",
        "ready",
        "result",
        "selector",
        "updated",
        "updated_keys",
        "verdicts",
    )

    def __init__(self, rs: ReplicaSet, position: int) -> None:
        self.identity = _identity(rs)
        # Checked by identity: scaling keeps the object, and so does a snapshot's restore
        # (entries are pickled with the ReplicaSets).
        self.selector: object = rs.spec.selector
        self.position = position
        # The pods whose verdict is not CLAIM_SKIP, by key.
        self.verdicts: dict[str, tuple[Pod, int]] = {}
        # The claim's owned and updated pods, in key order, and their keys (bisect's).
        self.owned: list[Pod] = []
        self.owned_keys: list[str] = []
        self.updated: list[Pod] = []
        self.updated_keys: list[str] = []
        # How many of the owned (or adopted) pods are ready.
        self.ready = 0
        # The claim as last made (its lists copies: a claim given out never changes).
        self.result: Claim[Pod] | None = None

    def fits(self, rs: ReplicaSet) -> bool:
        return self.selector is rs.spec.selector and self.identity == _identity(rs)

    def put(self, rs: ReplicaSet, key: str, pod: Pod, verdict: int) -> None:
        self.verdicts[key] = (pod, verdict)
        # The pod as the claim gives it (adopted or released: rewritten), as the reference's.
        one = claim_candidates(rs, [(pod, verdict)])
        if one.owned:
            i = bisect.bisect_left(self.owned_keys, key)
            self.owned_keys.insert(i, key)
            self.owned.insert(i, one.owned[0])
            if is_pod_ready(pod):
                self.ready += 1
        if one.updated:
            i = bisect.bisect_left(self.updated_keys, key)
            self.updated_keys.insert(i, key)
            self.updated.insert(i, one.updated[0])
        self.result = None

    def drop(self, key: str) -> None:
        pod, verdict = self.verdicts.pop(key)
        if verdict in (CLAIM_OWNED, CLAIM_ADOPT):
            i = bisect.bisect_left(self.owned_keys, key)
            del self.owned_keys[i], self.owned[i]
            if is_pod_ready(pod):
                self.ready -= 1
        if verdict != CLAIM_OWNED:
            i = bisect.bisect_left(self.updated_keys, key)
            del self.updated_keys[i], self.updated[i]
        self.result = None

    def claim(self) -> Claim[Pod]:
        if self.result is None:
            self.result = Claim(list(self.owned), list(self.updated))
        return self.result


class ClaimIndex:
    """The ReplicaSets' claims kept between steps (the simulation holds one, fast path only);
    ``claims()`` gives a step's view of them."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], _Entry] = {}

    def claims(self, store: PodJournal) -> IndexedClaims:
        return IndexedClaims(self, store)

    def entry(self, rs: ReplicaSet, selector: Selector, store: PodJournal) -> _Entry:
        """The ReplicaSet's claim, up to date with ``store``."""
        meta = rs.metadata
        key = (meta.namespace, meta.name)
        entry = self._entries.get(key)
        # The keys of the pods it may claim: its own (by name, by UID) and the orphans.
        buckets = store.claimable(meta.namespace, rs)
        if entry is None or not entry.fits(rs):
            if len(self._entries) >= _MAX_ENTRIES:  # ReplicaSets long gone
                self._entries.clear()
            entry = self._entries[key] = _Entry(rs, store.journal_position())
            # In key order: each pod goes at the end of the entry's lists.
            self._reread(entry, rs, selector, store, sorted(set().union(*buckets)))
            return entry
        changed = store.changed_since(entry.position)
        if changed is not None and not changed:
            return entry
        entry.position = store.journal_position()
        if changed is None:
            # The journal does not reach back (a restored snapshot's has no past): every pod
            # it may claim or claimed is looked at, those still the same object kept as is.
            keys = set().union(*buckets, entry.verdicts.keys())
        else:
            # NOTE: a pod changed that it neither claimed nor may claim (another owner's) is
            # skipped, as its verdict would; intersections cost the smaller side.
            touched = set(changed)
            keys = touched & entry.verdicts.keys()
            for bucket in buckets:
                keys |= touched & bucket
        self._reread(entry, rs, selector, store, keys)
        return entry

    @staticmethod
    def _reread(
        entry: _Entry, rs: ReplicaSet, selector: Selector, store: PodJournal, keys: Iterable[str]
    ) -> None:
        verdicts = entry.verdicts
        for key in keys:
            pod = store.get(key)
            old = verdicts.get(key)
            if old is not None:
                if old[0] is pod:
                    continue
                entry.drop(key)
            if pod is None:
                continue
            verdict = claim_verdict(rs, selector, pod, keep=is_pod_active)
            if verdict != CLAIM_SKIP:
                entry.put(rs, key, pod, verdict)


class IndexedClaims:
    """A step's claims read from a ``ClaimIndex``: what ``PodClaims`` gives, claimed from
    every pod of the store (the pods of the step are the store's: a step's actions are
    applied after it)."""

    def __init__(self, index: ClaimIndex, store: PodJournal) -> None:
        self._index = index
        self._store = store

    def claim(self, rs: ReplicaSet, selector: Selector) -> Claim[Pod]:
        return self._claim(rs, selector)[1]

    def status(self, rs: ReplicaSet, selector: Selector, now: int | None) -> tuple[int, int]:
        """The ReplicaSet's status.replicas and status.availableReplicas."""
        entry, claimed = self._claim(rs, selector)
        owned = claimed.owned
        min_ready = rs.spec.min_ready_seconds
        if min_ready == 0 or now is None:
            # NOTE: available is ready here (is_pod_available), and an adopted pod's copy
            # is as ready as the orphan: the entry's count is the answer.
            return len(owned), entry.ready
        return len(owned), sum(1 for p in owned if is_pod_available(p, min_ready, now))

    def _claim(self, rs: ReplicaSet, selector: Selector) -> tuple[_Entry, Claim[Pod]]:
        entry = self._index.entry(rs, selector, self._store)
        return entry, entry.claim()


__all__ = ["ClaimIndex", "IndexedClaims", "PodJournal"]
