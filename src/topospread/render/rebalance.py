"""``rebalance``'s report: the constraints past maxSkew, the plan (each eviction with where
its replacement landed), the topology and spread before and after (text); or one JSON or YAML
document; or the plan's policy/v1 Eviction manifests."""

from __future__ import annotations

import json

import yaml

from topospread.analysis.rebalance import RebalanceReport
from topospread.analysis.reports import StepReport
from topospread.render.simulate import constraint_line, topology_grid


def rebalance_json(report: RebalanceReport, *, zone_key: str | None = None) -> str:
    return json.dumps(report.to_json(zone_key), indent=2)


def rebalance_yaml(report: RebalanceReport, *, zone_key: str | None = None) -> str:
    return yaml.dump(report.to_json(zone_key), Dumper=yaml.CSafeDumper, sort_keys=False)


def evictions_yaml(report: RebalanceReport) -> str:
    """The plan's Eviction manifests in plan order, one YAML document each (empty: none)."""
    if report.plan is None:
        return ""
    docs = [e.manifest() for e in report.plan.evictions]
    return yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False)


def rebalance_text(report: RebalanceReport, *, zone_key: str | None = None) -> str:
    out = [f"Rebalance of {report.source} (seed {report.seed})", ""]
    if report.balanced:
        out.append("Nothing to rebalance: every constraint is within its maxSkew.")
        out += _exclusions(report)
        out += _descheduler(report)
        return "\n".join(out)
    out.append("Past maxSkew now (counted as PodTopologySpread counts):")
    for t in report.targets:
        out.append(f"  {t.workload}: {constraint_line(t.spread, bool(t.spread.revisions))}")
    out += _exclusions(report)
    out.append("")
    plan = report.plan
    if plan is None:
        out.append(_no_plan_line(report))
        for name, reasons in report.why_not.items():
            out.append(f"  {name}:")
            out += [f"    {r}" for r in reasons]
        out += ["", _section("Now", report.before, zone_key)]
        out += _descheduler(report)
        return "\n".join(out)
    n = len(plan.evictions)
    proof = (
        "the fewest: every smaller plan was ruled out"
        if report.minimal
        else f"the best found: plans of {report.ruled_out_up_to} eviction(s) or fewer were "
        "ruled out, the search's budget ended before the rest"
    )
    out.append(f"Plan: {n} eviction{'s' if n != 1 else ''} ({proof}; {report.replays} replay(s))")
    for i, e in enumerate(plan.evictions, 1):
        where = ", ".join(f"{v}" for v in e.domains.values())
        landed = ", ".join(f"{v}" for v in e.replacement_domains.values())
        out.append(f"  {i}. evict {e.pod} from {e.node}" + (f" ({where})" if where else ""))
        out.append(
            f"     its replacement {e.replacement} lands on {e.replacement_node}"
            + (f" ({landed})" if landed else "")
        )
        if e.note:
            out.append(f"     ({e.note})")
    out += ["", _section("Before", report.before, zone_key)]
    if plan.after is not None:
        out += ["", _section("After the plan (replayed)", plan.after, zone_key)]
    out += _descheduler(report)
    return "\n".join(out)


def _descheduler(report: RebalanceReport) -> list[str]:
    d = report.descheduler
    if d is None:
        if report.interrupted and report.plan is not None:
            return ["", "Interrupted: the descheduler's rounds were not replayed."]
        return []
    out = [
        "",
        "== The descheduler (RemovePodsViolatingTopologySpreadConstraint, v0.34), "
        "round after round ==",
    ]
    for r in d.rounds:
        out.append(f"round {r.index}: picks {len(r.picked)}")
        for pick in r.picked:
            out.append(f"  {pick.pod} from {pick.node}: {pick.reason}")
        for pod, why in r.refused.items():
            out.append(f"  {pod}: refused: {why}")
        for pod, why in r.pinned.items():
            out.append(f"  {pod}: useless: {why}")
        for e in r.evictions:
            landed = ", ".join(e.replacement_domains.values())
            if e.replacement is None:
                out.append(f"  {e.pod}: no replacement")
            elif e.replacement_node is None:
                out.append(f"  {e.pod}: its replacement {e.replacement} stays Pending")
            else:
                came = ", ".join(e.domains.values())
                out.append(
                    f"  {e.pod} ({came}) -> {e.replacement} on {e.replacement_node}"
                    + (f" ({landed})" if landed else "")
                )
    exact = (
        "nothing"
        if report.balanced
        else "no plan"
        if report.plan is None
        else f"{len(report.plan.evictions)} eviction(s)"
    )
    out.append(
        f"The descheduler {d.verdict}; {d.evicted} eviction(s) in all"
        + (f", {len(d.violations)} constraint(s) still violated" if d.violations else "")
        + f". The exact plan: {exact}."
    )
    return out


def _no_plan_line(report: RebalanceReport) -> str:
    if report.interrupted:
        return f"No plan yet: {report.no_plan} ({report.replays} replay(s) completed)."
    return f"No plan: {report.no_plan} ({report.replays} replay(s)). Why, per constraint:"


def _exclusions(report: RebalanceReport) -> list[str]:
    if not report.exclusions:
        return []
    by_reason: dict[str, list[str]] = {}
    for e in report.exclusions:
        by_reason.setdefault(e.reason, []).append(e.pod)
    out = ["Left alone (the evictor's filters):"]
    out += [f"  {reason}: {', '.join(pods)}" for reason, pods in by_reason.items()]
    return out


def _section(title: str, step: StepReport, zone_key: str | None) -> str:
    out = [f"== {title} ==", topology_grid(step, zone_key)]
    for w in step.workloads:
        for c in w.constraints:
            out.append(f"  {w.workload}: {constraint_line(c, bool(c.revisions))}")
    if step.pending:
        out.append(f"  Pending: {', '.join(step.pending)}")
    return "\n".join(out)


__all__ = ["evictions_yaml", "rebalance_json", "rebalance_text", "rebalance_yaml"]
