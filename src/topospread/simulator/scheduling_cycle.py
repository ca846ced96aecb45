"""One scheduling cycle and its binding cycle, the scheduler's hot path: the attempt on the fast
path (simulator/fastpath/) or through the plugins, the failure with preemption (PostFilter),
nomination, and the binding; a part of ``Scheduler`` (a mixin: every step reads and writes the
scheduler's cluster, queue, nominator and counters, and stays one attribute lookup away from
them).

Upstream: schedule_one.go (scheduleOne, schedulingCycle, bindingCycle, handleSchedulingFailure,
v1.35)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.interface import PostFilterResult, QueuedPodInfo
from topospread.framework.nominator import ge_nominated_pods
from topospread.framework.runtime import Framework
from topospread.framework.schedule_one import (
    FitError,
    NoNodesAvailableError,
    SchedulingError,
    statuses_by_node,
)
from topospread.framework.status import Code, Status, format_reasons
from topospread.framework.types import NodeInfo
from topospread.simulator.decision import Decision
from topospread.simulator.failure_memo import (
    DrawLog,
    FailureMemo,
    MemoOutcome,
    draws_replayable,
    replay,
)
from topospread.simulator.fastpath import FastFailure, FastPath, FastResult

if TYPE_CHECKING:
    from topospread.cluster.state import ClusterState
    from topospread.framework.nominator import Nominator
    from topospread.framework.schedule_one import SchedulingAlgorithm
    from topospread.simulator.scheduling_queue import (
        ActiveQueue,
        SchedulingQueue,
        UnschedulablePods,
    )


class SchedulingCycle:
    """The scheduling and binding cycles of ``Scheduler`` (simulator/scheduler.py)."""

    if TYPE_CHECKING:
        # What the cycles read and write of the scheduler (set in Scheduler.__init__).
        cluster: ClusterState
        detail: bool
        algorithm: SchedulingAlgorithm
        nominator: Nominator
        queue: SchedulingQueue
        _active: ActiveQueue
        _pool: UnschedulablePods
        _last: dict[str, Decision]
        fast: dict[str, FastPath]
        fast_decisions: int
        fast_failures: int
        fast_nominated: int
        memo_hits: int
        screen_preemption: bool
        rng: DrawLog
        memo: FailureMemo | None
        _names: tuple[Sequence[NodeInfo] | None, list[str]]
        _victims: list[str] | None
        # The memo's epoch when the running attempt started (None: the attempt's failure is
        # not kept), and whether its outcome was kept.
        _recording: int | None
        _kept: bool
        # The memo outcome the running attempt's failure was answered from or kept as (None:
        # neither), read by the runs of pending pods (simulator/pending_runs.py).
        _kept_outcome: MemoOutcome | None

        def framework_for(self, pod: Pod) -> Framework | None: ...

    def schedule_one(self, info: QueuedPodInfo) -> Decision:
        """One scheduling cycle and, on success, the binding cycle; or, where the pod's key
        failed on the fast path since anything changed, that failure again
        (simulator/failure_memo.py).

        Upstream: scheduleOne / schedulingCycle / bindingCycle (schedule_one.go, v1.35)
        """
        info.attempts += 1
        self._kept_outcome = None
        memo = self.memo
        if memo is None:
            return self._cycle(info)
        pod = info.pod
        fwk = self.framework_for(pod)
        assert fwk is not None
        path = self.fast.get(fwk.profile_name)
        self._recording = None
        if (
            path is not None
            and not len(self.nominator)
            and not pod.status.nominated_node_name
            and memo.profile_memoable(fwk, path)
        ):
            # NOTE: the key is taken only where a failure may be answered or kept: a pod
            # placed at its first attempt costs no encoding.
            outcome = memo.outcomes.get(memo.key(pod, info)) if memo.outcomes else None
            if outcome is not None and (
                self.algorithm.next_start_node_index % outcome.nodes == outcome.start
            ):
                return self._replay(info, outcome)
            self._recording = memo.epoch
        self._kept = False
        try:
            decision = self._cycle(info)
        finally:
            self._recording = None
        if not self._kept:
            memo.clear()  # anything but a kept failure may have changed what attempts read
        return decision

    def _replay(self, info: QueuedPodInfo, outcome: MemoOutcome) -> Decision:
        """A kept failure again: what its attempt did to the pod, the queue, the nomination,
        the search's start and the random source, and the Decision it returned."""
        decision = Decision(pod=info.pod, node=None, attempt=info.attempts)
        self.fast_decisions += 1
        self.fast_failures += 1
        self.memo_hits += 1
        self.algorithm.next_start_node_index = outcome.start
        replay(self.rng, outcome.draws)
        # NOTE: PostFilter's result goes to ``_nominate`` only when it named a node: a hit
        # comes with no pod nominated anywhere (``schedule_one``), where a result that names
        # none or keeps the pod's own leaves the pod and the nominator as they are (and an
        # outcome that nominated is never kept).
        if outcome.post_filter and outcome.nominated:
            self._nominate(info, outcome.nominated)
            decision.pod = info.pod
        if outcome.reasons is not None:
            # NOTE: shared by the decisions of the key (reports never mutate it).
            decision.reasons = outcome.reasons
        decision.message = outcome.message
        self._failed(info, outcome.plugins, decision)
        self._kept_outcome = outcome
        return decision

    def _cycle(self, info: QueuedPodInfo) -> Decision:
        """The attempt, on the fast path or through the plugins (``schedule_one``)."""
        pod = info.pod
        fwk = self.framework_for(pod)
        assert fwk is not None
        state = CycleState()
        nodes = self.cluster.list()
        decision = Decision(pod=pod, node=None, attempt=info.attempts)
        path = self.fast.get(fwk.profile_name)
        if path is not None and path.accepts(pod):
            done = self._fast_cycle(path, fwk, info, decision, state, nodes)
            if done is not None:
                return done
            state = CycleState()  # the reference cycle starts afresh
        try:
            result = self.algorithm.schedule_pod(fwk, state, pod, nodes)
        except FitError as err:
            return self._fit_failure(fwk, info, decision, state, err, nodes)
        except NoNodesAvailableError as err:
            decision.message = str(err)
            self._nominate(info, "")
            self._failed(info, set(), decision)
            return decision
        except SchedulingError as err:
            decision.message = err.status.message
            self._nominate(info, "")
            self._failed(info, set(), decision)
            return decision

        decision.feasible = sorted(result.feasible)
        decision.reasons = {
            name: format_reasons(s) for name, s in result.diagnosis.node_to_status.items()
        }
        for node_scores in result.scores:
            decision.scores[node_scores.name] = node_scores.total_score
            decision.plugin_scores[node_scores.name] = {
                ps.name: ps.score for ps in node_scores.scores
            }
        return self._bind(fwk, info, decision, state, result.suggested_host)

    def _fast_cycle(
        self,
        path: FastPath,
        fwk: Framework,
        info: QueuedPodInfo,
        decision: Decision,
        state: CycleState,
        nodes: Sequence[NodeInfo],
    ) -> Decision | None:
        """The attempt decided on the fast path, or None to leave it to the reference cycle.

        Nominated pods: where only NodeResourcesFit can tell a node holding them from one
        without (``FastPath.counts_nominated``), the vectors count their requests. Otherwise the
        nodes holding nominated pods of at least the pod's priority get the reference filters,
        over the state the reference PreFilter plugins write; so does the pod's own nominated
        node, tried alone first. Every other node's filter verdict is the vectors'.
        Upstream: findNodesThatFitPod and evaluateNominatedNode (schedule_one.go, v1.35)
        """
        pod = info.pod
        overrides: dict[str, Status] = {}
        prior: dict[str, Status] = {}
        prefiltered = False
        own = pod.status.nominated_node_name
        counted = bool(len(self.nominator)) and path.counts_nominated(pod)
        crowded = (
            self._nodes_with_ge_nominated_pods(pod, path.index)
            if len(self.nominator) and not counted
            else []
        )
        if crowded or own:
            pre_result, status, _ = fwk.run_pre_filter_plugins(state, pod, nodes)
            if not status.is_success or (
                pre_result is not None and pre_result.node_names is not None
            ):
                return None
            prefiltered = True
            own_info = self.cluster.get(own) if own else None
            if own_info is not None:
                status = fwk.run_filter_plugins_with_nominated_pods(state, pod, own_info)
                if status.code is Code.Error:
                    return None
                if status.is_success:
                    # The node preemption made room on: taken without a search or scores.
                    self.fast_decisions += 1
                    self.fast_nominated += 1
                    decision.feasible = [own]
                    return self._bind(fwk, info, decision, state, own)
                prior[own] = status
            for info_ in (self.cluster.get(name) for name in crowded):
                assert info_ is not None
                status = fwk.run_filter_plugins_with_nominated_pods(state, pod, info_)
                if status.code is Code.Error:
                    return None
                overrides[info_.name] = status
        fast = path.try_schedule(
            pod,
            self.algorithm,
            detail=self.detail,
            overrides=overrides,
            prior=prior,
            count_nominated=counted,
            state=state,
            prefiltered=prefiltered,
        )
        if isinstance(fast, FastResult):
            if not prefiltered:
                path.seed_state(state, pod, nodes)  # Reserve and PreBind read it
            self.fast_decisions += 1
            self.fast_nominated += prefiltered or counted
            decision.columns = fast.detail
            return self._bind(fwk, info, decision, state, fast.host)
        if isinstance(fast, FastFailure):
            self.fast_decisions += 1
            self.fast_failures += 1
            self.fast_nominated += prefiltered or counted
            diagnosis = fast.diagnosis
            record = self._recording
            sig = path.signature(pod) if record is not None else None
            if sig is None or sig.static.per_attempt:
                record = None  # the volume plugins read the pod's claims and name
            if not fwk.post_filter_plugins:
                return self._fit_failure(
                    fwk,
                    info,
                    decision,
                    state,
                    FitError(pod, len(nodes), diagnosis),
                    nodes,
                    record=record,
                )
            victimless = not path.preemption_may_find_victims(pod, fast)
            if not prefiltered and not victimless:
                # Preemption's dry run reads what the PreFilter plugins wrote.
                fwk.run_pre_filter_plugins(state, pod, nodes)
            elif not prefiltered:
                path.seed_state(state, pod, nodes)  # PostFilter reads it
            return self._fit_failure(
                fwk,
                info,
                decision,
                state,
                FitError(pod, len(nodes), diagnosis),
                nodes,
                unschedulable=path.unschedulable_positions(fast),
                victimless=victimless,
                screen=None
                if victimless or not self.screen_preemption
                else path.preemption_screen(pod, fast),
                record=record,
            )
        return None

    def _nodes_with_ge_nominated_pods(self, pod: Pod, known: Mapping[str, int]) -> list[str]:
        """The nodes where other pods of at least the pod's priority are nominated (what
        RunFilterPluginsWithNominatedPods adds before filtering)."""
        return [
            name
            for name, pods in self.nominator.by_node()
            if name in known and any(ge_nominated_pods(pods, pod))
        ]

    def _fit_failure(
        self,
        fwk: Framework,
        info: QueuedPodInfo,
        decision: Decision,
        state: CycleState,
        err: FitError,
        nodes: Sequence[NodeInfo],
        *,
        unschedulable: Sequence[int] | None = None,
        victimless: bool = False,
        screen: Sequence[int] | None = None,
        record: int | None = None,
    ) -> Decision:
        """No node fits: PostFilter (preemption) over every node's status, then the pod waits
        as unschedulable or, when preemption made room, goes straight back to the queue.
        ``unschedulable`` and ``victimless`` are what the fast path knows of the statuses
        (see ``statuses_by_node``); ``record``: the memo's epoch when the attempt started,
        to keep the failure under the pod's key (``_remember``).

        Upstream: the FitError branch of schedulingCycle and handleSchedulingFailure
        (schedule_one.go, v1.35)
        """
        pod = info.pod
        statuses = statuses_by_node(
            err.diagnosis,
            self._names_of(nodes),
            unschedulable=unschedulable,
            victimless=victimless,
            screen=screen,
        )
        nominated: PostFilterResult | None = None
        rng = self.rng
        before: object = None
        draws: list[int] = []
        if fwk.post_filter_plugins:
            self._victims = decision.preempted
            if record is not None:
                before = rng.getstate()
                rng.log = draws
            try:
                nominated, status = fwk.run_post_filter_plugins(state, pod, statuses)
            finally:
                self._victims = None
                rng.log = None
            if status.code is Code.Error or (
                record is not None and not draws_replayable(before, rng.getstate(), draws)
            ):
                record = None  # an error's aggregate follows the dry run's random order
            err.diagnosis.post_filter_msg = status.message
            # A result sets (or, empty, clears) the nomination; None keeps it.
            self._nominate(info, None if nominated is None else nominated.nominated_node_name)
            decision.pod = info.pod
        if self.detail:
            # Each distinct status formatted once (nodes share its list; reports never mutate it).
            formatted: dict[int, list[str]] = {}
            decision.reasons = {
                name: formatted.get(id(s)) or formatted.setdefault(id(s), format_reasons(s))
                for name, s in statuses.items()
            }
        decision.message = str(err)
        if nominated is not None and nominated.nominated_node_name and decision.preempted:
            self._requeue_preemptor(info, decision)
            return decision
        self._failed(info, err.diagnosis.unschedulable_plugins, decision)
        if record is not None and not decision.preempted:
            self._remember(record, info, pod, decision, err, nodes, fwk, nominated, draws)
        return decision

    def _remember(
        self,
        epoch: int,
        info: QueuedPodInfo,
        pod: Pod,
        decision: Decision,
        err: FitError,
        nodes: Sequence[NodeInfo],
        fwk: Framework,
        nominated: PostFilterResult | None,
        draws: list[int],
    ) -> None:
        """Keep a failed attempt's outcome under the pod's key, unless the memo was cleared
        while it ran or PostFilter nominated a node."""
        memo = self.memo
        target = None if nominated is None else nominated.nominated_node_name
        if memo is None or memo.epoch != epoch or target or not nodes:
            return
        memo.outcomes[memo.key(pod, info)] = kept = MemoOutcome(
            start=self.algorithm.next_start_node_index,
            nodes=len(nodes),
            message=decision.message or "",
            reasons=decision.reasons if self.detail else None,
            plugins=frozenset(err.diagnosis.unschedulable_plugins),
            post_filter=bool(fwk.post_filter_plugins),
            nominated=target,
            draws=tuple(draws),
        )
        self._kept = True
        self._kept_outcome = kept

    def _names_of(self, nodes: Sequence[NodeInfo]) -> list[str]:
        """The nodes' names, taken once per node list (the cluster makes a new list after
        any node change; failed attempts over thousands of nodes ask for it each time)."""
        seen, names = self._names
        if seen is not nodes:
            names = [n.name for n in nodes]
            self._names = (nodes, names)
        return names

    def _bind(
        self, fwk: Framework, info: QueuedPodInfo, decision: Decision, state: CycleState, host: str
    ) -> Decision:
        """The binding cycle for the chosen host (Upstream: bindingCycle, schedule_one.go)."""
        pod = info.pod
        for step in (fwk.run_reserve_plugins_reserve, fwk.run_permit_plugins):
            status = step(state, pod, host)
            if not status.is_success:
                fwk.run_reserve_plugins_unreserve(state, pod, host)
                decision.message = status.message
                self._nominate(info, "")
                self._failed(info, {status.plugin} if status.plugin else set(), decision)
                return decision
        status = fwk.run_pre_bind_plugins(state, pod, host)
        if status.is_success:
            status = fwk.run_bind_plugins(state, pod, host)
        if not status.is_success:
            fwk.run_reserve_plugins_unreserve(state, pod, host)
            decision.message = status.message
            self._nominate(info, "")
            self._failed(info, {status.plugin} if status.plugin else set(), decision)
            return decision
        # Upstream: assume() drops the pod's nomination once it has a node.
        self.nominator.delete(pod)
        bound = _with_node_name(pod, host)
        self.cluster.bind(bound, host)
        decision.pod = bound
        decision.node = host
        self._last[decision.key] = decision
        self._pool.pop(decision.key, None)
        self.queue.assigned_pod_added(bound)
        return decision

    def _nominate(self, info: QueuedPodInfo, node_name: str | None) -> None:
        """Apply a scheduling attempt's nominating info: ``None`` keeps the pod's nomination,
        a name replaces it, ``""`` clears it (as upstream patches status.nominatedNodeName).

        Upstream: handleSchedulingFailure, AddNominatedPod and updatePod (schedule_one.go,
        v1.35)
        """
        if node_name is not None and node_name != info.pod.status.nominated_node_name:
            info.pod = with_nominated_node_name(info.pod, node_name)
        self.nominator.add(info.pod, node_name)

    def _requeue_preemptor(self, info: QueuedPodInfo, decision: Decision) -> None:
        """Preemption made room: the pod goes straight back to the active queue.

        Upstream parks it among the unschedulable pods until its victims' deletion events move
        it back; here the victims are gone already, so it returns at once.
        """
        self._last[decision.key] = decision
        self._pool.pop(decision.key, None)
        info.unschedulable_plugins = frozenset()
        info.timestamp = self.queue.tick()
        self._active.push(info)

    def _failed(self, info: QueuedPodInfo, plugins: Iterable[str], decision: Decision) -> None:
        info.unschedulable_plugins = frozenset(plugins)
        key = decision.key
        self._pool[key] = info
        self._last[key] = decision


def _with_node_name(pod: Pod, node: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def with_nominated_node_name(pod: Pod, node: str) -> Pod:
    status = msgspec.structs.replace(pod.status, nominated_node_name=node)
    return msgspec.structs.replace(pod, status=status)


__all__ = ["SchedulingCycle", "with_nominated_node_name"]
