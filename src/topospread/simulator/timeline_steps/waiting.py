"""The ``wait`` step: the clock moves on; what falls due meanwhile happens at its time, in
order — the taint manager's evictions, nodes that finish starting up, the autoscaler's loops
(simulator/autoscaling.py) — the controllers and the scheduler settling after each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from topospread.api.types import Taint
from topospread.errors import ManifestError
from topospread.simulator.clock import LAST_STAMP, format_duration
from topospread.simulator.controllers.common import format_time
from topospread.simulator.simulation import Simulation
from topospread.simulator.taint_eviction_controller import ran_out_text
from topospread.simulator.timeline_steps.arguments import duration_arg
from topospread.simulator.timeline_steps.node_status import (
    NOT_READY_TAINTS,
    READY_TRUE,
    is_starting,
    set_taints,
)
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class Wait(Step):
    """``wait``: a Go duration (``90s``, ``5m``, ``1h30m``), not negative."""

    action = "wait"
    moves_clock = True
    nanos: int

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        return cls(args=args, where=where, nanos=duration_arg(args, where, cls.action))

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        until = sim.now + self.nanos
        fired, started = advance(sim, until, self.where)
        head = f"waited {self.args} (now {format_duration(until)})"
        parts = [
            ran_out_text(keys, taints) + (f" at {format_duration(at)}" if at != until else "")
            for at, taints, keys in fired
        ]
        if not parts:
            parts.append("no eviction fell due")
        if sim.taint_evictions.work:
            n = len(sim.taint_evictions.work)
            next_at = min(w.fire_at for w in sim.taint_evictions.work.values())
            parts.append(
                f"{n} more eviction{'s' if n != 1 else ''} scheduled, the next at "
                f"{format_duration(next_at)}"
            )
        return StepResult([f"{head}: {'; '.join(parts)}", *started])


Fired = list[tuple[int, tuple[str, ...], list[str]]]


def advance(sim: Simulation, until: int, where: str) -> tuple[Fired, list[str]]:
    """Move the clock to ``until``, carrying out every timed event on the way in time order,
    the controllers and the scheduler settling after each: the taint manager's evictions,
    then nodes that finish starting up, then stock-outs that end (the cloud reads the clock;
    only the report says so), then the autoscaler's ticks (that order at equal times).
    Returns the evictions (by time and tolerated taints) and the other events' report lines,
    in time order."""
    if sim.epoch + until > LAST_STAMP:
        raise ManifestError(
            f"{where}: the clock would pass 9999-12-31T23:59:59Z, the last time a timestamp "
            f"can record (it started at {format_time(sim.epoch)}, the latest time the input "
            "records)"
        )
    fired: Fired = []
    lines: list[str] = []
    auto = sim.autoscaler
    ends = sim.cloud.ended(sim.now, until)
    while True:
        evict_at = sim.taint_evictions.next_due(until)
        start_at = min(sim.cloud.starting.values(), default=None)
        end_at = ends[0].until if ends else None
        tick_at = auto.next_tick(sim) if auto is not None else None
        due = [t for t in (evict_at, start_at, end_at, tick_at) if t is not None and t <= until]
        if not due:
            break
        at = min(due)
        if at == evict_at:
            fired += sim.fire_due_evictions(at, where)
            continue
        sim.now = max(sim.now, at)
        if at == end_at:
            s = ends.pop(0)
            lines.append(
                f"stockout over at {format_duration(at)}: {s.what()} can be provisioned again"
            )
            continue
        if at == start_at:
            for _, names in sim.cloud.due_startups(at):
                for name in names:
                    lines += finish_startup(sim, name)
        else:
            assert auto is not None
            # A balanced scale-up is one change per group with the same reason: said once.
            lines += dict.fromkeys(c.text() for c in auto.run(sim, where))
        sim.settle_within_step(where)
    sim.now = max(sim.now, until)
    return fired, lines


def settle_with_autoscaler(sim: Simulation, limit: int, where: str) -> int | None:
    """Let the clock run, the autoscaler acting at its ticks, until no pod is Pending and no
    node is starting up, for at most ``limit`` nanoseconds: how long it took (None if it did
    not happen within the limit). What sweep and check ask of a cluster with an autoscaler;
    the autoscaler's changes stay in ``sim.autoscaler.changes`` for the caller to take."""
    from topospread.simulator.autoscaling import pending_pods

    start = sim.now
    end = start + limit
    while True:
        if not pending_pods(sim) and not sim.cloud.starting:
            return sim.now - start
        auto = sim.autoscaler
        if sim.now >= end or auto is None:
            return None
        advance(sim, min(end, auto.next_tick(sim)), where)
        sim.settle(where)


def finish_startup(sim: Simulation, name: str) -> list[str]:
    """The node's kubelet is up: its not-ready taints go and it posts Ready (unless it was
    lost meanwhile: then only the taints go, and it stays as the loss left it)."""
    info = sim.cluster.get(name)
    if info is None:  # removed while it started
        return []
    node = info.node
    gone = [t for t in node.spec.taints if _not_ready(t)]
    starting = is_starting(node)
    what = f"started up at {format_duration(sim.now)}, Ready" if starting else "started up"
    return set_taints(sim, node, [], gone, what, READY_TRUE if starting else None)


def _not_ready(taint: Taint) -> bool:
    """One of the not-ready taints, whatever its timeAdded."""
    return any(taint.key == t.key and taint.effect == t.effect for t in NOT_READY_TAINTS)


__all__ = ["Wait", "advance", "finish_startup", "settle_with_autoscaler"]
