"""``schedule`` and ``explain``: one scheduling run over a scenario or a cluster's manifests."""

from __future__ import annotations

import io
import json
import sys
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from topospread.cli.app import app
from topospread.cli.emit import emit, warn
from topospread.cli.exiting import keep_until_exit
from topospread.cli.interrupting import interrupted_exit, interruptible
from topospread.cli.options import (
    NO_INPUTS,
    OUTPUT,
    HtmlOption,
    TieSeedOption,
    ZoneKeyOption,
    output_option,
    reads_cluster,
    requirements,
)
from topospread.inputs import Inputs, kept_for_the_run

if TYPE_CHECKING:
    from topospread.simulator.scheduler import Scheduler


def _imports_after_the_read() -> None:
    """What ``schedule`` imports once its inputs are read, imported while they are read
    (``Inputs.scenario``'s ``meanwhile``)."""
    for module in (
        "topospread.simulator.run",
        "topospread.render.report",
        "topospread.plugins.registry",  # the in-tree plugins, which ``schedule`` imports
    ):
        import_module(module)


@app.command("schedule")
@reads_cluster(manifests=True)
def schedule_command(
    scenario: Annotated[
        Path | None,
        typer.Argument(help="A scenario document {nodes, pods, queue, objects, config}."),
    ] = None,
    output: Annotated[Literal["text", "json", "jsonl", "yaml", "html"], OUTPUT] = "text",
    seed: TieSeedOption = 0,
    tie_break: Annotated[
        Literal["random", "name"],
        typer.Option(help="Among the best nodes: random (seeded), or the smallest name."),
    ] = "random",
    percentage_of_nodes_to_score: Annotated[
        int | None,
        typer.Option(
            "--percentage-of-nodes-to-score",
            min=0,
            max=100,
            help="Override the profile's percentageOfNodesToScore (0 = adaptive).",
        ),
    ] = None,
    zone_key: ZoneKeyOption = None,
    require: Annotated[
        str | None,
        typer.Option(metavar="LIST", help="Exit 1 when a requirement breaks: no-pending."),
    ] = None,
    html: HtmlOption = None,
    read: Inputs = NO_INPUTS,
) -> None:
    """Place every queued pod as kube-scheduler would; show where each landed, or why not.
    Workloads given with --pods (Deployments, StatefulSets, ReplicaSets, Jobs) are expanded
    into the pods their controllers create."""
    required = requirements(require, ("no-pending",))
    loaded = read.scenario(meanwhile=_imports_after_the_read)
    from topospread.render.report import (
        DetailSpill,
        human,
        not_attempted,
        write_cluster_yaml,
        write_json,
        write_jsonl,
    )
    from topospread.simulator.run import schedule

    warn(loaded.warnings)
    # Only jsonl, json and html show every node's scores and reasons; gathering them for a
    # successful attempt costs a reference recount, and changes no decision. The spill takes
    # each attempt's detail out of memory as soon as it is decided.
    detail = output in ("jsonl", "json", "html") or html is not None
    with DetailSpill() as spill:

        def started(scheduler: Scheduler) -> None:
            """The jsonl report alone: its lines written as they become final, where they can
            be (``render/streaming.py``)."""
            sys.stdout.flush()
            spill.stream(sys.stdout.buffer, scheduler.frameworks, loaded.queue)

        # NOTE: deferred, Ctrl-C stops the run between two attempts: no attempt, and no
        # attempt's detail in the spill or its writer, is left half made.
        with kept_for_the_run(), interruptible(defer=True) as interrupt:
            run = schedule(
                loaded,
                seed=seed,
                tie_break=tie_break,
                percentage_of_nodes_to_score=percentage_of_nodes_to_score,
                detail=detail,
                on_decision=spill.record if detail else None,
                on_start=started if output == "jsonl" and html is None else None,
                stop=interrupt,
            )

        def page() -> str:
            from topospread.render.html import schedule_html

            buffer = io.BytesIO()
            write_json(run, buffer, spill, zone_key=zone_key)
            return schedule_html(json.loads(buffer.getvalue()))

        emit(
            output,
            {
                "text": lambda: human(run, zone_key=zone_key) + "\n",
                "json": lambda: (
                    lambda: write_json(run, sys.stdout.buffer, spill, zone_key=zone_key)
                ),
                "jsonl": lambda: lambda: write_jsonl(run, sys.stdout.buffer, spill, final=True),
                "yaml": lambda: lambda: write_cluster_yaml(run, sys.stdout),
                "html": page,
            },
            html=html,
        )
    keep_until_exit(read, loaded, run)  # the report is written: no need to free them
    if interrupt() and not run.interrupted:  # as the run ended: nothing was left to do
        raise interrupted_exit("after the scheduling run: the report is complete")
    if run.interrupted:
        raise interrupted_exit(
            f"after {len(run.attempts)} scheduling attempts: {len(not_attempted(run))} of "
            f"{len(run.outcomes)} queued pods not attempted (Pending: not attempted: interrupted)"
        )
    if "no-pending" in required and run.pending:
        raise typer.Exit(1)


def _imports_of_explain() -> None:
    """What ``explain`` imports once its inputs are read, imported while they are read."""
    for module in (
        "topospread.analysis.explain",
        "topospread.render.explain",
        "topospread.render.html",
    ):
        import_module(module)


@app.command("explain")
@reads_cluster(manifests=True)
def explain_command(
    pod: Annotated[str, typer.Option("--pod", help="The queued pod: name or namespace/name.")],
    scenario: Annotated[Path | None, typer.Argument(help="A scenario document.")] = None,
    output: Annotated[
        Literal["text", "json", "jsonl", "html"],
        output_option("text, json, jsonl (one line), or html."),
    ] = "text",
    html: HtmlOption = None,
    seed: TieSeedOption = 0,
    read: Inputs = NO_INPUTS,
) -> None:
    """Explain one pod: every node's Filter and Score results, its spread domains and skews,
    and, when Pending, the smallest single changes that would let it schedule."""
    loaded = read.scenario(meanwhile=_imports_of_explain)
    import msgspec

    from topospread.analysis.explain import explain
    from topospread.render.explain import explanation_text
    from topospread.render.html import explain_html

    with interruptible(defer=True) as interrupt:
        result = explain(loaded, pod, seed=seed, stop=interrupt)
    emit(
        output,
        {
            "text": lambda: explanation_text(result) + "\n",
            "json": lambda: (
                msgspec.json.format(msgspec.json.encode(result.to_json()), indent=2) + b"\n"
            ),
            "jsonl": lambda: msgspec.json.encode(result.to_json()) + b"\n",
            "html": lambda: explain_html(result.to_json()),
        },
        html=html,
    )
    keep_until_exit(read, loaded, result)  # the report is written: no need to free them
    if interrupt() and not result.interrupted:  # during the explanation, after the run
        raise interrupted_exit("after the scheduling run: the explanation is complete")
    if result.interrupted:
        raise interrupted_exit(
            "before the scheduling run ended: "
            + (
                "the explanation is of the pod's last attempt before it"
                if result.attempts
                else "the pod was not attempted"
            )
        )
