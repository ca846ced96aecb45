"""Runs of Pending pods that fail alike: the pods right behind a failed pod in the active queue
that the failure memo answers as it (simulator/failure_memo.py) ride with it, as one entry of
the queue, until an attempt of theirs could go otherwise.

After a zone is lost, thousands of identical replicas wait, and every eviction moves them all
back to the active queue, where each fails from the memo as the first did. Each such retry made
a Decision, moved the pod out of the pool and back, and pushed and popped it: work per pod per
event. A run does it once per event for all of its pods:

- a leader (a ``QueuedPodInfo`` whose ``run`` is set) stands in the pool and the active queue
  for its members, which are in neither: it is moved, requeued and tried alone, and its members
  take the ticks and pool places right after it (the queue reserves them);
- when the leader fails again and the memo kept that failure, every member fails so too
  (``_fail_run``): what each member's attempt would have done that anyone reads at once is
  done for all (the counters, the random draws of preemption's dry run, in order), and what
  is the member's own (its attempts, the plugins that rejected it, its last Decision) is owed
  to it until someone reads it;
- anything else the leader's attempt does (it binds, preempts, fails another way) breaks the
  run (``_break_run``): each member gets what it is owed and goes back to the active queue
  with its own tick, to be tried one by one as before;
- pods the memo answers as the leader that come right after it (the next ticks, the same key)
  join the run (``_absorb``), each after its own attempt.

Runs exist only while ``Scheduler.run(runs=True)`` made them (the timeline simulation, which
reads no attempt's Decision but the bindings'), and are invisible: the scheduler's
``unschedulable``, ``active`` and ``last`` dissolve every run first (``_flatten_runs``), so
whoever reads them sees each pod as the attempts one by one would have left it.

Exact because a member's attempt would read only what the leader's read: the same memo key
(the whole pod but its names: priority, profile, nomination), the same memo outcome, still
held (no change came between), and the same start index, and it would leave the queue in the
same order: members hold consecutive ticks right after the leader's, so no pod of any priority
comes between them, and their pool places are consecutive too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from topospread.framework.interface import QueuedPodInfo
from topospread.framework.nominator import pod_key
from topospread.simulator.decision import Decision
from topospread.simulator.failure_memo import MemoOutcome, replay

# Whether the timeline simulation makes runs (tests turn it off to compare with and without).
ENABLED = True

if TYPE_CHECKING:
    from topospread.simulator.failure_memo import DrawLog, FailureMemo
    from topospread.simulator.scheduling_queue import (
        ActiveQueue,
        SchedulingQueue,
        UnschedulablePods,
    )


@dataclass(slots=True, eq=False)
class Run:
    """The members riding behind a leader, in queue order, and what they are owed."""

    key: bytes  # the memo key every member shares with the leader
    keys: list[str]
    infos: list[QueuedPodInfo]
    # The run's failures when each member joined: it is owed those since.
    joined: list[int]
    failures: int = 0
    outcome: MemoOutcome | None = None  # the latest failure's, what the owed ones left

    def settle(self, last: dict[str, Decision]) -> None:
        """Give each member what it is owed: its attempts, the plugins that rejected it and
        its last Decision, as ``SchedulingCycle._replay`` gives them."""
        outcome = self.outcome
        if outcome is None:
            return
        for key, info, joined in zip(self.keys, self.infos, self.joined, strict=True):
            owed = self.failures - joined
            if not owed:
                continue
            info.attempts += owed
            info.unschedulable_plugins = outcome.plugins
            decision = Decision(pod=info.pod, node=None, attempt=info.attempts)
            if outcome.reasons is not None:
                decision.reasons = outcome.reasons
            decision.message = outcome.message
            last[key] = decision
        self.joined = [self.failures] * len(self.infos)


class PendingRuns:
    """The runs of ``Scheduler`` (a mixin, as ``SchedulingCycle``)."""

    if TYPE_CHECKING:
        queue: SchedulingQueue
        _active: ActiveQueue
        _pool: UnschedulablePods
        _last: dict[str, Decision]
        _runs: dict[str, QueuedPodInfo]  # leader key -> leader
        _kept_outcome: MemoOutcome | None
        memo: FailureMemo | None
        rng: DrawLog
        fast_decisions: int
        fast_failures: int
        memo_hits: int

        def schedule_one(self, info: QueuedPodInfo) -> Decision: ...

    def _after_attempt(
        self,
        info: QueuedPodInfo,
        run: Run | None,
        stamp: float,
        record: Callable[[Decision], None],
        stop: Callable[[], bool] | None,
    ) -> None:
        """After ``info``'s attempt (it was popped with ``run``, at tick ``stamp``): its run
        fails with it or breaks, and the pods right behind it that fail alike join."""
        kept = self._kept_outcome
        key = pod_key(info.pod)
        failed_kept = (
            kept is not None
            and self._pool.get(key) is info
            and self.memo is not None
            and info.memo_key is not None
            and info.memo_key[0] is info.pod
            and self.memo.outcomes.get(info.memo_key[1]) is kept
        )
        if run is not None:
            if failed_kept and run.key == info.memo_key[1]:  # type: ignore[index]
                assert kept is not None
                self._fail_run(info, key, run, kept)
            else:
                self._break_run(key, run, stamp)
                run = None
        if failed_kept:
            assert kept is not None and info.memo_key is not None
            self._absorb(info, key, kept, info.memo_key[1], record, stop)

    def _fail_run(self, leader: QueuedPodInfo, key: str, run: Run, outcome: MemoOutcome) -> None:
        n = len(run.infos)
        run.failures += 1
        run.outcome = outcome
        self.fast_decisions += n
        self.fast_failures += n
        self.memo_hits += n
        if outcome.draws:
            for _ in range(n):
                replay(self.rng, outcome.draws)
        self._pool.reserve(n)  # the members' places, right after the leader's

    def _break_run(self, key: str, run: Run, stamp: float) -> None:
        """The leader's attempt went otherwise: its members go back to the active queue one by
        one, at the ticks they held right after the leader's ``stamp``."""
        leader = self._runs.pop(key)
        leader.run = None
        run.settle(self._last)
        for i, info in enumerate(run.infos):
            info.timestamp = stamp + i + 1
            self._active.push(info)

    def _absorb(
        self,
        leader: QueuedPodInfo,
        key: str,
        outcome: MemoOutcome,
        memo_key: bytes,
        record: Callable[[Decision], None],
        stop: Callable[[], bool] | None,
    ) -> None:
        """The pods next in the active queue, at the ticks right after the run's, whose
        attempts the memo answers as the leader's failure: each is tried (its own attempt)
        and joins the run."""
        memo = self.memo
        assert memo is not None
        run = leader.run
        expected = leader.timestamp + 1 + (len(run.infos) if run is not None else 0)
        active = self._active
        while len(active):
            top = active.peek()
            if top.timestamp != expected or top.run is not None:
                return
            if memo.key(top.pod, top) != memo_key:
                return
            if stop is not None and stop():
                return
            active.pop()
            decision = self.schedule_one(top)
            record(decision)
            top_key = pod_key(top.pod)
            if self._kept_outcome is not outcome or self._pool.get(top_key) is not top:
                return  # not answered as the leader (not expected): it stays on its own
            self._pool.hide(top_key)
            if run is None:
                run = leader.run = Run(memo_key, [], [], [])
                self._runs[key] = leader
            run.keys.append(top_key)
            run.infos.append(top)
            run.joined.append(run.failures)
            expected += 1

    def _flatten_runs(self) -> None:
        """Dissolve every run: each member gets what it is owed and its own entry where its
        leader stands (in the pool right after it, or in the active queue at its tick)."""
        if not self._runs:
            return
        runs, self._runs = self._runs, {}
        placed: list[tuple[str, QueuedPodInfo, int]] = []
        for key, leader in runs.items():
            run = leader.run
            assert run is not None
            leader.run = None
            run.settle(self._last)
            if self._pool.get(key) is leader:
                seq = self._pool.seq_of(key)
                for i, (member_key, info) in enumerate(zip(run.keys, run.infos, strict=True)):
                    info.timestamp = leader.timestamp + i + 1
                    placed.append((member_key, info, seq + i + 1))
            else:  # in the active queue
                for i, info in enumerate(run.infos):
                    info.timestamp = leader.timestamp + i + 1
                    self._active.push(info)
        if placed:
            self._pool.place(placed)


__all__ = ["PendingRuns", "Run"]
