"""NodePools: what Karpenter may launch (requirements, taints, labels), how much (limits), in
which order (weight), and how it may take nodes away again (the disruption block).

Parsed from a NodePool manifest (``apiVersion: karpenter.sh/v1``, ``kind: NodePool``) or the
bare spec with a ``name``; errors name the NodePool and the field and raise ManifestError.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from topospread.api.resource import parse_quantity
from topospread.api.types import Taint
from topospread.autoscaler.clusterautoscaler.options import parse_go_duration
from topospread.autoscaler.karpenter.requirements import (
    NODEPOOL_LABEL,
    OPERATORS,
    Requirement,
    Requirements,
    from_labels,
)
from topospread.errors import ManifestError

CONSOLIDATION_WHEN_EMPTY: Final = "WhenEmpty"
CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED: Final = "WhenEmptyOrUnderutilized"
REASON_EMPTY: Final = "Empty"
REASON_UNDERUTILIZED: Final = "Underutilized"
REASON_DRIFTED: Final = "Drifted"
DISRUPTION_REASONS: Final = (REASON_EMPTY, REASON_UNDERUTILIZED, REASON_DRIFTED)


@dataclass(frozen=True, slots=True)
class Budget:
    """At most ``nodes`` (a count or ``N%`` of the NodePool's nodes) disrupted at once, for the
    listed reasons (all when empty).

    Upstream: v1.Budget (pkg/apis/v1/nodepool.go); schedule/duration windows are not modelled.
    """

    nodes: str = "10%"
    reasons: tuple[str, ...] = ()

    def allowed(self, total_nodes: int) -> int:
        """Upstream: GetScaledValueFromIntOrPercent(nodes, total, roundUp=true)"""
        if self.nodes.endswith("%"):
            return math.ceil(int(self.nodes[:-1]) * total_nodes / 100)
        return int(self.nodes)


@dataclass(frozen=True, slots=True)
class NodePool:
    """Upstream: v1.NodePool's spec"""

    name: str
    requirements: tuple[Requirement, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    limits_cpu_milli: int | None = None
    limits_memory: int | None = None
    weight: int = 0
    consolidation_policy: str = CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED
    consolidate_after: float = 0.0
    budgets: tuple[Budget, ...] = (Budget(),)

    def node_requirements(self) -> Requirements:
        """The requirements of a nodeclaim from this pool: its requirements, its labels and
        the nodepool label. Upstream: NodeClaimTemplate's Requirements"""
        reqs = Requirements(self.requirements)
        reqs.add(*from_labels({**self.labels, NODEPOOL_LABEL: self.name}).values())
        return reqs

    def allowed_disruptions(self, total_nodes: int, disrupting: int, reason: str) -> int:
        """How many more nodes may be disrupted for ``reason``: the smallest active budget
        minus the nodes already being disrupted. Upstream: GetAllowedDisruptionsByReason"""
        allowed = min(
            (b.allowed(total_nodes) for b in self.budgets if not b.reasons or reason in b.reasons),
            default=1 << 31,
        )
        return max(0, allowed - disrupting)


def _bad(path: str, value: object, detail: str) -> ManifestError:
    return ManifestError(f"{path}: Invalid value: {value!r}: {detail}")


def _parse_requirement(raw: object, where: str) -> Requirement:
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with key, operator, values")
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise ManifestError(f"{where}.key: Required value")
    op = raw.get("operator")
    if op not in OPERATORS:
        supported = ", ".join(f'"{o}"' for o in OPERATORS)
        raise ManifestError(
            f"{where}.operator: Unsupported value: {op!r}: supported values: {supported}"
        )
    values = raw.get("values", [])
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise _bad(f"{where}.values", values, "expected a list of strings")
    if op in ("In",) and not values:
        raise ManifestError(f"{where}.values: Required value: operator In needs values")
    if op in ("Exists", "DoesNotExist") and values:
        raise _bad(f"{where}.values", values, f"operator {op} takes no values")
    if op in ("Gt", "Lt") and (len(values) != 1 or not values[0].lstrip("-").isdigit()):
        raise _bad(f"{where}.values", values, f"operator {op} needs one integer value")
    return Requirement.new(key, str(op), values)


def _parse_budget(raw: object, where: str) -> Budget:
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with nodes")
    if "schedule" in raw or "duration" in raw:
        raise ManifestError(f"{where}.schedule: budgets with a schedule are not modelled")
    nodes = raw.get("nodes", "10%")
    text = str(nodes) if isinstance(nodes, int) and not isinstance(nodes, bool) else nodes
    if not isinstance(text, str) or not (
        text.isdigit() or (text.endswith("%") and text[:-1].isdigit() and int(text[:-1]) <= 100)
    ):
        raise _bad(f"{where}.nodes", nodes, "expected a count or a percentage such as 10%")
    reasons = raw.get("reasons", [])
    if not isinstance(reasons, list) or any(r not in DISRUPTION_REASONS for r in reasons):
        raise _bad(
            f"{where}.reasons", reasons, f"expected a list of {', '.join(DISRUPTION_REASONS)}"
        )
    return Budget(text, tuple(reasons))


def _parse_taint(raw: object, where: str) -> Taint:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("key"), str):
        raise ManifestError(f"{where}.key: Required value")
    effect = raw.get("effect", "")
    if effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
        raise ManifestError(
            f'{where}.effect: Unsupported value: {effect!r}: supported values: "NoExecute", '
            '"NoSchedule", "PreferNoSchedule"'
        )
    return Taint(key=str(raw["key"]), value=str(raw.get("value", "")), effect=str(effect))


def _mapping(raw: object, where: str) -> Mapping[str, object]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping")
    return raw


def _limit(limits: Mapping[str, object], key: str, where: str, milli: bool) -> int | None:
    if key not in limits:
        return None
    value = limits[key]
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _bad(f"{where}.{key}", value, "expected a quantity")
    try:
        q = parse_quantity(value)
    except ValueError as e:
        raise _bad(f"{where}.{key}", value, str(e)) from e
    return q.milli_value() if milli else q.value()


def parse_nodepool(raw: object, where: str) -> NodePool:
    """A NodePool from its manifest, or from ``{name, requirements, ...}`` (the spec fields
    at the top level, the template's fields beside them)."""
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a NodePool mapping")
    manifest = "spec" in raw
    if manifest:
        name = _mapping(raw.get("metadata"), f"{where}: metadata").get("name")
        spec = _mapping(raw["spec"], f"{where}: spec")
        template = _mapping(spec.get("template"), f"{where}: spec.template")
        tmeta = _mapping(template.get("metadata"), f"{where}: spec.template.metadata")
        tspec = _mapping(template.get("spec"), f"{where}: spec.template.spec")
    else:
        name, spec, tmeta, tspec = raw.get("name"), raw, raw, raw
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{where}: metadata.name: Required value: a NodePool needs a name")
    # Field paths as the API server writes them: "nodepool web: spec.limits".
    where = f"nodepool {name}: " + ("spec." if manifest else "")
    tpath = f"nodepool {name}: " + ("spec.template.spec." if manifest else "")
    raw_reqs = tspec.get("requirements", [])
    if not isinstance(raw_reqs, list):
        raise ManifestError(f"{tpath}requirements: expected a list")
    requirements = tuple(
        _parse_requirement(r, f"{tpath}requirements[{i}]") for i, r in enumerate(raw_reqs)
    )
    raw_taints = tspec.get("taints", [])
    if not isinstance(raw_taints, list):
        raise ManifestError(f"{tpath}taints: expected a list")
    taints = tuple(_parse_taint(t, f"{tpath}taints[{i}]") for i, t in enumerate(raw_taints))
    labels = _mapping(tmeta.get("labels"), f"{where}labels")
    limits = _mapping(spec.get("limits"), f"{where}limits")
    weight = spec.get("weight", 0)
    if (
        isinstance(weight, bool)
        or not isinstance(weight, int)
        or not (1 <= weight <= 100 or ("weight" not in spec and weight == 0))
    ):
        raise _bad(f"{where}weight", weight, "must be between 1 and 100")
    disruption = _mapping(spec.get("disruption"), f"{where}disruption")
    policy = disruption.get("consolidationPolicy", CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED)
    if policy not in (CONSOLIDATION_WHEN_EMPTY, CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED):
        raise ManifestError(
            f"{where}disruption.consolidationPolicy: Unsupported value: {policy!r}: supported "
            f'values: "{CONSOLIDATION_WHEN_EMPTY}", "{CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED}"'
        )
    after_raw = disruption.get("consolidateAfter", "0s")
    try:
        after = math.inf if after_raw == "Never" else parse_go_duration(str(after_raw))
    except ValueError as e:
        raise _bad(
            f"{where}disruption.consolidateAfter", after_raw, "expected a duration or Never"
        ) from e
    raw_budgets = disruption.get("budgets", [{"nodes": "10%"}])
    if not isinstance(raw_budgets, list):
        raise ManifestError(f"{where}disruption.budgets: expected a list")
    budgets = tuple(
        _parse_budget(b, f"{where}disruption.budgets[{i}]") for i, b in enumerate(raw_budgets)
    )
    return NodePool(
        name,
        requirements,
        {str(k): str(v) for k, v in labels.items()},
        taints,
        _limit(limits, "cpu", f"{where}limits", milli=True),
        _limit(limits, "memory", f"{where}limits", milli=False),
        weight,
        str(policy),
        after,
        budgets,
    )


def parse_nodepools(raw: object, where: str) -> list[NodePool]:
    """A list of NodePools with unique names."""
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: expected a list of NodePools")
    out: list[NodePool] = []
    for i, item in enumerate(raw):
        pool = parse_nodepool(item, f"{where}[{i}]")
        if any(p.name == pool.name for p in out):
            raise ManifestError(f'{where}[{i}]: name: Duplicate value: "{pool.name}"')
        out.append(pool)
    return out


def sorted_by_weight(pools: Sequence[NodePool]) -> list[NodePool]:
    """Highest weight first, then by name. Upstream: NodePoolList.OrderByWeight"""
    return sorted(pools, key=lambda p: (-p.weight, p.name))
