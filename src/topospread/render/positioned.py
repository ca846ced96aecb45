"""Writing a report's lines at offsets known in advance, from two processes at once.

Every line of a jsonl report is known in length before a byte of it is written: the bytes
around the attempts' detail are encoded in memory, and each detail fragment's length is noted
where the spill keeps it. Where the output is a regular file, the lines can then be written
with ``pwrite`` at their offsets, in any order, by any process holding the file: the detail
writer process, idle once it has encoded the fragments, writes the second half of the report
while this process writes the first (``DetailSpill.copier``; no new process is forked).

Measured on the chart cluster's 296 MB (2 cores, ext4): writing one half each takes the write
from 0.090 s to 0.073 s of wall time (ext4 serialises buffered writes to one file: the copies
from the spill overlap, the copies into the file do not), and freeing the spill's pages as
they are read, in both processes (``Holes``, for a spill that is read no more), takes its
close from 0.027 s to nothing.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

try:
    import fcntl
except ImportError:  # Windows has none (and no fork: nothing here runs there)
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from topospread.render.detail_writer import DetailWriter

# A run of report bytes: the bytes encoded in memory, then a span of a spill file to copy
# after them: (bytes, file descriptor, offset, length), the descriptor -1 where there is none.
Piece = tuple[bytes, int, int, int]

# The first size of the buffer a piece is read into (a chart cluster fragment: about 150 KB).
_CHUNK_BYTES: Final = 1 << 20


def writes_at_offsets(fd: int) -> int | None:
    """Where the next byte written to ``fd`` goes, if lines can be written to it at offsets:
    a regular file, opened to write without ``O_APPEND`` (where ``pwrite`` appends), written
    at its end (a shorter report than the file's bytes after the position must leave them);
    None otherwise."""
    if fcntl is None:
        return None
    try:
        info = os.fstat(fd)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        position = os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or flags & os.O_APPEND:
        return None
    if flags & os.O_ACCMODE not in (os.O_WRONLY, os.O_RDWR) or position != info.st_size:
        return None
    return position


def write_in_two(
    out: int, start: int, pieces: list[Piece], copier: DetailWriter, spill: int, *, free: bool
) -> None:
    """Write the pieces from offset ``start`` of ``out`` (``writes_at_offsets``), the first
    half by this process, the second by ``copier`` (the spill's writer process, finished and
    idle; ``spill`` the descriptor of the spill file it holds), then set the position to their
    end. The file's size is set first. A small report, or one the writer cannot write (it does
    not hold this file), is written by this process alone; a failed writer is an error."""
    total = sum(len(head) + length for head, _, _, length in pieces)
    try:
        if total < IN_TWO_BYTES:
            copier.release(check=True)
            write_pieces(out, pieces, start, free=free)
            os.lseek(out, start + total, os.SEEK_SET)
            return
        split, middle = 0, start
        while split < len(pieces) and middle - start < total // 2:
            middle += len(pieces[split][0]) + pieces[split][3]
            split += 1
        # The writer holds the spill file only: any other span goes to it as bytes.
        theirs = [
            piece if piece[1] in (spill, -1) else (piece[0] + _read(*piece[1:]), -1, 0, 0)
            for piece in pieces[split:]
        ]
        os.ftruncate(out, start + total)
        copier.copy_lines(out, theirs, middle, free=free)
        write_pieces(out, pieces[:split], start, free=free)
    except BaseException:
        copier.abandon()
        raise
    if not copier.copied():  # the writer does not hold this file: this process writes it all
        write_pieces(out, pieces[split:], middle, free=free)
    os.lseek(out, start + total, os.SEEK_SET)


# Below this many bytes, a report is written by one process.
IN_TWO_BYTES: Final = 8 << 20


class Plan:
    """Takes each line's bytes as ``report._Direct`` does, but writes nothing: notes them as
    pieces (the bytes, then a spill span), to be written at their offsets."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []

    def copy(self, buf: bytearray, fd: int, offset: int, length: int) -> None:
        self.pieces.append((bytes(buf), fd, offset, length))
        buf.clear()

    def cut(self, buf: bytearray) -> None:
        """The bytes of ``buf`` as a piece of their own (and empty it)."""
        if buf:
            self.pieces.append((bytes(buf), -1, 0, 0))
            buf.clear()


def _read(fd: int, offset: int, length: int) -> bytes:
    data = bytearray(length)
    with memoryview(data) as view:
        read_exactly(fd, view, offset)
    return bytes(data)


def write_pieces(out: int, pieces: Sequence[Piece], at: int, *, free: bool) -> int:
    """Write the pieces one after the other from offset ``at`` of ``out``; where they end.
    With ``free``, each spill span's pages are given back once copied (the spill must not be
    read again)."""
    chunk = bytearray(_CHUNK_BYTES)
    holes = Holes() if free else None
    for head, fd, offset, length in pieces:
        size = len(head) + length
        if len(chunk) < size:
            chunk = bytearray(max(size, 2 * len(chunk)))
        with memoryview(chunk) as view:
            view[: len(head)] = head
            if length:
                read_exactly(fd, view[len(head) : size], offset)
            pwrite_all(out, view[:size], at)
        at += size
        if holes is not None and length:
            holes.punch(fd, offset, length)
    return at


def read_exactly(fd: int, view: memoryview, offset: int) -> None:
    """Fill ``view`` from ``offset`` of ``fd``; an error if the file ends first."""
    at = 0
    while at < len(view):
        got = pread_into(fd, view[at:], offset + at)
        if got <= 0:
            raise OSError(f"detail spill: {len(view) - at} bytes missing at {offset + at}")
        at += got


def pread_into(fd: int, view: memoryview, offset: int) -> int:
    """Read into ``view`` from ``offset`` of ``fd``: how many bytes came."""
    if hasattr(os, "preadv"):
        return os.preadv(fd, [view], offset)
    data = os.pread(fd, len(view), offset)  # macOS before 11
    view[: len(data)] = data
    return len(data)


def pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], offset + done)


# fallocate's FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE (linux/falloc.h).
_PUNCH_HOLE: Final = 0x01 | 0x02


class Holes:
    """Gives a file's pages back to the system as soon as they are read: a hole punched in
    the span (Linux's ``fallocate``), whole pages only. Freeing them at the spill's close took
    0.027 s of one process for the chart cluster; punched by both processes as they copy,
    the work is shared between the cores. Does nothing where it cannot (another system, a
    file system without holes)."""

    def __init__(self) -> None:
        self._fallocate = _fallocate()
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def punch(self, fd: int, offset: int, length: int) -> None:
        if self._fallocate is None:
            return
        # Inward to whole pages: the bytes of a page shared with another span stay.
        start = -(-offset // self._page) * self._page
        end = (offset + length) // self._page * self._page
        if end > start and self._fallocate(fd, _PUNCH_HOLE, start, end - start) != 0:
            self._fallocate = None  # not supported here: the close frees the pages


def _fallocate() -> Callable[[int, int, int, int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    # Here, not at the top: ctypes is imported only by the one write that uses it.
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = getattr(libc, "fallocate64", None) or libc.fallocate
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    call: Callable[[int, int, int, int], int] = function
    return call
