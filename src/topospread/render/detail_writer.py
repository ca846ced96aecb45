"""Encoding the fast path's per-node detail in a second process while the scheduler goes on.

A large run's report is mostly its attempts' detail (the chart cluster's 2,000 pods over 1,000
nodes: about 300 MB of JSON), and encoding it took about half of the scheduling loop's CPU
time, on the one core the loop runs on. ``DetailWriter`` forks a process that takes each fast
attempt's columns (``FastDetail``: numbers, not strings) through a pipe, encodes them with the
very code the scheduler's process would use (``FastDetail.fragment_parts``), and writes the
fragments to the spill file at the offsets it is given (a fragment's pieces in one
``pwritev``); its lengths come back when it is finished. The
node names and the formatted status reasons that the columns index are sent once, as they
appear (a new node table, new statuses). Attempts go in batches of up to 256 KiB (a pipe write
wakes the writer: once per attempt, that was a fifth of the scheduler's time in ``record``);
when the pipe has no room for the batch an attempt would complete, the spill encodes that
attempt itself rather than wait (``send(..., wait=False)``).

Where the report goes to a regular file and a line of it is final while the run goes on
(``render/streaming.py``), the writer is also given the line's bytes around the fragment, and
writes the whole line to the report at the offset the lines before it end at, instead of the
fragment to the spill: the report's end then writes only what was not final in time.

Where processes cannot be forked (no ``os.fork``), the spill encodes in its own process as
before.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import struct
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any, Final, NamedTuple

try:
    import fcntl
    import termios
except ImportError:  # Windows has none
    fcntl = None  # type: ignore[assignment]
    termios = None  # type: ignore[assignment]

import numpy as np

from topospread.render.positioned import Piece, read_exactly, write_pieces
from topospread.simulator.fastpath.detail import FastDetail, NodeKeys
from topospread.simulator.fastpath.vectors import I64

# Fragments a spill encodes itself before it starts the writer, or their bytes, whichever
# comes first: small runs (tests, examples) never pay for a process, large ones do not encode
# dozens of large fragments first (the chart cluster's are 150 KB: 64 of them, at 0.35 ms
# each when encoded from dicts, were a twentieth of its scheduling loop).
WRITER_AFTER: Final = 64
WRITER_AFTER_BYTES: Final = 1 << 20


# The most a Connection adds to a message it sends (its length).
_HEADER: Final = 12
# Each message of a batch: its kind, then the lengths of its two parts (the columns' pickled
# summary and their numbers; or a fragment already encoded, and nothing), then the length of
# the report line's bytes before the fragment, which come first (0: not a line, the fragment
# goes to the spill).
_FRAME: Final = struct.Struct("<BIII")
_COLUMNS: Final = 0
_FRAGMENT: Final = 1
# A report line whose fragment lies in a spill file already: the line's head, then ``_SPAN``
# (which file: ``_IN_SPILL`` or ``_IN_SIDE``, the offset, the length).
_COPY: Final = 2
_SPAN: Final = struct.Struct("<BQQ")
_IN_SPILL: Final = 0
_IN_SIDE: Final = 1
# How large a batch grows before it goes to the writer (at most a quarter of the pipe): each
# write wakes the writer, on the other core; 256 KiB (about 40 attempts of the chart cluster)
# took less of the scheduler's time than 64 KiB.
_BATCH_BYTES: Final = 1 << 18

# Every pickle of protocol 2 or more starts with this byte; a fragment is JSON text (it starts
# with '"feasible"'), so the two cannot be confused.
_PICKLED: Final = b"\x80"


def _widen(connection: Connection) -> int | None:
    """Give the pipe a larger buffer where Linux allows (1 MiB, about 150 attempts' columns),
    so that the scheduler does not wait on the writer's short stalls; the pipe's capacity
    where it can be read (None elsewhere)."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    getpipe = getattr(fcntl, "F_GETPIPE_SZ", None) if fcntl is not None else None
    if setpipe is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(connection.fileno(), setpipe, 1 << 20)
    if getpipe is None or termios is None:
        return None
    try:
        return int(fcntl.fcntl(connection.fileno(), getpipe))
    except OSError:
        return None


def _unread(connection: Connection) -> int | None:
    """How many bytes wait in the pipe, unread (None where that cannot be asked)."""
    try:
        raw = fcntl.ioctl(connection.fileno(), termios.FIONREAD, b"\0\0\0\0")
    except OSError:
        return None
    return int.from_bytes(raw, sys.byteorder, signed=True)


# The narrow types the columns may travel in, each with the values it holds.
_NARROW: Final[tuple[tuple[np.dtype[Any], int, int], ...]] = (
    (np.dtype(np.int16), -(1 << 15), (1 << 15) - 1),
    (np.dtype(np.int32), -(1 << 31), (1 << 31) - 1),
)


def _narrowest(blob: I64) -> np.dtype[Any]:
    """The narrowest of int16, int32 and int64 that holds every value of ``blob``."""
    if not len(blob):
        return _NARROW[0][0]
    lo, hi = int(blob.min()), int(blob.max())
    for dtype, least, most in _NARROW:
        if least <= lo and hi <= most:
            return dtype
    return blob.dtype


def can_fork() -> bool:
    return hasattr(os, "fork")


class LineTarget(NamedTuple):
    """Where a writer puts the report lines it is handed: the report's descriptor (the
    parent's, inherited at the fork), the offset of the first line, the descriptor of the
    spill's second file (fragments the parent encoded itself), and the bytes that end every
    line after its fragment."""

    out: int
    at: int
    side: int
    end: bytes


class DetailWriter:
    """A forked process encoding ``FastDetail`` fragments into ``fd`` from ``start`` on; with
    ``lines``, writing the report lines it is handed there."""

    def __init__(self, fd: int, start: int, lines: LineTarget | None = None) -> None:
        receive, self._send = multiprocessing.Pipe(duplex=False)
        self._capacity = _widen(self._send)
        self._batch = (
            _BATCH_BYTES
            if self._capacity is None
            else min(_BATCH_BYTES, max(1, self._capacity // 4))
        )
        self._results, report = multiprocessing.Pipe(duplex=False)
        # NOTE: a bare fork, and ``os._exit`` at the end, not a multiprocessing.Process: its
        # child flushes sys.stdout when it ends, and would write again whatever the parent had
        # buffered there at the fork.
        pid = os.fork()
        if pid == 0:  # the writer
            code = 1
            try:
                # Ctrl-C reaches the parent too, which stops the writer (``abandon``).
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                self._send.close()
                self._results.close()
                _serve(receive, report, fd, start, lines)
                code = 0
            except EOFError:
                pass  # the spill abandoned the run (``abandon`` closes the pipe, then stops it)
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(code)
        self._pid = pid
        receive.close()
        report.close()
        self._count = 0
        self._pending = bytearray()  # messages not yet written to the pipe
        # Where the lines handed over end in the report, once ``finish`` has answered.
        self.lines_end = lines.at if lines is not None else 0
        self.kept: bool | None = None  # told the end (``end``): whether it stays after
        # NOTE: tokens are ids of the parent's objects, kept alive here so that no id is reused
        # for another names list or status table while the writer may still hold it.
        self._names: dict[int, list[str]] = {}
        self._formatted: dict[int, tuple[list[list[str]], int]] = {}

    def send(self, detail: FastDetail, *, wait: bool = True, head: bytes = b"") -> bool:
        """Queue one attempt's columns; its fragment is the next one after the last sent.

        With ``wait`` False, only if that needs no wait: False when they would complete a
        batch and the pipe has no room for it now (the writer is behind); the caller then
        encodes the fragment itself. With ``head``, the fragment ends a report line that
        starts with those bytes: the writer writes the line to the report (``LineTarget``),
        the fragment nowhere else.
        """
        names = detail.keys.names
        new_names = None if id(names) in self._names else names
        table = detail.formatted
        _, sent = self._formatted.get(id(table), (table, 0))
        new_formatted = table[sent:] if len(table) > sent else None
        # The numbers go as one buffer (one copy, no pickling per array): take, the totals
        # when there are, then each plugin's column, all as long as ``take``; then the
        # rejected nodes seen and their status indices.
        columns = [detail.take]
        if detail.totals is not None:
            columns.append(detail.totals)
        columns += detail.columns
        columns += (detail.seen, detail.codes)
        blob = np.concatenate(columns)
        if blob.dtype != np.int64:  # not the columns the cycle hands over: encode it here
            if not wait:
                return False
            self.send_fragment(detail.fragment(), head=head)
            return True
        # In the narrowest type that holds them (node indices and scores: mostly 16 bits, a
        # quarter of the bytes through the pipe); the writer widens them back to int64.
        narrow = _narrowest(blob)
        header = pickle.dumps(
            (id(names), new_names, id(table), new_formatted, len(detail.take),
             detail.totals is not None, detail.plugins, detail.prior, len(detail.seen),
             narrow.char),
            pickle.HIGHEST_PROTOCOL,
        )  # fmt: skip
        payload = blob if narrow == blob.dtype else blob.astype(narrow)
        size = _FRAME.size + len(head) + len(header) + payload.nbytes
        if not wait and not self._fits(size):
            return False
        self._names[id(names)] = names
        self._formatted[id(table)] = (table, len(table))
        self._pending += _FRAME.pack(_COLUMNS, len(header), payload.nbytes, len(head))
        self._pending += head
        self._pending += header
        self._pending += payload.data
        self._queued()
        return True

    def _fits(self, size: int) -> bool:
        """Whether a message of ``size`` bytes can be queued without waiting: always, unless
        it completes a batch (the batch then goes to the pipe, which must have room for it;
        asked of the kernel only then, not for every message)."""
        total = len(self._pending) + size
        return total < self._batch or self._has_room(total)

    def send_fragment(self, fragment: bytes, *, head: bytes = b"") -> None:
        """Queue a fragment already encoded (an attempt the fast path did not decide); with
        ``head``, as ``send``'s."""
        self._pending += _FRAME.pack(_FRAGMENT, len(fragment), 0, len(head))
        self._pending += head
        self._pending += fragment
        self._queued()

    def send_line(self, head: bytes, side: bool, offset: int, length: int) -> None:
        """Queue a report line whose fragment lies in the spill file (or, with ``side``, in the
        spill's second file, ``LineTarget.side``) at ``offset``; written after the lines
        handed over before it. Not a fragment of its own; queued without a wait (it goes to
        the pipe with the next batch)."""
        self._pending += _FRAME.pack(_COPY, 0, 0, len(head))
        self._pending += head
        self._pending += _SPAN.pack(_IN_SIDE if side else _IN_SPILL, offset, length)

    def _queued(self) -> None:
        """One more message: the batch goes to the writer once it is large enough (one write,
        and one wake-up of the writer, for several attempts)."""
        self._count += 1
        if len(self._pending) >= self._batch:
            self._flush()

    def _flush(self) -> None:
        if self._pending:
            try:
                self._send.send_bytes(self._pending)
            except BrokenPipeError:
                self._ended()
            self._pending = bytearray()

    def _ended(self) -> None:
        """The writer is gone before its end (its pipe is closed): an error with its status."""
        self.release(check=True)
        raise RuntimeError("detail writer ended before its end")

    def _has_room(self, size: int) -> bool:
        """Whether ``size`` bytes fit in the pipe now, or it is empty (a batch larger than the
        pipe goes when the writer has read everything before it)."""
        if self._capacity is None:
            return True
        unread = _unread(self._send)
        return unread is None or unread == 0 or unread + size + _HEADER <= self._capacity

    def end(self, *, keep: bool = False) -> None:
        """Tell the writer that every fragment is sent, without waiting (``finish`` waits);
        ``keep`` as ``finish``'s. Without it, the writer ends as soon as it has answered."""
        if self.kept is not None:
            return
        self.kept = keep
        self._flush()
        try:
            self._send.send(None)
        except BrokenPipeError:
            self._ended()
        if not keep:
            self._send.close()

    def finish(self, *, keep: bool = False) -> list[int]:
        """Wait for every fragment to be written; their lengths, in the order sent. With
        ``keep`` (or as ``end`` was told), the writer stays, idle, to write a part of the
        report (``copy_lines``) or to be let go (``release``)."""
        self.end(keep=keep)
        keep = bool(self.kept)
        failed: tuple[int, str] | None = None
        try:
            lengths: list[int]
            lengths, self.lines_end, failed = self._results.recv()
        except EOFError:
            lengths = []  # it died: the count below says so
        if not keep or len(lengths) != self._count or failed is not None:
            self.release(check=True)
        if len(lengths) != self._count:
            raise RuntimeError(f"detail writer wrote {len(lengths)} of {self._count} fragments")
        if failed is not None:  # a report line it could not write
            raise OSError(*failed)
        return lengths

    def copy_lines(self, out: int, pieces: list[Piece], at: int, *, free: bool) -> None:
        """Have the finished writer (``finish(keep=True)``) write ``pieces`` from offset ``at``
        of ``out``, a descriptor it holds too (inherited at the fork); their spill spans must
        lie in the file it wrote the fragments to. ``copied`` says how that went."""
        info = os.fstat(out)
        job = (out, info.st_dev, info.st_ino, pieces, at, free)
        self._send.send_bytes(pickle.dumps(job, pickle.HIGHEST_PROTOCOL))

    def copied(self) -> bool:
        """Wait for ``copy_lines``' pieces: True once written, False where the writer could not
        write to the output (not the same file under that descriptor there: the caller writes
        them). The writer is let go either way."""
        try:
            answer: bool | tuple[int, str] = self._results.recv()
        except EOFError:
            self.release(check=True)
            raise RuntimeError(
                "detail writer ended before writing its part of the report"
            ) from None
        self.release(check=True)
        if isinstance(answer, tuple):
            raise OSError(*answer)
        return answer

    def release(self, *, check: bool = False) -> None:
        """Let the writer end (its pipe closed: it exits) and reap it; with ``check``, an error
        if it did not exit cleanly."""
        self._send.close()
        self._results.close()
        if self._pid:
            _, status = os.waitpid(self._pid, 0)
            self._pid = 0
            if check and status != 0:
                raise RuntimeError(f"detail writer exited with status {status}")

    def abandon(self) -> None:
        """Stop the writer without waiting for what it has not written (an error upstream)."""
        self._send.close()
        self._results.close()
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGTERM)
            os.waitpid(self._pid, 0)
            self._pid = 0


def _serve(
    receive: Connection, report: Connection, fd: int, start: int, lines: LineTarget | None
) -> None:
    names: dict[int, NodeKeys] = {}
    formatted: dict[int, list[list[str]]] = {}
    lengths: list[int] = []
    offset = start
    # Where the next report line goes; the first error writing one (no line is written after
    # it: the parent raises it at the end).
    line_at = lines.at if lines is not None else 0
    failed: tuple[int, str] | None = None
    while True:
        # A batch of messages, or (pickled) None at the end.
        raw = receive.recv_bytes()
        if raw.startswith(_PICKLED) and pickle.loads(raw) is None:
            break
        batch = memoryview(raw)
        at = 0
        while at < len(batch):
            kind, first, second, size = _FRAME.unpack_from(batch, at)
            at += _FRAME.size
            head = batch[at : at + size]
            at += size
            if kind == _COPY:
                assert lines is not None
                which, from_offset, length = _SPAN.unpack_from(batch, at)
                at += _SPAN.size
                source = fd if which == _IN_SPILL else lines.side
                if failed is None:
                    failed = _copy_line(lines, head, source, from_offset, length, line_at)
                line_at += size + length + len(lines.end)
                continue
            if kind == _FRAGMENT:
                parts: list[Any] = [batch[at : at + first]]
            else:
                parts = _columns_detail(
                    pickle.loads(batch[at : at + first]),
                    batch[at + first : at + first + second],
                    names,
                    formatted,
                ).fragment_parts()
            at += first + second
            if size:  # a report line's end: the line to the report, the fragment nowhere else
                assert lines is not None
                length = sum(map(len, parts))
                if failed is None:
                    failed = _write_line(lines.out, [head, *parts, lines.end], line_at)
                line_at += size + length + len(lines.end)
            else:
                length = _write_parts_at(fd, parts, offset)
                offset += length
            lengths.append(length)
    report.send((lengths, line_at, failed))
    _serve_copy(receive, report)
    report.close()


def _serve_copy(receive: Connection, report: Connection) -> None:
    """Once the fragments are written: write the lines the parent hands over, if it does
    (``DetailWriter.copy_lines``), and say how that went (True, False where the output is not
    the parent's file here, or an OSError's arguments)."""
    try:
        raw = receive.recv_bytes()
    except EOFError:
        return  # released: no part of the report to write
    out, device, inode, pieces, at, free = pickle.loads(raw)
    answer: bool | tuple[int, str] = False
    # The descriptor's number was the parent's: here, it must be the same file, open to write
    # without O_APPEND (the offsets are the file's, whoever writes at them).
    if _same_file(out, device, inode) and _writable(out):
        try:
            write_pieces(out, pieces, at, free=free)
            answer = True
        except OSError as err:
            answer = (err.errno or 0, err.strerror or str(err))
    report.send(answer)


def _write_line(out: int, parts: list[Any], at: int) -> tuple[int, str] | None:
    """Write a report line's parts at ``at`` of the report: None, or the error's arguments."""
    try:
        _write_parts_at(out, parts, at)
    except OSError as err:
        return (err.errno or 0, err.strerror or str(err))
    return None


def _copy_line(
    lines: LineTarget, head: memoryview, source: int, offset: int, length: int, at: int
) -> tuple[int, str] | None:
    """A report line whose fragment is read from ``source`` (a spill file) at ``offset``."""
    fragment = bytearray(length)
    with memoryview(fragment) as view:
        read_exactly(source, view, offset)
    return _write_line(lines.out, [head, fragment, lines.end], at)


def _same_file(fd: int, device: int, inode: int) -> bool:
    try:
        info = os.fstat(fd)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == (device, inode)


def _writable(fd: int) -> bool:
    if fcntl is None:
        return False
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        return False
    return flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR) and not flags & os.O_APPEND


def _write_all_at(fd: int, data: memoryview, offset: int) -> int:
    """Write all of ``data`` at ``offset``; its length."""
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], offset + done)
    return done


def _write_parts_at(fd: int, parts: list[bytes], offset: int) -> int:
    """Write the parts one after the other at ``offset`` (one system call, no join where the
    system has ``pwritev``); their length."""
    length = sum(map(len, parts))
    done = os.pwritev(fd, parts, offset) if _PWRITEV else 0
    if done < length:  # none written, or a short write: the rest, joined
        _write_all_at(fd, memoryview(b"".join(parts))[done:], offset + done)
    return length


_PWRITEV: Final = hasattr(os, "pwritev")


def _columns_detail(
    message: Any,
    numbers: memoryview,
    names: dict[int, NodeKeys],
    formatted: dict[int, list[list[str]]],
) -> FastDetail:
    """One attempt's columns as the scheduler's process handed them over: their fragment is
    the one that process would encode."""
    (names_id, new_names, table_id, new_formatted, n, has_totals, plugins, prior, rejected,
     dtype) = message  # fmt: skip
    # NOTE: left in the type they came in: the fragment only indexes with them, compares them
    # by value and makes Python ints of them (``tolist``), the same values in any width. The
    # totals and plugin columns go on as one block too (``FastDetail.scored``), a view.
    blob = np.frombuffer(numbers, np.dtype(dtype))
    count = 1 + has_totals + len(plugins)
    if len(blob) != n * count + 2 * rejected:
        raise RuntimeError("detail writer: the columns' lengths disagree")
    parts = [blob[i * n : (i + 1) * n] for i in range(count)]
    take = parts[0]
    totals = parts[1] if has_totals else None
    columns = parts[1 + has_totals :]
    seen = blob[n * count : n * count + rejected]
    codes = blob[n * count + rejected :]
    if new_names is not None:
        names[names_id] = NodeKeys.of(new_names)
    table = formatted.setdefault(table_id, [])
    if new_formatted is not None:
        table += new_formatted
    return FastDetail(
        names[names_id], take, totals, plugins, columns, prior, seen, codes, table,
        blob[n : n * count].reshape(count - 1, n) if has_totals else None,
    )  # fmt: skip
