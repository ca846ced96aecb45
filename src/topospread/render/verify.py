"""The ``verify`` report as text: the verdict, its figures, and for a counterexample the steps,
the topology grid at the failing step and why the remaining pods cannot move."""

from __future__ import annotations

from topospread.analysis.verify_results import Counterexample, VerifyResult
from topospread.analysis.verify_scenario import plural
from topospread.render.topology import Column, draw_topology


def verify_text(result: VerifyResult, *, zone_key: str | None = None) -> str:
    mode = (
        "every feasible node (--any-feasible)"
        if result.any_feasible
        else "every node with the best score (the scheduler picks among them at random)"
    )
    out = [
        f"{result.source}: {plural(result.pods, 'pod')} to place on "
        f"{plural(result.nodes, 'node')}; "
        f"each pod may go to {mode}",
    ]
    figures = (
        f"{result.states} states explored (symmetric states merged: {result.reduction}), "
        f"{result.transitions} transitions"
    )
    cex = result.counterexample
    if cex is not None:
        out += ["", f"COUNTEREXAMPLE: {cex.message}", ""]
        out += _counterexample(cex, zone_key)
        out += ["", f"Found after {figures}."]
        if result.interrupted:
            out.append("(the search was interrupted after it was found)")
        if result.samples:
            out.append(
                f"(the state budget ran out after every state up to {result.depth} bindings deep; "
                f"found by random sampling, order {result.samples} with seed {result.seed}: "
                "maybe not the shortest)"
            )
    elif result.proved:
        out += [
            "",
            "PROVED: every scheduling order binds every pod"
            + (" and keeps every invariant." if result.invariants else "."),
            f"  {figures}",
            f"  {result.orders} complete scheduling orders covered "
            "(sequences of pod-to-node bindings)",
        ]
    elif result.interrupted:
        out += [
            "",
            f"NOT A PROOF: interrupted (Ctrl-C) after {result.states} states explored "
            f"(symmetric states merged: {result.reduction}), {result.transitions} transitions.",
            f"  every state up to {result.depth} bindings deep was checked: nothing found so far",
        ]
        if result.samples:
            out.append(
                f"  then {result.samples} random complete orders: no deadlock"
                + (", no invariant broken" if result.invariants else "")
            )
    else:
        out += [
            "",
            f"NOT A PROOF: the search stopped at {result.states} states (--max-states "
            f"{result.max_states}).",
            f"  every state up to {result.depth} bindings deep was checked: nothing found",
            f"  then {result.samples} random complete orders: no deadlock"
            + (", no invariant broken" if result.invariants else ""),
        ]
    if result.invariants:
        out += ["", "Invariants:"] + [f"  - {text}" for text in result.invariants]
    out += ["", "Assumptions:"] + [f"  - {text}" for text in result.assumptions]
    return "\n".join(out)


def _counterexample(cex: Counterexample, zone_key: str | None) -> list[str]:
    width = max((len(s.pod) for s in cex.steps), default=0)
    lines = []
    for n, step in enumerate(cex.steps, 1):
        others = [c for c in step.choices if c != step.node]
        among = f"  (also possible: {', '.join(others)})" if others else "  (the only choice)"
        lines.append(f"  {n:>2}. {step.pod:<{width}} -> {step.node}{among}")
    if not cex.steps:
        lines.append("  (the starting state)")
    last = {cex.steps[-1].pod: "*"} if cex.steps else {}
    columns = [Column(node, pods) for node, pods in cex.cluster]
    lines += [
        "",
        "Cluster at the failing step:",
        draw_topology(columns, zone_key=zone_key, highlight=last),
    ]
    if last:
        lines.append("* placed by the last step")
    if cex.pending:
        lines += ["", "Not bound:"] + [f"  {pod}: {why}" for pod, why in cex.pending]
    return lines
