"""``design`` output: the arithmetic as YAML comments above the manifests, so the text output is
itself a valid manifest stream (``topospread design ... > redis.yaml && kubectl apply -f``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from topospread.analysis.design import SpreadPlan
from topospread.analysis.design_redis import RedisPlan


def _comment(lines: Iterable[str]) -> list[str]:
    """Each line as a YAML comment (not wrapped: a formula split over lines reads badly)."""
    return [f"# {line}" if line else "#" for line in lines]


def manifests_yaml(docs: Sequence[dict[str, Any]]) -> str:
    """A multi-document YAML stream, keys in the order given."""
    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False, explicit_start=True)


def scenario_yaml(plan: RedisPlan | SpreadPlan) -> str:
    """The verify scenario as one YAML mapping, with a comment saying what it checks."""
    headline = _headline(plan) if isinstance(plan, RedisPlan) else _spread_headline(plan)
    head = _comment(
        [
            f"verify scenario for {headline}",
            "check every scheduling order with: topospread verify THIS-FILE",
        ]
    )
    body = yaml.safe_dump(plan.scenario(), sort_keys=False, default_flow_style=False)
    return "\n".join(head) + "\n" + body


def _headline(plan: RedisPlan) -> str:
    d = plan.design
    zones = len(d.zones)
    return (
        f"Redis cluster {d.name}: {d.shards} shard{'s' if d.shards != 1 else ''} × "
        f"{plan.pods_per_shard} pods = {plan.total} pods on {zones} "
        f"zone{'s' if zones != 1 else ''} × {plan.nodes_per_zone} nodes, "
        + ('"at most" rules (relaxed)' if d.relaxed else '"less than" rules')
    )


def redis_text(plan: RedisPlan) -> str:
    """The numbers, the rules checked, any problem, then the StatefulSets."""
    lines = [_headline(plan), "", "The numbers:"]
    lines += [f"  {s}" for s in plan.steps]
    lines += ["", "The rules, against the most pods the constraints allow per node and zone:"]
    for check in plan.checks:
        mark = "ok" if check.holds else "NOT GUARANTEED"
        lines.append(f"  {mark}: {check.requirement}")
        lines += [f"      {reason}" for reason in check.reasons]
    if plan.problems:
        lines += ["", "CANNOT BE SATISFIED:"]
        lines += [f"  - {p}" for p in plan.problems]
    lines += [
        "",
        "Not decided by this arithmetic: whether every scheduling order places every pod",
        "(some orders can deadlock). Write the scenario with --scenario FILE, then run",
        "`topospread verify FILE`.",
    ]
    return "\n".join(_comment(lines)) + "\n" + manifests_yaml(list(plan.stateful_sets))


def spread_text(plan: SpreadPlan) -> str:
    """The arithmetic, the notes, then the constraint (or why there is none)."""
    lines = [_spread_headline(plan), ""]
    lines += [f"{i}. {s}" for i, s in enumerate(plan.steps, 1)]
    if plan.notes:
        lines.append("")
        lines += [f"- {n}" for n in plan.notes]
    constraint = plan.constraint()
    if constraint is None:
        return "\n".join(_comment(lines)) + "\n"
    lines += [
        "",
        f"result: maxSkew {plan.max_skew}, at most {plan.worst_case} pods in one domain "
        f"(limit {plan.max_per_domain})",
    ]
    body = yaml.safe_dump(
        {"topologySpreadConstraints": [constraint]}, sort_keys=False, default_flow_style=False
    )
    return "\n".join(_comment(lines)) + "\n" + body


def _spread_headline(plan: SpreadPlan) -> str:
    d = plan.design
    selector = ",".join(f"{k}={v}" for k, v in d.selector.items())
    kind = "DoNotSchedule" if d.hard else "ScheduleAnyway"
    return (
        f"spread {selector} across {d.topology_key} ({d.domains} domains, {d.replicas} pods, "
        f"{kind})"
    )
