"""The ``topospread`` command: a thin layer over library calls.

Exit codes: 0 success, 1 a check failed (conformance), 2 bad input (one clear message, no
traceback).
"""

from __future__ import annotations

import dataclasses
import io
import json
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperOption

from topospread import __version__
from topospread.conformance.case import iter_case_files, load_case
from topospread.conformance.runner import compare, evaluate
from topospread.errors import ManifestError, TopospreadError

if TYPE_CHECKING:
    from topospread.analysis.design import RedisPlan, SpreadPlan
    from topospread.analysis.reports import StepReport
    from topospread.analysis.sweep import Outcome
    from topospread.analysis.verify import VerifyProgress
    from topospread.simulator.scenario import Scenario
    from topospread.simulator.timeline import TimelineScenario

# NOTE: typer 0.29's help shows a type for every option, "<bool>" for flags, as if they took
# a value; a flag shows none (checked by tests/test_cli.py).
_display_type = TyperOption.display_type_rich


def _flag_display_type(self: TyperOption, ctx: Any) -> str | None:
    return None if self.is_flag else _display_type(self, ctx)


TyperOption.display_type_rich = _flag_display_type  # type: ignore[method-assign]

# Timelines with at least this many steps (the initial state included) show progress.
PROGRESS_MIN_STEPS = 5

_SUMMARY = (
    "kube-scheduler's PodTopologySpread, exactly: schedule pods, explain a placement, verify "
    "every scheduling order, design constraints, simulate a timeline, sweep every failure, "
    "rebalance skewed workloads; evaluate and conformance for the case format."
)

app = typer.Typer(
    name="topospread",
    help=_SUMMARY,
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
    """kube-scheduler's PodTopologySpread, exactly."""


def _case_files(paths: list[Path]) -> list[Path]:
    """The case files of ``paths``; none found is an error (a wrong path must not pass)."""
    found = list(iter_case_files(paths))
    if not found:
        named = ", ".join(str(p) for p in paths)
        raise ManifestError(f"{named}: no case file (*.yaml, *.yml) found")
    return found


@app.command("evaluate")
def evaluate_command(
    cases: Annotated[
        list[Path], typer.Argument(help="Case files or directories (searched recursively).")
    ],
) -> None:
    """Run each case through the plugin and print one JSON object per case, one per line."""
    for path in _case_files(cases):
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
    for path in _case_files(paths):
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
    json = "json"
    jsonl = "jsonl"
    yaml = "yaml"
    html = "html"


class ExplainFormat(StrEnum):
    text = "text"
    json = "json"
    jsonl = "jsonl"
    html = "html"


class TieBreakOption(StrEnum):
    random = "random"
    name = "name"


LiveOption = Annotated[
    bool,
    typer.Option(
        "--live", help="Read a live cluster (read-only): the default kubeconfig's current context."
    ),
]
KubeconfigOption = Annotated[
    str | None,
    typer.Option(
        "--kubeconfig", metavar="PATH", help="Read the live cluster of this kubeconfig (read-only)."
    ),
]
ClusterOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--cluster",
        metavar="FILE",
        help="Start from this cluster: `kubectl get nodes,pods,... -A -o yaml|json` output.",
    ),
]
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        metavar="FILE",
        help="Also write the report as one self-contained HTML file.",
    ),
]
ContextOption = Annotated[
    str | None,
    typer.Option(
        "--context", metavar="NAME", help="The kubeconfig context to read (default: current)."
    ),
]


def _load_inputs(
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
    require: Annotated[
        str | None,
        typer.Option(metavar="LIST", help="Exit 1 when a requirement breaks: no-pending."),
    ] = None,
    html: HtmlOption = None,
    live: LiveOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Place every queued pod as kube-scheduler would; show where each landed, or why not.
    Workloads given with --pods (Deployments, StatefulSets, ReplicaSets, Jobs) are expanded
    into the pods their controllers create."""
    from topospread.render.report import (
        DetailSpill,
        human,
        write_cluster_yaml,
        write_json,
        write_jsonl,
    )
    from topospread.simulator.run import schedule

    requirements = _requirements(require, ("no-pending",))

    loaded = _load_inputs(
        scenario, nodes, pods, objects, config, live=live, kubeconfig=kubeconfig, context=context
    )
    for warning in loaded.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    with DetailSpill() as spill:
        run = schedule(
            loaded,
            seed=seed,
            tie_break=tie_break.value,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
            # Only jsonl shows every node's scores and reasons; gathering them for a successful
            # attempt costs a reference recount, and changes no decision. The spill takes each
            # attempt's detail out of memory as soon as it is decided.
            detail=output in (OutputFormat.jsonl, OutputFormat.json, OutputFormat.html)
            or html is not None,
            on_decision=spill.record
            if output in (OutputFormat.jsonl, OutputFormat.json, OutputFormat.html)
            or html is not None
            else None,
        )

        def page() -> str:
            from topospread.render.html import schedule_html

            buffer = io.BytesIO()
            write_json(run, buffer, spill)
            return schedule_html(json.loads(buffer.getvalue()))

        _html(page, print_it=output is OutputFormat.html, path=html)
        if output is OutputFormat.jsonl:
            sys.stdout.flush()
            write_jsonl(run, sys.stdout.buffer, spill)
        elif output is OutputFormat.json:
            sys.stdout.flush()
            write_json(run, sys.stdout.buffer, spill)
        elif output is OutputFormat.yaml:
            write_cluster_yaml(run, sys.stdout)
            sys.stdout.flush()
        else:
            typer.echo(human(run, zone_key=zone_key))
    if "no-pending" in requirements and run.pending:
        raise typer.Exit(1)


def _requirements(text: str | None, supported: Sequence[str]) -> list[str]:
    """A ``--require`` list, each checked against what the command supports."""
    requirements = [r.strip() for r in (text or "").split(",") if r.strip()]
    for r in requirements:
        if r not in supported:
            raise ManifestError(
                f'--require: Unsupported value: "{r}": supported values: '
                + ", ".join(f'"{x}"' for x in supported)
            )
    return requirements


@app.command("explain")
def explain_command(
    pod: Annotated[str, typer.Option("--pod", help="The queued pod: name or namespace/name.")],
    scenario: Annotated[Path | None, typer.Argument(help="A scenario document.")] = None,
    output: Annotated[
        ExplainFormat,
        typer.Option("--output", "-o", help="text, json, jsonl (one line), or html."),
    ] = ExplainFormat.text,
    html: HtmlOption = None,
    seed: Annotated[int, typer.Option(help="Seed for choosing among equally good nodes.")] = 0,
    live: LiveOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Explain one pod: every node's Filter and Score results, its spread domains and skews,
    and, when Pending, the smallest single changes that would let it schedule."""
    from topospread.analysis.explain import explain
    from topospread.render.explain import explanation_text

    loaded = _load_inputs(
        scenario, None, None, None, None, live=live, kubeconfig=kubeconfig, context=context
    )
    result = explain(loaded, pod, seed=seed)
    from topospread.render.html import explain_html

    if _html(
        lambda: explain_html(result.to_json()), print_it=output is ExplainFormat.html, path=html
    ):
        return
    if output is ExplainFormat.text:
        typer.echo(explanation_text(result))
    else:
        import msgspec

        encoded = msgspec.json.encode(result.to_json())
        if output is ExplainFormat.json:
            encoded = msgspec.json.format(encoded, indent=2)
        sys.stdout.flush()
        sys.stdout.buffer.write(encoded + b"\n")
        sys.stdout.buffer.flush()


class ReportFormat(StrEnum):
    """The output of verify: a text report, or one JSON document."""

    text = "text"
    json = "json"


class TimelineFormat(StrEnum):
    """The output of simulate and verify: a text report, one JSON document, or an HTML
    report."""

    text = "text"
    json = "json"
    html = "html"


@app.command("verify")
def verify_command(
    scenario: Annotated[
        Path,
        typer.Argument(help="A verify scenario: the schedule keys plus workloads, invariants."),
    ],
    any_feasible: Annotated[
        bool,
        typer.Option(
            "--any-feasible",
            help="Branch over every feasible node, not only the best-scoring ones.",
        ),
    ] = False,
    max_states: Annotated[
        int | None,
        typer.Option(
            "--max-states", min=1, help="State budget before falling back [default: 50000]."
        ),
    ] = None,
    samples: Annotated[
        int | None,
        typer.Option(min=0, help="Random complete orders to try past the budget [default: 200]."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for the random sampling.")] = 0,
    output: Annotated[TimelineFormat, typer.Option("--output", "-o")] = TimelineFormat.text,
    html: HtmlOption = None,
    zone_key: Annotated[
        str | None, typer.Option(help="Node label to group the topology drawing by.")
    ] = None,
) -> None:
    """Prove that no scheduling order deadlocks or breaks an invariant, or show the shortest
    counterexample. Exit 0 when proven (or nothing found by a bounded run, which says it is not
    a proof), 1 when a counterexample is found."""
    from topospread.analysis.verify import (
        DEFAULT_MAX_STATES,
        DEFAULT_SAMPLES,
        load_verify_scenario,
        verify,
    )
    from topospread.render.verify import verify_text

    loaded = load_verify_scenario(scenario)
    for warning in loaded.scenario.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    with _verify_progress() as progress:
        result = verify(
            loaded,
            any_feasible=any_feasible,
            max_states=DEFAULT_MAX_STATES if max_states is None else max_states,
            samples=DEFAULT_SAMPLES if samples is None else samples,
            seed=seed,
            progress=progress,
        )
    from topospread.render.html import verify_html

    _html(lambda: verify_html(result.to_json()), print_it=output is TimelineFormat.html, path=html)
    if output is TimelineFormat.json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    elif output is TimelineFormat.text:
        typer.echo(verify_text(result, zone_key=zone_key))
    if not result.ok:
        raise typer.Exit(1)


@contextmanager
def _verify_progress() -> Iterator[Callable[[VerifyProgress], None] | None]:
    """A status line on stderr while the search runs, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    with Console(stderr=True).status("verifying") as status:

        def update(p: VerifyProgress) -> None:
            if p.phase == "search":
                status.update(
                    f"searching: {p.states} states, depth {p.depth}, {p.frontier} to expand"
                )
            else:
                status.update(f"state budget reached; sampling: {p.samples} random orders")

        yield update


design_app = typer.Typer(
    name="design",
    help="Compile availability requirements into topology spread constraints.",
    no_args_is_help=True,
)
app.add_typer(design_app)


class DesignFormat(StrEnum):
    text = "text"
    yaml = "yaml"
    json = "json"


# Both designs write and verify their scenario the same way.
DesignScenarioOption = Annotated[
    Path | None, typer.Option("--scenario", help="Write the verify scenario to FILE.")
]
DesignVerifyOption = Annotated[
    bool, typer.Option("--verify", help="Verify the design over every scheduling order.")
]


@design_app.command("redis-cluster")
def design_redis_command(
    shards: Annotated[int, typer.Option("--shards", help="Number of shards (masters).")],
    zones: Annotated[str, typer.Option("--zones", help="Comma-separated zones, e.g. z1,z2,z3.")],
    replicas: Annotated[
        int,
        typer.Option(
            "--replicas",
            help="Replicas per master (as redis-cli --cluster-replicas): 1 + R pods per shard.",
        ),
    ] = 1,
    nodes_per_zone: Annotated[
        int | None,
        typer.Option("--nodes-per-zone", help="Nodes per zone in the scenario (default: enough)."),
    ] = None,
    relaxed: Annotated[
        bool,
        typer.Option(
            "--relaxed",
            help='The "at most" variant: maxSkews floor(total/3) and floor(total/2), no minus 1.',
        ),
    ] = False,
    name: Annotated[str, typer.Option("--name", help="App label value and name prefix.")] = (
        "redis-cluster"
    ),
    output: Annotated[DesignFormat, typer.Option("--output", "-o")] = DesignFormat.text,
    scenario: DesignScenarioOption = None,
    verify: DesignVerifyOption = False,
) -> None:
    """StatefulSets (one per shard) with the spread constraints, node affinity and pod
    anti-affinity the Redis availability rules imply, each number with its arithmetic.
    Exit 1 when no placement can satisfy the rules."""
    from topospread.analysis.design import RedisDesign, design_redis_cluster, parse_zones
    from topospread.render.design import manifests_yaml, redis_text, scenario_yaml

    plan = design_redis_cluster(
        RedisDesign(
            shards=shards,
            replicas=replicas,
            zones=parse_zones(zones),
            nodes_per_zone=nodes_per_zone,
            relaxed=relaxed,
            name=name,
        )
    )
    if output is DesignFormat.json:
        typer.echo(json.dumps(plan.to_json(), indent=2, ensure_ascii=False))
    elif output is DesignFormat.yaml:
        typer.echo(manifests_yaml(list(plan.stateful_sets)), nl=False)
        # The manifests alone would hide what the arithmetic found: say it on stderr.
        for check in plan.checks:
            if not check.holds:
                typer.echo(f"topospread: warning: not guaranteed: {check.requirement}", err=True)
        for problem in plan.problems:
            typer.echo(f"topospread: warning: cannot be satisfied: {problem}", err=True)
    else:
        typer.echo(redis_text(plan), nl=False)
    if scenario is not None:
        _write(scenario, scenario_yaml(plan))
    if verify:
        # After JSON or bare manifests the report goes to stderr, keeping stdout parseable.
        _verify_design(plan, scenario, to_stderr=output is not DesignFormat.text)
    if not plan.satisfiable:
        raise typer.Exit(1)


def _html(make: Callable[[], str], *, print_it: bool, path: Path | None) -> bool:
    """The HTML report ``make()`` makes, written to ``path`` (``--html FILE``) and printed
    when ``print_it`` (``-o html``); made only when one of them asks. True when printed."""
    if not print_it and path is None:
        return False
    page = make()
    if path is not None:
        _write(path, page)
    if print_it:
        typer.echo(page, nl=False)
    return print_it


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise ManifestError(f"{path}: cannot write it: {err.strerror}") from err


def _verify_design(plan: RedisPlan | SpreadPlan, scenario: Path | None, *, to_stderr: bool) -> None:
    """Run ``verify`` on the design's scenario (the --scenario file, or a temporary one), print
    its report, and exit 1 when it found a counterexample."""
    from topospread.analysis.verify import load_verify_scenario, verify
    from topospread.render.design import scenario_yaml
    from topospread.render.verify import verify_text

    with tempfile.TemporaryDirectory(prefix="topospread-design-") as tmp:
        path = scenario
        if path is None:
            path = Path(tmp) / "scenario.yaml"
            _write(path, scenario_yaml(plan))
        loaded = load_verify_scenario(path)
    with _verify_progress() as progress:
        result = verify(loaded, progress=progress)
    typer.echo(verify_text(result), err=to_stderr)
    if not result.ok:
        raise typer.Exit(1)


@design_app.command("spread")
def design_spread_command(
    selector: Annotated[
        str, typer.Option("--selector", help="The pods to spread: key=value[,key=value].")
    ],
    topology_key: Annotated[
        str, typer.Option("--topology-key", help="Node label whose values are the domains.")
    ],
    replicas: Annotated[int, typer.Option("--replicas", help="Pods matching the selector.")],
    domains: Annotated[int, typer.Option("--domains", help="Domains to spread over.")],
    max_fraction: Annotated[
        str, typer.Option("--max-fraction", help="Most pods per domain, e.g. 0.5 or 1/3.")
    ],
    soft: Annotated[
        bool, typer.Option("--soft", help="ScheduleAnyway instead of DoNotSchedule.")
    ] = False,
    strict: Annotated[
        bool, typer.Option("--strict", help='"Less than" the fraction instead of "at most".')
    ] = False,
    nodes_per_domain: Annotated[
        int,
        typer.Option("--nodes-per-domain", help="Nodes per domain in the verify scenario."),
    ] = 1,
    output: Annotated[DesignFormat, typer.Option("--output", "-o")] = DesignFormat.text,
    scenario: DesignScenarioOption = None,
    verify: DesignVerifyOption = False,
) -> None:
    """From "at most a fraction F of the pods per domain" to maxSkew, minDomains and the
    constraint, with the arithmetic step by step. Exit 1 when no maxSkew satisfies it (or
    when --verify finds a counterexample)."""
    from topospread.analysis.design import (
        SpreadDesign,
        design_spread,
        parse_fraction,
        parse_selector,
    )
    from topospread.render.design import spread_text

    plan = design_spread(
        SpreadDesign(
            selector=parse_selector(selector),
            topology_key=topology_key,
            replicas=replicas,
            domains=domains,
            max_fraction=parse_fraction(max_fraction),
            hard=not soft,
            strict=strict,
            nodes_per_domain=nodes_per_domain,
        )
    )
    constraint = plan.constraint()
    if output is DesignFormat.json:
        typer.echo(json.dumps(plan.to_json(), indent=2, ensure_ascii=False))
    elif output is DesignFormat.yaml and constraint is not None:
        from topospread.render.design import manifests_yaml

        typer.echo(manifests_yaml([{"topologySpreadConstraints": [constraint]}]), nl=False)
    else:
        # Text, or YAML with no constraint to print: the arithmetic says why (on stderr then).
        typer.echo(spread_text(plan), nl=False, err=output is DesignFormat.yaml)
    if constraint is None:
        if scenario is not None or verify:
            typer.echo("topospread: warning: no constraint fits: nothing to verify", err=True)
        raise typer.Exit(1)
    if scenario is not None:
        from topospread.render.design import scenario_yaml

        _write(scenario, scenario_yaml(plan))
    if verify:
        _verify_design(plan, scenario, to_stderr=output is not DesignFormat.text)


@app.command("simulate")
def simulate_command(
    scenario: Annotated[
        Path,
        typer.Argument(help="A timeline scenario {nodes, nodeGroups, objects, config, timeline}."),
    ],
    output: Annotated[TimelineFormat, typer.Option("--output", "-o")] = TimelineFormat.text,
    html: HtmlOption = None,
    seed: Annotated[
        int, typer.Option(help="Seed for controllers' names and the scheduler's tie-breaks.")
    ] = 0,
    zone_key: Annotated[
        str | None, typer.Option(help="Node label to group the topology drawing by.")
    ] = None,
    cluster: ClusterOption = None,
    live: LiveOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Replay a timeline (scale, rollout, drain, taint, zone outage, new nodes, ...): after
    each step, controllers and scheduler run until nothing changes; report placements,
    Pending pods and each workload's spread and violated constraints. With --cluster files or
    a live cluster, the timeline starts from that cluster (read-only)."""
    from topospread.analysis.timeline import simulate
    from topospread.render.timeline import timeline_json, timeline_text

    loaded = _timeline_input(scenario, cluster, live, kubeconfig, context)
    with _simulate_progress(len(loaded.steps) + 1) as on_step:
        report = simulate(loaded, seed=seed, on_step=on_step)
    for warning in report.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    from topospread.render.html import simulate_html

    if _html(
        lambda: simulate_html(report.to_json()), print_it=output is TimelineFormat.html, path=html
    ):
        return
    if output is TimelineFormat.json:
        typer.echo(timeline_json(report))
    else:
        typer.echo(timeline_text(report, zone_key=zone_key))


def _timeline_input(
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


class SweepFormat(StrEnum):
    """A text report, every run as one JSON or YAML document, or an HTML report."""

    text = "text"
    json = "json"
    yaml = "yaml"
    html = "html"


@app.command("sweep")
def sweep_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="A timeline scenario {nodes, nodeGroups, objects, config, timeline}; its "
            "timeline's steps lead to the base state. Optional with --cluster or a live cluster."
        ),
    ] = None,
    zones: Annotated[bool, typer.Option("--zones", help="Each zone lost, then restored.")] = False,
    nodes: Annotated[bool, typer.Option("--nodes", help="Each node lost, then restored.")] = False,
    drains: Annotated[
        bool, typer.Option("--drains", help="Each node drained (budgets honoured), uncordoned.")
    ] = False,
    max_failures: Annotated[
        int,
        typer.Option(
            "--max-failures", min=1, metavar="K", help="Also every combination of up to K nodes."
        ),
    ] = 1,
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds", min=1, metavar="N", help="Tie-break seeds 0..N-1 (or from --seed)."
        ),
    ] = 1,
    seed: Annotated[int, typer.Option(help="The first seed.")] = 0,
    then: Annotated[
        Path | None,
        typer.Option(
            "--then",
            metavar="FILE",
            help="Timeline steps (a YAML list) to apply after each failure, e.g. a scale-up.",
        ),
    ] = None,
    wait: Annotated[
        str | None,
        typer.Option(
            metavar="DURATION",
            help="How long a lost zone or node stays lost before the requirements are read "
            "(default: until the last toleration of the unreachable taint runs out).",
        ),
    ] = None,
    zone_key: Annotated[str, typer.Option(help="The node label that names zones.")] = (
        "topology.kubernetes.io/zone"
    ),
    after_timeline: Annotated[
        bool,
        typer.Option(
            "--after-timeline",
            help="Replay the scenario's own timeline first: its end is the base state "
            "(by default the sweep's failures replace it).",
        ),
    ] = False,
    require: Annotated[
        str | None,
        typer.Option(
            metavar="LIST",
            help="Exit 1 when a run breaks any of: no-pending, no-violation, "
            "no-blocked-drain, recovers (comma-separated).",
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs",
            "-j",
            min=1,
            help="Worker processes (default: one per core, or one per failure when a few "
            "do not divide evenly over the cores).",
        ),
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(
            metavar="ADDRESS",
            help="Run on a Ray cluster (its address, or 'local' to start one here); needs "
            "the ray extra: pip install 'topospread[ray]'.",
        ),
    ] = None,
    output: Annotated[SweepFormat, typer.Option("--output", "-o")] = SweepFormat.text,
    html: HtmlOption = None,
    cluster: ClusterOption = None,
    live: LiveOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Replay every failure of the chosen families (zones, nodes, drains, node combinations)
    from one settled base state, in parallel: which failures leave pods Pending, violate a
    constraint, block a drain, or do not recover once undone. Worst first."""
    from topospread.analysis.sweep import (
        REQUIREMENTS,
        Backend,
        SweepOptions,
        serial_backend,
        sweep,
    )
    from topospread.analysis.sweep_pool import default_workers, process_backend
    from topospread.render.sweep import sweep_json, sweep_text, sweep_yaml

    requirements = _requirements(require, REQUIREMENTS)
    if not (zones or nodes or drains or max_failures > 1):
        raise ManifestError("choose what fails: --zones, --nodes, --drains or --max-failures K")
    loaded = _timeline_input(scenario, cluster, live, kubeconfig, context)
    options = SweepOptions(
        then=tuple(_then_steps(then)) if then is not None else (),
        wait=_duration_option("--wait", wait) if wait is not None else None,
        source=loaded.source,
    )
    backend: Backend = serial_backend
    if ray is not None:
        from topospread.analysis.sweep_ray import ray_backend

        backend = ray_backend(ray)
    elif jobs is not None:
        if jobs > 1:
            backend = process_backend(jobs)
    elif (cores := default_workers()) > 1:
        backend = process_backend(cores, share_cores=True)
    if not after_timeline:
        loaded = dataclasses.replace(loaded, steps=[])
    with _sweep_progress() as (on_planned, on_run):
        report = sweep(
            loaded,
            zones=zones,
            nodes=nodes,
            drains=drains,
            max_failures=max_failures,
            zone_key=zone_key,
            seeds=list(range(seed, seed + seeds)),
            options=options,
            on_planned=on_planned,
            on_run=on_run,
            backend=backend,
        )
    for warning in report.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    from topospread.render.html import sweep_html

    _html(lambda: sweep_html(report.to_json()), print_it=output is SweepFormat.html, path=html)
    if output is SweepFormat.json:
        typer.echo(sweep_json(report))
    elif output is SweepFormat.yaml:
        typer.echo(sweep_yaml(report), nl=False)
    elif output is SweepFormat.text:
        typer.echo(sweep_text(report, requirements=requirements), nl=False)
    if report.interrupted:
        typer.echo(
            f"topospread: interrupted: {len(report.outcomes)} of {report.planned} runs completed",
            err=True,
        )
        raise typer.Exit(130)
    if requirements and report.failing(requirements):
        raise typer.Exit(1)


class CheckFormat(StrEnum):
    """The report's shape: text, one JSON document, or GitHub Actions annotations."""

    text = "text"
    json = "json"
    github = "github"


@app.command("check")
def check_command(
    manifests: Annotated[
        list[str],
        typer.Argument(
            metavar="MANIFESTS...",
            help="Files or directories of manifests (helm template, kustomize build output), "
            "or - for standard input.",
        ),
    ],
    cluster: ClusterOption = None,
    zones: Annotated[
        int | None, typer.Option("--zones", min=1, help="A generated shape: this many zones.")
    ] = None,
    nodes_per_zone: Annotated[
        int, typer.Option("--nodes-per-zone", min=1, help="Nodes per zone (generated shape).")
    ] = 2,
    node_cpu: Annotated[str, typer.Option("--node-cpu", help="Each node's CPU.")] = "8",
    node_memory: Annotated[str, typer.Option("--node-memory", help="Each node's memory.")] = (
        "32Gi"
    ),
    survive: Annotated[
        list[str] | None,
        typer.Option(
            "--survive",
            metavar="zone|node",
            help="Also every single zone (node) loss: no new Pending pod, no new violation.",
        ),
    ] = None,
    output: Annotated[CheckFormat, typer.Option("--output", "-o")] = CheckFormat.text,
    output_format: Annotated[
        CheckFormat | None,
        typer.Option("--format", help="Alias of --output (github: Actions annotations)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for names and tie-breaks.")] = 0,
    live: LiveOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Check chart output against a cluster: every pod of every workload schedules and every
    DoNotSchedule constraint holds (with --survive, after each zone or node loss too);
    warnings for ScheduleAnyway preferences and common spread mistakes. Exit 0 pass, 1 fail,
    2 bad input."""
    from topospread.analysis.check import SURVIVE, Shape, check
    from topospread.render.check import check_github, check_json, check_text

    for kind in survive or ():
        if kind not in SURVIVE:
            raise ManifestError(
                f'--survive: Unsupported value: "{kind}": supported values: '
                + ", ".join(f'"{k}"' for k in SURVIVE)
            )
    live_cluster = live or kubeconfig is not None or context is not None
    if sum((bool(cluster), live_cluster, zones is not None)) != 1:
        raise ManifestError(
            "give the cluster once: --cluster node files, a live cluster (--live, "
            "--kubeconfig, --context), or a generated shape (--zones N --nodes-per-zone M)"
        )
    objects = _read_manifests(manifests)
    shape = None
    existing: list[tuple[str, Any]] = []
    if zones is not None:
        shape = Shape(zones, nodes_per_zone, node_cpu, node_memory)
    elif cluster:
        from topospread.api.loader import load_manifests

        existing = [
            (f"{path}: object {i + 1}", obj)
            for path in cluster
            for i, obj in enumerate(load_manifests(path))
        ]
    else:
        from topospread.cluster.live import read_cluster

        found = read_cluster(kubeconfig, context)
        for warning in found.warnings:
            typer.echo(f"topospread: warning: {warning}", err=True)
        existing = [(found.source, obj) for obj in found.objects]
    source = ", ".join("<stdin>" if m == "-" else m for m in manifests)
    report = check(
        objects, source=source, cluster=existing, shape=shape, survive=survive or (), seed=seed
    )
    shown = output_format or output
    if shown is CheckFormat.json:
        typer.echo(check_json(report))
    elif shown is CheckFormat.github:
        typer.echo(check_github(report))
    else:
        typer.echo(check_text(report))
    if not report.passed:
        raise typer.Exit(1)


def _read_manifests(paths: Sequence[str]) -> list[tuple[str, Any]]:
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


class EmitFormat(StrEnum):
    """What ``--emit`` writes instead of the report."""

    evictions = "evictions"


@app.command("rebalance")
def rebalance_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="A timeline scenario {nodes, nodeGroups, objects, config, timeline}; the "
            "cluster after its timeline is what is rebalanced. Optional with --cluster or a "
            "live cluster."
        ),
    ] = None,
    include_soft: Annotated[
        bool,
        typer.Option("--include-soft", help="Rebalance ScheduleAnyway constraints too."),
    ] = False,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Only these namespaces (repeat the flag)."),
    ] = None,
    exclude_namespace: Annotated[
        list[str] | None,
        typer.Option("--exclude-namespace", help="Not these namespaces (repeat the flag)."),
    ] = None,
    selector: Annotated[
        str | None,
        typer.Option(
            "--selector", "-l", metavar="SELECTOR", help="Evict only pods these labels select."
        ),
    ] = None,
    evict_local_storage: Annotated[
        bool,
        typer.Option(
            "--evict-local-storage", help="Pods with emptyDir or hostPath volumes may be evicted."
        ),
    ] = False,
    max_evictions: Annotated[
        int, typer.Option("--max-evictions", min=1, help="The largest plan searched.")
    ] = 6,
    max_replays: Annotated[
        int, typer.Option("--max-replays", min=1, help="Plans replayed before the search stops.")
    ] = 200,
    descheduler: Annotated[
        bool,
        typer.Option(
            "--descheduler",
            help="Also replay the descheduler's RemovePodsViolatingTopologySpreadConstraint "
            "(v0.34) on the same cluster, round after round, beside the exact plan.",
        ),
    ] = False,
    rounds: Annotated[
        int, typer.Option("--rounds", min=1, help="The descheduler's rounds at most.")
    ] = 10,
    topology_balance_node_fit: Annotated[
        bool,
        typer.Option(
            "--topology-balance-node-fit/--no-topology-balance-node-fit",
            help="The descheduler's topologyBalanceNodeFit: move only pods that fit a node of "
            "a smaller domain.",
        ),
    ] = True,
    seed: Annotated[
        int, typer.Option(help="Seed for controllers' names and the scheduler's tie-breaks.")
    ] = 0,
    zone_key: Annotated[
        str | None, typer.Option(help="Node label to group the topology drawing by.")
    ] = None,
    output: Annotated[SweepFormat, typer.Option("--output", "-o")] = SweepFormat.text,
    html: HtmlOption = None,
    emit: Annotated[
        EmitFormat | None,
        typer.Option(
            help="Write the plan's policy/v1 Eviction manifests (plan order) instead of the report."
        ),
    ] = None,
    cluster: ClusterOption = None,
    live: LiveOption = False,
    kubeconfig: KubeconfigOption = None,
    context: ContextOption = None,
) -> None:
    """Find the fewest evictions that bring violated spread constraints back within maxSkew,
    proven by replaying them (eviction API and budgets, controllers, the exact scheduler) on
    a copy of the cluster. Exit 0: balanced, or a plan was found; 1: no plan; 2: bad input."""
    from topospread.analysis.rebalance import (
        RebalanceOptions,
        descheduler_options,
        descheduler_rounds,
        plan_rebalance,
    )
    from topospread.analysis.timeline import settle_timeline
    from topospread.labels.selector import SelectorError, parse
    from topospread.render.rebalance import (
        evictions_yaml,
        rebalance_json,
        rebalance_text,
        rebalance_yaml,
    )

    try:
        chosen = parse(selector) if selector is not None else None
    except SelectorError as err:
        raise ManifestError(f"--selector: {err}") from err
    options = RebalanceOptions(
        include_soft=include_soft,
        namespaces=tuple(namespace or ()),
        exclude_namespaces=tuple(exclude_namespace or ()),
        selector=chosen,
        evict_local_storage=evict_local_storage,
        max_evictions=max_evictions,
        max_replays=max_replays,
    )
    loaded = _timeline_input(scenario, cluster, live, kubeconfig, context)
    sim = settle_timeline(loaded, seed)
    report = plan_rebalance(sim, options, source=loaded.source)
    if descheduler:  # the exact plan ran on copies: the cluster is as it was
        chosen_options = dataclasses.replace(
            descheduler_options(options), topology_balance_node_fit=topology_balance_node_fit
        )
        report.descheduler = descheduler_rounds(sim, chosen_options, rounds=rounds)
    for warning in loaded.warnings:
        typer.echo(f"topospread: warning: {warning}", err=True)
    from topospread.render.html import rebalance_html

    shown = output is SweepFormat.html and emit is None
    _html(lambda: rebalance_html(report.to_json()), print_it=shown, path=html)
    if emit is EmitFormat.evictions:
        typer.echo(evictions_yaml(report), nl=False)
    elif output is SweepFormat.json:
        typer.echo(rebalance_json(report))
    elif output is SweepFormat.yaml:
        typer.echo(rebalance_yaml(report), nl=False)
    elif output is SweepFormat.text:
        typer.echo(rebalance_text(report, zone_key=zone_key))
    if not report.balanced and report.plan is None:
        raise typer.Exit(1)


def _then_steps(path: Path) -> list[dict[str, Any]]:
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


def _duration_option(flag: str, text: str) -> int:
    from topospread.simulator.clock import DurationError, parse_duration

    try:
        nanos = parse_duration(text)
    except DurationError as err:
        raise ManifestError(f'{flag}: Invalid value: "{text}": {err}') from err
    if nanos < 0:
        raise ManifestError(f'{flag}: Invalid value: "{text}": must not be negative')
    return nanos


@contextmanager
def _sweep_progress() -> Iterator[
    tuple[Callable[[int], None] | None, Callable[[Outcome], None] | None]
]:
    """A rich progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None, None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("settling the base state", total=None)

        def planned(total: int) -> None:
            progress.update(task, total=total, description="replaying failures")

        def ran(outcome: Outcome) -> None:
            progress.update(task, advance=1, description=outcome.failure.name)

        yield planned, ran


@contextmanager
def _simulate_progress(total: int) -> Iterator[Callable[[StepReport, int], None] | None]:
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


def main(argv: list[str] | None = None, *, prog_name: str = "topospread") -> None:
    """Console entry point: user errors — bad input files and bad command-line arguments alike —
    become one line on stderr and exit code 2."""
    try:
        code = app(args=argv, prog_name=prog_name, standalone_mode=False)
    except TopospreadError as err:
        typer.echo(f"topospread: error: {err}", err=True)
        sys.exit(2)
    except typer.Abort:
        typer.echo("topospread: aborted", err=True)
        sys.exit(1)
    except typer.exceptions.TyperException as err:
        # Click's usage errors (an option's bad value, an unknown command or option); a
        # command run without arguments has printed its help already and has no message.
        message = " ".join(err.format_message().split())
        if message:
            ctx = getattr(err, "ctx", None)
            path = ctx.command_path.removeprefix(prog_name).strip() if ctx else ""
            where = f"{path}: " if path else ""
            typer.echo(f"topospread: error: {where}{message} (see --help)", err=True)
        sys.exit(getattr(err, "exit_code", 2))
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
