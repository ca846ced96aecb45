"""Ctrl-C during a long command: the report of what was finished, then exit code 130.

The libraries' drivers (``simulate``, ``verify``, ``plan_rebalance``, ``check``, ``schedule``)
catch ``KeyboardInterrupt`` themselves and return what they finished, marked interrupted; the
command prints that report and ends with ``INTERRUPTED_EXIT`` (128 + SIGINT, what a shell
reports for a process SIGINT killed, and what ``sweep`` has always returned).

``interruptible`` makes the first Ctrl-C stop the work and every later one end the process at
once, by the default action of SIGINT (the report may be long to write: a second Ctrl-C must not
wait for it). With ``defer``, the first Ctrl-C only sets a flag that the work polls between two
units (a scheduling attempt), so that nothing is left half done.

A Ctrl-C outside that work — while the command line is parsed or the inputs are read, or while
the report is written — is Python's ``KeyboardInterrupt``, which Typer turns into exit code
130; ``stage`` is what the command was doing then and ``told`` whether it said so, for the
console entry point (cli/app.py) to say it in one line. The stage also says what a command ran
out of memory doing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Final

import typer

# 128 + SIGINT: what a shell reports for a process that SIGINT ended.
INTERRUPTED_EXIT: Final = 130


class _Progress:
    """How far the running command got: ``stage`` ("starting": parsing its command line and
    reading its inputs; "working"; "reporting") and whether it has said it was interrupted."""

    stage = "starting"
    told = False


def begin() -> None:
    """A command line starts (``main`` may run several times in one process)."""
    _Progress.stage, _Progress.told = "starting", False


def stage() -> str:
    """What the command is doing: starting, working or reporting."""
    return _Progress.stage


def told() -> bool:
    """Whether the command has said it was interrupted (``interrupted_exit``)."""
    return _Progress.told


@contextmanager
def working() -> Iterator[None]:
    """The command's work: once it is done, the command writes its report (what it raises
    leaves the stage as it was: working)."""
    _Progress.stage = "working"
    yield
    _Progress.stage = "reporting"


class Interrupt:
    """Whether Ctrl-C was pressed while ``interruptible`` was active (``defer`` polls it)."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self) -> bool:
        return self.requested


@contextmanager
def interruptible(*, defer: bool = False) -> Iterator[Interrupt]:
    """While active, the first SIGINT raises ``KeyboardInterrupt`` (with ``defer``: sets the
    flag only) and gives SIGINT its default action back, so a second one ends the process at
    once; that stays so until the process ends. Outside the main thread, nothing changes."""
    interrupt = Interrupt()
    if threading.current_thread() is not threading.main_thread():
        with working():
            yield interrupt
        return

    def first(_signum: int, _frame: FrameType | None) -> None:
        interrupt.requested = True
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if not defer:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, first)
    try:
        with working():
            yield interrupt
    finally:
        if not interrupt.requested:
            signal.signal(signal.SIGINT, previous)


def interrupted_exit(message: str, *, after: str = " ") -> typer.Exit:
    """Say on standard error what the report covers (``topospread: interrupted``, ``after``,
    ``message``); the exit (130) for the caller to raise."""
    typer.echo(f"topospread: interrupted{after}{message}", err=True)
    _Progress.told = True
    return typer.Exit(INTERRUPTED_EXIT)


__all__ = [
    "INTERRUPTED_EXIT",
    "Interrupt",
    "begin",
    "interrupted_exit",
    "interruptible",
    "stage",
    "told",
    "working",
]
