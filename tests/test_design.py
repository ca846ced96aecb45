"""``design``: the spread arithmetic against brute force, the Redis formulas and checks, the
manifests against the project's own validation and scheduler, and the command line."""

from __future__ import annotations

import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from test_cli import run
from topospread.analysis.design import (
    SpreadDesign,
    design_spread,
    largest_max_skew,
    max_per_domain,
    parse_fraction,
    parse_selector,
    worst_case_per_domain,
)
from topospread.analysis.design_redis import (
    APP_LABEL,
    SHARD_LABEL,
    RedisDesign,
    RedisPlan,
    design_redis_cluster,
    parse_zones,
)
from topospread.analysis.verify import load_verify_scenario, verify
from topospread.api.loader import decode_object, load_text
from topospread.api.types import LABEL_HOSTNAME, LABEL_TOPOLOGY_ZONE, Node, StatefulSet
from topospread.api.validation import validate_node, validate_pod
from topospread.errors import ValidationError
from topospread.simulator.controllers.common import get_pod_from_template
from topospread.simulator.run import schedule
from topospread.simulator.scenario import load_scenario

ABC = ("a", "b", "c")

# ---------------------------------------------------------------------------------------------
# The arithmetic, against every placement order


def reachable_worst(pods: int, domains: int, max_skew: int) -> int:
    """Place ``pods`` pods one at a time, each where a DoNotSchedule constraint allows (its
    domain's count + 1 − the global minimum ≤ maxSkew), every way; the fullest domain seen."""
    states = {tuple([0] * domains)}
    for _ in range(pods):
        nxt = set()
        for counts in states:
            low = min(counts)
            for d, c in enumerate(counts):
                if c + 1 - low <= max_skew:
                    nxt.add(tuple(sorted((*counts[:d], c + 1, *counts[d + 1 :]))))
        assert nxt, "one constraint alone never deadlocks: the emptiest domain always fits"
        states = nxt
    return max(max(counts) for counts in states)


@settings(max_examples=150, deadline=None)
@given(
    pods=st.integers(min_value=1, max_value=10),
    domains=st.integers(min_value=1, max_value=5),
    max_skew=st.integers(min_value=1, max_value=12),
)
def test_the_worst_case_formula_is_the_fullest_domain_any_placement_order_reaches(
    pods: int, domains: int, max_skew: int
) -> None:
    assert worst_case_per_domain(pods, domains, max_skew) == reachable_worst(
        pods, domains, max_skew
    )


@settings(max_examples=150, deadline=None)
@given(
    pods=st.integers(min_value=1, max_value=40),
    domains=st.integers(min_value=1, max_value=8),
    limit=st.integers(min_value=0, max_value=40),
)
def test_largest_max_skew_is_the_largest_value_whose_worst_case_fits(
    pods: int, domains: int, limit: int
) -> None:
    fitting = [s for s in range(1, pods + 2) if worst_case_per_domain(pods, domains, s) <= limit]
    got = largest_max_skew(pods, domains, limit)
    if not fitting:
        assert got is None
    elif limit >= pods:
        assert got == pods  # every maxSkew fits; larger values behave the same
    else:
        assert got == max(fitting)


@pytest.mark.parametrize(
    ("pods", "fraction", "strict", "want"),
    [
        pytest.param(6, Fraction(1, 3), False, 2, id="at most a third of 6 is 2"),
        pytest.param(6, Fraction(1, 3), True, 1, id="less than a third of 6 is 1"),
        pytest.param(7, Fraction(1, 3), True, 2, id="less than a third of 7 is 2"),
        pytest.param(7, Fraction(1, 3), False, 2, id="at most a third of 7 is 2"),
        pytest.param(6, Fraction(1, 2), True, 2, id="less than half of 6 is 2"),
        pytest.param(5, Fraction(1, 2), True, 2, id="less than half of 5 is 2"),
        pytest.param(2, Fraction(1, 3), True, 0, id="less than a third of 2 is nothing"),
    ],
)
def test_max_per_domain_rounds_at_most_down_and_less_than_below(
    pods: int, fraction: Fraction, strict: bool, want: int
) -> None:
    assert max_per_domain(pods, fraction, strict=strict) == want


# ---------------------------------------------------------------------------------------------
# The general design


def spread(
    replicas: int, domains: int, fraction: str, *, strict: bool = False, hard: bool = True
) -> SpreadDesign:
    return SpreadDesign(
        selector={"app": "web"},
        topology_key=LABEL_TOPOLOGY_ZONE,
        replicas=replicas,
        domains=domains,
        max_fraction=parse_fraction(fraction),
        strict=strict,
        hard=hard,
    )


@pytest.mark.parametrize(
    ("design", "limit", "max_skew", "worst"),
    [
        pytest.param(spread(6, 3, "0.5"), 3, 2, 3, id="half of 6 over 3 zones: maxSkew 2"),
        pytest.param(spread(6, 3, "1/2", strict=True), 2, 1, 2, id="less than half: maxSkew 1"),
        pytest.param(spread(12, 4, "1/3"), 4, 2, 4, id="a third of 12 over 4 zones: maxSkew 2"),
        pytest.param(spread(9, 3, "1/3"), 3, 1, 3, id="a third of 9 over 3: only maxSkew 1"),
        pytest.param(spread(100, 10, "0.2"), 20, 12, 20, id="a fifth of 100 over 10: 12"),
        pytest.param(spread(4, 2, "1"), 4, 4, 4, id="the whole workload: any maxSkew"),
        pytest.param(spread(5, 1, "1"), 5, 5, 5, id="one domain holding everything"),
        pytest.param(spread(10, 3, "1/3"), 3, None, None, id="10 over 3 zones: a third fails"),
        pytest.param(spread(9, 3, "1/3", strict=True), 2, None, None, id="less than 1/3 of 9"),
    ],
)
def test_spread_design_picks_the_largest_max_skew_whose_worst_case_fits(
    design: SpreadDesign, limit: int, max_skew: int | None, worst: int | None
) -> None:
    plan = design_spread(design)
    assert (plan.max_per_domain, plan.max_skew, plan.worst_case) == (limit, max_skew, worst)
    if max_skew is not None and design.replicas <= 12:  # brute force only where it is quick
        assert reachable_worst(design.replicas, design.domains, max_skew) <= limit


def test_a_hard_spread_design_asks_for_min_domains_and_prints_the_constraint() -> None:
    plan = design_spread(spread(6, 3, "0.5"))
    assert plan.constraint() == {
        "maxSkew": 2,
        "topologyKey": LABEL_TOPOLOGY_ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "minDomains": 3,
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    assert plan.steps[0] == "allowed per domain: at most 1/2 of 6 pods = 3 → at most 3"
    assert "floor((3·(3+1) − 6 − 1)/2) = 2" in plan.steps[2]
    assert any(note.startswith("minDomains 3: without it") for note in plan.notes)


def test_a_soft_spread_design_has_no_min_domains_and_says_it_guarantees_nothing() -> None:
    plan = design_spread(spread(6, 3, "0.5", hard=False))
    constraint = plan.constraint()
    assert constraint is not None
    assert constraint["whenUnsatisfiable"] == "ScheduleAnyway"
    assert "minDomains" not in constraint
    assert any("not a guarantee" in note for note in plan.notes)


def test_an_impossible_spread_design_says_what_would_make_it_fit() -> None:
    plan = design_spread(spread(10, 3, "1/3"))
    assert plan.constraint() is None
    assert "no maxSkew ≥ 1 satisfies it" in plan.steps[-1]
    assert plan.notes == (
        "with 4 or more domains maxSkew 1 fits (ceil(10/3) = 4)",
        "with 12 replicas over 3 domains maxSkew 1 fits",
    )
    # Both remedies are real: the arithmetic accepts them.
    assert design_spread(spread(10, 4, "1/3")).max_skew == 1
    assert design_spread(spread(12, 3, "1/3")).max_skew == 1


@settings(max_examples=150, deadline=None)
@given(
    replicas=st.integers(min_value=1, max_value=30),
    domains=st.integers(min_value=1, max_value=6),
    numerator=st.integers(min_value=1, max_value=6),
    denominator=st.integers(min_value=1, max_value=6),
    strict=st.booleans(),
)
def test_every_remedy_offered_for_an_impossible_spread_really_fits(
    replicas: int, domains: int, numerator: int, denominator: int, strict: bool
) -> None:
    fraction = Fraction(min(numerator, denominator), denominator)
    design = SpreadDesign(
        selector={"app": "web"},
        topology_key=LABEL_TOPOLOGY_ZONE,
        replicas=replicas,
        domains=domains,
        max_fraction=fraction,
        strict=strict,
    )
    plan = design_spread(design)
    if plan.max_skew is not None:
        return
    offered = 0
    for note in plan.notes:
        words = note.split()
        if note.startswith("with ") and words[4] == "domains":
            offered += 1
            assert design_spread(replace(design, domains=int(words[1]))).max_skew is not None
        elif note.startswith("with ") and words[2] == "replicas":
            offered += 1
            assert design_spread(replace(design, replicas=int(words[1]))).max_skew is not None
    if plan.max_per_domain >= 1:
        assert offered >= 1  # more domains always help while a domain may hold a pod


def test_a_fraction_below_the_average_domain_cannot_be_fixed_with_replicas() -> None:
    plan = design_spread(spread(9, 3, "1/4"))
    assert plan.max_skew is None
    assert plan.notes[-1].startswith("no replica count helps")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("abc", "must be a fraction such as 0.5 or 1/3", id="not a number"),
        pytest.param("1/0", "must be a fraction such as 0.5 or 1/3", id="division by zero"),
        pytest.param("0", "must be greater than zero", id="zero"),
        pytest.param("3/2", "must be at most 1", id="more than the whole"),
    ],
)
def test_a_bad_fraction_is_a_validation_error_naming_the_option(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=f'--max-fraction: Invalid value: "{text}": '):
        parse_fraction(text)
    with pytest.raises(ValidationError, match=message):
        parse_fraction(text)


def test_selectors_are_key_value_pairs_checked_as_labels() -> None:
    assert parse_selector("app=web, tier=front") == {"app": "web", "tier": "front"}
    for bad in ("app", "=web", "app=web,app=db", "bad key=x", "app=no spaces"):
        with pytest.raises(ValidationError, match="--selector: "):
            parse_selector(bad)


# ---------------------------------------------------------------------------------------------
# The Redis design: formulas


def redis(
    shards: int,
    zones: tuple[str, ...] = ABC,
    *,
    replicas: int = 1,
    relaxed: bool = False,
    nodes_per_zone: int | None = None,
) -> RedisPlan:
    return design_redis_cluster(
        RedisDesign(
            shards=shards,
            replicas=replicas,
            zones=zones,
            relaxed=relaxed,
            nodes_per_zone=nodes_per_zone,
        )
    )


@pytest.mark.parametrize(
    ("plan", "total", "nodes_per_zone", "hostname", "zone", "per_node", "per_zone"),
    [
        pytest.param(redis(3), 6, 2, 1, 2, 1, 2, id="the source: 3 shards, 3 zones, strict"),
        pytest.param(redis(3, relaxed=True), 6, 2, 2, 3, 2, 3, id="the source's relaxed design"),
        pytest.param(redis(3, ("a",)), 6, 6, 1, None, 1, None, id="one zone, 6 nodes"),
        pytest.param(redis(3, ("a", "b")), 6, 3, 1, 2, 1, 3, id="two zones split evenly"),
        pytest.param(redis(4, ("a", "b")), 8, 4, 2, 3, 2, 4, id="two zones, 8 pods"),
        pytest.param(redis(4, ("a", "b", "c", "d")), 8, 2, 2, 3, 2, 3, id="four zones"),
        pytest.param(
            redis(4, ("a", "b", "c", "d"), relaxed=True), 8, 2, 2, 4, 2, 4, id="four, relaxed"
        ),
        pytest.param(redis(5), 10, 4, 3, 4, 3, 4, id="5 shards: 10 does not divide by 3"),
        pytest.param(redis(6, replicas=2), 18, 6, 5, 8, 5, 8, id="6 shards of 3 pods"),
        pytest.param(redis(3, nodes_per_zone=5), 6, 5, 1, 2, 1, 2, id="nodes per zone as given"),
    ],
)
def test_redis_formulas_follow_the_operators_rules(
    plan: RedisPlan,
    total: int,
    nodes_per_zone: int,
    hostname: int,
    zone: int | None,
    per_node: int,
    per_zone: int | None,
) -> None:
    assert plan.total == total
    assert plan.nodes_per_zone == nodes_per_zone
    assert (plan.hostname_max_skew, plan.zone_max_skew) == (hostname, zone)
    assert (plan.node_limit, plan.zone_limit) == (per_node, per_zone)


def test_scaling_out_recomputes_every_number() -> None:
    numbers = [
        (p.total, p.hostname_max_skew, p.zone_max_skew, p.nodes_per_zone, len(p.stateful_sets))
        for p in (redis(3), redis(4), redis(6), redis(9))
    ]
    assert numbers == [(6, 1, 2, 2, 3), (8, 2, 3, 3, 4), (12, 3, 5, 4, 6), (18, 5, 8, 6, 9)]


def test_the_arithmetic_is_spelled_out_step_by_step() -> None:
    steps = redis(3).steps
    assert "total = shards × pods per shard = 3 × 2 = 6" in steps
    assert (
        "hostname maxSkew (DoNotSchedule) = total/3 = 6/3 = 2; divisible by 3, so minus 1 → 1"
        in steps
    )
    assert (
        "zone maxSkew (DoNotSchedule) = total/2 = 6/2 = 3; divisible by 2, so minus 1 → 2" in steps
    )
    relaxed = redis(3, relaxed=True).steps
    assert (
        "hostname maxSkew (DoNotSchedule) = floor(total/3) = floor(6/3) = 2 "
        "(at most a third: no minus 1)" in relaxed
    )
    assert "total/3 = 10/3, rounded down 3; not divisible, so 3" in " ".join(redis(5).steps)


# ---------------------------------------------------------------------------------------------
# The Redis design: checks and impossible designs


def test_the_source_designs_guarantee_their_per_node_and_per_zone_limits() -> None:
    for plan in (redis(3), redis(3, relaxed=True), redis(3, ("a",)), redis(3, ("a", "b"))):
        assert plan.satisfiable
        assert all(check.holds for check in plan.checks), plan.checks
    zone = redis(3).checks[1]
    assert zone.requirement == "no zone holds half or more of the 6 pods (at most 2)"
    # The zone maxSkew alone would allow 3 of 6 in a zone; the hostname limit is what saves it.
    assert zone.reasons[1] == "zone maxSkew 2 over 3 zones allows min(6, floor((6 + 2·2)/3)) = 3"
    assert zone.reasons[-2:] == ("its 2 nodes hold at most 1 each: 2", "so at most 2 ≤ 2")


def test_more_nodes_per_zone_leave_the_zone_limit_to_the_zone_max_skew_which_is_too_loose() -> None:
    plan = redis(3, nodes_per_zone=4)
    zone = plan.checks[1]
    assert not zone.holds
    assert zone.reasons[-1] == (
        "so up to 3 > 2 is not ruled out (verify tells if it is reached); "
        "zone maxSkew 1 would guarantee it"
    )
    # A placement the constraints allow, 3 + 2 + 1 pods, each step within maxSkew 2:
    assert reachable_worst(6, 3, 2) == 3


def test_a_shard_with_more_pods_than_zones_cannot_be_placed() -> None:
    plan = redis(2, ("a", "b"), replicas=2)
    assert not plan.satisfiable
    assert plan.problems == (
        "a shard has 3 pods but there are only 2 zones: the anti-affinity leaves pod 3 of "
        "each shard Pending",
    )


def test_a_shard_with_more_pods_than_nodes_in_one_zone_cannot_be_placed() -> None:
    plan = redis(2, ("a",), replicas=2, nodes_per_zone=2)
    assert any(p.startswith("a shard has 3 pods but there are only 2 nodes") for p in plan.problems)


def test_too_few_pods_for_less_than_a_third_per_node_is_flagged_and_max_skew_stays_valid() -> None:
    plan = redis(1, ("a", "b"))  # 2 pods: each node must hold less than 2/3 of a pod
    assert plan.node_limit == 0
    assert plan.hostname_max_skew == 1
    assert plan.zone_max_skew == 1
    assert "maxSkew must be greater than zero, so 1" in " ".join(plan.steps)
    assert plan.problems[0].startswith("4 nodes × at most 0 pods each hold 0 < 2 pods")


def test_less_than_half_per_zone_over_three_zones_needs_enough_pods() -> None:
    plan = redis(2)  # 4 pods over 3 zones, each zone fewer than 2: at most 3 placed
    assert plan.problems == (
        "3 zones × at most 1 pods each hold 3 < 4 pods: some pods can never be placed",
    )
    assert redis(2, relaxed=True).satisfiable


def reachable_redis_max(plan: RedisPlan) -> tuple[int, int]:
    """The most pods one node and one zone hold in any state reachable by placing the pods in
    any order on any node the hard constraints allow: both DoNotSchedule spreads (skew against
    the global minimum) and the shard anti-affinity. Any order is more than the controllers
    allow, so this is an upper bound on what verify can reach."""
    zones = [zone for zone in plan.design.zones for _ in range(plan.nodes_per_zone)]
    anti_on_zone = plan.anti_affinity_key == LABEL_TOPOLOGY_ZONE
    start = (tuple(() for _ in zones), (plan.pods_per_shard,) * plan.design.shards)
    seen = {start}
    frontier = [start]
    most_node = most_zone = 0
    while frontier:
        nodes, left = frontier.pop()
        per_zone: dict[str, int] = {}
        for zone, pods in zip(zones, nodes, strict=True):
            per_zone[zone] = per_zone.get(zone, 0) + len(pods)
        most_node = max(most_node, *(len(p) for p in nodes))
        most_zone = max(most_zone, *per_zone.values())
        low_node = min(len(p) for p in nodes)
        low_zone = min(per_zone.values())
        for shard, count in enumerate(left):
            if not count:
                continue
            for i, (zone, pods) in enumerate(zip(zones, nodes, strict=True)):
                if len(pods) + 1 - low_node > plan.hostname_max_skew:
                    continue
                zone_skew = plan.zone_max_skew
                if zone_skew is not None and per_zone[zone] + 1 - low_zone > zone_skew:
                    continue
                peers = (
                    [p for z, p in zip(zones, nodes, strict=True) if z == zone]
                    if anti_on_zone
                    else [pods]
                )
                if any(shard in p for p in peers):
                    continue
                placed = tuple(sorted((*pods, shard)))
                state = (
                    (*nodes[:i], placed, *nodes[i + 1 :]),
                    (*left[:shard], count - 1, *left[shard + 1 :]),
                )
                if state not in seen:
                    seen.add(state)
                    frontier.append(state)
    return most_node, most_zone


@settings(max_examples=40, deadline=None)
@given(
    shards=st.integers(min_value=1, max_value=3),
    replicas=st.integers(min_value=0, max_value=2),
    zones=st.integers(min_value=1, max_value=3),
    nodes_per_zone=st.integers(min_value=1, max_value=3),
    relaxed=st.booleans(),
)
def test_a_rule_reported_as_guaranteed_holds_in_every_reachable_placement(
    shards: int, replicas: int, zones: int, nodes_per_zone: int, relaxed: bool
) -> None:
    plan = redis(
        shards,
        ABC[:zones],
        replicas=replicas,
        relaxed=relaxed,
        nodes_per_zone=nodes_per_zone,
    )
    most_node, most_zone = reachable_redis_max(plan)
    node_check = plan.checks[0]
    if node_check.holds:
        assert most_node <= plan.node_limit
    if plan.zone_limit is not None and plan.checks[1].holds:
        assert most_zone <= plan.zone_limit


# ---------------------------------------------------------------------------------------------
# The Redis design: manifests


def template_pod(sts: dict[str, Any], ordinal: int, node: str = "") -> dict[str, Any]:
    """The pod the StatefulSet controller makes for ``ordinal``, as a manifest."""
    template = sts["spec"]["template"]
    spec = dict(template["spec"])
    if node:
        spec["nodeName"] = node
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{sts['metadata']['name']}-{ordinal}",
            "namespace": sts["metadata"]["namespace"],
            "labels": dict(template["metadata"]["labels"]),
        },
        "spec": spec,
    }


@pytest.mark.parametrize(
    ("zones", "anti_key", "constraints"),
    [
        pytest.param(
            ("a",),
            LABEL_HOSTNAME,
            [(LABEL_HOSTNAME, 1, "DoNotSchedule"), (LABEL_HOSTNAME, 1, "ScheduleAnyway")],
            id="one zone: hostname anti-affinity, no zone spread",
        ),
        pytest.param(
            ABC,
            LABEL_TOPOLOGY_ZONE,
            [
                (LABEL_HOSTNAME, 1, "DoNotSchedule"),
                (LABEL_TOPOLOGY_ZONE, 2, "DoNotSchedule"),
                (LABEL_HOSTNAME, 1, "ScheduleAnyway"),
            ],
            id="several zones: zone anti-affinity and zone spread",
        ),
    ],
)
def test_each_shard_gets_a_stateful_set_with_the_constraints_and_affinities(
    zones: tuple[str, ...], anti_key: str, constraints: list[tuple[str, int, str]]
) -> None:
    plan = redis(3, zones)
    assert [s["metadata"]["name"] for s in plan.stateful_sets] == [
        "redis-cluster-shard-0",
        "redis-cluster-shard-1",
        "redis-cluster-shard-2",
    ]
    for shard, sts in enumerate(plan.stateful_sets):
        spec = sts["spec"]
        labels = {APP_LABEL: "redis-cluster", SHARD_LABEL: str(shard)}
        assert spec["replicas"] == 2
        assert spec["serviceName"] == "redis-cluster"
        assert spec["selector"] == {"matchLabels": labels}
        pod = spec["template"]
        assert pod["metadata"]["labels"] == labels
        tsc = pod["spec"]["topologySpreadConstraints"]
        assert [(c["topologyKey"], c["maxSkew"], c["whenUnsatisfiable"]) for c in tsc] == (
            constraints
        )
        # Every spread counts the whole cluster's pods, not the shard's.
        assert all(c["labelSelector"] == {"matchLabels": {APP_LABEL: "redis-cluster"}} for c in tsc)
        affinity = pod["spec"]["affinity"]
        terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert terms["nodeSelectorTerms"] == [
            {
                "matchExpressions": [
                    {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": list(zones)}
                ]
            }
        ]
        (anti,) = affinity["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert anti == {"labelSelector": {"matchLabels": labels}, "topologyKey": anti_key}


@pytest.mark.parametrize(
    "plan",
    [
        pytest.param(redis(3), id="three zones"),
        pytest.param(redis(3, ("a",)), id="one zone"),
        pytest.param(redis(4, ("zone-1", "zone-2"), relaxed=True), id="two zones relaxed"),
    ],
)
def test_the_manifests_pass_the_api_servers_validation(plan: RedisPlan) -> None:
    for raw in plan.stateful_sets:
        sts = decode_object(raw, StatefulSet, "design")
        pod = get_pod_from_template(sts.spec.template, sts.metadata.name, None)
        pod = msgspec.structs.replace(
            pod, metadata=msgspec.structs.replace(pod.metadata, namespace="default")
        )
        assert validate_pod(pod) == []
    for raw in plan.nodes():
        assert validate_node(decode_object(raw, Node, "design")) == []


def test_the_scenario_has_the_nodes_the_workloads_and_the_invariants() -> None:
    plan = redis(3)
    scenario = plan.scenario()
    assert sorted(scenario) == ["invariants", "nodes", "workloads"]
    assert [n["metadata"]["name"] for n in scenario["nodes"]] == [
        "a-node-1",
        "a-node-2",
        "b-node-1",
        "b-node-2",
        "c-node-1",
        "c-node-2",
    ]
    assert scenario["nodes"][2]["metadata"]["labels"] == {
        LABEL_HOSTNAME: "b-node-1",
        LABEL_TOPOLOGY_ZONE: "b",
    }
    assert scenario["workloads"] == list(plan.stateful_sets)
    app = {"matchLabels": {APP_LABEL: "redis-cluster"}}
    assert scenario["invariants"] == [
        {
            "name": "no node holds a third or more of the 6 pods (at most 1)",
            "maxPerDomain": {"selector": app, "topologyKey": LABEL_HOSTNAME, "max": 1},
        },
        {
            "name": "no zone holds half or more of the 6 pods (at most 2)",
            "maxPerDomain": {"selector": app, "topologyKey": LABEL_TOPOLOGY_ZONE, "max": 2},
        },
        {
            "name": "a shard's master and replicas never share a zone",
            "distinct": {"selector": app, "topologyKey": LABEL_TOPOLOGY_ZONE, "groupBy": "shard"},
        },
    ]


def test_the_relaxed_scenario_checks_the_relaxed_limits_and_one_zone_only_nodes() -> None:
    relaxed = redis(3, relaxed=True).invariants()
    assert [i["maxPerDomain"]["max"] for i in relaxed[:2]] == [2, 3]
    single = redis(3, ("a",)).invariants()
    assert [next(iter(i)) for i in single] == ["name", "name"]
    assert single[0]["maxPerDomain"]["topologyKey"] == LABEL_HOSTNAME
    assert single[1]["distinct"]["topologyKey"] == LABEL_HOSTNAME
    two = redis(3, ("a", "b")).invariants()
    assert two[1]["maxPerDomain"]["max"] == 3  # an even split of 6


# ---------------------------------------------------------------------------------------------
# The manifests under the real scheduler (one order each; every order is verify's job)


def run_scenario(tmp_path: Path, doc: dict[str, Any]) -> Any:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(doc))
    return schedule(load_scenario(path), seed=1)


# The source's hand-worked deadlock: shards 0 and 1 fill zones a and b, shard 2's master takes
# c-node-1; its replica may not join a or b (a node there would hold 2 while c-node-2 holds 0,
# skew 2 > 1) nor c (its master is there).
DEADLOCK = [
    (0, 0, "a-node-1"),
    (1, 0, "a-node-2"),
    (0, 1, "b-node-1"),
    (1, 1, "b-node-2"),
    (2, 0, "c-node-1"),
]


def test_the_strict_design_reproduces_the_sources_deadlock(tmp_path: Path) -> None:
    plan = redis(3)
    sets = plan.stateful_sets
    doc = {
        "nodes": plan.nodes(),
        "pods": [template_pod(sets[s], o, node) for s, o, node in DEADLOCK],
        "queue": [template_pod(sets[2], 1)],
    }
    (outcome,) = run_scenario(tmp_path, doc).outcomes
    assert outcome.node is None
    assert outcome.message.startswith("0/6 nodes are available: ")
    assert "1 node(s) didn't match pod anti-affinity rules" in outcome.message
    assert "5 node(s) didn't match pod topology spread constraints" in outcome.message


def test_the_relaxed_design_places_the_replica_the_strict_one_strands(tmp_path: Path) -> None:
    plan = redis(3, relaxed=True)
    sets = plan.stateful_sets
    doc = {
        "nodes": plan.nodes(),
        "pods": [template_pod(sets[s], o, node) for s, o, node in DEADLOCK],
        "queue": [template_pod(sets[2], 1)],
    }
    (outcome,) = run_scenario(tmp_path, doc).outcomes
    assert outcome.node is not None
    assert outcome.node.split("-")[0] in ("a", "b")


@pytest.mark.parametrize(
    "plan",
    [
        pytest.param(redis(3, ("a",)), id="one zone, 6 nodes"),
        pytest.param(redis(3, ("a", "b")), id="two zones"),
        pytest.param(redis(3, relaxed=True), id="three zones relaxed"),
    ],
)
def test_one_scheduling_order_binds_every_pod_within_the_limits(
    tmp_path: Path, plan: RedisPlan
) -> None:
    queue = [
        template_pod(sts, ordinal)
        for ordinal in range(plan.pods_per_shard)
        for sts in plan.stateful_sets
    ]
    run = run_scenario(tmp_path, {"nodes": plan.nodes(), "queue": queue})
    assert not run.pending, [o.message for o in run.pending]
    zone_of = {
        n["metadata"]["name"]: n["metadata"]["labels"][LABEL_TOPOLOGY_ZONE] for n in plan.nodes()
    }
    per_node: dict[str, int] = {}
    per_zone: dict[str, int] = {}
    shard_domains: set[tuple[str, str]] = set()
    for o in run.outcomes:
        node = o.node
        assert node is not None
        per_node[node] = per_node.get(node, 0) + 1
        per_zone[zone_of[node]] = per_zone.get(zone_of[node], 0) + 1
        domain = node if plan.anti_affinity_key == LABEL_HOSTNAME else zone_of[node]
        shard_domains.add((o.pod.metadata.labels[SHARD_LABEL], domain))
    assert max(per_node.values()) <= plan.node_limit
    if plan.zone_limit is not None:
        assert max(per_zone.values()) <= plan.zone_limit
    assert len(shard_domains) == plan.total  # no shard repeats a domain


# ---------------------------------------------------------------------------------------------
# The command line


def test_the_text_output_is_the_arithmetic_as_comments_over_manifests_that_load_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        ["design", "redis-cluster", "--shards", "3", "--replicas", "1", "--zones", "a,b,c"],
        capsys,
    )
    assert (code, err) == (0, "")
    assert out.startswith(
        "# Redis cluster redis-cluster: 3 shards × 2 pods = 6 pods on 3 zones × 2 nodes, "
        '"less than" rules\n'
    )
    assert "#   ok: no zone holds half or more of the 6 pods (at most 2)\n" in out
    objects = load_text(out, "design.yaml")
    assert [type(o) for o in objects] == [StatefulSet] * 3
    assert objects[2].spec.template.spec.topology_spread_constraints[1].max_skew == 2


def test_yaml_output_is_only_the_manifests_and_json_has_every_number(
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["design", "redis-cluster", "--shards", "4", "--zones", "a,b,c", "--relaxed"]
    code, out, _ = run([*base, "-o", "yaml"], capsys)
    assert code == 0
    assert not any(line.startswith("#") for line in out.splitlines())
    assert len(load_text(out, "design.yaml")) == 4
    code, out, _ = run([*base, "-o", "json"], capsys)
    doc = json.loads(out)
    assert (doc["total"], doc["hostnameMaxSkew"], doc["zoneMaxSkew"]) == (8, 2, 4)
    assert doc["scenario"]["invariants"][0]["maxPerDomain"]["max"] == 2


def test_the_scenario_file_is_written_in_the_verify_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "redis.yaml"
    argv = ["design", "redis-cluster", "--shards", "3", "--zones", "a,b,c", "--scenario", str(path)]
    code, _, _ = run(argv, capsys)
    assert code == 0
    doc = yaml.safe_load(path.read_text())
    assert doc == redis(3).scenario()


@pytest.mark.parametrize(
    ("relaxed", "code", "verdict"),
    [
        pytest.param(False, 1, "COUNTEREXAMPLE: deadlock after 5 bindings", id="less than"),
        pytest.param(True, 0, "PROVED: every scheduling order binds every pod", id="at most"),
    ],
)
def test_verify_checks_the_design_over_every_order_and_takes_its_verdict(
    relaxed: bool, code: int, verdict: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The source's 3 shards x 2 pods on 3 zones x 2 nodes: "less than a third" deadlocks in
    # some orders; its proposed "at most" (hostname maxSkew 2) never does.
    argv = ["design", "redis-cluster", "--shards", "3", "--zones", "a,b,c", "--verify"]
    got, out, _ = run([*argv, "--relaxed"] if relaxed else argv, capsys)
    assert got == code
    assert verdict in out


def test_verify_without_a_scenario_file_names_no_deleted_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["design", "redis-cluster", "--shards", "2", "--zones", "a,b", "--relaxed"]
    got, out, _ = run([*argv, "--verify"], capsys)
    assert got == 0
    assert "topospread-design-" not in out and "scenario.yaml" not in out
    assert "the design's scenario (not kept: --scenario FILE writes it): 4 pods to place" in out


def test_verify_reads_the_scenario_file_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "redis.yaml"
    argv = ["design", "redis-cluster", "--shards", "2", "--zones", "a,b", "--relaxed"]
    got, out, _ = run([*argv, "--scenario", str(path), "--verify"], capsys)
    assert got == 0
    assert f"{path}: 4 pods to place" in out
    assert yaml.safe_load(path.read_text()) == redis(2, zones=("a", "b"), relaxed=True).scenario()


def test_after_json_output_the_verify_report_goes_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["design", "redis-cluster", "--shards", "3", "--zones", "a,b,c", "--relaxed"]
    got, out, err = run([*argv, "--verify", "-o", "json"], capsys)
    assert got == 0
    assert json.loads(out)["hostnameMaxSkew"] == 2  # stdout stays one JSON document
    assert "PROVED: every scheduling order binds every pod" in err


def test_an_unsatisfiable_redis_design_exits_1_and_says_why(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["design", "redis-cluster", "--shards", "2", "--replicas", "2", "--zones", "a,b"]
    code, out, _ = run(argv, capsys)
    assert code == 1
    assert "# CANNOT BE SATISFIED:\n#   - a shard has 3 pods but there are only 2 zones" in out
    code, _, err = run([*argv, "-o", "yaml"], capsys)
    assert code == 1
    assert "topospread: warning: cannot be satisfied: a shard has 3 pods" in err


SPREAD = ["design", "spread", "--selector", "app=web", "--topology-key", LABEL_TOPOLOGY_ZONE]
SIX_OVER_THREE = ["--replicas", "6", "--domains", "3", "--max-fraction", "0.5"]


def test_the_spread_command_prints_the_arithmetic_and_the_constraint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*SPREAD, "--replicas", "6", "--domains", "3", "--max-fraction", "0.5"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert "# 3. largest s: floor((3·(3+1) − 6 − 1)/2) = 2" in out
    assert yaml.safe_load(out) == {
        "topologySpreadConstraints": [design_spread(spread(6, 3, "0.5")).constraint()]
    }


def test_the_spread_command_exits_1_when_no_max_skew_fits(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*SPREAD, "--replicas", "10", "--domains", "3", "--max-fraction", "1/3"]
    code, out, _ = run(argv, capsys)
    assert code == 1
    assert "no maxSkew ≥ 1 satisfies it" in out
    assert "# - with 4 or more domains maxSkew 1 fits (ceil(10/3) = 4)" in out
    code, out, err = run([*argv, "-o", "yaml"], capsys)
    assert (code, out) == (1, "")
    assert "no maxSkew ≥ 1 satisfies it" in err


def test_the_spread_scenario_has_the_domains_the_deployment_and_the_limit() -> None:
    plan = design_spread(replace(spread(6, 3, "0.5"), nodes_per_domain=2))
    doc = plan.scenario()
    assert doc is not None
    nodes = [decode_object(n, Node, "n") for n in doc["nodes"]]
    assert [n.metadata.name for n in nodes][:3] == [
        "zone-1-node-1",
        "zone-1-node-2",
        "zone-2-node-1",
    ]
    assert [n.metadata.labels[LABEL_TOPOLOGY_ZONE] for n in nodes] == [
        "zone-1", "zone-1", "zone-2", "zone-2", "zone-3", "zone-3"
    ]  # fmt: skip
    for node in nodes:
        validate_node(node)
    (deployment,) = doc["workloads"]
    assert deployment["spec"]["replicas"] == 6
    template = deployment["spec"]["template"]
    assert template["spec"]["topologySpreadConstraints"] == [plan.constraint()]
    assert template["metadata"]["labels"] == {"app": "web"}
    (invariant,) = doc["invariants"]
    assert invariant["maxPerDomain"] == {
        "selector": {"matchLabels": {"app": "web"}},
        "topologyKey": LABEL_TOPOLOGY_ZONE,
        "max": 3,
    }


def test_a_hostname_spread_scenario_has_one_node_per_domain() -> None:
    design = replace(spread(4, 4, "0.5"), topology_key=LABEL_HOSTNAME)
    doc = design_spread(design).scenario()
    assert doc is not None
    assert [n["metadata"]["name"] for n in doc["nodes"]] == ["node-1", "node-2", "node-3", "node-4"]


def test_the_spread_command_verifies_its_design_and_writes_the_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spread.yaml"
    argv = [*SPREAD, "--replicas", "6", "--domains", "3", "--max-fraction", "0.5"]
    code, out, _ = run(
        [*argv, "--nodes-per-domain", "2", "--scenario", str(path), "--verify"], capsys
    )
    assert code == 0
    assert "PROVED: every scheduling order binds every pod and keeps every invariant" in out
    assert "at most 3 pods per topology.kubernetes.io/zone" in out
    expected = design_spread(replace(spread(6, 3, "0.5"), nodes_per_domain=2)).scenario()
    assert yaml.safe_load(path.read_text()) == expected


def test_the_spread_scenario_catches_a_max_skew_looser_than_the_design(tmp_path: Path) -> None:
    # The invariant is checked for real: with maxSkew 4 instead of the designed 2, some order
    # of feasible choices puts 4 of the 6 pods in one zone. (The default scores alone would
    # still balance them: LeastAllocated prefers the emptier nodes.)
    doc = design_spread(spread(6, 3, "0.5")).scenario()
    assert doc is not None
    doc["workloads"][0]["spec"]["template"]["spec"]["topologySpreadConstraints"][0]["maxSkew"] = 4
    path = tmp_path / "loose.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = verify(load_verify_scenario(path), any_feasible=True)
    assert not result.ok and result.counterexample is not None
    assert "at most 3 pods per" in json.dumps(result.to_json())


def test_a_spread_design_that_does_not_fit_has_nothing_to_verify(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [*SPREAD, "--replicas", "10", "--domains", "3", "--max-fraction", "1/3", "--verify"]
    code, _, err = run(argv, capsys)
    assert code == 1
    assert err == "topospread: warning: no constraint fits: nothing to verify\n"


REDIS = ["design", "redis-cluster"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            [*REDIS, "--shards", "0", "--zones", "a"],
            "design: --shards: Invalid value: 0: must be greater than zero",
            id="no shards",
        ),
        pytest.param(
            [*REDIS, "--shards", "3", "--zones", ""],
            "design: --zones: Required value: give at least one zone",
            id="empty zone list",
        ),
        pytest.param(
            [*REDIS, "--shards", "3", "--zones", "a,,b"],
            'design: --zones: Invalid value: "": a zone name must not be empty',
            id="an empty zone in the list",
        ),
        pytest.param(
            [*REDIS, "--shards", "3", "--zones", "a,b,a"],
            'design: --zones: Duplicate value: "a"',
            id="duplicate zones",
        ),
        pytest.param(
            [*REDIS, "--shards", "3", "--zones", "Zone_A"],
            'design: --zones: Invalid value: "Zone_A": a zone names nodes <zone>-node-<i>: ',
            id="a zone that cannot name nodes",
        ),
        pytest.param(
            [*REDIS, "--shards", "3", "--zones", "a", "--replicas", "-1"],
            "design: --replicas: Invalid value: -1: must not be negative",
            id="negative replicas",
        ),
        pytest.param(
            [*REDIS, "--shards", "3", "--zones", "a", "--nodes-per-zone", "0"],
            "design: --nodes-per-zone: Invalid value: 0: must be greater than zero",
            id="no nodes",
        ),
        pytest.param(
            [*SPREAD, "--replicas", "6", "--domains", "3", "--max-fraction", "half"],
            'design: --max-fraction: Invalid value: "half": must be a fraction such as 0.5',
            id="bad fraction",
        ),
        pytest.param(
            [*SPREAD[:-1], "bad key", "--replicas", "6", "--domains", "3", "--max-fraction", "1"],
            'design: --topology-key: Invalid value: "bad key": name part must consist of',
            id="bad topology key",
        ),
        pytest.param(
            [*SPREAD, "--replicas", "0", "--domains", "3", "--max-fraction", "0.5"],
            "design: --replicas: Invalid value: 0: must be greater than zero",
            id="no replicas",
        ),
        pytest.param(
            [*SPREAD, "--replicas", "6", "--domains", "0", "--max-fraction", "0.5"],
            "design: --domains: Invalid value: 0: must be greater than zero",
            id="no domains",
        ),
        pytest.param(
            [*SPREAD, *SIX_OVER_THREE, "--nodes-per-domain", "0"],
            "design: --nodes-per-domain: Invalid value: 0: must be greater than zero",
            id="no nodes per domain",
        ),
        pytest.param(
            [*SPREAD[:-1], LABEL_HOSTNAME, *SIX_OVER_THREE, "--nodes-per-domain", "2"],
            "design: --nodes-per-domain: Invalid value: 2: a kubernetes.io/hostname domain is "
            "one node",
            id="several nodes in a hostname domain",
        ),
    ],
)
def test_invalid_arguments_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2
    assert out == ""
    assert err.startswith(f"topospread: error: {message}")
    assert err.count("\n") == 1


def test_parse_zones_strips_blanks() -> None:
    assert parse_zones(" a, b ,c ") == ABC
