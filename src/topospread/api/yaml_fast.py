"""The YAML fast path: rapidyaml parses, emits JSON, and the JSON path decodes it as a JSON
manifest; large files are cut at item or document boundaries and decoded by forked workers.
Exact where it runs (see the NOTE below); anything it cannot decide goes down the exact path
(``goyaml``), which also gives the precise message.
"""

from __future__ import annotations

import bisect
import mmap
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

try:
    import ryml
except ImportError:  # pragma: no cover - rapidyaml is a dependency; the exact path suffices
    ryml = None

import msgspec

from topospread.api.decode import SMALL_TEXT_BYTES, Object, check_json, load_json
from topospread.api.goyaml import decode_utf8, parse_yaml
from topospread.api.strict import FieldValidation, current_mode, field_validation
from topospread.api.yaml_workers import PartReader, decode_parts
from topospread.errors import ManifestError

#
# NOTE: this is exact only where rapidyaml (YAML 1.2) and go-yaml v2 (YAML 1.1) read the text
# alike. They differ on plain scalars such as yes/no/on/off/y/n, ~, Null, 0755, 0x1F, 1_000,
# .inf, +1 (as values or as keys) and on anchors, aliases, tags, merge keys and directives. The
# fast path declines when the YAML holds any of those constructs, a plain risky value, or a
# non-empty flow collection (kubectl never writes one; hand-written files take the exact path),
# and when a key in the JSON it produced reads as a risky scalar (quoted or not: declining only
# costs speed). rapidyaml turns other divergent scalars into invalid JSON, which msgspec
# rejects. Any failure falls back to the exact path, which also gives the precise message.

# The words go-yaml reads as a bool or a null and rapidyaml as a string, grouped by their first
# character (see the NOTE below).
_RISKY_WORD: Final = (
    rb"y(?:es)?|Y(?:es|ES)?|no?|N(?:o|O|ull|ULL)?|o(?:n|ff)|O(?:n|N|ff|FF)|T(?:rue|RUE)"
    rb"|F(?:alse|ALSE)|~"
)
# Leading zero: octal, decimal (0789 is a float to go-yaml), 041e8, 0x1F, 0o17, 0b101; not a
# hex string such as a node's machineID (041e824e…, 0bde35c1…): both read a string.
_LEADING_ZERO: Final = rb"0(?:[0-9_]+(?:[eE][-+]?[0-9]+)?|[xX][0-9a-fA-F_]*|[oO][0-7_]*|[bB][01_]*)"
_RISKY_SCALAR: Final = (
    rb"(?:" + _RISKY_WORD + rb"|\.(?:inf|Inf|INF|nan|NaN|NAN|[0-9][0-9a-zA-Z_.+-]*+)"
    rb"|" + _LEADING_ZERO + rb"|[-+](?:\.(?:inf|Inf|INF|nan|NaN|NAN)|" + _LEADING_ZERO + rb")"
    rb"|\+[0-9.][0-9a-zA-Z_.+-]*+|[0-9]++(?:_[0-9a-zA-Z_.+-]*+|\.))"
)
# A plain risky scalar as a block mapping value or block sequence item.
# NOTE: each search below is split in patterns that start with a literal, which re scans for
# quickly; one pattern starting with an alternation or a class is tried at every position
# (a quarter of the fast path's time on kubectl output).
# NOTE: each pattern looks ahead for the characters a risky scalar or key can start with
# before it tries the alternation: the same matches, and most values and keys fail at once
# (the alternation, tried branch by branch at each of them, was most of these searches' time).
# NOTE: the alternatives start with a literal or a class wherever they can (re skips those
# whose first character differs without trying them), and the runs that nothing after them
# can start with (the spaces before a scalar, a scalar's digits before its ``_`` or ``.``, its
# tail before the spaces and end of line) are possessive, so re keeps no place to go back to
# at each of the hundred thousand values of a part: the same matches (tests/test_yaml_fast_
# shortcuts.py checks them against the plain patterns), the value search 40% faster.
_RISKY_FIRST: Final = rb"(?=[yYnNoOTF~<.+\-0-9])"
_RISKY_YAML_VALUE: Final = tuple(
    re.compile(lead + _RISKY_FIRST + _RISKY_SCALAR + rb"[ \t]*+(?:#|\r?$)", re.MULTILINE)
    for lead in (rb":  *+", rb"-  *+")
)
_FLOW_WITH_CONTENT: Final = tuple(
    re.compile(lead + rb"[ \t]*+[^\]}\s]") for lead in (rb"\[", rb"\{")
)
# What the fast path reads only inside scalars' text, each with the byte its matches start with.
_ONLY_IN_SCALARS: Final = (
    *zip((b"[", b"{"), _FLOW_WITH_CONTENT, strict=True),
    *zip((b":", b"-"), _RISKY_YAML_VALUE, strict=True),
)
# Anchors, aliases and tags (``&a``, ``*a``, ``!t`` at a line's start or after white space, a
# flow opener or a comma), merge keys (``<<:``) and complex keys (``?`` alone on a line's
# indentation). NOTE: each is found by a pattern that starts with its literal and the context
# before it is checked at each hit: one pattern starting with ``^`` or a class was tried at
# every position, 1.6 CPU s on a 52 MiB dump holding a ``*`` or a ``?`` (a URL's query, a glob).
_PROPERTY_LEADS: Final = (b"&", b"*", b"!")
_NODE_PROPERTIES: Final = tuple(re.compile(re.escape(c) + rb"\S") for c in _PROPERTY_LEADS)
_MERGE_KEY: Final = re.compile(rb"<<[ \t]*:")
# A directive (``%YAML``, ``%TAG``) at the start of a line. NOTE: a regular expression, not
# ``b"\n%" in raw``: bytes' own search for a needle that starts with the text's most common
# byte took three times as long (0.04 CPU s over the chart cluster's 52 MiB, against 0.014).
_DIRECTIVE: Final = re.compile(rb"\n%")
_COMPLEX_KEY: Final = re.compile(rb"\?[ \t\r\n]")
_BEFORE_PROPERTY: Final = frozenset(b" \t\n\r\f\v[{,")
_NEWLINE: Final = ord("\n")


# Hops from one ``lead`` to the next between checks of how far they went, and how far at the
# least (see ``_finditer_from``).
_HOPS: Final = 64
_HOPS_SPAN: Final = 1 << 16


def _finditer_from(
    lead: bytes, pattern: re.Pattern[bytes], raw: bytes
) -> Iterator[re.Match[bytes]]:
    """``pattern.finditer(raw)`` for a pattern whose every match starts with the byte ``lead``
    and is not empty.

    NOTE: the search starts at the first ``lead``, found by ``bytes.find`` (memchr): re scans
    for a pattern's first literal a byte at a time, 1.1 ms per 4 MiB part, while memchr tells
    in 0.05 ms that an ``&``, a ``*`` or a ``[`` is nowhere (kubectl output has none), which
    took a tenth of the fast path's time. From there it goes from one ``lead`` to the next
    with memchr too, trying the pattern at each (where finditer's search would find its next
    match: every match starts with ``lead``; after a match, from its end, as finditer goes
    on), while the ``lead`` bytes are sparse: a ``{`` every few KiB (``{}`` in kubectl output,
    a thousand a part) costs a hop of a few hundred ns, and re's scan of the bytes between
    them more. Where they are dense (every ``:``), re scans the rest itself.
    """
    at = raw.find(lead)
    mark, hops = at, 0
    while at >= 0:
        if hops == _HOPS:
            if at - mark < _HOPS_SPAN:
                yield from pattern.finditer(raw, at)
                return
            mark, hops = at, 0
        hops += 1
        found = pattern.match(raw, at)
        if found is None:
            at = raw.find(lead, at + 1)
        else:
            yield found
            at = raw.find(lead, found.end())


def _has_directive(raw: bytes) -> bool:
    """Whether a line starts with ``%`` (a directive, ``%YAML`` or ``%TAG``); each ``%`` found
    by memchr, as ``_finditer_from`` finds its bytes, while they are few."""
    at = raw.find(b"%")
    for _ in range(_HOPS):
        if at <= 0 or raw[at - 1] == _NEWLINE:
            return at >= 0
        at = raw.find(b"%", at + 1)
    return at >= 0 and _DIRECTIVE.search(raw, at - 1) is not None


def _has_yaml_structure(raw: bytes) -> bool:
    """Whether the text holds an anchor, alias, tag, merge key or complex key (which the fast
    path leaves to the exact one)."""
    for lead, pattern in zip(_PROPERTY_LEADS, _NODE_PROPERTIES, strict=True):
        for m in _finditer_from(lead, pattern, raw):
            at = m.start()
            if at == 0 or raw[at - 1] in _BEFORE_PROPERTY:
                return True
    if next(_finditer_from(b"<", _MERGE_KEY, raw), None) is not None:
        return True
    for m in _finditer_from(b"?", _COMPLEX_KEY, raw):
        at = m.start()
        if not raw[raw.rfind(b"\n", 0, at) + 1 : at].strip(b" \t"):
            return True
    return False


# A JSON key that go-yaml would have read as a bool, a null or a number other than a plain
# decimal integer (which it would have printed differently).
# NOTE: possessive (``*+``, ``++``) where giving characters back can never let the rest match
# (a key's text holds no quote, and a run of digits is followed by a non-digit): the same
# matches, without backtracking through every timestamp and address (a fifth of this search).
_RISKY_JSON_KEY_BODY: Final = (
    rb"(?:" + _RISKY_WORD + rb'|<<|[-+.][^"]*+|0[0-9xXoObB_][^"]*+|[0-9]++[^0-9"][^"]*+)'
)
_RISKY_JSON_KEY: Final = re.compile(rb'"' + _RISKY_FIRST + _RISKY_JSON_KEY_BODY + rb'":')


# A block scalar's header (``key: |``, ``- >-``) at the end of its line. NOTE: the text of a
# block scalar is no YAML: a flow collection or a risky scalar found in it (the JSON of
# kubectl's last-applied-configuration annotation, a config file in an annotation) reads the
# same to both parsers. Declining for it sent a whole dump down the exact path, five times
# slower, for one such annotation.
_BLOCK_SCALAR_HEADERS: Final = tuple(
    re.compile(lead + rb"[|>][-+1-9]*[ \t]*\r?$", re.MULTILINE) for lead in (rb": +", rb"- +")
)
_SCALAR_ENDS: dict[int, re.Pattern[bytes]] = {}


# A line whose value is a quoted scalar closed on it: ``key: '{"a":1}'`` (kubectl quotes a
# string that starts with a flow indicator, such as the JSON in the CSI driver's node
# annotation); the scalar is group 1.
_SINGLE_QUOTED: Final = rb"'(?:[^'\r\n]|'')*'"
_DOUBLE_QUOTED: Final = rb'"(?:[^"\\\r\n]|\\.)*"'
_PLAIN_KEY: Final = rb"""[^\s'"#\-?:,\[\]{}&*!|>%@`][^'"#\r\n]*?"""
_QUOTED_VALUE_LINE: Final = re.compile(
    rb"[ \t]*(?:-[ \t]+)*(?:(?:"
    + b"|".join((_PLAIN_KEY, _SINGLE_QUOTED, _DOUBLE_QUOTED))
    + rb")[ \t]*:[ \t]+)?("
    + _SINGLE_QUOTED
    + b"|"
    + _DOUBLE_QUOTED
    + rb")[ \t]*(?:#[^\r\n]*)?\r?$"
)


def _only_in_scalar_text(raw: bytes, patterns: tuple[tuple[bytes, re.Pattern[bytes]], ...]) -> bool:
    """Whether every match of ``patterns`` (each with the byte its matches start with) lies in
    the text of a block scalar or of a quoted scalar closed on its line, where it is no YAML."""
    regions: list[tuple[int, int]] | None = None
    for lead, pattern in patterns:
        for m in _finditer_from(lead, pattern, raw):
            at = m.start()
            if regions is None:
                regions = _block_scalar_regions(raw)
            i = bisect.bisect_right(regions, (at, len(raw))) - 1
            if i >= 0 and at < regions[i][1]:
                continue
            line_end = raw.find(b"\n", at)
            line = _QUOTED_VALUE_LINE.match(
                raw, raw.rfind(b"\n", 0, at) + 1, len(raw) if line_end < 0 else line_end
            )
            if line is None or not line.start(1) < at < line.end(1) - 1:
                return False
    return True


def _block_scalar_regions(raw: bytes) -> list[tuple[int, int]]:
    """The spans of the block scalars' text, sorted and disjoint (a scalar's span runs from
    the line after its header to the first line, not blank, indented no more than the node it
    belongs to). A header that may sit in a comment or whose node's column is unclear opens no
    span: the matches in its text then decline, which only costs speed."""
    spans: list[tuple[int, int]] = []
    for lead, pattern in zip((b":", b"-"), _BLOCK_SCALAR_HEADERS, strict=True):
        for m in pattern.finditer(raw):
            line_start = raw.rfind(b"\n", 0, m.start()) + 1
            before = raw[line_start : m.start()]
            if lead == b"-":
                # ``- |``: an item of a sequence, whose column is its dash's.
                if before.replace(b"-", b" ").strip(b" "):
                    continue
                column = m.start() - line_start
            else:
                # ``key: |``: a mapping's value; the mapping's column is its key's, after any
                # dashes of the sequences the mapping is an item of.
                if b"#" in before or b"'" in before or b'"' in before:
                    continue
                key = before.lstrip(b" ")
                while key.startswith(b"- "):
                    key = key[1:].lstrip(b" ")
                column = len(before) - len(key)
            start = m.end() + 1
            ends = _SCALAR_ENDS.get(column)
            if ends is None:
                ends = _SCALAR_ENDS[column] = re.compile(rb"\n {0,%d}[^ \r\n]" % column)
            found = ends.search(raw, m.end())
            spans.append((start, len(raw) if found is None else found.start() + 1))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def available() -> bool:
    """Whether the fast path can run (rapidyaml is installed)."""
    return ryml is not None


def fast_yaml(
    text: str | bytes, source: str, *, meanwhile: Callable[[], object] | None = None
) -> list[Object] | None:
    """Objects through the fast path, or None when it declines or cannot decide.

    A large List or document stream is cut at item or document boundaries into parts of about
    ``_CHUNK_BYTES``, decoded one by one or, with several cores, by this process and forked
    workers together: rapidyaml's tree and JSON for a whole 350 MiB file cost gigabytes, and
    faulting that memory in cost more time than parsing. ``meanwhile`` is called once the
    workers are forked, if they are (see ``decode_parts``).
    """
    if ryml is None:
        return None
    raw = text if isinstance(text, bytes) else text.encode()
    if len(raw) < _FAST_MIN_BYTES:
        if current_mode() is not FieldValidation.IGNORE:
            return None
        if not _printable(raw):
            return None  # the exact path names it
    if len(raw) < 2 * _CHUNK_BYTES:
        return _fast_yaml_one(raw, source, _Scratch())
    chunks = _split_yaml(raw, len(raw) // _CHUNK_BYTES)
    if chunks is None:
        return _fast_yaml_one(raw, source, _Scratch())
    if not _reads_exactly(chunks.outside, source):
        return None
    workers = min((os.cpu_count() or 1) - 1, _MAX_WORKERS - 1, len(chunks) - 1)
    if workers > 0:
        return _fast_yaml_parallel(chunks, workers, meanwhile)
    out: list[Object] = []
    scratch = _Scratch()
    for index in range(len(chunks)):
        objs = _fast_yaml_part(chunks[index], source, scratch)
        if objs is None:
            return None
        out += objs
    return out or None


class _Scratch:
    """rapidyaml's tree and the JSON buffer, reused by the parts one process decodes.

    NOTE: a part's tree (tens of MiB for 4 MiB of YAML) and buffer, allocated for each part,
    had their memory faulted in again for each; cleared, they keep it (a tree parsed into
    after ``clear()`` and ``clear_arena()`` holds the new text alone, as a new tree would).
    """

    def __init__(self) -> None:
        self._tree: Any = None
        self._buffer: mmap.mmap | bytearray = bytearray()

    def tree(self, raw: bytes) -> Any:
        """An empty tree with room for the nodes of ``raw``."""
        if self._tree is None:
            self._tree = ryml.Tree()
        else:
            self._tree.clear()
            self._tree.clear_arena()
        # NOTE: the tree is sized up front from the line count (kubectl output has about 1.2
        # nodes a line): growing it by doubling, copying every node each time, took three
        # quarters of the parse. Capacity only: a larger tree still grows, to the same result.
        # Grown with an eighth to spare, so that the next part, a little larger, fits: each
        # growth copies and clears every node (a tenth of the fast path's time went to
        # growing the reused tree part after part).
        needed = raw.count(b"\n") * 3 // 2 + 16
        if self._tree.capacity() < needed:
            self._tree.reserve(needed + needed // 8)
        return self._tree

    def buffer(self, raw: bytes) -> mmap.mmap | bytearray:
        """A buffer for the JSON of ``raw``'s documents (see ``_emit_json``)."""
        size = 2 * len(raw) + 4096
        if len(self._buffer) < size:
            # NOTE: anonymous memory, not a bytearray, which zeroes (faults in) all of its
            # room: only the pages the JSON is written to are ever faulted in.
            private = getattr(mmap, "MAP_PRIVATE", None)
            self._buffer = bytearray(size) if private is None else mmap.mmap(-1, size, private)
        return self._buffer


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """rapidyaml's C++ error handler writes to file descriptor 2 before it raises; a file the
    fast path cannot parse goes down the exact path, which says what is wrong in one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _fast_yaml_one(raw: bytes, source: str, scratch: _Scratch) -> list[Object] | None:
    docs = _json_documents(raw, scratch)
    if docs is None:
        return None
    out: list[Object] = []
    try:
        for n, js in docs:
            where = source if n == 0 else f"{source}: document {n}"
            # Text the fast path reads is large (or not checked): machine-written.
            if not load_json(js, where, out, machine=True):
                return None
    except Exception:
        return None
    return out or None


# The characters go-yaml's reader refuses ("control characters are not allowed"), as UTF-8:
# C0 controls but tab, newline and carriage return; DEL; C1 controls but NEL; U+FFFE, U+FFFF.
_UNPRINTABLE: Final = re.compile(
    rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]"
)


# Printable ASCII with tab, newline and carriage return: what kubectl's YAML is made of.
_PRINTABLE_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\t\n\r"
_NON_ASCII: Final = bytes(range(0x80, 0x100))


def _printable(raw: bytes) -> bool:
    """Whether ``raw`` holds none of the characters go-yaml's reader refuses, which rapidyaml
    takes. NOTE: what is left once the printable ASCII bytes are deleted (a C-speed pass,
    0.02 s per 50 MB) is empty for almost any kubectl output; an ASCII byte left is a control
    character; the C1 controls and U+FFFE/U+FFFF, which need the slow pattern, begin with
    bytes that other non-ASCII text rarely holds."""
    rest = raw.translate(None, _PRINTABLE_ASCII)
    if not rest:
        return True
    if rest.translate(None, _NON_ASCII):
        return False
    if b"\xc2" in rest or b"\xef" in rest:
        return _UNPRINTABLE.search(raw) is None
    return True


def _utf8(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 text. NOTE: rapidyaml does not check, and msgspec checks only
    the strings it decodes, not those it skips (an unknown field's key, read leniently): a
    misspelled key holding a bad byte was dropped instead of refused. ASCII, as kubectl's
    output almost always is, is told at memchr speed; only other text is decoded."""
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json_documents(raw: bytes, scratch: _Scratch) -> list[tuple[int, bytes]] | None:
    """The JSON of each of ``raw``'s documents that is not empty, with its number in the
    text (0 when the text is one document); None when the fast path declines."""
    if _has_directive(raw) or _has_yaml_structure(raw):
        return None
    if not _only_in_scalar_text(raw, _ONLY_IN_SCALARS):
        return None
    if not _utf8(raw):
        return None  # the exact path names the first bad byte, as go-yaml refuses the text
    if not _printable(raw):
        return None  # the exact path names the character, as go-yaml refuses the text
    try:
        tree = scratch.tree(raw)
        with _stderr_silenced():
            ryml.parse_in_arena(raw, tree=tree)
        root = tree.root_id()
        docs = _children(tree, root) if tree.is_stream(root) else [root]
        out: list[tuple[int, bytes]] = []
        buffer: mmap.mmap | bytearray | None = None
        for n, doc in enumerate(docs, 1):
            if not tree.has_children(doc):
                if tree.has_val(doc) and tree.val(doc).tobytes().strip() not in (b"", b"null"):
                    return None
                continue  # an empty document
            if buffer is None:
                buffer = scratch.buffer(raw)
            # NOTE: JSON on one line, not indented: ryml writes every key and scalar with the
            # same code either way (only the white space between them differs), and the JSON
            # is 45% shorter, which every decode and search of it below pays for.
            tree.set_container_style(doc, ryml.FLOW_SL)
            js = _emit_json(tree, doc, buffer)
            if _RISKY_JSON_KEY.search(js) is not None:
                return None
            out.append((0 if len(docs) == 1 else n, js))
    except Exception:
        return None
    return out


def _emit_json(tree: Any, node: int, buffer: mmap.mmap | bytearray) -> bytes:
    """A node of the tree as JSON, emitted into ``buffer`` (sized from the YAML text: the JSON
    of kubectl's YAML is shorter than twice it) or, when it does not fit, into one of the
    exact size.

    NOTE: ``emit_json_malloc`` returns a str, whose decode from and encode back to UTF-8 took
    half of the emit's time; this emits the bytes themselves.
    """
    try:
        with ryml.emit_json_in_place(tree, buffer, node) as emitted:
            return bytes(emitted)
    except IndexError:
        exact = bytearray(ryml.compute_json_length(tree, node))
        with ryml.emit_json_in_place(tree, exact, node) as emitted:
            return bytes(emitted)


# NOTE: cutting is exact because a List's items and a stream's documents are decoded
# independently (anchors, which could tie them together, make the fast path decline) and the
# parts' objects are concatenated in file order. A cut is made only before a line that starts
# with "- " (a List's items, as kubectl writes them, at column 0) or "---": inside a block
# scalar such a line would end the scalar, and inside a quoted scalar the cut leaves the quote
# open, which rapidyaml rejects. Any part that declines or fails sends the whole file down the
# exact path, which also gives the precise message.
_CHUNK_BYTES: Final = 4 << 20
# Smaller text takes the exact path, which reports duplicate keys (see decode.SMALL_TEXT_BYTES).
_FAST_MIN_BYTES: Final = SMALL_TEXT_BYTES
_MAX_WORKERS: Final = 8  # processes decoding parts at once, this one included
_TOP_KEY: Final = re.compile(rb"(apiVersion|kind|items):[ \t]*(\S*)[ \t]*\r?$")
_COLUMN_0: Final = re.compile(rb"\n(?:---|[^ \t\-#\r\n])")
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


class _Parts:
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


def _reads_exactly(text: bytes, source: str) -> bool:
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


def _split_yaml(raw: bytes, parts: int) -> _Parts | None:
    """The text cut into about ``parts`` standalone YAML texts whose objects, in order, are its
    objects; None when it is neither a document stream nor a List with items at column 0."""
    if parts < 2:
        return None
    found = _column_0_lines(raw)
    docs = found[0] if found is not None else _line_starts(raw, b"---")
    docs = [i for i in docs if raw[i + 3 : i + 4] in (b"", b" ", b"\t", b"\n", b"\r")]
    if len(docs) >= 2:
        return _Parts(raw, b"", _cuts(docs, len(raw), parts), 0, len(raw))
    if docs or found is None:
        return None
    # A kubectl-style List: top-level keys at column 0, items as "- " entries at column 0.
    lines = found[1]
    top: dict[bytes, tuple[int, bytes]] = {}
    for pos in lines:
        line_end = raw.find(b"\n", pos)
        m = _TOP_KEY.match(raw, pos, len(raw) if line_end < 0 else line_end)
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
    return _Parts(raw, head, _item_cuts(raw, start, end, parts), start, end)


def _column_0_lines(raw: bytes) -> tuple[list[int], list[int]] | None:
    """The starts of the lines that begin with ``---`` and of those at column 0 that hold
    a key (neither white space, ``-``, ``#`` nor empty); None past _MAX_TOP_LEVEL_LINES of
    the latter (a text with many is not a List as kubectl writes it).

    NOTE: one search for both, not one each: a List's text (a handful of such lines) is
    searched once, and one search for every line at column 0 instead of one per key.
    """
    dashes = [0] if raw.startswith(b"---") else []
    lines = [0] if raw[:1] not in _NOT_TOP_LEVEL else []
    for m in _COLUMN_0.finditer(raw):
        at = m.start() + 1
        if raw[at] == _DASH:
            dashes.append(at)
            continue
        lines.append(at)
        if len(lines) > _MAX_TOP_LEVEL_LINES:
            return None
    return dashes, lines


def _targets(start: int, end: int, parts: int) -> list[int]:
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
    """Boundaries (from ``starts``) splitting [starts[0], end) into runs (``_targets``)."""
    cuts: list[int] = []
    for target in _targets(starts[0], end, parts):
        i = bisect.bisect_left(starts, target)
        if 0 < i < len(starts) and (not cuts or starts[i] > cuts[-1]):
            cuts.append(starts[i])
    return cuts


def _item_cuts(raw: bytes, start: int, end: int, parts: int) -> list[int]:
    """``_cuts`` over the starts of the lines in raw[start:end] that begin with ``- ``, found
    near each target only: listing every item's start cost a search per item."""
    cuts: list[int] = []
    for target in _targets(start, end, parts):
        if target <= start:
            continue  # the first item: no cut before it
        i = raw.find(b"\n- ", target - 1, end)
        if i >= 0 and (not cuts or i + 1 > cuts[-1]):
            cuts.append(i + 1)
    return cuts


def _fast_yaml_part(raw: bytes, source: str, scratch: _Scratch) -> list[Object] | None:
    """A part of a cut text through the fast path; None when field validation warned: a
    warning names an item by its place in the part (and a worker's would be lost), so the
    exact path reads the whole text again to name them."""
    with field_validation(current_mode()) as warned:
        objs = _fast_yaml_one(raw, source, scratch)
    return None if warned else objs


def _fast_yaml_parallel(
    chunks: _Parts | list[bytes], workers: int, meanwhile: Callable[[], object] | None = None
) -> list[Object] | None:
    """The parts read by this process and ``workers`` forked workers together."""
    sizes = chunks.sizes() if isinstance(chunks, _Parts) else [len(c) for c in chunks]
    return decode_parts(chunks, sizes, workers, PART_READER, meanwhile)


def _decode_part(raw: bytes, scratch: _Scratch) -> list[Object] | None:
    return _fast_yaml_part(raw, "part", scratch)


# A worker's half of a part: each document's number and JSON.
_DOCUMENTS: Final = msgspec.msgpack.Decoder(list[tuple[int, bytes]])
_ENCODER: Final = msgspec.msgpack.Encoder()


def _prepare_part(raw: bytes, scratch: _Scratch) -> bytes | None:
    """A worker's half of a part (``PartReader``): the JSON of its documents, their field
    validation made (``check_json``); None when the fast path declines, or a check warned
    (see ``_fast_yaml_part``) or failed (the exact path says why)."""
    with field_validation(current_mode()) as warned:
        docs = _json_documents(raw, scratch)
        if docs is None:
            return None
        try:
            for _, js in docs:
                check_json(js)
        except Exception:
            return None
    return None if warned else _ENCODER.encode(docs)


def _finish_part(payload: bytes) -> list[Object] | None:
    """This process's half of a part a worker prepared: the objects of its documents' JSON,
    decoded as ``_fast_yaml_one`` decodes them, the checks the worker made left out."""
    with field_validation(current_mode()) as warned:
        out: list[Object] = []
        try:
            for _, js in _DOCUMENTS.decode(payload):
                if not load_json(js, "part", out, machine=True, checked=True):
                    return None
        except Exception:
            return None
    return None if warned or not out else out


PART_READER: Final = PartReader(_decode_part, _prepare_part, _finish_part, _Scratch)


def _children(tree: Any, node: int) -> list[int]:
    out = []
    child = tree.first_child(node)
    while child != ryml.NONE:
        out.append(child)
        child = tree.next_sibling(child)
    return out
