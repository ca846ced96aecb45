"""``check``: chart output against a cluster, as a CI gate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from topospread.cli.app import app
from topospread.cli.emit import emit
from topospread.cli.interrupting import interrupted_exit, interruptible
from topospread.cli.options import (
    NO_INPUTS,
    OUTPUT,
    duration,
    label_value,
    quantity,
    reads_cluster,
    seed_option,
)
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
        int | None,
        # A generated zone is <region> and a letter: at most 26 (Shape).
        typer.Option("--zones", min=1, max=26, help="A generated shape: this many zones."),
    ] = None,
    nodes_per_zone: Annotated[
        int, typer.Option("--nodes-per-zone", min=1, help="Nodes per zone (generated shape).")
    ] = 2,
    node_cpu: Annotated[str, typer.Option("--node-cpu", help="Each node's CPU.")] = "8",
    node_memory: Annotated[str, typer.Option("--node-memory", help="Each node's memory.")] = (
        "32Gi"
    ),
    node_ephemeral_storage: Annotated[
        str, typer.Option("--node-ephemeral-storage", help="Each node's ephemeral storage.")
    ] = "100Gi",
    node_pods: Annotated[
        int, typer.Option("--node-pods", min=1, help="Pods each node has room for.")
    ] = 110,
    node_os: Annotated[str, typer.Option("--node-os", help="kubernetes.io/os of each node.")] = (
        "linux"
    ),
    node_arch: Annotated[
        str, typer.Option("--node-arch", help="kubernetes.io/arch of each node.")
    ] = "amd64",
    node_instance_type: Annotated[
        str | None,
        typer.Option(
            "--node-instance-type",
            metavar="TYPE",
            help="node.kubernetes.io/instance-type of each node (default: <cpu>cpu-<memory>).",
        ),
    ] = None,
    region: Annotated[
        str,
        typer.Option(
            "--region", help="topology.kubernetes.io/region; zones are <region>a, <region>b, ..."
        ),
    ] = "region-1",
    survive: Annotated[
        list[str] | None,
        typer.Option(
            "--survive",
            metavar="zone|node",
            help="Also every single zone (node) loss: no new Pending pod, no new violation.",
        ),
    ] = None,
    autoscaler: Annotated[
        Path | None,
        typer.Option(
            "--autoscaler",
            metavar="FILE",
            help="An autoscaler: section (clusterAutoscaler or karpenter, as in a timeline "
            "scenario; the generated shape's node group is 'node'): it adds nodes for what the "
            "placement leaves Pending (and after each --survive loss); the verdict says "
            "whether the workloads fit with it and how many nodes it adds per group.",
        ),
    ] = None,
    recovery_limit: Annotated[
        str,
        typer.Option(
            "--recovery-limit", metavar="DURATION", help="How long the autoscaler may act."
        ),
    ] = "30m",
    helm_timeout: Annotated[
        str,
        typer.Option(
            "--helm-timeout",
            metavar="DURATION",
            help="helm install's --timeout: how long it waits for each Job or Pod hook "
            "(a hook's pods Pending, with an autoscaler, longer than this fail the install).",
        ),
    ] = "5m0s",
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
    shape = None
    if zones is not None:
        shape = Shape(
            zones,
            nodes_per_zone,
            quantity("--node-cpu", node_cpu),
            quantity("--node-memory", node_memory),
            pods=node_pods,
            region=label_value("--region", region, names_nodes="node-{}a-1"),
            ephemeral_storage=quantity("--node-ephemeral-storage", node_ephemeral_storage),
            os=label_value("--node-os", node_os),
            arch=label_value("--node-arch", node_arch),
            instance_type=label_value("--node-instance-type", node_instance_type or ""),
        )
    existing = read.cluster.read(read.warn)
    source = ", ".join("<stdin>" if m == "-" else m for m in manifests)
    section = None
    if autoscaler is not None:
        path = autoscaler
        section = (str(path), lambda groups: read.autoscaler(path, groups))
    with interruptible():
        try:
            report = check(
                objects,
                source=source,
                cluster=existing,
                shape=shape,
                survive=survive or (),
                seed=seed,
                autoscaler=section,
                recovery_limit=duration("--recovery-limit", recovery_limit),
                helm_timeout=duration("--helm-timeout", helm_timeout),
                limits=read.limits,
            )
        except KeyboardInterrupt:
            raise interrupted_exit("before the placement settled: nothing to report") from None
    emit(
        output_format or output,
        {
            "text": lambda: check_text(report) + "\n",
            "json": lambda: check_json(report) + "\n",
            "github": lambda: check_github(report) + "\n",
        },
    )
    if report.interrupted:
        raise interrupted_exit(
            f"after {len(report.survived)} of {report.losses} failure(s) replayed: the report "
            "covers them"
        )
    if not report.passed:
        raise typer.Exit(1)
