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
``maxSkew`` that keeps worst(N, D, s) within F·N. ``design_redis_cluster`` compiles the Redis
operators' rules (see ``RedisDesign``) with their own formulas, then checks each rule against
what the constraints actually guarantee and flags designs no placement can satisfy. Whether
some scheduling order deadlocks is not decided here: that is what ``verify`` explores, on the
scenario ``RedisPlan.scenario()`` returns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from topospread.api.field import Path, duplicate, invalid, required
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
)
from topospread.errors import ValidationError
from topospread.util.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

APP_LABEL: Final = "app.kubernetes.io/name"
SHARD_LABEL: Final = "shard"
REDIS_IMAGE: Final = "redis:7.4"
PAUSE_IMAGE: Final = "registry.k8s.io/pause:3.10"
# Small requests and roomy nodes: the scenario is about spreading, so CPU, memory and the pod
# count per node must never be what stops a pod (16 CPUs / 100m = 160 pods > 110 pods per node).
POD_REQUESTS: Final[Mapping[str, str]] = {"cpu": "100m", "memory": "256Mi"}
NODE_ALLOCATABLE: Final[Mapping[str, str]] = {"cpu": "16", "memory": "64Gi", "pods": "110"}


def _fail(error: object) -> ValidationError:
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


def _fraction_text(value: Fraction) -> str:
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
        return _spread(d.topology_key, self.max_skew, when, d.selector, self.min_domains)

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
            return [_node_manifest(f"node-{i}", {}) for i in range(1, d.domains + 1)]
        out = []
        for i, value in enumerate(self.domain_values(), 1):
            for j in range(1, d.nodes_per_domain + 1):
                name = f"{value.lower()}-node-{j}"
                if is_dns1123_subdomain(name):
                    name = f"node-{i}-{j}"
                out.append(_node_manifest(name, {d.topology_key: value}))
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
            "maxFraction": _fraction_text(d.max_fraction),
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
        raise _fail(invalid(path, text, "must be a fraction such as 0.5 or 1/3")) from None
    if value <= 0:
        raise _fail(invalid(path, text, "must be greater than zero"))
    if value > 1:
        raise _fail(invalid(path, text, "must be at most 1 (the whole workload)"))
    return value


def parse_selector(text: str, option: str = "--selector") -> dict[str, str]:
    """``app=web,tier=front`` as matchLabels; keys and values checked as label keys and values."""
    path = Path.root(option)
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise _fail(invalid(path, text, "must be key=value pairs separated by commas"))
        errs = is_qualified_name(key) or is_valid_label_value(value)
        if errs:
            raise _fail(invalid(path, part.strip(), "; ".join(errs)))
        if key in out:
            raise _fail(duplicate(path, key))
        out[key] = value
    return out


def _check_positive(value: int, option: str) -> None:
    if value < 1:
        raise _fail(invalid(Path.root(option), value, "must be greater than zero"))


def design_spread(design: SpreadDesign) -> SpreadPlan:
    """The largest maxSkew whose worst case keeps every domain within the allowed fraction."""
    _check_positive(design.replicas, "--replicas")
    _check_positive(design.domains, "--domains")
    _check_positive(design.nodes_per_domain, "--nodes-per-domain")
    if design.topology_key == LABEL_HOSTNAME and design.nodes_per_domain != 1:
        raise _fail(
            invalid(
                Path.root("--nodes-per-domain"),
                design.nodes_per_domain,
                f"a {LABEL_HOSTNAME} domain is one node",
            )
        )
    name_errors = is_dns1123_subdomain(design.name)
    if name_errors:
        raise _fail(invalid(Path.root("--name"), design.name, name_errors[0]))
    if not design.selector:
        raise _fail(required(Path.root("--selector"), "give key=value labels to spread"))
    key_errors = is_qualified_name(design.topology_key)
    if key_errors:
        raise _fail(invalid(Path.root("--topology-key"), design.topology_key, key_errors[0]))
    n, d, f = design.replicas, design.domains, design.max_fraction
    limit = max_per_domain(n, f, strict=design.strict)
    share = f * n
    if design.strict:
        steps = [
            f"allowed per domain: fewer than {_fraction_text(f)} of {n} pods = {_decimal(share)}"
            + (" (a whole number, so one less)" if share.denominator == 1 else ", rounded down")
            + f" → at most {limit}"
        ]
    else:
        steps = [
            f"allowed per domain: at most {_fraction_text(f)} of {n} pods = {_decimal(share)}"
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
        out.append(f"{_fraction_text(f)} of {n} pods allows no pod at all in a domain")
    average = Fraction(1, d)
    if f < average or (f == average and design.strict):
        out.append(
            f"no replica count helps: over {d} domains the average domain holds 1/{d} of the "
            f"pods, which is {'not below' if f == average else 'more than'} "
            f"{_fraction_text(f)}"
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


# ---------------------------------------------------------------------------------------------
# The Redis cluster design


@dataclass(frozen=True, slots=True)
class RedisDesign:
    """A Redis cluster of ``shards`` shards, each one master with ``replicas`` replicas (the
    meaning of ``redis-cli --cluster-replicas``: a shard has 1 + replicas pods), on ``zones``
    with ``nodes_per_zone`` nodes each (``None``: enough for the design, see
    ``default_nodes_per_zone``).

    The operators' rules: a shard's pods never share a node (one zone) or a zone (several
    zones); no node holds a third or more of the pods; with two zones the pods split evenly;
    with three or more no zone holds half or more; pods go only to the listed zones. Their
    formulas: hostname maxSkew = total/3 and zone maxSkew = total/2, rounded down, minus 1 when
    the division is exact ("less than" a third or half: ceil(total/k) − 1).

    ``relaxed`` is their proposed "at most" variant: no node holds more than a third, and with
    three or more zones no zone more than half, of the pods; the maxSkews are floor(total/3)
    and floor(total/2) without the minus 1, and the limits checked are floor(total/3) per node
    and floor(total/2) per zone. The two-zone even split (at most ceil(total/2) per zone) is the
    same in both.
    """

    shards: int
    replicas: int
    zones: tuple[str, ...]
    nodes_per_zone: int | None = None
    relaxed: bool = False
    name: str = "redis-cluster"
    namespace: str = "default"


@dataclass(frozen=True, slots=True)
class Check:
    """One requirement: whether the constraints guarantee it, the reasoning, and the verify
    invariant that states it (``None`` for what verify need not check: the node affinity)."""

    requirement: str
    holds: bool
    reasons: tuple[str, ...]
    invariant: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"requirement": self.requirement, "holds": self.holds, "reasons": list(self.reasons)}


@dataclass(frozen=True, slots=True)
class RedisPlan:
    """The compiled design: the numbers, their arithmetic, the checks, the manifests."""

    design: RedisDesign
    pods_per_shard: int
    total: int
    nodes_per_zone: int
    hostname_max_skew: int
    zone_max_skew: int | None
    anti_affinity_key: str
    node_limit: int
    zone_limit: int | None
    steps: tuple[str, ...]
    checks: tuple[Check, ...]
    problems: tuple[str, ...]
    stateful_sets: tuple[dict[str, Any], ...]

    @property
    def satisfiable(self) -> bool:
        """False when no placement of all the pods meets the rules (see ``problems``)."""
        return not self.problems

    def nodes(self) -> list[dict[str, Any]]:
        """Node manifests ``<zone>-node-<i>``, ``nodes_per_zone`` per zone."""
        return [
            _node(zone, i) for zone in self.design.zones for i in range(1, self.nodes_per_zone + 1)
        ]

    def invariants(self) -> list[dict[str, Any]]:
        """The rules as verify invariants (the relaxed limits for a relaxed design)."""
        return [
            {"name": c.requirement, **c.invariant} for c in self.checks if c.invariant is not None
        ]

    def scenario(self) -> dict[str, Any]:
        """The verify scenario: the nodes, the StatefulSets as workloads, the invariants."""
        return {
            "nodes": self.nodes(),
            "workloads": [dict(s) for s in self.stateful_sets],
            "invariants": self.invariants(),
        }

    def to_json(self) -> dict[str, Any]:
        d = self.design
        return {
            "shards": d.shards,
            "replicas": d.replicas,
            "zones": list(d.zones),
            "nodesPerZone": self.nodes_per_zone,
            "relaxed": d.relaxed,
            "podsPerShard": self.pods_per_shard,
            "total": self.total,
            "hostnameMaxSkew": self.hostname_max_skew,
            "zoneMaxSkew": self.zone_max_skew,
            "antiAffinityTopologyKey": self.anti_affinity_key,
            "maxPerNode": self.node_limit,
            "maxPerZone": self.zone_limit,
            "steps": list(self.steps),
            "checks": [c.to_json() for c in self.checks],
            "problems": list(self.problems),
            "statefulSets": [dict(s) for s in self.stateful_sets],
            "scenario": self.scenario(),
        }


def default_nodes_per_zone(total: int, zones: int) -> int:
    """Enough nodes for one pod each on average, and at least two per zone."""
    return max(2, -(-total // zones))


def parse_zones(text: str, option: str = "--zones") -> tuple[str, ...]:
    """``a,b,c`` as zone names; each a label value that also makes valid node names."""
    if not text.strip():
        raise _fail(required(Path.root(option), "give at least one zone"))
    zones = tuple(z.strip() for z in text.split(","))
    _check_zones(zones, option)
    return zones


def _check_zones(zones: Sequence[str], option: str = "--zones") -> None:
    path = Path.root(option)
    if not zones:
        raise _fail(required(path, "give at least one zone"))
    seen: set[str] = set()
    for zone in zones:
        if zone in seen:
            raise _fail(duplicate(path, zone))
        seen.add(zone)
        if not zone:
            raise _fail(invalid(path, zone, "a zone name must not be empty"))
        errs = is_valid_label_value(zone) or is_dns1123_subdomain(f"{zone}-node-1")
        if errs:
            raise _fail(invalid(path, zone, f"a zone names nodes <zone>-node-<i>: {errs[0]}"))


def _check_redis(design: RedisDesign) -> None:
    _check_positive(design.shards, "--shards")
    if design.replicas < 0:
        raise _fail(invalid(Path.root("--replicas"), design.replicas, "must not be negative"))
    if design.nodes_per_zone is not None:
        _check_positive(design.nodes_per_zone, "--nodes-per-zone")
    _check_zones(design.zones)
    longest = f"{design.name}-shard-{design.shards - 1}-{design.replicas}"
    errs = is_valid_label_value(design.name) or is_dns1123_label(longest)
    if errs:
        raise _fail(
            invalid(Path.root("--name"), design.name, f"pod names such as {longest}: {errs[0]}")
        )


def _formula(total: int, k: int, word: str, relaxed: bool) -> tuple[int, str]:
    """The operators' maxSkew formula for "less than" (or, relaxed, "at most") 1/k of total."""
    whole, exact = divmod(total, k)
    if relaxed:
        text = f"floor(total/{k}) = floor({total}/{k}) = {whole} (at most {word}: no minus 1)"
        value = whole
    elif exact == 0:
        value = whole - 1
        text = f"total/{k} = {total}/{k} = {whole}; divisible by {k}, so minus 1 → {value}"
    else:
        value = whole
        text = f"total/{k} = {total}/{k}, rounded down {whole}; not divisible, so {value}"
    if value < 1:
        text += "; maxSkew must be greater than zero, so 1"
        value = 1
    return value, text


def design_redis_cluster(design: RedisDesign) -> RedisPlan:
    """Compile the Redis rules into per-shard StatefulSets and check them (see ``RedisDesign``)."""
    _check_redis(design)
    z = len(design.zones)
    per_shard = 1 + design.replicas
    total = design.shards * per_shard
    k = design.nodes_per_zone or default_nodes_per_zone(total, z)
    nodes = z * k
    anti_key = LABEL_HOSTNAME if z == 1 else LABEL_TOPOLOGY_ZONE
    steps = [
        f"pods per shard = 1 master + {design.replicas} "
        f"replica{'' if design.replicas == 1 else 's'} = {per_shard}",
        f"total = shards × pods per shard = {design.shards} × {per_shard} = {total}",
        f"nodes = zones × nodes per zone = {z} × {k} = {nodes}",
    ]
    if not design.nodes_per_zone:
        steps.append(
            f"  nodes per zone, by default one pod per node and at least 2: "
            f"max(2, ceil({total}/{z})) = {k}"
        )
    host_skew, text = _formula(total, 3, "a third", design.relaxed)
    steps.append(f"hostname maxSkew (DoNotSchedule) = {text}")
    zone_skew: int | None = None
    if z > 1:
        zone_skew, text = _formula(total, 2, "half", design.relaxed)
        steps.append(f"zone maxSkew (DoNotSchedule) = {text}")
    else:
        steps.append("zone maxSkew: none, every pod is in the one zone")
    steps += [
        "soft hostname spread: maxSkew 1, ScheduleAnyway (prefer the emptiest node)",
        f"required node affinity: {LABEL_TOPOLOGY_ZONE} In [{', '.join(design.zones)}]",
        f"required pod anti-affinity within a shard: topologyKey {anti_key} "
        + ("(one zone: a shard's pods on different nodes)" if z == 1 else "(several zones)"),
    ]
    node_limit, zone_limit = _limits(total, z, design.relaxed)
    checks, problems = _check_rules(
        design, per_shard, total, k, host_skew, zone_skew, node_limit, zone_limit
    )
    sets = tuple(
        _stateful_set(design, shard, per_shard, host_skew, zone_skew, anti_key)
        for shard in range(design.shards)
    )
    return RedisPlan(
        design=design,
        pods_per_shard=per_shard,
        total=total,
        nodes_per_zone=k,
        hostname_max_skew=host_skew,
        zone_max_skew=zone_skew,
        anti_affinity_key=anti_key,
        node_limit=node_limit,
        zone_limit=zone_limit,
        steps=tuple(steps),
        checks=tuple(checks),
        problems=tuple(problems),
        stateful_sets=sets,
    )


def _limits(total: int, zones: int, relaxed: bool) -> tuple[int, int | None]:
    """Pods allowed per node and per zone by the rules (``None``: no zone rule)."""
    node_limit = max_per_domain(total, Fraction(1, 3), strict=not relaxed)
    if zones == 1:
        return node_limit, None
    if zones == 2:
        return node_limit, -(-total // 2)  # an even split: the larger half
    return node_limit, max_per_domain(total, Fraction(1, 2), strict=not relaxed)


def _check_rules(
    design: RedisDesign,
    per_shard: int,
    total: int,
    k: int,
    host_skew: int,
    zone_skew: int | None,
    node_limit: int,
    zone_limit: int | None,
) -> tuple[list[Check], list[str]]:
    """Each rule against the most pods the constraints let a node or zone hold."""
    z = len(design.zones)
    nodes = z * k
    shards = design.shards
    problems: list[str] = []
    word = "at most" if design.relaxed else "less than"
    app = {"matchLabels": {APP_LABEL: design.name}}

    node_spread = worst_case_per_domain(total, nodes, host_skew)
    node_bound = min(node_spread, shards)
    rule = (
        f"no node holds more than a third of the {total} pods (at most {node_limit})"
        if design.relaxed
        else f"no node holds a third or more of the {total} pods (at most {node_limit})"
    )
    reasons = [
        f"{word} {total}/3 → at most {node_limit} per node",
        f"hostname maxSkew {host_skew} over {nodes} nodes allows "
        f"min({total}, floor(({total} + {nodes - 1}·{host_skew})/{nodes})) = {node_spread}",
        f"the anti-affinity allows one pod per shard: {shards}",
    ]
    checks = [_bounded(rule, reasons, (node_bound, node_limit), (total, nodes), "hostname", app)]
    if node_limit * nodes < total:
        problems.append(
            f"{nodes} nodes × at most {node_limit} pods each hold {node_limit * nodes} < "
            f"{total} pods: some pods can never be placed"
            + (f" (needs {-(-total // node_limit)} nodes)" if node_limit > 0 else "")
        )

    if zone_skew is not None and zone_limit is not None:
        zone_spread = worst_case_per_domain(total, z, zone_skew)
        zone_bound = min(zone_spread, shards, k * node_bound)
        if z == 2:
            rule = f"the {total} pods split evenly over 2 zones (at most {zone_limit} per zone)"
            head = f"at most ceil({total}/2) = {zone_limit} per zone"
        else:
            rule = (
                f"no zone holds more than half of the {total} pods (at most {zone_limit})"
                if design.relaxed
                else f"no zone holds half or more of the {total} pods (at most {zone_limit})"
            )
            head = f"{word} {total}/2 → at most {zone_limit} per zone"
        reasons = [
            head,
            f"zone maxSkew {zone_skew} over {z} zones allows "
            f"min({total}, floor(({total} + {z - 1}·{zone_skew})/{z})) = {zone_spread}",
            f"the anti-affinity allows one pod per shard: {shards}",
            f"its {k} nodes hold at most {node_bound} each: {k * node_bound}",
        ]
        checks.append(_bounded(rule, reasons, (zone_bound, zone_limit), (total, z), "zone", app))
        if zone_limit * z < total:
            problems.append(
                f"{z} zones × at most {zone_limit} pods each hold {zone_limit * z} < {total} "
                "pods: some pods can never be placed"
            )

    where, domains = ("zone", z) if z > 1 else ("node", nodes)
    anti_key = LABEL_TOPOLOGY_ZONE if z > 1 else LABEL_HOSTNAME
    checks.append(
        Check(
            requirement=f"a shard's master and replicas never share a {where}",
            holds=True,
            reasons=(
                "required pod anti-affinity on the shard label: a pod that cannot keep it "
                "stays Pending rather than break it",
            ),
            invariant={
                "distinct": {"selector": app, "topologyKey": anti_key, "groupBy": SHARD_LABEL}
            },
        )
    )
    if per_shard > domains:
        problems.append(
            f"a shard has {per_shard} pods but there are only {domains} {where}s: the "
            f"anti-affinity leaves pod {domains + 1} of each shard Pending"
        )
    checks.append(
        Check(
            requirement=f"pods only in the zones {', '.join(design.zones)}",
            holds=True,
            reasons=(f"required node affinity on {LABEL_TOPOLOGY_ZONE}",),
        )
    )
    return checks, problems


def _bounded(
    rule: str,
    reasons: list[str],
    bound_limit: tuple[int, int],
    pods_domains: tuple[int, int],
    what: str,
    app: Mapping[str, Any],
) -> Check:
    """The rule holds when the least of the upper bounds is within the limit."""
    bound, limit = bound_limit
    total, domains = pods_domains
    key = LABEL_HOSTNAME if what == "hostname" else LABEL_TOPOLOGY_ZONE
    invariant = {"maxPerDomain": {"selector": app, "topologyKey": key, "max": limit}}
    if bound <= limit:
        return Check(rule, True, (*reasons, f"so at most {bound} ≤ {limit}"), invariant)
    better = largest_max_skew(total, domains, limit)
    unit = "node" if what == "hostname" else what
    advice = (
        f"{what} maxSkew {better} would guarantee it"
        if better is not None
        else f"no {what} maxSkew guarantees it with {domains} {unit}s"
    )
    # The least bound is not always reached (the controllers' order, the other constraints):
    # say "not guaranteed", and leave "broken" to verify.
    last = f"so up to {bound} > {limit} is not ruled out (verify tells if it is reached); {advice}"
    return Check(rule, False, (*reasons, last), invariant)


def _node(zone: str, index: int) -> dict[str, Any]:
    return _node_manifest(f"{zone}-node-{index}", {LABEL_TOPOLOGY_ZONE: zone})


def _node_manifest(name: str, labels: Mapping[str, str]) -> dict[str, Any]:
    """A roomy Node (see NODE_ALLOCATABLE) labelled with its hostname and ``labels``."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {LABEL_HOSTNAME: name, **labels}},
        "status": {"capacity": dict(NODE_ALLOCATABLE), "allocatable": dict(NODE_ALLOCATABLE)},
    }


def _stateful_set(
    design: RedisDesign,
    shard: int,
    per_shard: int,
    host_skew: int,
    zone_skew: int | None,
    anti_key: str,
) -> dict[str, Any]:
    app = {APP_LABEL: design.name}
    labels = {**app, SHARD_LABEL: str(shard)}
    # Every spread constraint counts the whole cluster's pods (the app label), not the shard's.
    spread = [_spread(LABEL_HOSTNAME, host_skew, DO_NOT_SCHEDULE, app)]
    if zone_skew is not None:
        spread.append(_spread(LABEL_TOPOLOGY_ZONE, zone_skew, DO_NOT_SCHEDULE, app))
    spread.append(_spread(LABEL_HOSTNAME, 1, SCHEDULE_ANYWAY, app))
    zone_term = {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": list(design.zones)}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": f"{design.name}-shard-{shard}",
            "namespace": design.namespace,
            "labels": dict(labels),
        },
        "spec": {
            "serviceName": design.name,
            "replicas": per_shard,
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": dict(labels)},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [{"matchExpressions": [zone_term]}]
                            }
                        },
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": dict(labels)},
                                    "topologyKey": anti_key,
                                }
                            ]
                        },
                    },
                    "topologySpreadConstraints": spread,
                    "containers": [
                        {
                            "name": "redis",
                            "image": REDIS_IMAGE,
                            "ports": [
                                {"name": "client", "containerPort": 6379},
                                {"name": "gossip", "containerPort": 16379},
                            ],
                            "resources": {"requests": dict(POD_REQUESTS)},
                        }
                    ],
                },
            },
        },
    }


def _spread(
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
