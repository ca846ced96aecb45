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

from collections.abc import Callable, Iterable, Sequence

from topospread.api.storage import StorageObject
from topospread.api.types import Node, Pod, PodDisruptionBudget
from topospread.cluster.state import ClusterState
from topospread.framework.config import DEFAULT_SCHEDULER_NAME, SchedulerConfig
from topospread.framework.features import Features
from topospread.framework.handle import FrameworkHandle
from topospread.framework.interface import QueuedPodInfo
from topospread.framework.nominator import Nominator, pod_key
from topospread.framework.runtime import Framework, Registry
from topospread.framework.schedule_one import (
    SchedulingAlgorithm,
    TieBreak,
)
from topospread.framework.types import NodeInfo
from topospread.plugins.defaultpreemption.plugin import NAME as DEFAULT_PREEMPTION
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.plugins.queuesort import PrioritySort
from topospread.simulator import failure_memo
from topospread.simulator.decision import Decision, is_terminal
from topospread.simulator.failure_memo import DrawLog, FailureMemo, MemoOutcome
from topospread.simulator.fastpath import FastPath
from topospread.simulator.fastpath.dry_run import PreemptionKernel
from topospread.simulator.pending_runs import PendingRuns
from topospread.simulator.scheduling_cycle import SchedulingCycle, with_nominated_node_name
from topospread.simulator.scheduling_queue import (
    ActiveQueue,
    SchedulingQueue,
    UnschedulablePods,
    priority_sort_key,
)


class Scheduler(SchedulingCycle, PendingRuns):
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
        memo: bool | None = None,
    ) -> None:
        """``fast`` lets the vectorised path (simulator/fastpath/) decide the attempts it
        supports, and preemption's dry run give victims back by NodeResourcesFit's arithmetic
        where it can (off: the reference path throughout); ``detail`` records every node's
        scores and rejection reasons in Decisions; ``memo`` (with ``fast``; None:
        ``failure_memo.ENABLED``) repeats a failed attempt of the fast path for a pod of the
        same key while nothing changed (simulator/failure_memo.py)."""
        self.cluster = cluster
        self.detail = detail
        self.config = config
        self.features = features
        # One seeded source for every random draw: host selection and preemption's offset.
        self.rng = rng = DrawLog(seed)
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
        # The queue's parts, read directly on the hot path (the same objects, never replaced);
        # others read them as ``active``, ``unschedulable`` and ``last``, runs dissolved.
        self._active = self.queue.active
        self._pool = self.queue.unschedulable
        self.gated = self.queue.gated
        self.ignored: dict[str, tuple[Pod, str]] = {}
        self._last: dict[str, Decision] = {}
        # Leaders of runs of pending pods by key (simulator/pending_runs.py).
        self._runs: dict[str, QueuedPodInfo] = {}
        self._kept_outcome: MemoOutcome | None = None
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
        # Of the failures, those repeated from the memo (simulator/failure_memo.py).
        self.memo_hits = 0
        self.memo: FailureMemo | None = None
        if fast and self.fast and (failure_memo.ENABLED if memo is None else memo):
            self.memo = FailureMemo()
            cluster.listeners.append(self.memo)
            self.nominator.listeners.append(self.memo)
        self._recording: int | None = None
        self._kept = False
        # Preemption's dry run skips the nodes the fast path's vectors rule out
        # (FastPath.preemption_screen); off, it dry-runs every node (tests compare the two).
        self.screen_preemption = True

    @property
    def active(self) -> ActiveQueue:
        """The active queue, every run of pending pods dissolved (simulator/pending_runs.py)."""
        self._flatten_runs()
        return self._active

    @property
    def unschedulable(self) -> UnschedulablePods:
        """The unschedulable pods, every run dissolved."""
        self._flatten_runs()
        return self._pool

    @property
    def last(self) -> dict[str, Decision]:
        """Each pod's last attempt, every run dissolved."""
        self._flatten_runs()
        return self._last

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
        self._active.push(info)
        # A pod that arrives nominated keeps its nomination (upstream's ModeNoop).
        self.nominator.add(pod)

    def run(
        self,
        on_decision: Callable[[Decision], None] | None = None,
        *,
        decisions: list[Decision] | None = None,
        stop: Callable[[], bool] | None = None,
        runs: bool = False,
    ) -> list[Decision]:
        """Schedule until the active queue is empty, or ``stop()`` says so between two attempts;
        returns every attempt's decision, appended to ``decisions`` if given (where the
        attempts decided so far outlive an exception: Ctrl-C).

        ``runs``: pods that fail alike right behind another ride with it
        (simulator/pending_runs.py), and their repeated failures make no Decision of their
        own: for a caller that reads only what the attempts did, not each Decision."""
        if decisions is None:
            decisions = []
        if not runs:
            self._flatten_runs()
        # The memo lives within one run: what changes between runs (storage, budgets,
        # namespaces, workloads) is told to no listener.
        memo = self.memo
        if memo is not None:
            memo.clear()
        active = self._active
        runs = runs and memo is not None

        def record(decision: Decision) -> None:
            decisions.append(decision)
            if on_decision is not None:
                on_decision(decision)

        try:
            while len(active) and not (stop is not None and stop()):
                info = active.pop()
                run, stamp = info.run, info.timestamp
                record(self.schedule_one(info))
                if runs and (run is not None or self._kept_outcome is not None):
                    self._after_attempt(info, run, stamp, record, stop)
        finally:
            if memo is not None:
                memo.clear()
        return decisions

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
                info.pod = with_nominated_node_name(info.pod, "")
                self.unschedulable.regroup(key)
                break

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


__all__ = ["Decision", "Scheduler", "is_terminal"]
