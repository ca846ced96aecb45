"""One self-contained HTML file per report, made from the same JSON document ``-o json`` prints
(so the two never disagree): no script, font or style from the network; light and dark from
the reader's colour scheme; readable printed.

Templates are Jinja2 (autoescaped: every name and message from the input is escaped); the
charts are inline SVG drawn here, so the file needs no plotting script at all.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

import jinja2
import yaml

from topospread import __version__
from topospread.render.charts import MAX_CHARTED_DOMAINS, charts, hue
from topospread.render.sweep import family_counts
from topospread.simulator.clock import SECOND, format_duration


@functools.cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("topospread.render", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def _label(pod: str) -> str:
    """A pod's name as the grid labels it: without the namespace when it is ``default``."""
    namespace, _, name = pod.partition("/")
    return name if namespace == "default" and name else pod


def _zones_in_order(zones: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Zones in the order the text's grid draws them: by name, nodes without a zone last."""
    return [
        {"name": z, "nodes": nodes}
        for z, nodes in sorted(zones.items(), key=lambda kv: (kv[0] == "", kv[0]))
    ]


def _workload_names(reports: Sequence[dict[str, Any]]) -> list[str]:
    """The workloads of step reports, in the order they first appear (their colours)."""
    names: dict[str, None] = {}
    for report in reports:
        for w in report["workloads"]:
            names.setdefault(w["workload"])
    return list(names)


def simulate_html(doc: dict[str, Any]) -> str:
    """``simulate -o json``'s document as a report: a summary, spread charts over the
    timeline, and each step's topology grid, Pending pods and spread."""
    names = _workload_names(doc["steps"])
    color = {name: i for i, name in enumerate(names)}
    cut = doc.get("interrupted")
    total = cut["of"] if cut is not None else len(doc["steps"]) - 1
    steps = [_step(s, color, total) for s in doc["steps"]]
    # The initial state counts as the text's summary counts it: Pods Pending there are Pending.
    pending = [s["title_short"] for s in steps if s["pending"]]
    violated = [s["title_short"] for s in steps if s["violated"]]
    blocked = [s["title_short"] for s in steps if s["blocked"]]
    unsettled = [s["title_short"] for s in steps if not s["settled"]]
    summary = {
        "ok": not (pending or violated or blocked or unsettled or cut),
        "pending": pending,
        "violated": violated,
        "preferences": [s["title_short"] for s in steps if s["preferences"]],
        "blocked": blocked,
        "unsettled": unsettled,
    }
    template = _environment().get_template("simulate.html.j2")
    return template.render(
        doc=doc,
        version=__version__,
        workloads=[{"name": n, "color": hue(i)} for i, n in enumerate(names)],
        steps=steps,
        summary=summary,
        charts=charts(doc["steps"], _constraint_name),
        node_groups=_node_groups(doc["steps"]),
        interrupted=cut,
    )


def _node_groups(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """With an autoscaler: each group's node count after every step (a table's rows)."""
    if not any("nodeGroups" in s for s in steps):
        return []
    names: dict[str, None] = {}
    for s in steps:
        names.update(dict.fromkeys(s.get("nodeGroups", {})))
    return [
        {
            "group": g,
            "counts": [(s["index"], s.get("nodeGroups", {}).get(g, 0)) for s in steps],
            "changed": [
                i > 0
                and s.get("nodeGroups", {}).get(g, 0)
                != steps[i - 1].get("nodeGroups", {}).get(g, 0)
                for i, s in enumerate(steps)
            ],
        }
        for g in names
    ]


def _step(s: dict[str, Any], color: dict[str, int], total: int) -> dict[str, Any]:
    owner: dict[str, int] = {}
    for w in s["workloads"]:
        for pod in w["pods"]:
            owner[pod] = color[w["workload"]]
    placed = set(s["placed"])
    on_node: dict[str, list[dict[str, Any]]] = {}
    for pod, node in s["bound"].items():
        on_node.setdefault(node, []).append(
            {
                "key": pod,
                "w": owner.get(pod, len(color)),
                "placed": pod in placed,
                "label": _label(pod),
            }
        )
    zones: dict[str, list[dict[str, Any]]] = {}
    for node in s["nodes"]:
        state = ", ".join((["cordoned"] if node["unschedulable"] else []) + list(node["taints"]))
        zones.setdefault(node["zone"], []).append(
            {"name": node["name"], "state": state, "pods": on_node.get(node["name"], [])}
        )
    pending: dict[str, list[dict[str, Any]]] = {}
    for p in s["pending"]:
        pending.setdefault(p["message"], []).append(
            {"key": p["pod"], "w": owner.get(p["pod"], len(color)), "label": _label(p["pod"])}
        )
    spread = []
    for w in s["workloads"]:
        for c in w["constraints"]:
            state = "fail" if c["violated"] else "warn" if c["exceeded"] else ""
            verdict = "VIOLATED" if c["violated"] else "preference not met" if c["exceeded"] else ""
            counts = c["counts"]
            shown = (
                " ".join(f"{d}={n}" for d, n in counts.items())
                if len(counts) <= MAX_CHARTED_DOMAINS
                else f"{len(counts)} domains, {min(counts.values())}–{max(counts.values())} each"
            )
            desired = f"{w['desired']} desired, " if w["desired"] is not None else ""
            spread.append(
                {
                    "w": color[w["workload"]],
                    "workload": w["workload"],
                    "pods": f"{desired}{w['running']} running, {w['pending']} pending",
                    "constraint": _constraint_name(c),
                    "counts": shown if counts else "no eligible domain",
                    "min": c["globalMin"],
                    "skew": c["skew"],
                    "state": state,
                    "verdict": verdict,
                }
            )
    index = s["index"]
    short = "initial state" if index == 0 else f"step {index}"
    title = "Initial state" if index == 0 else f"Step {index}/{total}: {s['name']} ({s['action']})"
    failed = bool(s["pending"] or s["violations"])
    return {
        "index": index,
        # The simulated clock as the text prints it (Go's duration format), not raw seconds.
        "title": f"{title} at {format_duration(round(s['time'] * SECOND))}",
        "title_short": short,
        "events": s["events"],
        "running": len(s["bound"]),
        "pending_count": len(s["pending"]),
        "placed": len(placed),
        "churn": _churn(s),
        "zones": _zones_in_order(zones),
        "pending": [{"message": m, "pods": pods} for m, pods in pending.items()],
        "spread": spread,
        "violated": bool(s["violations"]),
        "preferences": bool(s["preferencesNotMet"]),
        "blocked": any(not d["complete"] for d in s["drains"]),
        "settled": s["settled"],
        "state": "fail" if failed else "warn" if s["preferencesNotMet"] else "",
    }


def _churn(s: dict[str, Any]) -> str:
    """What the controllers and the scheduler did in the step, as the text's line says it."""
    words = (("created", "created"), ("deleted", "deleted"), ("preempted", "preempted"))
    done = [f"{w} {len(s[k])}" for k, w in words if s[k]]
    done += [f"taint manager evicted {len(s['evicted'])}"] if s["evicted"] else []
    if not (done or s["placed"]):
        return ""
    return f"controllers: {', '.join(done) or 'no changes'}; scheduler: {len(s['placed'])} placed"


def _constraint_name(c: dict[str, Any]) -> str:
    revisions = f" ({', '.join(c['revisions'])})" if c["revisions"] else ""
    # minDomains as the text names it (when not 1): it is why the global minimum can be 0.
    domains = f" minDomains {c['minDomains']}" if c["minDomains"] != 1 else ""
    return (
        f"[{c['index']}] {c['topologyKey']} {c['whenUnsatisfiable']} maxSkew {c['maxSkew']}"
        f"{domains}{revisions}"
    )


def _group(pod: str) -> str:
    """A pod's group for its colour in verify: its name without the ordinal or suffix a
    controller adds (a StatefulSet's ``-N``, a ReplicaSet's ``-xxxxx``)."""
    return pod.rsplit("-", 1)[0]


def verify_html(doc: dict[str, Any]) -> str:
    """``verify -o json``'s document as a report: the verdict, and a counterexample as a
    step-through, binding by binding, with the nodes the scheduler could have chosen."""
    counter = doc.get("counterexample")
    trace: list[dict[str, Any]] = []
    start: list[dict[str, Any]] = []
    groups: dict[str, int] = {}
    pending_groups: dict[str, int] = {}
    if counter:
        waiting = [p["pod"] for p in counter["pending"]]
        stepped = {s["pod"] for s in counter["steps"]}
        # The scenario's bound pods are there before the first binding: the failing state's
        # ``bound`` minus what the steps bound.
        existing = [(pod, node) for pod, node in counter["bound"].items() if pod not in stepped]
        for pod in [p for p, _ in existing] + [s["pod"] for s in counter["steps"]] + waiting:
            groups.setdefault(_group(pod), len(groups))
        pending_groups = {p: groups[_group(p)] for p in waiting}
        zones = {n["name"]: n["zone"] for n in counter["nodes"]}
        placed: dict[str, list[dict[str, Any]]] = {n["name"]: [] for n in counter["nodes"]}
        for pod, node in existing:
            placed.setdefault(node, []).append(
                {"key": pod, "w": groups[_group(pod)], "just": False, "label": _label(pod)}
            )

        def by_zone(could: set[str]) -> list[dict[str, Any]]:
            out: dict[str, list[dict[str, Any]]] = {}
            for node, on in placed.items():
                out.setdefault(zones.get(node, ""), []).append(
                    {"name": node, "could": node in could, "pods": [dict(p) for p in on]}
                )
            return _zones_in_order(out)

        # Without a binding the failing state is the starting state: drawn on its own.
        start = [] if counter["steps"] else by_zone(set())
        for step in counter["steps"]:
            for pods_on in placed.values():
                for p in pods_on:
                    p["just"] = False
            placed[step["node"]].append(
                {
                    "key": step["pod"],
                    "w": groups[_group(step["pod"])],
                    "just": True,
                    "label": _label(step["pod"]),
                }
            )
            trace.append({**step, "zones": by_zone(set(step["choices"]) - {step["node"]})})
    note = doc["note"]
    if note is not None and note.startswith("not a proof: "):
        # The badge says it already.
        note = note[len("not a proof: ") :]
    template = _environment().get_template("verify.html.j2")
    return template.render(
        doc=doc,
        version=__version__,
        trace=trace,
        start=start,
        note=note,
        groups=[{"name": g, "color": hue(i)} for g, i in groups.items()],
        pending_groups=pending_groups,
        interrupted=doc.get("interrupted", False),
    )


def explain_html(doc: dict[str, Any]) -> str:
    """``explain -o json``'s document as a report: the verdict, and every node's Filter and
    Score results in a table sortable by any column (a few lines of inline script), the
    spread constraints and what would let a Pending pod schedule."""
    filters: list[str] = []
    scores: list[str] = []
    for n in doc["nodes"]:
        for name in n["filters"]:
            if name not in filters:
                filters.append(name)
        for name in n["scores"]:
            if name not in scores:
                scores.append(name)
    # Filters that pass (or skip) on every node say nothing: their columns are left out.
    shown = [
        f
        for f in filters
        if any(n["filters"].get(f) not in ("Success", "Skip") for n in doc["nodes"])
    ]
    template = _environment().get_template("explain.html.j2")
    return template.render(
        doc=doc,
        version=__version__,
        filters=shown,
        scores=scores,
        feasible=sum(1 for n in doc["nodes"] if n["feasible"]),
        interrupted=doc.get("interrupted", False),
    )


# The sweep's table lists every run that breaks something, and this many of the others.
MAX_QUIET_ROWS: Final = 50


def sweep_html(doc: dict[str, Any]) -> str:
    """``sweep -o json``'s document as a report: the failure × workload matrix, worst first,
    and for each failure that breaks something what broke and the steps that replay it."""
    runs = {(r["failure"]["name"], r["seed"]): r for r in doc["runs"]}
    # The text's columns: every workload of a run's or a base state's outcomes, by name.
    phases = [r["during"] for r in doc["runs"]] + list(doc["base"].values())
    workloads = sorted({w for phase in phases for w in phase["workloads"]})
    rows = []
    details = []
    quiet = 0
    for i, ranked in enumerate(doc["ranked"]):
        run = runs[(ranked["failure"], ranked["seed"])]
        # The text report's "broken": anything in the run's severity, preferences too.
        broken = bool(ranked["broken"])
        if not broken:
            quiet += 1
            if quiet > MAX_QUIET_ROWS:
                continue
        anchor = f"run-{i}" if broken else ""
        cells = []
        for w in workloads:
            o = run["during"]["workloads"].get(w)
            parts = []
            if o and o["pending"]:
                parts.append(f"{o['pending']} Pending")
            if o and o["violated"]:
                parts.append(f"{o['violated']} violated")
            if o and o["preferencesNotMet"]:
                parts.append(f"{o['preferencesNotMet']} preference(s)")
            state = "bad" if o and (o["pending"] or o["violated"]) else "soft" if parts else ""
            cells.append({"text": ", ".join(parts), "state": state})
        rows.append({**ranked, "anchor": anchor, "cells": cells, "recovery": _recovery(run)})
        if broken:
            pending: dict[str, list[str]] = {}
            for p in run["during"]["pending"]:
                pending.setdefault(p["message"], []).append(p["pod"])
            details.append(
                {
                    "anchor": anchor,
                    "failure": ranked["failure"],
                    "seed": ranked["seed"],
                    "recovered": ranked["recovered"],
                    "settled": run["settled"],
                    "during": run["during"],
                    "after": run["after"],
                    # In the text's order: the message most pods share first, then by message.
                    "during_pending": sorted(pending.items(), key=lambda kv: (-len(kv[1]), kv[0])),
                    "steps": yaml.safe_dump(run["timeline"], sort_keys=False),
                }
            )
    template = _environment().get_template("sweep.html.j2")
    return template.render(
        doc=doc,
        version=__version__,
        base=_sweep_base(doc),
        families=family_counts(doc["failures"]),
        limit=None
        if doc.get("autoscaler") is None
        else _duration(doc["autoscaler"]["recoveryLimit"]),
        seeds=len(doc["seeds"]),
        workloads=workloads,
        rows=rows,
        details=details,
        broken=[r for r in rows if r["anchor"]],
        broken_count=sum(1 for r in doc["ranked"] if r["broken"]),
        hidden=max(0, quiet - MAX_QUIET_ROWS),
        autoscaler=doc.get("autoscaler"),
    )


def _duration(seconds: float) -> str:
    """Seconds as the text reports print durations (Go's ``5m0s``)."""
    return format_duration(round(seconds * SECOND))


def _sweep_base(doc: dict[str, Any]) -> list[str]:
    """The base state per seed, as the text's lines say it (with the autoscaler's start)."""
    several = len(doc["base"]) > 1
    scaled = doc.get("autoscaler") or {}
    out = []
    for seed, base in doc["base"].items():
        where = f" (seed {seed})" if several else ""
        n = base["running"]
        violated = (
            f"{len(base['violated'])} constraints violated"
            if base["violated"]
            else "no constraint violated"
        )
        out.append(
            f"Base state{where}: {n} pod{'s' if n != 1 else ''} Running, "
            f"{len(base['pending'])} Pending; {violated}."
        )
        r = scaled.get("base", {}).get(seed)
        if r is not None and (r["pendingBefore"] or r["added"] or r["removed"]):
            nodes = ", ".join(
                [f"+{k} {g}" for g, k in r["added"].items()]
                + [f"-{k} {g}" for g, k in r["removed"].items()]
            )
            head = (
                f"recovered in {_duration(r['took'])}"
                if r["recovered"]
                else f"NOT recovered within {_duration(r['limit'])}"
            )
            out.append(
                f"Base state{where}: {r['pendingBefore']} Pending before the autoscaler; "
                f"{head}: {nodes or 'no node added or removed'}."
            )
    return out


def _recovery(run: dict[str, Any]) -> dict[str, Any] | None:
    """A run's autoscaler recovery as the sweep page shows it (``took`` as Go prints it)."""
    r = run.get("autoscaler")
    if r is None:
        return None
    took = None if r["took"] is None else _duration(r["took"])
    return {**r, "took_text": took}


def rebalance_html(doc: dict[str, Any]) -> str:
    """``rebalance -o json``'s document as a report: the targets, the plan with where each
    replacement landed and why, the topology before and after, and the descheduler's rounds."""
    names = _workload_names([doc["before"], *([doc["after"]] if doc["after"] else [])])
    color = {n: i for i, n in enumerate(names)}
    sections = []
    for title, report, anchor in (
        ("Before", doc["before"], "before"),
        ("After the plan (replayed)", doc["after"], "after"),
    ):
        if report is not None:
            sections.append((title, {**_step(report, color, 1), "anchor": anchor}))
    d = doc["descheduler"]
    # As the text says it: with the constraints still violated at the end, and what the exact
    # plan does beside it.
    verdict = ""
    if d is not None:
        left = d["violationsAtTheEnd"]
        exact = (
            "nothing"
            if doc["balanced"]
            else "no plan"
            if doc["plan"] is None
            else f"{len(doc['plan']['evictions'])} eviction(s)"
        )
        verdict = (
            f"It {d['verdict']}; {d['evicted']} eviction(s) in all"
            + (f", {len(left)} constraint(s) still violated" if left else "")
            + f". The exact plan: {exact}."
        )
    template = _environment().get_template("rebalance.html.j2")
    return template.render(
        doc=doc,
        version=__version__,
        workloads=[{"name": n, "color": hue(i)} for i, n in enumerate(names)],
        sections=sections,
        descheduler_verdict=verdict,
        interrupted=doc.get("interrupted", False),
    )


def schedule_html(doc: dict[str, Any]) -> str:
    """``schedule -o json``'s document as a report: where each queued pod went, every
    attempt it took (a preemptor's failed attempt, its nominated node and victims), the
    Pending ones beside their FailedScheduling text, and the cluster after the run."""
    groups: dict[str, int] = {}
    placed = {p["pod"] for p in doc["pods"] if p["node"]}
    on_node: dict[str, list[dict[str, Any]]] = {}
    for key, node_name in doc["bound"].items():
        w = groups.setdefault(_group(key), len(groups))
        on_node.setdefault(node_name, []).append(
            {"key": key, "w": w, "placed": key in placed, "label": _label(key)}
        )
    zones: dict[str, list[dict[str, Any]]] = {}
    for node in doc["nodes"]:
        state = ", ".join((["cordoned"] if node["unschedulable"] else []) + node["taints"])
        zones.setdefault(node["zone"], []).append(
            {"name": node["name"], "state": state, "pods": on_node.get(node["name"], [])}
        )
    pending: dict[str, list[str]] = {}
    for p in doc["pending"]:
        pending.setdefault(p["message"] or "", []).append(p["pod"])
    template = _environment().get_template("schedule.html.j2")
    return template.render(
        doc=doc,
        version=__version__,
        groups=[{"name": g, "color": hue(i)} for g, i in groups.items()],
        pending=list(pending.items()),
        bound=len(placed),
        interrupted=doc.get("interrupted", False),
        step={"zones": _zones_in_order(zones)},
    )


__all__ = [
    "explain_html",
    "rebalance_html",
    "schedule_html",
    "simulate_html",
    "sweep_html",
    "verify_html",
]
