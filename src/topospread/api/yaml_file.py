"""A large List file (``kubectl get ... -o yaml``) cut in parts without reading it first: the
fast path's parts (``yaml_fast``) read from the file by the process that decodes each, this
one or a forked worker.

NOTE: reading the chart cluster's 52 MiB into memory (0.03 s, its pages faulted in) and
searching all of it for lines at column 0 (0.02 s) took this process 0.05 s before a worker
could start. Here the List's keys are found in the file's head and tail; the workers start
at once, and each part, when read, is searched for lines at column 0 itself. The cut relies on
there being none between the first item and the tail, which the whole text's cut
(``yaml_split.split_yaml``) would have found: a part that holds one (or that the file no
longer holds whole) raises ``NotCut``, and the whole text is read and cut as before. So every
part is the very text that cut would have made, with the same head, and read as it is.
``yaml_fast``'s settings and helpers are used through its module, as its own cut uses them.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Final

from topospread.api import yaml_fast, yaml_split
from topospread.api.decode import Object, looks_like_json
from topospread.api.strict import FieldValidation, current_mode
from topospread.api.yaml_workers import decode_parts

# How much of the file's head and of its tail is read for the List's keys, and around each
# cut's target for an item's start.
WINDOW: Final = 1 << 16


class NotCut(Exception):
    """A part read from the file holds a line at column 0 other than an item's, or the file
    changed while it was read: the file is not cut this way."""


class FileParts:
    """The parts of a List's items in a file: each part's text, read when asked for, is the
    List's head and the items between two cuts (``yaml_split.Parts``'s texts, read from the
    file instead of a copy of it).

    NOTE: each process reads its parts into one buffer of its own, the head already in it,
    and copies each out as bytes: a part read as bytes and joined to the head took two new
    4 MiB blocks a part, every page of both faulted in (5 ms a part); the reused buffer, and
    the one block the allocator hands out again for each part's bytes, fault in only once.
    """

    def __init__(self, fd: int, head: bytes, bounds: list[tuple[int, int]], outside: bytes):
        self._fd = fd
        self._head = head
        self._bounds = bounds
        self._buffer: bytearray | None = None  # made by each process when it reads a part
        # What no part holds: the List's keys before its items and its tail after them.
        self.outside = outside

    def __len__(self) -> int:
        return len(self._bounds)

    def __getitem__(self, index: int) -> bytes:
        start, end = self._bounds[index]
        at = len(self._head)
        if self._buffer is None:
            self._buffer = bytearray(at + max(e - s for s, e in self._bounds))
            self._buffer[:at] = self._head
        view = memoryview(self._buffer)
        if os.preadv(self._fd, [view[at : at + end - start]], start) != end - start:
            raise NotCut(f"the file is shorter than {end} bytes now")
        text = bytes(view[: at + end - start])
        found = yaml_split.COLUMN_0.search(text, at)
        if found is not None:
            raise NotCut(f"a line at column 0 at byte {start + found.start() - at + 1}")
        return text

    def sizes(self) -> list[int]:
        return [len(self._head) + end - start for start, end in self._bounds]


def cut_file(fd: int, source: str) -> FileParts | None:
    """A large file's parts as ``yaml_fast`` cuts a List with items at column 0, decoded by
    several processes, found from its head and tail; None when the file is not such a List
    as far as they tell (it is then read whole, and cut or not as before)."""
    info = os.fstat(fd)
    size = info.st_size
    parts = size // yaml_fast._CHUNK_BYTES
    workers = min((os.cpu_count() or 1) - 1, yaml_fast._MAX_WORKERS - 1, parts - 1)
    if not stat.S_ISREG(info.st_mode) or not yaml_fast.available() or parts < 2 or workers < 1:
        return None
    if not hasattr(os, "preadv") or not hasattr(os, "fork"):
        return None  # no positioned reads, or no worker to fork: read whole
    if size < yaml_fast._FAST_MIN_BYTES and current_mode() is not FieldValidation.IGNORE:
        return None
    try:
        head = os.pread(fd, min(WINDOW, size), 0)
        start = head.find(b"\n- ") + 1
        tail_at = size - WINDOW
        if looks_like_json(head) or start <= 0 or tail_at <= len(head):
            return None
        tail = os.pread(fd, WINDOW, tail_at)
        line = tail.find(b"\n") + 1  # the tail from its first whole line
        if line <= 0 or len(tail) != WINDOW:
            return None
        tail, tail_at = tail[line:], tail_at + line
        keys = _list_keys(head[:start], tail, tail_at)
        if keys is None:
            return None
        list_head, end = keys
        bounds = _bounds(fd, start, end, parts)
    except OSError:
        return None  # read whole, which says what is wrong
    if bounds is None:
        return None
    outside = head[:start] + tail[end - tail_at :]
    return FileParts(fd, list_head, bounds, outside)


def _list_keys(before: bytes, tail: bytes, tail_at: int) -> tuple[bytes, int] | None:
    """The List's head for its parts and where its items end, from the text before its first
    item and the tail (at ``tail_at``), as ``yaml_split.split_yaml`` finds them in the whole
    text when nothing between those two is at column 0 but items; None when they do not tell
    a List of items at column 0, its first item right after ``items:``."""
    # One text of both: the tail starts a line, as the text before the first item ends one.
    probe = before + tail
    found = yaml_split.column_0_lines(probe)
    if found is None or found[0]:
        return None  # many keys, or documents: not a List as kubectl writes it
    top: dict[bytes, tuple[int, bytes]] = {}
    for pos in found[1]:
        line_end = probe.find(b"\n", pos)
        m = yaml_split.TOP_KEY.match(probe, pos, len(probe) if line_end < 0 else line_end)
        if m is not None:
            top[m.group(1)] = (pos, m.group(2))
    items = top.get(b"items")
    if items is None or items[1] or b"kind" not in top:
        return None
    if probe.find(b"\n", items[0]) + 1 != len(before):
        return None  # the items are not right after ``items:``, or it is in the tail
    after = [pos for pos in found[1] if pos >= len(before)]
    end = min(after, default=len(probe)) - len(before) + tail_at
    head = b"apiVersion: " + top.get(b"apiVersion", (0, b"v1"))[1] + b"\n"
    head += b"kind: " + top[b"kind"][1] + b"\nitems:\n"
    return head, end


def _bounds(fd: int, start: int, end: int, parts: int) -> list[tuple[int, int]] | None:
    """The parts' spans: ``yaml_split._item_cuts``'s cuts, each found in the window read at its
    target; None when a window holds no item's start (items that large are cut as before)."""
    cuts: list[int] = []
    for target in yaml_split.targets(start, end, parts):
        if target <= start:
            continue
        window = os.pread(fd, min(WINDOW, end - (target - 1)), target - 1)
        at = window.find(b"\n- ")
        if at < 0:
            return None
        cut = target - 1 + at + 1
        if not cuts or cut > cuts[-1]:
            cuts.append(cut)
    if not cuts:
        return None
    return list(zip([start, *cuts], [*cuts, end], strict=True))


def decode_file(
    parts: FileParts, source: str, meanwhile: Callable[[], object] | None
) -> list[Object] | None:
    """The objects of a cut file's parts in order, decoded as ``yaml_fast`` decodes a cut
    text's; None when the fast path declines (the exact path then reads the file); raises
    ``NotCut`` when a part shows the file is not cut this way."""
    if not yaml_split.reads_exactly(parts.outside, source):
        raise NotCut("the text around the items")  # perhaps not its outside: cut it whole
    workers = min((os.cpu_count() or 1) - 1, yaml_fast._MAX_WORKERS - 1, len(parts) - 1)
    return decode_parts(parts, parts.sizes(), workers, yaml_fast.PART_READER, meanwhile)
