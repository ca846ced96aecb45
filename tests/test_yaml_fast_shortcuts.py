"""The fast path's shortcuts (one-line JSON, searches started at their first byte, a reused
tree, one search for column 0, the workers' shared memory) against the plain forms they
replaced."""

from __future__ import annotations

import re
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from test_loader_fast_path import kubectl_list, pod_manifest, pod_text
from topospread.api import yaml_fast, yaml_screen, yaml_split

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["", " ", "a: b", "- x", "#", "line\nline\n", "tab\there", '"q"', "'"]),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)


@settings(max_examples=200, deadline=None)
@given(value=st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=4))
def test_json_on_one_line_reads_as_the_indented_json_does(value: dict[str, Any]) -> None:
    """The fast path emits each document's JSON on one line (FLOW_SL): only the white space
    between keys and scalars differs from the indented JSON, never a value."""
    import ryml

    text = yaml.safe_dump(value, default_flow_style=False, allow_unicode=True).encode()
    try:
        with yaml_fast._stderr_silenced():
            tree = ryml.parse_in_arena(text)
    except Exception:
        return  # YAML rapidyaml cannot read: the fast path declines it
    root = tree.root_id()
    indented = ryml.emit_json_malloc(tree, root).encode()
    tree.set_container_style(root, ryml.FLOW_SL)
    one_line = yaml_fast._emit_json(tree, root, bytearray(16))
    assert b"\n" not in one_line
    assert json_outcome(one_line) == json_outcome(indented)


def json_outcome(js: bytes) -> Any:
    try:
        return msgspec.json.decode(js)
    except msgspec.DecodeError:
        return "invalid"  # rapidyaml leaves control characters unescaped, in either form


SCAN_BYTES = list(b"&*!?<%[{:- \t\r\n\f\va1#'\"")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(SCAN_BYTES), max_size=30).map(bytes))
def test_the_searches_started_at_their_first_byte_find_what_a_whole_search_finds(
    raw: bytes,
) -> None:
    searches_find_what_a_whole_search_finds(raw)


def searches_find_what_a_whole_search_finds(raw: bytes) -> None:
    searches = [
        *zip(yaml_screen._PROPERTY_LEADS, yaml_screen._NODE_PROPERTIES, strict=True),
        (b"<", yaml_screen._MERGE_KEY),
        (b"?", yaml_screen._COMPLEX_KEY),
        *yaml_screen.ONLY_IN_SCALARS,
    ]
    for lead, pattern in searches:
        found = [m.span() for m in yaml_screen._finditer_from(lead, pattern, raw)]
        assert found == [m.span() for m in pattern.finditer(raw)], pattern.pattern
    whole = raw.startswith(b"%") or yaml_screen._DIRECTIVE.search(raw) is not None
    assert yaml_screen.has_directive(raw) is whole


# Runs where one lead byte fails and the next, right after it, matches; directives after
# other per cent signs.
HOP_PIECES = [
    *(bytes([b]) for b in SCAN_BYTES),
    b"~",
    b"0",
    b"y",
    b"<<<:",
    b"??\n",
    b":: ~\n",
    b"-- ~",
    b"a%",
    b"\n%",
    b"{{",
    b"&&",
]


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(
        st.lists(st.sampled_from([*SCAN_BYTES, *b"%%::--{{"]), max_size=150).map(bytes),
        st.lists(st.sampled_from(HOP_PIECES), max_size=40).map(b"".join),
    ),
    st.integers(min_value=1, max_value=4),
    st.sampled_from([0, 8, 1 << 16]),
)
def test_the_searches_that_hop_then_hand_over_to_re_find_what_a_whole_search_finds(
    raw: bytes, hops: int, span: int
) -> None:
    """The hops from one lead byte to the next, then re's own scan of the rest where the
    bytes are dense, at every switch-over point (few hops between checks, short spans)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(yaml_screen, "_HOPS", hops)
        patch.setattr(yaml_screen, "_HOPS_SPAN", span)
        searches_find_what_a_whole_search_finds(raw)


def test_a_reused_tree_and_buffer_read_each_text_as_fresh_ones_do() -> None:
    big = kubectl_list([pod_manifest(i, {"app": "web", "i": str(i)}) for i in range(40)])
    texts = [
        pod_text().encode(),
        big.encode(),
        pod_text(node="n2").encode(),
        b"\n" * 3 + big.encode(),
    ]
    scratch = yaml_fast._Scratch()
    for text in texts:
        reused = yaml_fast._fast_yaml_one(text, "t.yaml", scratch)
        fresh = yaml_fast._fast_yaml_one(text, "t.yaml", yaml_fast._Scratch())
        assert reused is not None and reused == fresh


def test_a_payload_too_large_for_its_room_comes_back_whole() -> None:
    from topospread.api.yaml_workers import _Returns

    returns = _Returns([1, 2])  # room for parts of 1 and 2 bytes
    small, large = b"s" * 10, b"l" * 70_000
    assert returns.put(1, small) == len(small)
    assert bytes(returns.get(1, len(small))) == small
    assert returns.put(0, large) == large
    assert returns.get(0, large) == large
    returns.close()


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["---", "-", "- a", "a: b", "#", " ", "\t", "", "\r", "k"]), max_size=80
    )
)
def test_one_search_for_column_0_finds_the_document_markers_and_keys_two_found(
    lines: list[str],
) -> None:
    raw = "\n".join(lines).encode()
    dashes = yaml_split._line_starts(raw, b"---")
    keys = [0] if raw[:1] not in yaml_split._NOT_TOP_LEVEL else []
    keys += [m.start() + 1 for m in re.finditer(rb"\n[^ \t\-#\r\n]", raw)]
    expected = None if len(keys) > yaml_split._MAX_TOP_LEVEL_LINES else (dashes, keys)
    assert yaml_split.column_0_lines(raw) == expected


# The searches for risky scalars and keys as they were written before their alternatives were
# grouped by first character and their runs made possessive: the reference for both.
_RISKY_REFERENCE = (
    rb"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|True|TRUE|False|FALSE|~|Null|NULL"
    rb"|[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)"
    rb"|[-+]?0(?:[0-9_]+(?:[eE][-+]?[0-9]+)?|[xX][0-9a-fA-F_]*|[oO][0-7_]*|[bB][01_]*)"
    rb"|\+[0-9.][0-9a-zA-Z_.+-]*|[0-9]+_[0-9a-zA-Z_.+-]*|[0-9]+\.|\.[0-9][0-9a-zA-Z_.+-]*)"
)
VALUE_REFERENCE = tuple(
    re.compile(lead + _RISKY_REFERENCE + rb"[ \t]*(?:#|\r?$)", re.MULTILINE)
    for lead in (rb": +", rb"- +")
)
KEY_REFERENCE = re.compile(
    rb'"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|True|TRUE|False|FALSE|~|Null|NULL'
    rb'|<<|(?:[-+.]|0[0-9xXoObB_]|[0-9]+[^0-9"])[^"]*)":'
)
FLOW_REFERENCE = tuple(re.compile(lead + rb"[ \t]*[^\]}\s]") for lead in (rb"\[", rb"\{"))
RISKY_WORDS = [
    "y",
    "Y",
    "yes",
    "Yes",
    "YES",
    "n",
    "N",
    "no",
    "No",
    "NO",
    "on",
    "On",
    "ON",
    "off",
    "Off",
    "OFF",
    "True",
    "TRUE",
    "False",
    "FALSE",
    "~",
    "Null",
    "NULL",
    "null",
    "true",
    "false",
    ".inf",
    "-.Inf",
    "+.NAN",
    ".nan",
    "0",
    "00",
    "0755",
    "0789",
    "041e8",
    "0x1F",
    "0o17",
    "0b101",
    "0x",
    "0b",
    "0o",
    "+1",
    "+.5",
    "1_000",
    "1_",
    "12.",
    "1.",
    ".5",
    ".5e3",
    "1.5",
    "10250",
    "041e824e",
    "0bde35c1",
    "ON_DEMAND",
    "Node",
    "1e3",
    "-1",
    "-",
    "+",
    "<<",
    ".Inf",
    ".INF",
    ".NaN",
    ".NAN",
    "-.inf",
    "+.INF",
    "-.NaN",
    "01e-5",
    "0_1e+5",
    "+0x1",
    "-0b1",
    "-0o7",
    "1_e",
]
RISKY_PIECES = [
    *RISKY_WORDS,
    *list("yYnNoOeEsSfFTtrRuUlLaAiI~<.+-_0123456789xXbB:\"'#[]{}, \t\r\n"),
    ": ",
    "- ",
    "\n",
    " #",
]


def risky_text(pieces: list[str]) -> bytes:
    return "".join(pieces).encode()


# Lines as a scan meets them: a lead (a key's ": ", an item's "- ", a JSON key's quote), a
# token near a risky scalar (one, one cut short or run on, a few bytes), an ending.
risky_tokens = st.one_of(
    st.sampled_from(RISKY_WORDS),
    st.tuples(st.sampled_from(RISKY_WORDS), st.text("0123456789_.+-eExXoObBaz", max_size=3)).map(
        "".join
    ),
    st.text("0123456789_.+-~eExXoObBnNyYsSfFTtrRuUlLaz<", min_size=1, max_size=5),
)
risky_lines = st.lists(
    st.tuples(
        st.sampled_from(["", "  ", "- "]),
        st.sampled_from(["key: ", "k:  ", "- ", "-\t", '"', "{", "[ ", "{\t", "[ \t"]),
        risky_tokens,
        st.sampled_from(["", "\n", " \n", "\t# c\n", "\r\n", "\r", '":', '" :', ",", "}"]),
    ).map("".join),
    min_size=1,
    max_size=6,
).map(risky_text)


@settings(max_examples=1500, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(RISKY_PIECES), max_size=24).map(risky_text), risky_lines))
def test_the_grouped_risky_searches_find_what_the_plain_ones_found(raw: bytes) -> None:
    """The searches for risky values, keys and flow collections match where, and as far as,
    the patterns they replaced did, so the fast path declines the texts it declined."""
    fast = [
        *yaml_screen._FLOW_WITH_CONTENT,
        *yaml_screen._RISKY_YAML_VALUE,
        yaml_screen.RISKY_JSON_KEY,
    ]
    plain = [*FLOW_REFERENCE, *VALUE_REFERENCE, KEY_REFERENCE]
    for new, old in zip(fast, plain, strict=True):
        for text in (raw, b'"' + raw, b": " + raw, b"- " + raw):
            spans = [m.span() for m in old.finditer(text)]
            assert [m.span() for m in new.finditer(text)] == spans, (new.pattern, text)
            # Every place a match starts, not only the ones finditer reaches.
            starts = [i for i in range(len(text)) if old.match(text, i)]
            assert [i for i in range(len(text)) if new.match(text, i)] == starts


@pytest.mark.parametrize("word", RISKY_WORDS)
@pytest.mark.parametrize("lead", [": ", "-   ", '"'])
@pytest.mark.parametrize("end", ["", "\n", "  # c\n", "\r\n", "x\n", '":', '" :'])
def test_each_risky_word_is_found_as_the_plain_searches_found_it(
    word: str, lead: str, end: str
) -> None:
    text = ("key" + lead + word + end).encode()
    fast = [*yaml_screen._RISKY_YAML_VALUE, yaml_screen.RISKY_JSON_KEY]
    for new, old in zip(fast, [*VALUE_REFERENCE, KEY_REFERENCE], strict=True):
        assert [m.span() for m in new.finditer(text)] == [m.span() for m in old.finditer(text)]
