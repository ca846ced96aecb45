"""Progress on standard error while long commands run, only when it is a terminal."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from topospread.analysis.reports import StepReport
    from topospread.analysis.sweep_report import Outcome
    from topospread.analysis.verify_results import VerifyProgress

# Timelines with at least this many steps (the initial state included) show progress.
PROGRESS_MIN_STEPS = 5


@contextmanager
def sweep_progress() -> Iterator[
    tuple[Callable[[int], None] | None, Callable[[Outcome], None] | None]
]:
    """A rich progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None, None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = (
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("settling the base state", total=None)

        def planned(total: int) -> None:
            progress.update(task, total=total, description="replaying failures")

        def ran(outcome: Outcome) -> None:
            progress.update(task, advance=1, description=outcome.failure.name)

        yield planned, ran


@contextmanager
def simulate_progress(total: int) -> Iterator[Callable[[StepReport, int], None] | None]:
    """A rich progress bar on stderr for long timelines, only when stderr is a terminal."""
    if total < PROGRESS_MIN_STEPS or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("simulating", total=total)

        def advance(step: StepReport, _total: int) -> None:
            progress.update(task, advance=1, description=f"step {step.index}: {step.name}")

        yield advance


@contextmanager
def verify_progress() -> Iterator[Callable[[VerifyProgress], None] | None]:
    """A status line on stderr while the search runs, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    with Console(stderr=True).status("verifying") as status:

        def update(p: VerifyProgress) -> None:
            if p.phase == "search":
                status.update(
                    f"searching: {p.states} states, depth {p.depth}, {p.frontier} to expand"
                )
            else:
                status.update(f"state budget reached; sampling: {p.samples} random orders")

        yield update
