"""Reading the commands' inputs (moving to topospread.inputs)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from topospread.conformance.case import iter_case_files
from topospread.errors import ManifestError

if TYPE_CHECKING:
    from topospread.simulator.scenario import Scenario
    from topospread.simulator.timeline import TimelineScenario


def case_files(paths: list[Path]) -> list[Path]:
    """The case files of ``paths``; none found is an error (a wrong path must not pass)."""
    found = list(iter_case_files(paths))
    if not found:
        named = ", ".join(str(p) for p in paths)
        raise ManifestError(f"{named}: no case file (*.yaml, *.yml) found")
    return found


def load_inputs(
    scenario: Path | None,
    nodes: list[Path] | None,
    pods: list[Path] | None,
    objects: list[Path] | None,
    config: Path | None,
    *,
    live: bool = False,
    kubeconfig: str | None = None,
    context: str | None = None,
) -> Scenario:
    from topospread.simulator.scenario import (
        load_config,
        load_live_scenario,
        load_scenario,
    )

    files = [*(nodes or []), *(pods or []), *(objects or [])]
    from_cluster = live or kubeconfig is not None or context is not None
    if sum((scenario is not None, bool(files), from_cluster)) > 1:
        raise ManifestError(
            "give one input: a SCENARIO file, --nodes/--pods/--objects files, "
            "or a live cluster (--live, --kubeconfig, --context)"
        )
    if scenario is not None:
        loaded = load_scenario(scenario)
        if config is not None:
            loaded.config = load_config(config)
        return loaded
    if from_cluster:
        return load_live_scenario(kubeconfig, context, config)
    if not files:
        raise ManifestError(
            "nothing to schedule: give a SCENARIO file, --nodes and --pods files, or --live"
        )
    from topospread.analysis.verify_scenario import expand_workload_pods
    from topospread.api.loader import load_manifests
    from topospread.framework.config import default_config
    from topospread.simulator.scenario import build_scenario

    as_pods = set(pods or [])
    items = [
        (f"{path}: object {i + 1}", obj, path in as_pods)
        for path in files
        for i, obj in enumerate(load_manifests(path))
    ]
    expanded = expand_workload_pods([(w, o) for w, o, _ in items], [e for _, _, e in items])
    return build_scenario(expanded, load_config(config) if config else default_config())


def timeline_input(
    scenario: Path | None,
    cluster: list[Path] | None,
    live: bool,
    kubeconfig: str | None,
    context: str | None,
) -> TimelineScenario:
    """A timeline scenario (or none: an empty one), started from --cluster files or a live
    cluster when given (read-only)."""
    from topospread.simulator.timeline import load_timeline, parse_timeline, with_cluster

    if scenario is not None:
        loaded = load_timeline(scenario)
    elif cluster or live or kubeconfig is not None or context is not None:
        loaded = parse_timeline({}, "cluster")
    else:
        raise ManifestError(
            "give a timeline scenario, --cluster files or a live cluster "
            "(--live, --kubeconfig, --context)"
        )
    if cluster and (live or kubeconfig is not None or context is not None):
        raise ManifestError(
            "give the starting cluster either as --cluster files or live "
            "(--live, --kubeconfig, --context), not both"
        )
    if cluster:
        from topospread.api.loader import load_manifests

        loaded = with_cluster(
            loaded,
            (
                (f"{path}: object {i + 1}", obj)
                for path in cluster
                for i, obj in enumerate(load_manifests(path))
            ),
        )
    elif live or kubeconfig is not None or context is not None:
        from topospread.cluster.live import read_cluster

        found = read_cluster(kubeconfig, context)
        for warning in found.warnings:
            typer.echo(f"topospread: warning: {warning}", err=True)
        loaded = with_cluster(loaded, ((found.source, obj) for obj in found.objects))
    return loaded


def read_manifests(paths: Sequence[str]) -> list[tuple[str, Any]]:
    """Every object of the files, directories (*.yaml, *.yml, *.json, recursively, sorted)
    and standard input (``-``) named, each with where it came from."""
    from topospread.api.loader import load_manifests, load_text

    out: list[tuple[str, Any]] = []
    for name in paths:
        if name == "-":
            data = sys.stdin.buffer.read()
            out += [
                (f"<stdin>: object {i + 1}", o) for i, o in enumerate(load_text(data, "<stdin>"))
            ]
            continue
        path = Path(name)
        if path.is_dir():
            files = sorted(
                p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
            )
            if not files:
                raise ManifestError(f"{path}: no manifest (*.yaml, *.yml, *.json) found")
        elif path.exists():
            files = [path]
        else:
            raise ManifestError(f"{path}: no such file or directory")
        for file in files:
            out += [(f"{file}: object {i + 1}", o) for i, o in enumerate(load_manifests(file))]
    return out


def then_steps(path: Path) -> list[dict[str, Any]]:
    """The --then file: a YAML list of timeline steps, checked as the timeline checks them."""
    from topospread.api.loader import read_yaml_documents
    from topospread.simulator.timeline import parse_step

    docs = read_yaml_documents(path)
    steps = docs[0] if len(docs) == 1 else None
    if isinstance(steps, dict) and set(steps) == {"timeline"}:
        steps = steps["timeline"]
    if not isinstance(steps, list):
        raise ManifestError(f"{path}: expected a list of timeline steps ({{<action>: args}})")
    for i, raw in enumerate(steps):
        parse_step(raw, i, str(path))
    return steps
