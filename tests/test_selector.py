"""Label selector semantics against apimachinery's documented rules."""

from __future__ import annotations

import pickle

import pytest

from topospread.api.types import LabelSelector, LabelSelectorRequirement
from topospread.labels.selector import (
    EVERYTHING,
    NOTHING,
    Operator,
    Requirement,
    SelectorError,
    label_selector_as_selector,
    new_requirement,
    parse_int64,
    selector_from_set,
)


def _sel(
    match_labels: dict[str, str] | None = None, *exprs: tuple[str, str, list[str]]
) -> LabelSelector:
    return LabelSelector(
        match_labels=match_labels or {},
        match_expressions=[
            LabelSelectorRequirement(key=k, operator=op, values=v) for k, op, v in exprs
        ],
    )


@pytest.mark.parametrize(
    ("selector", "labels", "want"),
    [
        pytest.param(_sel({"a": "1"}), {"a": "1"}, True, id="matchLabels equal value matches"),
        pytest.param(_sel({"a": "1"}), {"a": "2"}, False, id="matchLabels other value fails"),
        pytest.param(_sel({"a": "1"}), {}, False, id="matchLabels missing key fails"),
        pytest.param(_sel({"a": ""}), {"a": ""}, True, id="empty label value is a value"),
        pytest.param(_sel(None, ("a", "In", ["1", "2"])), {"a": "2"}, True, id="In any value"),
        pytest.param(_sel(None, ("a", "In", ["1"])), {}, False, id="In needs the key"),
        pytest.param(_sel(None, ("a", "NotIn", ["1"])), {}, True, id="NotIn matches missing key"),
        pytest.param(_sel(None, ("a", "NotIn", ["1"])), {"a": "1"}, False, id="NotIn rejects"),
        pytest.param(_sel(None, ("a", "Exists", [])), {"a": ""}, True, id="Exists any value"),
        pytest.param(_sel(None, ("a", "DoesNotExist", [])), {"a": "x"}, False, id="DNE rejects"),
        pytest.param(_sel(None, ("a", "DoesNotExist", [])), {"b": "x"}, True, id="DNE absent"),
        pytest.param(
            _sel({"a": "1"}, ("b", "Exists", [])), {"a": "1"}, False, id="terms are ANDed"
        ),
        pytest.param(_sel(), {"x": "y"}, True, id="empty selector matches everything"),
        pytest.param(None, {"x": "y"}, False, id="nil selector matches nothing"),
    ],
)
def test_label_selector_matching(
    selector: LabelSelector | None, labels: dict[str, str], want: bool
) -> None:
    assert label_selector_as_selector(selector).matches(labels) is want


def test_empty_means_no_requirements_and_nothing_is_not_empty() -> None:
    assert EVERYTHING.empty
    assert not NOTHING.empty
    assert NOTHING.requirements is None
    assert selector_from_set({}).empty
    assert not selector_from_set({"a": "b"}).empty


def test_adding_requirements_to_nothing_keeps_nothing() -> None:
    req = Requirement("a", Operator.EQUALS, ("b",))
    assert NOTHING.add(req) is NOTHING
    assert EVERYTHING.add(req).matches({"a": "b"})


@pytest.mark.parametrize(
    ("op", "value", "label", "want"),
    [
        pytest.param(Operator.GREATER_THAN, "5", "6", True, id="Gt greater"),
        pytest.param(Operator.GREATER_THAN, "5", "5", False, id="Gt equal is not greater"),
        pytest.param(Operator.LESS_THAN, "5", "-3", True, id="Lt negative"),
        pytest.param(Operator.GREATER_THAN, "5", "abc", False, id="Gt non-integer label"),
        pytest.param(Operator.GREATER_THAN, "5", "+7", True, id="Gt signed integer parses"),
        pytest.param(Operator.GREATER_THAN, "5", " 7", False, id="Gt spaces do not parse"),
    ],
)
def test_numeric_operators(op: Operator, value: str, label: str, want: bool) -> None:
    assert Requirement("n", op, (value,)).matches({"n": label}) is want


def test_parse_int64_follows_strconv() -> None:
    assert parse_int64("9223372036854775807") == 2**63 - 1
    assert parse_int64("9223372036854775808") is None
    assert parse_int64("1_000") is None
    assert parse_int64("") is None


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param(
            _sel(None, ("a", "Bogus", [])),
            '"Bogus" is not a valid label selector operator',
            id="unknown operator",
        ),
        pytest.param(
            _sel(None, ("a", "In", [])),
            # An empty list is a nil slice in Go, which prints as null.
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
            id="In without values",
        ),
        pytest.param(
            _sel(None, ("a", "Exists", ["x"])),
            'values: Invalid value: ["x"]: values set must be empty for exists and does not exist',
            id="Exists with values",
        ),
    ],
)
def test_invalid_selectors_raise(selector: LabelSelector, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        label_selector_as_selector(selector)
    assert str(err.value) == message


def test_invalid_label_key_and_value_are_rejected_with_apimachinery_paths() -> None:
    with pytest.raises(SelectorError, match=r'^key: Invalid value: "bad key": '):
        new_requirement("bad key", Operator.EXISTS, ())
    with pytest.raises(SelectorError, match=r'^values\[0\]\[app\]: Invalid value: "a b": '):
        new_requirement("app", Operator.IN, ("a b",))


def test_selector_prints_like_apimachinery() -> None:
    sel = label_selector_as_selector(
        _sel({"app": "web"}, ("tier", "In", ["b", "a"]), ("x", "DoesNotExist", []))
    )
    assert str(sel) == "app=web,tier in (a,b),!x"


def test_a_selectors_hash_is_remembered_but_never_pickled() -> None:
    """Another process hashes strings differently: a pickled selector asks for its hash
    again where it is loaded."""
    sel = label_selector_as_selector(
        LabelSelector(match_labels={"app": "web"}, match_expressions=[])
    )
    first = hash(sel)
    assert hash(sel) == first and sel._hash == first
    loaded = pickle.loads(pickle.dumps(sel))
    assert loaded._hash is None
    assert loaded == sel and hash(loaded) == first
    assert str(loaded) == str(sel) == "app=web"
    assert pickle.loads(pickle.dumps(NOTHING)).is_nothing
