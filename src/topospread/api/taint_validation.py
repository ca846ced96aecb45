"""A node's taints and a pod's tolerations as kube-apiserver v1.35 validates them, with its
messages and field paths (pkg/apis/core/validation).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    duplicate,
    go_quote,
    invalid,
    not_supported,
    required,
)
from topospread.api.meta_validation import validate_label_name
from topospread.api.types import (
    TAINT_EFFECT_NO_EXECUTE,
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TOLERATION_OP_EQUAL,
    TOLERATION_OP_EXISTS,
    Taint,
    Toleration,
)
from topospread.util.validation import (
    is_decimal_integer,
    is_valid_label_value,
)

SUPPORTED_TAINT_EFFECTS: Final = (
    TAINT_EFFECT_NO_SCHEDULE,
    TAINT_EFFECT_PREFER_NO_SCHEDULE,
    TAINT_EFFECT_NO_EXECUTE,
)
TOLERATION_OP_LT: Final = "Lt"
TOLERATION_OP_GT: Final = "Gt"


# ---------------------------------------------------------------------------------------------
# Taints and tolerations


def _validate_taint_effect(effect: str, path: Path, *, allow_empty: bool) -> list[FieldError]:
    """Upstream: validateTaintEffect (pkg/apis/core/validation/validation.go, v1.35)"""
    if not effect:
        return [] if allow_empty else [required(path)]
    if effect in SUPPORTED_TAINT_EFFECTS:
        return []
    return [not_supported(path, GoJSON(effect), SUPPORTED_TAINT_EFFECTS)]


def _parse_int64_error(value: str) -> str | None:
    """The error text of Go's ``strconv.ParseInt(value, 10, 64)``, or None if it parses."""
    body = value[1:] if value[:1] in ("+", "-") else value
    if not body or not body.isascii() or not body.isdigit():
        return f"strconv.ParseInt: parsing {go_quote(value)}: invalid syntax"
    if not -(2**63) <= int(value) <= 2**63 - 1:
        return f"strconv.ParseInt: parsing {go_quote(value)}: value out of range"
    return None


def validate_tolerations(
    tolerations: Sequence[Toleration],
    path: Path,
    *,
    allow_comparison_operators: bool = False,
) -> list[FieldError]:
    """Keys, operators, values and effects of tolerations.

    With the alpha gate ``TaintTolerationComparisonOperators`` off (the v1.35 default), ``Lt``
    and ``Gt`` are rejected — with a list of supported values that names them anyway.

    Upstream: ValidateTolerations (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for i, t in enumerate(tolerations):
        idx = path.index(i)
        operator_path = idx.child("operator")
        if t.key:
            errs += validate_label_name(t.key, idx.child("key"))
        if not t.key and t.operator != TOLERATION_OP_EXISTS:
            errs.append(
                invalid(
                    operator_path,
                    GoJSON(t.operator),
                    'operator must be Exists when `key` is empty, which means "match all values '
                    'and all keys"',
                )
            )
        if t.toleration_seconds is not None and t.effect != TAINT_EFFECT_NO_EXECUTE:
            errs.append(
                invalid(
                    idx.child("effect"),
                    GoJSON(t.effect),
                    "effect must be 'NoExecute' when `tolerationSeconds` is set",
                )
            )
        if t.operator in (TOLERATION_OP_EQUAL, ""):
            value_errs = is_valid_label_value(t.value)
            if value_errs:
                errs.append(invalid(operator_path, t.value, ";".join(value_errs)))
        elif t.operator == TOLERATION_OP_EXISTS:
            if t.value:
                errs.append(
                    invalid(
                        operator_path, t.value, "value must be empty when `operator` is 'Exists'"
                    )
                )
        elif t.operator in (TOLERATION_OP_LT, TOLERATION_OP_GT):
            if not allow_comparison_operators:
                errs.append(
                    not_supported(
                        operator_path,
                        GoJSON(t.operator),
                        (
                            TOLERATION_OP_EQUAL,
                            TOLERATION_OP_EXISTS,
                            TOLERATION_OP_LT,
                            TOLERATION_OP_GT,
                        ),
                    )
                )
            else:
                value_path = idx.child("value")
                errs.extend(invalid(value_path, t.value, m) for m in is_decimal_integer(t.value))
                parse_error = _parse_int64_error(t.value)
                if parse_error is not None:
                    errs.append(invalid(value_path, t.value, parse_error))
        else:
            errs.append(
                not_supported(
                    operator_path, GoJSON(t.operator), (TOLERATION_OP_EQUAL, TOLERATION_OP_EXISTS)
                )
            )
        if t.effect:
            errs += _validate_taint_effect(t.effect, idx.child("effect"), allow_empty=True)
    return errs


def _go_time_json(text: str | None) -> str | None:
    """A ``metav1.Time`` as it marshals: RFC 3339 in UTC, to the second."""
    if text is None:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def validate_taints(taints: Sequence[Taint], path: Path) -> list[FieldError]:
    """Key, value and (required) effect of each taint, and no repeated ``{key, effect}``.

    A repeat is reported as ``Duplicate value`` with the whole internal ``core.Taint`` marshalled
    to JSON (its fields have no JSON tags, hence ``{"Key":...,"TimeAdded":null}``) and the
    detail upstream writes into the error by hand.

    Upstream: validateNodeTaints (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    seen: dict[str, set[str]] = {}
    for i, taint in enumerate(taints):
        idx = path.index(i)
        errs += validate_label_name(taint.key, idx.child("key"))
        value_errs = is_valid_label_value(taint.value)
        if value_errs:
            errs.append(invalid(idx.child("value"), taint.value, ";".join(value_errs)))
        errs += _validate_taint_effect(taint.effect, idx.child("effect"), allow_empty=False)
        keys = seen.setdefault(taint.effect, set())
        if taint.key in keys:
            as_struct = {
                "Key": taint.key,
                "Value": taint.value,
                "Effect": taint.effect,
                "TimeAdded": _go_time_json(taint.time_added),
            }
            errs.append(
                duplicate(idx, GoJSON(as_struct), "taints must be unique by key and effect pair")
            )
            continue
        keys.add(taint.key)
    return errs
