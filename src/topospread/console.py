"""The console scripts' entry points, ``topospread`` and ``kubectl-topospread``: light to import.

NOTE: a console script imports its entry point's module before any of ours runs, and the
command line's modules take some 50 ms to import. A Ctrl-C then raised ``KeyboardInterrupt``
wherever the import was: out of it with a traceback, or inside one of the import system's
callbacks, where Python only prints it as ignored and the command goes on. So each entry point
imports its command line with SIGINT only noted, then ends with one line and exit code 130 if
it came, as a Ctrl-C anywhere else before a command's work ends does (cli/app.py). Only the
console scripts (and ``python -m topospread``) come through here: a program or a test importing
``topospread.cli`` keeps Python's own SIGINT behaviour. This module imports nothing that takes
time (the C module ``_signal``, not ``signal``, which imports ``enum``).
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]
import sys

# 128 + SIGINT, as cli/interrupting.py's INTERRUPTED_EXIT (not imported: it is what is guarded).
_INTERRUPTED_EXIT = 130


def topospread() -> None:
    """The ``topospread`` console script."""
    load("topospread.cli")
    from topospread.cli import console

    console()


def kubectl_topospread() -> None:
    """The ``kubectl-topospread`` console script (the kubectl plugin)."""
    load("topospread.kubectl")
    from topospread.kubectl import console

    console()


def load(module: str) -> None:
    """Import ``module`` with SIGINT noted rather than raised; if it came, say so and end the
    process (exit code 130)."""
    came: list[int] = []
    previous = _signal.signal(_signal.SIGINT, lambda signum, _frame: came.append(signum))
    try:
        __import__(module)
    finally:
        _signal.signal(_signal.SIGINT, previous)
    if came:
        sys.stderr.write("topospread: interrupted while starting: nothing to report\n")
        sys.stderr.flush()
        raise SystemExit(_INTERRUPTED_EXIT)


__all__ = ["kubectl_topospread", "load", "topospread"]
