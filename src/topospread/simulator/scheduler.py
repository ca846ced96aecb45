"""The scheduler loop: a priority queue of pods, one scheduling cycle each, binding on success.

Upstream: pkg/scheduler/scheduler.go, schedule_one.go (scheduleOne, handleSchedulingFailure)
and backend/queue (PriorityQueue). Time is logical: a pod that fails goes to the unschedulable
pool with the plugins that rejected it; when a later binding could help (a pod matching its
topology spread or pod affinity selectors was bound) it returns to the active queue behind the
pods already there, as upstream's queueing hints move it. Gated pods wait until their gates go.

Preemption evicts at once: when PostFilter nominates a node, its victims are already deleted
from the cluster, the pod carries the nomination (``status.nominatedNodeName``) and goes back
to the active queue, where its priority puts it before the pods it may displace.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.api.storage import StorageObject
from topospread.api.types import DO_NOT_SCHEDULE, Node, Pod, PodDisruptionBudget
from topospread.cluster.state import ClusterState
from topospread.framework.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import PostFilterResult, QueuedPodInfo, QueueingHint
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
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.plugins.defaultpreemption.plugin import NAME as DEFAULT_PREEMPTION
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.plugins.podtopologyspread.common import NAME as POD_TOPOLOGY_SPREAD
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.plugins.queuesort import PrioritySort, pod_priority
from topospread.simulator.checkpoint import IndexedDict
from topospread.simulator.fastpath import FastFailure, FastPath, FastResult
from topospread.simulator.fastpath.detail import FastDetail
from topospread.simulator.fastpath.dry_run import PreemptionKernel
from topospread.simulator.storage_events import storage_event_may_help

# kube-scheduler lists and watches pods with the field selector
# status.phase!=Succeeded,status.phase!=Failed (newPodInformer, pkg/scheduler/scheduler.go): a
# pod in a terminal phase is neither in its cache (it takes no resources, counts in no spread
# domain) nor ever queued, though kubectl, the controllers and so our inputs still show it.
TERMINAL_POD_PHASES: Final = frozenset({"Succeeded", "Failed"})


def is_terminal(pod: Pod) -> bool:
    """Whether the pod has finished (phase Succeeded or Failed): kube-scheduler never sees it."""
    return pod.status.phase in TERMINAL_POD_PHASES


@dataclass(slots=True)
class Decision:
    """The outcome of one scheduling attempt, with what reports and explain need."""

    pod: Pod
    node: str | None
    attempt: int
    message: str | None = None
    # ``namespace/name`` of the pods this attempt's preemption evicted, most important first.
    preempted: list[str] = field(default_factory=list)
    # A fast attempt's detail as the fast path's columns: ``feasible``, ``scores``,
    # ``plugin_scores`` and ``reasons`` are built from it when first read (reports write it
    # without building them: ``FastDetail.fragment``).
    columns: FastDetail | None = None
    _feasible: list[str] = field(default_factory=list, init=False, repr=False)
    _scores: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict, init=False, repr=False)
    _reasons: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)

    def _materialise(self) -> None:
        columns = self.columns
        if columns is not None:
            self.columns = None
            self._feasible, self._scores, self._plugin_scores, self._reasons = columns.materialise()

    @property
    def feasible(self) -> list[str]:
        """The feasible nodes the search kept, sorted by name."""
        self._materialise()
        return self._feasible

    @feasible.setter
    def feasible(self, value: list[str]) -> None:
        self._materialise()
        self._feasible = value

    @property
    def scores(self) -> dict[str, int]:
        """Each scored node's total, in the search's visiting order."""
        self._materialise()
        return self._scores

    @scores.setter
    def scores(self, value: dict[str, int]) -> None:
        self._materialise()
        self._scores = value

    @property
    def plugin_scores(self) -> dict[str, dict[str, int]]:
        """Each scored node's weighted score per plugin that scored."""
        self._materialise()
        return self._plugin_scores

    @plugin_scores.setter
    def plugin_scores(self, value: dict[str, dict[str, int]]) -> None:
        self._materialise()
        self._plugin_scores = value

    @property
    def reasons(self) -> dict[str, list[str]]:
        """Each rejected node's reasons as reports show them."""
        self._materialise()
        return self._reasons

    @reasons.setter
    def reasons(self, value: dict[str, list[str]]) -> None:
        self._materialise()
        self._reasons = value

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"

    @property
    def nominated_node(self) -> str | None:
        """The node a failed attempt left the pod nominated to (``status.nominatedNodeName``
        after it: set by this attempt's preemption, or kept from an earlier one); None for an
        attempt that bound the pod, or when no node is nominated."""
        if self.node is not None:
            return None
        return self.pod.status.nominated_node_name or None

    def attempt_json(self) -> dict[str, Any]:
        """The attempt without its per-node detail, as every report records it: its number,
        the node it bound to, the nominated node and the victims a failed attempt's
        preemption left, and its FailedScheduling (or binding) message."""
        return {
            "attempt": self.attempt,
            "node": self.node,
            "nominatedNode": self.nominated_node,
            "message": self.message,
            "preempted": self.preempted,
        }

    def to_json(self) -> dict[str, Any]:
        """``attempt_json`` with the attempt's per-node detail: feasible nodes, scores per
        node and per plugin, and each rejected node's reasons."""
        return {
            **self.attempt_json(),
            "feasible": self.feasible,
            "scores": self.scores,
            "pluginScores": self.plugin_scores,
            "reasons": self.reasons,
        }


class _ActiveQueue:
    """A heap ordered by the profile's QueueSort ``less``, ties by arrival.

    NOTE: with PrioritySort the heap holds (-priority, timestamp) keys instead of calling
    ``less``: the same strict order (timestamps are unique), without a Python call per
    comparison.
    """

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        key: Callable[[QueuedPodInfo], tuple[int, float]] | None = None,
    ) -> None:
        self._less = less
        self._key = key
        self._heap: list[Any] = []
        self._seq = 0

    def push(self, info: QueuedPodInfo) -> None:
        if self._key is not None:
            self._seq += 1
            heapq.heappush(self._heap, (self._key(info), self._seq, info))
        else:
            heapq.heappush(self._heap, _Entry(info, self._less))

    def pop(self) -> QueuedPodInfo:
        item = heapq.heappop(self._heap)
        info: QueuedPodInfo = item[2] if self._key is not None else item.info
        return info

    def __len__(self) -> int:
        return len(self._heap)

    def remove(self, key: str) -> QueuedPodInfo | None:
        """Take a pod out of the queue (it was deleted); rebuilds the heap, which is rare."""
        found: QueuedPodInfo | None = None
        kept = []
        for item in self._heap:
            info: QueuedPodInfo = item[2] if self._key is not None else item.info
            if found is None and pod_key(info.pod) == key:
                found = info
            else:
                kept.append(item)
        if found is not None:
            heapq.heapify(kept)
            self._heap = kept
        return found

    def infos(self) -> list[QueuedPodInfo]:
        """The queued pods, in no particular order."""
        if self._key is not None:
            return [item[2] for item in self._heap]
        return [entry.info for entry in self._heap]


class _UnschedulablePool(IndexedDict[str, QueuedPodInfo]):
    """The unschedulable pods by key, in arrival order, also grouped by everything the
    queueing hints for pod and node events read of them (``group_of``): the pods of one
    Deployment share a group, so an event asks each hint once per group, not once per pod.

    The grouping is an index only: iteration, lookups and order are the dict's.
    """

    def __init__(self, group_of: Callable[[str, QueuedPodInfo], Hashable]) -> None:
        super().__init__()
        self._group_of = group_of
        self.groups: dict[Hashable, dict[str, QueuedPodInfo]] = {}
        self._group: dict[str, Hashable] = {}
        self._seq: dict[str, int] = {}
        self._uids: dict[str, set[str]] = {}
        self._counter = 0

    def __setitem__(self, key: str, info: QueuedPodInfo) -> None:
        if key in self:
            self._leave(key)  # the dict keeps its place, and so does the order
        else:
            self._counter += 1
            self._seq[key] = self._counter
        super().__setitem__(key, info)
        self._join(key, info)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._leave(key)
        del self._seq[key]

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            info = self[key]
            del self[key]
            return info
        if default:
            return default[0]
        raise KeyError(key)

    def regroup(self, key: str) -> None:
        """The pod of ``key`` was rewritten in place: file it again."""
        if key in self:
            self._leave(key)
            self._join(key, self[key])

    def in_order(self, keys: Iterable[str]) -> list[str]:
        """``keys`` (members) in the order the dict iterates them."""
        return sorted(keys, key=self._seq.__getitem__)

    def same_pod_candidates(self, pod: Pod) -> list[str]:
        """Members that may be ``pod`` itself (same UID, or same namespace and name)."""
        out = list(self._uids.get(pod.metadata.uid, ())) if pod.metadata.uid else []
        key = pod_key(pod)
        if key in self and key not in out:
            out.append(key)
        return out

    def _join(self, key: str, info: QueuedPodInfo) -> None:
        group = self._group_of(key, info)
        self._group[key] = group
        self.groups.setdefault(group, {})[key] = info
        if info.pod.metadata.uid:
            self._uids.setdefault(info.pod.metadata.uid, set()).add(key)

    def _leave(self, key: str) -> None:
        group = self._group.pop(key)
        members = self.groups[group]
        info = members.pop(key)
        if not members:
            del self.groups[group]
        uid = info.pod.metadata.uid
        if uid:
            keys = self._uids[uid]
            keys.discard(key)
            if not keys:
                del self._uids[uid]


def _priority_sort_key(info: QueuedPodInfo) -> tuple[int, float]:
    return (-pod_priority(info.pod), info.timestamp)


@dataclass(slots=True)
class _Entry:
    info: QueuedPodInfo
    less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]

    def __lt__(self, other: _Entry) -> bool:
        return self.less(self.info, other.info)


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
        self._clock = -1
        sort_key = (
            _priority_sort_key if isinstance(first.queue_sort_plugins[0], PrioritySort) else None
        )
        self.active = _ActiveQueue(first.queue_sort_less(), sort_key)
        self.unschedulable = _UnschedulablePool(self._hint_group)
        self.gated: dict[str, tuple[QueuedPodInfo, str]] = {}
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

    def _tick(self) -> float:
        """The queue's clock: a strictly increasing timestamp per arrival."""
        self._clock += 1
        return float(self._clock)

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
        now = self._tick()
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
        self._on_assigned_pod_add(bound)
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
        info.timestamp = self._tick()
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
        self._on_assigned_pod_delete(victim)

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

    def _spread_hint(self, info: QueuedPodInfo, old: Pod | None, new: Pod | None) -> bool:
        """Whether PodTopologySpread's queueing hint requeues a pod it rejected for this pod
        event; a profile without the plugin (or with a custom one) keeps requeueing."""
        if POD_TOPOLOGY_SPREAD not in info.unschedulable_plugins:
            return False
        plugin = self._spread_plugin(info)
        if plugin is None:
            return True
        return plugin.is_schedulable_after_pod_change(info.pod, old, new) is QueueingHint.Queue

    def _spread_plugin(self, info: QueuedPodInfo) -> PodTopologySpread | None:
        """The pod's profile's PodTopologySpread, whose hints apply (None: a custom plugin
        under that name, whose pods keep being retried)."""
        fwk = self.framework_for(info.pod)
        plugin = fwk.plugins.get(POD_TOPOLOGY_SPREAD) if fwk is not None else None
        return plugin if isinstance(plugin, PodTopologySpread) else None

    def _hint_group(self, key: str, info: QueuedPodInfo) -> Hashable:
        """What the pod and node queueing hints read of a waiting pod: its rejecting plugins,
        profile and namespace, its hard spread constraints as PodTopologySpread resolves them,
        and the selectors of its required pod affinity. A pod whose constraints come from the
        profile's hard default constraints (which depend on the Services and controllers of
        the moment) stays in a group of its own."""
        pod = info.pod
        plugins = info.unschedulable_plugins
        spread: Hashable = None
        if POD_TOPOLOGY_SPREAD in plugins:
            plugin = self._spread_plugin(info)
            if plugin is None:
                spread = "custom"
            elif not pod.spec.topology_spread_constraints and not plugin.system_defaulted:
                return ("own", key)
            else:
                try:
                    spread = tuple(plugin.get_constraints(pod, DO_NOT_SCHEDULE))
                except SelectorError:
                    spread = "unparsable"
        affinity: bytes = b""
        if "InterPodAffinity" in plugins:
            pa = pod.spec.affinity.pod_affinity if pod.spec.affinity is not None else None
            if pa is not None:
                affinity = msgspec.json.encode(
                    [
                        t.label_selector
                        for t in pa.required_during_scheduling_ignored_during_execution
                    ]
                )
        return (plugins, pod.spec.scheduler_name, pod.metadata.namespace, spread, affinity)

    def _move_where(self, helped: Callable[[QueuedPodInfo], bool], changed: Pod) -> list[str]:
        """The unschedulable pods ``helped`` says the event helps, in pool order: asked once
        per group, and on its own for each pod that may be ``changed`` itself."""
        pool = self.unschedulable
        own = set(pool.same_pod_candidates(changed))
        moved = [key for key in own if helped(pool[key])]
        for members in pool.groups.values():
            first = next((k for k in members if k not in own), None)
            if first is not None and helped(members[first]):
                moved.extend(k for k in members if k not in own)
        return pool.in_order(moved)

    def _requeue(self, keys: Iterable[str]) -> None:
        for key in keys:
            info = self.unschedulable.pop(key)
            info.timestamp = self._tick()
            self.active.push(info)

    def _on_assigned_pod_add(self, pod: Pod) -> None:
        """Move back the unschedulable pods that the new pod could help.

        Upstream: the queueing hints of PodTopologySpread and InterPodAffinity for an
        AssignedPodAdd event (a pod matching one of the pending pod's selectors).
        """
        self._requeue(
            self._move_where(
                lambda info: self._spread_hint(info, None, pod) or _could_help(info, pod), pod
            )
        )

    def _on_assigned_pod_delete(self, pod: Pod) -> None:
        """Move back the unschedulable pods a deleted pod could help: those rejected by a
        plugin that registers for pod deletion (resources, ports, pod (anti-)affinity, spread).

        Upstream: EventsToRegister of those plugins for an AssignedPodDelete event.
        """
        helped = {
            "NodeResourcesFit",
            "NodePorts",
            "InterPodAffinity",
            "VolumeRestrictions",
            "NodeVolumeLimits",
        }
        self._requeue(
            self._move_where(
                lambda info: (
                    pod_key(info.pod) != pod_key(pod)
                    and bool(
                        info.unschedulable_plugins & helped or self._spread_hint(info, pod, None)
                    )
                ),
                pod,
            )
        )

    # Cluster events from outside the scheduler (the timeline simulator's controllers and
    # node changes), as the scheduler's informers would deliver them.

    def delete_assigned_pod(self, pod: Pod) -> bool:
        """A bound pod was deleted (evicted, scaled down, its node removed): it leaves the
        cluster and the unschedulable pods it could help move back to the active queue."""
        if not self.cluster.unbind(pod):
            return False
        self.nominator.delete(pod)
        self._on_assigned_pod_delete(pod)
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
        unschedulable pods it may help move back to the active queue.

        A pod only PodTopologySpread rejected moves when the plugin's queueing hint says the
        change may help (a node carrying every topology key of its constraints appears,
        disappears or changes a topology value or its taints). Any other pod moves: upstream
        asks each rejecting plugin's hint (NodeAdd, UpdateNodeLabel, UpdateNodeTaint,
        NodeDelete for the node filters); moving them all is a superset: a pod the change did
        not help fails again with the same message, and nothing that could now bind is left
        waiting. Without ``old`` and ``new`` the change is unknown and every pod moves.
        """
        pool = self.unschedulable
        if old is None and new is None:
            moved = list(pool)
        else:
            moved = [
                key
                for members in pool.groups.values()
                if self._node_change_may_help(next(iter(members.values())), old, new)
                for key in members
            ]
        self._requeue(sorted(moved, key=lambda k: pool[k].timestamp))

    def on_storage_change(self, obj: StorageObject) -> None:
        """A storage object was added or updated: the unschedulable pods a volume plugin
        rejected and whose hint says it may help move back (``storage_events``)."""
        pool = self.unschedulable
        moved = [
            key
            for key, info in pool.items()
            if storage_event_may_help(info.pod, info.unschedulable_plugins, obj)
        ]
        self._requeue(sorted(moved, key=lambda k: pool[k].timestamp))

    def _node_change_may_help(
        self, info: QueuedPodInfo, old: Node | None, new: Node | None
    ) -> bool:
        if info.unschedulable_plugins != {POD_TOPOLOGY_SPREAD}:
            return True
        plugin = self._spread_plugin(info)
        if plugin is None:
            return True
        return plugin.is_schedulable_after_node_change(info.pod, old, new) is QueueingHint.Queue

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


def _could_help(info: QueuedPodInfo, added: Pod) -> bool:
    """InterPodAffinity's side of an AssignedPodAdd: a required affinity term selects the pod
    (a superset of its hint). PodTopologySpread's side is its own hint (``_spread_hint``)."""
    pending = info.pod
    if "InterPodAffinity" in info.unschedulable_plugins:
        affinity = pending.spec.affinity
        terms = (
            affinity.pod_affinity.required_during_scheduling_ignored_during_execution
            if (affinity is not None and affinity.pod_affinity is not None)
            else []
        )
        for term in terms:
            if _selects(term.label_selector, added.metadata.labels):
                return True
    return False


def _selects(selector: Any, labels: Mapping[str, str]) -> bool:
    try:
        return label_selector_as_selector(selector).matches(labels)
    except SelectorError:
        return False
