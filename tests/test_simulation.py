"""The Simulation as a library object: snapshots that restore to equal, independent copies;
the quiet-controller shortcut checked against syncing every controller in every round; the
loseNode and restoreNode steps."""

from __future__ import annotations

import pickle
import random
from typing import Any

import pytest

from test_fastpath import assert_table_as_built_afresh
from test_timeline import ZONE, daemon_set, deployment, run, zones
from topospread.analysis.report_index import ReportIndex
from topospread.analysis.reports import (
    step_report,
    summarize,
    workload_reports,
)
from topospread.analysis.simulate import simulate
from topospread.cluster.index import ClusterIndex
from topospread.simulator.controllers.replicaset import PodClaims
from topospread.simulator.fastpath import FastPath
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.timeline_format import TimelineScenario, parse_timeline
from topospread.simulator.timeline_steps.actions import apply_step


def state(sim: Simulation) -> dict[str, Any]:
    """Everything a report reads: where each pod is, why the others wait, spread, clock."""
    return {
        "bound": {k: p.spec.node_name for k, p in sorted(sim.pods.items()) if p.spec.node_name},
        "pending": {
            k: sim.pending_message(p) for k, p in sorted(sim.pods.items()) if not p.spec.node_name
        },
        "workloads": [w.to_json() for w in workload_reports(sim)],
        "taints": {i.node.metadata.name: i.node.spec.taints for i in sim.cluster.list()},
        "now": sim.now,
        "evictions": sorted((w.pod, w.fire_at) for w in sim.taint_evictions.work.values()),
    }


def replay(sim: Simulation, scenario: TimelineScenario) -> list[dict[str, Any]]:
    out = []
    for step in scenario.steps:
        apply_step(sim, step)
        sim.settle(step.where)
        out.append(state(sim))
    return out


def statefulset(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "containers": [{"name": "db", "image": "db:1"}],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": {"app": "db"}},
                        }
                    ],
                },
            },
        },
    }


def job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {
            "parallelism": 2,
            "completions": 3,
            "template": {
                "metadata": {"labels": {"app": "batch"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "j", "image": "j:1"}]},
            },
        },
    }


def replica_set() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "bare"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "bare"}},
            "template": {
                "metadata": {"labels": {"app": "bare"}},
                "spec": {"containers": [{"name": "b", "image": "b:1"}]},
            },
        },
    }


def budget() -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }


def random_timeline(seed: int) -> dict[str, Any]:
    """Every workload kind, a budget, and a random mix of the steps that move pods."""
    rng = random.Random(seed)
    nodes = [f"pool-{z}-{i}" for z in "abc" for i in (1, 2)]
    objects = [
        deployment(rng.randint(3, 7), match_label_keys=rng.random() < 0.5),
        deployment(4, name="api"),
        statefulset(rng.randint(2, 4)),
        daemon_set(),
        job(),
        replica_set(),
        budget(),
        {  # terminating: PodTopologySpread does not count it
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "leaving",
                "labels": {"app": "web"},
                "deletionTimestamp": "2025-01-01T00:00:00Z",
            },
            "spec": {"nodeName": "pool-a-1", "containers": [{"name": "c", "image": "nginx:1"}]},
        },
    ]
    steps: list[dict[str, Any]] = []
    for _ in range(8):
        kind = rng.choice(
            ["scale", "scale-sts", "rollout", "loseZone", "loseNode", "wait", "drain",
             "removeNode", "addNodes", "taint", "cordon"]
        )  # fmt: skip
        node = rng.choice(nodes)
        if kind == "scale":
            steps.append({"scale": {"workload": "deployment/web", "replicas": rng.randint(1, 9)}})
        elif kind == "scale-sts":
            steps.append({"scale": {"workload": "sts/db", "replicas": rng.randint(0, 5)}})
        elif kind == "rollout":
            image = f"nginx:{rng.randint(2, 9)}"
            patch = {"spec": {"containers": [{"name": "c", "image": image}]}}
            steps.append({"rollout": {"workload": "deployment/web", "patch": patch}})
        elif kind == "loseZone":
            zone = rng.choice("abc")
            steps += [{"loseZone": zone}, {"wait": "6m"}, {"restoreZone": zone}]
        elif kind == "loseNode":
            steps += [{"loseNode": node}, {"wait": "301s"}]
            if rng.random() < 0.7:
                steps.append({"restoreNode": node})
        elif kind == "wait":
            steps.append({"wait": f"{rng.randint(1, 400)}s"})
        elif kind == "drain":
            steps += [{"drain": node}, {"uncordon": node}]
        elif kind == "removeNode" and sum(n[:6] == node[:6] for n in nodes) > 1:
            nodes.remove(node)  # every zone keeps a node (loseZone names one)
            steps.append({"removeNode": node})
        elif kind == "addNodes":
            steps.append({"addNodes": {"group": "pool", "zone": rng.choice("abc")}})
        elif kind == "taint":
            taint = {"node": node, "key": "dedicated", "value": "x", "effect": "NoSchedule"}
            steps.append({"taint": taint})
        else:
            steps.append({"cordon": node})
    return {"nodeGroups": zones(), "objects": objects, "timeline": steps}


@pytest.mark.parametrize("seed", range(16))
def test_skipping_quiet_controllers_changes_nothing(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = random_timeline(seed)
    quick = simulate(parse_timeline(doc, "t.yaml"), seed=seed).to_json()
    # Inputs that never compare equal: every controller syncs in every round.
    monkeypatch.setattr(Simulation, "_sync_inputs", lambda self, key, obj: (object(),))
    every = simulate(parse_timeline(doc, "t.yaml"), seed=seed).to_json()
    assert quick == every


@pytest.mark.parametrize("seed", range(8))
def test_claim_verdicts_kept_between_steps_change_nothing(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ReplicaSets' claims read each pod's verdict kept from earlier steps (and from the
    snapshot a sweep restores); claiming every pod afresh gives the same timeline."""
    doc = random_timeline(seed)
    kept = simulate(parse_timeline(doc, "t.yaml"), seed=seed).to_json()
    monkeypatch.setattr(PodClaims, "_memo", lambda self, rs: None)
    fresh = simulate(parse_timeline(doc, "t.yaml"), seed=seed).to_json()
    assert kept == fresh


def adopt_an_orphan(memo: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A Deployment scaled from 3 to 4 as a bare pod carrying its labels appears: its
    ReplicaSet adopts the pod (the pod's key stays, its verdict changes from adopt to owned)
    instead of creating one."""
    if not memo:
        monkeypatch.setattr(PodClaims, "_memo", lambda self, rs: None)
    sim = Simulation(parse_timeline({"nodeGroups": zones(), "objects": [deployment(3)]}, "t"))
    sim.settle("t")
    labels = next(iter(sim.pods.values())).metadata.labels
    orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stray", "labels": labels}}
    orphan["spec"] = {"containers": [{"name": "c", "image": "nginx:1"}]}
    scale = {"scale": {"workload": "deployment/web", "replicas": 4}}
    for step in parse_timeline({"timeline": [{"apply": orphan}, scale]}, "t").steps:
        apply_step(sim, step)
    sim.settle("t")
    out = state(sim)
    out["owners"] = {k: [r.name for r in p.metadata.owner_references] for k, p in sim.pods.items()}
    return out


def test_a_pod_adopted_in_place_is_claimed_again_not_read_from_the_kept_verdicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = adopt_an_orphan(True, monkeypatch)
    assert len(kept["bound"]) == 4 and "default/stray" in kept["bound"]
    assert all(len(owners) == 1 for owners in kept["owners"].values())  # adopted once
    assert kept == adopt_an_orphan(False, monkeypatch)


@pytest.mark.parametrize("seed", range(6))
def test_fast_paths_and_the_reference_replay_random_timelines_alike(seed: int) -> None:
    """The scheduler's vectorised path, skipped quiet controllers and the reports' pod
    index against the reference scheduler, every controller synced, every pod counted."""
    doc = random_timeline(seed)
    fast = simulate(parse_timeline(doc, "t.yaml"), seed=seed, fast=True).to_json()
    reference = simulate(parse_timeline(doc, "t.yaml"), seed=seed, fast=False).to_json()
    assert fast == reference
    assert any(s["workloads"] for s in fast["steps"])


def web_and_other(web: int, other: int, scale_to: int) -> tuple[TimelineScenario, Simulation]:
    """Deployments web and other settled, and a timeline that scales web to ``scale_to``."""
    doc = {
        "nodeGroups": zones(),
        "objects": [deployment(web), deployment(other, name="other")],
        "timeline": [{"scale": {"workload": "deployment/web", "replicas": scale_to}}],
    }
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario)
    sim.settle("t.yaml")
    return scenario, sim


def test_the_quiet_shortcut_does_skip_syncs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equivalence above would hold trivially if nothing were ever skipped."""
    calls: list[str] = []
    original = Simulation._sync_one

    def counting(self: Simulation, key: Any, obj: Any, out: Any) -> bool:
        calls.append(key[2])
        return original(self, key, obj, out)

    monkeypatch.setattr(Simulation, "_sync_one", counting)
    scenario, sim = web_and_other(6, 3, 9)
    assert {"web", "other"} <= set(calls)
    calls.clear()
    apply_step(sim, scenario.steps[0])
    sim.settle("t.yaml")
    # The scale-up wakes web alone: other, quiet since the initial state, is not synced.
    assert "web" in calls and "other" not in calls
    assert len(sim.pods) == 12


@pytest.mark.parametrize("seed", [0, 5])
def test_a_restored_snapshot_replays_as_the_original(seed: int) -> None:
    doc = random_timeline(seed)
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario, seed=seed)
    sim.settle("t.yaml")
    snap = sim.snapshot()
    first, second = snap.restore(), snap.restore()
    assert first is not second and first.pods is not second.pods
    assert state(first) == state(sim)
    expected = replay(sim, scenario)
    assert replay(first, scenario) == expected
    # The first copy's replay left the second, and the snapshot, untouched.
    assert replay(second, scenario) == expected
    assert replay(snap.restore(), scenario) == expected


def test_a_snapshot_is_plain_bytes_that_cross_processes() -> None:
    sim = Simulation(parse_timeline({"nodeGroups": zones(), "objects": [deployment(3)]}, "t"))
    sim.settle("t")
    snap = sim.snapshot()
    copy = pickle.loads(pickle.dumps(snap.data))
    assert copy == snap.data and len(snap) == len(copy)


def test_lose_node_evicts_after_the_toleration_and_restore_node_untaints() -> None:
    doc = {
        "nodeGroups": zones(1),
        "objects": [deployment(3)],
        "timeline": [
            {"loseNode": "pool-a-1"},
            {"wait": "5m"},
            {"restoreNode": ["pool-a-1"]},
        ],
    }
    start, lost, waited, restored = run(doc).steps
    assert len(start.bound) == 3
    assert "pool-a-1: NotReady (unreachable)" in lost.events[0]
    assert sorted(lost.bound.values()) == ["pool-a-1", "pool-b-1", "pool-c-1"]
    # The evicted pod's replacement cannot go to zone a (its node is tainted) and two pods
    # in b or c would skew zones by 2: the trap of a lost but still present domain.
    assert len(waited.pending) == 1 and "pool-a-1" not in waited.bound.values()
    assert "Ready again" in restored.events[0]
    assert restored.pending == {} and "pool-a-1" in restored.bound.values()
    (node,) = [n for n, _ in restored.topology if n.metadata.name == "pool-a-1"]
    assert node.spec.taints == []
    assert ZONE in node.metadata.labels


def test_lose_node_names_an_unknown_node() -> None:
    doc = {"nodeGroups": zones(1), "timeline": [{"loseNode": "nope"}]}
    with pytest.raises(Exception, match=r'timeline\[0\] \(loseNode\): Not found: node "nope"'):
        run(doc)


def rich_doc(scoring: bool = False) -> dict[str, Any]:
    """What the scheduler and controllers keep state about: pod (anti-)affinity with a
    namespace selector, host ports, taints and tolerations, priorities, a budget, a scoring
    strategy with a shape, a DaemonSet; plus steps that exercise them."""
    doc = random_timeline(3)
    affinity = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {"app": "cache"}},
                    "topologyKey": "kubernetes.io/hostname",
                    "namespaceSelector": {},
                }
            ],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 50,
                    "podAffinityTerm": {
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "topologyKey": ZONE,
                    },
                }
            ],
        }
    }
    cache = deployment(4, name="cache")
    spec = cache["spec"]["template"]["spec"]
    spec["affinity"] = affinity
    spec["priorityClassName"] = "high"
    spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    friend = deployment(3, name="friend")  # required affinity to the cache pods
    friend["spec"]["template"]["spec"]["affinity"] = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": ZONE}
            ]
        }
    }
    ported = deployment(2, name="ported")
    ported["spec"]["template"]["spec"]["containers"][0]["ports"] = [
        {"containerPort": 80, "hostPort": 8080}
    ]
    doc["objects"] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default",
         "labels": {"team": "a"}}},
        *doc["objects"],
        cache,
        friend,
        ported,
    ]  # fmt: skip
    if not scoring:  # the fast path does not take this strategy: keep it for its own case
        doc["timeline"] += [{"scale": {"workload": "deployment/cache", "replicas": 7}}]
        return doc
    doc["config"] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "resources": [{"name": "cpu", "weight": 1}],
                                "requestedToCapacityRatio": {
                                    "shape": [
                                        {"utilization": 0, "score": 0},
                                        {"utilization": 100, "score": 10},
                                    ]
                                },
                            }
                        },
                    }
                ],
            }
        ],
    }
    doc["timeline"] += [{"scale": {"workload": "deployment/cache", "replicas": 7}}]
    return doc


@pytest.mark.parametrize(("fast", "scoring"), [(True, False), (False, False), (True, True)])
def test_a_snapshot_of_a_rich_cluster_restores_and_replays_alike(fast: bool, scoring: bool) -> None:
    scenario = parse_timeline(rich_doc(scoring), "t.yaml")
    sim = Simulation(scenario, seed=1, fast=fast)
    sim.settle("t.yaml")
    assert any("cache" in k for k, p in sim.pods.items() if p.spec.node_name)
    # The vectorised path, with its affinity counters, is part of what is copied.
    assert bool(sim.scheduler.fast) == (fast and not scoring)
    assert (sim.scheduler.fast_decisions > 0) == (fast and not scoring)
    copy = sim.snapshot().restore()
    assert state(copy) == state(sim)
    assert replay(copy, scenario) == replay(sim, scenario)


def spread_workload(rng: random.Random, name: str) -> dict[str, Any]:
    """A Deployment with one to three random spread constraints: zone, hostname or a rack
    label some nodes lack; either policy; minDomains; a selector that may take in another
    workload's pods; a node selector or a toleration on some."""
    constraints = []
    keys = rng.sample([ZONE, "kubernetes.io/hostname", "rack"], rng.randint(1, 3))
    for key in keys:  # one constraint per key: (key, when) pairs must be unique
        hard = rng.random() < 0.6
        c: dict[str, Any] = {
            "maxSkew": rng.randint(1, 2),
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"tier": rng.choice(["front", "back"])}},
        }
        if rng.random() < 0.5:
            c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
        if rng.random() < 0.4:
            c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
        if hard and rng.random() < 0.3:
            c["minDomains"] = rng.randint(2, 5)
        constraints.append(c)
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx:1"}],
        "topologySpreadConstraints": constraints,
    }
    if rng.random() < 0.3:
        spec["nodeSelector"] = {ZONE: rng.choice(["a", "b"])}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    labels = {"app": name, "tier": rng.choice(["front", "back"])}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": rng.randint(2, 8),
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels}, "spec": spec},
        },
    }


@pytest.mark.parametrize("seed", range(8))
def test_reports_count_spread_from_the_cluster_index_as_the_reference_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reports' counts read off the cluster index's kept counters
    (ClusterIndex.eligible_domain_counts) against calPreFilterState's own count, step by
    step, over random constraints, taints, node selectors, rack labels some nodes lack, and
    pods moving."""
    rng = random.Random(seed)
    names = [f"pool-{z}-{i}" for z in "abc" for i in (1, 2)]
    names += [f"rack{r}-{z}-1" for r in (1, 2) for z in "abc"]
    racks = [
        {
            "name": f"rack{r}",
            "zones": ["a", "b", "c"],
            "perZone": 1,
            "template": {"metadata": {"labels": {"rack": f"r{r}"}}},
        }
        for r in (1, 2)
    ]
    steps: list[dict[str, Any]] = []
    for _ in range(8):
        node = rng.choice(names)
        step = rng.choice(
            [
                {"taint": {"node": node, "key": "dedicated", "value": "x", "effect": "NoSchedule"}},
                {"scale": {"workload": "deployment/w0", "replicas": rng.randint(1, 9)}},
                {"loseNode": node},
                {"wait": "301s"},
                {"restoreNode": node},
                {"drain": node},
                {"uncordon": node},
            ]
        )
        steps.append(step)
    doc = {
        "nodeGroups": [*zones(), *racks],
        "objects": [spread_workload(rng, f"w{i}") for i in range(4)],
        "timeline": steps,
    }
    served: list[bool] = []
    kept = ClusterIndex.eligible_domain_counts

    def counted(self: ClusterIndex, *args: Any) -> Any:
        tallies = kept(self, *args)
        served.append(True)
        return tallies

    monkeypatch.setattr(ClusterIndex, "eligible_domain_counts", counted)
    fast = simulate(parse_timeline(doc, "t.yaml"), seed=seed, fast=True).to_json()
    reference = simulate(parse_timeline(doc, "t.yaml"), seed=seed, fast=False).to_json()
    assert fast == reference
    assert sum(served) > 10  # the index answered the reports' counts


def fresh_reports(sim: Simulation) -> list[dict[str, Any]]:
    """The workloads' reports from an index built afresh from every pod."""
    kept = sim.memo.pop(ReportIndex.KEY, None)
    try:
        return [w.to_json() for w in workload_reports(sim)]
    finally:
        if kept is not None:
            sim.memo[ReportIndex.KEY] = kept


def group_pods(sim: Simulation) -> list[list[list[str]]]:
    return [[[p.key for p in c.pods] for c in w.constraints] for w in workload_reports(sim)]


@pytest.mark.parametrize("seed", range(12))
def test_the_reports_kept_index_and_a_summary_say_what_a_walk_over_every_pod_says(
    seed: int,
) -> None:
    """The reports' index, brought up to date from the pods touched since the last report,
    against one built from every pod, step by step on random timelines (scale, rollouts,
    zone and node loss, drains, node removal and addition); and a sweep's summary against
    the full report's counts, Pending pods, workloads and violations."""
    doc = random_timeline(seed)
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario, seed=seed)
    sim.settle("t.yaml")
    checked = 0
    for step in [None, *scenario.steps]:
        if step is not None:
            apply_step(sim, step)
            sim.settle(step.where)
        kept = [w.to_json() for w in workload_reports(sim)]
        kept_pods = group_pods(sim)
        assert kept == fresh_reports(sim)
        sim.memo.pop(ReportIndex.KEY, None)
        assert kept_pods == group_pods(sim)
        full = step_report(sim, 0, "", "", [], Settled(0, True))
        summary = summarize(sim)
        assert summary.running == len(full.bound)
        assert summary.pending == full.pending
        assert summary.violations == full.violations
        assert summary.preferences_not_met == full.preferences_not_met
        lean = [w.to_json() for w in summary.workloads]
        assert lean == [{**w.to_json(), "pods": []} for w in full.workloads]
        assert all(not c.pods for w in summary.workloads for c in w.constraints)
        checked += sum(len(w.constraints) for w in full.workloads)
    assert checked > 0


@pytest.mark.parametrize("seed", range(12))
def test_the_index_based_report_counts_say_what_a_walk_over_the_pods_says(seed: int) -> None:
    """Step by step on random timelines, every workload's constraint counts as the reports
    read them off the cluster index (kept across steps: binds, evictions, node loss, taints
    and node removal update it) against calPreFilterState's walk over every pod of every
    node, in the same simulation."""
    doc = random_timeline(seed)
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario, seed=seed)
    sim.settle("t.yaml")
    counted = 0
    for step in [None, *scenario.steps]:
        if step is not None:
            apply_step(sim, step)
            sim.settle(step.where)
        indexed = [w.to_json() for w in workload_reports(sim)]
        sim.fast = False  # the reports count as the reference does: a walk over the pods
        try:
            walked = [w.to_json() for w in workload_reports(sim)]
        finally:
            sim.fast = True
        assert indexed == walked
        counted += sum(sum(c["counts"].values()) for w in indexed for c in w["constraints"])
    assert counted > 0


def test_a_report_after_a_change_reads_only_the_touched_pods(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The index follows the pods touched since the last report, not every pod."""
    scenario, sim = web_and_other(9, 6, 10)
    summarize(sim)
    added: list[str] = []
    original = ReportIndex._add

    def counting(self: ReportIndex, key: str, pod: Any) -> None:
        added.append(key)
        original(self, key, pod)

    monkeypatch.setattr(ReportIndex, "_add", counting)
    apply_step(sim, scenario.steps[0])
    sim.settle("t.yaml")
    summary = summarize(sim)
    assert summary.running == 16
    assert 1 <= len(added) <= 3  # the new pod (created, then bound), not the other 15


@pytest.mark.parametrize("seed", range(10))
def test_the_fast_paths_table_carried_over_node_changes_is_the_table_built_afresh(
    seed: int,
) -> None:
    """Nodes lost, restored, removed, added, tainted, cordoned and drained: after every step
    the fast path's node table, whose unchanged rows rebuilds carry over, holds what a table
    built from the cluster as it stands holds (resources, spread selectors' pods per node
    and their counters, each pod shape's static verdicts and scores)."""
    doc = random_timeline(seed)
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario, seed=seed)
    sim.settle("t.yaml")
    (fast,) = sim.scheduler.fast.values()
    rebuilds = 0
    original = FastPath._rebuild

    def counting(self: FastPath) -> None:
        nonlocal rebuilds
        rebuilds += 1
        original(self)

    FastPath._rebuild = counting  # type: ignore[method-assign]
    try:
        for step in scenario.steps:
            apply_step(sim, step)
            sim.settle(step.where)
            assert_table_as_built_afresh(fast)
    finally:
        FastPath._rebuild = original  # type: ignore[method-assign]
    assert fast.shapes.statics and fast.cluster.index().matching
    churn = any("removeNode" in s or "addNodes" in s for s in doc["timeline"])
    assert rebuilds > 0 or not churn
