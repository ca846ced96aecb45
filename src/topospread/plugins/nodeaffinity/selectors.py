"""Strictly parsed node selectors: errors are reported with their field paths, not swallowed.

A pod's *required* node affinity is parsed lazily (``topospread.nodeaffinity``): a bad term
never matches. The scheduler-enforced ``addedAffinity`` and every set of *preferred* terms are
parsed strictly instead, and their errors are apimachinery's field errors, path and all
(``[0].matchExpressions[0].key: Invalid value: ...``). A selector that parses without error is
then matched by the shared lazy selector, so both parse paths agree on what matches.
Upstream: NewNodeSelector, NewPreferredSchedulingTerms (component-helpers
scheduling/corev1/nodeaffinity/nodeaffinity.go) and labels.NewRequirement (apimachinery), v1.35.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.field import FieldError, GoJSON, Path, as_path, invalid, not_supported
from topospread.api.types import (
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from topospread.labels.selector import Operator
from topospread.labels.selector import requirement_errors as label_requirement_errors
from topospread.nodeaffinity import LazyErrorNodeSelector

_NODE_SELECTOR_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_SELECTOR_OPERATORS: Final = ("In", "NotIn")

# A nil field path: its first index prints as "[0]" (how upstream reports a pod's own terms).
_NIL_PATH: Final = Path.nil()


def to_path(path: Path | str) -> Path:
    """A field path; ``""`` is the nil path, any other string a verbatim root."""
    if isinstance(path, Path):
        return path
    return _NIL_PATH if not path else as_path(path)


def aggregate_message(errors: Sequence[str]) -> str:
    """One error, or ``[e1, e2]`` with duplicates dropped (Upstream: utilerrors aggregate)."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


class NodeSelectorParseError(ValueError):
    """A node selector (or preferred terms) did not parse; ``errors`` are field errors."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__(aggregate_message(self.errors))


_OPERATORS: Final = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}


def requirement_errors(
    key: str, operator: str, values: Sequence[str], path: Path
) -> list[FieldError]:
    """Field errors of one label requirement (``operator`` a node selector operator).

    Upstream: NewRequirement (apimachinery/pkg/labels/selector.go, v1.35)
    """
    return label_requirement_errors(key, _OPERATORS[operator], values, path)


def _match_expressions_errors(
    exprs: Sequence[NodeSelectorRequirement], path: Path
) -> list[FieldError]:
    """Upstream: nodeSelectorRequirementsAsSelector (nodeaffinity.go, v1.35)."""
    errors: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = path.index(i)
        if expr.operator not in _NODE_SELECTOR_OPERATORS:
            # The operator is a named string type (NodeSelectorOperator): printed as JSON.
            errors.append(
                not_supported(p.child("operator"), GoJSON(expr.operator), _NODE_SELECTOR_OPERATORS)
            )
            continue
        errors.extend(requirement_errors(expr.key, expr.operator, expr.values, p))
    return errors


def _match_fields_errors(exprs: Sequence[NodeSelectorRequirement], path: Path) -> list[FieldError]:
    """Upstream: nodeSelectorRequirementsAsFieldSelector (nodeaffinity.go, v1.35)."""
    errors: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = path.index(i)
        if expr.operator in _FIELD_SELECTOR_OPERATORS:
            if len(expr.values) != 1:
                errors.append(
                    invalid(
                        p.child("values"),
                        GoJSON(list(expr.values) if expr.values else None),
                        "must have one element",
                    )
                )
        else:
            errors.append(
                not_supported(p.child("operator"), GoJSON(expr.operator), _FIELD_SELECTOR_OPERATORS)
            )
    return errors


def is_empty_node_selector_term(term: NodeSelectorTerm) -> bool:
    """An empty term selects no node and is skipped (Upstream: isEmptyNodeSelectorTerm)."""
    return not term.match_expressions and not term.match_fields


def node_selector_term_errors(term: NodeSelectorTerm, path: Path) -> list[FieldError]:
    """Upstream: newNodeSelectorTerm (nodeaffinity.go, v1.35)."""
    errors: list[FieldError] = []
    if term.match_expressions:
        errors.extend(
            _match_expressions_errors(term.match_expressions, path.child("matchExpressions"))
        )
    if term.match_fields:
        errors.extend(_match_fields_errors(term.match_fields, path.child("matchFields")))
    return errors


def node_selector_errors(selector: NodeSelector, path: Path | str = "") -> list[str]:
    """Every parse error of a NodeSelector's non-empty terms, in order, as field errors.

    Upstream: the errors NewNodeSelector collects (component-helpers nodeaffinity, v1.35)
    """
    terms_path = to_path(path).child("nodeSelectorTerms")
    errors: list[FieldError] = []
    for i, term in enumerate(selector.node_selector_terms):
        if is_empty_node_selector_term(term):
            continue
        errors.extend(node_selector_term_errors(term, terms_path.index(i)))
    return [str(e) for e in errors]


def preferred_terms_errors(
    terms: Sequence[PreferredSchedulingTerm], path: Path | str = ""
) -> list[str]:
    """Parse errors of the terms that count (non-zero weight, non-empty preference).

    The path of a term is ``<path>[i]``, with no ``.preference`` segment, as upstream's.
    Upstream: the errors NewPreferredSchedulingTerms collects (nodeaffinity.go, v1.35)
    """
    base = to_path(path)
    errors: list[FieldError] = []
    for i, term in enumerate(terms):
        if term.weight == 0 or is_empty_node_selector_term(term.preference):
            continue
        errors.extend(node_selector_term_errors(term.preference, base.index(i)))
    return [str(e) for e in errors]


def new_node_selector(selector: NodeSelector, path: Path | str = "") -> LazyErrorNodeSelector:
    """A NodeSelector that parsed without error; raises NodeSelectorParseError otherwise.

    Upstream: NewNodeSelector (component-helpers nodeaffinity, v1.35)
    """
    errors = node_selector_errors(selector, path)
    if errors:
        raise NodeSelectorParseError(errors)
    return LazyErrorNodeSelector(selector)


@dataclass(frozen=True, slots=True)
class PreferredSchedulingTerms:
    """Weighted terms; a node scores the sum of the weights of the terms it matches.

    Upstream: PreferredSchedulingTerms (component-helpers nodeaffinity, v1.35)
    """

    terms: tuple[tuple[int, LazyErrorNodeSelector], ...]

    def score(self, node: Node) -> int:
        """Upstream: PreferredSchedulingTerms.Score (nodeaffinity.go, v1.35)."""
        return sum(weight for weight, selector in self.terms if selector.match(node))


def new_preferred_scheduling_terms(
    terms: Sequence[PreferredSchedulingTerm], path: Path | str = ""
) -> PreferredSchedulingTerms:
    """Parse the terms with a non-zero weight; raises NodeSelectorParseError on any error.

    Upstream: NewPreferredSchedulingTerms (component-helpers nodeaffinity, v1.35)
    """
    errors = preferred_terms_errors(terms, path)
    if errors:
        raise NodeSelectorParseError(errors)
    return PreferredSchedulingTerms(
        tuple(
            (t.weight, LazyErrorNodeSelector(NodeSelector(node_selector_terms=[t.preference])))
            for t in terms
            if t.weight != 0 and not is_empty_node_selector_term(t.preference)
        )
    )
