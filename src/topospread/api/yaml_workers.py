"""The parts of a cut YAML text read by this process and forked workers together (the fast
path's parallel half, see ``yaml_fast``): parts claimed when a process is free; a worker does
its half of a part (``PartReader.prepare``: the fast path's JSON of it, checked) and sends it
back through memory shared with it; this process does the other half (``finish``: the
objects), and puts the parts in file order. While admission hints are collected
(``admission_hints``), this process finds those of every part's pods.
"""

from __future__ import annotations

import mmap
import multiprocessing
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Generic, Protocol, TypeVar

from topospread.api.admission_hints import note_decoded
from topospread.api.decode import Object

S = TypeVar("S")


class Texts(Protocol):
    """The parts' texts, each made when asked for."""

    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> bytes: ...


@dataclass(frozen=True, slots=True)
class PartReader(Generic[S]):
    """How a part is read, by a process with its own scratch (``new_scratch()``): whole, in
    this process (``decode``: its objects); or half in a worker (``prepare``: bytes to send
    back) and half here (``finish``: the objects of those bytes). Each gives None when the
    fast path declines the part.

    NOTE: the worker sends the JSON it checked, not the objects it could make of it (as
    msgpack): on the chart cluster (bench/chart.py), per part of about 1,000 pods, the objects
    cost the worker 76 ms and this process 10 ms to take back; the checked JSON costs the
    worker 50 ms and this process 21 ms to decode (hints included), against 70 ms for a part
    this process reads whole. The worker, no longer the slower, claims more of the parts,
    and the two processes, balanced, finish sooner.
    """

    decode: Callable[[bytes, S], list[Object] | None]
    prepare: Callable[[bytes, S], bytes | None]
    finish: Callable[[bytes], list[Object] | None]
    new_scratch: Callable[[], S]


class _Claims:
    """Which parts are left to decode: this process takes them from the front, the workers
    from the back, each part once, when it is free to start one; a part that declines ends
    the claims (the whole text then goes down the exact path).

    NOTE: claimed when a process is free, not handed out up front: a part queued for a busy
    worker left this process idle at the end, and parts dealt out in equal shares left one
    process idle whenever the other was slowed (the machine is shared).
    """

    def __init__(self, context: Any, parts: int) -> None:
        self._lock = context.Lock()
        self._state = context.RawArray("q", [0, parts, 0])  # front, back (exclusive), declined

    def take(self, *, front: bool) -> int | None:
        """The index of a part to decode, or None when none is left or one declined."""
        with self._lock:
            first, end, declined = self._state
            if declined or first >= end:
                return None
            if front:
                self._state[0] = first + 1
                return int(first)
            self._state[1] = end - 1
            return int(end - 1)

    def decline(self) -> None:
        with self._lock:
            self._state[2] = 1


class _Returns:
    """Room for each part's payload in anonymous memory shared with the workers (mapped
    before they fork; only the pages written are ever faulted in). A payload that does not
    fit goes through the pipe.

    NOTE: a worker's payload sent back through the pool's pipe (64 KiB at a time) waited
    for this process's result thread, which waits for the GIL, which this process holds
    through each long call into rapidyaml, re or msgspec while it decodes its own parts:
    the worker sat idle 50 ms a part. Written here, only the part's length goes through the
    pipe.
    """

    def __init__(self, sizes: list[int]) -> None:
        # Each part's room: the size of its YAML, and some (the JSON of kubectl's YAML is
        # shorter: 90% of it on the chart cluster).
        self._offsets = list(accumulate((size + 65536 for size in sizes), initial=0))
        self._memory = mmap.mmap(-1, self._offsets[-1])

    def put(self, index: int, payload: bytes) -> bytes | int:
        """Write a part's payload into its room: its length, or the payload itself when it
        does not fit (it then goes through the pipe)."""
        start = self._offsets[index]
        if len(payload) > self._offsets[index + 1] - start:
            return payload
        self._memory[start : start + len(payload)] = payload
        return len(payload)

    def get(self, index: int, payload: bytes | int) -> memoryview | bytes:
        if isinstance(payload, bytes):
            return payload
        start = self._offsets[index]
        return memoryview(self._memory)[start : start + payload]

    def close(self) -> None:
        with suppress(BufferError):  # a view still held: the map goes when it goes
            self._memory.close()


class _Work(Generic[S]):
    """What the forked workers inherit (never pickled): the parts, their claims, the room
    for what they send back, how a part is read and the worker's own scratch."""

    def __init__(self, chunks: Texts, sizes: list[int], reader: PartReader[S]) -> None:
        self.chunks = chunks
        self.reader = reader
        self.scratch: S | None = None
        self.claims = _Claims(multiprocessing.get_context("fork"), len(chunks))
        self.returns = _Returns(sizes)


_WORK: _Work[Any] | None = None
# A worker's answer: None when no part was left; else the part's index and, unless it
# declined, its payload (its length when in the shared memory).
_Answer = tuple[int, bytes | int | None] | None


def _worker() -> _Answer:
    work = _WORK
    assert work is not None
    index = work.claims.take(front=False)
    if index is None:
        return None
    if work.scratch is None:
        work.scratch = work.reader.new_scratch()
    try:
        payload = work.reader.prepare(work.chunks[index], work.scratch)
    except BaseException:
        work.claims.decline()  # raised in this process by ``decode_parts``: no part is left
        raise
    if payload is None:
        work.claims.decline()
        return index, None
    return index, work.returns.put(index, payload)


def decode_parts(
    chunks: Texts,
    sizes: list[int],
    workers: int,
    reader: PartReader[S],
    meanwhile: Callable[[], object] | None = None,
) -> list[Object] | None:
    """The objects of the parts in order (``sizes``: their texts' lengths), each read by this
    process, or by one of ``workers`` forked workers and this process (``reader``); None when
    a part declines, or a worker cannot run. ``meanwhile`` is called once the workers are
    forked, before this process claims its first part. What it raises, or what a part's
    text or the reader raises (in any process) other than the errors of a worker that cannot
    run, is raised here, once the workers have stopped.

    NOTE: this process decodes parts too, instead of waiting for the workers: its parts are
    read in one go (with two cores, one worker and this process read the chart
    cluster in 1.11 CPU s and 1.14 s, two workers in 1.28 CPU s and 1.28 s). While it runs
    ``meanwhile`` the workers claim the parts it would have taken: the claims stay balanced.

    A ``concurrent.futures`` pool, not ``multiprocessing.Pool``: leaving a ``Pool`` early (one
    part declines) calls ``terminate()``, which can hang for ever when its task thread is
    blocked on the queue lock. Here the parts not yet started are cancelled and the running
    ones finish before the workers exit.
    """
    global _WORK
    pool: ProcessPoolExecutor | None = None
    work: _Work[S] | None = None
    try:
        try:
            _WORK = work = _Work(chunks, sizes, reader)
            pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"))
            # One task per part at most; each claims a part when it starts (or finds none left).
            futures = deque(pool.submit(_worker) for _ in range(len(chunks)))
        except (OSError, ValueError, BrokenProcessPool):
            return None  # no fork here: the exact path still works
        if meanwhile is not None:
            meanwhile()
        return _decode_with(work, futures)
    finally:
        if work is not None:
            work.claims.decline()  # the workers still to start a task find nothing to claim
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if work is not None:
            work.returns.close()
        _WORK = None


def _decode_with(work: _Work[S], futures: deque[Future[_Answer]]) -> list[Object] | None:
    """The objects of ``work``'s parts in order: this process claims parts from the front
    and reads them, and finishes the workers' answers (``futures``) as they come."""
    parts: list[list[Object] | None] = [None] * len(work.chunks)
    reader = work.reader

    def taken_back(answer: _Answer) -> bool:
        if answer is None:
            return True
        index, payload = answer
        if payload is None:
            return False
        objs = reader.finish(bytes(work.returns.get(index, payload)))
        if objs is None:
            work.claims.decline()
            return False
        note_decoded(objs)
        parts[index] = objs
        return True

    try:
        scratch: S | None = reader.new_scratch()
        while (index := work.claims.take(front=True)) is not None:
            assert scratch is not None
            objs = reader.decode(work.chunks[index], scratch)
            if objs is None:
                work.claims.decline()
                return None
            note_decoded(objs)
            parts[index] = objs
            while futures and futures[0].done():
                if not taken_back(futures.popleft().result()):
                    return None
        scratch = None  # its memory is not needed while the last answers come
        while futures:  # each answer is let go once read
            if not taken_back(futures.popleft().result()):
                return None
    except (OSError, ValueError, BrokenProcessPool):
        return None  # a worker died: the exact path still works
    out: list[Object] = []
    for objs in parts:
        if objs is None:
            return None  # not expected: every part was claimed, and each claim answered
        out += objs
    return out or None
