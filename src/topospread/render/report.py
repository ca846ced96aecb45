"""Reports of a scheduling run: human text, JSON lines, and the resulting cluster as YAML."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec
import yaml

from topospread.render.topology import Column, draw_topology
from topospread.simulator.run import ScheduleRun


def human(run: ScheduleRun, *, zone_key: str | None = None) -> str:
    """Each pod -> its node or Pending with the FailedScheduling text, then the topology."""
    lines = []
    width = max((len(o.key) for o in run.outcomes), default=0)
    for o in run.outcomes:
        if o.node is not None:
            lines.append(f"{o.key.ljust(width)}  -> {o.node}")
        elif o.message is not None and o.message.startswith("preempted by"):
            lines.append(f"{o.key.ljust(width)}  Deleted: {o.message}")
        else:
            lines.append(f"{o.key.ljust(width)}  Pending: {o.message}")
    summary = f"{len(run.bound)} of {len(run.outcomes)} queued pods bound"
    if run.pending:
        summary += f", {len(run.pending)} not bound"
    lines += ["", summary + "."]
    lines += [f"{key} was preempted by {by} and deleted." for key, by in run.preempted_existing]
    finished = run.scenario.terminal_pods
    if finished:
        lines.append(
            f"{len(finished)} bound pod(s) Succeeded or Failed: not drawn, and ignored by "
            "kube-scheduler."
        )
    lines.append("")
    placed = {o.key: "*" for o in run.bound}
    columns = [Column(info.node, info.pods) for info in run.cluster.list()]
    lines.append(draw_topology(columns, zone_key=zone_key, highlight=placed))
    if placed:
        lines.append("* placed by this run")
    return "\n".join(lines)


def jsonl(run: ScheduleRun) -> Iterator[str]:
    """A header with the profile's plugins, then one line per queued pod, in queue order."""
    frameworks = run.scheduler.frameworks
    first = next(iter(frameworks.values()))
    header: dict[str, Any] = {"plugins": first.describe()}
    if len(frameworks) > 1:
        header["profiles"] = {name: f.describe() for name, f in frameworks.items()}
    yield json.dumps(header)
    for o in run.outcomes:
        yield json.dumps(o.to_json())


def cluster_yaml(run: ScheduleRun) -> str:
    """The cluster after the run as a multi-document manifest stream, ready to feed back in."""
    docs: list[Any] = []
    for info in run.cluster.list():
        docs.append(_manifest(info.node))
    for info in run.cluster.list():
        docs.extend(_manifest(p) for p in info.pods)
    docs.extend(_manifest(p) for p in run.scenario.terminal_pods)
    docs.extend(_manifest(o.pod) for o in run.pending)
    docs.extend(_manifest(o) for o in run.scenario.objects)
    return yaml.safe_dump_all(docs, sort_keys=False, default_flow_style=False)


def _manifest(obj: msgspec.Struct) -> Any:
    """The object as a manifest: apiVersion and kind first (defaults are omitted otherwise)."""
    body = msgspec.to_builtins(obj)
    head = {"apiVersion": getattr(obj, "api_version", ""), "kind": getattr(obj, "kind", "")}
    return {**head, **{k: v for k, v in body.items() if k not in head}}
