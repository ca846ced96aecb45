"""``simulate``, ``sweep`` and ``rebalance``: a cluster replayed through a timeline, its failures,
or the evictions that rebalance it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Literal

import typer

from topospread.cli.app import app
from topospread.cli.emit import emit, warn
from topospread.cli.exiting import keep_until_exit
from topospread.cli.interrupting import interrupted_exit, interruptible, working
from topospread.cli.options import (
    NO_INPUTS,
    OUTPUT,
    HtmlOption,
    ReportFormat,
    SeedOption,
    TimelineFormat,
    ZoneKeyOption,
    duration,
    reads_cluster,
    requirements,
    seed_option,
    zone_key_option,
)
from topospread.cli.progress import simulate_progress, sweep_progress
from topospread.errors import ManifestError
from topospread.inputs import Inputs


@app.command("simulate")
@reads_cluster()
def simulate_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(
            help="A timeline scenario {nodes, nodeGroups, objects, config, timeline}. Optional "
            "with --cluster or a live cluster (then the cluster is settled and reported)."
        ),
    ] = None,
    output: Annotated[TimelineFormat, OUTPUT] = "text",
    html: HtmlOption = None,
    seed: SeedOption = 0,
    zone_key: ZoneKeyOption = None,
    read: Inputs = NO_INPUTS,
) -> None:
    """Replay a timeline (scale, rollout, drain, taint, zone outage, new nodes, ...): after
    each step, controllers and scheduler run until nothing changes; report placements,
    Pending pods and each workload's spread and violated constraints. With --cluster files or
    a live cluster, the timeline starts from that cluster (read-only)."""
    from topospread.analysis.simulate import simulate
    from topospread.render.html import simulate_html
    from topospread.render.simulate import interruption_line, timeline_json, timeline_text

    loaded = read.timeline()
    with interruptible(), simulate_progress(len(loaded.steps) + 1) as on_step:
        report = simulate(loaded, seed=seed, on_step=on_step)
    warn(report.warnings)
    emit(
        output,
        {
            "text": lambda: timeline_text(report, zone_key=zone_key) + "\n",
            "json": lambda: timeline_json(report, zone_key=zone_key) + "\n",
            "html": lambda: simulate_html(report.to_json(zone_key)),
        },
        html=html,
    )
    keep_until_exit(read, loaded, report)  # the report is written: no need to free them
    if report.interrupted is not None:
        raise interrupted_exit(interruption_line(report))


@app.command("sweep")
@reads_cluster()
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
    delete_emptydir_data: Annotated[
        bool,
        typer.Option(
            "--delete-emptydir-data",
            help="Drains delete pods with emptyDir volumes (kubectl drain's flag).",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Drains delete pods that no controller owns (kubectl drain's flag)."
        ),
    ] = False,
    disable_eviction: Annotated[
        bool,
        typer.Option(
            "--disable-eviction",
            help="Drains delete pods without the eviction API, past their disruption budgets "
            "(kubectl drain's flag).",
        ),
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
    seed: Annotated[int, seed_option("The first seed.")] = 0,
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
    zone_key: Annotated[str, zone_key_option("The node label that names zones.")] = (
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
    # Help is rich markup: "\\[" keeps the extra's "[ray]" from being read as a style.
    ray: Annotated[
        str | None,
        typer.Option(
            metavar="ADDRESS",
            help="Run on a Ray cluster (its address, or 'local' to start one here); needs "
            "the ray extra: pip install 'topospread\\[ray]'.",
        ),
    ] = None,
    autoscaler: Annotated[
        Path | None,
        typer.Option(
            "--autoscaler",
            metavar="FILE",
            help="An autoscaler: section (clusterAutoscaler or karpenter, as in a timeline "
            "scenario; it replaces the scenario's own): after each failure it acts until "
            "nothing is Pending or --recovery-limit passes; each run says whether the "
            "cluster recovered, how long it took and the nodes added and removed per group.",
        ),
    ] = None,
    recovery_limit: Annotated[
        str,
        typer.Option(
            "--recovery-limit",
            metavar="DURATION",
            help="How long the autoscaler may act after each failure.",
        ),
    ] = "30m",
    output: Annotated[ReportFormat, OUTPUT] = "text",
    html: HtmlOption = None,
    read: Inputs = NO_INPUTS,
) -> None:
    """Replay every failure of the chosen families (zones, nodes, drains, node combinations)
    from one settled base state, in parallel: which failures leave pods Pending, violate a
    constraint, block a drain, or do not recover once undone. Worst first."""
    from topospread.analysis.sweep import REQUIREMENTS, SweepOptions, sweep
    from topospread.analysis.sweep_pool import choose_backend
    from topospread.render.html import sweep_html
    from topospread.render.sweep import sweep_json, sweep_text, sweep_yaml
    from topospread.simulator.drain import DrainOptions

    required = requirements(require, REQUIREMENTS)
    if not (zones or nodes or drains or max_failures > 1):
        raise ManifestError("choose what fails: --zones, --nodes, --drains or --max-failures K")
    loaded = read.timeline()
    if autoscaler is not None:
        loaded = dataclasses.replace(loaded, autoscaler=read.autoscaler(autoscaler, loaded.groups))
    options = SweepOptions(
        then=tuple(read.steps(then)) if then is not None else (),
        wait=duration("--wait", wait) if wait is not None else None,
        source=loaded.source,
        then_source=str(then) if then is not None else "--then",
        recovery_limit=duration("--recovery-limit", recovery_limit),
        drain=DrainOptions(
            force=force,
            disable_eviction=disable_eviction,
            delete_emptydir_data=delete_emptydir_data,
        ),
    )
    read.check_timeline(loaded, options.then, then)  # with --autoscaler's groups, --then's steps
    backend = choose_backend(jobs, ray)
    if not after_timeline:
        loaded = dataclasses.replace(loaded, steps=[])
    with working(), sweep_progress() as (on_planned, on_run):
        report = sweep(
            loaded,
            zones=zones,
            nodes=nodes,
            drains=drains,
            max_failures=max_failures,
            zone_key=zone_key,
            seeds=range(seed, seed + seeds),
            options=options,
            on_planned=on_planned,
            on_run=on_run,
            backend=backend,
            max_runs=read.limits.max_pods,
        )
    warn(report.warnings)
    emit(
        output,
        {
            "text": lambda: sweep_text(report, requirements=required),
            "json": lambda: sweep_json(report, requirements=required) + "\n",
            "yaml": lambda: sweep_yaml(report, requirements=required),
            "html": lambda: sweep_html(report.to_json(required)),
        },
        html=html,
    )
    if report.interrupted:
        raise interrupted_exit(
            f"{len(report.outcomes)} of {report.planned} runs completed", after=": "
        )
    if report.failed:
        typer.echo(
            f"topospread: {len(report.failed)} of {report.planned} runs failed: "
            + "; ".join(f"{e.failure.name}: {e.error}" for e in report.failed),
            err=True,
        )
        raise typer.Exit(1)
    if required and report.failing(required):
        raise typer.Exit(1)


@app.command("rebalance")
@reads_cluster()
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
    no_topology_balance_node_fit: Annotated[
        bool,
        typer.Option(
            "--no-topology-balance-node-fit",
            help="The descheduler's topologyBalanceNodeFit off: move pods even when they fit "
            "no node of a smaller domain.",
        ),
    ] = False,
    # The default, accepted as it was when the pair was one option: shown, its name and its
    # negation's would leave the help no room at 80 columns.
    topology_balance_node_fit: Annotated[
        bool, typer.Option("--topology-balance-node-fit", hidden=True)
    ] = False,
    seed: SeedOption = 0,
    zone_key: ZoneKeyOption = None,
    output: Annotated[ReportFormat, OUTPUT] = "text",
    html: HtmlOption = None,
    emit_: Annotated[
        Literal["evictions"] | None,
        typer.Option(
            "--emit",
            help="Write the plan's policy/v1 Eviction manifests (plan order) instead of the "
            "report.",
        ),
    ] = None,
    read: Inputs = NO_INPUTS,
) -> None:
    """Find the fewest evictions that bring violated spread constraints back within maxSkew,
    proven by replaying them (eviction API and budgets, controllers, the exact scheduler) on
    a copy of the cluster. Exit 0: balanced, or a plan was found; 1: no plan; 2: bad input."""
    from topospread.analysis.descheduler_replay import descheduler_rounds
    from topospread.analysis.rebalance import (
        RebalanceOptions,
        descheduler_options,
        plan_rebalance,
    )
    from topospread.analysis.simulate import settle_timeline
    from topospread.labels.selector import SelectorError, parse
    from topospread.render.html import rebalance_html
    from topospread.render.rebalance import (
        evictions_yaml,
        rebalance_json,
        rebalance_text,
        rebalance_yaml,
    )

    if topology_balance_node_fit and no_topology_balance_node_fit:
        raise ManifestError(
            "give one of --topology-balance-node-fit (the default) and "
            "--no-topology-balance-node-fit"
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
    loaded = read.timeline()
    with interruptible():
        sim = settle_timeline(loaded, seed)
        report = plan_rebalance(sim, options, source=loaded.source)
        if descheduler and not report.interrupted:
            # The exact plan ran on copies: the cluster is as it was.
            chosen_options = dataclasses.replace(
                descheduler_options(options),
                topology_balance_node_fit=not no_topology_balance_node_fit,
            )
            try:
                report.descheduler = descheduler_rounds(sim, chosen_options, rounds=rounds)
            except KeyboardInterrupt:
                report.interrupted = True  # its rounds are not reported: the plan's search is
    warn(loaded.warnings)
    emit(
        emit_ or output,
        {
            "evictions": lambda: evictions_yaml(report),
            "text": lambda: rebalance_text(report, zone_key=zone_key) + "\n",
            "json": lambda: rebalance_json(report, zone_key=zone_key) + "\n",
            "yaml": lambda: rebalance_yaml(report, zone_key=zone_key),
            "html": lambda: rebalance_html(report.to_json(zone_key)),
        },
        html=html,
    )
    keep_until_exit(read, loaded, sim, report)  # the report is written: no need to free them
    if report.interrupted:
        raise interrupted_exit(
            f"after {report.replays} replay(s): "
            + (
                "the plan is reported, the descheduler's rounds are not"
                if report.plan is not None
                else "no plan found so far"
                + (
                    f"; every plan of up to {report.ruled_out_up_to} eviction(s) ruled out"
                    if report.ruled_out_up_to
                    else ""
                )
            )
        )
    if not report.balanced and report.plan is None:
        raise typer.Exit(1)
