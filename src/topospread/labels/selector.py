"""Label selectors with apimachinery's semantics: requirements, Everything vs Nothing, parsing.

The distinctions here decide real scheduling outcomes and are easy to get wrong:
- a nil ``LabelSelector`` selects nothing, an empty one (``{}``) selects everything;
- ``Selector.empty`` is true only for a selector without requirements (Everything), never for
  Nothing — PodTopologySpread counts no existing pods for an empty selector;
- ``NotIn``/``!=`` match objects that lack the key; ``Gt``/``Lt`` need integer values on both sides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from topospread.api.field import FieldError, GoJSON, Path, aggregate_message, invalid
from topospread.api.types import LabelSelector
from topospread.util.validation import is_qualified_name, is_valid_label_value


class SelectorError(ValueError):
    """A label selector cannot be turned into requirements (as LabelSelectorAsSelector fails)."""


class Operator(StrEnum):
    """selection.Operator, with apimachinery's spelling of each."""

    DOES_NOT_EXIST = "!"
    EQUALS = "="
    DOUBLE_EQUALS = "=="
    IN = "in"
    NOT_EQUALS = "!="
    NOT_IN = "notin"
    EXISTS = "exists"
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


_INT64_RE: Final = re.compile(r"[+-]?[0-9]+\Z")
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


def parse_int64(text: str) -> int | None:
    """Go's strconv.ParseInt(text, 10, 64): an optional sign and decimal digits, in range."""
    if not _INT64_RE.match(text):
        return None
    value = int(text)
    if value < _INT64_MIN or value > _INT64_MAX:
        return None
    return value


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` term; ``values`` keeps the order it was given in (for printing)."""

    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Upstream: Requirement.Matches (apimachinery/pkg/labels/selector.go)."""
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        # Gt / Lt: both the label's value and the single requirement value must be integers.
        value = labels.get(self.key)
        if value is None:
            return False
        have = parse_int64(value)
        if have is None or len(self.values) != 1:
            return False
        want = parse_int64(self.values[0])
        if want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(sorted(self.values))})"
        if op is Operator.GREATER_THAN:
            return f"{self.key}>{self.values[0]}"
        if op is Operator.LESS_THAN:
            return f"{self.key}<{self.values[0]}"
        return f"{self.key}{op.value}{self.values[0]}"


def _string_slice(values: Sequence[str]) -> GoJSON:
    # A []string bad value prints as JSON; an empty list is a nil slice there: null.
    return GoJSON(list(values) if values else None)


def requirement_errors(
    key: str, operator: Operator, values: Sequence[str], path: Path | None = None
) -> list[FieldError]:
    """Every field error NewRequirement reports for ``key operator values``.

    ``path`` prefixes the field paths (none by default, as LabelSelectorAsSelector passes none).
    Upstream: NewRequirement (apimachinery/pkg/labels/selector.go, v1.35)
    """
    errors: list[FieldError] = []
    key_errors = is_qualified_name(key)
    if key_errors:
        key_path = path.child("key") if path is not None else Path.root("key")
        errors.append(invalid(key_path, key, "; ".join(key_errors)))
    values_path = path.child("values") if path is not None else Path.root("values")
    if operator in (Operator.IN, Operator.NOT_IN):
        if not values:
            errors.append(
                invalid(
                    values_path,
                    _string_slice(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif operator in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(values) != 1:
            errors.append(
                invalid(
                    values_path,
                    _string_slice(values),
                    "exact-match compatibility requires one single value",
                )
            )
    elif operator in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            errors.append(
                invalid(
                    values_path,
                    _string_slice(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    else:
        if len(values) != 1:
            errors.append(
                invalid(
                    values_path,
                    _string_slice(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, v in enumerate(values):
            if parse_int64(v) is None:
                errors.append(
                    invalid(
                        values_path.index(i),
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, v in enumerate(values):
        value_errors = is_valid_label_value(v)
        if value_errors:
            errors.append(invalid(values_path.index(i).key(key), v, "; ".join(value_errors)))
    return errors


def new_requirement(
    key: str, operator: Operator, values: Iterable[str], path: Path | None = None
) -> Requirement:
    """Build a requirement, rejecting what apimachinery rejects, with its messages.

    Upstream: NewRequirement (apimachinery/pkg/labels/selector.go, v1.35)
    """
    vals = tuple(values)
    errors = requirement_errors(key, operator, vals, path)
    if errors:
        raise SelectorError(aggregate_message(errors))
    return Requirement(key, operator, vals)


class Selector:
    """An immutable label selector: Everything, Nothing, or an AND of requirements."""

    __slots__ = ("_hash", "_nothing", "_requirements")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        # Sorted by key, as apimachinery keeps them, so equal selectors print equally.
        self._requirements: tuple[Requirement, ...] = tuple(
            sorted(requirements, key=lambda r: r.key)
        )
        self._nothing = nothing
        # NOTE: the hash, once asked (selectors key the fast path's signatures and counts,
        # asked for several times per scheduling attempt; a Requirement's hash runs Python
        # code, its Operator's too). Never pickled: string hashes differ between processes.
        self._hash: int | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (_selector, (self._requirements, self._nothing))

    @property
    def empty(self) -> bool:
        """True for a selector without requirements (Everything); False for Nothing."""
        return not self._nothing and not self._requirements

    @property
    def is_nothing(self) -> bool:
        return self._nothing

    @property
    def requirements(self) -> tuple[Requirement, ...] | None:
        """The requirements, or None for Nothing (whose Requirements() reports not selectable)."""
        return None if self._nothing else self._requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self._nothing:
            return False
        for r in self._requirements:
            if not r.matches(labels):
                return False
        return True

    def add(self, *requirements: Requirement) -> Selector:
        """A new selector with more requirements; Nothing stays Nothing."""
        if self._nothing:
            return self
        return Selector((*self._requirements, *requirements))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Selector)
            and self._nothing == other._nothing
            and self._requirements == other._requirements
        )

    def __hash__(self) -> int:
        found = self._hash
        if found is None:
            found = self._hash = hash((self._nothing, self._requirements))
        return found

    def __str__(self) -> str:
        if self._nothing:
            return "<none>"
        return ",".join(str(r) for r in self._requirements)

    def __repr__(self) -> str:
        if self._nothing:
            return "Selector(Nothing)"
        if not self._requirements:
            return "Selector(Everything)"
        return f"Selector({self})"


def _selector(requirements: tuple[Requirement, ...], nothing: bool) -> Selector:
    """A pickled Selector, rebuilt (its hash asked again in the process that loads it)."""
    return Selector(requirements, nothing=nothing)


EVERYTHING: Final = Selector()
NOTHING: Final = Selector(nothing=True)


def selector_from_set(label_set: Mapping[str, str]) -> Selector:
    """A selector requiring every ``key=value`` of the set (an empty set selects everything).

    Upstream: SelectorFromSet / Set.AsSelectorPreValidated (apimachinery/pkg/labels)
    """
    return Selector(Requirement(k, Operator.EQUALS, (v,)) for k, v in label_set.items())


def selector_from_validated_set(label_set: Mapping[str, str]) -> Selector:
    """Like :func:`selector_from_set`, but invalid keys or values raise SelectorError.

    Upstream: ValidatedSelectorFromSet (apimachinery/pkg/labels/selector.go)
    """
    return Selector(new_requirement(k, Operator.EQUALS, (v,)) for k, v in label_set.items())


_REQUIREMENT_RE: Final = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<absent>[^\s!=(),]+)"
    r"|(?P<key>[^\s!=(),]+)\s*(?:(?P<op>==|!=|=)\s*(?P<value>[^\s!=(),]*)"
    r"|\s(?P<set>in|notin)\s*\((?P<values>[^()]*)\))?)\s*(?:,|\Z)"
)


def parse(text: str) -> Selector:
    """A selector in kubectl's ``-l`` syntax: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``,
    ``k notin (a,b)``, ``k`` (exists) and ``!k``, comma-separated (an empty text selects
    everything); SelectorError names what does not parse.

    Upstream: Parse (apimachinery/pkg/labels/selector.go)
    """
    requirements: list[Requirement] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _REQUIREMENT_RE.match(text, pos)
        if m is None or m.end() == pos:
            raise SelectorError(f"unable to parse requirement: {text[pos:]!r}")
        pos = m.end()
        if m["absent"] is not None:
            requirements.append(new_requirement(m["absent"], Operator.DOES_NOT_EXIST, ()))
        elif m["op"] is not None:
            op = {"=": Operator.EQUALS, "==": Operator.DOUBLE_EQUALS}.get(
                m["op"], Operator.NOT_EQUALS
            )
            requirements.append(new_requirement(m["key"], op, (m["value"],)))
        elif m["set"] is not None:
            values = tuple(v.strip() for v in m["values"].split(","))
            op = Operator.IN if m["set"] == "in" else Operator.NOT_IN
            requirements.append(new_requirement(m["key"], op, values))
        else:
            requirements.append(new_requirement(m["key"], Operator.EXISTS, ()))
    return Selector(requirements)


_LABEL_SELECTOR_OPERATORS: Final[Mapping[str, Operator]] = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
}


def label_selector_as_selector(selector: LabelSelector | None) -> Selector:
    """Convert a metav1.LabelSelector: nil selects nothing, ``{}`` selects everything.

    Upstream: LabelSelectorAsSelector (apimachinery/pkg/apis/meta/v1/helpers.go, v1.35)
    """
    if selector is None:
        return NOTHING
    if not selector.match_labels and not selector.match_expressions:
        return EVERYTHING
    requirements: list[Requirement] = [
        new_requirement(k, Operator.EQUALS, (v,)) for k, v in selector.match_labels.items()
    ]
    for expr in selector.match_expressions:
        op = _LABEL_SELECTOR_OPERATORS.get(expr.operator)
        if op is None:
            raise SelectorError(f'"{expr.operator}" is not a valid label selector operator')
        requirements.append(new_requirement(expr.key, op, expr.values))
    return Selector(requirements)
