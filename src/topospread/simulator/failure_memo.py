"""A memo of failed attempts on the fast path: a pod of the same scheduling key, tried again
while nothing the scheduler reads has changed, fails the same way.

The scheduler re-attempts every Pending pod whenever an event may make it schedulable
(upstream's queueing hints): hundreds of identical Pending replicas of a Deployment are each
tried again after every eviction, and all fail alike. The first failure of a key is kept with
what its attempt did (``MemoOutcome``): its Decision's message and reasons, the plugins that
rejected it, the nomination PostFilter set and the random draws preemption's dry run made. A
later attempt of a pod with the same key gets a copy of it (``SchedulingCycle._replay``)
without running filters or PostFilter.

What an attempt reads, besides the pod:

- the cluster's nodes and bound pods: every change is a ``ClusterListener`` event, which
  clears the memo; so is every nomination made or dropped (``NominatorListener``);
- the storage, DRA objects, PDBs, namespaces, services and workloads, and the profiles: none
  of them changes during ``Scheduler.run`` but through a binding or a preemption, so the memo
  lives only within one run (cleared when it starts and ends), and any attempt that is not a
  memo-able failure clears it too;
- the search's start index (``next_start_node_index``), which orders the reasons and which a
  failure leaves where its search started: kept with the outcome and checked;
- the scheduler's seeded random source: preemption's dry run draws its offset from it. A hit
  makes the same ``randrange`` calls (``DrawLog``) so that every later draw is the one it would
  have been; the outcome is kept only where it cannot depend on the values drawn (no
  candidate: the message counts statuses; no error, whose aggregate follows the visiting
  order).

Only failures without nominated pods anywhere, of a pod without a nomination of its own,
without claims or volumes the volume plugins check, on a profile whose every plugin has a
fast-path kernel and whose PostFilter plugins are DefaultPreemption and DynamicResources, are
kept.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import msgspec

from topospread.api.types import Node, Pod
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.plugins.dynamicresources.dynamicresources import DynamicResources
from topospread.simulator.fastpath.kernels.reference import ReferenceKernel
from topospread.simulator.fastpath.shapes import KEY_ENCODER, unnamed_spec

if TYPE_CHECKING:
    from topospread.framework.interface import QueuedPodInfo
    from topospread.framework.runtime import Framework
    from topospread.simulator.fastpath import FastPath

# Pods whose keys are kept (by identity) before the cache starts again: the Pending pods a
# run tries again and again, not every pod ever tried.
KEYS_KEPT: Final = 4096
KNOWN_POST_FILTERS: Final = (DefaultPreemption, DynamicResources)
# Whether a Scheduler keeps a memo unless told (its ``memo`` argument); tests turn it off to
# compare whole runs with and without.
ENABLED = True


class DrawLog(random.Random):
    """The scheduler's seeded source; while ``log`` is a list, each ``randrange(n)`` call's
    ``n`` is appended to it (the same values as ``random.Random``: the draws below
    ``randrange`` are its own)."""

    log: list[int] | None = None  # a class default: a pickled copy starts without a log

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:
        log = self.log
        if log is not None:
            # -1: a call of another form, which ``replay`` cannot repeat (never kept).
            log.append(start if stop is None and step == 1 else -1)
        return super().randrange(start, stop, step)


@dataclass(slots=True, frozen=True)
class MemoOutcome:
    """What a memo-able failed attempt did, to be done again by a later attempt of its key."""

    start: int  # the search's start index: where the attempt left next_start_node_index
    nodes: int  # how many nodes it searched
    message: str
    reasons: dict[str, list[str]] | None  # None: the scheduler keeps no detail
    plugins: frozenset[str]  # the plugins that rejected it (``_failed``)
    post_filter: bool  # whether PostFilter ran (its result then went to ``_nominate``)
    nominated: str | None  # what PostFilter's result asked of the nomination
    draws: tuple[int, ...]  # preemption's ``randrange(n)`` calls, in order


class FailureMemo:
    """The outcomes of memo-able failed attempts by the pods' keys, valid until anything the
    scheduler reads changes (a ``ClusterListener`` and a ``NominatorListener``).

    ``epoch`` counts the times it was cleared: an attempt keeps its outcome only where no
    change came while it ran.

    NOTE: exact only while every change an attempt reads is a listener event, comes with a
    decision that is not a kept failure (a binding, a preemption), or comes between two runs
    of the scheduler; a caller changing storage, budgets or namespaces from ``run``'s
    callbacks must clear it.
    """

    def __init__(self) -> None:
        self.outcomes: dict[bytes, MemoOutcome] = {}
        self.epoch = 0
        self._keys: dict[int, tuple[Pod, bytes]] = {}
        self._profiles: dict[str, bool] = {}

    def __getstate__(self) -> dict[str, int]:
        """A snapshot (simulator/checkpoint.py) holds no outcomes or keys: a memo lives
        within one run, and snapshots are taken between runs."""
        return {"epoch": self.epoch}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.outcomes = {}
        self.epoch = state["epoch"]
        self._keys = {}
        self._profiles = {}

    def clear(self) -> None:
        self.epoch += 1
        if self.outcomes:
            self.outcomes.clear()

    # ClusterListener and NominatorListener: any change clears the memo.
    def on_nodes_changed(self) -> None:
        self.clear()

    def on_node_updated(self, old: Node, new: Node) -> None:
        self.clear()

    def on_bind(self, pod: Pod, node_name: str) -> None:
        self.clear()

    def on_unbind(self, pod: Pod, node_name: str) -> None:
        self.clear()

    def on_nominated(self, pod: Pod, node_name: str, sign: int) -> None:
        self.clear()

    def profile_memoable(self, fwk: Framework, path: FastPath) -> bool:
        """Whether the profile's failures may be kept: every plugin has a kernel (what a
        reference plugin reads of the pod is unknown) and its PostFilter plugins are known:
        DefaultPreemption (whose draws and outcomes are known) and DynamicResources (which
        reads only the cycle state for a pod without claims, all the fast path takes)."""
        known = self._profiles.get(fwk.profile_name)
        if known is None:
            known = self._profiles[fwk.profile_name] = not any(
                isinstance(k, ReferenceKernel) for k in path.kernels.values()
            ) and all(isinstance(pl, KNOWN_POST_FILTERS) for pl in fwk.post_filter_plugins)
        return known

    def key(self, pod: Pod, info: QueuedPodInfo | None = None) -> bytes:
        """Everything an attempt may read of the pod, as bytes: the whole pod but what names
        one pod of a template apart and no plugin reads of a pod the memo takes (its name,
        uid and creation time; ``unnamed_spec``'s names). A pod with claims or volumes the
        volume plugins check (which read the pod's name and claims) is never kept.

        Kept on the queued pod ``info`` when given (for as long as it holds this pod), else
        in a cache of the last ``KEYS_KEPT`` pods by identity.

        NOTE: on the queued pod, not only in the cache: more Pending pods than the cache holds
        (thousands after a zone is lost) went through it in turn on every retry, each
        clearing it for the next, and every key was encoded again.
        """
        if info is not None:
            cached = info.memo_key
            if cached is not None and cached[0] is pod:
                return cached[1]
        found = self._keys.get(id(pod))
        if found is not None and found[0] is pod:
            key = found[1]
        else:
            meta = msgspec.structs.replace(pod.metadata, name="", uid="", creation_timestamp=None)
            key = KEY_ENCODER.encode((meta, unnamed_spec(pod.spec), pod.status))
            if len(self._keys) >= KEYS_KEPT:
                self._keys.clear()
            self._keys[id(pod)] = (pod, key)
        if info is not None:
            info.memo_key = (pod, key)
        return key


def replay(rng: random.Random, draws: tuple[int, ...]) -> None:
    """Make the recorded ``randrange(n)`` calls on ``rng`` again."""
    for n in draws:
        rng.randrange(n)


def draws_replayable(before: Any, after: Any, draws: list[int]) -> bool:
    """Whether the logged ``randrange`` calls, made from the state ``before``, lead to the
    state ``after``: no other draw was made (``getstate`` values of a ``random.Random``)."""
    if any(n <= 0 for n in draws):
        return False
    probe = random.Random()
    probe.setstate(before)
    replay(probe, tuple(draws))
    return bool(probe.getstate() == after)


__all__ = ["ENABLED", "DrawLog", "FailureMemo", "MemoOutcome", "draws_replayable", "replay"]
