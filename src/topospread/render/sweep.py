"""The sweep's report: the worst failures first, the failure × workload matrix, then what
broke in each failure that broke something (text); or every run (JSON, YAML)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import yaml

from topospread.analysis.sweep_autoscaler import Recovery, recovery_text
from topospread.analysis.sweep_failures import DRAIN, NODE, NODES, ZONE
from topospread.analysis.sweep_report import Outcome, SweepReport
from topospread.analysis.sweep_run import Phase
from topospread.simulator.clock import SECOND, format_duration

# The ranked table and the matrix show this many failures; the rest are counted.
MAX_ROWS = 40
# Pending pods and drain refusals listed per failure in the details.
MAX_LINES = 5

_FAMILY_WORDS = {ZONE: "zones", NODE: "nodes", NODES: "node combinations", DRAIN: "drains"}


def sweep_json(report: SweepReport, *, requirements: Sequence[str] = ()) -> str:
    return json.dumps(report.to_json(requirements), indent=2)


def sweep_yaml(report: SweepReport, *, requirements: Sequence[str] = ()) -> str:
    return yaml.dump(report.to_json(requirements), Dumper=yaml.CSafeDumper, sort_keys=False)


def sweep_text(report: SweepReport, *, requirements: Sequence[str] = ()) -> str:
    lines = [_headline(report)]
    for seed, base in report.base.items():
        lines.append(_base_line(base, seed if len(report.base) > 1 else None))
    if report.autoscaler is not None:
        lines += _autoscaler_head(report)
    ranked = report.ranked()
    if report.interrupted:
        lines.append(
            f"Interrupted: {len(ranked)} of {report.planned} runs completed; "
            "the report covers them."
        )
    if report.failed:
        lines += ["", *_failed(report)]
    if not ranked:
        return "\n".join(lines) + "\n"
    broken = [o for o in ranked if any(o.severity())]
    lines += ["", "Worst failures first:", *_ranked_table(ranked, len(report.seeds) > 1)]
    if report.autoscaler is not None:
        lines += ["", *_recoveries(report, ranked)]
    lines += ["", *_matrix(report, ranked)]
    if broken:
        lines += ["", "What broke:"]
        for o in broken[:MAX_ROWS]:
            lines += _details(o, len(report.seeds) > 1)
        if len(broken) > MAX_ROWS:
            lines.append(f"  ... and {len(broken) - MAX_ROWS} more failures (see -o json)")
    lines += ["", _verdict(report, broken, requirements)]
    return "\n".join(lines) + "\n"


def family_counts(plan: Mapping[str, int]) -> str:
    """``3 zones, 6 nodes, 15 node combinations``: the failures planned per family."""
    return ", ".join(f"{c} {_FAMILY_WORDS[k]}" for k, c in plan.items())


def _headline(report: SweepReport) -> str:
    n = sum(report.plan.values())
    parts = family_counts(report.plan)
    seeds = len(report.seeds)
    return (
        f"Sweep of {report.source}: {n} failure{'s' if n != 1 else ''}"
        f"{f' ({parts})' if parts else ''} x {seeds} seed{'s' if seeds != 1 else ''} "
        f"({', '.join(map(str, report.seeds))}) = {report.planned} runs."
    )


def _base_line(base: Phase, seed: int | None) -> str:
    where = f" (seed {seed})" if seed is not None else ""
    violated = (
        f"{len(base.violated)} constraints violated" if base.violated else "no constraint violated"
    )
    return (
        f"Base state{where}: {_pods(base.running)} Running, {len(base.pending)} Pending; "
        f"{violated}."
    )


def _ranked_table(ranked: Sequence[Outcome], show_seed: bool) -> list[str]:
    scaled = any(o.run.autoscaler is not None for o in ranked)
    header = ["#", "failure", *(["seed"] if show_seed else []), "new Pending", "violated",
              "drain blocked", "preferences not met", "recovers",
              *(["autoscaler"] if scaled else [])]  # fmt: skip
    rows = [
        [
            str(i),
            o.failure.name,
            *([str(o.run.seed)] if show_seed else []),
            str(o.new_pending),
            str(len(o.new_violations)),
            str(len(o.run.during.blocked)),
            str(len(o.run.during.preferences_not_met)),
            "yes" if o.recovered else "NO",
            *([_recovery_cell(o.run.autoscaler)] if scaled else []),
        ]
        for i, o in enumerate(ranked[:MAX_ROWS], 1)
    ]
    out = _columns(header, rows)
    if len(ranked) > MAX_ROWS:
        fine = sum(1 for o in ranked[MAX_ROWS:] if not any(o.severity()))
        out.append(f"  ... and {len(ranked) - MAX_ROWS} more ({fine} of them break nothing)")
    return out


def _autoscaler_head(report: SweepReport) -> list[str]:
    a = report.autoscaler
    assert a is not None
    out = [
        f"Autoscaler: {a.name}, acting up to {format_duration(a.limit)} after each failure "
        "(a lost zone cannot get new nodes while it is lost); Pending and violations are read "
        "after it acted."
    ]
    for seed, r in a.base.items():
        if r.pending_before or r.added or r.removed:
            where = f" (seed {seed})" if len(a.base) > 1 else ""
            out.append(
                f"Base state{where}: {r.pending_before} Pending before the autoscaler; "
                f"{recovery_text(r)}."
            )
    return out


def _recovery_cell(r: Recovery | None) -> str:
    """The ranked table's cell: how long recovery took, or NO."""
    if r is None:
        return ""
    if r.took is None:
        return "NO"
    return format_duration(round(r.took * SECOND))


def _recoveries(report: SweepReport, ranked: Sequence[Outcome]) -> list[str]:
    a = report.autoscaler
    assert a is not None
    show_seed = len(report.seeds) > 1
    out = [f"The autoscaler ({a.name}) after each failure, up to {format_duration(a.limit)}:"]
    for o in ranked[:MAX_ROWS]:
        r = o.run.autoscaler
        if r is None:
            continue
        seed = f" (seed {o.run.seed})" if show_seed else ""
        sizes = " ".join(f"{g}={n}" for g, n in r.node_groups.items())
        out.append(f"  {o.failure.name}{seed}: {recovery_text(r)}; nodes per group: {sizes}")
        if not r.recovered:
            out += [f"    {why}" for why in r.reasons[:MAX_LINES]]
            if len(r.reasons) > MAX_LINES:
                out.append(f"    ... and {len(r.reasons) - MAX_LINES} more (see -o json)")
    if len(ranked) > MAX_ROWS:
        out.append(f"  ... and {len(ranked) - MAX_ROWS} more failures (see -o json)")
    return out


def _matrix(report: SweepReport, ranked: Sequence[Outcome]) -> list[str]:
    workloads = report.workloads()
    if not workloads:
        return ["No workload has Pending pods or spread past maxSkew in any failure."]
    legend = (
        "During each failure, per workload: Pending pods, V a DoNotSchedule constraint "
        "violated, ~ a ScheduleAnyway preference not met, . nothing wrong:"
    )
    show_seed = len(report.seeds) > 1
    header = ["failure", *(["seed"] if show_seed else []), *workloads]
    rows = []
    for o in ranked[:MAX_ROWS]:
        cells = []
        for w in workloads:
            cell = o.run.during.workloads.get(w)
            text = ""
            if cell is not None:
                text = (
                    (str(cell.pending) if cell.pending else "")
                    + ("V" if cell.violated else "")
                    + ("~" if cell.preferences_not_met else "")
                )
            cells.append(text or ".")
        rows.append([o.failure.name, *([str(o.run.seed)] if show_seed else []), *cells])
    out = [legend, *_columns(header, rows)]
    if len(ranked) > MAX_ROWS:
        out.append(f"  ... and {len(ranked) - MAX_ROWS} more failures (see -o json)")
    return out


def _details(o: Outcome, show_seed: bool) -> list[str]:
    d = o.run.during
    seed = f" (seed {o.run.seed})" if show_seed else ""
    out = [f"  {o.failure.name}{seed}:"]
    by_message: dict[str, list[str]] = {}
    for key, message in d.pending.items():
        by_message.setdefault(message, []).append(key)
    for message, keys in sorted(by_message.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(keys[:MAX_LINES]) + (
            f" and {len(keys) - MAX_LINES} more" if len(keys) > MAX_LINES else ""
        )
        out.append(f"    {_pods(len(keys))} Pending ({shown}): {message}")
    for line in d.violations:
        out.append(f"    violated: {line}")
    for line in d.preferences_not_met[:MAX_LINES]:
        out.append(f"    preference not met: {line}")
    if len(d.preferences_not_met) > MAX_LINES:
        out.append(f"    ... and {len(d.preferences_not_met) - MAX_LINES} more preferences not met")
    for line in d.blocked[:MAX_LINES]:
        out.append(f"    drain blocked: {line}")
    if len(d.blocked) > MAX_LINES:
        out.append(f"    ... and {len(d.blocked) - MAX_LINES} more blocked")
    if not o.recovered:
        a = o.run.after
        out.append(
            f"    after the failure is undone: {_pods(len(a.pending))} still Pending"
            + (f", violated: {'; '.join(a.violations)}" if a.violations else "")
        )
    if not o.run.settled:
        out.append("    did not settle within the round limit")
    return out


def _failed(report: SweepReport) -> list[str]:
    """The runs whose worker died on every attempt: no outcome, how it died."""
    show_seed = len(report.seeds) > 1
    n = len(report.failed)
    out = [f"Failed: {n} of {report.planned} run{'s' if report.planned != 1 else ''} did not "
           "complete (the worker died on every attempt):"]  # fmt: skip
    for e in report.failed:
        seed = f" (seed {e.seed})" if show_seed else ""
        out.append(f"  {e.failure.name}{seed}: {e.error} ({e.attempts} attempts)")
    return out


def _verdict(report: SweepReport, broken: Sequence[Outcome], requirements: Sequence[str]) -> str:
    verdict = _completed_verdict(report, broken, requirements)
    if report.failed:
        n = len(report.failed)
        verdict += (
            f" {n} run{'s' if n != 1 else ''} failed and {'are' if n != 1 else 'is'} not judged."
        )
    return verdict


def _completed_verdict(
    report: SweepReport, broken: Sequence[Outcome], requirements: Sequence[str]
) -> str:
    if requirements:
        failing = report.failing(requirements)
        if failing:
            return (
                f"FAIL: {len(failing)} of {len(report.outcomes)} runs break "
                f"--require {','.join(requirements)}."
            )
        return f"PASS: every run meets --require {','.join(requirements)}."
    if broken:
        return f"{len(broken)} of {len(report.outcomes)} runs leave something broken."
    return f"All {len(report.outcomes)} runs leave every pod placed and every constraint met."


def _pods(n: int) -> str:
    return f"{n} pod{'s' if n != 1 else ''}"


def _columns(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
        for row in [header, *rows]
    ]


__all__ = ["family_counts", "sweep_json", "sweep_text", "sweep_yaml"]
