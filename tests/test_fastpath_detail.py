"""A fast attempt's detail as columns: the report fragment written from them equals msgspec's
encoding of the dicts they materialise, and a Decision builds those dicts only when read."""

from __future__ import annotations

import os
import tempfile

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_pod
from topospread.render.detail_writer import DetailWriter, can_fork
from topospread.simulator.fastpath import fragment
from topospread.simulator.fastpath.detail import FastDetail, NodeKeys
from topospread.simulator.scheduler import Decision

NAMES = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=12, unique=True)
PLUGINS = st.lists(
    st.sampled_from(["TaintToleration", "NodeAffinity", "ImageLocality", "my-plugin", "_x", "def"]),
    unique=True,
    max_size=4,
)
FORMATTED = [[], ["NodeAffinity: node(s) didn't match"], ['Taint: "quoted" \u00e9'], ["a", "b"]]


@st.composite
def details(draw: st.DrawFn) -> FastDetail:
    names = draw(NAMES)
    n = len(names)
    take = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    rest = [i for i in range(n) if i not in take]
    seen = draw(st.lists(st.sampled_from(rest), unique=True)) if rest else []
    plugins = draw(PLUGINS)
    scored = len(take) > 1
    ints = st.integers(-(2**40), 2**40)
    columns = [np.array(draw(st.lists(ints, min_size=len(take), max_size=len(take))), np.int64)
               for _ in plugins] if scored else []  # fmt: skip
    prior_names = draw(st.lists(st.sampled_from(names), unique=True, max_size=2))
    return FastDetail(
        NodeKeys.of(names),
        np.array(take, np.int64),
        np.array([draw(ints) for _ in take], np.int64) if scored else None,
        plugins if scored else [],
        columns,
        {name: FORMATTED[1] for name in prior_names},
        np.array(seen, np.intp),
        np.array([draw(st.integers(1, len(FORMATTED) - 1)) for _ in seen], np.int32),
        FORMATTED,
    )


@settings(max_examples=300, deadline=None)
@given(details())
def test_the_fragment_is_msgspec_encoding_of_the_materialised_detail(detail: FastDetail) -> None:
    feasible, scores, plugin_scores, reasons = detail.materialise()
    names = detail.keys.names
    take = [names[i] for i in detail.take.tolist()]
    assert feasible == sorted(take)
    assert list(scores) == (take if detail.totals is not None else [])
    assert all(list(row) == detail.plugins for row in plugin_scores.values())
    expected = msgspec.json.encode(
        {"feasible": feasible, "scores": scores, "pluginScores": plugin_scores, "reasons": reasons}
    )
    assert detail.fragment() == expected[1:-1]


@st.composite
def attempts(draw: st.DrawFn) -> list[FastDetail]:
    """Several attempts over one node table, their scores drawn from a few values (so that
    nodes keep, change and take back their scores and statuses from one to the next)."""
    names = draw(NAMES)
    n = len(names)
    keys = NodeKeys.of(names)
    plugin_lists = [draw(PLUGINS), draw(PLUGINS)]
    values = [*draw(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=3)), 0, 7]
    formatted = list(FORMATTED)
    details = []
    for _ in range(draw(st.integers(1, 6))):
        order = draw(st.permutations(range(n)))
        cut = draw(st.integers(1, n))
        take, rest = order[:cut], order[cut:]
        seen = rest[: draw(st.integers(0, len(rest)))]
        if draw(st.booleans()):  # the status table grows
            formatted.append([f"Plugin: reason {len(formatted)}"])
        plugins = draw(st.sampled_from(plugin_lists)) if len(take) > 1 else []
        scored = len(take) > 1 and bool(plugins)
        column = st.lists(st.sampled_from(values), min_size=len(take), max_size=len(take))
        details.append(
            FastDetail(
                keys,
                np.array(take, np.int64),
                np.array(draw(column), np.int64) if scored else None,
                plugins if scored else [],
                [np.array(draw(column), np.int64) for _ in plugins] if scored else [],
                {},
                np.array(seen, np.intp),
                np.array([draw(st.integers(1, len(formatted) - 1)) for _ in seen], np.int32),
                formatted,
            )
        )
    return details


def _expected(detail: FastDetail) -> bytes:
    feasible, scores, plugin_scores, reasons = detail.materialise()
    document = {
        "feasible": feasible, "scores": scores, "pluginScores": plugin_scores, "reasons": reasons
    }  # fmt: skip
    return msgspec.json.encode(document)[1:-1]


@settings(max_examples=200, deadline=None)
@given(attempts())
def test_fragments_of_attempts_over_one_table_are_each_msgspec_encoding(
    details: list[FastDetail],
) -> None:
    """Entries kept from earlier attempts are reused only for the values they were written
    for: each fragment is what msgspec writes for its own materialised detail."""
    for detail in details:
        assert detail.fragment() == _expected(detail)


@pytest.mark.parametrize("case", ["rows sharing a hash", "too many rows, forgotten"])
def test_plugin_score_rows_are_right_when_hashes_collide_or_rows_are_forgotten(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if case == "rows sharing a hash":
        monkeypatch.setattr(fragment, "_MULTIPLIERS", (0,))  # every row's hash is 0
    else:
        monkeypatch.setattr(fragment, "_MAX_ROWS", 64)  # forgotten after 64 distinct rows
    names = [f"node-{i}" for i in range(40)]
    keys = NodeKeys.of(names)
    rng = np.random.default_rng(7)
    for attempt in range(12):
        take = rng.permutation(40)[: 20 + attempt].astype(np.int64)
        columns = [rng.integers(0, 4 + 3 * attempt, len(take)) for _ in range(3)]
        detail = FastDetail(
            keys, take, sum(columns), ["A", "B", "C"], columns, {},
            np.array([], np.intp), np.array([], np.int32), FORMATTED,
        )  # fmt: skip
        assert detail.fragment() == _expected(detail)


def test_a_decision_builds_its_detail_from_the_columns_only_when_read() -> None:
    names = ["n2", "n1", "n3"]
    detail = FastDetail(
        NodeKeys.of(names),
        np.array([0, 1], np.int64),
        np.array([7, 9], np.int64),
        ["NodeAffinity", "TaintToleration"],
        [np.array([4, 6], np.int64), np.array([3, 3], np.int64)],
        {},
        np.array([2], np.intp),
        np.array([1], np.int32),
        FORMATTED,
    )
    decision = Decision(pod=make_pod("p").obj(), node="n1", attempt=1, columns=detail)
    assert decision.columns is detail
    assert decision.feasible == ["n1", "n2"]
    assert decision.columns is None  # built once, then the dicts are the detail
    assert decision.scores == {"n2": 7, "n1": 9}
    assert decision.plugin_scores == {
        "n2": {"NodeAffinity": 4, "TaintToleration": 3},
        "n1": {"NodeAffinity": 6, "TaintToleration": 3},
    }
    assert decision.reasons == {"n3": FORMATTED[1]}
    decision.reasons = {}
    assert decision.to_json()["reasons"] == {}


@pytest.mark.parametrize(
    "values",
    [[0, 1, -(2**15), 2**15 - 1], [2**15, -(2**15) - 1], [2**31 - 1, -(2**31)], [2**31, -(2**40)]],
    ids=["int16", "int32 just past int16", "int32 at its ends", "int64"],
)
def test_the_detail_writer_writes_the_fragment_of_columns_of_any_width(values: list[int]) -> None:
    """The columns travel to the writer process in the narrowest type that holds them; the
    fragment it writes is the one this process would."""
    if not can_fork():
        pytest.skip("no os.fork")
    names = ["n0", "n1", "n2", "n3"]
    n = len(values)
    detail = FastDetail(
        NodeKeys.of(names),
        np.arange(n, dtype=np.int64)[::-1].copy(),
        np.array(values, np.int64),
        ["TaintToleration", "ImageLocality"],
        [np.array(values, np.int64), np.array(values[::-1], np.int64)],
        {},
        np.array([1, 3], np.intp),
        np.array([1, 1], np.int32),
        FORMATTED,
    )
    with tempfile.TemporaryFile() as f:
        writer = DetailWriter(f.fileno(), 0)
        writer.send(detail)
        (length,) = writer.finish()
        assert os.pread(f.fileno(), length, 0) == detail.fragment()


def test_the_detail_writer_writes_each_fragment_of_attempts_sharing_a_table() -> None:
    """The writer keeps its own entries per table (from the columns it receives as one block
    of narrow ints); its fragments are those this process writes, attempt after attempt."""
    if not can_fork():
        pytest.skip("no os.fork")
    names = [f"ip-10-0-{i}-{i * 7 % 250}.internal" for i in range(30)]
    keys = NodeKeys.of(names)
    rng = np.random.default_rng(11)
    details = []
    for attempt in range(20):
        order = rng.permutation(30).astype(np.int64)
        take, seen = order[: 10 + attempt % 7], order[20:]
        columns = [rng.integers(0, 3, len(take)) * weight for weight in (1, 2, 100)]
        details.append(
            FastDetail(
                keys, take, sum(columns), ["TaintToleration", "NodeResourcesFit", "ImageLocality"],
                columns, {}, seen, rng.integers(1, len(FORMATTED), len(seen)).astype(np.int32),
                FORMATTED,
            )
        )  # fmt: skip
    with tempfile.TemporaryFile() as f:
        writer = DetailWriter(f.fileno(), 0)
        for detail in details:
            writer.send(detail)
        lengths = writer.finish()
        written = os.pread(f.fileno(), sum(lengths), 0)
    expected = [_expected(detail) for detail in details]
    assert lengths == [len(e) for e in expected]
    assert written == b"".join(expected)
