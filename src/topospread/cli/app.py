"""The ``topospread`` Typer application and its entry point.

Exit codes: 0 success, 1 a check failed (conformance) or the machine ran out of memory, 2 bad
input (one clear message, no traceback), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import atexit
import gc
import sys
from typing import Annotated, Any, Final

import typer
from typer.core import TyperOption

from topospread import __version__
from topospread.cli import coercion, interrupting
from topospread.errors import TopospreadError

# NOTE: typer 0.29's help shows a type for every option, "<bool>" for flags, as if they took
# a value; a flag shows none (checked by tests/test_newcomer.py).
_display_type = TyperOption.display_type_rich


def _flag_display_type(self: TyperOption, ctx: Any) -> str | None:
    _names_never_cut()
    return None if self.is_flag else _display_type(self, ctx)


TyperOption.display_type_rich = _flag_display_type  # type: ignore[method-assign]
# Option values coerced without importing pydantic where the outcome is plainly Typer's.
coercion.install()


def _names_never_cut() -> None:
    """Rich shrinks every column of typer's options table when the help is narrower than its
    rows, cutting option names ("--exclude-names…" at 80 columns); an option name is what the
    reader types, so its columns keep their width and the type and help columns wrap instead.

    NOTE: typer builds an options panel's rows (calling ``display_type_rich``, above) before
    it makes the table, through the name ``Table`` of ``typer.rich_utils``, which is imported
    only when help is shown; so the first help row swaps in this table, at no cost to commands
    run without --help. Its columns are made by the first row: all but the last two (type and
    help) hold names (and the required marker). The commands table makes its columns first.
    """
    import typer.rich_utils as rich_utils
    from rich.table import Table

    if getattr(rich_utils, "Table", None) is not Table:
        return

    class _NamesTable(Table):
        def add_row(self, *renderables: Any, **kwargs: Any) -> None:
            made = not self.columns
            super().add_row(*renderables, **kwargs)
            if made:
                for column in self.columns[:-2]:
                    column.no_wrap = True

    setattr(rich_utils, "Table", _NamesTable)  # noqa: B010 (typer does not export it)


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


# What a command was doing when it ran out of memory or was interrupted outside its work.
_DOING: Final = {
    "starting": "was reading its inputs",
    "working": "was running",
    "reporting": "was writing its report",
}
_INTERRUPTED: Final = {
    "starting": "before the work began: nothing to report",
    "working": "while running: nothing to report",
    "reporting": "while the report was written: it is incomplete",
}


def main(argv: list[str] | None = None, *, prog_name: str = "topospread") -> None:
    """Console entry point: user errors — bad input files and bad command-line arguments alike —
    become one line on stderr and exit code 2; running out of memory one line and exit code 1;
    a Ctrl-C outside a command's interruptible work (see cli/interrupting.py) one line and
    exit code 130."""
    # NOTE: when the interpreter exits, it collects garbage over every object still alive
    # before tearing the modules down: after a large run (the chart cluster's 12,000 pods and
    # what the scheduler built on them) that took 0.3 to 0.9 s of the command's time, for
    # nothing, since the process is ending. Frozen first (atexit runs before those
    # collections), they are skipped; objects are still freed as the modules go, and the
    # standard streams are still flushed. Registered once, however often ``main`` runs.
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    interrupting.begin()
    try:
        code = app(args=argv, prog_name=prog_name, standalone_mode=False)
    except MemoryError:
        # NOTE: what the command held is freed by now (its frames are gone), so the line can
        # be written; a worker's MemoryError comes back here through its future.
        command = _command(sys.argv[1:] if argv is None else argv)
        doing = _DOING[interrupting.stage()]
        typer.echo(f"topospread: error: out of memory while {command} {doing}", err=True)
        sys.exit(1)
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
            if ctx is not None:
                path = ctx.command_path.removeprefix(prog_name).strip()
            else:  # the parser's errors (an option without its value) carry no context
                words = sys.argv[1:] if argv is None else argv
                path = _command(words).removeprefix("topospread").strip()
            where = f"{path}: " if path else ""
            typer.echo(f"topospread: error: {where}{message} (see --help)", err=True)
        sys.exit(getattr(err, "exit_code", 2))
    if code == interrupting.INTERRUPTED_EXIT and not interrupting.told():
        # Typer's exit for a KeyboardInterrupt that no command caught: say so.
        where = _INTERRUPTED[interrupting.stage()]
        typer.echo(f"topospread: interrupted {where}", err=True)
    sys.exit(code if isinstance(code, int) else 0)


def _command(argv: list[str]) -> str:
    """What ``argv`` runs, for messages: ``topospread``, and its command (with a group's
    subcommand, as ``design spread``) when the first word names one."""
    words = [w for w in argv if not w.startswith("-")]
    commands = {c.name for c in app.registered_commands}
    # A group added without a name of its own (add_typer(design_app)) has a placeholder
    # there: its name is its Typer's.
    groups = {
        g.name if isinstance(g.name, str) else g.typer_instance.info.name
        for g in app.registered_groups
        if g.typer_instance is not None
    }
    if words and words[0] in commands:
        return f"topospread {words[0]}"
    if words and words[0] in groups:
        return f"topospread {' '.join(words[:2])}"
    return "topospread"
