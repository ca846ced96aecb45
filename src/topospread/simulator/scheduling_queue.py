"""The scheduling queue: the active queue (a heap in the profile's QueueSort order), the
unschedulable pods (grouped by what the queueing hints read of them) and the gated pods, and the
moves that cluster events make from the unschedulable pods back to the active queue, as the
rejecting plugins' queueing hints decide.

Time is logical: every arrival in the active queue takes the next tick of the queue's clock, so
a pod that comes back goes behind the pods already there.

Upstream: PriorityQueue (pkg/scheduler/backend/queue/scheduling_queue.go, v1.35) and the
queueing hints of PodTopologySpread and InterPodAffinity. No backoff queue: a pod a cluster event
may help goes straight back to the active queue.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from topospread.api.storage import StorageObject
from topospread.api.types import DO_NOT_SCHEDULE, Node, Pod
from topospread.framework.interface import QueuedPodInfo, QueueingHint
from topospread.framework.nominator import pod_key
from topospread.framework.runtime import Framework
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.plugins.podtopologyspread.common import NAME as POD_TOPOLOGY_SPREAD
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.plugins.queuesort import pod_priority
from topospread.plugins.tainttoleration.taint_toleration import NAME as TAINT_TOLERATION
from topospread.plugins.tainttoleration.taint_toleration import TaintToleration
from topospread.simulator.checkpoint import IndexedDict
from topospread.simulator.storage_events import storage_event_may_help


class ActiveQueue:
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

    def peek(self) -> QueuedPodInfo:
        """The pod ``pop`` would give, left in the queue."""
        item = self._heap[0]
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


class UnschedulablePods(IndexedDict[str, QueuedPodInfo]):
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

    # A run's members (simulator/pending_runs.py) hold the places right after their leader's.

    def reserve(self, n: int) -> None:
        """Skip ``n`` places: those of the members of the pod last filed."""
        self._counter += n

    def hide(self, key: str) -> None:
        """Take the pod last filed out again, its place kept (it joined a run)."""
        del self[key]

    def seq_of(self, key: str) -> int:
        return self._seq[key]

    def place(self, members: list[tuple[str, QueuedPodInfo, int]]) -> None:
        """File runs' members at the places they held (reserved), in place order."""
        for key, info, seq in members:
            dict.__setitem__(self, key, info)
            self._seq[key] = seq
            self._join(key, info)
        ordered = sorted(dict.items(self), key=lambda item: self._seq[item[0]])
        dict.clear(self)
        dict.update(self, ordered)

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


def priority_sort_key(info: QueuedPodInfo) -> tuple[int, float]:
    return (-pod_priority(info.pod), info.timestamp)


@dataclass(slots=True)
class _Entry:
    info: QueuedPodInfo
    less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]

    def __lt__(self, other: _Entry) -> bool:
        return self.less(self.info, other.info)


class SchedulingQueue:
    """The scheduler's queue (``Scheduler.queue``): ``active``, ``unschedulable``, ``gated``
    and the queueing hints' moves between them. ``framework_for`` gives a pod's profile, whose
    PodTopologySpread answers the spread hints.

    Upstream: PriorityQueue (backend/queue/scheduling_queue.go, v1.35)
    """

    def __init__(
        self,
        less: Callable[[QueuedPodInfo, QueuedPodInfo], bool],
        sort_key: Callable[[QueuedPodInfo], tuple[int, float]] | None,
        framework_for: Callable[[Pod], Framework | None],
    ) -> None:
        self.framework_for = framework_for
        self._clock = -1
        self.active = ActiveQueue(less, sort_key)
        self.unschedulable = UnschedulablePods(self._hint_group)
        self._group_ids: dict[Hashable, int] = {}  # the hint groups seen, numbered
        self.gated: dict[str, tuple[QueuedPodInfo, str]] = {}

    def tick(self) -> float:
        """The queue's clock: a strictly increasing timestamp per arrival."""
        self._clock += 1
        return float(self._clock)

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
        the moment) stays in a group of its own.

        Kept on ``info`` with the pod and plugins it was taken for (all it reads but the
        profiles, which stay): a Pending pod joins the pool again after every retry."""
        pod = info.pod
        plugins = info.unschedulable_plugins
        cached = info.hint_group
        if (
            cached is not None
            and cached[0] is pod
            and (cached[1] is plugins or cached[1] == plugins)
        ):
            return cached[2]
        # NOTE: filed under a number, one per distinct group: the group itself (the spread
        # constraints' dataclasses among it) was hashed again on every join and leave.
        group = self._hint_group_of(key, info)
        if not (isinstance(group, tuple) and group[:1] == ("own",)):  # one pod's: kept as is
            group = self._group_ids.setdefault(group, len(self._group_ids))
        info.hint_group = (pod, plugins, group)
        return group

    def _hint_group_of(self, key: str, info: QueuedPodInfo) -> Hashable:
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
        tolerations = (
            msgspec.json.encode(pod.spec.tolerations) if TAINT_TOLERATION in plugins else b""
        )
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
        return (
            plugins,
            pod.spec.scheduler_name,
            pod.metadata.namespace,
            spread,
            affinity,
            tolerations,
        )

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

    def requeue(self, keys: Iterable[str]) -> None:
        for key in keys:
            info = self.unschedulable.pop(key)
            info.timestamp = self.tick()
            if info.run is not None:  # its members take the next ticks
                self._clock += len(info.run.infos)
            self.active.push(info)

    def assigned_pod_added(self, pod: Pod) -> None:
        """Move back the unschedulable pods that the new pod could help.

        Upstream: the queueing hints of PodTopologySpread and InterPodAffinity for an
        AssignedPodAdd event (a pod matching one of the pending pod's selectors).
        """
        if not self.unschedulable:
            return  # no pod to move (every bind of a run that places each pod at once)
        self.requeue(
            self._move_where(
                lambda info: self._spread_hint(info, None, pod) or _could_help(info, pod), pod
            )
        )

    def assigned_pod_deleted(self, pod: Pod) -> None:
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
        self.requeue(
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

    def node_changed(self, old: Node | None, new: Node | None) -> None:
        """A node was added (``new``), updated (``old`` and ``new``) or deleted (``old``): the
        unschedulable pods it may help move back to the active queue.

        A pod only PodTopologySpread and TaintToleration rejected moves when one of their
        queueing hints says the change may help (PodTopologySpread: a node carrying every
        topology key of its constraints appears, disappears or changes a topology value or
        its taints; TaintToleration: a node added, or one it did not tolerate, now carries no
        taint it does not tolerate). Any other pod moves: upstream asks each rejecting
        plugin's hint (NodeAdd, UpdateNodeLabel, UpdateNodeTaint, NodeDelete for the node
        filters); moving them all is a superset: a pod the change did not help fails again
        with the same message, and nothing that could now bind is left waiting. Without
        ``old`` and ``new`` the change is unknown and every pod moves.
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
        self.requeue(sorted(moved, key=lambda k: pool[k].timestamp))

    def storage_changed(self, obj: StorageObject) -> None:
        """A storage object was added or updated: the unschedulable pods a volume plugin
        rejected and whose hint says it may help move back (``storage_events``)."""
        pool = self.unschedulable
        moved = [
            key
            for key, info in pool.items()
            if storage_event_may_help(info.pod, info.unschedulable_plugins, obj)
        ]
        self.requeue(sorted(moved, key=lambda k: pool[k].timestamp))

    def _node_change_may_help(
        self, info: QueuedPodInfo, old: Node | None, new: Node | None
    ) -> bool:
        """Whether a rejecting plugin's hint queues the pod: asked of PodTopologySpread and
        TaintToleration when only they rejected it (any other rejection: always)."""
        plugins = info.unschedulable_plugins
        if not plugins or not plugins <= _NODE_HINTED:
            return True
        for name in plugins:
            plugin: PodTopologySpread | TaintToleration | None
            if name == POD_TOPOLOGY_SPREAD:
                plugin = self._spread_plugin(info)
            else:
                fwk = self.framework_for(info.pod)
                found = fwk.plugins.get(TAINT_TOLERATION) if fwk is not None else None
                plugin = found if isinstance(found, TaintToleration) else None
            if plugin is None:
                return True
            if plugin.is_schedulable_after_node_change(info.pod, old, new) is QueueingHint.Queue:
                return True
        return False


# The plugins whose node-event queueing hints are asked (the others' rejections always move).
_NODE_HINTED = frozenset({POD_TOPOLOGY_SPREAD, TAINT_TOLERATION})


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


__all__ = ["ActiveQueue", "SchedulingQueue", "UnschedulablePods", "priority_sort_key"]
