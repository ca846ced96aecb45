"""The timeline simulator against the documented dynamic weak spots of topology spread:
rolling updates without ``matchLabelKeys: [pod-template-hash]``, scale-down imbalance, the
tainted-zone trap, ``minDomains`` waiting for an autoscaler, zone outages; and the command's
outputs and errors."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_cli import run as cli
from topospread.analysis.reports import StepReport, step_report, summarize
from topospread.analysis.simulate import TimelineReport, simulate
from topospread.errors import TopospreadError
from topospread.render.simulate import timeline_json, timeline_text
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.actions import apply_step
from topospread.simulator.timeline_steps.workloads import merge_patch

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "simulations" / "zone-outage.yaml"

ZONE = "topology.kubernetes.io/zone"
UNREACHABLE_NO_EXECUTE = "node.kubernetes.io/unreachable"


def deployment(
    replicas: int,
    *,
    match_label_keys: bool = False,
    node_taints_policy: str | None = None,
    min_domains: int | None = None,
    name: str = "web",
) -> dict[str, Any]:
    """A Deployment with one zone constraint, maxSkew 1, DoNotSchedule."""
    constraint: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": name}},
    }
    if match_label_keys:
        constraint["matchLabelKeys"] = ["pod-template-hash"]
    if node_taints_policy is not None:
        constraint["nodeTaintsPolicy"] = node_taints_policy
    if min_domains is not None:
        constraint["minDomains"] = min_domains
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx:1"}],
                    "topologySpreadConstraints": [constraint],
                },
            },
        },
    }


def daemon_set() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {
                "metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "c", "image": "agent:1"}]},
            },
        },
    }


def zones(per_zone: int | dict[str, int] = 2, names: tuple[str, ...] = ("a", "b", "c")) -> Any:
    return [{"name": "pool", "zones": list(names), "perZone": per_zone}]


def run(doc: dict[str, Any], seed: int = 0) -> TimelineReport:
    return simulate(parse_timeline(doc, "t.yaml"), seed=seed)


def zone_counts(step: StepReport, workload: str = "deployment default/web") -> list[Any]:
    """(revisions, counts) of each zone constraint group of the workload."""
    (w,) = [w for w in step.workloads if w.workload == workload]
    return [(c.revisions, c.view.counts) for c in w.constraints if c.view.topology_key == ZONE]


def pods_per_zone(step: StepReport) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for node, pods in step.topology:
        counts[node.metadata.labels.get(ZONE, "")] += len(pods)
    return dict(sorted(counts.items()))


# ------------------------------------------------------------------ documented situations

ROLLOUT = {"rollout": {"workload": "deployment/web", "patch": {"spec": {"containers": [
    {"name": "c", "image": "nginx:2"}]}}}}  # fmt: skip


def test_rolling_update_without_pod_template_hash_counts_both_revisions_and_ends_unbalanced() -> (
    None
):
    # Old and new pods match one selector: each surge pod is placed against both revisions,
    # and the old ReplicaSet's victims ignore zones, so the new revision ends 3/0/3.
    doc = {"nodeGroups": zones(), "objects": [deployment(6)], "timeline": [ROLLOUT]}
    report = run(doc, seed=1)
    first, last = report.steps
    ((old_revisions, _),) = zone_counts(first)
    ((revisions, counts),) = zone_counts(last)
    assert revisions != old_revisions and len(revisions) == 1
    assert counts == {"a": 3, "b": 0, "c": 3}
    assert last.violations == [
        f"deployment default/web: topologySpreadConstraints[0] ({ZONE}, {revisions[0]}): "
        "skew 3 > maxSkew 1"
    ]
    assert last.settled.settled and not last.pending


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_rolling_update_with_pod_template_hash_spreads_each_revision_evenly(seed: int) -> None:
    doc = {
        "nodeGroups": zones(),
        "objects": [deployment(6, match_label_keys=True)],
        "timeline": [ROLLOUT],
    }
    last = run(doc, seed=seed).steps[-1]
    ((revisions, counts),) = zone_counts(last)
    assert counts == {"a": 2, "b": 2, "c": 2} and len(revisions) == 1
    assert last.violations == []
    assert last.action == "rollout" and len(last.bound) == 6


def test_rollout_moves_every_pod_to_a_new_replica_set_through_surge_steps() -> None:
    doc = {
        "nodeGroups": zones(),
        "objects": [deployment(6, match_label_keys=True)],
        "timeline": [ROLLOUT],
    }
    first, last = run(doc).steps
    old_rs = {k.rsplit("-", 1)[0] for k in first.bound}
    new_rs = {k.rsplit("-", 1)[0] for k in last.bound}
    assert len(old_rs) == len(new_rs) == 1 and old_rs != new_rs
    # maxSurge 25% of 6 rounds up to 2, maxUnavailable down to 1: several reconcile rounds.
    assert last.settled.rounds > 3
    assert len(last.settled.created) == 6 and len(last.settled.deleted) == 6


def test_rolling_update_stays_within_max_surge_and_max_unavailable_in_every_round() -> None:
    doc = {
        "nodeGroups": zones(),
        "objects": [deployment(6, match_label_keys=True)],
        "timeline": [ROLLOUT],
    }
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    apply_step(sim, sim.scenario.steps[0])
    out = Settled(rounds=0, settled=False)
    seen: list[tuple[int, int]] = []
    while sim.round(out):
        pods = list(sim.pods.values())
        seen.append((len(pods), sum(1 for p in pods if p.spec.node_name)))
    # maxSurge 25% of 6 rounds up to 2; maxUnavailable 25% rounds down to 1.
    assert all(total <= 8 and running >= 5 for total, running in seen)
    assert max(total for total, _ in seen) == 8 and len(seen) > 2
    assert len({p.metadata.labels["pod-template-hash"] for p in sim.pods.values()}) == 1


def test_scale_down_leaves_the_spread_unbalanced_and_the_report_flags_it() -> None:
    doc = {
        "nodeGroups": zones(),
        "objects": [deployment(6)],
        "timeline": [{"name": "scale in", "scale": {"workload": "deployment/web", "replicas": 3}}],
    }
    first, last = run(doc).steps
    assert [c for _, c in zone_counts(first)] == [{"a": 2, "b": 2, "c": 2}]
    assert first.violations == []
    # The ReplicaSet controller ranks victims by state, cost and pods per node; zones play
    # no part.
    assert [c for _, c in zone_counts(last)] == [{"a": 1, "b": 2, "c": 0}]
    (violation,) = last.violations
    assert violation.endswith("skew 2 > maxSkew 1")
    assert last.name == "scale in" and last.events == [
        "scaled deployment default/web from 6 to 3 replicas"
    ]


def test_a_schedule_anyway_constraint_past_max_skew_is_a_preference_not_a_violation() -> None:
    soft = deployment(6)
    spec = soft["spec"]["template"]["spec"]
    spec["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "ScheduleAnyway"
    doc = {
        "nodeGroups": zones(),
        "objects": [soft],
        "timeline": [{"name": "scale in", "scale": {"workload": "deployment/web", "replicas": 3}}],
    }
    report = run(doc)
    last = report.steps[-1]
    assert [c for _, c in zone_counts(last)] == [{"a": 1, "b": 2, "c": 0}]
    assert last.violations == []
    (unmet,) = last.preferences_not_met
    assert unmet.endswith("skew 2 > maxSkew 1")
    (constraint,) = last.to_json()["workloads"][0]["constraints"]
    assert constraint["exceeded"] and not constraint["violated"]
    assert last.to_json()["preferencesNotMet"] == [unmet]
    out = timeline_text(report)
    assert "preference not met (skew 2 > maxSkew 1; ScheduleAnyway)" in out
    assert "VIOLATED" not in out
    assert "Constraints violated after: none." in out
    assert "ScheduleAnyway preferences not met after: step 1." in out


TAINT_ZONE_C = {"taint": {"zone": "c", "key": "dedicated", "value": "db", "effect": "NoSchedule"}}


def test_tainted_zone_with_node_taints_policy_ignore_leaves_replicas_pending() -> None:
    # The tainted zone is still an eligible domain, with 0 pods: a and b may hold one each.
    doc = {
        "nodeGroups": zones(),
        "timeline": [TAINT_ZONE_C, {"apply": [deployment(6)]}],
    }
    last = run(doc).steps[-1]
    assert len(last.bound) == 2 and len(last.pending) == 4
    assert set(last.pending.values()) == {
        "0/6 nodes are available: 2 node(s) had untolerated taint(s), "
        "4 node(s) didn't match pod topology spread constraints. "
        "no new claims to deallocate, preemption: 0/6 nodes are "
        "available: 2 Preemption is not helpful for scheduling, "
        "4 No preemption victims found for incoming pod."
    }
    assert [c for _, c in zone_counts(last)] == [{"a": 1, "b": 1, "c": 0}]


def test_tainted_zone_with_node_taints_policy_honor_is_not_a_domain_and_replicas_schedule() -> None:
    doc = {
        "nodeGroups": zones(),
        "timeline": [TAINT_ZONE_C, {"apply": [deployment(6, node_taints_policy="Honor")]}],
    }
    last = run(doc).steps[-1]
    assert last.pending == {}
    assert [c for _, c in zone_counts(last)] == [{"a": 3, "b": 3}]
    assert pods_per_zone(last) == {"a": 3, "b": 3, "c": 0}


def test_min_domains_keeps_pods_pending_until_a_node_arrives_in_a_new_zone() -> None:
    doc = {
        "nodeGroups": zones({"a": 1, "b": 1, "c": 0}),
        "objects": [deployment(3, min_domains=3)],
        "timeline": [
            {"name": "autoscaler adds a node", "addNodes": {"group": "pool", "zone": "c"}}
        ],
    }
    first, last = run(doc).steps
    # Two domains < minDomains 3: the global minimum is 0, so each zone may hold one pod.
    assert len(first.bound) == 2
    assert list(first.pending.values()) == [
        "0/2 nodes are available: 2 node(s) didn't match pod topology spread constraints. "
        "no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    ]
    assert last.events == [f"added node pool-c-1 ({ZONE}=c)"]
    assert last.pending == {} and list(last.settled.placed.values()) == ["pool-c-1"]
    assert pods_per_zone(last) == {"a": 1, "b": 1, "c": 1}


def test_zone_outage_evicts_keeps_the_lost_zone_as_a_domain_and_recovery_reschedules() -> None:
    doc = yaml.safe_load(EXAMPLE.read_text())
    report = run(doc)
    start, lost, outage, recovery, scale_down = report.steps
    assert pods_per_zone(start) == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert lost.events[0].startswith("node-zone-c-1: NotReady (unreachable); tainted ")
    assert lost.events[0].endswith(") due at 5m0s")
    # Evicted after their 300 s unreachable toleration; recreated, but zone-c still counts.
    assert outage.time == 300 * 10**9
    assert outage.events[0].startswith(
        "waited 5m (now 5m0s): evicted 2 pods whose tolerations of "
        "node.kubernetes.io/unreachable:NoExecute ran out (default/web-"
    )
    assert len(outage.settled.created) == 2 and len(outage.pending) == 2
    assert pods_per_zone(outage) == {"zone-a": 2, "zone-b": 2, "zone-c": 0}
    assert [c for _, c in zone_counts(outage)] == [{"zone-a": 2, "zone-b": 2, "zone-c": 0}]
    assert recovery.pending == {}
    assert pods_per_zone(recovery) == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert len(scale_down.bound) == 4 and scale_down.violations


def test_pods_tolerating_unreachable_for_ever_stay_through_an_outage() -> None:
    doc = {"nodeGroups": zones(1), "objects": [daemon_set()], "timeline": [{"loseZone": "c"}]}
    first, outage = run(doc).steps
    assert len(first.bound) == 3
    # The DaemonSet controller adds NoExecute tolerations without tolerationSeconds.
    assert outage.bound == first.bound and outage.settled.deleted == []


# ------------------------------------------------------------------ the other steps


def test_drain_evicts_all_but_daemon_set_pods_and_cordons_the_node() -> None:
    doc = {"nodeGroups": zones(1), "objects": [deployment(3), daemon_set()], "timeline": [
        {"drain": "pool-a-1"}]}  # fmt: skip
    first, drained = run(doc).steps

    def on_a(step: StepReport) -> list[str]:
        keys = sorted(k for k, n in step.bound.items() if n == "pool-a-1")
        return [k.split("/")[1].split("-")[0] for k in keys]

    assert sorted(on_a(first)) == ["agent", "web"]
    assert on_a(drained) == ["agent"]
    assert drained.events[:2] == ["cordoned pool-a-1", drained.events[1]]
    assert drained.events[1].startswith("drained pool-a-1: evicted 1 pod (default/web-")
    # The replacement cannot go to zone a (cordoned) nor elsewhere without skew 2.
    assert len(drained.pending) == 1


def test_remove_node_deletes_its_pods_and_controllers_recreate_them() -> None:
    doc = {"nodeGroups": zones(2), "objects": [deployment(3)], "timeline": [
        {"removeNode": "pool-a-1"}, {"removeNode": "pool-a-2"}]}  # fmt: skip
    _, _, gone = run(doc).steps
    assert pods_per_zone(gone) == {"b": 2, "c": 1} or pods_per_zone(gone) == {"b": 1, "c": 2}
    # With zone a gone entirely, it is no longer a domain: nothing is Pending.
    assert gone.pending == {}


def stateful_set(policy: str = "OrderedReady") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 3,
            "serviceName": "db",
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "c", "image": "db:1"}]},
            },
        },
    }


@pytest.mark.parametrize(
    "policy, rounds", [("OrderedReady", 4), ("Parallel", 2)], ids=["OrderedReady", "Parallel"]
)
def test_stateful_set_creates_in_order_and_scales_down_from_the_highest_ordinal(
    policy: str, rounds: int
) -> None:
    doc = {"nodeGroups": zones(1), "objects": [stateful_set(policy)], "timeline": [
        {"scale": {"workload": "sts/db", "replicas": 1}}]}  # fmt: skip
    first, last = run(doc).steps
    assert sorted(first.bound) == ["default/db-0", "default/db-1", "default/db-2"]
    # OrderedReady: one pod per round, each waiting for the previous to be Running and Ready;
    # Parallel: all at once (then one quiet round).
    assert first.settled.rounds == rounds
    assert sorted(last.bound) == ["default/db-0"]
    assert last.settled.deleted == ["default/db-2", "default/db-1"]


def test_job_runs_parallelism_pods_and_delete_pods_are_recreated() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {
            "parallelism": 2,
            "completions": 4,
            "template": {"spec": {"containers": [{"name": "c", "image": "job:1"}],
                                  "restartPolicy": "Never"}},
        },
    }  # fmt: skip
    doc = {"nodeGroups": zones(1), "objects": [job]}
    (first,) = run(doc).steps
    assert len(first.bound) == 2
    victim = sorted(first.bound)[0]
    doc["timeline"] = [{"deletePods": [victim]}]
    _, after = run(doc).steps
    assert victim not in after.bound and len(after.bound) == 2
    assert after.events == [f"deleted 1 pod ({victim})"]


def test_uncordon_and_untaint_requeue_pending_pods() -> None:
    doc = {
        "nodeGroups": zones(1, ("a",)),
        "timeline": [
            {"cordon": "pool-a-1"},
            {"apply": [deployment(1)]},
            {"uncordon": ["pool-a-1"]},
            {"taint": {"node": "pool-a-1", "key": "k", "effect": "NoExecute"}},
            {"untaint": {"nodes": ["pool-a-1"], "key": "k"}},
        ],
    }
    _, _, cordoned, uncordoned, tainted, untainted = run(doc).steps
    assert len(cordoned.pending) == 1
    assert next(iter(cordoned.pending.values())).startswith(
        "0/1 nodes are available: 1 node(s) were unschedulable."
    )
    assert len(uncordoned.bound) == 1
    assert tainted.events[0].startswith("pool-a-1: tainted k (NoExecute); evicted 1 pod")
    assert len(tainted.pending) == 1
    assert untainted.pending == {} and len(untainted.bound) == 1


def test_a_runaway_loop_is_bounded_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    import topospread.simulator.simulation as simulation

    monkeypatch.setattr(simulation, "MAX_ROUNDS", 2)
    doc = {"nodeGroups": zones(), "objects": [deployment(6, match_label_keys=True)],
           "timeline": [ROLLOUT]}  # fmt: skip
    last = run(doc).steps[-1]
    assert not last.settled.settled and last.settled.rounds == 2
    assert last.events[-1].startswith("did not settle: controllers or the scheduler still acted")


def test_created_pods_are_admitted_with_default_toleration_seconds_and_merged_selectors() -> None:
    doc = {"nodeGroups": zones(1), "objects": [deployment(1, match_label_keys=True)]}
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    (pod,) = sim.pods.values()
    tolerations = {(t.key, t.effect, t.toleration_seconds) for t in pod.spec.tolerations}
    assert tolerations == {
        ("node.kubernetes.io/not-ready", "NoExecute", 300),
        (UNREACHABLE_NO_EXECUTE, "NoExecute", 300),
    }
    selector = pod.spec.topology_spread_constraints[0].label_selector
    assert selector is not None
    assert [e.key for e in selector.match_expressions] == ["pod-template-hash"]


# ------------------------------------------------------------------ the command


def test_simulate_prints_each_step_with_grid_pending_pods_and_spread(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = cli(["simulate", str(EXAMPLE)], capsys)
    assert code == 0 and err == ""
    assert out.count("== ") == 5
    assert "== Step 1/4: zone-c goes dark (loseZone) at 0s ==" in out
    assert "== Step 2/4: zone-c stays dark (wait) at 5m0s ==" in out
    assert "|             zone-a            |" in out
    assert "6 pods: 4 Running, 2 Pending" in out
    assert "2 node(s) had untolerated taint(s), 4 node(s) didn't match pod topology" in out
    assert "zone-a=2 zone-b=2 zone-c=0; min 0; VIOLATED (skew 2 > maxSkew 1)" in out
    assert out.rstrip().endswith(
        "4 steps replayed (seed 0). Pods Pending after: step 2. "
        "Constraints violated after: step 2, step 4."
    )


def test_a_one_step_timeline_says_one_step_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = EXAMPLE.read_text()
    steps = yaml.safe_load(text)
    steps["timeline"] = steps["timeline"][:1]
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(steps))
    code, out, _ = cli(["simulate", str(path)], capsys)
    assert code == 0
    assert "\n1 step replayed (seed 0)." in out


def test_simulate_json_is_one_document_with_a_list_of_steps_and_is_deterministic(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, first, _ = cli(["simulate", str(EXAMPLE), "-o", "json", "--seed", "7"], capsys)
    _, again, _ = cli(["simulate", str(EXAMPLE), "-o", "json", "--seed", "7"], capsys)
    _, other, _ = cli(["simulate", str(EXAMPLE), "-o", "json", "--seed", "8"], capsys)
    assert first == again
    assert first != other  # names are drawn from the seed
    doc = json.loads(first)
    assert [s["name"] for s in doc["steps"]] == [
        "initial state",
        "zone-c goes dark",
        "zone-c stays dark",
        "zone-c comes back",
        "scale down to 4",
    ]
    assert [s["time"] for s in doc["steps"]] == [0, 0, 300, 300, 300]
    outage = doc["steps"][2]
    assert set(outage) >= {"events", "bound", "pending", "workloads", "violations", "settled"}
    (constraint, _) = outage["workloads"][0]["constraints"]
    assert constraint["counts"] == {"zone-a": 2, "zone-b": 2, "zone-c": 0}
    assert constraint["globalMin"] == 0 and constraint["skew"] == 2 and constraint["violated"]
    assert all(p["message"].startswith("0/6 nodes are available") for p in outage["pending"])


BAD_TIMELINES = {
    "unknown action": (
        "timeline: [{explode: zone-a}]",
        "t.yaml: timeline[0]: explode: unknown action; the actions are apply, scale",
    ),
    "two actions": (
        "timeline: [{cordon: pool-a-1, drain: pool-a-1}]",
        "t.yaml: timeline[0]: expected exactly one action",
    ),
    "unknown node": (
        "timeline: [{uncordon: pool-a-1}, {cordon: nope}]",
        't.yaml: timeline[1] (cordon): Not found: node "nope"',
    ),
    "unknown zone": (
        "timeline: [{loseZone: zone-q}]",
        't.yaml: timeline[0] (loseZone): zone: Not found: "zone-q"',
    ),
    "unknown workload": (
        "timeline: [{scale: {workload: deployment/api, replicas: 2}}]",
        't.yaml: timeline[0] (scale): workload: Not found: "deployment/api"',
    ),
    "unknown kind": (
        "timeline: [{scale: {workload: rollout/web, replicas: 2}}]",
        't.yaml: timeline[0] (scale): workload: Invalid value: "rollout/web": unknown kind',
    ),
    "bad replicas": (
        "timeline: [{scale: {workload: deployment/web, replicas: -1}}]",
        "t.yaml: timeline[0] (scale): replicas: Invalid value: -1: expected a count",
    ),
    "missing field": (
        "timeline: [{scale: {workload: deployment/web}}]",
        "t.yaml: timeline[0] (scale): replicas: Required value",
    ),
    "unknown field": (
        "timeline: [{scale: {workload: deployment/web, replica: 2}}]",
        "t.yaml: timeline[0] (scale): replica: unknown field; expected workload, replicas",
    ),
    "bad taint effect": (
        "timeline: [{taint: {node: pool-a-1, key: k, effect: Sometimes}}]",
        't.yaml: timeline[0] (taint): effect: Unsupported value: "Sometimes"',
    ),
    "unknown group": (
        "timeline: [{addNodes: {group: spot, zone: a}}]",
        't.yaml: timeline[0] (addNodes): group: Not found: "spot"',
    ),
    "bad patch field": (
        "timeline: [{rollout: {workload: deployment/web, patch: {spec: {containers: 3}}}}]",
        "t.yaml: timeline[0] (rollout): patch",
    ),
    "invalid pod from a new template": (
        "timeline: [{rollout: {workload: deployment/web, patch: {spec: "
        "{topologySpreadConstraints: [{maxSkew: 0, topologyKey: k, "
        "whenUnsatisfiable: DoNotSchedule}]}}}}]",
        "t.yaml: timeline[0] (rollout): patch (Deployment default/web): "
        "spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0",
    ),
    "wait with an unknown unit": (
        "timeline: [{wait: 5x}]",
        't.yaml: timeline[0] (wait): wait: Invalid value: "5x": time: unknown unit "x" in '
        'duration "5x"; expected a duration such as 90s, 5m or 1h30m',
    ),
    "wait without a unit": (
        "timeline: [{wait: 90}]",
        "t.yaml: timeline[0] (wait): wait: Invalid value: 90: expected a duration such as 90s",
    ),
    "negative wait": (
        "timeline: [{wait: -5m}]",
        't.yaml: timeline[0] (wait): wait: Invalid value: "-5m": must not be negative',
    ),
    "taint timeAdded that is no time": (
        "nodes: [{metadata: {name: n1}, spec: {taints: [{key: k, effect: NoExecute, "
        "timeAdded: yesterday}]}}]",
        # The API server's decoder parses the time before validation is asked.
        't.yaml: nodes[0] (Node n1): parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": '
        'cannot parse "yesterday" as "2006"',
    ),
    "unknown top-level key": (
        "steps: []",
        "t.yaml: unknown key 'steps'",
    ),
}


@pytest.mark.parametrize("text, message", BAD_TIMELINES.values(), ids=BAD_TIMELINES.keys())
def test_bad_timeline_input_exits_2_with_one_message_naming_file_step_and_field(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = {"nodeGroups": zones(1), "objects": [deployment(1)]}
    doc = {**base, **yaml.safe_load(text)}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, err = cli(["simulate", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("topospread: error: ")
    assert message.replace("t.yaml", str(path)) in err


def test_errors_are_topospread_errors_for_library_callers() -> None:
    with pytest.raises(TopospreadError, match=r"t.yaml: nodeGroups\[0\]: perZone"):
        parse_timeline({"nodeGroups": [{"name": "pool", "zones": ["a"], "perZone": -2}]}, "t.yaml")


def example(name: str) -> TimelineReport:
    return run(yaml.safe_load((EXAMPLE.parent / name).read_text()))


def spread_of(step: StepReport, workload: str) -> dict[str, int]:
    ((_, counts),) = zone_counts(step, f"deployment default/{workload}")
    return counts


def test_example_rolling_update_unbalances_only_the_deployment_without_the_hash() -> None:
    _, plain_rolled, hashed_rolled = example("rolling-update.yaml").steps
    assert spread_of(plain_rolled, "plain") == {"zone-a": 1, "zone-b": 2, "zone-c": 3}
    assert spread_of(hashed_rolled, "hashed") == {"zone-a": 2, "zone-b": 2, "zone-c": 2}
    assert [v.split(":")[0] for v in hashed_rolled.violations] == ["deployment default/plain"]


def test_example_tainted_zone_pends_with_ignore_and_schedules_with_honor() -> None:
    *_, deployed = example("tainted-zone.yaml").steps
    assert spread_of(deployed, "ignore") == {"zone-a": 1, "zone-b": 1, "zone-c": 0}
    assert spread_of(deployed, "honor") == {"zone-a": 2, "zone-b": 2}
    assert sorted(k.split("-")[0] for k in deployed.pending) == ["default/ignore"] * 2


@pytest.mark.parametrize(
    ("name", "added"),
    [
        ("autoscaler-min-domains.yaml", ("node-zone-c-1", "node-zone-c", 10.0)),
        ("autoscaler-min-domains-karpenter.yaml", ("default-00001", "default", 1.0)),
    ],
)
def test_example_autoscaler_min_domains_waits_for_the_new_zone(
    name: str, added: tuple[str, str, float]
) -> None:
    report = example(name)
    start, scaled = report.steps
    assert len(start.pending) == 1 and scaled.pending == {}
    assert spread_of(scaled, "web") == {"zone-a": 1, "zone-b": 1, "zone-c": 1}
    (change,) = [c for c in scaled.autoscaler if c.action == "add"]
    assert (change.node, change.group, change.time / 1e9, change.zone) == (*added, "zone-c")


def test_readme_shows_exactly_what_make_run_prints(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (EXAMPLE.parents[2] / "README.md").read_text()
    shown = readme.split("It prints:\n\n```text\n", 1)[1].split("\n```", 1)[0]
    _, out, _ = cli(["simulate", str(EXAMPLE)], capsys)
    assert shown == out.rstrip("\n")


@pytest.mark.parametrize(
    "name", sorted(p.name for p in EXAMPLE.parent.glob("*.yaml")), ids=lambda n: n
)
def test_the_fast_path_and_the_reference_scheduler_replay_every_example_alike(name: str) -> None:
    doc = yaml.safe_load((EXAMPLE.parent / name).read_text())
    fast = simulate(parse_timeline(doc, name), seed=3, fast=True)
    reference = simulate(parse_timeline(doc, name), seed=3, fast=False)
    assert fast.to_json() == reference.to_json()


def test_a_daemon_set_follows_added_and_removed_nodes() -> None:
    doc = {
        "nodeGroups": zones(1, ("a",)),
        "objects": [daemon_set()],
        "timeline": [{"addNodes": {"group": "pool", "zone": "a", "count": 2}},
                     {"removeNode": "pool-a-1"}],
    }  # fmt: skip
    first, added, removed = run(doc).steps
    assert sorted(first.bound.values()) == ["pool-a-1"]
    assert sorted(added.bound.values()) == ["pool-a-1", "pool-a-2", "pool-a-3"]
    assert sorted(removed.bound.values()) == ["pool-a-2", "pool-a-3"]
    assert removed.settled.created == []


def test_applying_a_changed_deployment_rolls_it_out_and_scales_it() -> None:
    changed = deployment(4, match_label_keys=True)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    doc = {
        "nodeGroups": zones(),
        "objects": [deployment(3, match_label_keys=True)],
        "timeline": [{"apply": changed}],
    }
    first, applied = run(doc).steps
    assert applied.events == ["configured deployment default/web"]
    ((old, _),) = zone_counts(first)
    ((new, counts),) = zone_counts(applied)
    assert old != new and sorted(counts.values()) == [1, 1, 2]


def test_progress_is_shown_only_on_a_terminal() -> None:
    from topospread.cli.progress import simulate_progress as _simulate_progress

    with _simulate_progress(50) as on_step:  # pytest captures stderr: not a terminal
        assert on_step is None


def test_bare_pods_are_scheduled_and_reported_as_pods_of_no_workload() -> None:
    template = deployment(1)["spec"]["template"]
    pods = [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {**template["metadata"], "name": f"p{i}"},
         "spec": template["spec"]}
        for i in range(4)
    ]  # fmt: skip
    last = run({"nodeGroups": zones(1), "objects": pods}).steps[-1]
    assert sorted(last.bound) == ["default/p0", "default/p1", "default/p2", "default/p3"]
    (w,) = last.workloads
    assert w.workload == "pods of no workload in default" and w.desired is None
    assert sorted(w.constraints[0].view.counts.values()) == [1, 1, 2]


MERGE_PATCHES = {
    "mappings merge, null deletes": (
        {"a": {"b": 1, "c": 2}, "d": 3},
        {"a": {"b": 5, "c": None}},
        {"a": {"b": 5}, "d": 3},
    ),
    "containers merge by name": (
        {"containers": [{"name": "c", "image": "x:1", "ports": [1]}, {"name": "s", "image": "s"}]},
        {"containers": [{"name": "c", "image": "x:2"}, {"name": "new", "image": "n"}]},
        {"containers": [{"name": "c", "image": "x:2", "ports": [1]}, {"name": "s", "image": "s"},
                        {"name": "new", "image": "n"}]},
    ),
    "other lists are replaced": (
        {"tolerations": [{"key": "a"}], "args": ["x"]},
        {"tolerations": [{"key": "b"}], "args": ["y"]},
        {"tolerations": [{"key": "b"}], "args": ["y"]},
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    "target, patch, expected", MERGE_PATCHES.values(), ids=MERGE_PATCHES.keys()
)
def test_rollout_patches_merge_like_kubectl_patch(target: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(target, patch) == expected


def test_the_first_toleration_of_a_no_execute_taint_decides_whether_a_pod_is_evicted() -> None:
    # DefaultTolerationSeconds adds nothing when a toleration of the key exists already.
    def pod(name: str, tolerations: list[dict[str, Any]]) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": "pool-a-1", "tolerations": tolerations,
                         "containers": [{"name": "c", "image": "x"}]}}  # fmt: skip

    forever = {"key": "k", "operator": "Exists", "effect": "NoExecute"}
    for_a_while = {**forever, "tolerationSeconds": 60}
    doc = {
        "nodeGroups": zones(1, ("a",)),
        "objects": [
            pod("stays", [forever, for_a_while]),
            pod("goes", [for_a_while, forever]),
            pod("untolerated", []),
        ],
        "timeline": [
            {"taint": {"node": "pool-a-1", "key": "k", "effect": "NoExecute"}},
            {"wait": "1m"},
        ],
    }
    _, tainted, waited = run(doc).steps
    assert list(tainted.bound) == ["default/goes", "default/stays"]
    assert tainted.events == [
        "pool-a-1: tainted k (NoExecute); evicted 1 pod (default/untolerated); "
        "eviction of 1 pod (default/goes) due at 1m0s"
    ]
    assert list(waited.bound) == ["default/stays"]
    assert waited.events == [
        "waited 1m (now 1m0s): evicted 1 pod whose toleration of k:NoExecute ran out (default/goes)"
    ]


def test_a_stateful_set_rollout_replaces_pods_from_the_highest_ordinal_down() -> None:
    patch = {"spec": {"containers": [{"name": "c", "image": "db:2"}]}}
    doc = {
        "nodeGroups": zones(1),
        "objects": [stateful_set()],
        "timeline": [{"rollout": {"workload": "statefulset/db", "patch": patch}}],
    }
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    before = {k: p.metadata.labels["controller-revision-hash"] for k, p in sim.pods.items()}
    apply_step(sim, sim.scenario.steps[0])
    settled = sim.settle("t.yaml")
    after = {k: p.metadata.labels["controller-revision-hash"] for k, p in sim.pods.items()}
    assert sorted(after) == sorted(before) == ["default/db-0", "default/db-1", "default/db-2"]
    assert len(set(before.values())) == len(set(after.values())) == 1 and before != after
    assert settled.deleted == ["default/db-2", "default/db-1", "default/db-0"]
    assert all(p.spec.containers[0].image == "db:2" for p in sim.pods.values())
    assert sim.sts_current == {}  # the update revision is current now


def _all_namespace_pods(sim: Simulation, d: Any, rss: Any) -> Any:
    return sim._pods_in(d.metadata.namespace)


def _overlapping_selectors() -> dict[str, Any]:
    # Pods of "wide"'s revision that it does not own: an orphan it adopts, and one that a
    # ReplicaSet no longer in the cluster still controls (its ReplicaSet ranks scale-down
    # victims against it). Their pod-template-hash is read off a first run.
    wide = deployment(4, name="wide")
    wide["spec"]["template"]["spec"]["topologySpreadConstraints"] = []
    doc: dict[str, Any] = {
        "nodeGroups": zones(1),
        "objects": [deployment(5, match_label_keys=True), wide],
        "timeline": [{"scale": {"workload": "deployment/wide", "replicas": 1}}],
    }
    first = simulate(parse_timeline(doc, "t.yaml"), seed=3).steps[0]
    (pod_hash,) = {k.split("-")[1] for k in first.bound if k.startswith("default/wide-")}
    labels = {"app": "wide", "pod-template-hash": pod_hash}

    def stray(name: str, owner: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels}
        if owner is not None:
            meta["ownerReferences"] = [
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": "gone",
                 "controller": True}
            ]  # fmt: skip
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}], "nodeName": "pool-a-1"},
        }

    doc["objects"] += [stray("orphan", None), stray("held", "gone-rs")]
    doc["timeline"] = [ROLLOUT, {"scale": {"workload": "deployment/wide", "replicas": 1}}]
    return doc


@pytest.mark.parametrize(
    "name", [*sorted(p.name for p in EXAMPLE.parent.glob("*.yaml")), "overlapping selectors"]
)
def test_a_deployment_step_on_its_indexed_pods_replays_as_on_every_pod(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deployments read their pods through the simulation's controller and label indexes;
    handing them every pod of the namespace instead changes nothing."""
    if name == "overlapping selectors":
        doc = _overlapping_selectors()
    else:
        doc = yaml.safe_load((EXAMPLE.parent / name).read_text())
    indexed = simulate(parse_timeline(doc, name), seed=3)
    monkeypatch.setattr(Simulation, "_deployment_pods", _all_namespace_pods)
    every = simulate(parse_timeline(doc, name), seed=3)
    assert indexed.to_json() == every.to_json()


# ------------------------------------------------------------------ node groups, kinds


def pod_spec(doc: dict[str, Any], **spec: Any) -> dict[str, Any]:
    doc["spec"]["template"]["spec"].update(spec)
    return doc


def test_node_group_nodes_carry_the_labels_and_resources_of_real_nodes() -> None:
    doc = {"nodeGroups": [{"name": "pool", "zones": ["us-east-1a", "us-east-1b"]}]}
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    node = sim.cluster.infos["pool-us-east-1a-1"].node
    assert node.metadata.labels == {
        "kubernetes.io/hostname": "pool-us-east-1a-1",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "4cpu-16Gi",
        ZONE: "us-east-1a",
        "topology.kubernetes.io/region": "us-east-1",
    }
    resources = {"cpu": "4", "memory": "16Gi", "ephemeral-storage": "100Gi", "pods": "110"}
    assert node.status.capacity == resources and node.status.allocatable == resources


def test_a_node_group_templates_own_labels_and_resources_win() -> None:
    labels = {"kubernetes.io/arch": "arm64", "topology.kubernetes.io/region": "r"}
    template = {
        "metadata": {"labels": labels},
        "status": {"capacity": {"cpu": "2", "memory": "4Gi"}, "allocatable": {"pods": "20"}},
    }
    doc = {"nodeGroups": [{"name": "pool", "zones": ["a"], "template": template}]}
    node = Simulation(parse_timeline(doc, "t.yaml")).cluster.infos["pool-a-1"].node
    labels = dict(node.metadata.labels)
    assert labels["kubernetes.io/arch"] == "arm64" and labels["kubernetes.io/os"] == "linux"
    assert labels["topology.kubernetes.io/region"] == "r"
    assert labels["node.kubernetes.io/instance-type"] == "2cpu-4Gi"
    assert node.status.capacity == {
        "cpu": "2",
        "memory": "4Gi",
        "ephemeral-storage": "100Gi",
        "pods": "20",
    }
    assert node.status.allocatable == node.status.capacity


def test_charts_selecting_linux_and_requesting_ephemeral_storage_run_on_node_groups() -> None:
    web = pod_spec(deployment(6), nodeSelector={"kubernetes.io/os": "linux"})
    web["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"ephemeral-storage": "1Gi"}
    }
    (initial,) = run({"nodeGroups": zones(), "objects": [web]}).steps
    assert initial.pending == {} and len(initial.bound) == 6


def replication_controller(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "redis"},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": "redis"}},
                "spec": {
                    "containers": [{"name": "c", "image": "redis"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": ZONE,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "redis"}},
                        }
                    ],
                },
            },
        },
    }


def test_a_replication_controller_is_simulated_and_scaled_as_rc() -> None:
    doc = {
        "nodeGroups": zones(),
        "objects": [replication_controller(3)],
        "timeline": [{"scale": {"workload": "rc/redis", "replicas": 6}}],
    }
    first, scaled = run(doc).steps
    assert len(first.bound) == 3
    assert scaled.events == ["scaled replicationcontroller default/redis from 3 to 6 replicas"]
    assert pods_per_zone(scaled) == {"a": 2, "b": 2, "c": 2}
    (w,) = scaled.workloads
    assert w.workload == "replicationcontroller default/redis"


def test_a_cron_job_runs_its_next_job_whose_pods_are_reported_under_it() -> None:
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly"},
        "spec": {
            "schedule": "0 2 * * *",
            "jobTemplate": {
                "spec": {
                    "parallelism": 2,
                    "template": {
                        "spec": {
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "image": "busybox"}],
                        }
                    },
                }
            },
        },
    }
    (initial,) = run({"nodeGroups": zones(), "objects": [cron]}).steps
    # 02:00 on the first day of the Unix epoch: minute 120.
    assert sorted(k.rsplit("-", 1)[0] for k in initial.bound) == ["default/nightly-120"] * 2
    assert [w.workload for w in initial.workloads] == ["cronjob default/nightly"]


def test_kinds_the_simulator_does_not_model_are_counted_in_one_warning() -> None:
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}}
    rollout = {**deployment(1, name="ro"), "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"}
    doc = {
        "nodeGroups": zones(1),
        "objects": [config_map, {**config_map, "metadata": {"name": "d"}}, ingress, rollout],
        "timeline": [{"apply": {**config_map, "metadata": {"name": "e"}}}],
    }
    report = run(doc)
    assert report.warnings == [
        "read but not modelled (their pods are not placed): 1 Rollout (argoproj.io/v1alpha1)",
        "read and left out (the scheduler does not need them): 3 ConfigMap, 1 Ingress",
    ]
    assert report.steps[1].events == ["left out a ConfigMap"]


# ------------------------------------------------------------------ generated names


def test_pods_given_by_generate_name_alone_get_distinct_names_as_kubectl_create_gives_them() -> (
    None
):
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "job-"},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }
    doc = {"nodeGroups": zones(1), "objects": [pod, pod], "timeline": [{"apply": [pod]}]}
    first, last = run(doc).steps
    assert len(first.bound) == 2 and len(last.bound) == 3
    assert all(re.fullmatch(r"default/job-[bcdfghjklmnpqrstvwxz2456789]{5}", k) for k in last.bound)


def test_thirty_thousand_replicas_get_unique_names_and_every_report_count_equals_the_json() -> None:
    # generateName draws 5 characters of 27: at 30,000 pods, seed 0 draws 29 names already
    # taken (each once a ghost pod, overwriting another); the API server draws them again.
    # One node per zone that holds every pod keeps the scheduling cheap.
    replicas = 30_000
    node = {"status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": str(replicas)}}}
    groups = [{"name": "n", "zones": ["a", "b", "c"], "perZone": 1, "template": node}]
    doc = {"nodeGroups": groups, "objects": [deployment(replicas)], "timeline": []}
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario, seed=0)
    settled = sim.settle(scenario.source)
    step = step_report(sim, 0, "initial state", "start", [], settled)
    summary = summarize(sim)
    out = json.loads(timeline_json(TimelineReport(scenario.source, 0, [step], [])))
    (js,) = out["steps"]

    # Every pod created once, under a name of its own.
    assert len(settled.created) == len(set(settled.created)) == replicas == len(sim.pods)
    assert sorted(js["created"]) == sorted(js["bound"]) == sorted(sim.pods)

    # The counts derived from the JSON's placements...
    zone_of = {n["name"]: n["zone"] for n in js["nodes"]}
    per_zone = Counter(zone_of[node] for node in js["bound"].values())
    running, pending = len(js["bound"]), len(js["pending"])
    assert running + pending == replicas and pending == 0

    # ...are what every report says: the step, its summary, the workload, its constraint.
    assert step.running == summary.running == running
    assert len(step.pending) == len(summary.pending) == pending
    assert sum(len(pods) for _, pods in step.topology) == running
    assert pods_per_zone(step) == dict(per_zone)
    for workloads in (step.workloads, summary.workloads):
        (w,) = workloads
        assert (w.desired, w.running, w.pending) == (replicas, running, pending)
        (constraint,) = w.constraints
        assert constraint.view.counts == dict(per_zone)
    (wj,) = js["workloads"]
    assert (wj["desired"], wj["running"], wj["pending"]) == (replicas, running, pending)
    assert sorted(wj["pods"]) == sorted(js["bound"])
    (cj,) = wj["constraints"]
    assert cj["counts"] == dict(per_zone)
    assert cj["skew"] == max(per_zone.values()) - min(per_zone.values()) == 0
    assert js["violations"] == [] and step.violations == summary.violations == []
