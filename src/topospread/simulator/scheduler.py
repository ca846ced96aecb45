"""The scheduler loop: a priority queue of pods, one scheduling cycle each, binding on success.

Upstream: pkg/scheduler/scheduler.go, schedule_one.go (scheduleOne, handleSchedulingFailure)
and eventhandlers.go. A pod that fails goes to the unschedulable pool with the plugins that
rejected it; when a later binding could help (a pod matching its topology spread or pod
affinity selectors was bound) it returns to the active queue behind the pods already there, as
upstream's queueing hints move it (simulator/scheduling_queue.py). Gated pods wait until their
gates go. An attempt's outcome is a ``Decision`` (simulator/decision.py).

Preemption evicts at once: when PostFilter nominates a node, its victims are already deleted
from the cluster, the pod carries the nomination (``status.nominatedNodeName``) and goes back
to the active queue, where its priority puts it before the pods it may displace.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from topospread.api.storage import StorageObject
from topospread.api.types import Node, Pod, PodDisruptionBudget
from topospread.cluster.state import ClusterState
from topospread.framework.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import PostFilterResult, QueuedPodInfo
from topospread.framework.nominator import Nominator, ge_nominated_pods, pod_key
from topospread.framework.runtime import Framework, FrameworkHandle, Registry
from topospread.framework.schedule_one import (
    FitError,
    NoNodesAvailableError,
    SchedulingAlgorithm,
    SchedulingError,
    TieBreak,
    statuses_by_node,
)
from topospread.framework.status import Code, Status, format_reasons
from topospread.framework.types import NodeInfo
from topospread.plugins.defaultpreemption.plugin import NAME as DEFAULT_PREEMPTION
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.plugins.queuesort import PrioritySort
from topospread.simulator.decision import Decision, is_terminal
from topospread.simulator.fastpath import FastFailure, FastPath, FastResult
from topospread.simulator.fastpath.dry_run import PreemptionKernel
from topospread.simulator.scheduling_queue import SchedulingQueue, priority_sort_key


class Scheduler:
    """kube-scheduler over a ClusterState: enqueue pods, then ``run()`` until nothing binds.

    It is also the cluster client of its frameworks' handles: preemption deletes victims and
    clears nominations through it (``delete_pod``, ``clear_nominated_node_name``).
    ``pod_disruption_budgets`` are the PDBs preemption tries not to violate.
    """

    def __init__(
        self,
        cluster: ClusterState,
        config: SchedulerConfig,
        registry: Registry,
        features: Features,
        *,
        seed: int = 0,
        tie_break: TieBreak = "random",
        percentage_of_nodes_to_score: int | None = None,
        pod_disruption_budgets: Iterable[PodDisruptionBudget] = (),
        fast: bool = True,
        detail: bool = True,
    ) -> None:
        """``fast`` lets the vectorised path (simulator/fastpath/) decide the attempts it
        supports, and preemption's dry run give victims back by NodeResourcesFit's arithmetic
        where it can (off: the reference path throughout); ``detail`` records every node's
        scores and rejection reasons in Decisions."""
        self.cluster = cluster
        self.detail = detail
        self.config = config
        self.features = features
        # One seeded source for every random draw: host selection and preemption's offset.
        rng = random.Random(seed)
        self.nominator = Nominator()
        self.pdbs = list(pod_disruption_budgets)
        self.frameworks: dict[str, Framework] = {}
        for profile in config.profiles:
            handle = FrameworkHandle(
                cluster,
                cluster,
                features,
                nominator=self.nominator,
                rng=rng,
                client=self,
            )
            # One list shared by every profile's handle, so that a caller replacing the budgets
            # in place (``simulate``'s disruption controller) is seen by preemption.
            handle.pdbs = self.pdbs
            self.frameworks[profile.scheduler_name] = Framework(profile, registry, handle, features)
        first = self.frameworks[config.profiles[0].scheduler_name]
        self.algorithm = SchedulingAlgorithm(
            config.percentage_of_nodes_to_score,
            rng=rng,
            tie_break=tie_break,
            percentage_override=percentage_of_nodes_to_score,
        )
        sort_key = (
            priority_sort_key if isinstance(first.queue_sort_plugins[0], PrioritySort) else None
        )
        self.queue = SchedulingQueue(first.queue_sort_less(), sort_key, self.framework_for)
        # The queue's parts, read directly on the hot path (the same objects, never replaced).
        self.active = self.queue.active
        self.unschedulable = self.queue.unschedulable
        self.gated = self.queue.gated
        self.ignored: dict[str, tuple[Pod, str]] = {}
        self.last: dict[str, Decision] = {}
        # Evicted pods: key -> (the pod as it was bound, the key of the pod that preempted it).
        self.preempted: dict[str, tuple[Pod, str]] = {}
        self._victims: list[str] | None = None  # the running attempt's Decision.preempted
        self.fast: dict[str, FastPath] = {}
        self._names: tuple[Sequence[NodeInfo] | None, list[str]] = (None, [])
        for fwk in self.frameworks.values():
            preemption = fwk.plugins.get(DEFAULT_PREEMPTION)
            if isinstance(preemption, DefaultPreemption):
                preemption.reprieve_by_fit = fast
        if fast:
            for name, fwk in self.frameworks.items():
                path = FastPath(cluster, fwk, features)
                if path.supported:
                    self.fast[name] = path
                    self.nominator.listeners.append(path)
                    preemption = fwk.plugins.get(DEFAULT_PREEMPTION)
                    if isinstance(preemption, DefaultPreemption):
                        # The screened nodes' dry run all at once, over the path's table.
                        preemption.victims_kernel = PreemptionKernel(path, cluster)
                else:
                    cluster.listeners.remove(path)
        self.fast_decisions = 0  # attempts the fast path decided, failures included
        self.fast_failures = 0
        self.fast_nominated = 0  # of those, attempts that met nominated pods
        # Preemption's dry run skips the nodes the fast path's vectors rule out
        # (FastPath.preemption_screen); off, it dry-runs every node (tests compare the two).
        self.screen_preemption = True

    def framework_for(self, pod: Pod) -> Framework | None:
        return self.frameworks.get(pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME)

    def add(self, pod: Pod) -> None:
        """Enqueue an unbound pod (Upstream: PriorityQueue.Add with PreEnqueue checks)."""
        key = f"{pod.metadata.namespace}/{pod.metadata.name}"
        if is_terminal(pod):
            self.ignored[key] = (
                pod,
                f"the pod is {pod.status.phase}: kube-scheduler does not watch pods in a "
                "terminal phase",
            )
            return
        fwk = self.framework_for(pod)
        if fwk is None:
            self.ignored[key] = (
                pod,
                f'no profile has schedulerName "{pod.spec.scheduler_name}"; '
                "kube-scheduler leaves this pod to another scheduler",
            )
            return
        now = self.queue.tick()
        info = QueuedPodInfo(pod=pod, timestamp=now, initial_attempt_timestamp=now)
        status = fwk.run_pre_enqueue_plugins(pod)
        if not status.is_success:
            info.gated = True
            self.gated[key] = (info, f"{status.plugin}: {status.message}")
            return
        self.active.push(info)
        # A pod that arrives nominated keeps its nomination (upstream's ModeNoop).
        self.nominator.add(pod)

    def run(self, on_decision: Callable[[Decision], None] | None = None) -> list[Decision]:
        """Schedule until the active queue is empty; returns every attempt's decision."""
        decisions = []
        while len(self.active):
            decision = self.schedule_one(self.active.pop())
            decisions.append(decision)
            if on_decision is not None:
                on_decision(decision)
        return decisions

    def schedule_one(self, info: QueuedPodInfo) -> Decision:
        """One scheduling cycle and, on success, the binding cycle.

        Upstream: scheduleOne / schedulingCycle / bindingCycle (schedule_one.go, v1.35)
        """
        pod = info.pod
        info.attempts += 1
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
            if not fwk.post_filter_plugins:
                return self._fit_failure(
                    fwk, info, decision, state, FitError(pod, len(nodes), diagnosis), nodes
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
    ) -> Decision:
        """No node fits: PostFilter (preemption) over every node's status, then the pod waits
        as unschedulable or, when preemption made room, goes straight back to the queue.
        ``unschedulable`` and ``victimless`` are what the fast path knows of the statuses
        (see ``statuses_by_node``).

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
        if fwk.post_filter_plugins:
            self._victims = decision.preempted
            try:
                nominated, status = fwk.run_post_filter_plugins(state, pod, statuses)
            finally:
                self._victims = None
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
        return decision

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
        self.last[decision.key] = decision
        self.unschedulable.pop(decision.key, None)
        self.queue.assigned_pod_added(bound)
        return decision

    def _nominate(self, info: QueuedPodInfo, node_name: str | None) -> None:
        """Apply a scheduling attempt's nominating info: ``None`` keeps the pod's nomination,
        a name replaces it, ``""`` clears it (as upstream patches status.nominatedNodeName).

        Upstream: handleSchedulingFailure, AddNominatedPod and updatePod (schedule_one.go,
        v1.35)
        """
        if node_name is not None and node_name != info.pod.status.nominated_node_name:
            info.pod = _with_nominated_node_name(info.pod, node_name)
        self.nominator.add(info.pod, node_name)

    def _requeue_preemptor(self, info: QueuedPodInfo, decision: Decision) -> None:
        """Preemption made room: the pod goes straight back to the active queue.

        Upstream parks it among the unschedulable pods until its victims' deletion events move
        it back; here the victims are gone already, so it returns at once.
        """
        self.last[decision.key] = decision
        self.unschedulable.pop(decision.key, None)
        info.unschedulable_plugins = frozenset()
        info.timestamp = self.queue.tick()
        self.active.push(info)

    # ClusterClient: the writes preemption makes.

    def delete_pod(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Evict a preemption victim: it leaves the cluster at once.

        This is a simplification: upstream adds a DisruptionTarget condition and deletes the
        victim gracefully, and until the kubelet has stopped it the victim keeps its node's
        resources (the preemptor waits as a nominated pod meanwhile). Here the deletion is
        complete before the preemptor's next attempt.
        """
        self.cluster.unbind(victim)
        self.nominator.delete(victim)
        key = pod_key(victim)
        self.preempted[key] = (victim, pod_key(preemptor))
        if self._victims is not None:
            self._victims.append(key)
        self.queue.assigned_pod_deleted(victim)

    def clear_nominated_node_name(self, pod: Pod) -> None:
        """Drop a pending pod's nomination (the queued pod's status too)."""
        self.nominator.delete(pod)
        key = pod_key(pod)
        queued = [self.unschedulable.get(key), *self.active.infos()]
        for info in queued:
            if info is not None and pod_key(info.pod) == key:
                info.pod = _with_nominated_node_name(info.pod, "")
                self.unschedulable.regroup(key)
                break

    def _failed(self, info: QueuedPodInfo, plugins: Iterable[str], decision: Decision) -> None:
        info.unschedulable_plugins = frozenset(plugins)
        self.unschedulable[decision.key] = info
        self.last[decision.key] = decision

    # Cluster events from outside the scheduler (the timeline simulator's controllers and
    # node changes), as the scheduler's informers would deliver them.

    def delete_assigned_pod(self, pod: Pod) -> bool:
        """A bound pod was deleted (evicted, scaled down, its node removed): it leaves the
        cluster and the unschedulable pods it could help move back to the active queue."""
        if not self.cluster.unbind(pod):
            return False
        self.nominator.delete(pod)
        self.queue.assigned_pod_deleted(pod)
        return True

    def delete_pending_pod(self, key: str) -> bool:
        """An unbound pod was deleted: it leaves whichever queue or pool holds it.

        Upstream: PriorityQueue.Delete (backend/queue/scheduling_queue.go, v1.35)
        """
        info = self.unschedulable.pop(key, None) or self.active.remove(key)
        gated = self.gated.pop(key, None)
        ignored = self.ignored.pop(key, None)
        self.last.pop(key, None)
        pod = info.pod if info is not None else gated[0].pod if gated is not None else None
        if pod is not None:
            self.nominator.delete(pod)
        return info is not None or gated is not None or ignored is not None

    def update_pending_pod(self, pod: Pod) -> None:
        """An unbound pod was rewritten (a controller adopted or released it): the queued copy
        follows, keeping its place."""
        key = pod_key(pod)
        held = [self.unschedulable.get(key), *self.active.infos()]
        gated = self.gated.get(key)
        if gated is not None:
            held.append(gated[0])
        for info in held:
            if info is not None and pod_key(info.pod) == key:
                info.pod = pod
                self.unschedulable.regroup(key)
                return

    def on_node_change(self, old: Node | None = None, new: Node | None = None) -> None:
        """A node was added (``new``), updated (``old`` and ``new``) or deleted (``old``): the
        unschedulable pods it may help move back to the active queue
        (``SchedulingQueue.node_changed``)."""
        self.queue.node_changed(old, new)

    def on_storage_change(self, obj: StorageObject) -> None:
        """A storage object was added or updated: the unschedulable pods a volume plugin
        rejected and whose hint says it may help move back (``storage_events``)."""
        self.queue.storage_changed(obj)

    def pending_of(self, key: str) -> Decision | tuple[Pod, str] | None:
        """One pod's entry of ``pending()`` (where a key is in several pools, the later one
        there wins here too), without building the others'."""
        if key in self.ignored:
            return self.ignored[key]
        if key in self.gated:
            info, why = self.gated[key]
            return (info.pod, why)
        if key in self.unschedulable:
            return self.last[key]
        return None

    def pending(self) -> dict[str, Decision | tuple[Pod, str]]:
        """Pods not bound at the end, with their last decision or why they never ran."""
        out: dict[str, Decision | tuple[Pod, str]] = {}
        for key in self.unschedulable:
            out[key] = self.last[key]
        for key, (info, why) in self.gated.items():
            out[key] = (info.pod, why)
        for key, (pod, why) in self.ignored.items():
            out[key] = (pod, why)
        return out


def _with_node_name(pod: Pod, node: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def _with_nominated_node_name(pod: Pod, node: str) -> Pod:
    status = msgspec.structs.replace(pod.status, nominated_node_name=node)
    return msgspec.structs.replace(pod, status=status)


__all__ = ["Decision", "Scheduler", "is_terminal"]
