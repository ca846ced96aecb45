"""One way to print a report in any format, for every command, and the warnings beside it.

A command hands ``emit`` the chosen format and, for each format it offers, a function making
the report: text printed as it is, bytes written to standard output's buffer, or a writer that
streams to standard output itself (for reports too large to hold). ``--html FILE`` writes the
``html`` format's page as well; it is made once, and only when asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import typer

from topospread.errors import ManifestError

Report = str | bytes | Callable[[], None]


def emit(
    fmt: str, formats: Mapping[str, Callable[[], Report]], *, html: Path | None = None
) -> None:
    """Print the report in format ``fmt`` (nothing when the command offers no such format);
    with ``html``, write the ``html`` format's page there first."""
    page: Report | None = None
    if html is not None:
        page = formats["html"]()
        assert isinstance(page, str)
        write_text(html, page)
    make = formats.get(fmt)
    if make is None:
        return
    _print(page if fmt == "html" and page is not None else make())


def _print(report: Report) -> None:
    if isinstance(report, str):
        typer.echo(report, nl=False)
        return
    sys.stdout.flush()
    if isinstance(report, bytes):
        sys.stdout.buffer.write(report)
        sys.stdout.buffer.flush()
    else:
        report()
        sys.stdout.flush()


def warning(text: str) -> None:
    """A warning as one line on standard error."""
    typer.echo(f"topospread: warning: {text}", err=True)


def warn(warnings: Iterable[str]) -> None:
    """Each warning as one line on standard error."""
    for text in warnings:
        warning(text)


def write_text(path: Path, text: str) -> None:
    """Write an output file; a path that cannot be written is bad input (exit 2)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise ManifestError(f"{path}: cannot write it: {err.strerror}") from err
