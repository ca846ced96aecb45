"""Karpenter's scheduling requirements: per label key, the set of values a node may carry.

A requirement is a value set that is either listed (``In``, ``DoesNotExist`` as the empty list)
or the complement of a list (``NotIn``, ``Exists`` as the complement of nothing), optionally
bounded by ``Gt``/``Lt`` on integer values. NodePools, instance types, pods and nodeclaims all
speak it; a nodeclaim's requirements are the intersection of its NodePool's and its pods', and
narrow as pods join it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Final

from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_REGION,
    LABEL_TOPOLOGY_ZONE,
    NodeSelectorRequirement,
    Pod,
)

CAPACITY_TYPE_LABEL: Final = "karpenter.sh/capacity-type"
NODEPOOL_LABEL: Final = "karpenter.sh/nodepool"
CAPACITY_TYPE_SPOT: Final = "spot"
CAPACITY_TYPE_ON_DEMAND: Final = "on-demand"

# Upstream: v1.NormalizedLabels: aliases translated to the well-known keys in every requirement.
NORMALIZED_LABELS: Final = {
    LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_TOPOLOGY_ZONE,
    "beta.kubernetes.io/arch": LABEL_ARCH_STABLE,
    "beta.kubernetes.io/os": LABEL_OS_STABLE,
    "beta.kubernetes.io/instance-type": LABEL_INSTANCE_TYPE_STABLE,
    LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_TOPOLOGY_REGION,
}


def normalized_key(key: str) -> str:
    return NORMALIZED_LABELS.get(key, key)


# Upstream: v1.WellKnownLabels (pkg/apis/v1/labels.go): the keys a nodeclaim may leave
# undefined while a pod asks for them (the cloud fills them in at launch); v1.RestrictedLabels.
UPSTREAM_WELL_KNOWN_LABELS: Final = frozenset(
    {
        NODEPOOL_LABEL,
        LABEL_TOPOLOGY_ZONE,
        LABEL_TOPOLOGY_REGION,
        LABEL_INSTANCE_TYPE_STABLE,
        LABEL_ARCH_STABLE,
        LABEL_OS_STABLE,
        CAPACITY_TYPE_LABEL,
        "node.kubernetes.io/windows-build",
    }
)
RESTRICTED_LABELS: Final = frozenset({LABEL_HOSTNAME})

OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


def _as_int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class Requirement:
    """The values one label key may take.

    Upstream: scheduling.Requirement (pkg/scheduling/requirement.go)
    """

    key: str
    complement: bool
    values: frozenset[str] = frozenset()
    greater_than: int | None = None
    less_than: int | None = None
    # How many distinct values of the key a nodeclaim's instance types must cover at least
    # (a NodePool requirement's minValues); None when not set.
    min_values: int | None = None

    @staticmethod
    def new(
        key: str, operator: str, values: Iterable[str] = (), min_values: int | None = None
    ) -> Requirement:
        """Upstream: NewRequirementWithFlexibility (an aliased key becomes its well-known
        key)"""
        r = Requirement._new(key, operator, values)
        return r if min_values is None else replace(r, min_values=min_values)

    @staticmethod
    def _new(key: str, operator: str, values: Iterable[str]) -> Requirement:
        key = NORMALIZED_LABELS.get(key, key)
        vals = frozenset(values)
        if operator == "In":
            return Requirement(key, False, vals)
        if operator == "NotIn":
            return Requirement(key, True, vals)
        if operator == "Exists":
            return Requirement(key, True)
        if operator == "DoesNotExist":
            return Requirement(key, False)
        if operator in ("Gt", "Lt"):
            bound = _as_int(next(iter(vals), ""))
            if bound is None:
                raise ValueError(f"{operator} needs one integer value")
            if operator == "Gt":
                return Requirement(key, True, greater_than=bound)
            return Requirement(key, True, less_than=bound)
        raise ValueError(f"unknown operator {operator!r}")

    def _within_bounds(self, value: str) -> bool:
        if self.greater_than is None and self.less_than is None:
            return True
        n = _as_int(value)
        if n is None:
            return False
        if self.greater_than is not None and n <= self.greater_than:
            return False
        return not (self.less_than is not None and n >= self.less_than)

    def has(self, value: str) -> bool:
        if self.complement:
            return value not in self.values and self._within_bounds(value)
        return value in self.values and self._within_bounds(value)

    def __len__(self) -> int:
        if self.complement:
            if (
                self.greater_than is not None
                and self.less_than is not None
                and self.less_than - self.greater_than <= 1
            ):
                return 0
            return 1 << 62
        return len(self.values)

    @property
    def operator(self) -> str:
        if self.complement:
            return "NotIn" if self.values else "Exists"
        return "In" if self.values else "DoesNotExist"

    def any(self) -> str:
        """One allowed value: the smallest listed one (deterministic, where upstream picks any)."""
        if not self.complement and self.values:
            return min(self.values)
        return ""

    def intersection(self, other: Requirement) -> Requirement:
        """Upstream: Requirement.Intersection (the larger minValues is kept)"""
        gt = max(
            (b for b in (self.greater_than, other.greater_than) if b is not None), default=None
        )
        lt = min((b for b in (self.less_than, other.less_than) if b is not None), default=None)
        mv = max((m for m in (self.min_values, other.min_values) if m is not None), default=None)
        if self.complement and other.complement:
            return Requirement(self.key, True, self.values | other.values, gt, lt, mv)
        if self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        bounded = Requirement(self.key, False, frozenset(), gt, lt)
        return Requirement(
            self.key,
            False,
            frozenset(v for v in values if bounded._within_bounds(v)),
            min_values=mv,
        )

    def sorted_values(self) -> list[str]:
        return sorted(self.values)

    def __str__(self) -> str:
        """Upstream: Requirement.String (Gt n shown as >=n+1, Lt n as <=n-1; at most five
        values)"""
        if self.operator in ("Exists", "DoesNotExist"):
            text = f"{self.key} {self.operator}"
        else:
            values = self.sorted_values()
            if len(values) > 5:
                values = [*values[:5], f"and {len(values) - 5} others"]
            text = f"{self.key} {self.operator} [{' '.join(values)}]"
        if self.greater_than is not None:
            text += f" >={self.greater_than + 1}"
        if self.less_than is not None:
            text += f" <={self.less_than - 1}"
        if self.min_values is not None:
            text += f" minValues {self.min_values}"
        return text


_ABSENCE: Final = ("NotIn", "DoesNotExist")


def _label_hint(key: str, candidates: Iterable[str]) -> str:
    """Upstream: labelHint (a well-known or present key the undefined one may be a typo of;
    Go's map order picks among several, sorted here)"""
    suffix = key.split("/", 1)[1] if "/" in key else key
    for known in sorted(candidates):
        if key in known or known.endswith(suffix):
            return f' (typo of "{known}"?)'
    return ""


class Requirements(Mapping[str, Requirement]):
    """Requirements keyed by label key; adding a requirement for a key intersects it.

    Upstream: scheduling.Requirements (pkg/scheduling/requirements.go)
    """

    __slots__ = ("_by_key",)

    def __init__(self, requirements: Iterable[Requirement] = ()) -> None:
        self._by_key: dict[str, Requirement] = {}
        self.add(*requirements)

    def add(self, *requirements: Requirement) -> None:
        for r in requirements:
            existing = self._by_key.get(r.key)
            self._by_key[r.key] = r if existing is None else existing.intersection(r)

    def copy(self) -> Requirements:
        out = Requirements()
        out._by_key = dict(self._by_key)
        return out

    def __getitem__(self, key: str) -> Requirement:
        return self._by_key[key]

    def get_or_exists(self, key: str) -> Requirement:
        """The requirement on ``key``; Exists when none is set (upstream's Get)."""
        return self._by_key.get(key) or Requirement(key, True)

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_key)

    def __len__(self) -> int:
        return len(self._by_key)

    def compatible(self, incoming: Requirements, allow_undefined_well_known: bool = True) -> str:
        """ "" when ``incoming`` can be satisfied together with these requirements, else why not.

        A key that only ``incoming`` names is fine when it is a well-known label (with
        ``allow_undefined_well_known``) or asks for absence (NotIn, DoesNotExist).
        Upstream: Requirements.Compatible and Intersects
        """
        allowed = UPSTREAM_WELL_KNOWN_LABELS if allow_undefined_well_known else frozenset()
        for key in sorted(incoming):
            if key in allowed or key in self._by_key or incoming[key].operator in _ABSENCE:
                continue
            hint = _label_hint(key, allowed) or _label_hint(key, self._by_key)
            return f'label "{key}" does not have known values{hint}'
        for key in sorted(incoming):
            have = self._by_key.get(key)
            if have is not None and not _intersect(have, incoming[key]):
                return f"key {key}, {incoming[key]} not in {have}"
        return ""

    def intersects(self, other: Requirements) -> bool:
        """Whether every key both name can take a common value (keys only one side names
        do not matter). Upstream: Requirements.Intersects"""
        for key, mine in self._by_key.items():
            theirs = other._by_key.get(key)
            if theirs is not None and not _intersect(mine, theirs):
                return False
        return True

    def has_min_values(self) -> bool:
        """Upstream: Requirements.HasMinValues"""
        return any(r.min_values is not None for r in self._by_key.values())

    def labels(self) -> dict[str, str]:
        """The labels a node launched with these requirements carries: every key with exactly
        one allowed value (upstream: Requirements.Labels)."""
        return {
            k: next(iter(r.values))
            for k, r in sorted(self._by_key.items())
            if not r.complement and len(r.values) == 1
        }

    def __str__(self) -> str:
        """Upstream: Requirements.String (hostname left out, sorted as text)"""
        return ", ".join(
            sorted(str(r) for k, r in self._by_key.items() if k not in RESTRICTED_LABELS)
        )


def _intersect(existing: Requirement, incoming: Requirement) -> bool:
    """Upstream: the per-key test of Requirements.Intersects: a common value, or both sides
    asking for absence (NotIn or DoesNotExist)."""
    if len(existing.intersection(incoming)) > 0:
        return True
    return existing.operator in _ABSENCE and incoming.operator in _ABSENCE


def from_node_selector_requirements(reqs: Iterable[NodeSelectorRequirement]) -> list[Requirement]:
    return [Requirement.new(r.key, r.operator, r.values) for r in reqs]


def from_labels(labels: Mapping[str, str]) -> Requirements:
    """Upstream: NewLabelRequirements"""
    return Requirements(Requirement.new(k, "In", [v]) for k, v in labels.items())


def strict_pod_requirements(pod: Pod) -> Requirements:
    """A pod's node selector and the first term of its required node affinity (the others are
    tried in turn as the pod is relaxed). Upstream: NewStrictPodRequirements"""
    out = from_labels(pod.spec.node_selector)
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity else None
    required = (
        node_affinity.required_during_scheduling_ignored_during_execution if node_affinity else None
    )
    if required is not None and required.node_selector_terms:
        out.add(*from_node_selector_requirements(required.node_selector_terms[0].match_expressions))
    return out


def pod_requirements(pod: Pod) -> Requirements:
    """The strict requirements and the heaviest preferred node-affinity term.

    Upstream: NewPodRequirements
    """
    out = strict_pod_requirements(pod)
    affinity = pod.spec.affinity
    node_affinity = affinity.node_affinity if affinity else None
    # Preferences are honoured until relaxed: the heaviest preferred term counts as required.
    preferred = (
        node_affinity.preferred_during_scheduling_ignored_during_execution if node_affinity else []
    )
    if preferred:
        heaviest = max(preferred, key=lambda t: t.weight)
        out.add(*from_node_selector_requirements(heaviest.preference.match_expressions))
    return out
