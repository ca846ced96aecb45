"""Required node affinity (nodeSelector AND required terms) as the scheduler reads it.

Semantics of component-helpers/scheduling/corev1/nodeaffinity:
- terms are ORed; within a term matchExpressions and matchFields are ANDed;
- a term with neither expressions nor fields selects no node;
- a term that fails to parse (bad operator, wrong number of values) never matches, but the other
  terms still can ("lazy errors", kept for backwards compatibility);
- matchFields support only ``metadata.name`` with In/NotIn and exactly one value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.types import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod
from topospread.labels.selector import (
    Operator,
    Requirement,
    Selector,
    SelectorError,
    new_requirement,
    selector_from_set,
)

_NODE_SELECTOR_OPERATORS: Final[Mapping[str, Operator]] = {
    "In": Operator.IN,
    "NotIn": Operator.NOT_IN,
    "Exists": Operator.EXISTS,
    "DoesNotExist": Operator.DOES_NOT_EXIST,
    "Gt": Operator.GREATER_THAN,
    "Lt": Operator.LESS_THAN,
}


def node_selector_requirements_as_selector(
    requirements: Sequence[NodeSelectorRequirement],
) -> Selector:
    """Turn matchExpressions into a label selector; raises SelectorError on a bad requirement.

    Upstream: NodeSelectorRequirementsAsSelector (component-helpers nodeaffinity, v1.35)
    """
    parsed: list[Requirement] = []
    for expr in requirements:
        op = _NODE_SELECTOR_OPERATORS.get(expr.operator)
        if op is None:
            raise SelectorError(f'"{expr.operator}" is not a valid node selector operator')
        parsed.append(new_requirement(expr.key, op, expr.values))
    return Selector(parsed)


@dataclass(frozen=True, slots=True)
class _FieldTerm:
    """One matchFields requirement: ``field == value`` (In) or ``field != value`` (NotIn)."""

    field: str
    value: str
    equal: bool

    def matches(self, fields: Mapping[str, str]) -> bool:
        # fields.Set.Get returns "" for an absent field, so NotIn matches a missing field.
        have = fields.get(self.field, "")
        return (have == self.value) == self.equal


def _parse_field_terms(requirements: Sequence[NodeSelectorRequirement]) -> tuple[_FieldTerm, ...]:
    terms: list[_FieldTerm] = []
    for expr in requirements:
        if expr.operator not in ("In", "NotIn"):
            raise SelectorError(
                f'Unsupported value: "{expr.operator}": supported values: "In", "NotIn"'
            )
        if len(expr.values) != 1:
            raise SelectorError("must have one element")
        terms.append(_FieldTerm(expr.key, expr.values[0], expr.operator == "In"))
    return tuple(terms)


@dataclass(frozen=True, slots=True)
class _ParsedTerm:
    labels: Selector | None
    fields: tuple[_FieldTerm, ...] | None
    parse_error: str | None

    def matches(self, node_labels: Mapping[str, str], node_fields: Mapping[str, str]) -> bool:
        if self.parse_error is not None:
            return False
        if self.labels is not None and not self.labels.matches(node_labels):
            return False
        # Upstream applies field terms only when the node has fields (a name).
        return not (
            self.fields is not None
            and node_fields
            and not all(t.matches(node_fields) for t in self.fields)
        )


def _parse_term(term: NodeSelectorTerm) -> _ParsedTerm:
    labels: Selector | None = None
    fields: tuple[_FieldTerm, ...] | None = None
    try:
        if term.match_expressions:
            labels = node_selector_requirements_as_selector(term.match_expressions)
        if term.match_fields:
            fields = _parse_field_terms(term.match_fields)
    except SelectorError as err:
        return _ParsedTerm(None, None, str(err))
    return _ParsedTerm(labels, fields, None)


class LazyErrorNodeSelector:
    """A parsed NodeSelector whose invalid terms simply never match.

    Upstream: LazyErrorNodeSelector (component-helpers nodeaffinity, v1.35)
    """

    __slots__ = ("_terms",)

    def __init__(self, selector: NodeSelector) -> None:
        self._terms = tuple(
            _parse_term(t)
            for t in selector.node_selector_terms
            # An empty term selects no objects.
            if t.match_expressions or t.match_fields
        )

    def match(self, node: Node) -> bool:
        fields = {"metadata.name": node.metadata.name} if node.metadata.name else {}
        labels = node.metadata.labels
        return any(t.matches(labels, fields) for t in self._terms)


class RequiredNodeAffinity:
    """A pod's nodeSelector and required node affinity, matched together against a node.

    Upstream: RequiredNodeAffinity / GetRequiredNodeAffinity (component-helpers nodeaffinity)
    """

    __slots__ = ("_label_selector", "_node_selector")

    def __init__(self, pod: Pod) -> None:
        spec = pod.spec
        self._label_selector = selector_from_set(spec.node_selector) if spec.node_selector else None
        required = None
        if spec.affinity is not None and spec.affinity.node_affinity is not None:
            required = (
                spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
            )
        self._node_selector = LazyErrorNodeSelector(required) if required is not None else None

    @property
    def is_trivial(self) -> bool:
        """True when the pod sets neither a nodeSelector nor required node affinity."""
        return self._label_selector is None and self._node_selector is None

    def match(self, node: Node) -> bool:
        if self._label_selector is not None and not self._label_selector.matches(
            node.metadata.labels
        ):
            return False
        if self._node_selector is not None:
            return self._node_selector.match(node)
        return True


def get_required_node_affinity(pod: Pod) -> RequiredNodeAffinity:
    """Upstream: GetRequiredNodeAffinity (component-helpers nodeaffinity, v1.35)."""
    return RequiredNodeAffinity(pod)
