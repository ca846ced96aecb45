"""The ``topospread`` command: a thin layer over library calls.

Exit codes: 0 success, 1 a check failed (conformance), 2 bad input (one clear message, no
traceback).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from topospread import __version__
from topospread.conformance.case import iter_case_files, load_case
from topospread.conformance.runner import compare, evaluate
from topospread.errors import TopospreadError

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


def main(argv: list[str] | None = None) -> None:
    """Console entry point: user errors become one line on stderr and exit code 2."""
    try:
        app(args=argv, standalone_mode=True)
    except TopospreadError as err:
        typer.echo(f"topospread: error: {err}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
