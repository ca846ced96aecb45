"""Resource quantities: parsing, rounding and printing as apimachinery's resource package does.

Cases follow apimachinery's quantity_test.go (TestQuantityParse, TestQuantityCanonicalize,
TestQuantityParseZero, TestQuantityParseNonNumericPanic, TestScaledValue...) by meaning.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.api.resource import (
    BINARY_SI,
    DECIMAL_EXPONENT,
    DECIMAL_SI,
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    Quantity,
    QuantityError,
    go_json_float,
    must_parse,
    parse_quantity,
    parse_resource_list,
)

FORMAT_WRONG_TEXT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def test_the_error_messages_are_apimachinerys_byte_for_byte() -> None:
    assert ERR_FORMAT_WRONG == FORMAT_WRONG_TEXT
    assert ERR_NUMERIC == "unable to parse numeric part of quantity"
    assert ERR_SUFFIX == "unable to parse quantity's suffix"


# (input, exact value in nanounits, format)
PARSE_CASES = [
    ("0", 0, DECIMAL_SI),
    ("0n", 0, DECIMAL_SI),
    ("0Ki", 0, BINARY_SI),
    ("0e0", 0, DECIMAL_EXPONENT),
    ("1", 10**9, DECIMAL_SI),
    ("100m", 10**8, DECIMAL_SI),
    ("1.5", 15 * 10**8, DECIMAL_SI),
    ("250m", 25 * 10**7, DECIMAL_SI),
    ("1n", 1, DECIMAL_SI),
    ("1u", 1000, DECIMAL_SI),
    ("1k", 10**12, DECIMAL_SI),
    ("1M", 10**15, DECIMAL_SI),
    ("1G", 10**18, DECIMAL_SI),
    ("1T", 10**21, DECIMAL_SI),
    ("1P", 10**24, DECIMAL_SI),
    ("1E", 10**27, DECIMAL_SI),
    ("1Ki", 1024 * 10**9, BINARY_SI),
    ("1Mi", 2**20 * 10**9, BINARY_SI),
    ("200Mi", 200 * 2**20 * 10**9, BINARY_SI),
    ("1.5Gi", 3 * 2**29 * 10**9, BINARY_SI),
    ("1Ti", 2**40 * 10**9, BINARY_SI),
    ("1Pi", 2**50 * 10**9, BINARY_SI),
    ("1Ei", 2**60 * 10**9, BINARY_SI),
    ("1e3", 10**12, DECIMAL_EXPONENT),
    ("1E3", 10**12, DECIMAL_EXPONENT),
    ("12e-3", 12 * 10**6, DECIMAL_EXPONENT),
    ("5E-2", 5 * 10**7, DECIMAL_EXPONENT),
    ("1e+3", 10**12, DECIMAL_EXPONENT),
    # Leading zeros, signs and bare fractions.
    ("0001", 10**9, DECIMAL_SI),
    ("+1", 10**9, DECIMAL_SI),
    ("-1", -(10**9), DECIMAL_SI),
    (".5", 5 * 10**8, DECIMAL_SI),
    ("1.", 10**9, DECIMAL_SI),
    ("0.5Ki", 512 * 10**9, BINARY_SI),
    (".5Gi", 2**29 * 10**9, BINARY_SI),
    # A suffix alone is zero; so is a lone sign or dot.
    ("m", 0, DECIMAL_SI),
    (".", 0, DECIMAL_SI),
    ("-", 0, DECIMAL_SI),
    ("Ki", 0, BINARY_SI),
    # Finer than a nanounit: rounded up (away from zero) to a whole one.
    ("0.1n", 1, DECIMAL_SI),
    ("1.0000000001", 10**9 + 1, DECIMAL_SI),
    ("-0.1n", -1, DECIMAL_SI),
    ("1e-10", 1, DECIMAL_EXPONENT),
    ("1e-100", 1, DECIMAL_EXPONENT),
    # A fraction of a binary unit below 1 becomes decimal SI.
    ("0.0001Ki", 102_400_000, DECIMAL_SI),
    # Binary quantities are capped at 2^63-1.
    ("8Ei", (2**63 - 1) * 10**9, BINARY_SI),
    ("100Ei", (2**63 - 1) * 10**9, BINARY_SI),
]


@pytest.mark.parametrize(("text", "nanos", "fmt"), PARSE_CASES, ids=[c[0] for c in PARSE_CASES])
def test_a_valid_quantity_parses_to_its_exact_value_and_format(
    text: str, nanos: int, fmt: str
) -> None:
    q = Quantity.parse(text)
    assert q.nanos == nanos
    assert q.format == fmt


ERROR_CASES = [
    ("", ERR_FORMAT_WRONG),
    ("abc", ERR_FORMAT_WRONG),
    ("1.2.3", ERR_FORMAT_WRONG),
    (" 1", ERR_FORMAT_WRONG),
    ("1 ", ERR_FORMAT_WRONG),
    ("1gi", ERR_FORMAT_WRONG),
    ("1x", ERR_FORMAT_WRONG),
    ("1e3.5", ERR_FORMAT_WRONG),
    ("1Mi5x", ERR_FORMAT_WRONG),
    ("１", ERR_FORMAT_WRONG),  # a full-width digit is no digit
    ("1e", ERR_SUFFIX),
    ("1E+", ERR_SUFFIX),
    ("1ee5", ERR_SUFFIX),
    ("1Ki5", ERR_SUFFIX),
    ("1KiB", ERR_FORMAT_WRONG),
    ("1K", ERR_SUFFIX),
    ("1mi", ERR_SUFFIX),
    ("1e99999999999999999999", ERR_SUFFIX),
    # The numeric part is only checked when the int64 fast path cannot take it.
    ("Pi", ERR_NUMERIC),
    ("Ei", ERR_NUMERIC),
    ("e-10", ERR_NUMERIC),
    ("-.Ei", ERR_NUMERIC),
]


@pytest.mark.parametrize(("text", "message"), ERROR_CASES, ids=[repr(c[0]) for c in ERROR_CASES])
def test_an_invalid_quantity_fails_with_upstreams_message(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as err:
        Quantity.parse(text)
    assert str(err.value) == message


# TestScaledValue / Value / MilliValue: ceil away from zero.
ROUNDING_CASES = [
    ("1", 1, 1000),
    ("100m", 1, 100),
    ("1001m", 2, 1001),
    ("0.1m", 1, 1),
    ("1n", 1, 1),
    ("0.5", 1, 500),
    ("1.5Gi", 1610612736, 1610612736000),
    ("-0.5", -1, -500),
    ("-1n", -1, -1),
    ("200Mi", 209715200, 209715200000),
    ("0.0001Ki", 1, 103),
    # Beyond int64 the readings saturate.
    ("1E", 10**18, 2**63 - 1),
    ("100Ei", 2**63 - 1, 2**63 - 1),
    ("1e30", 2**63 - 1, 2**63 - 1),
    ("-1e30", -(2**63), -(2**63)),
]


@pytest.mark.parametrize(
    ("text", "value", "milli"), ROUNDING_CASES, ids=[c[0] for c in ROUNDING_CASES]
)
def test_value_and_milli_value_round_up_away_from_zero(text: str, value: int, milli: int) -> None:
    q = Quantity.parse(text)
    assert q.value() == value
    assert q.milli_value() == milli


# TestQuantityCanonicalize: the canonical string.
CANONICAL_CASES = [
    ("0", "0"),
    ("1", "1"),
    ("1.5", "1500m"),
    ("1000m", "1"),
    ("1001m", "1001m"),
    ("0.0001", "100u"),
    ("1000", "1k"),
    ("1024", "1024"),
    ("1Ki", "1Ki"),
    ("1024Ki", "1Mi"),
    ("1.5Gi", "1536Mi"),
    ("1.5Ki", "1536"),
    ("0.1Ki", "102400m"),
    ("1023", "1023"),
    ("1e3", "1e3"),
    ("12e6", "12e6"),
    ("5E-2", "50e-3"),
    ("100e-9", "100e-9"),
    ("-1.5", "-1500m"),
    ("-2Ki", "-2Ki"),
    ("8Ei", "9223372036854775807"),
]


@pytest.mark.parametrize(("text", "want"), CANONICAL_CASES, ids=[c[0] for c in CANONICAL_CASES])
def test_a_quantity_prints_in_canonical_form(text: str, want: str) -> None:
    assert str(Quantity.parse(text)) == want


def test_sums_are_exact_before_rounding() -> None:
    # Two containers of 0.0001 cpu need 1 millicore together, not 2.
    total = Quantity.parse("0.0001") + Quantity.parse("0.0001")
    assert total.milli_value() == 1
    assert (Quantity.parse("1.5") + Quantity.parse("500m")).value() == 2


def test_a_zero_sum_takes_the_format_of_what_is_added() -> None:
    assert (Quantity() + Quantity.parse("1Ki")).format == BINARY_SI
    assert (Quantity.parse("1") + Quantity.parse("1Ki")).format == DECIMAL_SI


def test_quantities_compare_by_value_whatever_their_format() -> None:
    assert Quantity.parse("1Ki") == Quantity.parse("1024")
    assert Quantity.parse("1k") < Quantity.parse("1Ki")
    assert Quantity.parse("1e3").cmp(Quantity.parse("1k")) == 0
    assert Quantity.parse("2").cmp(Quantity.parse("1")) == 1
    assert hash(Quantity.parse("1Ki")) == hash(Quantity.parse("1024"))


def test_new_quantity_and_new_milli_quantity_build_exact_values() -> None:
    assert Quantity.new_milli_quantity(100).milli_value() == 100
    assert str(Quantity.new_milli_quantity(100)) == "100m"
    assert Quantity.new_quantity(200 * 1024 * 1024, BINARY_SI).value() == 209715200
    assert str(Quantity.new_quantity(200 * 1024 * 1024, BINARY_SI)) == "200Mi"


# Quantity.UnmarshalJSON: YAML ints and floats arrive as JSON numbers.
API_CASES: list[tuple[str | int | float | None, int]] = [
    (2, 2 * 10**9),
    (0, 0),
    (-3, -3 * 10**9),
    (0.5, 5 * 10**8),
    (1.25, 125 * 10**7),
    (0.1, 10**8),
    (1e-7, 100),
    (1e21, 10**30),
    (100.0, 10**11),
    (" 1Gi ", 2**30 * 10**9),
    (None, 0),
]


@pytest.mark.parametrize(("raw", "nanos"), API_CASES, ids=[repr(c[0]) for c in API_CASES])
def test_parse_quantity_accepts_what_the_api_decodes(
    raw: str | int | float | None, nanos: int
) -> None:
    assert parse_quantity(raw).nanos == nanos


def test_a_float_reads_as_encoding_json_prints_it() -> None:
    assert go_json_float(0.5) == "0.5"
    assert go_json_float(100.0) == "100"
    assert go_json_float(1e-7) == "1e-7"
    assert go_json_float(1.5e-7) == "1.5e-7"
    assert go_json_float(1e21) == "1e+21"
    assert go_json_float(1.5e300) == "1.5e+300"
    assert go_json_float(123456789.125) == "123456789.125"
    assert go_json_float(-0.25) == "-0.25"
    assert str(parse_quantity(1e-7)) == "100e-9"


@pytest.mark.parametrize("raw", [True, False], ids=["true", "false"])
def test_a_boolean_is_not_a_quantity(raw: bool) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity(raw)
    assert str(err.value) == FORMAT_WRONG_TEXT


def test_parse_resource_list_parses_every_entry() -> None:
    rl = parse_resource_list({"cpu": "500m", "memory": 1024, "nvidia.com/gpu": 1.0})
    assert rl["cpu"].milli_value() == 500
    assert rl["memory"].value() == 1024
    assert rl["nvidia.com/gpu"].value() == 1
    assert parse_resource_list(None) == {}


def test_must_parse_names_the_bad_input() -> None:
    with pytest.raises(ValueError, match=r"^cannot parse '1x': quantities must match"):
        must_parse("1x")


# Properties over generated quantities.

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "Ki", "Mi", "Gi", "e3", "e-2", "E6"]
_SCALE = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "e3": 3, "e-2": -2}
_SCALE["E6"] = 6


def _ceil_away(x: Fraction) -> int:
    return math.ceil(x) if x >= 0 else math.floor(x)


def _int64(x: int) -> int:
    return max(-(2**63), min(2**63 - 1, x))


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=-(10**6), max_value=10**6),
    st.text(alphabet="0123456789", max_size=12),
    st.sampled_from(_SUFFIXES),
)
def test_readings_are_exact_ceilings_and_the_canonical_form_parses_back(
    whole: int, frac: str, suffix: str
) -> None:
    text = f"{whole}.{frac}{suffix}" if frac else f"{whole}{suffix}"
    q = Quantity.parse(text)
    number = Fraction(f"{whole}.{frac}" if frac else str(whole))
    if whole < 0 or text.startswith("-"):
        number = -abs(number)
    if suffix.endswith("i"):
        exact = number * 2 ** {"Ki": 10, "Mi": 20, "Gi": 30}[suffix]
    else:
        exact = number * Fraction(10) ** _SCALE[suffix]
    nanos = _ceil_away(exact * 10**9)
    assert q.nanos == nanos
    assert q.value() == _int64(_ceil_away(Fraction(nanos, 10**9)))
    assert q.milli_value() == _int64(_ceil_away(Fraction(nanos, 10**6)))
    assert Quantity.parse(str(q)) == q
