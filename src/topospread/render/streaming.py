"""A jsonl report's lines written while the scheduler runs, as each becomes final.

The report to a regular file was written once the run had ended: about 300 MB for the chart
cluster, with both processes in the kernel copying it at the very end, while the spill's
writer process (``detail_writer.py``), which encodes each attempt's fragment, was idle for a
third of the loop. Where a line can no longer change when its pod's attempt is decided, that
process writes it then, at the offset the lines before it end at; the report's end writes the
header and whatever is left (``report.write_jsonl``), the very bytes it would have written.

When a line is final, conservatively, from facts known at the attempt (``LineStream.final``):
the lines go in the queue's order, each one a pod bound at its first attempt, taken in that
order, whose priority is at least every queued pod's. Such a line shows that one attempt and
its node; nothing later changes it: the pod is never attempted again (it is bound), and only a
pod of a higher priority than a victim may preempt it (DefaultPreemption), which no queued pod
has. The first line that is not final (a pod that failed, an attempt out of the queue's order,
a gated pod, a preemptor's nomination) ends the stream for good: the end writes the rest as
before. At the end, each line streamed is checked against the run's outcome before the header
is written; a line that would differ is a bug, and an error.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import msgspec

from topospread.api.types import Pod
from topospread.framework.nominator import pod_key, pod_priority
from topospread.render.detail_writer import LineTarget
from topospread.render.positioned import pwrite_all, writes_at_offsets
from topospread.render.report_lines import LINE_END, line_head

if TYPE_CHECKING:
    from topospread.simulator.decision import Decision
    from topospread.simulator.run import PodOutcome


class LineStream:
    """The report's lines found final during the run, for one output (a regular file)."""

    def __init__(self, fd: int, start: int, header: bytes, queue: Sequence[Pod]) -> None:
        """``fd`` written at offsets from ``start`` (``writes_at_offsets``); ``header`` the
        report's first line; ``queue`` the run's queued pods in the report's order."""
        self.fd = fd
        self.start = start
        self.header = header
        self._identity = _identity(fd)
        self._keys = [pod_key(pod) for pod in queue]
        # NOTE: a key twice in the queue would make its lines depend on each other: no stream.
        self.open = bool(self._keys) and len(set(self._keys)) == len(self._keys)
        self._top = max((pod_priority(pod) for pod in queue), default=0)
        # The lines found final, in order: each one's decision and its bytes before the
        # fragment. ``handed`` of them went to the writer process (the others, found before
        # it started, wait for it: ``LineTarget``).
        self.decisions: list[Decision] = []
        self.heads: list[bytes] = []
        self.handed = 0
        self.done = False  # the report was completed

    def final(self, decision: Decision, *, first: bool) -> bool:
        """Whether ``decision`` (the pod's ``first`` attempt or not) makes the next line of
        the report final; once a line is not, none is (the stream has ended)."""
        if not self.open:
            return False
        line = len(self.decisions)
        if (
            first
            and decision.node is not None
            and line < len(self._keys)
            and decision.key == self._keys[line]
            and pod_priority(decision.pod) >= self._top
        ):
            return True
        self.open = False
        return False

    def target(self, side: int) -> LineTarget | None:
        """Where the writer process, about to be forked, writes the lines: None if the
        report's descriptor is no longer the file it was (nothing is streamed then)."""
        if _identity(self.fd) != self._identity:
            self.open = False
            return None
        return LineTarget(self.fd, self.start + len(self.header), side, LINE_END)

    def same_output(self, fd: int) -> bool:
        """Whether ``fd`` is the report's descriptor, still the same file, written nowhere
        else since (its position where the report starts)."""
        if fd != self.fd or _identity(fd) != self._identity:
            return False
        return os.lseek(fd, 0, os.SEEK_CUR) == self.start

    def checked(
        self, encoder: msgspec.json.Encoder, header: bytes, outcomes: Sequence[PodOutcome]
    ) -> Sequence[PodOutcome]:
        """The outcomes whose lines were not written during the run, once those that were are
        found to be the very lines the report's end would write (the header, and each line's
        bytes before its one fragment, encoded again): a bug otherwise."""
        if header != self.header:
            raise RuntimeError("detail spill: the report's header changed during the run")
        n = self.handed
        for outcome, decision, head in zip(
            outcomes[:n], self.decisions[:n], self.heads[:n], strict=True
        ):
            alone = len(outcome.attempts) == 1 and outcome.attempts[0] is decision
            now = (
                line_head(encoder, outcome.key, outcome.node, outcome.message, decision)
                if alone and outcome.decision is decision
                else None
            )
            if now != head:
                raise RuntimeError(
                    f"report line of {outcome.key} was written during the run, "
                    "but the run's outcome differs"
                )
        return outcomes[self.handed :]

    def write_header(self) -> None:
        pwrite_all(self.fd, memoryview(self.header), self.start)

    def discard(self) -> None:
        """The report was not completed: the lines written are taken back (the file ends
        where the report would have started)."""
        if self.handed and not self.done and _identity(self.fd) == self._identity:
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, self.start)


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def line_stream(fd: int, header: bytes, queue: Sequence[Pod]) -> LineStream | None:
    """A stream of the report's lines into ``fd``, where it is a regular file written at its
    end (``writes_at_offsets``) and not standard error's too; None otherwise."""
    start = writes_at_offsets(fd)
    if start is None or _identity(fd) in _stderr_files():
        return None
    return LineStream(fd, start, header, queue)


def _stderr_files() -> set[tuple[int, int] | None]:
    """The files standard error writes to. NOTE: ``> out 2>&1`` shares the report's file and
    its position: a warning written during the run would land where the lines go."""
    fds = {2}
    with contextlib.suppress(AttributeError, OSError, ValueError):
        fds.add(sys.stderr.fileno())
    return {_identity(fd) for fd in fds} - {None}
