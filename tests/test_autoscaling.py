"""The autoscalers in ``simulate``'s loop: the ``autoscaler:`` section, the controller that
carries out cluster-autoscaler's and Karpenter's decisions on the one Simulation at their
ticks inside ``wait``, stock-outs and time-outs, scale-down through the Eviction API, and the
reports (JSON, terminal)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from test_cli import run as cli
from topospread.analysis.simulate import TimelineReport, simulate
from topospread.errors import ManifestError
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.waiting import settle_with_autoscaler

ZONE = "topology.kubernetes.io/zone"
SECOND = 1_000_000_000


def web(
    replicas: int, when: str = "DoNotSchedule", cpu: str = "100m", **extra: Any
) -> dict[str, Any]:
    constraint = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": "web"}},
        **extra,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": cpu}}}
                    ],
                    "topologySpreadConstraints": [constraint],
                },
            },
        },
    }


def scale_from_zero(
    autoscaler: dict[str, Any], timeline: list[Any] | None = None
) -> dict[str, Any]:
    return {
        "nodeGroups": [
            {
                "name": "node",
                "zones": ["zone-a", "zone-b", "zone-c"],
                "perZone": {"zone-a": 1, "zone-b": 1, "zone-c": 0},
            }
        ],
        "autoscaler": autoscaler,
        "objects": [web(3, minDomains=3)],
        "timeline": timeline if timeline is not None else [{"wait": "2m"}],
    }


CA = {"clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 3}]}}
KARPENTER = {
    "karpenter": {
        "nodePools": [
            {
                "name": "default",
                "requirements": [
                    {"key": ZONE, "operator": "In", "values": ["zone-a", "zone-b", "zone-c"]}
                ],
            }
        ]
    }
}


def run(doc: dict[str, Any], seed: int = 0) -> TimelineReport:
    return simulate(parse_timeline(doc, "t.yaml"), seed=seed)


def changes(report: TimelineReport, action: str) -> list[dict[str, Any]]:
    return [
        c
        for s in report.to_json()["steps"]
        for c in s.get("autoscaler", [])
        if c["action"] == action
    ]


def test_cluster_autoscaler_adds_the_zone_c_node_at_its_first_tick_and_the_pod_binds() -> None:
    report = run(scale_from_zero(CA))
    start, waited = report.to_json()["steps"]
    assert len(start["pending"]) == 1 and start["nodeGroups"] == {
        "node-zone-a": 1,
        "node-zone-b": 1,
        "node-zone-c": 0,
    }
    (added,) = changes(report, "add")
    assert (added["time"], added["node"], added["group"], added["zone"]) == (
        10.0,
        "node-zone-c-1",
        "node-zone-c",
        "zone-c",
    )
    (up,) = changes(report, "scaleUp")
    assert "node-zone-c 0->1" in up["reason"]
    assert "expander least-waste chose node-zone-c" in up["reason"]
    assert report.steps[-1].pending == {} and waited["nodeGroups"]["node-zone-c"] == 1
    assert waited["bound"][next(iter(report.steps[0].pending))] == "node-zone-c-1"


def test_karpenter_launches_a_node_in_zone_c_after_its_batch() -> None:
    report = run(scale_from_zero(KARPENTER))
    (added,) = changes(report, "add")
    assert (added["time"], added["zone"], added["group"]) == (1.0, "zone-c", "default")
    assert report.steps[-1].pending == {}


def test_only_ticks_inside_a_wait_act_and_nodes_are_not_ready_until_they_start() -> None:
    report = run(
        scale_from_zero(
            CA, [{"scale": {"workload": "deployment/web", "replicas": 3}}, {"wait": "30s"}]
        )
    )
    _, scaled, waited = report.steps
    assert scaled.autoscaler == [] and len(scaled.pending) == 1
    # Added at 10s, Ready at 1m10s: at 30s the pod still waits, and no second node came.
    assert [c.node for c in waited.autoscaler if c.action == "add"] == ["node-zone-c-1"]
    assert len(waited.pending) == 1


def test_without_an_autoscaler_a_wait_adds_nothing_and_the_json_has_no_autoscaler_keys() -> None:
    doc = scale_from_zero(CA)
    del doc["autoscaler"]
    report = run(doc)
    assert len(report.steps[-1].pending) == 1
    assert "autoscaler" not in report.to_json()["steps"][-1]


def test_a_stockout_in_zone_c_keeps_the_node_from_registering_until_the_provision_timeout() -> None:
    timeline = [{"stockout": {"zone": "zone-c", "duration": "1h"}}, {"wait": "16m"}]
    report = run(scale_from_zero(CA, timeline))
    assert changes(report, "add") == []
    (stockout,) = changes(report, "stockout")
    assert (
        stockout["group"] == "node-zone-c" and "no new nodes in zone zone-c" in stockout["reason"]
    )
    (timeout,) = changes(report, "timeout")
    # The request times out once its expected add time (the scale-up at 10s plus
    # max-node-provision-time, 15m10s) is before the loop's time: the tick after, 15m20s.
    assert timeout["time"] == 920.0 and "back-off" in timeout["reason"]
    assert len(report.steps[-1].pending) == 1


def test_a_stockout_leaves_karpenter_no_offering_in_zone_c() -> None:
    timeline = [{"stockout": {"zone": "zone-c", "duration": "1h"}}, {"wait": "1m"}]
    report = run(scale_from_zero(KARPENTER, timeline))
    assert changes(report, "add") == []
    (why,) = changes(report, "noScaleUp")
    assert "could not schedule 1 pod" in why["reason"]


def test_cluster_autoscaler_removes_an_unneeded_node_after_scale_down_unneeded_time() -> None:
    doc = scale_from_zero(
        CA,
        [{"wait": "2m"}, {"scale": {"workload": "deployment/web", "replicas": 0}}, {"wait": "17m"}],
    )
    report = run(doc)
    removed = changes(report, "remove")
    assert removed and all("scale-down: removed node" in c["reason"] for c in removed)
    # Each node's removal was simulated while it still had its pod, and failed: it is not
    # looked at again for unremovable-node-recheck-timeout (5m; upstream's
    # RecentlyUnremovable). zone-a's and zone-b's failed at 10s, so they are unneeded from
    # 5m10s and removed 10m later; zone-c's node, Ready at 1m10s, from 6m10s.
    assert [(c["time"], c["node"]) for c in removed] == [
        (910.0, "node-zone-a-1"),
        (910.0, "node-zone-b-1"),
        (970.0, "node-zone-c-1"),
    ]
    assert [c["reason"].rsplit("; ", 1)[1] for c in removed] == [
        "unneeded since 5m10s",
        "unneeded since 5m10s",
        "unneeded since 6m10s",
    ]
    assert report.to_json()["steps"][-1]["nodeGroups"] == {
        "node-zone-a": 0,
        "node-zone-b": 0,
        "node-zone-c": 0,
    }


def test_settle_with_autoscaler_returns_how_long_the_cluster_took_to_recover() -> None:
    sim = Simulation(parse_timeline(scale_from_zero(CA, []), "t.yaml"))
    sim.settle("t.yaml")
    took = settle_with_autoscaler(sim, 10 * 60 * SECOND, "t.yaml")
    assert took == 70 * SECOND  # the tick at 10s, then a minute of start-up
    assert sim.autoscaler is not None and sim.autoscaler.group_sizes(sim)["node-zone-c"] == 1


def test_the_same_seed_gives_the_same_report() -> None:
    doc = scale_from_zero(
        {"clusterAutoscaler": {"options": {"expander": "random"}, **CA["clusterAutoscaler"]}}
    )
    assert run(doc, seed=4).to_json() == run(copy.deepcopy(doc), seed=4).to_json()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"clusterAutoscalr": {}}, r"t.yaml: autoscaler: clusterAutoscalr: unknown field"),
        (
            {**CA, **KARPENTER},
            r"t.yaml: autoscaler: give exactly one of clusterAutoscaler or karpenter",
        ),
        (
            {"clusterAutoscaler": {"options": {"scan-intervall": "10s"}, "nodeGroups": []}},
            r"t.yaml: autoscaler.clusterAutoscaler.options: scan-intervall: unknown "
            r"cluster-autoscaler option",
        ),
        (
            {"clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "nod", "maxSize": 3}]}},
            r"t.yaml: autoscaler.clusterAutoscaler.nodeGroups\[0\]: nodeGroup: Not found: 'nod'",
        ),
        (
            {
                "clusterAutoscaler": {
                    "nodeGroups": [{"nodeGroup": "node", "maxSize": 3, "minsize": 1}]
                }
            },
            r"t.yaml: autoscaler.clusterAutoscaler.nodeGroups\[0\]: minsize: unknown field",
        ),
        (
            {
                "clusterAutoscaler": {
                    "nodeGroups": [{"nodeGroup": "node", "maxSize": 0, "minSize": 0}]
                }
            },
            r"nodeGroups\[0\]: size: Invalid value: 1",
        ),
        (
            {"karpenter": {"nodePools": [{"name": "p", "weight": 500}]}},
            r"t.yaml: autoscaler.karpenter.nodePools\[0\] \(NodePool p\): weight: Invalid value: "
            r"500: weight in body should be less than or equal to 100",
        ),
        (
            {"karpenter": {"nodePools": [], "batchIdleDuration": "soon"}},
            r"t.yaml: autoscaler.karpenter: batchIdleDuration: Invalid value: 'soon'",
        ),
    ],
    ids=[
        "unknown-kind",
        "both",
        "misspelled-flag",
        "unknown-group",
        "misspelled-field",
        "size-over-max",
        "bad-nodepool",
        "bad-duration",
    ],
)
def test_a_bad_autoscaler_section_names_the_file_entry_and_field(
    section: dict[str, Any], message: str
) -> None:
    with pytest.raises(ManifestError, match=message):
        parse_timeline(scale_from_zero(section), "t.yaml")


def test_the_cli_exits_2_on_a_bad_autoscaler_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    path = tmp_path / "t.yaml"
    path.write_text(
        yaml.safe_dump(
            scale_from_zero(
                {
                    "clusterAutoscaler": {
                        "nodeGroups": [{"nodeGroup": "node", "maxSize": 3, "minsize": 1}]
                    }
                }
            )
        )
    )
    code, _, err = cli(["simulate", str(path)], capsys)
    assert code == 2 and "minsize: unknown field" in err and "Traceback" not in err


# ------------------------------------------------------------------ the examples

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "simulations"


def example(name: str, seed: int = 0) -> TimelineReport:
    import yaml

    path = EXAMPLES / name
    return simulate(parse_timeline(yaml.safe_load(path.read_text()), str(path)), seed=seed)


def adds(report: TimelineReport) -> list[tuple[str, str]]:
    return [(c.group, c.zone) for s in report.steps for c in s.autoscaler if c.action == "add"]


def test_scale_from_zero_cluster_autoscaler_over_scales_then_removes_the_empty_node() -> None:
    report = example("autoscaler-scale-from-zero.yaml")
    # Seed 0: the random expander picks zone-b first (the three templates are equal), then
    # zone-c; the pods go to zone-c (its new domain holds them at 0 there), zone-b's stays empty.
    assert adds(report) == [("node-zone-b", "zone-b"), ("node-zone-c", "zone-c")]
    _, scaled, settled, later = report.steps
    assert len(scaled.pending) == 2 and settled.pending == {}
    removed = [(c.node, c.time / 1e9) for c in later.autoscaler if c.action == "remove"]
    # Unneeded from when it started (1m10s), removed 10m later.
    assert removed == [("node-zone-b-2", 670.0)]
    assert later.node_groups == {"node-zone-a": 1, "node-zone-b": 1, "node-zone-c": 1}


@pytest.mark.parametrize("seed", range(4))
def test_scale_from_zero_with_the_default_least_waste_expander_adds_one_zone_c_node(
    seed: int,
) -> None:
    # The same example without its `expander: random`: upstream's default expander,
    # least-waste (expander/waste), scores zone-c's option (one node, both pods: the new
    # domain takes the second at 1/1/1) below the others (one node, one pod each), whatever
    # the seed: one node, nothing left to remove.
    import yaml

    path = EXAMPLES / "autoscaler-scale-from-zero.yaml"
    doc = yaml.safe_load(path.read_text())
    del doc["autoscaler"]["clusterAutoscaler"]["options"]
    report = simulate(parse_timeline(doc, str(path)), seed=seed)
    (up,) = [c for s in report.steps for c in s.autoscaler if c.action == "scaleUp"]
    assert up.reason.startswith("scale-up: node-zone-c 0->1 for 2 pods (")
    assert up.reason.endswith("expander least-waste chose node-zone-c (estimated 1 node(s))")
    assert adds(report) == [("node-zone-c", "zone-c")]
    assert report.steps[-1].pending == {}
    assert not [c for s in report.steps for c in s.autoscaler if c.action == "remove"]


@pytest.mark.parametrize("seed", range(4))
def test_scale_from_zero_karpenter_launches_one_node_in_zone_c_for_both_pods(seed: int) -> None:
    report = example("autoscaler-scale-from-zero-karpenter.yaml", seed)
    assert adds(report) == [("default", "zone-c")]
    assert report.steps[-1].pending == {}
    assert not [c for s in report.steps for c in s.autoscaler if c.action == "remove"]


def scale_ups(report: TimelineReport) -> list[tuple[float, dict[str, int]]]:
    """Each loop's scale-up: time, group -> nodes asked for."""
    out: dict[float, dict[str, int]] = {}
    for s in report.steps:
        for c in s.autoscaler:
            if c.action == "scaleUp":
                out.setdefault(c.time / 1e9, {})[c.group] = c.count
    return sorted(out.items())


def test_balance_similar_zones_adds_one_node_per_loop_and_removes_the_unneeded_later() -> None:
    # Azure/AKS#2849 as cluster-autoscaler really behaves: with DoNotSchedule every option is
    # one node (kubernetes/autoscaler#9150), so twelve loops add twelve nodes, 5/5/5 in the
    # end, and no node is ever added that the pods then leave empty.
    report = example("autoscaler-balance-similar-zones.yaml")
    _, grown, up, shrunk, down = report.steps
    ups = scale_ups(report)
    assert [sum(d.values()) for _, d in ups] == [1] * 12
    assert [t for t, _ in ups] == [10.0 * i for i in range(1, 13)]
    assert len(grown.pending) == 24 and up.pending == {}
    assert up.node_groups == {"pool-zone-1": 5, "pool-zone-2": 5, "pool-zone-3": 5}
    assert [c for c in up.autoscaler if c.action == "remove"] == []
    # Shrunk to 15 at 5m: the ReplicaSet controller's victims leave the zones uneven (skew
    # 6). Every node's removal was simulated while the 30 replicas ran, and failed: none is
    # looked at again before unremovable-node-recheck-timeout (5m), so the nodes are unneeded
    # from 5m10s and go at 15m10s: the four left empty at once (empty candidates first,
    # taken group by group as upstream's CropNodes takes them) and one drain
    # (max-drain-parallelism). A moved pod only has to pass the filters where it
    # lands, so the skew stays (seed 0; the expander's ties, broken at random, decide which
    # nodes the pods were on).
    assert shrunk.violations
    removed = [c for c in down.autoscaler if c.action == "remove"]
    assert [
        (c.time, c.node, c.reason.endswith("empty; unneeded since 5m10s")) for c in removed
    ] == [
        (910 * SECOND, "pool-zone-1-2", True),
        (910 * SECOND, "pool-zone-1-4", True),
        (910 * SECOND, "pool-zone-1-5", True),
        (910 * SECOND, "pool-zone-2-4", True),
        (910 * SECOND, "pool-zone-1-1", False),
    ]
    assert down.node_groups == {"pool-zone-1": 1, "pool-zone-2": 4, "pool-zone-3": 5}
    assert down.pending == {} and down.violations == shrunk.violations


def test_schedule_anyway_spread_gets_every_node_in_the_first_loop() -> None:
    # kubernetes/autoscaler#9150's contrast: the estimator ignores scores, so one option packs
    # the 24 pending replicas on 12 nodes, balanced 4/4/4 over the similar groups.
    report = example("autoscaler-schedule-anyway-estimate.yaml")
    assert scale_ups(report) == [(10.0, {"pool-zone-1": 4, "pool-zone-2": 4, "pool-zone-3": 4})]
    assert report.steps[-1].pending == {}


def test_a_stockout_in_the_emptiest_zone_deadlocks_the_zonal_spread_until_it_ends() -> None:
    # kubernetes/enhancements#3990.
    report = example("autoscaler-stockout-deadlock.yaml")
    _, _, scaled, deadlocked, recovered = report.steps
    (waiting,) = scaled.pending
    assert deadlocked.pending.keys() == {waiting}
    assert [c.group for c in deadlocked.autoscaler if c.action == "scaleUp"] == ["node-zone-c"] * 2
    timeouts = [(c.time / 1e9, c.reason) for c in deadlocked.autoscaler if c.action == "timeout"]
    # Scale-up at 10s, timed out at 15m20s (the expected add time, 15m10s, is before it),
    # backed off 5m to 20m20s (still backed off at 20m20s itself: upstream's BackoffStatus),
    # scale-up again at 20m30s, timed out at 35m40s, backed off 10m.
    scale_ups = [c.time / 1e9 for c in deadlocked.autoscaler if c.action == "scaleUp"]
    assert scale_ups == [10.0, 1230.0]
    assert [t for t, _ in timeouts] == [920.0, 2140.0]
    assert "back-off until 20m20s" in timeouts[0][1] and "back-off until 45m40s" in timeouts[1][1]
    refused = [c.reason for c in deadlocked.autoscaler if c.action == "noScaleUp"]
    assert refused and all(
        "node-zone-a: node(s) didn't match pod topology spread constraints" in r for r in refused
    )
    assert deadlocked.node_groups == {"node-zone-a": 2, "node-zone-b": 2, "node-zone-c": 1}
    ((_, zone),) = adds(report)
    assert zone == "zone-c" and recovered.pending == {}


def test_a_volume_pinned_by_the_csi_label_in_an_empty_zone_never_triggers_a_scale_up() -> None:
    # kubernetes/autoscaler#6000.
    report = example("autoscaler-volume-zone.yaml")
    assert adds(report) == [] and list(report.steps[-1].pending) == ["default/db-0"]
    (why,) = [c.reason for s in report.steps for c in s.autoscaler if c.action == "noScaleUp"]
    assert "node-zone-c: node(s) didn't match PersistentVolume's node affinity" in why


def test_a_volume_pinned_by_the_zone_label_scales_the_empty_zone_up() -> None:
    import yaml

    doc = yaml.safe_load((EXAMPLES / "autoscaler-volume-zone.yaml").read_text())
    pv = next(o for o in doc["objects"] if o["kind"] == "PersistentVolume")
    (term,) = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    term["matchExpressions"][0]["key"] = ZONE
    report = run(doc)
    assert adds(report) == [("node-zone-c", "zone-c")]
    assert report.steps[-1].pending == {}


def test_the_readme_shows_what_the_min_domains_example_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    readme = (EXAMPLES.parents[1] / "README.md").read_text()
    shown = readme.split("prints for its\n`wait`:\n\n```text\n", 1)[1].split("\n```", 1)[0]
    _, out, _ = cli(["simulate", str(EXAMPLES / "autoscaler-min-domains.yaml")], capsys)
    assert shown in out


def test_karpenter_deletes_its_node_once_empty_after_its_next_poll_and_the_validation() -> None:
    import yaml

    doc = yaml.safe_load((EXAMPLES / "autoscaler-scale-from-zero-karpenter.yaml").read_text())
    doc["timeline"] = [
        doc["timeline"][0],
        {"wait": "2m"},
        {"scale": {"workload": "deployment/web", "replicas": 0}},
        {"wait": "1m"},
    ]
    report = run(doc)
    (removed,) = [c for s in report.steps for c in s.autoscaler if c.action == "remove"]
    # Found empty at the poll at 130s, its nodeclaim deleted once the command is validated
    # 15s later (upstream: commandValidationDelay, disruption/consolidation.go); the Node goes
    # after the termination controller's MinDrainTime (5s) and its look after the instance's
    # termination (5s more; node/termination/controller.go).
    assert (removed.node, removed.time) == ("default-00001", 155 * SECOND)
    assert "emptiness: delete default-00001 (Empty)" in removed.reason
    assert report.steps[-1].node_groups == {"default": 0}


def test_a_simulation_with_an_autoscaler_restores_from_a_snapshot_and_goes_on_alike() -> None:
    sim = Simulation(parse_timeline(scale_from_zero(CA, []), "t.yaml"))
    sim.settle("t.yaml")
    copy_ = sim.snapshot().restore()
    for s in (sim, copy_):
        assert settle_with_autoscaler(s, 10 * 60 * SECOND, "t.yaml") == 70 * SECOND
    assert sim.autoscaler is not None and copy_.autoscaler is not None
    assert [c.to_json() for c in sim.autoscaler.changes] == [
        c.to_json() for c in copy_.autoscaler.changes
    ]


def test_an_autoscaler_given_to_the_simulation_replaces_the_scenarios_own() -> None:
    # What sweep --autoscaler and check --autoscaler build on: any scenario, any autoscaler.
    from topospread.simulator.autoscaler_spec import parse_autoscaler

    doc = scale_from_zero(CA, [])
    del doc["autoscaler"]
    scenario = parse_timeline(doc, "t.yaml")
    spec = parse_autoscaler(CA, "a.yaml", scenario.groups, Path("."))
    sim = Simulation(scenario, autoscaler=spec)
    sim.settle("t.yaml")
    assert sim.node("node-zone-a-1", "t.yaml").metadata.labels["topospread.io/node-group"] == (
        "node-zone-a"
    )
    assert settle_with_autoscaler(sim, 10 * 60 * SECOND, "t.yaml") == 70 * SECOND
    assert Simulation(scenario).autoscaler is None


def test_karpenter_drains_a_replaced_node_only_once_its_replacement_has_started() -> None:
    pool = {
        "name": "default",
        "requirements": [
            {"key": ZONE, "operator": "In", "values": ["zone-a"]},
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
        ],
    }
    doc = {
        "autoscaler": {"karpenter": {"nodePools": [pool]}},
        "objects": [web(6, cpu="1")],
        "timeline": [
            {"wait": "2m"},
            {"scale": {"workload": "deployment/web", "replicas": 1}},
            {"wait": "3m"},
        ],
    }
    del doc["objects"][0]["spec"]["template"]["spec"]["topologySpreadConstraints"]
    report = run(doc)
    (launched,) = report.steps[1].autoscaler
    assert "c5.2xlarge on-demand in zone-a" in launched.reason
    replacement, removed = report.steps[3].autoscaler
    # Computed at the poll at 130s, launched once validated 15s later (upstream:
    # commandValidationDelay, disruption/consolidation.go).
    assert (replacement.action, replacement.node, replacement.time) == (
        "add",
        "default-00002",
        145 * SECOND,
    )
    # Drained when the replacement is Ready (a minute later, at 205s), not when it was
    # launched; the Node goes 10s later (MinDrainTime, then the instance's termination).
    assert (removed.action, removed.node, removed.time) == ("remove", "default-00001", 215 * SECOND)
    assert "single-node consolidation: replace default-00001 (Underutilized)" in removed.reason
    assert report.steps[3].pending == {} and report.steps[3].node_groups == {"default": 1}


def test_a_multi_zone_group_launches_in_its_emptiest_zone_and_around_a_stockout() -> None:
    ca = {
        "clusterAutoscaler": {
            "nodeGroups": [{"nodeGroup": "node", "maxSize": 6, "multiZone": True}]
        }
    }
    doc = scale_from_zero(ca, [{"stockout": {"zone": "zone-c", "duration": "1h"}}, {"wait": "2m"}])
    doc["objects"] = [web(6, when="ScheduleAnyway", cpu="3")]
    report = run(doc)
    assert report.steps[0].node_groups == {"node": 2}
    # One group over three zones: the instances go to the emptiest zone the cloud can serve
    # (zone-c is stocked out), as an ASG balances its zones.
    assert sorted(adds(report)) == [
        ("node", "zone-a"),
        ("node", "zone-a"),
        ("node", "zone-b"),
        ("node", "zone-b"),
    ]
    assert report.steps[-1].pending == {}


def test_a_group_declared_in_place_gets_the_template_defaults_and_its_zone() -> None:
    group = {
        "name": "big",
        "minSize": 0,
        "maxSize": 2,
        "zones": ["zone-c"],
        "template": {
            "metadata": {"labels": {"size": "big"}},
            "status": {"capacity": {"cpu": "8", "memory": "32Gi"}},
        },
    }
    doc = scale_from_zero({"clusterAutoscaler": {"nodeGroups": [group]}})
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    assert settle_with_autoscaler(sim, 5 * 60 * SECOND, "t.yaml") == 70 * SECOND
    labels = sim.node("big-1", "t.yaml").metadata.labels
    assert labels[ZONE] == "zone-c" and labels["size"] == "big"
    assert labels["topospread.io/node-group"] == "big"
    assert labels["node.kubernetes.io/instance-type"] == "8cpu-32Gi"


def test_a_karpenter_catalogue_file_is_read_beside_the_scenario(tmp_path: Path) -> None:
    import yaml

    catalogue = [
        {
            "name": "tiny",
            "cpu": "1",
            "memory": "2Gi",
            "pods": 8,
            "offerings": [
                {"zone": z, "capacityType": "on-demand", "price": 0.01}
                for z in ("zone-a", "zone-b", "zone-c")
            ],
        }
    ]
    (tmp_path / "types.yaml").write_text(yaml.safe_dump(catalogue))
    section = copy.deepcopy(KARPENTER)
    section["karpenter"]["catalogue"] = "types.yaml"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(scale_from_zero(section)))
    from topospread.simulator.timeline_format import load_timeline

    report = simulate(load_timeline(path))
    (added,) = [c for s in report.steps for c in s.autoscaler if c.action == "add"]
    assert "(tiny on-demand in zone-c, $0.0100/h)" in added.reason
