"""Cutting a large YAML text into standalone parts that the fast path decodes one by one or in
forked workers (see ``yaml_fast``)."""

from __future__ import annotations

import bisect
import re
from typing import Final

from topospread.api.goyaml import decode_utf8, parse_yaml
from topospread.errors import ManifestError

# NOTE: cutting is exact because a List's items and a stream's documents are decoded
# independently (anchors, which could tie them together, make the fast path decline) and the
# parts' objects are concatenated in file order. A cut is made only before a line that starts
# with "- " (a List's items, as kubectl writes them, at column 0) or "---": inside a block
# scalar such a line would end the scalar, and inside a quoted scalar the cut leaves the quote
# open, which rapidyaml rejects. Any part that declines or fails sends the whole file down the
# exact path, which also gives the precise message.
TOP_KEY: Final = re.compile(rb"(apiVersion|kind|items):[ \t]*(\S*)[ \t]*\r?$")
COLUMN_0: Final = re.compile(rb"\n(?:---|[^ \t\-#\r\n])")
_DASH: Final = ord("-")
_NOT_TOP_LEVEL: Final = (b"", b" ", b"\t", b"-", b"#", b"\r", b"\n")
_MAX_TOP_LEVEL_LINES: Final = 64


def _line_starts(raw: bytes, prefix: bytes, start: int = 0, end: int | None = None) -> list[int]:
    """Offsets of the lines in raw[start:end] that begin with ``prefix`` (start counts as one)."""
    end = len(raw) if end is None else end
    out = [start] if raw.startswith(prefix, start) else []
    # NOTE: a regular expression, not ``raw.find``: bytes' own search for a needle that starts
    # with a newline, the text's most common byte, took almost twice as long.
    needle = re.compile(re.escape(b"\n" + prefix))
    out += [m.start() + 1 for m in needle.finditer(raw, start, end)]
    return out


class Parts:
    """A text cut into standalone YAML texts, each copied out (after its head, for a List's
    items) when asked for.

    NOTE: copied by whichever process decodes the part, while the others decode theirs:
    the 52 MiB of the chart cluster's parts, copied up front, took 25 ms before any process
    could start (and were all held until the end).
    """

    def __init__(self, raw: bytes, head: bytes, cuts: list[int], start: int, end: int) -> None:
        self._text = memoryview(raw)
        self._head = head
        self._bounds = list(zip([start, *cuts], [*cuts, end], strict=True))
        # What no part holds: a List's keys and anything else around its items.
        self.outside = raw[:start] + raw[end:]

    def __len__(self) -> int:
        return len(self._bounds)

    def __getitem__(self, index: int) -> bytes:
        start, end = self._bounds[index]
        return b"".join((self._head, self._text[start:end]))  # one copy

    def sizes(self) -> list[int]:
        return [len(self._head) + end - start for start, end in self._bounds]


def reads_exactly(text: bytes, source: str) -> bool:
    """Whether the exact path reads ``text`` (what no part holds) without an error.

    NOTE: a List's text around its items (its kind, apiVersion, metadata, whatever else) is
    read by no part: YAML there that go-yaml rejects went unseen, and the fast path read
    the items of a file the exact path refuses. It is a few lines: read exactly, here.
    """
    if not text:
        return True
    try:
        for _ in parse_yaml(decode_utf8(text, source), source):
            pass
    except (ManifestError, RecursionError):
        return False
    return True


def split_yaml(raw: bytes, parts: int) -> Parts | None:
    """The text cut into about ``parts`` standalone YAML texts whose objects, in order, are its
    objects; None when it is neither a document stream nor a List with items at column 0."""
    if parts < 2:
        return None
    found = column_0_lines(raw)
    docs = found[0] if found is not None else _line_starts(raw, b"---")
    docs = [i for i in docs if raw[i + 3 : i + 4] in (b"", b" ", b"\t", b"\n", b"\r")]
    if len(docs) >= 2:
        return Parts(raw, b"", _cuts(docs, len(raw), parts), 0, len(raw))
    if docs or found is None:
        return None
    # A kubectl-style List: top-level keys at column 0, items as "- " entries at column 0.
    lines = found[1]
    top: dict[bytes, tuple[int, bytes]] = {}
    for pos in lines:
        line_end = raw.find(b"\n", pos)
        m = TOP_KEY.match(raw, pos, len(raw) if line_end < 0 else line_end)
        if m is not None:
            top[m.group(1)] = (pos, m.group(2))
    if b"items" not in top or top[b"items"][1] or b"kind" not in top:
        return None
    start = raw.find(b"\n", top[b"items"][0]) + 1
    # Any other top-level key (kubectl's List metadata) ends the items too.
    end = min([pos for pos in lines if pos > start], default=len(raw))
    # Two items at least, the first at ``start``.
    if not raw.startswith(b"- ", start) or raw.find(b"\n- ", start, end) < 0:
        return None
    head = b"apiVersion: " + top.get(b"apiVersion", (0, b"v1"))[1] + b"\n"
    head += b"kind: " + top[b"kind"][1] + b"\nitems:\n"
    return Parts(raw, head, _item_cuts(raw, start, end, parts), start, end)


def column_0_lines(raw: bytes) -> tuple[list[int], list[int]] | None:
    """The starts of the lines that begin with ``---`` and of those at column 0 that hold
    a key (neither white space, ``-``, ``#`` nor empty); None past _MAX_TOP_LEVEL_LINES of
    the latter (a text with many is not a List as kubectl writes it).

    NOTE: one search for both, not one each: a List's text (a handful of such lines) is
    searched once, and one search for every line at column 0 instead of one per key.
    """
    dashes = [0] if raw.startswith(b"---") else []
    lines = [0] if raw[:1] not in _NOT_TOP_LEVEL else []
    for m in COLUMN_0.finditer(raw):
        at = m.start() + 1
        if raw[at] == _DASH:
            dashes.append(at)
            continue
        lines.append(at)
        if len(lines) > _MAX_TOP_LEVEL_LINES:
            return None
    return dashes, lines


def targets(start: int, end: int, parts: int) -> list[int]:
    """Where to cut [start, end) into ``parts`` runs of equal length, except that, from four
    on, the two runs in the middle are each cut in two (``parts + 2`` runs then).

    NOTE: this process claims parts from the front and the workers from the back, each when
    it is free (``yaml_workers``): they meet near the middle, and whichever finishes first
    waits for the other's last part (half a part on average, 35 ms on the chart cluster's
    4 MiB parts). Halved parts there halve that wait, for two parts more.
    """
    if parts < 4:
        weights = [1] * parts
    else:
        middle = parts // 2
        weights = [2] * (middle - 1) + [1] * 4 + [2] * (parts - middle - 1)
    total, reached, out = sum(weights), 0, []
    for weight in weights[:-1]:
        reached += weight
        out.append(start + (end - start) * reached // total)
    return out


def _cuts(starts: list[int], end: int, parts: int) -> list[int]:
    """Boundaries (from ``starts``) splitting [starts[0], end) into runs (``targets``)."""
    cuts: list[int] = []
    for target in targets(starts[0], end, parts):
        i = bisect.bisect_left(starts, target)
        if 0 < i < len(starts) and (not cuts or starts[i] > cuts[-1]):
            cuts.append(starts[i])
    return cuts


def _item_cuts(raw: bytes, start: int, end: int, parts: int) -> list[int]:
    """``_cuts`` over the starts of the lines in raw[start:end] that begin with ``- ``, found
    near each target only: listing every item's start cost a search per item."""
    cuts: list[int] = []
    for target in targets(start, end, parts):
        if target <= start:
            continue  # the first item: no cut before it
        i = raw.find(b"\n- ", target - 1, end)
        if i >= 0 and (not cuts or i + 1 > cuts[-1]):
            cuts.append(i + 1)
    return cuts
