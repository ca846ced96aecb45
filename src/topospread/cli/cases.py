"""``evaluate`` and ``conformance``: the case format, one plugin run per case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from topospread.cli.app import app
from topospread.cli.emit import emit
from topospread.inputs import Inputs

CasesArgument = Annotated[
    list[Path], typer.Argument(help="Case files or directories (searched recursively).")
]


@app.command("evaluate")
def evaluate_command(cases: CasesArgument) -> None:
    """Run each case through the plugin and print one JSON object per case, one per line."""
    from topospread.conformance.runner import evaluate

    def each_case() -> None:
        for _, case in Inputs().cases(cases):
            typer.echo(json.dumps(evaluate(case)))

    emit("jsonl", {"jsonl": lambda: each_case})


@app.command("conformance")
def conformance_command(paths: CasesArgument) -> None:
    """Check every case that has an `expect` block; print failures and `N passed, N failed`."""
    from topospread.conformance.runner import compare, evaluate

    passed = failed = 0
    lines: list[str] = []
    for path, case in Inputs().cases(paths):
        if case.expect is None:
            continue
        diffs = compare(case.expect, evaluate(case))
        if diffs:
            failed += 1
            lines += [f"FAIL {path}", *(f"  {line}" for line in diffs)]
        else:
            passed += 1
    lines.append(f"{passed} passed, {failed} failed")
    emit("text", {"text": lambda: "".join(f"{line}\n" for line in lines)})
    if failed:
        raise typer.Exit(1)
