"""What the YAML fast path declines: text that rapidyaml (YAML 1.2) may read otherwise than
go-yaml v2 (YAML 1.1), and characters or bytes go-yaml refuses (see ``yaml_fast``)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import Final

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
ONLY_IN_SCALARS: Final = (
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


def has_directive(raw: bytes) -> bool:
    """Whether a line starts with ``%`` (a directive, ``%YAML`` or ``%TAG``); each ``%`` found
    by memchr, as ``_finditer_from`` finds its bytes, while they are few."""
    at = raw.find(b"%")
    for _ in range(_HOPS):
        if at <= 0 or raw[at - 1] == _NEWLINE:
            return at >= 0
        at = raw.find(b"%", at + 1)
    return at >= 0 and _DIRECTIVE.search(raw, at - 1) is not None


def has_yaml_structure(raw: bytes) -> bool:
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
RISKY_JSON_KEY: Final = re.compile(rb'"' + _RISKY_FIRST + _RISKY_JSON_KEY_BODY + rb'":')


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


def only_in_scalar_text(raw: bytes, patterns: tuple[tuple[bytes, re.Pattern[bytes]], ...]) -> bool:
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


# The characters go-yaml's reader refuses ("control characters are not allowed"), as UTF-8:
# C0 controls but tab, newline and carriage return; DEL; C1 controls but NEL; U+FFFE, U+FFFF.
_UNPRINTABLE: Final = re.compile(
    rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x84\x86-\x9f]|\xef\xbf[\xbe\xbf]"
)


# Printable ASCII with tab, newline and carriage return: what kubectl's YAML is made of.
_PRINTABLE_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\t\n\r"
_NON_ASCII: Final = bytes(range(0x80, 0x100))


def printable(raw: bytes) -> bool:
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


def utf8(raw: bytes) -> bool:
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
