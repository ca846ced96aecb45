"""``check``: chart output against a cluster, as a CI gate."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from topospread.cli.app import app
from topospread.cli.emit import emit
from topospread.cli.options import NO_INPUTS, OUTPUT, reads_cluster, seed_option
from topospread.errors import ManifestError
from topospread.inputs import Inputs

CheckFormat = Literal["text", "json", "github"]


@app.command("check")
@reads_cluster()
def check_command(
    manifests: Annotated[
        list[str],
        typer.Argument(
            metavar="MANIFESTS...",
            help="Files or directories of manifests (helm template, kustomize build output), "
            "or - for standard input.",
        ),
    ],
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
    output: Annotated[CheckFormat, OUTPUT] = "text",
    output_format: Annotated[
        CheckFormat | None,
        typer.Option("--format", help="Alias of --output (github: Actions annotations)."),
    ] = None,
    seed: Annotated[int, seed_option("Seed for names and tie-breaks.")] = 0,
    read: Inputs = NO_INPUTS,
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
    if sum((bool(read.cluster.files), read.cluster.is_live, zones is not None)) != 1:
        raise ManifestError(
            "give the cluster once: --cluster node files, a live cluster (--live, "
            "--kubeconfig, --context), or a generated shape (--zones N --nodes-per-zone M)"
        )
    objects = read.manifests(manifests)
    shape = Shape(zones, nodes_per_zone, node_cpu, node_memory) if zones is not None else None
    existing = read.cluster.read(read.warn)
    source = ", ".join("<stdin>" if m == "-" else m for m in manifests)
    report = check(
        objects, source=source, cluster=existing, shape=shape, survive=survive or (), seed=seed
    )
    emit(
        output_format or output,
        {
            "text": lambda: check_text(report) + "\n",
            "json": lambda: check_json(report) + "\n",
            "github": lambda: check_github(report) + "\n",
        },
    )
    if not report.passed:
        raise typer.Exit(1)
