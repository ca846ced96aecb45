"""The ``topospread`` command: a thin layer of Typer declarations over library calls.

``app`` is the Typer application and ``main`` the console entry point (``topospread``;
``topospread.kubectl`` is the kubectl plugin's). Options that several commands take are declared
once in ``options``; every report is printed through ``emit``; each command group has its module:
``cases`` (evaluate, conformance), ``scheduling`` (schedule, explain), ``verify`` (verify,
design), ``timelines`` (simulate, sweep, rebalance) and ``check``. The inputs themselves are read
by the library (``topospread.inputs``).
"""

from __future__ import annotations

import os
from typing import Final, NoReturn

# NOTE: numpy's OpenBLAS starts a thread per core when numpy is imported, and those threads
# spin, waiting for work, for a while after (0.04 CPU s on the other core, which the YAML
# worker is using then). Nothing here calls BLAS: the one matrix product
# (simulator/fastpath/fragment.py) is of integers, which numpy computes itself. So one thread,
# unless the user said otherwise; set before the command modules below import numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Importing the command modules registers their commands on ``app``.
from topospread.cli import cases, check, scheduling, timelines, verify  # noqa: F401
from topospread.cli.app import app, main
from topospread.cli.exiting import console as _console

# The order --help lists the commands in: from one pod to a cluster's whole life, then CI.
_ORDER: Final = (
    "evaluate",
    "conformance",
    "schedule",
    "explain",
    "verify",
    "simulate",
    "sweep",
    "check",
    "rebalance",
)
app.registered_commands.sort(key=lambda command: _ORDER.index(command.name or ""))


def console() -> NoReturn:
    """The ``topospread`` console script: ``main``, then the process ends at once with its exit
    code, what the command built not freed object by object (``cli.exiting``)."""
    _console(main)


__all__ = ["app", "console", "main"]
