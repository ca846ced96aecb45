"""The ``topospread`` command: a thin layer over library calls.

Exit codes: 0 success, 1 a check failed (conformance), 2 bad input (one clear message, no
traceback).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from topospread import __version__
from topospread.conformance.case import iter_case_files, load_case
from topospread.conformance.runner import compare, evaluate
from topospread.errors import ManifestError, TopospreadError

if TYPE_CHECKING:
    from topospread.analysis.timeline import StepReport
    from topospread.simulator.scenario import Scenario

# Timelines with at least this many steps (the initial state included) show progress.
PROGRESS_MIN_STEPS = 5

app = typer.Typer(
    name="topospread",
    help="kube-scheduler's PodTopologySpread, exactly: evaluate cases, check conformance.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"topospread {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """kube-scheduler's PodTopologySpread, exactly: evaluate cases, check conformance."""


@app.command("evaluate")
def evaluate_command(
    cases: Annotated[
        list[Path], typer.Argument(help="Case files or directories (searched recursively).")
    ],
) -> None:
    """Run each case through the plugin and print one JSON object per case, one per line."""
    for path in iter_case_files(cases):
        result = evaluate(load_case(path))
        typer.echo(json.dumps(result))


@app.command("conformance")
def conformance_command(
    paths: Annotated[
        list[Path], typer.Argument(help="Case files or directories (searched recursively).")
    ],
) -> None:
    """Check every case that has an `expect` block; print failures and `N passed, N failed`."""
    passed = failed = 0
    for path in iter_case_files(paths):
        case = load_case(path)
        if case.expect is None:
            continue
        diffs = compare(case.expect, evaluate(case))
        if diffs:
            failed += 1
            typer.echo(f"FAIL {path}")
            for line in diffs:
                typer.echo(f"  {line}")
        else:
            passed += 1
    typer.echo(f"{passed} passed, {failed} failed")
    if failed:
        raise typer.Exit(1)


class OutputFormat(StrEnum):
    text = "text"
    jsonl = "jsonl"
    yaml = "yaml"


class TieBreakOption(StrEnum):
    random = "random"
    name = "name"


def _load_inputs(
    scenario: Path | None,
    nodes: list[Path] | None,
    pods: list[Path] | None,
    objects: list[Path] | None,
    config: Path | None,
) -> Scenario:
    from topospread.simulator.scenario import load_config, load_manifest_files, load_scenario

    files = [*(nodes or []), *(pods or []), *(objects or [])]
    if scenario is not None:
        if files:
            raise ManifestError("give either a SCENARIO file or --nodes/--pods/--objects, not both")
        loaded = load_scenario(scenario)
        if config is not None:
            loaded.config = load_config(config)
        return loaded
    if not files:
        raise ManifestError("nothing to schedule: give a SCENARIO file or --nodes and --pods files")
    return load_manifest_files(files, config)


@app.command("schedule")
def schedule_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(help="A scenario document {nodes, pods, queue, objects, config}."),
    ] = None,
    nodes: Annotated[
        list[Path] | None, typer.Option("--nodes", help="Node manifests (any kinds are read).")
    ] = None,
    pods: Annotated[
        list[Path] | None,
        typer.Option("--pods", help="Pod manifests: bound pods exist, unbound ones are queued."),
    ] = None,
    objects: Annotated[
        list[Path] | None,
        typer.Option("--objects", help="Services, ReplicaSets, StatefulSets, Namespaces, ..."),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="A KubeSchedulerConfiguration (v1) file.")
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o")] = OutputFormat.text,
    seed: Annotated[int, typer.Option(help="Seed for choosing among equally good nodes.")] = 0,
    tie_break: Annotated[
        TieBreakOption,
        typer.Option(help="Among the best nodes: random (seeded), or the smallest name."),
    ] = TieBreakOption.random,
    percentage_of_nodes_to_score: Annotated[
        int | None,
        typer.Option(
            "--percentage-of-nodes-to-score",
            min=0,
            max=100,
            help="Override the profile's percentageOfNodesToScore (0 = adaptive).",
        ),
    ] = None,
    zone_key: Annotated[
        str | None, typer.Option(help="Node label to group the topology drawing by.")
    ] = None,
) -> None:
    """Place every queued pod as kube-scheduler would; show where each landed, or why not."""
    from topospread.render.report import cluster_yaml, human, jsonl
    from topospread.simulator.run import schedule

    loaded = _load_inputs(scenario, nodes, pods, objects, config)
    for warning in loaded.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    run = schedule(
        loaded,
        seed=seed,
        tie_break=tie_break.value,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
    )
    if output is OutputFormat.jsonl:
        for line in jsonl(run):
            typer.echo(line)
    elif output is OutputFormat.yaml:
        typer.echo(cluster_yaml(run), nl=False)
    else:
        typer.echo(human(run, zone_key=zone_key))


@app.command("explain")
def explain_command(
    scenario: Annotated[Path, typer.Argument(help="A scenario document.")],
    pod: Annotated[str, typer.Option("--pod", help="The queued pod: name or namespace/name.")],
    output: Annotated[OutputFormat, typer.Option("--output", "-o")] = OutputFormat.text,
    seed: Annotated[int, typer.Option(help="Seed for choosing among equally good nodes.")] = 0,
) -> None:
    """Explain one pod: every node's Filter and Score results, its spread domains and skews,
    and, when Pending, the smallest single changes that would let it schedule."""
    from topospread.analysis.explain import explain
    from topospread.render.explain import explanation_text
    from topospread.simulator.scenario import load_scenario

    result = explain(load_scenario(scenario), pod, seed=seed)
    if output is OutputFormat.text:
        typer.echo(explanation_text(result))
    else:
        typer.echo(json.dumps(result.to_json(), indent=None if output is OutputFormat.jsonl else 2))


class SimulateFormat(StrEnum):
    text = "text"
    json = "json"


@app.command("simulate")
def simulate_command(
    scenario: Annotated[
        Path,
        typer.Argument(help="A timeline scenario {nodes, nodeGroups, objects, config, timeline}."),
    ],
    output: Annotated[SimulateFormat, typer.Option("--output", "-o")] = SimulateFormat.text,
    seed: Annotated[
        int, typer.Option(help="Seed for controllers' names and the scheduler's tie-breaks.")
    ] = 0,
    zone_key: Annotated[
        str | None, typer.Option(help="Node label to group the topology drawing by.")
    ] = None,
) -> None:
    """Replay a timeline (scale, rollout, drain, taint, zone outage, new nodes, ...): after
    each step, controllers and scheduler run until nothing changes; report placements,
    Pending pods and each workload's spread and violated constraints."""
    from topospread.analysis.timeline import simulate
    from topospread.render.timeline import timeline_json, timeline_text
    from topospread.simulator.timeline import load_timeline

    loaded = load_timeline(scenario)
    with _progress(len(loaded.steps) + 1) as on_step:
        report = simulate(loaded, seed=seed, on_step=on_step)
    for warning in report.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    if output is SimulateFormat.json:
        typer.echo(timeline_json(report))
    else:
        typer.echo(timeline_text(report, zone_key=zone_key))


@contextlib.contextmanager
def _progress(total: int) -> Iterator[Callable[[StepReport, int], None] | None]:
    """A rich progress bar on stderr for long timelines, only when stderr is a terminal."""
    if total < PROGRESS_MIN_STEPS or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("simulating", total=total)

        def advance(step: StepReport, _total: int) -> None:
            progress.update(task, advance=1, description=f"step {step.index}: {step.name}")

        yield advance


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and exit code 2."""
    try:
        app(args=argv, standalone_mode=True)
    except TopospreadError as err:
        typer.echo(f"topospread: error: {err}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
