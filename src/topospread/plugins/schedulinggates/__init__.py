"""plugins/schedulinggates: SchedulingGates."""

from topospread.plugins.schedulinggates.scheduling_gates import (
    NAME,
    WAITING_FOR_GATES_PREFIX,
    SchedulingGates,
    new,
)

__all__ = ["NAME", "WAITING_FOR_GATES_PREFIX", "SchedulingGates", "new"]
