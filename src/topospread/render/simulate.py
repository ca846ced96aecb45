"""``simulate`` as text: per step, what changed, the topology grid, Pending pods with their
FailedScheduling text, and each workload's spread per constraint; or one JSON document."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Final

from topospread.analysis.reports import ConstraintSpread, StepReport
from topospread.analysis.simulate import TimelineReport
from topospread.api.types import Pod
from topospread.render.topology import Column, draw_topology
from topospread.simulator.clock import format_duration

# Wider grids switch to short pod labels (the generated suffix of the name).
MAX_GRID_WIDTH: Final = 100
# Constraints with more eligible domains than this show a summary of their counts.
MAX_LISTED_DOMAINS: Final = 4


def timeline_text(report: TimelineReport, *, zone_key: str | None = None) -> str:
    total = report.total
    clock = report.uses_clock
    blocks = [step_text(s, total, zone_key=zone_key, clock=clock) for s in report.steps]
    return "\n\n".join([*blocks, _summary(report)])


def timeline_json(report: TimelineReport, *, zone_key: str | None = None) -> str:
    return json.dumps(report.to_json(zone_key), indent=2)


def step_text(
    step: StepReport, total: int, *, zone_key: str | None = None, clock: bool = False
) -> str:
    """One step's block; ``clock`` adds the simulated time after the step to its header."""
    title = (
        "Initial state"
        if step.index == 0
        else f"Step {step.index}/{total}: {step.name} ({step.action})"
    )
    if clock:
        title += f" at {format_duration(step.time)}"
    out = [f"== {title} =="]
    out += [f"  {e}" for e in step.events]
    if step.node_groups is not None:
        sizes = " ".join(f"{g}={n}" for g, n in step.node_groups.items())
        out.append(f"  nodes per group: {sizes or 'none'}")
    s = step.settled
    churn = []
    if s.created:
        churn.append(f"created {len(s.created)}")
    if s.deleted:
        churn.append(f"deleted {len(s.deleted)}")
    if s.preempted:
        churn.append(f"preempted {len(s.preempted)}")
    if s.evicted:
        churn.append(f"taint manager evicted {len(s.evicted)}")
    if churn or s.placed:
        out.append(
            f"  controllers: {', '.join(churn) or 'no changes'}; scheduler: {len(s.placed)} placed"
        )
    out.append("")
    out.append(topology_grid(step, zone_key))
    out += _node_states(step)
    out.append(
        f"{len(step.bound) + len(step.pending)} pods: {len(step.bound)} Running, "
        f"{len(step.pending)} Pending" + (" (* placed in this step)" if s.placed else "")
    )
    by_message: dict[str, list[str]] = {}
    for key, message in step.pending.items():
        by_message.setdefault(message, []).append(key)
    for message, keys in by_message.items():
        out.append(f"  Pending: {', '.join(keys)}")
        out.append(f"    {message}")
    spread = [w for w in step.workloads if w.constraints]
    if spread:
        out.append("Spread (matching pods per eligible domain; skew = max - global minimum):")
    for w in spread:
        desired = f"{w.desired} desired, " if w.desired is not None else ""
        out.append(f"  {w.workload}: {desired}{w.running} running, {w.pending} pending")
        # Revisions counted apart (matchLabelKeys: [pod-template-hash]) are named.
        several = len({tuple(c.revisions) for c in w.constraints}) > 1
        for c in w.constraints:
            out.append(f"    {constraint_line(c, several)}")
    return "\n".join(out)


def constraint_line(c: ConstraintSpread, show_revisions: bool) -> str:
    v = c.view
    head = f"[{v.index}] {v.topology_key} {v.when_unsatisfiable} maxSkew {v.max_skew}"
    if v.min_domains != 1:
        head += f" minDomains {v.min_domains}"
    if show_revisions and c.revisions:
        head += f" ({', '.join(c.revisions)})"
    if not v.counts:
        return f"{head}: no eligible domain"
    if len(v.counts) <= MAX_LISTED_DOMAINS:
        counts = " ".join(f"{d}={n}" for d, n in v.counts.items())
    else:
        tally = Counter(v.counts.values())
        counts = (
            f"{len(v.counts)} domains ("
            + ", ".join(f"{tally[n]} with {n}" for n in sorted(tally, reverse=True))
            + ")"
        )
    if c.violated:
        verdict = f"VIOLATED (skew {c.skew} > maxSkew {v.max_skew})"
    elif c.preference_not_met:
        verdict = f"preference not met (skew {c.skew} > maxSkew {v.max_skew}; ScheduleAnyway)"
    else:
        verdict = f"skew {c.skew}"
    return f"{head}: {counts}; min {v.global_min}; {verdict}"


def topology_grid(step: StepReport, zone_key: str | None) -> str:
    columns = [Column(node, pods) for node, pods in step.topology]
    marks = {key: "*" for key in step.settled.placed}
    grid = draw_topology(columns, zone_key=zone_key, highlight=marks)
    if max(len(line) for line in grid.splitlines()) > MAX_GRID_WIDTH:
        grid = draw_topology(columns, zone_key=zone_key, highlight=marks, pod_label=_short)
    return grid


def _node_states(step: StepReport) -> list[str]:
    """Cordoned and tainted nodes, grouped by state: the grid does not show them."""
    by_state: dict[str, list[str]] = {}
    for node, _ in step.topology:
        parts = ["cordoned"] if node.spec.unschedulable else []
        parts += [f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.spec.taints]
        if parts:
            by_state.setdefault(", ".join(parts), []).append(node.metadata.name)
    return [f"{', '.join(names)}: {state}" for state, names in by_state.items()]


def _short(pod: Pod) -> str:
    meta = pod.metadata
    if meta.generate_name and meta.name.startswith(meta.generate_name):
        return meta.name[len(meta.generate_name) :]
    return meta.name


def _summary(report: TimelineReport) -> str:
    steps = report.steps
    pending = [s.index for s in steps if s.pending]
    violated = [s.index for s in steps if s.violations]
    unmet = [s.index for s in steps if s.preferences_not_met]
    unsettled = [s.index for s in steps if not s.settled.settled]
    blocked = [s.index for s in steps if any(not d.complete for d in s.drains)]
    cut = report.interrupted
    replayed = (
        f"{len(steps) - 1} step{'' if len(steps) == 2 else 's'} replayed"
        if cut is None
        else f"Interrupted during {step_name(cut.index, cut.total, cut.name)}: "
        f"{max(len(steps) - 1, 0)} of {cut.total} steps replayed"
    )
    lines = [
        f"{replayed} (seed {report.seed}). "
        f"Pods Pending after: {_which(pending)}. Constraints violated after: {_which(violated)}."
    ]
    if unmet:
        lines.append(f"ScheduleAnyway preferences not met after: {_which(unmet)}.")
    if blocked:
        lines.append(f"Drains left pods on their nodes: {_which(blocked)}.")
    if unsettled:
        lines.append(f"Did not settle within the round limit: {_which(unsettled)}.")
    return "\n".join(lines)


def step_name(index: int, total: int, name: str) -> str:
    """A step as the interruption names it: ``step 3/4 (zone-c comes back)``."""
    return "the initial state" if index == 0 else f"step {index}/{total} ({name})"


def interruption_line(report: TimelineReport) -> str:
    """What an interrupted replay's report covers (the command's line on standard error)."""
    cut = report.interrupted
    assert cut is not None
    covered = (
        "no step"
        if cut.index == 0
        else "the initial state only"
        if cut.index == 1
        else "the initial state and step 1"
        if cut.index == 2
        else f"the initial state and steps 1-{cut.index - 1}"
    )
    return f"during {step_name(cut.index, cut.total, cut.name)}: the report covers {covered}"


def _which(indexes: Sequence[int]) -> str:
    if not indexes:
        return "none"
    return ", ".join("initial state" if i == 0 else f"step {i}" for i in indexes)
