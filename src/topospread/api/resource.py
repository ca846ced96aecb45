"""Kubernetes resource quantities, parsed and rounded exactly as apimachinery does it.

A quantity is a fixed-point decimal: ``<sign><number><suffix>`` with a decimal SI suffix
(``n u m "" k M G T P E``), a binary SI suffix (``Ki Mi Gi Ti Pi Ei``) or a decimal exponent
(``e3``, ``E-2``). Parsing never goes through a float: values finer than a nanounit are
rounded up (away from zero) to the next nanounit, binary values are capped at 2^63-1, and the
scheduler reads a quantity through ``value()`` (bytes, counts: ceil to an integer) or
``milli_value()`` (CPU millicores: ceil to a thousandth), both rounding away from zero.

The API decodes a quantity from a JSON string or a JSON number alike, so YAML ints and floats
are accepted too: an int is read as its decimal digits, a float as Go's encoding/json prints
a float64 (its shortest round-trip digits).

Upstream: k8s.io/apimachinery/pkg/api/resource (quantity.go, amount.go, suffix.go), v1.35.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Mapping
from typing import Final

# The messages apimachinery's ParseQuantity returns (ErrFormatWrong, ErrNumeric, ErrSuffix).
SPLIT_RE_STRING: Final = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
ERR_FORMAT_WRONG: Final = "quantities must match the regular expression '" + SPLIT_RE_STRING + "'"
ERR_NUMERIC: Final = "unable to parse numeric part of quantity"
ERR_SUFFIX: Final = "unable to parse quantity's suffix"

# Formats, spelled as resource.Format spells them.
DECIMAL_EXPONENT: Final = "DecimalExponent"
BINARY_SI: Final = "BinarySI"
DECIMAL_SI: Final = "DecimalSI"

# Scales (powers of ten) accepted by ``scaled_value``.
NANO: Final = -9
MICRO: Final = -6
MILLI: Final = -3
KILO: Final = 3
MEGA: Final = 6
GIGA: Final = 9

_INT64_MAX: Final = (1 << 63) - 1
_INT64_MIN: Final = -(1 << 63)
_INT32_MASK: Final = (1 << 32) - 1
_NANOS_PER_UNIT: Final = 10**9
# maxInt64Factors: decimal digits an int64 always holds.
_MAX_INT64_FACTORS: Final = 18
# NOTE: magnitudes beyond 10^42 units are held at 10^42 so that a suffix like e999999999 cannot
# make us build a billion-digit integer. Every int64 reading of such a value saturates anyway;
# only the canonical string of these absurd quantities differs from apimachinery's.
_MAX_NANOS: Final = 10 ** (42 + 9)

_DECIMAL_SUFFIXES: Final[Mapping[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final[Mapping[str, int]] = {
    "Ki": 10,
    "Mi": 20,
    "Gi": 30,
    "Ti": 40,
    "Pi": 50,
    "Ei": 60,
}
_DECIMAL_SUFFIX_BY_EXPONENT: Final = {e: s for s, e in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_BY_EXPONENT: Final = {e: s for s, e in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")


class QuantityError(ValueError):
    """A quantity does not parse; ``str(err)`` is apimachinery's message, byte for byte."""

    def __init__(self, message: str, value: object = None) -> None:
        super().__init__(message)
        self.value = value


def _clamp_nanos(nanos: int) -> int:
    if nanos > _MAX_NANOS:
        return _MAX_NANOS
    if nanos < -_MAX_NANOS:
        return -_MAX_NANOS
    return nanos


def _saturate_int64(value: int) -> int:
    return min(max(value, _INT64_MIN), _INT64_MAX)


def _div_away_from_zero(n: int, d: int) -> int:
    """n / d rounded away from zero, for d > 0."""
    q, r = divmod(abs(n), d)
    if r:
        q += 1
    return q if n >= 0 else -q


class Quantity:
    """An exact quantity: its value in nanounits, and the format it was written in.

    Immutable and hashable; equality and ordering compare values only (as ``Cmp`` does).
    Upstream: Quantity (quantity.go, v1.35)
    """

    __slots__ = ("_format", "_nanos")

    def __init__(self, nanos: int = 0, format: str = DECIMAL_SI) -> None:
        self._nanos = _clamp_nanos(nanos)
        self._format = format

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def new_quantity(cls, value: int, format: str = DECIMAL_SI) -> Quantity:
        """``value`` units. Upstream: NewQuantity (quantity.go, v1.35)."""
        return cls(value * _NANOS_PER_UNIT, format)

    @classmethod
    def new_milli_quantity(cls, value: int, format: str = DECIMAL_SI) -> Quantity:
        """``value`` thousandths. Upstream: NewMilliQuantity (quantity.go, v1.35)."""
        return cls(value * 10**6, format)

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse a quantity string; raises QuantityError with apimachinery's message.

        Upstream: ParseQuantity (quantity.go, v1.35)
        """
        return _parse_cached(text)

    # -- reading ------------------------------------------------------------------------------

    @property
    def format(self) -> str:
        return self._format

    @property
    def nanos(self) -> int:
        """The exact value in units of 10^-9 (every parsed quantity is a whole number of them)."""
        return self._nanos

    def is_zero(self) -> bool:
        return self._nanos == 0

    def sign(self) -> int:
        return (self._nanos > 0) - (self._nanos < 0)

    def scaled_value(self, scale: int) -> int:
        """ceil(q / 10^scale), away from zero, held to the int64 range.

        Upstream: Quantity.ScaledValue (quantity.go, v1.35); beyond int64 upstream's result
        depends on the internal representation, here it saturates.
        """
        shift = scale + 9
        if shift >= 0:
            return _saturate_int64(_div_away_from_zero(self._nanos, 10**shift))
        return _saturate_int64(self._nanos * 10 ** (-shift))

    def value(self) -> int:
        """The value rounded up to an integer (bytes, counts). Upstream: Quantity.Value."""
        return self.scaled_value(0)

    def milli_value(self) -> int:
        """ceil(q * 1000): CPU millicores. Upstream: Quantity.MilliValue (quantity.go, v1.35)."""
        return self.scaled_value(MILLI)

    # -- arithmetic ---------------------------------------------------------------------------

    def __add__(self, other: Quantity) -> Quantity:
        """The exact sum; a zero left operand takes the right one's format (Quantity.Add)."""
        fmt = other._format if self._nanos == 0 else self._format
        return Quantity(self._nanos + other._nanos, fmt)

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1. Upstream: Quantity.Cmp (quantity.go, v1.35)."""
        return (self._nanos > other._nanos) - (self._nanos < other._nanos)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self._nanos == other._nanos

    def __hash__(self) -> int:
        return hash(self._nanos)

    def __lt__(self, other: Quantity) -> bool:
        return self._nanos < other._nanos

    def __le__(self, other: Quantity) -> bool:
        return self._nanos <= other._nanos

    def __gt__(self, other: Quantity) -> bool:
        return self._nanos > other._nanos

    def __ge__(self, other: Quantity) -> bool:
        return self._nanos >= other._nanos

    # -- printing -----------------------------------------------------------------------------

    def __str__(self) -> str:
        """The canonical form: ``1.5`` prints ``1500m``, ``1.5Gi`` prints ``1536Mi``.

        Upstream: Quantity.String and CanonicalizeBytes (quantity.go, v1.35)
        """
        n = self._nanos
        if n == 0:
            return "0"
        fmt = self._format
        if fmt == BINARY_SI:
            if -1024 * _NANOS_PER_UNIT < n < 1024 * _NANOS_PER_UNIT or n % _NANOS_PER_UNIT:
                fmt = DECIMAL_SI
        elif fmt != DECIMAL_SI:
            fmt = DECIMAL_EXPONENT
        if fmt == BINARY_SI:
            units = n // _NANOS_PER_UNIT
            mantissa, exponent = abs(units), 0
            while mantissa >= 1024 and mantissa % 1024 == 0:
                mantissa //= 1024
                exponent += 1
            text = str(mantissa if units > 0 else -mantissa)
            return text + _BINARY_SUFFIX_BY_EXPONENT.get(exponent * 10, "")
        mantissa, exponent = abs(n), -9
        while mantissa >= 10 and mantissa % 10 == 0:
            mantissa //= 10
            exponent += 1
        while exponent % 3:
            mantissa *= 10
            exponent -= 1
        text = str(mantissa if n > 0 else -mantissa)
        if fmt == DECIMAL_SI:
            # An exponent without a decimal SI suffix (beyond E) prints no suffix at all, as
            # upstream's suffixer returns nothing for it.
            return text + _DECIMAL_SUFFIX_BY_EXPONENT.get(exponent, "")
        return text if exponent == 0 else f"{text}e{exponent}"

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


ZERO: Final = Quantity()


def _parse_quantity_string(text: str) -> tuple[bool, str, str, str, str]:
    """Split into (positive, value, numerator, denominator, suffix) or raise FormatWrong.

    Upstream: parseQuantityString (quantity.go, v1.35)
    """
    positive = True
    pos = 0
    end = len(text)
    if pos < end and text[0] in "+-":
        positive = text[0] == "+"
        pos += 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    if pos >= end:
        return positive, text, num, "", ""
    if not num:
        num = "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
        if pos >= end:
            return positive, text, num, denom, ""
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG, text)
    return positive, value, num, denom, text[suffix_start:]


def _parse_go_int64(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64): an optional sign and decimal digits, in range."""
    body = text[1:] if text[:1] in ("+", "-") else text
    if not body or any(c not in _DIGITS for c in body):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


def _interpret_suffix(suffix: str) -> tuple[int, int, str] | None:
    """(base, exponent, format) of a suffix. Upstream: suffixHandler.interpret (suffix.go)."""
    exponent = _DECIMAL_SUFFIXES.get(suffix)
    if exponent is not None:
        return 10, exponent, DECIMAL_SI
    exponent = _BINARY_SUFFIXES.get(suffix)
    if exponent is not None:
        return 2, exponent, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        parsed = _parse_go_int64(suffix[1:])
        if parsed is None:
            return None
        # int32(parsed): Go truncates the exponent to 32 bits.
        wrapped = parsed & _INT32_MASK
        if wrapped >= 1 << 31:
            wrapped -= 1 << 32
        return 10, wrapped, DECIMAL_EXPONENT
    return None


def _scaled_nanos(digits: int, exp10: int) -> int:
    """digits * 10^exp10 in nanounits, rounded up (away from zero) to a whole nanounit."""
    if digits == 0:
        return 0
    shift = exp10 + 9
    if shift >= 0:
        if shift + len(str(abs(digits))) > 60:
            return _MAX_NANOS if digits > 0 else -_MAX_NANOS
        return digits * int(10**shift)
    if -shift > len(str(abs(digits))) + 1:
        return 1 if digits > 0 else -1
    return _div_away_from_zero(digits, 10 ** (-shift))


def _parse(text: str) -> Quantity:
    """Upstream: ParseQuantity (quantity.go, v1.35)."""
    if not text:
        raise QuantityError(ERR_FORMAT_WRONG, text)
    if text == "0":
        return Quantity(0, DECIMAL_SI)
    positive, value, num, denom, suffix = _parse_quantity_string(text)
    interpreted = _interpret_suffix(suffix)
    if interpreted is None:
        raise QuantityError(ERR_SUFFIX, text)
    base, exponent, fmt = interpreted

    # The int64 fast path: exact, never rounded.
    precision = 0
    scale = 0
    mantissa = 1
    if fmt == BINARY_SI:
        if exponent >= 0 and not denom:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    else:
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= NANO:
            result = int(num + denom) * mantissa
            if result <= _INT64_MAX:
                signed = result if positive else -result
                return Quantity(_scaled_nanos(signed, scale), fmt)

    # The inf.Dec path: exact arithmetic, then rounded up to nanounits and capped.
    body = value[1:] if value[:1] in ("+", "-") else value
    int_part, _, frac_part = body.partition(".")
    if not (int_part + frac_part) or "." in frac_part:
        raise QuantityError(ERR_NUMERIC, text)
    digits = int(int_part + frac_part)
    if value[:1] == "-":
        digits = -digits
    if base == 10:
        nanos = _scaled_nanos(digits, exponent - len(frac_part))
    else:
        nanos = _scaled_nanos(digits << exponent, -len(frac_part))
    if fmt == BINARY_SI:
        cap = _INT64_MAX * _NANOS_PER_UNIT
        nanos = min(max(nanos, -cap), cap)
        if 0 < abs(nanos) < _NANOS_PER_UNIT:
            fmt = DECIMAL_SI
    return Quantity(nanos, fmt)


@functools.lru_cache(maxsize=65536)
def _parse_cached(text: str) -> Quantity:
    # NOTE: safe to share results: Quantity is immutable.
    return _parse(text)


def go_json_float(value: float) -> str:
    """A float64 as Go's encoding/json writes it (shortest digits; 'e' form below 1e-6 or
    from 1e21 on, with the exponent's leading zero dropped)."""
    if math.isnan(value) or math.isinf(value):
        raise QuantityError(ERR_FORMAT_WRONG, value)
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    exact = decimal.Decimal(repr(value))
    magnitude = abs(value)
    if 1e-6 <= magnitude < 1e21:
        text = format(exact, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return text
    sign, digit_tuple, exp = exact.as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exp10 = exp + len(digit_tuple) - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp_text = f"{abs(exp10):02d}"
    if exp10 < 0 and exp_text[0] == "0":
        exp_text = exp_text[1:]
    return f"{'-' if sign else ''}{mantissa}e{'-' if exp10 < 0 else '+'}{exp_text}"


def parse_quantity(value: str | int | float | None) -> Quantity:
    """A quantity as the API server decodes it from JSON: a string (surrounding whitespace
    trimmed), an integer, a float (as encoding/json prints it) or null (zero).

    A boolean is not a quantity: it fails as its JSON text would.
    Upstream: Quantity.UnmarshalJSON (quantity.go, v1.35)
    """
    if value is None:
        return ZERO
    if isinstance(value, str):
        return _parse_cached(value.strip())
    if isinstance(value, bool):
        return _parse_cached("true" if value else "false")
    if isinstance(value, int):
        return _parse_cached(str(value))
    if isinstance(value, float):
        return _parse_cached(go_json_float(value))
    raise QuantityError(ERR_FORMAT_WRONG, value)


def parse_resource_list(
    resources: Mapping[str, str | int | float] | None,
) -> dict[str, Quantity]:
    """A ResourceList (name -> quantity), every quantity parsed; raises QuantityError."""
    if not resources:
        return {}
    return {name: parse_quantity(q) for name, q in resources.items()}


def must_parse(text: str) -> Quantity:
    """Parse or raise ValueError("cannot parse ..."). Upstream: MustParse (quantity.go)."""
    try:
        return _parse_cached(text)
    except QuantityError as err:
        raise ValueError(f"cannot parse '{text}': {err}") from err


__all__ = [
    "BINARY_SI",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
    "MILLI",
    "ZERO",
    "Quantity",
    "QuantityError",
    "go_json_float",
    "must_parse",
    "parse_quantity",
    "parse_resource_list",
]
