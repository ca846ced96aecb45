"""cluster-autoscaler's timeline where its start-up window and its drain retries decide it:
a node that breaks down within --max-node-startup-time of its creation is still starting
(upcoming, its pods wait for it) until the window closes, and a scale-down drain retries a
refused eviction every 10s until --max-pod-eviction-time before it gives the node up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from test_autoscaler_fidelity import pdb, pinned, two_budgets
from test_autoscaling import changes, run
from topospread.analysis.simulate import simulate
from topospread.render.schemas import load_schema
from topospread.simulator.autoscaling import TO_BE_DELETED, node_created_times
from topospread.simulator.cluster_autoscaler_loop import ClusterAutoscalerController
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.waiting import advance

HOSTNAME = "kubernetes.io/hostname"
SECOND = 1_000_000_000


def times(report: Any, action: str) -> list[tuple[float, str]]:
    return [(c["time"], c["node"]) for c in changes(report, action)]


def broken_young_node(options: dict[str, Any]) -> dict[str, Any]:
    """One full node; the second replica gets node-2 at 10s (Ready at 1m10s); node-2 is lost
    at 3m and its pod evicted at 8m (the 300s unreachable toleration): the replacement waits."""
    return {
        "nodeGroups": [
            {"name": "node", "count": 1, "template": {"status": {"capacity": {"cpu": "1"}}}}
        ],
        "autoscaler": {
            "nodeStartupDelay": "1m",
            "clusterAutoscaler": {
                "options": options,
                "nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 3}],
            },
        },
        "objects": [pinned("web", 2, [], cpu="600m")],
        "timeline": [{"wait": "3m"}, {"loseNode": "node-2"}, {"wait": "15m"}],
    }


def test_a_node_that_breaks_after_its_scale_up_ended_is_no_upcoming_node() -> None:
    # Upstream (updateReadinessStats): node-2, created at 10s, is NotStarted — not Unready —
    # until MaxNodeStartupTime (15m) after its creation. But its scale-up ended when it was
    # Ready (1m10s), and only a group with a scale-up in progress has upcoming nodes
    # (GetUpcomingNodes, since kubernetes-sigs/cluster-autoscaler 1690cd380): no template
    # copy stands in for node-2, and the pod evicted at 8m gets node-3 at 8m10s, not 15m10s.
    report = run(broken_young_node({}))
    assert times(report, "scaleUp") == [(10.0, ""), (490.0, "")]
    assert times(report, "add") == [(10.0, "node-2"), (490.0, "node-3")]
    assert report.steps[-1].pending == {}
    assert changes(report, "unhealthy") == []


def test_a_shorter_max_node_startup_time_makes_the_broken_node_unready_earlier() -> None:
    # --max-node-startup-time 5m: node-2 is Unready from 5m10s; the pod evicted at 8m asks
    # for a node at the first loop after it is 2s old (8m10s), as with the default.
    report = run(broken_young_node({"max-node-startup-time": "5m"}))
    assert times(report, "scaleUp") == [(10.0, ""), (490.0, "")]


def drained(objects: list[Any], timeline: list[Any], options: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeGroups": [
            {
                "name": "node",
                "count": 2,
                "template": {"status": {"capacity": {"cpu": "1", "pods": "110"}}},
            }
        ],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {
                "options": options,
                "nodeGroups": [{"nodeGroup": "node", "maxSize": 2}],
            },
        },
        "objects": objects,
        "timeline": timeline,
    }


def preferring(name: str, replicas: int, host: str) -> dict[str, Any]:
    """A Deployment of 100m pods that prefer ``host`` (the scale-down may move them)."""
    doc = pinned(name, replicas, [])
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [host]}]}
    doc["spec"]["template"]["spec"]["affinity"] = {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "preference": term}]
        }
    }
    return doc


def test_a_budget_of_one_disruption_drains_the_node_one_pod_per_retry() -> None:
    # Upstream: TestDrainNodeWithPodsWithRetries (drain_test.go): a budget that lets one pod
    # go at a time. node-1 holds web's three pods, unneeded from 10s; at 10m10s its drain
    # evicts one (the other two are refused: 429), the replacement runs on node-2, the budget
    # allows one again, and the retries at 10m20s and 10m30s take the rest: node-1 goes at
    # 10m30s, not at once.
    budget = pdb("web")
    objects = [pinned("other", 1, ["node-2"], cpu="600m"), preferring("web", 3, "node-1"), budget]
    report = run(drained(objects, [{"wait": "12m"}], {}))
    (draining,) = changes(report, "draining")
    assert (draining["time"], draining["node"]) == (610.0, "node-1")
    assert "Cannot evict pod as it would violate the pod's disruption budget." in draining["reason"]
    assert "retrying every 10s until 12m10s (max-pod-eviction-time)" in draining["reason"]
    assert times(report, "remove") == [(630.0, "node-1")]
    assert changes(report, "blocked") == []
    last = report.steps[-1]
    assert last.pending == {}
    assert set(last.bound.values()) == {"node-2"}


def relaxed_budget() -> dict[str, Any]:
    """Budget b no longer selects web's pods: each is under one budget again."""
    doc = pdb("b")
    doc["spec"]["selector"] = {"matchLabels": {"app": "nothing"}}
    return doc


def test_a_refusal_that_clears_within_max_pod_eviction_time_lets_the_drain_finish() -> None:
    # The drain of node-1 starts at 10m10s; budget b is changed at 11m50s, within the 2m of
    # retries: the retry at 12m0s evicts the pod and node-1 goes.
    timeline = [{"wait": "10m50s"}, {"apply": relaxed_budget()}, {"wait": "3m"}]
    report = run(two_budgets(timeline))
    assert times(report, "draining") == [(610.0, "node-1")]
    assert times(report, "remove") == [(670.0, "node-3"), (720.0, "node-1")]
    assert changes(report, "blocked") == []
    assert report.to_json()["steps"][-1]["nodeGroups"] == {"node": 1}


def test_a_refusal_that_outlasts_max_pod_eviction_time_fails_the_drain_at_2m() -> None:
    # Budget b changes only at 13m: the retries (10m10s ... 12m0s) all fail and the drain
    # gives up at 12m10s; node-1 stays, untainted, with its pod. The failure does not pause
    # scale-down (upstream's drain runs after StartDeletion returned, so
    # --scale-down-delay-after-failure is not set off): the empty node-3 went at 11m10s, in
    # the middle of the drain.
    timeline = [{"wait": "12m"}, {"apply": relaxed_budget()}, {"wait": "3m"}]
    report = run(two_budgets(timeline))
    (blocked,) = changes(report, "blocked")
    assert (blocked["time"], blocked["node"]) == (730.0, "node-1")
    assert blocked["reason"].startswith(
        "scale-down of node-1 failed: failed to evict pod default/web"
    )
    assert "within allowed timeout (last error: This pod has more than one" in blocked["reason"]
    assert times(report, "remove") == [(670.0, "node-3")]
    last = report.steps[-1]
    assert "node-1" in set(last.bound.values())
    out = report.to_json()
    assert out["steps"][-1]["nodeGroups"] == {"node": 2}
    jsonschema.validate(out, load_schema("simulate"))


@pytest.mark.parametrize(
    ("limit", "failed_at"),
    [("30s", 640.0), ("0s", 620.0), ("2m", 730.0), ("115s", 730.0)],
)
def test_max_pod_eviction_time_bounds_the_retries(limit: str, failed_at: float) -> None:
    # Upstream's evictPod sends an eviction, then every 10s while the clock is before the
    # start plus --max-pod-eviction-time; the drain fails when the next retry would not be:
    # 30s: tries at 10m10s, 10m20s, 10m30s, fails at 10m40s; 0s: one try, fails 10s later.
    report = run(two_budgets([{"wait": "12m"}], {"max-pod-eviction-time": limit}))
    (blocked,) = changes(report, "blocked")
    assert blocked["time"] == failed_at


def test_the_node_is_tainted_while_its_evictions_retry_and_untainted_when_the_drain_fails() -> None:
    sim = Simulation(parse_timeline(two_budgets([]), "t.yaml"))
    sim.settle("t.yaml")
    auto = sim.autoscaler
    assert isinstance(auto, ClusterAutoscalerController)
    advance(sim, 700 * SECOND, "t.yaml")
    assert TO_BE_DELETED in sim.node("node-1", "t.yaml").spec.taints
    assert list(auto.drains) == ["node-1"]
    assert auto.drains["node-1"].attempts == 10  # 10m10s, 10m20s, ... 11m40s
    advance(sim, 730 * SECOND, "t.yaml")
    assert TO_BE_DELETED not in sim.node("node-1", "t.yaml").spec.taints
    assert auto.drains == {}
    assert auto.model.groups["node"].target_size == 3


def test_a_node_deleted_by_another_step_mid_drain_ends_the_drain_as_done() -> None:
    # removeNode at 11m20s, in the middle of node-1's drain: its pods are gone, so the next
    # retry (11m30s) finds nothing left to evict and the instance is deleted with the node;
    # the group is not left with an unregistered instance.
    timeline = [{"wait": "10m20s"}, {"removeNode": "node-1"}, {"wait": "1m"}]
    report = run(two_budgets(timeline))
    assert times(report, "remove") == [(670.0, "node-3"), (690.0, "node-1")]
    assert changes(report, "unregistered") == []
    assert changes(report, "blocked") == []
    sim_groups = report.to_json()["steps"][-1]["nodeGroups"]
    assert sim_groups == {"node": 1}


EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "simulations"


def example(name: str) -> Any:
    doc = yaml.safe_load((EXAMPLES / name).read_text())
    return simulate(parse_timeline(doc, name))


def test_the_drain_retries_example_removes_node_1_after_two_retries() -> None:
    report = example("autoscaler-drain-retries.yaml")
    assert times(report, "draining") == [(610.0, "node-1")]
    assert times(report, "remove") == [(630.0, "node-1")]
    assert report.steps[-1].pending == {}


def test_the_broken_new_node_example_scales_up_again_at_8m10s() -> None:
    report = example("autoscaler-broken-new-node.yaml")
    assert times(report, "add") == [(10.0, "node-2"), (490.0, "node-3")]
    assert report.steps[-1].pending == {}


def test_nodes_joining_the_timeline_are_stamped_after_the_latest_input_stamp() -> None:
    def manifest(name: str, created: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "creationTimestamp": created},
            "spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "1", "pods": "110"}},
        }

    doc = broken_young_node({})
    doc["objects"] += [
        manifest("early", "2029-12-31T23:59:30Z"),
        manifest("latest", "2030-01-01T00:00:00Z"),
    ]
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    advance(sim, 60 * SECOND, "t.yaml")
    # The cluster was read no earlier than its latest node's creation: the clock's 0 is
    # 2030-01-01T00:00:00Z, "early" was created 30s before it, "latest" at it, node-2 joined
    # at 10s (the scale-up) and node-1 carries no stamp (the zero time: old).
    assert node_created_times(sim) == {"early": -30.0, "latest": 0.0, "node-2": 10.0}
    assert sim.node("node-2", "t.yaml").metadata.creation_timestamp == "2030-01-01T00:00:10Z"
