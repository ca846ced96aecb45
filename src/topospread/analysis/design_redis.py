"""``design --redis``: a Redis cluster's shards and replicas spread over zones and nodes, the
Redis operators' rules (see ``RedisDesign``) compiled with their own formulas into topology
spread constraints, each rule checked against what the constraints actually guarantee, and
designs no placement can satisfy flagged. Whether some scheduling order deadlocks is not
decided here: that is what ``verify`` explores, on the scenario ``RedisPlan.scenario()``
returns. The arithmetic under it is design.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

from topospread.analysis.design import (
    POD_REQUESTS,
    check_positive,
    design_error,
    largest_max_skew,
    max_per_domain,
    node_manifest,
    spread_constraint,
    worst_case_per_domain,
)
from topospread.api.field import Path, duplicate, invalid, required
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_HOSTNAME,
    LABEL_TOPOLOGY_ZONE,
    SCHEDULE_ANYWAY,
)
from topospread.limits import DEFAULT_LIMITS, Limits
from topospread.util.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_valid_label_value,
)

APP_LABEL: Final = "app.kubernetes.io/name"
SHARD_LABEL: Final = "shard"
REDIS_IMAGE: Final = "redis:7.4"


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
        raise design_error(required(Path.root(option), "give at least one zone"))
    zones = tuple(z.strip() for z in text.split(","))
    _check_zones(zones, option)
    return zones


def _check_zones(zones: Sequence[str], option: str = "--zones") -> None:
    path = Path.root(option)
    if not zones:
        raise design_error(required(path, "give at least one zone"))
    seen: set[str] = set()
    for zone in zones:
        if zone in seen:
            raise design_error(duplicate(path, zone))
        seen.add(zone)
        if not zone:
            raise design_error(invalid(path, zone, "a zone name must not be empty"))
        errs = is_valid_label_value(zone) or is_dns1123_subdomain(f"{zone}-node-1")
        if errs:
            raise design_error(
                invalid(path, zone, f"a zone names nodes <zone>-node-<i>: {errs[0]}")
            )


def _check_redis(design: RedisDesign) -> None:
    check_positive(design.shards, "--shards")
    if design.replicas < 0:
        raise design_error(
            invalid(Path.root("--replicas"), design.replicas, "must not be negative")
        )
    if design.nodes_per_zone is not None:
        check_positive(design.nodes_per_zone, "--nodes-per-zone")
    _check_zones(design.zones)
    longest = f"{design.name}-shard-{design.shards - 1}-{design.replicas}"
    errs = is_valid_label_value(design.name) or is_dns1123_label(longest)
    if errs:
        raise design_error(
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


def design_redis_cluster(design: RedisDesign, limits: Limits = DEFAULT_LIMITS) -> RedisPlan:
    """Compile the Redis rules into per-shard StatefulSets and check them (see ``RedisDesign``);
    a design of more pods or nodes than ``limits`` is refused before they are made."""
    _check_redis(design)
    z = len(design.zones)
    per_shard = 1 + design.replicas
    total = design.shards * per_shard
    k = design.nodes_per_zone or default_nodes_per_zone(total, z)
    nodes = z * k
    budget = limits.budget()
    where = "design redis-cluster"
    budget.add_pods(total, where, f"--shards {design.shards} x (1 + --replicas {design.replicas})")
    per_zone = f"--nodes-per-zone {k}" if design.nodes_per_zone else f"{k} nodes per zone"
    budget.add_nodes(nodes, where, f"{z} zone(s) x {per_zone}")
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
    return node_manifest(f"{zone}-node-{index}", {LABEL_TOPOLOGY_ZONE: zone})


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
    spread = [spread_constraint(LABEL_HOSTNAME, host_skew, DO_NOT_SCHEDULE, app)]
    if zone_skew is not None:
        spread.append(spread_constraint(LABEL_TOPOLOGY_ZONE, zone_skew, DO_NOT_SCHEDULE, app))
    spread.append(spread_constraint(LABEL_HOSTNAME, 1, SCHEDULE_ANYWAY, app))
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
