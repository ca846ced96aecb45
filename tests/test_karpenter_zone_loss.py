"""Karpenter in ``simulate``'s loop after a zone loss: stuck exactly when upstream is, and
recovering when upstream does (examples/simulations/autoscaler-zone-outage-karpenter.yaml).

Upstream keeps a lost zone a topology domain while any of these holds: its NodePool's instance
types are offered there (the AWS provider's instance types keep a zone whose offerings are all
in the unavailable-offerings cache), its NodePool names it, or its dark nodes exist and the
spread ignores taints. A DoNotSchedule zone spread then needs the zone's 0 replicas raised
first, and no launch there succeeds: the pod waits until the zone returns. It recovers during
the loss when the zone stops being a domain (a NodePool without it and a spread honouring
taints) or when the spread is a ScheduleAnyway preference, relaxed away once the zone has no
offering left.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from topospread.analysis.simulate import TimelineReport, simulate
from topospread.simulator.timeline_format import parse_timeline

EXAMPLE = Path(__file__).parent.parent / "examples" / "simulations"
ZONE = "topology.kubernetes.io/zone"


def example() -> dict[str, Any]:
    text = (EXAMPLE / "autoscaler-zone-outage-karpenter.yaml").read_text()
    doc: dict[str, Any] = yaml.safe_load(text)
    return doc


def run(doc: dict[str, Any]) -> TimelineReport:
    return simulate(parse_timeline(doc, "t.yaml"), seed=0)


def changes(report: TimelineReport, action: str) -> list[dict[str, Any]]:
    return [
        c
        for s in report.to_json()["steps"]
        for c in s.get("autoscaler", [])
        if c["action"] == action
    ]


def pending_apps(report: TimelineReport, step: int) -> list[str]:
    return sorted(key.split("/")[1].split("-")[0] for key in report.steps[step].pending)


def test_the_strict_replica_waits_for_the_zone_and_the_soft_one_gets_a_node_elsewhere() -> None:
    report = run(example())
    failed = changes(report, "launchFailed")
    # Evicted at 5m: spot, on-demand, then the dearer spot offerings of zone-c are refused
    # one batch after another; the cache lets go after 3m and the same happens again.
    assert [(c["time"], c["zone"]) for c in failed] == [
        (300.0, "zone-c"),
        (301.0, "zone-c"),
        (302.0, "zone-c"),
        (480.0, "zone-c"),
        (481.0, "zone-c"),
        (482.0, "zone-c"),
    ]
    [added] = [c for c in changes(report, "add") if c["time"] < 600.0]
    assert (added["time"], added["zone"]) == (303.0, "zone-a")
    assert "default/soft-" in added["reason"]
    assert pending_apps(report, 3) == ["strict"]
    [why] = report.steps[3].pending.values()
    assert "didn't match pod topology spread constraints" in why
    stuck = [c for c in changes(report, "noScaleUp") if "strict" in c["reason"]]
    assert stuck and all(f"{ZONE} In [zone-c]" in c["reason"] for c in stuck)
    # zone-c's node is back: it takes the strict replica; the zone-a node is consolidated.
    assert report.steps[4].pending == {} and report.steps[5].pending == {}
    [removed] = changes(report, "remove")
    assert removed["node"] == added["node"]


def with_policy(doc: dict[str, Any], app: str, policy: str) -> None:
    for obj in doc["objects"]:
        if obj["metadata"]["name"] == app:
            spread = obj["spec"]["template"]["spec"]["topologySpreadConstraints"][0]
            spread["nodeTaintsPolicy"] = policy


def without_zone_c(doc: dict[str, Any]) -> None:
    [pool] = doc["autoscaler"]["karpenter"]["nodePools"]
    pool["requirements"] = [{"key": ZONE, "operator": "In", "values": ["zone-a", "zone-b"]}]


@pytest.mark.parametrize(
    ("policy", "nodepool_has_zone_c", "recovers"),
    [
        ("Ignore", True, False),
        ("Honor", True, False),
        ("Ignore", False, False),
        ("Honor", False, True),
    ],
    ids=[
        "ignore taints, zone-c in the NodePool: stuck",
        "honour taints, zone-c in the NodePool: stuck (its instance types offer zone-c)",
        "ignore taints, no zone-c in the NodePool: stuck (the dark node is a domain)",
        "honour taints, no zone-c in the NodePool: recovers in zone-a",
    ],
)
def test_a_strict_spread_recovers_during_the_loss_only_when_zone_c_is_no_domain(
    policy: str, nodepool_has_zone_c: bool, recovers: bool
) -> None:
    doc = copy.deepcopy(example())
    # Only the strict replicas, on nodes of one CPU: zone-a and zone-b have no room left.
    doc["objects"] = [o for o in doc["objects"] if o["metadata"]["name"] == "strict"]
    doc["nodeGroups"][0]["template"]["status"]["capacity"]["cpu"] = "1"
    with_policy(doc, "strict", policy)
    if not nodepool_has_zone_c:
        without_zone_c(doc)
    report = run(doc)
    # Step 3 ends at 10m, the zone still dark.
    strict_added = [
        c for c in changes(report, "add") if c["time"] < 600.0 and "default/strict-" in c["reason"]
    ]
    if recovers:
        assert [c["zone"] for c in strict_added] == ["zone-a"]
        assert pending_apps(report, 3) == []
    else:
        assert strict_added == []
        assert pending_apps(report, 3) == ["strict"]
    # Whatever happened during the loss, nothing is Pending once zone-c is back.
    assert report.steps[-1].pending == {}


@pytest.mark.parametrize(
    ("nodepool_has_zone_c", "recovers"),
    [(True, False), (False, True)],
    ids=[
        "zone-c in the NodePool: stuck (its instance types offer zone-c)",
        "no zone-c in the NodePool: recovers in zone-a",
    ],
)
def test_deleting_the_dark_nodes_helps_only_a_nodepool_without_the_zone(
    nodepool_has_zone_c: bool, recovers: bool
) -> None:
    # The dark node is deleted at once (its pod with it), so the spread ignoring taints has no
    # node of zone-c to count; only the NodePool's instance types can keep zone-c a domain.
    doc = copy.deepcopy(example())
    doc["objects"] = [o for o in doc["objects"] if o["metadata"]["name"] == "strict"]
    doc["nodeGroups"][0]["template"]["status"]["capacity"]["cpu"] = "1"
    lose, stockout, wait = doc["timeline"][:3]
    doc["timeline"] = [lose, stockout, {"removeNode": "node-zone-c-1"}, wait]
    if not nodepool_has_zone_c:
        without_zone_c(doc)
    report = run(doc)
    # Step 4 (the wait) ends at 10m, the zone still dark.
    added = changes(report, "add")
    if recovers:
        assert [(c["time"], c["zone"]) for c in added] == [(1.0, "zone-a")]
        assert report.steps[4].pending == {}
    else:
        assert added == []
        assert pending_apps(report, 4) == ["strict"]
