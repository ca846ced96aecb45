"""``simulate``: replay a timeline and report, after every step, where every pod is and how
each workload's topology spread constraints stand (the reports: analysis/reports.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from topospread.analysis import rebalance
from topospread.analysis.reports import StepReport, step_report
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import TimelineScenario
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult


@dataclass(frozen=True, slots=True)
class Interruption:
    """The step Ctrl-C cut (0: the initial state), of ``total`` steps: the report covers the
    steps before it, and nothing of it."""

    index: int
    name: str
    action: str
    total: int

    def to_json(self) -> dict[str, Any]:
        return {"step": self.index, "of": self.total, "name": self.name, "action": self.action}


@dataclass(slots=True)
class TimelineReport:
    source: str
    seed: int
    steps: list[StepReport]
    warnings: list[str]
    # The timeline moves the clock (a ``wait`` step): reports show the time.
    uses_clock: bool = False
    # Ctrl-C stopped the replay: the step it cut (``steps`` are those completed before it).
    interrupted: Interruption | None = None

    @property
    def total(self) -> int:
        """The timeline's steps, the initial state not counted (replayed or not)."""
        return self.interrupted.total if self.interrupted is not None else len(self.steps) - 1

    def to_json(self, zone_key: str | None = None) -> dict[str, Any]:
        """``zone_key``: the label the text's grids group nodes by (``--zone-key``)."""
        doc = {
            "scenario": self.source,
            "seed": self.seed,
            "steps": [s.to_json(zone_key) for s in self.steps],
            "warnings": self.warnings,
        }
        if self.interrupted is not None:
            doc["interrupted"] = self.interrupted.to_json()
        return doc


def simulate(
    scenario: TimelineScenario,
    *,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
    seed: int = 0,
    on_step: Callable[[StepReport, int], None] | None = None,
    fast: bool = True,
) -> TimelineReport:
    """Build the initial state, settle it, then run and settle every step in order.

    ``on_step(report, total)`` is called after each step (progress display). Ctrl-C
    (``KeyboardInterrupt``) stops the replay: the report holds the steps completed before it,
    and says which step it cut (that step's half-made changes are in no report).
    """
    sim = Simulation(scenario, registry=registry, features=features, seed=seed, fast=fast)
    total = len(scenario.steps) + 1
    reports: list[StepReport] = []
    interrupted = None
    try:
        initial = sim.settle(scenario.source)
        reports.append(
            step_report(sim, 0, "initial state", "start", list(sim.start_events), initial)
        )
        if on_step is not None:
            on_step(reports[-1], total)
        for step in scenario.steps:
            reports.append(replay_step(sim, step))
            if on_step is not None:
                on_step(reports[-1], total)
    except KeyboardInterrupt:
        cut = len(reports)  # a step is in ``reports`` once complete, and only then
        if cut < total:
            name, action = (
                ("initial state", "start")
                if cut == 0
                else (scenario.steps[cut - 1].title(), scenario.steps[cut - 1].action)
            )
            interrupted = Interruption(cut, name, action, total - 1)
    uses_clock = any(step.moves_clock for step in scenario.steps)
    return TimelineReport(
        scenario.source, seed, reports, list(scenario.warnings), uses_clock, interrupted
    )


def _rebalance(sim: Simulation, options: Mapping[str, Any], where: str) -> list[str]:
    """A ``rebalance`` step: plan its evictions on copies of the cluster
    (analysis/rebalance.py) and make them."""
    report = rebalance.plan_rebalance(sim, rebalance.step_options(options, where))
    if report.interrupted:  # the step is cut: none of it is done
        raise KeyboardInterrupt
    return rebalance.carry_out(sim, report, where)


# What the analysis lends the steps that the simulator cannot carry out alone.
ANALYSIS: Final = StepEnv(rebalance=_rebalance)


def carry_out(sim: Simulation, step: Step) -> StepResult:
    """Carry out one step's own change, with the analysis lent to the steps that need it."""
    return step.run(sim, ANALYSIS)


def settle_timeline(
    scenario: TimelineScenario, seed: int = 0, features: Features = DEFAULT_FEATURES
) -> Simulation:
    """The scenario loaded and settled, its own steps carried out: the cluster at its end
    (what ``sweep`` fails and ``rebalance`` plans on)."""
    sim = Simulation(scenario, features=features, seed=seed)
    sim.settle(scenario.source)
    for step in scenario.steps:
        carry_out(sim, step)
        sim.settle(step.where)
    return sim


def replay_step(sim: Simulation, step: Step) -> StepReport:
    """Carry out one step and let the cluster settle: the step's report, as ``simulate``
    makes it."""
    done = carry_out(sim, step)
    settled = sim.settle(step.where)
    return step_report(
        sim, step.index + 1, step.title(), step.action, done.events, settled, done.drains
    )
