"""Karpenter's NodeClaim deletion on the simulation's clock (simulator/karpenter_termination.py):
expiration after the NodePool's expireAfter, and the node's termination — a drain that retries
what the budgets refuse for as long as they refuse it, in upstream's tiers, bounded only by a
terminationGracePeriod, the Node gone after MinDrainTime and the instance's termination."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from test_autoscaling import SECOND, ZONE, changes, run, web
from topospread.autoscaler.karpenter.nodepool import DEFAULT_EXPIRE_AFTER, parse_nodepool
from topospread.render.schemas import load_schema
from topospread.simulator.karpenter_termination import (
    EVICTION_MAX_DELAY,
    _back_off,
    _Queued,
    look,
    start_termination,
    work_queue,
)
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline


def pdb(min_available: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}},
    }


def expiring(
    *objects: dict[str, Any], grace: str | None = None, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """Two 1-CPU web pods on one Karpenter node that expires 5m after its launch at 1s."""
    pool: dict[str, Any] = {
        "name": "default",
        "expireAfter": "5m",
        "requirements": [
            {"key": ZONE, "operator": "In", "values": ["zone-a"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
    }
    if grace is not None:
        pool["terminationGracePeriod"] = grace
    deployment = web(2, cpu="1")
    template = deployment["spec"]["template"]
    del template["spec"]["topologySpreadConstraints"]
    if annotations:
        template["metadata"]["annotations"] = annotations
    return {
        "autoscaler": {"karpenter": {"nodePools": [pool]}},
        "objects": [deployment, *objects],
        "timeline": [{"wait": "10m"}],
    }


def seconds(change: dict[str, Any]) -> float:
    return float(change["time"])


def test_an_expired_nodeclaim_is_deleted_its_pods_evicted_and_placed_on_a_new_node() -> None:
    report = run(expiring())
    first, second = changes(report, "add")
    (expired,) = changes(report, "expired")
    (removed,) = changes(report, "remove")
    assert (first["node"], seconds(first)) == ("default-00001", 1.0)
    # Upstream: the expiration controller deletes the nodeclaim at creation + expireAfter.
    assert (expired["node"], seconds(expired)) == ("default-00001", 301.0)
    assert expired["reason"] == (
        "default-00001 expired (expireAfter 5m0s of NodePool default): its nodeclaim is deleted"
    )
    # Nothing is launched before the deletion (expiration is forceful); the evicted pods'
    # replacements are a provisioning batch (1s idle) later.
    assert (second["node"], seconds(second)) == ("default-00002", 302.0)
    # Evicted at once (no budget), the Node goes after MinDrainTime (5s) and the instance's
    # termination (the controller's look 5s later).
    assert (removed["node"], seconds(removed)) == ("default-00001", 311.0)
    assert removed["reason"] == "removed default-00001: expired after 5m0s"
    assert report.steps[-1].pending == {} and report.steps[-1].node_groups == {"default": 1}
    jsonschema.validate(report.to_json(), load_schema("simulate"))


def test_a_budget_that_allows_no_eviction_holds_the_node_for_as_long_as_it_does() -> None:
    report = run(expiring(pdb(2)))
    (draining,) = changes(report, "draining")
    assert seconds(draining) == 301.0
    bound = report.to_json()["steps"][-1]["bound"]
    keys = sorted(k for k, node in bound.items() if node == "default-00001")
    assert len(keys) == 2
    assert draining["reason"] == (
        "draining default-00001: "
        + "; ".join(f"Failed to drain node, evicting pod violates a PDB (Pod={k})" for k in keys)
        + "; retried"
    )
    # Upstream's drain has no time limit of its own: the node stays, its pods on it, and the
    # provisioner has launched a node for them (the pods of a deleting node are placed).
    assert changes(report, "remove") == []
    assert changes(report, "blocked") == []
    assert [c["node"] for c in changes(report, "add")] == ["default-00001", "default-00002"]
    assert report.steps[-1].node_groups == {"default": 2}


def test_the_termination_grace_period_deletes_what_the_budget_blocks() -> None:
    report = run(expiring(pdb(2), grace="2m"))
    (draining,) = changes(report, "draining")
    assert draining["reason"].endswith(
        "; retried, its pods deleted by 7m1s (terminationGracePeriod)"
    )
    (removed,) = changes(report, "remove")
    # Deadline 421s; a pod with the default 30s grace is due for deletion after 391s. Its
    # eviction retries (100ms doubling to 10s from 301s) fall at ..., 383.7s, 393.7s: the
    # first after 391s deletes it; the look at 394s finds the node empty, the instance
    # goes 5s later.
    assert seconds(removed) == 399.0
    assert report.steps[-1].pending == {} and report.steps[-1].node_groups == {"default": 1}


@pytest.mark.parametrize(("grace", "removed_at"), [(None, None), ("1m", 339.0)])
def test_do_not_disrupt_pods_stall_the_drain_until_the_deadline(
    grace: str | None, removed_at: float | None
) -> None:
    report = run(expiring(grace=grace, annotations={"karpenter.sh/do-not-disrupt": "true"}))
    (draining,) = changes(report, "draining")
    assert 'has an active "karpenter.sh/do-not-disrupt" annotation' in draining["reason"]
    removed = changes(report, "remove")
    assert [seconds(r) for r in removed] == ([] if removed_at is None else [removed_at])


def _simulation(*objects: dict[str, Any]) -> Simulation:
    doc = {
        "nodeGroups": [{"name": "node", "zones": ["zone-a"], "perZone": {"zone-a": 2}}],
        "objects": list(objects),
    }
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    return sim


def _pinned(name: str, priority_class: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "nodeName": "node-zone-a-1",
        "containers": [{"name": "c", "image": "nginx:1"}],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def test_critical_pods_are_evicted_after_the_others() -> None:
    sim = _simulation(_pinned("app"), _pinned("dns", "system-cluster-critical"))
    t = start_termination(sim, "node-zone-a-1", "default", "zone-a", "test", None)
    assert look(sim, t) == 2
    assert sorted(t.queue) == ["default/app"]  # the first tier alone
    assert work_queue(sim, t, lambda pod: None, lambda pod, now, at: False) == ["default/app"]
    sim.now += SECOND
    assert look(sim, t) == 1
    assert sorted(t.queue) == ["default/dns"]
    assert work_queue(sim, t, lambda pod: None, lambda pod, now, at: False) == ["default/dns"]
    # Empty, but the drain began under MinDrainTime ago: looked at again, not yet removed.
    sim.now += SECOND
    assert look(sim, t) == 0 and t.removal is None
    sim.now = t.started + 5 * SECOND
    assert look(sim, t) == 0 and t.removal == t.started + 10 * SECOND


def test_a_refused_pod_backs_off_exponentially_to_ten_seconds() -> None:
    item = _Queued("uid")
    delays = []
    for _ in range(9):
        _back_off(item, 0)
        delays.append(item.due)
    assert delays[:7] == [100_000_000 << i for i in range(7)]
    assert delays[7:] == [EVICTION_MAX_DELAY, EVICTION_MAX_DELAY]


def test_expire_after_and_termination_grace_period_are_read_from_either_form() -> None:
    manifest = {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "np"},
        "spec": {
            "template": {
                "spec": {
                    "nodeClassRef": {"group": "g", "kind": "K", "name": "n"},
                    "requirements": [],
                    "expireAfter": "Never",
                    "terminationGracePeriod": "1h30m",
                }
            }
        },
    }
    pool = parse_nodepool(manifest, "t.yaml")
    assert (pool.expire_after, pool.termination_grace_period) == (float("inf"), 5400.0)
    short = parse_nodepool({"name": "np"}, "t.yaml")
    assert (short.expire_after, short.termination_grace_period) == (DEFAULT_EXPIRE_AFTER, None)
    assert DEFAULT_EXPIRE_AFTER == 720 * 3600


# Deleted at 120s: its pods evicted at once, drained at 125s (MinDrainTime), gone at 130s.
@pytest.mark.parametrize(("budget", "removed_at"), [(None, 130.0), (2, None)])
def test_a_removed_karpenter_node_is_drained_before_it_goes(
    budget: int | None, removed_at: float | None
) -> None:
    # Karpenter's registration puts its termination finalizer on the node: `kubectl delete
    # node` deletes the nodeclaim and the node drains, respecting the budgets, before it goes.
    doc = expiring(*([pdb(budget)] if budget is not None else []))
    pool = doc["autoscaler"]["karpenter"]["nodePools"][0]
    pool["expireAfter"] = "Never"
    doc["timeline"] = [{"wait": "2m"}, {"removeNode": "default-00001"}, {"wait": "2m"}]
    report = run(doc)
    assert report.steps[2].events == [
        "deleted node default-00001: Karpenter's termination finalizer holds it while its "
        "nodeclaim's termination drains it"
    ]
    removed = changes(report, "remove")
    assert [seconds(r) for r in removed] == ([] if removed_at is None else [removed_at])
    if removed:
        assert removed[0]["reason"] == (
            "removed default-00001: deleted by the timeline (removeNode)"
        )
        assert report.steps[-1].pending == {}
    else:
        (draining,) = changes(report, "draining")
        assert seconds(draining) == 120.0


def test_a_node_deleted_while_its_disruption_waits_is_terminated_once() -> None:
    # Its replacement still starting, the node is deleted by a step: the termination begun
    # then goes on when the replacement is up (not begun again, its drain restarted).
    from test_karpenter_drift import manifest, rollout

    doc = rollout(manifest(labels={"team": "a"}))
    doc["timeline"] = [
        {"wait": "3m"},
        doc["timeline"][1],
        {"wait": "20s"},
        {"removeNode": "default-00001"},
        {"wait": "5m"},
    ]
    report = run(doc)
    removed = [c for c in changes(report, "remove") if c["node"] == "default-00001"]
    assert [(seconds(c), c["reason"]) for c in removed] == [
        (210.0, "removed default-00001: deleted by the timeline (removeNode)")
    ]
