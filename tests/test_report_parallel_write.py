"""``write_jsonl`` to a regular file by two processes: this one writes the first half of the
lines at their offsets, the spill's writer process the second; the same bytes as to an
in-memory stream, and the other outputs (a file opened to append, a pipe, a file the writer
does not hold) written by this process alone. A writer that fails makes the write fail."""

from __future__ import annotations

import contextlib
import errno
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from test_report_direct_write import in_memory, through_a_pipe
from test_reports import spread_scenario
from topospread.render import detail_writer, positioned, report
from topospread.render.report import DetailSpill, write_jsonl
from topospread.simulator.run import ScheduleRun, schedule

pytestmark = pytest.mark.skipif(not report.can_fork(), reason="no os.fork: one process writes")


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every report split in two, however small; what the writer answered each time."""
    monkeypatch.setattr(report, "WRITER_AFTER", 0)
    monkeypatch.setattr(positioned, "IN_TWO_BYTES", 0)
    got: list[bool] = []
    copied = detail_writer.DetailWriter.copied

    def spy(self: detail_writer.DetailWriter) -> bool:
        got.append(copied(self))
        return got[-1]

    monkeypatch.setattr(detail_writer.DetailWriter, "copied", spy)
    return got


@contextlib.contextmanager
def scheduled(out: IO[bytes] | None = None) -> Iterator[tuple[ScheduleRun, DetailSpill, bytes]]:
    """A run spilled through the writer process (forked while ``out`` is open, if given), and
    its report as written to an in-memory stream."""
    del out  # open when the writer is forked: it holds the file too
    with DetailSpill() as spill:
        run = schedule(spread_scenario(), seed=3, on_decision=spill.record)
        yield run, spill, in_memory(run, spill)


@pytest.mark.parametrize("final", [False, True], ids=["spill kept", "spill freed"])
def test_a_file_the_writer_holds_is_written_by_both_processes(
    answers: list[bool], tmp_path: Path, final: bool
) -> None:
    path = tmp_path / "out.jsonl"
    with path.open("wb") as out:
        out.write(b"before\n")
        with scheduled(out) as (run, spill, want):
            write_jsonl(run, out, spill, final=final)
            out.write(b"after\n")
            if final:  # the spill's pages were given back: it cannot be read again
                with pytest.raises(RuntimeError, match="written out for the last time"):
                    in_memory(run, spill)
            else:
                assert in_memory(run, spill) == want
    assert answers == [True]
    assert path.read_bytes() == b"before\n" + want + b"after\n"


def test_a_file_opened_after_the_fork_is_written_by_this_process(
    answers: list[bool], tmp_path: Path
) -> None:
    path = tmp_path / "out.jsonl"
    with scheduled() as (run, spill, want), path.open("wb") as out:
        write_jsonl(run, out, spill, final=True)
    assert answers == [False]  # the writer has no such file: this process wrote its half
    assert path.read_bytes() == want


def test_a_file_opened_to_append_is_written_by_this_process(
    answers: list[bool], tmp_path: Path
) -> None:
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"kept\n")
    with path.open("ab") as out, scheduled(out) as (run, spill, want):
        write_jsonl(run, out, spill, final=True)
    assert answers == []
    assert path.read_bytes() == b"kept\n" + want


def test_a_file_written_before_its_end_is_written_by_this_process(
    answers: list[bool], tmp_path: Path
) -> None:
    # Opened to update over longer contents: the bytes after the report stay.
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"x" * (1 << 20))
    with path.open("r+b") as out, scheduled(out) as (run, spill, want):
        write_jsonl(run, out, spill, final=True)
        assert out.tell() == len(want)
    assert answers == []
    assert path.read_bytes() == want + b"x" * ((1 << 20) - len(want))


def test_a_pipe_is_written_by_this_process(answers: list[bool]) -> None:
    with scheduled() as (run, spill, want):
        assert through_a_pipe(lambda out: write_jsonl(run, out, spill, final=True)) == want
    assert answers == []


def test_an_in_memory_stream_is_written_by_this_process(answers: list[bool]) -> None:
    with scheduled() as (run, spill, want):
        out = io.BytesIO()
        write_jsonl(run, out, spill, final=True)
        assert out.getvalue() == want
    assert answers == []


def test_the_writers_write_error_is_raised(
    answers: list[bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object, **kwargs: object) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    # Patched before the fork: only the writer's copy fails.
    monkeypatch.setattr(detail_writer, "write_pieces", full)
    with (
        (tmp_path / "out.jsonl").open("wb") as out,
        scheduled(out) as (run, spill, _),
        pytest.raises(OSError, match="No space left on device"),
    ):
        write_jsonl(run, out, spill, final=True)
    assert answers == []


def test_a_writer_that_dies_while_writing_makes_the_write_fail(
    answers: list[bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def dies(*args: object, **kwargs: object) -> int:
        os._exit(3)

    monkeypatch.setattr(detail_writer, "write_pieces", dies)
    with (
        (tmp_path / "out.jsonl").open("wb") as out,
        scheduled(out) as (run, spill, _),
        pytest.raises(RuntimeError, match="detail writer exited with status"),
    ):
        write_jsonl(run, out, spill, final=True)
    assert answers == []


def test_a_large_report_is_split_only_above_the_threshold(
    answers: list[bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(positioned, "IN_TWO_BYTES", 1 << 30)
    path = tmp_path / "out.jsonl"
    with path.open("wb") as out, scheduled(out) as (run, spill, want):
        write_jsonl(run, out, spill, final=True)
    assert answers == []  # written at its offsets by this process alone
    assert path.read_bytes() == want


def test_punched_holes_keep_the_bytes_around_the_span(tmp_path: Path) -> None:
    page = os.sysconf("SC_PAGE_SIZE")
    data = bytes(range(256)) * (16 * page // 256)
    path = tmp_path / "spill"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDWR)
    try:
        positioned.Holes().punch(fd, page // 2, 5 * page)
    finally:
        os.close(fd)
    got = path.read_bytes()
    assert len(got) == len(data)
    assert got[: page // 2] == data[: page // 2]
    assert got[page // 2 + 5 * page :] == data[page // 2 + 5 * page :]


def test_only_a_regular_file_written_at_its_end_takes_writes_at_offsets(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    with path.open("ab") as out:
        assert positioned.writes_at_offsets(out.fileno()) is None
    with path.open("r+b") as out:
        assert positioned.writes_at_offsets(out.fileno()) is None  # bytes after the position
        out.seek(3)
        assert positioned.writes_at_offsets(out.fileno()) == 3
    with path.open("rb") as out:
        out.seek(3)
        assert positioned.writes_at_offsets(out.fileno()) is None
    read_fd, write_fd = os.pipe()
    try:
        assert positioned.writes_at_offsets(write_fd) is None
    finally:
        os.close(read_fd)
        os.close(write_fd)
