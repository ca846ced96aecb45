"""kube-controller-manager's taint eviction controller, acting on a simulation: what it does
when a node's NoExecute taints change, when a pod lands on a tainted node, when the initial
nodes' taints arrived before the clock started, and when scheduled evictions fall due.

Its decisions per pod and its timed work are simulator/tainteviction.py's; this module carries
them out on the simulation (deleting pods, settling between evictions) and words what it did
for the reports. Its timed work (``Simulation.taint_evictions``), the clock (``now``) and its
0 (``epoch``) stay on the simulation, which snapshots carry whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import msgspec

from topospread.api.types import Node, Pod, Taint
from topospread.errors import ManifestError
from topospread.simulator.clock import format_duration
from topospread.simulator.controllers.common import parse_time
from topospread.simulator.tainteviction import (
    Outcome,
    ScheduledEviction,
    get_no_execute_taints,
    process_pod_on_node,
)

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import TimelineScenario

# The clock's 0 when the input records no time (Unix time 0: timestamps then read as the time
# since the timeline's start).
DEFAULT_EPOCH: Final = 0


@dataclass(slots=True)
class TaintChanges:
    """What the taint manager did after a node's NoExecute taints changed."""

    evicted: list[str] = field(default_factory=list)
    scheduled: dict[int, list[str]] = field(default_factory=dict)  # firing time: pods
    cancelled: list[str] = field(default_factory=list)

    def text(self) -> list[str]:
        """Report fragments: evicted now, evictions scheduled (by time), evictions cancelled."""
        parts = [f"evicted {count_text(self.evicted)}"] if self.evicted else []
        for at, keys in sorted(self.scheduled.items()):
            parts.append(f"eviction of {count_text(keys)} due at {format_duration(at)}")
        if self.cancelled:
            parts.append(f"cancelled the scheduled eviction of {count_text(self.cancelled)}")
        return parts


class TaintEvictionController:
    """The taint manager of one simulation (``Simulation.taint_manager``).

    Upstream: Controller (pkg/controller/tainteviction/taint_eviction.go, v1.35)
    """

    __slots__ = ("sim",)

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def node_taints_changed(self, node: Node, at: int | None = None) -> TaintChanges:
        """The taint manager after the node's NoExecute taints changed (at ``at``, now by
        default): evict the pods that do not tolerate them, schedule or keep the eviction of
        those that tolerate them for a while, cancel it for the others (all of them when the
        node has no NoExecute taint left).

        Upstream: handleNodeUpdate (pkg/controller/tainteviction/taint_eviction.go, v1.35)
        """
        sim = self.sim
        now = sim.now if at is None else at
        taints = get_no_execute_taints(node.spec.taints)
        pods = sorted(sim.cluster.infos[node.metadata.name].pods, key=lambda p: p.key)
        queue = sim.taint_evictions
        out = TaintChanges()
        for pod in pods:
            was_scheduled = pod.key in queue.work
            if not taints:
                outcome = "forever"
                queue.cancel(pod.key)
            else:
                outcome = self.process(pod, taints, now)
            if outcome == "evict":
                out.evicted.append(pod.key)
                sim.delete_pod(pod)
            elif outcome == "scheduled":
                fire_at = queue.work[pod.key].fire_at
                out.scheduled.setdefault(fire_at, []).append(pod.key)
            elif outcome == "forever" and was_scheduled:
                out.cancelled.append(pod.key)
        return out

    def process(self, pod: Pod, taints: Sequence[Taint], now: int) -> Outcome:
        sim = self.sim
        return process_pod_on_node(
            sim.taint_evictions,
            pod,
            taints,
            now,
            comparison=sim.features.enable_taint_toleration_comparison_operators,
        )

    def pod_bound(self, pod: Pod) -> None:
        """A pod bound (mid-timeline) to a node with NoExecute taints it tolerates: its
        eviction is scheduled from now; one due at once fires in the same settle round.

        Upstream: handlePodUpdate (taint_eviction.go, v1.35)
        """
        sim = self.sim
        taints = get_no_execute_taints(sim.cluster.infos[pod.spec.node_name].node.spec.taints)
        if taints and self.process(pod, taints, sim.now) == "evict":
            # The scheduler does not bind a pod to a taint it does not tolerate; a pod created
            # with spec.nodeName may be.
            sim.taint_evictions.work[pod.key] = ScheduledEviction(
                pod.key, pod.spec.node_name, sim.now, sim.now, ()
            )

    def start(self) -> None:
        """The taint manager on the initial nodes, replayed as it acted while their NoExecute
        taints arrived (in timeAdded order, none before the clock's 0 when it has none), then
        the evictions due by the clock's 0. What it did goes into ``start_events``."""
        sim = self.sim
        for info in sim.cluster.list():
            node = info.node
            taints = get_no_execute_taints(node.spec.taints)
            if not taints:
                continue
            added = sorted(
                (min(self._taint_time(t), 0), i)
                for i, t in enumerate(node.spec.taints)
                if t in taints
            )
            for at in sorted({t for t, _ in added}):
                spec_taints = [node.spec.taints[i] for t, i in added if t <= at]
                partial = msgspec.structs.replace(
                    node, spec=msgspec.structs.replace(node.spec, taints=spec_taints)
                )
                changes = self.node_taints_changed(partial, at)
                if changes.evicted:
                    sim.start_events.append(
                        f"{node.metadata.name}: {changes.text()[0]}: they do not tolerate its "
                        "NoExecute taints"
                    )
        sim.start_events += [
            f"{ran_out_text(keys, taints)} at {format_duration(at)}"
            for at, taints, keys in self.fire_due_evictions(0, sim.scenario.source)
        ]
        scheduled: dict[tuple[str, int], list[str]] = {}
        for work in sim.taint_evictions.work.values():
            scheduled.setdefault((work.node, work.fire_at), []).append(work.pod)
        for (name, at), keys in sorted(scheduled.items()):
            sim.start_events.append(
                f"{name}: eviction of {count_text(sorted(keys))} due at {format_duration(at)}"
            )

    def _taint_time(self, taint: Taint) -> int:
        """When the taint manager saw the taint: its timeAdded on the clock, else the start."""
        if taint.time_added is None:
            return 0
        added = parse_time(taint.time_added)
        assert added is not None  # checked when the node was read (check_taint_times)
        return added - self.sim.epoch

    def fire_due_evictions(
        self, until: int, where: str
    ) -> list[tuple[int, tuple[str, ...], list[str]]]:
        """Carry out the scheduled evictions due by ``until``, each at its time (the clock
        moves there, and the controllers and the scheduler settle before the next falls due);
        returns the evicted pods by time and by the taints tolerated for a while."""
        sim = self.sim
        queue = sim.taint_evictions
        groups: dict[tuple[int, tuple[str, ...]], list[str]] = {}
        while (at := queue.next_due(until)) is not None:
            sim.now = max(sim.now, at)
            for work in queue.pop_due(at):
                pod = sim.pods.get(work.pod)
                if pod is None:
                    continue
                sim.delete_pod(pod)
                groups.setdefault((at, work.taints), []).append(work.pod)
            if sim.started:
                sim.settle_within_step(where)
        return [(at, taints, keys) for (at, taints), keys in sorted(groups.items())]


def ran_out_text(keys: Sequence[str], taints: Sequence[str]) -> str:
    """``evicted 2 pods whose tolerations of <taints> ran out (<pods>)``."""
    if not taints:  # bound to a node whose NoExecute taint it does not tolerate
        return f"evicted {count_text(keys)}"
    n = len(keys)
    whose = f"whose toleration{'s' if n != 1 else ''} of {', '.join(taints)} ran out"
    return f"evicted {n} pod{'s' if n != 1 else ''} {whose} ({', '.join(keys)})"


def count_text(keys: Sequence[str]) -> str:
    if not keys:
        return "no pods"
    return f"{len(keys)} pod{'s' if len(keys) != 1 else ''} ({', '.join(keys)})"


def check_taint_times(node: Node, where: str) -> None:
    """Check that every taint's timeAdded is a time, as the API server decodes it."""
    for i, taint in enumerate(node.spec.taints):
        if taint.time_added is None:
            continue
        if parse_time(taint.time_added) is None:
            raise ManifestError(
                f"{where} (Node {node.metadata.name}): spec.taints[{i}].timeAdded: Invalid "
                f'value: "{taint.time_added}": expected an RFC 3339 time such as '
                "2025-01-01T00:00:00Z"
            )


def clock_epoch(scenario: TimelineScenario) -> int:
    """The clock's 0: the latest time the input records — its nodes' NoExecute taints'
    timeAdded, its nodes' and objects' creationTimestamps, its pods' startTime — else
    DEFAULT_EPOCH. A cluster is read no earlier than the last thing that happened in it, so
    the objects the simulation creates are younger than every input object (ReplicaSets
    scale down the youngest pods first; autoscalers hold back young pods and count young
    nodes as starting). Unreadable times are left to the node checks (``check_taint_times``)
    and count as the zero time."""
    templates = [g.template for g in scenario.groups.values()]
    stamps: list[str | None] = []
    for node in [n for _, n in scenario.nodes] + templates:
        stamps.extend(taint.time_added for taint in get_no_execute_taints(node.spec.taints))
    for _, node in scenario.nodes:
        stamps.append(node.metadata.creation_timestamp)
    for _, obj in scenario.objects:
        metadata = getattr(obj, "metadata", None)
        stamps.append(getattr(metadata, "creation_timestamp", None))
        if isinstance(obj, Pod):
            stamps.append(obj.status.start_time)
    times = [t for s in set(stamps) if s and (t := parse_time(s)) is not None]
    return max(times, default=DEFAULT_EPOCH)


__all__ = [
    "DEFAULT_EPOCH",
    "TaintChanges",
    "TaintEvictionController",
    "check_taint_times",
    "clock_epoch",
    "count_text",
    "ran_out_text",
]
