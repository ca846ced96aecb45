"""SchedulingGates: a pod with spec.schedulingGates waits outside the active queue.

Upstream: pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go (v1.35)
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.types import Pod
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.framework.status import SUCCESS, Code, Status, new_status

NAME: Final = "SchedulingGates"

# Followed by the gate names as Go prints a []string: "[gate1 gate2]".
WAITING_FOR_GATES_PREFIX: Final = "waiting for scheduling gates: "


class SchedulingGates:
    """Keeps gated pods from being scheduled until every gate is removed."""

    @property
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        """Upstream: SchedulingGates.PreEnqueue (scheduling_gates.go, v1.35)."""
        gates = pod.spec.scheduling_gates
        if not gates:
            return SUCCESS
        names = " ".join(g.name for g in gates)
        return new_status(Code.UnschedulableAndUnresolvable, f"{WAITING_FOR_GATES_PREFIX}[{names}]")


def new(args: Any | None, handle: Handle, features: Features) -> SchedulingGates:
    """SchedulingGates takes no args. Upstream: New (scheduling_gates.go, v1.35)."""
    return SchedulingGates()
