"""What every timeline step is: its action's YAML name, a parser that checks its arguments
before anything runs, the change it makes to a Simulation, and the name reports give it."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self

from topospread.errors import ManifestError, TopospreadError
from topospread.simulator.drain import DrainResult

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation


@dataclass(slots=True)
class StepResult:
    """What a step's own change did: report lines, and the drains it ran (one per node)."""

    events: list[str]
    drains: list[DrainResult] = field(default_factory=list)


# A rebalance planner: (simulation, the step's options as written, where) -> report lines.
Rebalancer = Callable[["Simulation", Mapping[str, Any], str], list[str]]


@dataclass(frozen=True, slots=True)
class StepEnv:
    """What the layers above the simulator lend the steps that need them (the simulator may
    not import them): ``rebalance`` plans evictions on copies of the cluster
    (analysis/rebalance.py). The simulator alone runs with none."""

    rebalance: Rebalancer | None = None


SIMULATOR_ONLY: Final = StepEnv()


@dataclass(frozen=True, slots=True, kw_only=True)
class Step(ABC):
    """One timeline entry, parsed. ``args`` is the action's argument as written (reports name
    a step by it and ``wait`` echoes it); ``where`` names the entry in errors, e.g.
    ``t.yaml: timeline[2] (drain)``; ``index`` is its place in the timeline and ``name`` the
    name it was given (empty: ``describe`` names it)."""

    action: ClassVar[str]
    # The step moves the clock: reports then show each step's time.
    moves_clock: ClassVar[bool] = False

    args: Any
    where: str
    index: int = 0
    name: str = ""

    @classmethod
    @abstractmethod
    def parse(cls, args: Any, where: str) -> Self:
        """The step from its argument as written, its shape checked (references to nodes,
        groups and workloads are resolved when it runs); errors name ``where`` and the field."""

    @abstractmethod
    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        """Make the step's own change (before the controllers and the scheduler react, which
        ``sim.settle`` then lets them do) and say what it did."""

    def run(self, sim: Simulation, env: StepEnv = SIMULATOR_ONLY) -> StepResult:
        """``apply``, with every error naming the step."""
        try:
            return self.apply(sim, env)
        except TopospreadError as err:
            if str(err).startswith(self.where):
                raise
            raise type(err)(f"{self.where}: {err}") from err

    def describe(self) -> str:
        """The step's name when it was given none: the action with the names it was given
        (``cordon a-1, a-2``, ``loseZone zone-c``), else the action alone."""
        return describe_args(self.action, self.args)

    def title(self) -> str:
        """The name reports print: the one given, else ``describe()``."""
        return self.name or self.describe()

    def placed(self, index: int, name: str) -> Self:
        """The step at its place in a timeline, under the name it was given."""
        return dataclasses.replace(self, index=index, name=name)

    @classmethod
    def entry(cls, args: Any, name: str = "") -> dict[str, Any]:
        """A timeline entry for this action (``{name, <action>: args}``), as a timeline file
        writes it: what sweep replays and reports."""
        return {"name": name, cls.action: args} if name else {cls.action: args}


def describe_args(action: str, args: Any) -> str:
    """``action`` with the name or names of ``args``; the action alone for other args."""
    if isinstance(args, str):
        return f"{action} {args}"
    if isinstance(args, list) and all(isinstance(a, str) for a in args):
        return f"{action} {', '.join(args)}"
    return action


def unsupported(where: str) -> ManifestError:
    """A step that needs a layer above the simulator, run by the simulator alone."""
    return ManifestError(f"{where}: the simulator alone cannot carry out this step")


__all__ = [
    "SIMULATOR_ONLY",
    "Rebalancer",
    "Step",
    "StepEnv",
    "StepResult",
    "describe_args",
    "unsupported",
]
