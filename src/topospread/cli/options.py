"""Options that several commands take, each declared once, and the parsing of option values
shared by commands (``--require`` lists, durations).

A command lists the ones it takes as parameters (``seed: SeedOption = 0``); where a shared
option means something narrower in one command (sweep's first seed, verify's sampling seed), the
command gives its own help through the same factory. The cluster options come together, from
``reads_cluster``, which also turns them into the library's ``Inputs``.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any, Final, Literal

import typer

from topospread.errors import ManifestError
from topospread.inputs import ClusterSource, Inputs
from topospread.limits import Limits

# ---------------------------------------------------------------------------------------------
# Cluster inputs: files (`kubectl get -o yaml|json` output) or a live cluster, read-only.

NodesOption = Annotated[
    list[Path] | None,
    typer.Option("--nodes", metavar="FILE", help="Node manifests (any kinds are read)."),
]
PodsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--pods", metavar="FILE", help="Pod manifests: bound pods exist, unbound ones are queued."
    ),
]
ObjectsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--objects", metavar="FILE", help="Services, ReplicaSets, StatefulSets, Namespaces, ..."
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
ContextOption = Annotated[
    str | None,
    typer.Option(
        "--context", metavar="NAME", help="The kubeconfig context to read (default: current)."
    ),
]
ValidateOption = Annotated[
    str,
    typer.Option(
        "--validate",
        metavar="MODE",
        help="Field validation, as kubectl's: strict (an unknown or duplicate field is an "
        "error), warn (a warning) or ignore; true and false mean strict and ignore.",
    ),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", metavar="FILE", help="A KubeSchedulerConfiguration (v1) file."),
]

# ---------------------------------------------------------------------------------------------
# How large a run may be (topospread.limits: inputs asking for more are refused before anything
# is built). The defaults are the library's DEFAULT_MAX_NODES and DEFAULT_MAX_PODS
# (tests/test_limits.py), written out so that --help shows them without importing it.

MaxNodesOption = Annotated[
    int,
    typer.Option(
        "--max-nodes",
        min=1,
        metavar="N",
        help="Refuse inputs that could make the run hold more nodes than this.",
    ),
]
MaxPodsOption = Annotated[
    int,
    typer.Option(
        "--max-pods",
        min=1,
        metavar="N",
        help="Refuse inputs that could make the run hold more pods than this (also bounds "
        "a StatefulSet's claims and a sweep's runs).",
    ),
]
MAX_NODES_DEFAULT: Final = 100_000
MAX_PODS_DEFAULT: Final = 1_000_000

# ---------------------------------------------------------------------------------------------
# Runs and reports.


def seed_option(help: str = "Seed for controllers' names and the scheduler's tie-breaks.") -> Any:
    """``--seed N``: what is drawn at random (tie-breaks, generated names) draws from N."""
    return typer.Option("--seed", help=help)


SeedOption = Annotated[int, seed_option()]
TieSeedOption = Annotated[int, seed_option("Seed for choosing among equally good nodes.")]


def zone_key_option(help: str = "Node label to group the topology drawing by.") -> Any:
    """``--zone-key LABEL``: the node label whose values are zones."""
    return typer.Option("--zone-key", help=help, callback=_label_key)


def _label_key(value: str | None) -> str | None:
    """A ``--zone-key``, checked as the API server checks a label's key: no node could carry
    another (the drawing had no zones; sweep said no node has the label)."""
    from topospread.util.validation import is_qualified_name

    errs = [] if value is None else is_qualified_name(value)
    if errs:
        raise ManifestError(f'--zone-key: Invalid value: "{value}": {"; ".join(errs)}')
    return value


ZoneKeyOption = Annotated[str | None, zone_key_option()]


def output_option(help: str | None = None) -> Any:
    """``--output/-o FORMAT``: its choices are each command's (its annotation's ``Literal``)."""
    return typer.Option("--output", "-o", help=help)


OUTPUT: Any = output_option()
HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html",
        metavar="FILE",
        help="Also write the report as one self-contained HTML file.",
    ),
]
TimelineFormat = Literal["text", "json", "html"]
ReportFormat = Literal["text", "json", "yaml", "html"]


def requirements(text: str | None, supported: Sequence[str]) -> list[str]:
    """A ``--require`` list, each checked against what the command supports."""
    found = [r.strip() for r in (text or "").split(",") if r.strip()]
    for r in found:
        if r not in supported:
            raise ManifestError(
                f'--require: Unsupported value: "{r}": supported values: '
                + ", ".join(f'"{x}"' for x in supported)
            )
    return found


def duration(flag: str, text: str) -> int:
    """A duration option's value in nanoseconds (Go's syntax: ``90s``, ``5m``, ``1h30m``)."""
    from topospread.simulator.clock import DurationError, parse_duration

    try:
        nanos = parse_duration(text)
    except DurationError as err:
        raise ManifestError(f'{flag}: Invalid value: "{text}": {err}') from err
    if nanos < 0:
        raise ManifestError(f'{flag}: Invalid value: "{text}": must not be negative')
    return nanos


def quantity(flag: str, text: str) -> str:
    """A quantity option's value, checked as the API server checks a node's capacity (a
    quantity, not negative); a ManifestError naming the flag otherwise."""
    from topospread.api.resource import QuantityError, parse_quantity

    try:
        value = parse_quantity(text)
    except QuantityError as err:
        raise ManifestError(f'{flag}: Invalid value: "{text}": {err}') from err
    if value.sign() < 0:
        raise ManifestError(f'{flag}: Invalid value: "{text}": must be greater than or equal to 0')
    return text


def label_value(flag: str, text: str, *, names_nodes: str = "") -> str:
    """An option's value that becomes a node label's value, checked as the API server checks
    it; ``names_nodes``: the node names it is part of (``node-<region>a-1``), which must be DNS
    subdomains. A ManifestError naming the flag otherwise (the nodes' error would name the
    input file)."""
    from topospread.util.validation import is_dns1123_subdomain, is_valid_label_value

    errs = is_valid_label_value(text)
    if errs:
        raise ManifestError(f'{flag}: Invalid value: "{text}": {"; ".join(errs)}')
    if names_nodes:
        errs = is_dns1123_subdomain(names_nodes.format(text))
        if errs:
            pattern = names_nodes.format(flag.removeprefix("--").join("<>"))
            raise ManifestError(
                f'{flag}: Invalid value: "{text}": names nodes {pattern}: {errs[0]}'
            )
    return text


def inputs(
    document: Path | None = None,
    *,
    nodes: Sequence[Path] | None = None,
    pods: Sequence[Path] | None = None,
    objects: Sequence[Path] | None = None,
    cluster: Sequence[Path] | None = None,
    live: bool = False,
    kubeconfig: str | None = None,
    context: str | None = None,
    config: Path | None = None,
    max_nodes: int = MAX_NODES_DEFAULT,
    max_pods: int = MAX_PODS_DEFAULT,
) -> Inputs:
    """The library's reader of what the command was given (options as Typer passes them);
    what reading warns about is printed at once."""
    from topospread.cli.emit import warning

    source = ClusterSource(tuple(cluster or ()), live, kubeconfig, context)
    return Inputs(
        document,
        tuple(nodes or ()),
        tuple(pods or ()),
        tuple(objects or ()),
        source,
        config,
        warning,
        Limits(max_nodes, max_pods),
    )


Command = Callable[..., None]
# What a command declares its ``read`` parameter with; ``reads_cluster`` always passes one.
NO_INPUTS: Final = Inputs()
_MANIFEST_OPTIONS: Final = (
    ("nodes", NodesOption, None),
    ("pods", PodsOption, None),
    ("objects", ObjectsOption, None),
    ("config", ConfigOption, None),
)
_CLUSTER_OPTIONS: Final = (
    ("cluster", ClusterOption, None),
    ("live", LiveOption, False),
    ("kubeconfig", KubeconfigOption, None),
    ("context", ContextOption, None),
    ("validate", ValidateOption, "strict"),
    ("max_nodes", MaxNodesOption, MAX_NODES_DEFAULT),
    ("max_pods", MaxPodsOption, MAX_PODS_DEFAULT),
)


@contextlib.contextmanager
def validating(mode: str) -> Iterator[None]:
    """Every manifest read inside is held to ``--validate MODE``; warnings printed as found."""
    from topospread.api.strict import FieldValidation, field_validation
    from topospread.cli.emit import warning

    with field_validation(FieldValidation.parse(mode), warning):
        yield


def reads_cluster(*, manifests: bool = False) -> Callable[[Command], Command]:
    """Give a command the cluster options (``--cluster``, ``--live``, ``--kubeconfig``,
    ``--context``, ``--validate``, and the bounds ``--max-nodes``, ``--max-pods``; with
    ``manifests`` also ``--nodes``, ``--pods``, ``--objects``, ``--config``), after its own,
    and call it with ``read``: the ``Inputs`` they and its ``scenario`` argument (when it has
    one) make, read under ``--validate``.

    NOTE: Typer reads a command's options from its signature; the returned command's is the
    command's own, ``read`` left out and these options added (as keyword-only parameters, with
    their annotations resolved), so every command declares them by this one call.
    """
    shared = [*(_MANIFEST_OPTIONS if manifests else ()), *_CLUSTER_OPTIONS]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=alias)
        for name, alias, default in shared
    ]

    def decorate(command: Command) -> Command:
        own = inspect.signature(command, eval_str=True)
        kept = [p for p in own.parameters.values() if p.name != "read"]

        @functools.wraps(command)
        def run(**given: Any) -> None:
            options = {name: given.pop(name) for name, _, _ in shared}
            try:
                with validating(options.pop("validate")):
                    command(**given, read=inputs(given.get("scenario"), **options))
            finally:
                gc.unfreeze()  # what Inputs froze for the run (inputs.documents)

        run.__signature__ = own.replace(parameters=[*kept, *added])  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in [*kept, *added]}
        return run

    return decorate
