"""The ``wait`` step: the clock moves on; the taint manager's evictions that fall due
meanwhile happen at their times, in order, the controllers and the scheduler settling after
each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from topospread.simulator.clock import format_duration
from topospread.simulator.simulation import Simulation, ran_out_text
from topospread.simulator.timeline_steps.arguments import duration_arg
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
        fired = sim.fire_due_evictions(until, self.where)
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
        return StepResult([f"{head}: {'; '.join(parts)}"])


__all__ = ["Wait"]
