"""``verify`` and ``design``: every scheduling order explored, and constraints designed from
availability requirements (and verified the same way)."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final, Literal

import typer

from topospread.cli.app import app
from topospread.cli.emit import emit, warn, write_text
from topospread.cli.interrupting import interrupted_exit, interruptible
from topospread.cli.options import (
    MAX_NODES_DEFAULT,
    MAX_PODS_DEFAULT,
    OUTPUT,
    HtmlOption,
    MaxNodesOption,
    MaxPodsOption,
    TimelineFormat,
    ValidateOption,
    ZoneKeyOption,
    inputs,
    seed_option,
    validating,
)
from topospread.cli.progress import verify_progress

if TYPE_CHECKING:
    from topospread.analysis.design import SpreadPlan
    from topospread.analysis.design_redis import RedisPlan
    from topospread.analysis.verify_results import VerifyResult
    from topospread.limits import Limits

# What ``design --verify`` names as the verified scenario when no --scenario file keeps it.
UNSAVED_DESIGN_SCENARIO: Final = "the design's scenario (not kept: --scenario FILE writes it)"


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
    # The library's DEFAULT_MAX_STATES and DEFAULT_SAMPLES (tests/test_cli_package.py), written
    # out so that --help shows them without importing the search.
    max_states: Annotated[
        int, typer.Option("--max-states", min=1, help="State budget before falling back.")
    ] = 50_000,
    samples: Annotated[
        int, typer.Option(min=0, help="Random complete orders to try past the budget.")
    ] = 200,
    seed: Annotated[int, seed_option("Seed for the random sampling.")] = 0,
    output: Annotated[TimelineFormat, OUTPUT] = "text",
    html: HtmlOption = None,
    zone_key: ZoneKeyOption = None,
    validate: ValidateOption = "strict",
    max_nodes: MaxNodesOption = MAX_NODES_DEFAULT,
    max_pods: MaxPodsOption = MAX_PODS_DEFAULT,
) -> None:
    """Prove that no scheduling order deadlocks or breaks an invariant, or show the shortest
    counterexample. Exit 0 when proven (or nothing found by a bounded run, which says it is not
    a proof), 1 when a counterexample is found."""
    from topospread.analysis.verify import verify
    from topospread.render.html import verify_html
    from topospread.render.verify import verify_text

    with validating(validate):
        loaded = inputs(scenario, max_nodes=max_nodes, max_pods=max_pods).verify_scenario()
    warn(loaded.scenario.warnings)
    with interruptible(), verify_progress() as progress:
        result = verify(
            loaded,
            any_feasible=any_feasible,
            max_states=max_states,
            samples=samples,
            seed=seed,
            progress=progress,
        )
    emit(
        output,
        {
            "text": lambda: verify_text(result, zone_key=zone_key) + "\n",
            "json": lambda: json.dumps(result.to_json(zone_key), indent=2) + "\n",
            "html": lambda: verify_html(result.to_json(zone_key)),
        },
        html=html,
    )
    if result.interrupted:
        raise interrupted_exit(_search_so_far(result))
    if not result.ok:
        raise typer.Exit(1)


def _search_so_far(result: VerifyResult) -> str:
    """What an interrupted search established, for its line on standard error."""
    if not result.ok:
        return f"after {result.states} states: a counterexample was found (reported)"
    sampled = f", then {result.samples} random orders" if result.samples else ""
    return (
        f"after {result.states} states: not a proof; every state up to {result.depth} "
        f"bindings deep was checked{sampled}, no counterexample found so far"
    )


design_app = typer.Typer(
    name="design",
    help="Compile availability requirements into topology spread constraints.",
    no_args_is_help=True,
)
app.add_typer(design_app)

DesignFormat = Literal["text", "yaml", "json"]
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
    output: Annotated[DesignFormat, OUTPUT] = "text",
    scenario: DesignScenarioOption = None,
    verify: DesignVerifyOption = False,
    max_nodes: MaxNodesOption = MAX_NODES_DEFAULT,
    max_pods: MaxPodsOption = MAX_PODS_DEFAULT,
) -> None:
    """StatefulSets (one per shard) with the spread constraints, node affinity and pod
    anti-affinity the Redis availability rules imply, each number with its arithmetic.
    Exit 1 when no placement can satisfy the rules."""
    from topospread.analysis.design_redis import RedisDesign, design_redis_cluster, parse_zones
    from topospread.limits import Limits
    from topospread.render.design import manifests_yaml, redis_text, scenario_yaml

    plan = design_redis_cluster(
        RedisDesign(
            shards=shards,
            replicas=replicas,
            zones=parse_zones(zones),
            nodes_per_zone=nodes_per_zone,
            relaxed=relaxed,
            name=name,
        ),
        limits := Limits(max_nodes, max_pods),
    )
    checked = _verify_first(plan, scenario, verify=verify, output=output, limits=limits)
    emit(
        output,
        {
            "json": lambda: _design_json(plan.to_json(), checked),
            "yaml": lambda: manifests_yaml(list(plan.stateful_sets)),
            "text": lambda: redis_text(plan),
        },
    )
    if output == "yaml":
        # The manifests alone would hide what the arithmetic found: say it on stderr.
        warn(f"not guaranteed: {c.requirement}" for c in plan.checks if not c.holds)
        warn(f"cannot be satisfied: {problem}" for problem in plan.problems)
    if scenario is not None and checked is None:
        write_text(scenario, scenario_yaml(plan))
    if verify:
        # After JSON or bare manifests the report goes to stderr, keeping stdout parseable.
        _verify_design(plan, scenario, to_stderr=output != "text", limits=limits, checked=checked)
    if not plan.satisfiable:
        raise typer.Exit(1)


def _verify_first(
    plan: RedisPlan | SpreadPlan,
    scenario: Path | None,
    *,
    verify: bool,
    output: str,
    limits: Limits,
) -> VerifyResult | None:
    """With ``-o json`` the search runs before the document is printed, so that the document
    carries the verdict its exit code reports (``verify``: ``verify -o json``'s document)."""
    from topospread.render.design import scenario_yaml

    if not (verify and output == "json"):
        return None
    if scenario is not None:
        write_text(scenario, scenario_yaml(plan))
    return _search_design(plan, scenario, limits)


def _design_json(doc: dict[str, object], checked: VerifyResult | None) -> str:
    if checked is not None:
        doc["verify"] = checked.to_json()
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _verify_design(
    plan: RedisPlan | SpreadPlan,
    scenario: Path | None,
    *,
    to_stderr: bool,
    limits: Limits,
    checked: VerifyResult | None = None,
) -> None:
    """Run ``verify`` on the design's scenario (unless ``checked`` is its result already),
    print its report, and exit 1 when it found a counterexample."""
    from topospread.render.verify import verify_text

    result = checked if checked is not None else _search_design(plan, scenario, limits)
    typer.echo(verify_text(result), err=to_stderr)
    if result.interrupted:
        raise interrupted_exit(_search_so_far(result))
    if not result.ok:
        raise typer.Exit(1)


def _search_design(
    plan: RedisPlan | SpreadPlan, scenario: Path | None, limits: Limits
) -> VerifyResult:
    """``verify`` on the design's scenario: the --scenario file, or a temporary one."""
    from topospread.analysis.verify import verify
    from topospread.render.design import scenario_yaml

    with tempfile.TemporaryDirectory(prefix="topospread-design-") as tmp:
        path = scenario
        if path is None:
            path = Path(tmp) / "scenario.yaml"
            write_text(path, scenario_yaml(plan))
        loaded = inputs(
            path, max_nodes=limits.max_nodes, max_pods=limits.max_pods
        ).verify_scenario()
    if scenario is None:
        # The temporary file is gone once read: name what was verified, not a deleted path.
        loaded = dataclasses.replace(loaded, source=UNSAVED_DESIGN_SCENARIO)
    with interruptible(), verify_progress() as progress:
        return verify(loaded, progress=progress)


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
    output: Annotated[DesignFormat, OUTPUT] = "text",
    scenario: DesignScenarioOption = None,
    verify: DesignVerifyOption = False,
    max_nodes: MaxNodesOption = MAX_NODES_DEFAULT,
    max_pods: MaxPodsOption = MAX_PODS_DEFAULT,
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
    from topospread.limits import Limits
    from topospread.render.design import manifests_yaml, scenario_yaml, spread_text

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
        ),
        limits := Limits(max_nodes, max_pods),
    )
    constraint = plan.constraint()
    checked = (
        _verify_first(plan, scenario, verify=verify, output=output, limits=limits)
        if constraint is not None
        else None
    )
    if output == "yaml" and constraint is None:
        # No constraint to print: the arithmetic says why, on stderr.
        typer.echo(spread_text(plan), nl=False, err=True)
    emit(
        output,
        {
            "json": lambda: _design_json(plan.to_json(), checked),
            "yaml": lambda: (
                ""
                if constraint is None
                else manifests_yaml([{"topologySpreadConstraints": [constraint]}])
            ),
            "text": lambda: spread_text(plan),
        },
    )
    if constraint is None:
        if scenario is not None or verify:
            warn(["no constraint fits: nothing to verify"])
        raise typer.Exit(1)
    if scenario is not None and checked is None:
        write_text(scenario, scenario_yaml(plan))
    if verify:
        _verify_design(plan, scenario, to_stderr=output != "text", limits=limits, checked=checked)
