"""``design``: compile availability requirements into topology spread constraints.

Both designs rest on one piece of arithmetic. Under a hard (``DoNotSchedule``) constraint with
``maxSkew`` s over D eligible domains, placing N matching pods one at a time can leave one
domain with at most

    worst(N, D, s) = min(N, floor((N + (D-1)·s) / D))

pods: while the crowded domain climbs to M, every other domain must hold at least M - s (the
filter compares against the global minimum), so M + (D-1)·(M - s) ≤ N; and M = worst is
reached by filling every domain to M - s first. ``maxSkew`` bounds a difference, never a count,
so a per-domain limit has to go through this formula (tests check it against a brute-force
search over every placement order).

``design_spread`` inverts it: from "at most a fraction F of the pods per domain" to the largest
``maxSkew`` that keeps worst(N, D, s) within F·N. ``design_redis_cluster`` (design_redis.py)
compiles the Redis operators' rules (see ``RedisDesign``) with their own formulas, then checks
each rule against what the constraints actually guarantee and flags designs no placement can
satisfy. Whether some scheduling order deadlocks is not decided here: that is what ``verify``
explores, on the scenario ``RedisPlan.scenario()`` returns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from topospread.api.field import Path, duplicate, invalid, required
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    SCHEDULE_ANYWAY,
)
from topospread.errors import ValidationError
from topospread.limits import DEFAULT_LIMITS, Limits
from topospread.util.validation import (
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

PAUSE_IMAGE: Final = "registry.k8s.io/pause:3.10"
# Small requests and roomy nodes: the scenario is about spreading, so CPU, memory and the pod
# count per node must never be what stops a pod (16 CPUs / 100m = 160 pods > 110 pods per node).
POD_REQUESTS: Final[Mapping[str, str]] = {"cpu": "100m", "memory": "256Mi"}
NODE_ALLOCATABLE: Final[Mapping[str, str]] = {"cpu": "16", "memory": "64Gi", "pods": "110"}


def design_error(error: object) -> ValidationError:
    return ValidationError(f"design: {error}")


# ---------------------------------------------------------------------------------------------
# The arithmetic


def worst_case_per_domain(pods: int, domains: int, max_skew: int) -> int:
    """The most matching pods one domain can end up with when ``pods`` pods are placed one at a
    time over ``domains`` eligible domains, each placement passing a DoNotSchedule constraint
    with ``max_skew`` (and no other constraint limiting them)."""
    if domains <= 1:
        return pods
    return min(pods, (pods + (domains - 1) * max_skew) // domains)


def largest_max_skew(pods: int, domains: int, limit: int) -> int | None:
    """The largest ``maxSkew`` ≥ 1 whose worst case stays within ``limit`` pods per domain;
    ``None`` when even ``maxSkew`` 1 lets a domain exceed it. When the limit is at least the
    number of pods any maxSkew works; ``pods`` is returned (larger values behave the same)."""
    if limit >= pods:
        return max(pods, 1)
    if domains <= 1:
        return None
    # worst ≤ limit  ⇔  N + (D-1)·s < D·(limit+1)  ⇔  s ≤ (D·(limit+1) - N - 1) / (D-1)
    skew = (domains * (limit + 1) - pods - 1) // (domains - 1)
    return skew if skew >= 1 else None


def max_per_domain(pods: int, fraction: Fraction, *, strict: bool) -> int:
    """Pods one domain may hold: at most ``fraction`` of ``pods``, or with ``strict`` fewer
    than that fraction (one less when the fraction of the pods is a whole number)."""
    share = fraction * pods
    return math.ceil(share) - 1 if strict else math.floor(share)


def fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value}"


def _decimal(value: Fraction) -> str:
    """``10/3 = 3.33`` style: the exact fraction with two decimals when it is not whole."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator} = {float(value):.2f}"


# ---------------------------------------------------------------------------------------------
# The general design: a fraction per domain to a maxSkew


@dataclass(frozen=True, slots=True)
class SpreadDesign:
    """Spread the pods selected by ``selector`` across ``topology_key`` so that no domain holds
    more than ``max_fraction`` of the ``replicas`` pods (fewer than it with ``strict``), over
    ``domains`` domains; ``hard`` gives DoNotSchedule, otherwise ScheduleAnyway."""

    selector: Mapping[str, str]
    topology_key: str
    replicas: int
    domains: int
    max_fraction: Fraction
    hard: bool = True
    strict: bool = False
    # Nodes per domain in the verify scenario (one for kubernetes.io/hostname, by definition).
    nodes_per_domain: int = 1
    name: str = "spread"


@dataclass(frozen=True, slots=True)
class SpreadPlan:
    """The computed constraint, each number's arithmetic, and what to change when none fits."""

    design: SpreadDesign
    max_per_domain: int
    max_skew: int | None
    worst_case: int | None
    min_domains: int | None
    steps: tuple[str, ...]
    notes: tuple[str, ...]

    def constraint(self) -> dict[str, Any] | None:
        """The topologySpreadConstraints item, or ``None`` when no maxSkew satisfies it."""
        if self.max_skew is None:
            return None
        d = self.design
        when = DO_NOT_SCHEDULE if d.hard else SCHEDULE_ANYWAY
        return spread_constraint(d.topology_key, self.max_skew, when, d.selector, self.min_domains)

    def domain_values(self) -> list[str]:
        """The scenario's domains: ``zone-1``, ``zone-2``, … named after the key's last part."""
        stem = self.design.topology_key.rsplit("/", 1)[-1][:50].strip("-_.")
        values = [f"{stem}-{i}" for i in range(1, self.design.domains + 1)]
        if not stem or any(is_valid_label_value(v) for v in values):
            values = [f"domain-{i}" for i in range(1, self.design.domains + 1)]
        return values

    def nodes(self) -> list[dict[str, Any]]:
        """Node manifests: ``nodes_per_domain`` per domain; one node per domain, named as its
        hostname, when the key is kubernetes.io/hostname."""
        d = self.design
        if d.topology_key == LABEL_HOSTNAME:
            return [node_manifest(f"node-{i}", {}) for i in range(1, d.domains + 1)]
        out = []
        for i, value in enumerate(self.domain_values(), 1):
            for j in range(1, d.nodes_per_domain + 1):
                name = f"{value.lower()}-node-{j}"
                if is_dns1123_subdomain(name):
                    name = f"node-{i}-{j}"
                out.append(node_manifest(name, {d.topology_key: value}))
        return out

    def workload(self) -> dict[str, Any] | None:
        """A Deployment of ``replicas`` pods labelled with the selector, with the constraint."""
        constraint = self.constraint()
        if constraint is None:
            return None
        d = self.design
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": d.name, "namespace": "default"},
            "spec": {
                "replicas": d.replicas,
                "selector": {"matchLabels": dict(d.selector)},
                "template": {
                    "metadata": {"labels": dict(d.selector)},
                    "spec": {
                        "topologySpreadConstraints": [constraint],
                        "containers": [
                            {
                                "name": "app",
                                "image": PAUSE_IMAGE,
                                "resources": {"requests": dict(POD_REQUESTS)},
                            }
                        ],
                    },
                },
            },
        }

    def scenario(self) -> dict[str, Any] | None:
        """The verify scenario (the nodes, the Deployment, "at most the limit per domain"), or
        ``None`` when no constraint fits."""
        workload = self.workload()
        if workload is None:
            return None
        d = self.design
        return {
            "nodes": self.nodes(),
            "workloads": [workload],
            "invariants": [
                {
                    "name": f"at most {self.max_per_domain} pods per {d.topology_key}",
                    "maxPerDomain": {
                        "selector": {"matchLabels": dict(d.selector)},
                        "topologyKey": d.topology_key,
                        "max": self.max_per_domain,
                    },
                }
            ],
        }

    def to_json(self) -> dict[str, Any]:
        d = self.design
        return {
            "selector": dict(d.selector),
            "topologyKey": d.topology_key,
            "replicas": d.replicas,
            "domains": d.domains,
            "maxFraction": fraction_text(d.max_fraction),
            "hard": d.hard,
            "strict": d.strict,
            "maxPerDomain": self.max_per_domain,
            "maxSkew": self.max_skew,
            "worstCase": self.worst_case,
            "minDomains": self.min_domains,
            "steps": list(self.steps),
            "notes": list(self.notes),
            "constraint": self.constraint(),
            "scenario": self.scenario(),
        }


def parse_fraction(text: str, option: str = "--max-fraction") -> Fraction:
    """``0.5``, ``1/3`` or ``1`` as an exact fraction in (0, 1]."""
    path = Path.root(option)
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise design_error(invalid(path, text, "must be a fraction such as 0.5 or 1/3")) from None
    if value <= 0:
        raise design_error(invalid(path, text, "must be greater than zero"))
    if value > 1:
        raise design_error(invalid(path, text, "must be at most 1 (the whole workload)"))
    return value


def parse_selector(text: str, option: str = "--selector") -> dict[str, str]:
    """``app=web,tier=front`` as matchLabels; keys and values checked as label keys and values."""
    path = Path.root(option)
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise design_error(invalid(path, text, "must be key=value pairs separated by commas"))
        errs = is_qualified_name(key) or is_valid_label_value(value)
        if errs:
            raise design_error(invalid(path, part.strip(), "; ".join(errs)))
        if key in out:
            raise design_error(duplicate(path, key))
        out[key] = value
    return out


def check_positive(value: int, option: str) -> None:
    if value < 1:
        raise design_error(invalid(Path.root(option), value, "must be greater than zero"))


def design_spread(design: SpreadDesign, limits: Limits = DEFAULT_LIMITS) -> SpreadPlan:
    """The largest maxSkew whose worst case keeps every domain within the allowed fraction;
    a design whose scenario would hold more pods or nodes than ``limits`` is refused."""
    check_positive(design.replicas, "--replicas")
    check_positive(design.domains, "--domains")
    check_positive(design.nodes_per_domain, "--nodes-per-domain")
    budget = limits.budget()
    where = "design spread"
    budget.add_pods(design.replicas, where, f"--replicas {design.replicas}")
    budget.add_nodes(
        design.domains * design.nodes_per_domain,
        where,
        f"--domains {design.domains} x --nodes-per-domain {design.nodes_per_domain}",
    )
    if design.topology_key == LABEL_HOSTNAME and design.nodes_per_domain != 1:
        raise design_error(
            invalid(
                Path.root("--nodes-per-domain"),
                design.nodes_per_domain,
                f"a {LABEL_HOSTNAME} domain is one node",
            )
        )
    name_errors = is_dns1123_subdomain(design.name)
    if name_errors:
        raise design_error(invalid(Path.root("--name"), design.name, name_errors[0]))
    if not design.selector:
        raise design_error(required(Path.root("--selector"), "give key=value labels to spread"))
    key_errors = is_qualified_name(design.topology_key)
    if key_errors:
        raise design_error(invalid(Path.root("--topology-key"), design.topology_key, key_errors[0]))
    n, d, f = design.replicas, design.domains, design.max_fraction
    limit = max_per_domain(n, f, strict=design.strict)
    share = f * n
    if design.strict:
        steps = [
            f"allowed per domain: fewer than {fraction_text(f)} of {n} pods = {_decimal(share)}"
            + (" (a whole number, so one less)" if share.denominator == 1 else ", rounded down")
            + f" → at most {limit}"
        ]
    else:
        steps = [
            f"allowed per domain: at most {fraction_text(f)} of {n} pods = {_decimal(share)}"
            + ("" if share.denominator == 1 else ", rounded down")
            + f" → at most {limit}"
        ]
    steps.append(
        f"worst case under maxSkew s over {d} domains: one domain holds M while the other "
        f"{d - 1} hold at least M − s each, so M + {d - 1}·(M − s) ≤ {n}, "
        f"M = min({n}, floor(({n} + {d - 1}·s)/{d}))"
    )
    skew = largest_max_skew(n, d, limit)
    notes: list[str] = []
    if skew is not None and limit >= n:
        steps.append(
            f"{limit} ≥ {n} pods: no domain can exceed the limit whatever maxSkew is; "
            f"maxSkew {skew} (any value ≥ {skew} behaves the same)"
        )
    elif skew is not None:
        steps.append(
            f"largest s: floor(({d}·({limit}+1) − {n} − 1)/{d - 1}) = {skew}: "
            f"s = {skew} gives floor(({n} + {d - 1}·{skew})/{d}) = "
            f"{worst_case_per_domain(n, d, skew)} ≤ {limit}; s = {skew + 1} gives "
            f"{worst_case_per_domain(n, d, skew + 1)} > {limit}"
        )
    else:
        worst_one = worst_case_per_domain(n, d, 1)
        steps.append(
            f"even maxSkew 1 allows {worst_one} pods in one domain "
            f"(min({n}, floor(({n} + {d - 1})/{d}))) > {limit}: no maxSkew ≥ 1 satisfies it"
        )
        notes += _spread_remedies(design, limit)
    worst = worst_case_per_domain(n, d, skew) if skew is not None else None
    min_domains: int | None = None
    if design.hard and skew is not None and d > 1:
        min_domains = d
        notes.append(
            f"minDomains {d}: without it, while fewer than {d} domains have eligible nodes "
            "the skew is measured among those only, so the few visible domains fill up past "
            f"the limit; with it, missing domains count as empty (global minimum 0), so a "
            f"domain holds at most maxSkew = {skew} ≤ {limit} pods and the rest wait Pending"
        )
    if not design.hard:
        notes.append(
            "ScheduleAnyway only ranks nodes: when the preferred domains are full or filtered "
            "out the pods land anyway, so the limit is a preference, not a guarantee "
            "(minDomains is not allowed with ScheduleAnyway)"
        )
    return SpreadPlan(
        design=design,
        max_per_domain=limit,
        max_skew=skew,
        worst_case=worst,
        min_domains=min_domains,
        steps=tuple(steps),
        notes=tuple(notes),
    )


def _spread_remedies(design: SpreadDesign, limit: int) -> list[str]:
    """What would make some maxSkew fit: more domains, or more replicas."""
    n, d, f = design.replicas, design.domains, design.max_fraction
    out: list[str] = []
    if limit >= 1:
        # With maxSkew 1 the worst case is ceil(N/D'), within the limit once D' ≥ ceil(N/limit).
        needed = -(-n // limit)
        out.append(f"with {needed} or more domains maxSkew 1 fits (ceil({n}/{limit}) = {needed})")
    else:
        out.append(f"{fraction_text(f)} of {n} pods allows no pod at all in a domain")
    average = Fraction(1, d)
    if f < average or (f == average and design.strict):
        out.append(
            f"no replica count helps: over {d} domains the average domain holds 1/{d} of the "
            f"pods, which is {'not below' if f == average else 'more than'} "
            f"{fraction_text(f)}"
        )
        return out
    # For F > 1/D the limit grows faster than ceil(N/D): N ≥ 2/(F − 1/D) always fits; for
    # F = 1/D (at most) the next multiple of D does.
    bound = n + d if f == average else max(n + 1, math.ceil(2 / (f - average))) + d
    for more in range(n + 1, bound + 1):
        if largest_max_skew(more, d, max_per_domain(more, f, strict=design.strict)) is not None:
            out.append(f"with {more} replicas over {d} domains maxSkew 1 fits")
            break
    return out


def node_manifest(name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """A roomy Node (see NODE_ALLOCATABLE) labelled with its hostname and ``labels``."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {LABEL_HOSTNAME: name, **labels}},
        "status": {"capacity": dict(NODE_ALLOCATABLE), "allocatable": dict(NODE_ALLOCATABLE)},
    }


def spread_constraint(
    key: str,
    max_skew: int,
    when: str,
    selector: Mapping[str, str],
    min_domains: int | None = None,
) -> dict[str, Any]:
    """A topologySpreadConstraints item, fields in the order the docs write them."""
    out: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
    if min_domains is not None:
        out["minDomains"] = min_domains
    out["labelSelector"] = {"matchLabels": dict(selector)}
    return out
