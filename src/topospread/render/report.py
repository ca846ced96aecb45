"""Reports of a scheduling run: human text, JSON lines, and the resulting cluster as YAML
(``cluster_yaml.py``).

The machine-readable reports stream: ``write_jsonl`` and ``write_cluster_yaml`` write one line
or one document at a time to a binary or text stream, and never hold the whole output. With a
``DetailSpill`` recording each attempt as it is decided, every node's scores and reasons leave
memory as soon as the attempt ends, so memory stays flat in the number of pods.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, TYPE_CHECKING, Final

import msgspec

from topospread.api.zones import zone_key_for

# The YAML report's functions, where callers have always found them.
from topospread.render.cluster_yaml import cluster_documents as cluster_documents
from topospread.render.cluster_yaml import cluster_yaml as cluster_yaml
from topospread.render.cluster_yaml import dump_yaml_documents as dump_yaml_documents
from topospread.render.cluster_yaml import write_cluster_yaml as write_cluster_yaml
from topospread.render.detail_writer import (
    WRITER_AFTER,
    WRITER_AFTER_BYTES,
    DetailWriter,
    can_fork,
)
from topospread.render.positioned import Plan, pread_into, write_in_two, writes_at_offsets
from topospread.render.report_lines import (
    attempt_head,
    header_line,
    line_head,
    outcome_head,
)
from topospread.render.streaming import LineStream, line_stream
from topospread.render.topology import Column, draw_topology
from topospread.simulator.decision import Decision
from topospread.simulator.run import NOT_ATTEMPTED, PodOutcome, ScheduleRun

if TYPE_CHECKING:
    from topospread.api.types import Pod
    from topospread.framework.runtime import Framework


def not_attempted(run: ScheduleRun) -> list[PodOutcome]:
    """The queued pods Ctrl-C stopped the run before (none unless ``run.interrupted``)."""
    return [o for o in run.pending if o.message == NOT_ATTEMPTED] if run.interrupted else []


def human(run: ScheduleRun, *, zone_key: str | None = None) -> str:
    """Each pod -> its node or Pending with the FailedScheduling text, then the topology."""
    lines = []
    width = max((len(o.key) for o in run.outcomes), default=0)
    for o in run.outcomes:
        if o.node is not None:
            lines.append(f"{o.key.ljust(width)}  -> {o.node}")
        elif o.message is not None and o.message.startswith("preempted by"):
            lines.append(f"{o.key.ljust(width)}  Deleted: {o.message}")
        else:
            lines.append(f"{o.key.ljust(width)}  Pending: {o.message}")
    summary = f"{len(run.bound)} of {len(run.outcomes)} queued pods bound"
    if run.pending:
        summary += f", {len(run.pending)} not bound"
    if run.interrupted:
        summary += f"; interrupted: {len(not_attempted(run))} not attempted"
    lines += ["", summary + "."] if lines else [summary + "."]
    lines += [f"{key} was preempted by {by} and deleted." for key, by in run.preempted_existing]
    finished = run.scenario.terminal_pods
    if finished:
        lines.append(
            f"{len(finished)} bound pod(s) Succeeded or Failed: not drawn, and ignored by "
            "kube-scheduler."
        )
    lines.append("")
    placed = {o.key: "*" for o in run.bound}
    columns = [Column(info.node, info.pods) for info in run.cluster.list()]
    lines.append(draw_topology(columns, zone_key=zone_key, highlight=placed))
    if placed:
        lines.append("* placed by this run")
    return "\n".join(lines)


class _Detail(msgspec.Struct):
    """A Decision's per-node detail, encoded in the report's key order."""

    feasible: list[str]
    scores: dict[str, int]
    plugin_scores: dict[str, dict[str, int]] = msgspec.field(name="pluginScores")
    reasons: dict[str, list[str]]


def _detail_fragment(encoder: msgspec.json.Encoder, decision: Decision) -> bytes:
    """``"feasible":…,"scores":…,"pluginScores":…,"reasons":…``: the middle of a report line,
    written from the fast path's columns where the attempt left them."""
    if decision.columns is not None:
        return decision.columns.fragment()
    detail = _Detail(decision.feasible, decision.scores, decision.plugin_scores, decision.reasons)
    # Encoded from the Decision's own containers: no per-pod dict is built around them.
    return encoder.encode(detail)[1:-1]


class DetailSpill:
    """Takes every attempt's per-node detail as the scheduler decides it, for ``write_jsonl``.

    Pass ``record`` as ``schedule(..., on_decision=...)``. Each attempt's feasible nodes,
    scores and reasons are encoded at once into an unnamed temporary file, and the Decision's
    containers are replaced by empty ones, so no attempt's detail stays in memory: a pod's
    report line cannot be written before the run ends (a later binding may send it back to the
    queue, a later preemption may evict it), but its bytes wait on disk, not in the heap.
    After ``WRITER_AFTER`` attempts (or ``WRITER_AFTER_BYTES`` of their detail), where
    processes can be forked, a ``DetailWriter`` process encodes the fast attempts' columns
    while the scheduler goes on (``detail_writer.py``); the first read waits for it. When the
    writer is behind (its pipe full), the spill encodes the attempt itself, into a second file,
    rather than wait: the same bytes, whoever encodes them (the chart cluster's fragments take
    about a third as long to encode as its attempts to decide: the writer keeps up, and the
    spill encodes only the first few).

    With ``stream`` called before the run, the writer also writes each report line found
    final during the run to the report itself (``streaming.py``), and that line's fragment
    nowhere else: ``write_jsonl`` to that output writes the rest.

    NOTE: relies on the scheduler never reading a Decision's feasible, scores, plugin_scores
    or reasons after the attempt (``on_decision`` runs once the attempt is over): emptying them
    changes no decision. A recorded Decision reports its detail only through this spill.
    """

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None  # opened by the first record
        self._end = 0  # where the next fragment this process encodes goes
        # The fragments this process encodes while a writer runs (it writes ``_file``).
        self._side: IO[bytes] | None = None
        self._side_end = 0
        self._encoder = msgspec.json.Encoder()
        # key -> (each recorded decision of the pod, its slot in ``_spans``), in attempt order:
        # the report writes every attempt's detail.
        self._where: dict[str, list[tuple[Decision, int]]] = {}
        # Each fragment's (file, offset, length); None while the writer has it.
        self._spans: list[tuple[IO[bytes], int, int] | None] = []
        self._writer: DetailWriter | None = None
        self._writer_from = 0  # the first slot the writer has
        # The writer once finished, idle, kept to write a part of the report (``copier``).
        self._copier: DetailWriter | None = None
        self._freed = False  # pages of the files given back: nothing can be read again
        self._stream: LineStream | None = None  # the report's lines written during the run
        self._lines = False  # the writer takes the final lines (``LineTarget``)
        # The final lines found before the writer started: head, offset, length in ``_file``.
        self._waiting: list[tuple[bytes, int, int]] = []
        self._streamed: set[int] = set()  # slots whose fragment went to the report only
        self._lines_end = 0  # where the lines the writer wrote end in the report

    def stream(
        self, out: IO[bytes], frameworks: Mapping[str, Framework], queue: Sequence[Pod]
    ) -> None:
        """Before the run: write the jsonl report's lines to ``out`` as they become final,
        where it can (a regular file written at its end, a writer process). The report must
        then be finished by ``write_jsonl(run, out, self, final=True)``; if it is not, the
        lines written are taken back at ``close``."""
        fd = _descriptor(out)
        if fd is None or not can_fork() or self._spans:
            return
        self._stream = line_stream(fd, header_line(self._encoder, frameworks), queue)

    def record(self, decision: Decision) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close()
        stream = self._stream
        head = b""
        if stream is not None and stream.final(decision, first=decision.key not in self._where):
            head = line_head(self._encoder, decision.key, decision.node, decision.message, decision)
            stream.decisions.append(decision)
            stream.heads.append(head)
        if (
            self._writer is None
            and (len(self._spans) >= WRITER_AFTER or self._end >= WRITER_AFTER_BYTES)
            and can_fork()
        ):
            self._start_writer()
        slot = len(self._spans)
        line = head if self._lines else b""
        if (
            self._writer is not None
            and decision.columns is not None
            and self._writer.send(decision.columns, wait=False, head=line)
        ):
            self._spans.append(None)
            if line:
                self._streamed.add(slot)
                self._handed()
        elif self._writer is not None:  # the writer is behind, or the fast path did not decide
            if self._side is None:
                self._side = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close()
            fragment = _detail_fragment(self._encoder, decision)
            os.pwrite(self._side.fileno(), fragment, self._side_end)
            self._spans.append((self._side, self._side_end, len(fragment)))
            if line:
                self._writer.send_line(line, True, self._side_end, len(fragment))
                self._handed()
            self._side_end += len(fragment)
        else:
            fragment = _detail_fragment(self._encoder, decision)
            os.pwrite(self._file.fileno(), fragment, self._end)
            self._spans.append((self._file, self._end, len(fragment)))
            if head:
                self._waiting.append((head, self._end, len(fragment)))
            self._end += len(fragment)
        self._where.setdefault(decision.key, []).append((decision, slot))
        decision.drop_detail()

    def _start_writer(self) -> None:
        """Fork the writer; where lines are final or may become so, it writes them too, from
        those found final already (their fragments in ``_file``)."""
        assert self._file is not None
        stream, target = self._stream, None
        if stream is not None and (stream.open or self._waiting):
            # Opened before the fork, for the writer to read the lines' fragments from.
            self._side = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close()
            target = stream.target(self._side.fileno())
        self._writer = DetailWriter(self._file.fileno(), self._end, target)
        self._writer_from = len(self._spans)
        self._lines = target is not None
        if self._lines:
            for head, offset, length in self._waiting:
                self._writer.send_line(head, False, offset, length)
                self._handed()
        self._waiting = []

    def _handed(self) -> None:
        assert self._stream is not None
        self._stream.handed += 1

    def _finish_writer(self) -> None:
        """Wait for the writer's fragments and note where each went."""
        writer, self._writer = self._writer, None
        if writer is None:
            return
        assert self._file is not None
        lengths = writer.finish(keep=True)
        self._copier = writer if writer.kept else None
        self._lines_end = writer.lines_end
        spans = self._spans
        sent = [slot for slot in range(self._writer_from, len(spans)) if spans[slot] is None]
        if len(sent) != len(lengths):
            raise RuntimeError(f"detail writer wrote {len(lengths)} of {len(sent)} fragments")
        for slot, length in zip(sent, lengths, strict=True):
            if slot not in self._streamed:  # a streamed line's fragment is in the report only
                self._spans[slot] = (self._file, self._end, length)
                self._end += length

    def span(self, decision: Decision) -> tuple[int, int, int] | None:
        """Where the recorded detail of this very decision lies: (file descriptor, offset,
        length); None if it was not recorded."""
        if self._file is None:
            return None
        if self._freed:
            raise RuntimeError("detail spill: already written out for the last time")
        self._finish_writer()
        for recorded, slot in self._where.get(decision.key, ()):
            if recorded is decision:
                span = self._spans[slot]
                if span is None:  # the writer is finished: its line was streamed
                    raise RuntimeError("detail spill: written to the report during the run")
                file, offset, length = span
                return file.fileno(), offset, length
        return None

    def fragment(self, decision: Decision) -> bytes | None:
        """The recorded detail of this very decision, or None if it was not recorded."""
        span = self.span(decision)
        return None if span is None else _read_span(*span)

    def copier(self) -> tuple[DetailWriter, int] | None:
        """The writer process, finished and idle, with the descriptor of the spill file it
        holds too, for a part of the report (``positioned.py``); the caller releases it. None
        where there is none (no writer was needed, or no fork)."""
        self._finish_writer()
        copier, self._copier = self._copier, None
        if copier is None or self._file is None:
            return None
        return copier, self._file.fileno()

    def streamed(self, fd: int) -> LineStream | None:
        """The lines written to the report during the run, if any (the writer may still be
        writing them: ``lines_end``); an error if that report is not ``fd``'s, where it was,
        as it was."""
        stream = self._stream
        if stream is None or not stream.handed:
            return None
        if not stream.same_output(fd):
            raise RuntimeError("detail spill: the report's first lines went to another output")
        return stream

    @property
    def lines_streamed(self) -> int:
        """How many of the report's lines went to the writer during the run."""
        return self._stream.handed if self._stream is not None else 0

    def end_writer(self, *, keep: bool) -> None:
        """Tell the writer that the run is over, without waiting for it (``DetailWriter.end``);
        without ``keep``, it ends as soon as it has answered: nothing is left to copy."""
        if self._writer is not None:
            self._writer.end(keep=keep)

    def lines_end(self) -> int:
        """Where the lines written during the run end in the report, once all are written."""
        self._finish_writer()
        return self._lines_end

    def spend(self) -> None:
        """Note that the spill's pages are being given back as they are read: reading it
        again is an error, not zeros."""
        self._freed = True

    def close(self) -> None:
        if self._writer is not None:
            self._writer.abandon()
            self._writer = None
        if self._copier is not None:
            self._copier.release()
            self._copier = None
        if self._stream is not None:  # after the writer: nothing writes to the report now
            self._stream.discard()
        for file in (self._file, self._side):
            if file is not None:
                file.close()
        self._file = self._side = None
        self._where.clear()
        self._spans.clear()

    def __enter__(self) -> DetailSpill:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def jsonl(run: ScheduleRun, spill: DetailSpill | None = None) -> Iterator[bytes]:
    """A header with the profile's plugins, then one line per queued pod, in queue order.

    Lines are bytes ending in a newline, encoded one at a time as they are consumed; a pod's
    detail comes from ``spill`` when it recorded the pod's decision, else from the Decision.
    """
    encoder = msgspec.json.Encoder()
    yield header_line(encoder, run.scheduler.frameworks)
    buf = bytearray()
    for outcome in run.outcomes:
        buf.clear()
        _encode_outcome(encoder, outcome, spill, buf)
        yield bytes(buf)


def _encode_outcome(
    encoder: msgspec.json.Encoder,
    outcome: PodOutcome,
    spill: DetailSpill | None,
    buf: bytearray,
    direct: _Direct | Plan | None = None,
) -> None:
    """Append the outcome's line: the keys and values of ``PodOutcome.to_json``, in its order,
    each attempt's per-node detail taken from the spill where it recorded the attempt. With
    ``direct``, a spilled fragment is not read into ``buf``: ``direct`` writes what ``buf``
    holds, then copies the fragment from the spill file to its output."""
    outcome_head(encoder, outcome.key, outcome.node, outcome.message, buf)
    for i, decision in enumerate(outcome.attempts):
        if i:
            buf += b","
        attempt_head(encoder, decision, buf)
        span = spill.span(decision) if spill is not None else None
        if span is None:
            buf += _detail_fragment(encoder, decision)
        elif direct is not None:
            direct.copy(buf, *span)
        else:
            buf += _read_span(*span)
        buf += b"}"
    buf += b"]}\n"


def _read_span(fd: int, offset: int, length: int) -> bytes:
    data = os.pread(fd, length, offset)
    if len(data) != length:
        raise OSError(f"detail spill: read {len(data)} of {length} bytes at {offset}")
    return data


def write_json(
    run: ScheduleRun,
    out: IO[bytes],
    spill: DetailSpill | None = None,
    *,
    zone_key: str | None = None,
) -> None:
    """The jsonl report as one JSON document: ``{"plugins": ..., "pods": [...]}`` (and
    ``profiles`` with several), then the cluster after the run as ``simulate`` reports a
    step's: every bound pod's node (``bound``), the queued pods not bound with why
    (``pending``), the nodes with their zone (``zone_key``, as the text draws them) and
    state, and the bound pods that have Succeeded or Failed (``finished``, when there are any:
    read, but not in the cluster the scheduler sees)."""
    lines = jsonl(run, spill)
    header = next(lines)
    out.write(header.rstrip(b"\n")[:-1] + b',"pods":[')
    for i, line in enumerate(lines):
        out.write((b"," if i else b"") + line.rstrip(b"\n"))
    infos = run.cluster.list()
    key = zone_key_for([info.node for info in infos], zone_key)
    bound = {
        f"{p.metadata.namespace}/{p.metadata.name}": info.name for info in infos for p in info.pods
    }
    pending = [{"pod": o.key, "message": o.message} for o in run.pending]
    # Here, not at the top: -o jsonl (a large run's usual report) needs none of the reports'
    # modules, and importing them is a part of every start.
    from topospread.analysis.reports import node_json

    nodes = [node_json(info.node, key) for info in infos]
    out.write(b'],"zoneKey":' + msgspec.json.encode(key))
    out.write(b',"bound":' + msgspec.json.encode(bound))
    out.write(b',"pending":' + msgspec.json.encode(pending))
    out.write(b',"nodes":' + msgspec.json.encode(nodes))
    finished = {p.key: p.spec.node_name for p in run.scenario.terminal_pods}
    if finished:  # as the text's line says of them: kept, not drawn
        out.write(b',"finished":' + msgspec.json.encode(finished))
    out.write(b',"interrupted":true}\n' if run.interrupted else b"}\n")
    out.flush()


def write_jsonl(
    run: ScheduleRun, out: IO[bytes], spill: DetailSpill | None = None, *, final: bool = False
) -> None:
    """Write ``jsonl(run, spill)`` to a binary stream, line by line.

    Where ``out`` is a file descriptor's stream (a file, a pipe), the spill's fragments (most
    of the report's bytes) go from the spill file to it through no Python object: sent by the
    kernel to a pipe, read into one reused buffer for a file (``_Direct``); only each line's
    few bytes around them are encoded here. To a regular file, a large report is written by
    two processes at once where the spill's writer process is there to help
    (``_write_in_two``). With ``final`` (the spill is read no more: the CLI's report), the
    spill's pages are given back as they are copied. Where the spill's writer wrote the first
    lines during the run (``DetailSpill.stream``), they are checked, and the header and the
    rest written.
    """
    fd = _descriptor(out) if spill is not None else None
    encoder = msgspec.json.Encoder()
    buf = bytearray(header_line(encoder, run.scheduler.frameworks))
    if fd is None:
        out.write(buf)
        for outcome in run.outcomes:
            buf.clear()
            _encode_outcome(encoder, outcome, spill, buf)
            out.write(buf)
        out.flush()
        return
    assert spill is not None
    outcomes: Sequence[PodOutcome] = run.outcomes
    stream = spill.streamed(fd)
    if stream is not None:  # the first lines were written during the run: the rest here
        # Checked while the writer may still be writing the last of them (and, where none is
        # left for it to copy, ending).
        spill.end_writer(keep=stream.handed < len(outcomes))
        outcomes = stream.checked(encoder, bytes(buf), outcomes)
        os.lseek(fd, spill.lines_end(), os.SEEK_SET)
        stream.write_header()
        buf.clear()
    if not _write_in_two(outcomes, fd, spill, encoder, buf, final=final):
        direct = _Direct(fd)
        for outcome in outcomes:
            _encode_outcome(encoder, outcome, spill, buf, direct)
            if len(buf) >= _DIRECT_BUFFER:
                direct.write(buf)
        direct.write(buf)
    if stream is not None:
        stream.done = True


def _write_in_two(
    outcomes: Sequence[PodOutcome],
    fd: int,
    spill: DetailSpill,
    encoder: msgspec.json.Encoder,
    buf: bytearray,
    *,
    final: bool,
) -> bool:
    """Write the report's lines after ``buf`` (the header) to ``fd``, a regular file, at their
    offsets (``positioned.py``): the first half by this process, the second by the spill's
    writer process; False, having written nothing, where that cannot be (another output, no
    writer). The file's size is set first, its position to the report's end after.

    NOTE: every line is encoded, its spill spans noted, before anything is written: the
    offsets are known. Only the bytes around the fragments are held (about 0.3 MB for the
    chart cluster's 2,000 lines).
    """
    start = writes_at_offsets(fd)
    found = spill.copier() if start is not None else None
    if start is None or found is None:
        return False
    copier, spill_fd = found
    try:
        plan = Plan()
        for outcome in outcomes:
            _encode_outcome(encoder, outcome, spill, buf, plan)
            if len(buf) >= _DIRECT_BUFFER:
                plan.cut(buf)
        plan.cut(buf)
        if final:
            spill.spend()
    except BaseException:
        copier.abandon()
        raise
    write_in_two(fd, start, plan.pieces, copier, spill_fd, free=final)
    return True


def _descriptor(out: IO[bytes]) -> int | None:
    """The file descriptor under ``out``, with everything ``out`` buffered flushed to it; None
    where there is none (an in-memory stream)."""
    try:
        fd = out.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return None
    out.flush()
    return fd


# How many bytes of lines without spilled fragments wait before they are written.
_DIRECT_BUFFER: Final = 1 << 16
# The first size of ``_Direct``'s buffer (a line's fragment: about 150 KB on 1,000 nodes).
_CHUNK_BYTES = 1 << 20


class _Direct:
    """Writes lines to a file descriptor, each spilled fragment with the bytes before it.

    To a pipe, a socket or a device, the fragment is copied by the kernel (``os.sendfile``:
    its pages go to the pipe as they are, no copy through this process). To a regular file,
    that costs more than it saves (a splice through a pipe per 64 KiB; measured on ext4: 0.12 s
    of system time for the chart cluster's 296 MB, against 0.09 s for ``pread`` and ``write``),
    so the bytes before it and the fragment are read into one reused buffer and written with
    one ``write``; also where sendfile refuses the output (a terminal, a file opened to
    append: EINVAL and the like)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.splice = hasattr(os, "sendfile") and not stat.S_ISREG(os.fstat(fd).st_mode)
        # Grown to the largest line part it held, never shrunk: no fresh memory per line.
        self.chunk = bytearray(_CHUNK_BYTES)

    def write(self, buf: bytearray) -> None:
        """Write all of ``buf``, then empty it."""
        _write_all(self.fd, buf)
        buf.clear()

    def copy(self, buf: bytearray, fd: int, offset: int, length: int) -> None:
        """Write ``buf`` (and empty it), then ``length`` bytes of ``fd`` from ``offset``."""
        end = offset + length
        if self.splice:
            self.write(buf)
            offset = self._sendfile(fd, offset, end)
        if offset < end:
            self._read_write(buf, fd, offset, end)

    def _sendfile(self, fd: int, offset: int, end: int) -> int:
        """Send ``fd``'s bytes from ``offset`` to ``end``; where the output cannot take them,
        stop sending and return how far it got."""
        while offset < end:
            try:
                sent = os.sendfile(self.fd, fd, offset, end - offset)
            except OSError as err:
                if err.errno not in _NO_SENDFILE:
                    raise
                self.splice = False  # nothing was sent by this call: written instead
                break
            if sent == 0:
                raise OSError(f"detail spill: {end - offset} bytes missing at {offset}")
            offset += sent
        return offset

    def _read_write(self, buf: bytearray, fd: int, offset: int, end: int) -> None:
        head = len(buf)
        size = head + end - offset
        if len(self.chunk) < size:
            self.chunk = bytearray(max(size, 2 * len(self.chunk)))
        with memoryview(self.chunk) as view:
            view[:head] = buf
            at = head
            while at < size:
                got = pread_into(fd, view[at:size], offset)
                if got <= 0:
                    raise OSError(f"detail spill: {size - at} bytes missing at {offset}")
                at += got
                offset += got
            _write_all(self.fd, view[:size])
        buf.clear()


def _write_all(fd: int, data: bytearray | memoryview) -> None:
    with memoryview(data) as view:
        at = 0
        while at < len(view):
            at += os.write(fd, view[at:])


# What sendfile answers where the output cannot take it (the caller writes instead).
_NO_SENDFILE: Final = frozenset(
    getattr(errno, name)
    for name in ("EINVAL", "ENOSYS", "EOPNOTSUPP", "ENOTSUP")
    if hasattr(errno, name)
)
