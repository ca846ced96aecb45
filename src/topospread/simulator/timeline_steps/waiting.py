"""The ``wait`` step: the clock moves on; what falls due meanwhile happens at its time, in
order — the taint manager's evictions, nodes that finish starting up — the controllers and
the scheduler settling after each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from topospread.api.types import Taint
from topospread.simulator.clock import format_duration
from topospread.simulator.simulation import Simulation, ran_out_text
from topospread.simulator.timeline_steps.arguments import duration_arg
from topospread.simulator.timeline_steps.node_status import (
    NOT_READY_TAINTS,
    READY_FALSE_STARTING,
    READY_TRUE,
    ready_condition,
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
        start = sim.now
        until = sim.now + self.nanos
        fired = []
        started: list[str] = []
        for at, names in sim.cloud.due_startups(until):
            fired += sim.fire_due_evictions(at, self.where)
            sim.now = max(sim.now, at)
            for name in names:
                started += finish_startup(sim, name)
            sim.settle_within_step(self.where)
        fired += sim.fire_due_evictions(until, self.where)
        sim.now = until
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
        over = [
            f"stockout over at {format_duration(s.until)}: {s.what()} can be provisioned again"
            for s in sim.cloud.ended(start, until)
        ]
        return StepResult([f"{head}: {'; '.join(parts)}", *started, *over])


def finish_startup(sim: Simulation, name: str) -> list[str]:
    """The node's kubelet is up: its not-ready taints go and it posts Ready (unless it was
    lost meanwhile: then only the taints go, and it stays as the loss left it)."""
    info = sim.cluster.get(name)
    if info is None:  # removed while it started
        return []
    node = info.node
    gone = [t for t in node.spec.taints if _not_ready(t)]
    starting = ready_condition(node) == READY_FALSE_STARTING
    what = f"started up at {format_duration(sim.now)}, Ready" if starting else "started up"
    return set_taints(sim, node, [], gone, what, READY_TRUE if starting else None)


def _not_ready(taint: Taint) -> bool:
    """One of the not-ready taints, whatever its timeAdded."""
    return any(taint.key == t.key and taint.effect == t.effect for t in NOT_READY_TAINTS)


__all__ = ["Wait", "finish_startup"]
