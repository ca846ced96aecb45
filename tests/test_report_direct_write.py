"""``write_jsonl`` to a file descriptor: each line's head from memory, the spilled fragments
from the spill file (read into one reused buffer for a regular file, sent by the kernel to a
pipe), the same bytes as to an in-memory stream, whatever the output and whatever the kernel
refuses."""

from __future__ import annotations

import errno
import io
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from test_reports import CASES, spread_scenario
from topospread.render import report
from topospread.render.report import DetailSpill, write_jsonl
from topospread.simulator.run import ScheduleRun, schedule


@pytest.fixture(params=["in process", "writer process"])
def spilled(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ScheduleRun, DetailSpill, bytes]]:
    """A run whose every attempt went to a spill (through the forked writer, or not), and its
    report as written to an in-memory stream."""
    if request.param == "writer process":
        if not report.can_fork():
            pytest.skip("no os.fork: the spill encodes in its own process")
        monkeypatch.setattr(report, "WRITER_AFTER", 0)
    else:
        monkeypatch.setattr(report, "can_fork", lambda: False)
    with DetailSpill() as spill:
        run = schedule(spread_scenario(), seed=3, on_decision=spill.record)
        yield run, spill, in_memory(run, spill)


def in_memory(run: ScheduleRun, spill: DetailSpill | None) -> bytes:
    out = io.BytesIO()
    write_jsonl(run, out, spill)
    return out.getvalue()


class DrainedPipe:
    """A pipe whose read end a thread drains: write to ``fd``, then ``bytes_read()`` (after the
    write end is closed) waits for the thread and gives what came through."""

    def __init__(self) -> None:
        read_fd, self.fd = os.pipe()
        self._got = bytearray()

        def drain() -> None:
            with open(read_fd, "rb", buffering=0) as r:
                while chunk := r.read(1 << 16):
                    self._got.extend(chunk)

        self._reader = threading.Thread(target=drain)
        self._reader.start()

    def bytes_read(self) -> bytes:
        self._reader.join()
        return bytes(self._got)


def through_a_pipe(write: Callable[[io.BufferedWriter], None]) -> bytes:
    """What ``write`` writes to a pipe's buffered write end, read by a thread."""
    pipe = DrainedPipe()
    with open(pipe.fd, "wb") as w:
        write(w)
    return pipe.bytes_read()


def test_a_regular_file_gets_the_in_memory_streams_bytes(
    spilled: tuple[ScheduleRun, DetailSpill, bytes], tmp_path: Path
) -> None:
    run, spill, want = spilled
    path = tmp_path / "out.jsonl"
    with path.open("wb") as out:
        out.write(b"before\n")  # buffered in ``out``: flushed ahead of the report
        write_jsonl(run, out, spill)
        out.write(b"after\n")
    assert path.read_bytes() == b"before\n" + want + b"after\n"


def test_a_file_opened_to_append_gets_the_same_bytes(
    spilled: tuple[ScheduleRun, DetailSpill, bytes], tmp_path: Path
) -> None:
    run, spill, want = spilled
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"kept\n")
    with path.open("ab") as out:
        write_jsonl(run, out, spill)
    assert path.read_bytes() == b"kept\n" + want


def test_a_pipe_gets_the_same_bytes(spilled: tuple[ScheduleRun, DetailSpill, bytes]) -> None:
    run, spill, want = spilled

    def write(out: io.BufferedWriter) -> None:
        out.write(b"before\n")
        write_jsonl(run, out, spill)

    assert through_a_pipe(write) == b"before\n" + want


def test_a_pipe_gets_the_same_bytes_where_sendfile_sends_a_few_at_a_time(
    spilled: tuple[ScheduleRun, DetailSpill, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    run, spill, want = spilled
    calls = []
    sendfile = os.sendfile

    def few(out_fd: int, in_fd: int, offset: int | None, count: int) -> int:
        calls.append(count)
        return sendfile(out_fd, in_fd, offset, min(count, 7))

    monkeypatch.setattr(report.os, "sendfile", few)
    assert through_a_pipe(lambda out: write_jsonl(run, out, spill)) == want
    assert calls  # the fragments went through sendfile


@pytest.mark.parametrize("code", [errno.EINVAL, errno.ENOSYS])
def test_where_sendfile_refuses_the_output_the_fragments_are_written(
    spilled: tuple[ScheduleRun, DetailSpill, bytes], monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    run, spill, want = spilled
    calls = []
    sendfile = os.sendfile

    def refuses_after_some(out_fd: int, in_fd: int, offset: int | None, count: int) -> int:
        # The first fragment partly sent, then the output refused: the rest is written.
        calls.append(count)
        if len(calls) > 1:
            raise OSError(code, os.strerror(code))
        return sendfile(out_fd, in_fd, offset, max(1, count // 2))

    monkeypatch.setattr(report.os, "sendfile", refuses_after_some)
    assert through_a_pipe(lambda out: write_jsonl(run, out, spill)) == want
    assert len(calls) == 2  # not asked again once refused


def test_another_sendfile_error_is_raised(
    spilled: tuple[ScheduleRun, DetailSpill, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    run, spill, _ = spilled

    def fails(*args: Any) -> int:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(report.os, "sendfile", fails)
    with pytest.raises(OSError, match="Input/output error"):
        through_a_pipe(lambda out: write_jsonl(run, out, spill))


def test_fragments_larger_than_the_buffer_grow_it(
    spilled: tuple[ScheduleRun, DetailSpill, bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run, spill, want = spilled
    monkeypatch.setattr(report, "_CHUNK_BYTES", 16)
    path = tmp_path / "out.jsonl"
    with path.open("wb") as out:
        write_jsonl(run, out, spill)
    assert path.read_bytes() == want


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_every_case_through_a_file_and_a_pipe_is_the_in_memory_report(
    case: str, tmp_path: Path
) -> None:
    # The report without a spill, from the Decisions themselves: the same bytes.
    want = in_memory(schedule(CASES[case](), seed=3), None)
    with DetailSpill() as spill:
        run = schedule(CASES[case](), seed=3, on_decision=spill.record)
        assert in_memory(run, spill) == want
        path = tmp_path / "out.jsonl"
        with path.open("wb") as out:
            write_jsonl(run, out, spill)
        assert path.read_bytes() == want
        assert through_a_pipe(lambda out: write_jsonl(run, out, spill)) == want
