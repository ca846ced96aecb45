"""The registry of timeline steps: each action's YAML name to its step class, and the parser
of one timeline entry. A new kind of step is a Step subclass registered here (or, from a
package of its own, with ``register``); nothing else dispatches on action names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from topospread.errors import ManifestError
from topospread.simulator.timeline_steps.failures import (
    LoseNode,
    LoseZone,
    RestoreNode,
    RestoreZone,
)
from topospread.simulator.timeline_steps.nodes import (
    Cordon,
    Drain,
    RemoveNode,
    TaintNodes,
    Uncordon,
    UntaintNodes,
)
from topospread.simulator.timeline_steps.provisioning import AddNodes, Stockout
from topospread.simulator.timeline_steps.rebalancing import Rebalance
from topospread.simulator.timeline_steps.step import SIMULATOR_ONLY, Step, StepResult
from topospread.simulator.timeline_steps.waiting import Wait
from topospread.simulator.timeline_steps.workloads import (
    Apply,
    DeletePods,
    DeleteWorkload,
    Rollout,
    Scale,
)

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

# In the order error messages list them.
STEPS: dict[str, type[Step]] = {}


def register(step: type[Step]) -> type[Step]:
    """Add a kind of step to the registry under its ``action``."""
    if step.action in STEPS:
        raise ValueError(f"timeline action {step.action!r} is already registered")
    STEPS[step.action] = step
    return step


for _step in (
    Apply,
    Scale,
    Rollout,
    Cordon,
    Uncordon,
    Drain,
    TaintNodes,
    UntaintNodes,
    AddNodes,
    RemoveNode,
    LoseZone,
    RestoreZone,
    LoseNode,
    RestoreNode,
    DeletePods,
    Wait,
    Rebalance,
    Stockout,
    DeleteWorkload,
):
    register(_step)


def parse_step(raw: Any, index: int, source: str) -> Step:
    """Timeline entry ``index`` of ``source``: ``{name?: str, <action>: args}``, its
    arguments checked by the action's step class."""
    where = f"{source}: timeline[{index}]"
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping {{name?: str, <action>: args}}")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise ManifestError(f"{where}: name: expected a string")
    actions = [k for k in raw if k != "name"]
    if len(actions) != 1:
        found = ", ".join(map(str, actions)) or "none"
        raise ManifestError(
            f"{where}: expected exactly one action ({', '.join(STEPS)}); found {found}"
        )
    action = str(actions[0])
    step = STEPS.get(action)
    if step is None:
        raise ManifestError(
            f"{where}: {action}: unknown action; the actions are {', '.join(STEPS)}"
        )
    return step.parse(raw[action], f"{where} ({action})").placed(index, name)


def apply_step(sim: Simulation, step: Step) -> StepResult:
    """Carry out one step's own change with the simulator alone (a ``rebalance`` needs the
    analysis: analysis/simulate.py's ``carry_out``); errors name the step."""
    return step.run(sim, SIMULATOR_ONLY)


__all__ = ["STEPS", "apply_step", "parse_step", "register"]
