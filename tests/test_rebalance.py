"""``rebalance``: plans proven by replaying them, the fewest evictions, the evictor's filters,
why no plan exists, the Eviction manifests, and the timeline step."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
import yaml

from builders import PodBuilder, make_pod
from test_cli import readme_output
from test_cli import run as cli
from test_timeline import deployment, zones
from topospread.analysis.descheduler_replay import descheduler_rounds
from topospread.analysis.rebalance import (
    RebalanceOptions,
    descheduler_options,
    exclusion_reason,
    find_targets,
    plan_rebalance,
)
from topospread.analysis.rebalance_replay import Target, replay_plan
from topospread.analysis.reports import StepReport, step_report
from topospread.analysis.simulate import settle_timeline, simulate
from topospread.analysis.volume_pins import pinned_value
from topospread.api.types import Pod
from topospread.labels.selector import parse
from topospread.render.rebalance import rebalance_text
from topospread.render.schemas import load_schema
from topospread.simulator import checkpoint
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.timeline_format import parse_timeline

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "simulations"
ZONE = "topology.kubernetes.io/zone"


def scaled_down(replicas: int = 6, to: int = 4, **kwargs: Any) -> dict[str, Any]:
    """Three zones of two nodes; zone-c lost until its pods are evicted and rescheduled in
    zones a and b, then back; then a scale-down leaves zone-c empty (a ReplicaSet's victims
    ignore zones)."""
    return {
        "nodeGroups": zones(2),
        "objects": [deployment(replicas, match_label_keys=True, **kwargs)],
        "timeline": [
            {"loseZone": "c"},
            {"wait": "6m"},
            {"restoreZone": "c"},
            {"scale": {"workload": "deployment/web", "replicas": to}},
        ],
    }


def new_zone(replicas: int = 6) -> dict[str, Any]:
    """Two zones of two nodes take every replica (3/3); then zone c's two nodes join: 3/3/0."""
    return {
        "nodeGroups": zones({"a": 2, "b": 2, "c": 0}),
        "objects": [deployment(replicas, match_label_keys=True)],
        "timeline": [{"addNodes": {"group": "pool", "zone": "c", "count": 2}}],
    }


def settled(doc: dict[str, Any], seed: int = 0) -> Simulation:
    return settle_timeline(parse_timeline(doc, "t.yaml"), seed)


def zone_counts(report: StepReport) -> dict[str, int]:
    (w,) = [w for w in report.workloads if w.constraints]
    (c,) = [c for c in w.constraints if c.view.topology_key == ZONE]
    return c.view.counts


def test_the_zone_outage_example_after_its_scale_down_takes_one_eviction_to_zone_c() -> None:
    sim = settled(yaml.safe_load((EXAMPLES / "zone-outage.yaml").read_text()))
    report = plan_rebalance(sim)
    assert [t.spread.view.topology_key for t in report.targets] == [ZONE]
    assert report.plan is not None and report.minimal
    (e,) = report.plan.evictions
    assert e.domains == {ZONE: "zone-a"} and e.replacement_domains == {ZONE: "zone-c"}
    assert e.note == f"{ZONE} without it: zone-a=1 zone-b=2 zone-c=0; maxSkew 1 allows zone-c"
    assert report.after is not None
    assert zone_counts(report.after) == {"zone-a": 1, "zone-b": 2, "zone-c": 1}
    # The plan ran on copies: the cluster is as it was.
    assert zone_counts(step_report(sim, 0, "", "", [], Settled(0, True))) == {
        "zone-a": 2,
        "zone-b": 2,
        "zone-c": 0,
    }


def test_a_balanced_cluster_needs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_rebalance(settled({"nodeGroups": zones(2), "objects": [deployment(6)]}))
    assert report.balanced and report.plan is None and report.replays == 0


def test_two_evictions_when_one_cannot_do_and_the_count_is_proven_minimal() -> None:
    sim = settled(new_zone(6))
    before = step_report(sim, 0, "", "", [], Settled(0, True))
    assert zone_counts(before) == {"a": 3, "b": 3, "c": 0}
    report = plan_rebalance(sim)
    assert report.plan is not None and report.minimal
    assert len(report.plan.evictions) == 2  # 3/3/0 -> 2/2/2 (one eviction leaves 3-1)
    assert report.ruled_out_up_to == 1
    assert report.after is not None and zone_counts(report.after) == {"a": 2, "b": 2, "c": 2}
    assert all(e.replacement_domains[ZONE] == "c" for e in report.plan.evictions)


def test_pods_the_evictor_leaves_alone_are_reported_and_can_leave_no_plan() -> None:
    doc = scaled_down()
    labels = {"app": "web"}
    doc["objects"].append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "bare", "labels": labels},
            "spec": {"nodeName": "pool-a-1", "containers": [{"name": "c", "image": "x"}]},
        }
    )
    sim = settled(doc)
    report = plan_rebalance(sim, RebalanceOptions(selector=_selector("tier=none")))
    reasons = {e.reason for e in report.exclusions}
    assert "not selected by --selector" in reasons
    assert report.plan is None
    (why,) = report.why_not.values()
    assert "no pod in the crowded domains may be evicted" in why[0]


def _selector(text: str) -> Any:
    return parse(text)


def _annotated(pod: Pod, **annotations: str) -> Pod:
    meta = msgspec.structs.replace(pod.metadata, annotations=annotations)
    return msgspec.structs.replace(pod, metadata=meta)


def _owned(name: str = "p") -> PodBuilder:
    return make_pod(name).label("app", "web").node("n1").owner("ReplicaSet", "web-1")


EXCLUSIONS = [
    ("a ReplicaSet's pod", _owned().obj(), RebalanceOptions(), None),
    ("a DaemonSet pod", make_pod("p").owner("DaemonSet", "ds").obj(),
     RebalanceOptions(), "a DaemonSet pod"),
    ("a mirror pod", _annotated(_owned().obj(), **{"kubernetes.io/config.mirror": "x"}),
     RebalanceOptions(), "a mirror or static pod"),
    ("a static pod", _annotated(_owned().obj(), **{"kubernetes.io/config.source": "file"}),
     RebalanceOptions(), "a mirror or static pod"),
    ("no controller", make_pod("p").node("n1").obj(), RebalanceOptions(),
     "no controller would recreate it"),
    ("system-critical", _owned().priority(2_000_000_000).obj(), RebalanceOptions(),
     "system-critical priority (2000000000)"),
    ("emptyDir", _owned().spec_field("volumes", [{"name": "v", "emptyDir": {}}]).obj(),
     RebalanceOptions(), "local storage (emptyDir or hostPath; --evict-local-storage allows it)"),
    ("hostPath", _owned().spec_field("volumes", [{"name": "v", "hostPath": {"path": "/x"}}]).obj(),
     RebalanceOptions(), "local storage (emptyDir or hostPath; --evict-local-storage allows it)"),
    ("emptyDir allowed", _owned().spec_field("volumes", [{"name": "v", "emptyDir": {}}]).obj(),
     RebalanceOptions(evict_local_storage=True), None),
    ("terminating", _owned().terminating().obj(), RebalanceOptions(),
     "being deleted or finished"),
    ("not selected", _owned().obj(), RebalanceOptions(selector=parse("tier=db")),
     "not selected by --selector"),
    ("selected", _owned().label("tier", "db").obj(), RebalanceOptions(selector=parse("tier=db")),
     None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pod", "options", "reason"), [c[1:] for c in EXCLUSIONS], ids=[c[0] for c in EXCLUSIONS]
)
def test_the_evictor_leaves_alone_what_the_descheduler_leaves_alone(
    pod: Pod, options: RebalanceOptions, reason: str | None
) -> None:
    assert exclusion_reason(pod, options) == reason


def test_a_zone_no_pod_may_run_in_is_named_with_the_scheduler_reason() -> None:
    # zone-c's nodes are tainted after the scale-down; the pods do not tolerate it but the
    # constraint counts zone-c (nodeTaintsPolicy Ignore): skew 2 and no plan.
    doc = scaled_down()
    doc["timeline"].append(
        {"taint": {"zone": "c", "key": "dedicated", "value": "db", "effect": "NoSchedule"}}
    )
    sim = settled(doc)
    report = plan_rebalance(sim, RebalanceOptions(max_evictions=2))
    assert report.targets and report.plan is None
    (why,) = report.why_not.values()
    assert any(
        "=c takes none of its pods: 2 node(s) had untolerated taint(s)" in line
        and "(taints there: dedicated=db:NoSchedule)" in line
        for line in why
    ), why


def test_a_budget_that_allows_no_disruption_blocks_every_plan() -> None:
    doc = scaled_down()
    doc["objects"].append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    report = plan_rebalance(settled(doc), RebalanceOptions(max_evictions=1))
    assert report.plan is None and report.replays >= 1
    (why,) = report.why_not.values()
    assert any("Cannot evict pod as it would violate the pod's disruption budget" in w for w in why)


def test_too_few_domains_for_min_domains_is_said_without_a_replay() -> None:
    # minDomains 4: 2/2/2/2 over four zones holds; zone d's nodes are removed and with
    # three domains the global minimum is 0, so no zone may hold 2 pods (skew 2).
    doc = {
        "nodeGroups": zones(2, names=("a", "b", "c", "d")),
        "objects": [deployment(8, min_domains=4)],
        "timeline": [{"removeNode": ["pool-d-1", "pool-d-2"]}],
    }
    report = plan_rebalance(settled(doc))
    assert report.targets and report.plan is None and report.replays == 0
    (why,) = report.why_not.values()
    assert "only 3 eligible domain(s) for minDomains 4" in why[0]


def test_emit_evictions_writes_policy_v1_evictions_in_plan_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(new_zone(6)))
    code, out, _ = cli(["rebalance", str(path), "--emit", "evictions"], capsys)
    assert code == 0
    docs = list(yaml.safe_load_all(out))
    assert len(docs) == 2
    assert all(d["apiVersion"] == "policy/v1" and d["kind"] == "Eviction" for d in docs)
    _, out, _ = cli(["rebalance", str(path), "-o", "json"], capsys)
    plan = json.loads(out)["plan"]["evictions"]
    assert [f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in docs] == [
        e["pod"] for e in plan
    ]


def test_exit_codes_balanced_plan_no_plan_and_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    balanced = tmp_path / "balanced.yaml"
    balanced.write_text(yaml.safe_dump({"nodeGroups": zones(2), "objects": [deployment(6)]}))
    code, out, _ = cli(["rebalance", str(balanced)], capsys)
    assert code == 0 and "Nothing to rebalance" in out
    skewed = tmp_path / "skewed.yaml"
    doc = scaled_down()
    doc["timeline"].append(
        {"taint": {"zone": "c", "key": "dedicated", "value": "db", "effect": "NoSchedule"}}
    )
    skewed.write_text(yaml.safe_dump(doc))
    code, out, _ = cli(["rebalance", str(skewed), "--max-evictions", "1"], capsys)
    assert code == 1 and "No plan" in out
    for argv, message in [
        ([str(skewed), "--selector", "a b"], "--selector: unable to parse requirement"),
        ([], "give a timeline scenario, --cluster files or a live cluster"),
    ]:
        code, out, err = cli(["rebalance", *argv], capsys)
        assert code == 2 and out == "" and message in err, err
        assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_rebalance_step_makes_the_plan_and_simulate_shows_it() -> None:
    doc = new_zone(6)
    plan = plan_rebalance(settled(doc))
    assert plan.plan is not None and plan.after is not None
    doc["timeline"].append({"name": "rebalance", "rebalance": {}})
    report = simulate(parse_timeline(doc, "t.yaml"))
    last = report.steps[-1]
    assert [e for e in last.events if e.startswith("rebalance: evicted")] and len(
        [e for e in last.events if e.startswith("rebalance: evicted")]
    ) == len(plan.plan.evictions)
    # The step's evictions land the replacements where the plan's replay did.
    assert last.bound == plan.after.bound
    assert not last.violations


def test_the_rebalance_step_checks_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    doc = scaled_down()
    doc["timeline"].append({"rebalance": {"maxEvictions": 0}})
    with pytest.raises(Exception, match=r"maxEvictions: Invalid value: 0"):
        parse_timeline(doc, "t.yaml")
    doc["timeline"][-1] = {"rebalance": {"evict": True}}
    with pytest.raises(Exception, match=r"evict: unknown field"):
        parse_timeline(doc, "t.yaml")


# ------------------------------------------------------------------ against brute force


def random_skewed(seed: int) -> dict[str, Any]:
    """A small cluster left skewed by a lost zone and a scale-down, with random hard or soft
    zone and hostname constraints, sometimes a tainted node."""
    rng = random.Random(seed)
    if rng.random() < 0.5:
        doc = scaled_down(replicas=rng.randint(4, 8), to=rng.randint(2, 5))
    else:
        doc = new_zone(rng.randint(3, 8))
    spec = doc["objects"][0]["spec"]["template"]["spec"]
    zone = spec["topologySpreadConstraints"][0]
    zone["maxSkew"] = rng.choice([1, 1, 2])
    if rng.random() < 0.5:
        spec["topologySpreadConstraints"].append(
            {
                "maxSkew": 1,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": rng.choice(["DoNotSchedule", "ScheduleAnyway"]),
                "labelSelector": {"matchLabels": {"app": "web"}},
                "matchLabelKeys": ["pod-template-hash"],
            }
        )
    if rng.random() < 0.3:
        node = f"pool-{rng.choice('abc')}-{rng.randint(1, 2)}"
        doc["timeline"].append(
            {"taint": {"node": node, "key": "k", "value": "v", "effect": "NoSchedule"}}
        )
    return doc


@pytest.mark.parametrize("seed", range(16))
def test_the_plan_is_never_larger_than_the_smallest_any_replay_finds(seed: int) -> None:
    """Every set of up to two evictable pods replayed (no classes, no pruning): when any
    works, the planner finds a plan, of no more evictions; its replay always ends within
    maxSkew; and where the descheduler's rounds succeed too, they evict no fewer pods."""
    sim = settled(random_skewed(seed), seed)
    options = RebalanceOptions(include_soft=True, max_evictions=2, max_replays=10_000)
    report = plan_rebalance(sim, options)
    if report.balanced:
        return
    snapshot = sim.snapshot()
    before = report.before
    targets: list[Target] = find_targets(before.workloads, options)
    bound = sorted(
        (p for t in targets for p in t.spread.pods if p.spec.node_name),
        key=lambda p: p.key,
    )
    pods = list({p.key: p for p in bound}.values())
    smallest = None
    for k in (1, 2):
        for victims in itertools.permutations(pods, k):
            if replay_plan(snapshot.restore(), list(victims), targets, before).ok:
                smallest = k
                break
        if smallest is not None:
            break
    if smallest is None:
        assert report.plan is None
        return
    assert report.plan is not None, report.why_not
    assert len(report.plan.evictions) <= smallest
    assert report.after is not None
    for w in report.after.workloads:
        for c in w.constraints:
            key = (w.workload, c.view.index, c.view.topology_key, tuple(c.revisions))
            if key in {t.key() for t in targets}:
                assert not c.exceeded
    # Where the descheduler succeeds too (it stops, nothing violated), it needs no fewer.
    d = descheduler_rounds(sim, descheduler_options(options), rounds=6)
    if d.outcome == "fixpoint" and not d.violations:
        assert len(report.plan.evictions) <= d.evicted


def test_readme_shows_exactly_what_rebalance_prints(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (EXAMPLES.parents[1] / "README.md").read_text()
    command = "topospread rebalance examples/simulations/zone-outage.yaml"
    shown = readme_output(command)
    _, out, _ = cli(command.split()[1:], capsys)
    assert shown == out.rstrip("\n")
    emitted = readme.split(f"$ {command} --emit evictions\n", 1)[1].split("```", 1)[0]
    _, out, _ = cli([*command.split()[1:], "--emit", "evictions"], capsys)
    assert emitted == out


def test_replays_in_forked_children_report_what_restored_copies_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A forked replay sends its report back as changes from the report before the plan
    (``diff_report``); rebuilt, it is the report a restored snapshot's replay makes."""
    doc = new_zone(6)
    forked = plan_rebalance(settled(doc))
    monkeypatch.setattr(checkpoint, "FORKS", False)
    restored = plan_rebalance(settled(doc))
    assert forked.to_json() == restored.to_json()
    assert rebalance_text(forked) == rebalance_text(restored)  # the grids: the topology
    assert forked.to_json()["after"]["bound"] != forked.to_json()["before"]["bound"]


def test_the_descheduler_loops_where_the_exact_plan_sees_nothing_to_do() -> None:
    """Pods without a controller count for the scheduler and not for the descheduler: it
    moves a pod toward the zone they fill, and the scheduler puts the replacement back."""
    sim = settled(yaml.safe_load((EXAMPLES / "descheduler-loop.yaml").read_text()))
    exact = plan_rebalance(sim)
    assert exact.balanced
    d = descheduler_rounds(sim, descheduler_options(RebalanceOptions()), rounds=5)
    assert d.outcome == "cycle" and d.cycle_from == 0
    (first,) = d.rounds
    (e,) = first.evictions
    assert e.domains == e.replacement_domains  # back where it came from


def test_a_descheduler_whose_every_eviction_a_budget_refuses_is_said_to_evict_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Refused evictions change nothing: that is no loop, and nothing was evicted."""
    doc = scaled_down()
    doc["objects"].append(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}},
        }
    )
    d = descheduler_rounds(settled(doc), descheduler_options(RebalanceOptions()), rounds=5)
    assert d.outcome == "refused" and d.evicted == 0
    (only,) = d.rounds
    assert only.picked and list(only.refused) == [e.pod for e in only.picked]
    assert d.verdict == (
        f"evicts nothing: every eviction it tried ({len(only.picked)}) was refused by a "
        "PodDisruptionBudget, and each later cycle would try the same"
    )
    path = tmp_path / "pdb.yaml"
    path.write_text(yaml.safe_dump(doc))
    _, out, _ = cli(["rebalance", str(path), "--descheduler"], capsys)
    assert "loops" not in out and "for ever" not in out
    assert f"The descheduler {d.verdict}; 0 eviction(s) in all" in out
    _, out, _ = cli(["rebalance", str(path), "--descheduler", "-o", "json"], capsys)
    jsonschema.validate(json.loads(out), load_schema("rebalance"))


def test_the_descheduler_stops_where_its_count_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    """On the zone-outage example both agree on the domains: the descheduler's round fixes
    the skew and the next round evicts nothing (the exact plan is as small)."""
    code, out, _ = cli(
        ["rebalance", str(EXAMPLES / "zone-outage.yaml"), "--descheduler", "-o", "json"], capsys
    )
    assert code == 0
    report = json.loads(out)
    d = report["descheduler"]
    assert d["outcome"] == "fixpoint" and d["violationsAtTheEnd"] == []
    assert d["evicted"] >= len(report["plan"]["evictions"]) == 1


def test_readme_shows_exactly_what_the_descheduler_side_by_side_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = "topospread rebalance examples/simulations/descheduler-loop.yaml --descheduler"
    shown = readme_output(command)
    code, out, _ = cli(command.split()[1:], capsys)
    assert code == 0 and shown == out.rstrip("\n")


def _zonal_database(replicas: int) -> dict[str, Any]:
    """A StatefulSet whose replicas get zonal volumes (WaitForFirstConsumer) in zones a and b;
    then zone c's nodes join: 2/2/0, maxSkew 1 violated."""
    doc = yaml.safe_load((EXAMPLES / "database-zone-outage.yaml").read_text())
    sts = next(o for o in doc["objects"] if o["kind"] == "StatefulSet")
    sts["spec"]["replicas"] = replicas
    return {
        "nodeGroups": zones({"a": 2, "b": 2, "c": 0}),
        "objects": doc["objects"],
        "timeline": [{"addNodes": {"group": "pool", "zone": "c", "count": 2}}],
    }


def test_pods_pinned_by_their_volumes_are_never_planned_to_move() -> None:
    sim = settled(_zonal_database(4))
    assert zone_counts(step_report(sim, 0, "", "", [], Settled(0, True))) == {
        "a": 2,
        "b": 2,
        "c": 0,
    }
    report = plan_rebalance(sim)
    assert report.plan is None and report.replays == 0
    pinned = {e.pod: e.reason for e in report.exclusions}
    assert sorted(pinned) == [f"default/db-{i}" for i in range(4)]
    storage = sim.cluster.storage()
    claim = storage.persistent_volume_claim("default", "data-db-0")
    assert claim is not None
    zone = sim.cluster.infos[sim.pods["default/db-0"].spec.node_name].node.metadata.labels[ZONE]
    assert pinned["default/db-0"] == (
        f"its volume ({claim.spec.volume_name}) pins it to {ZONE}={zone}: "
        "evicting it cannot move it"
    )


@pytest.mark.parametrize(
    ("zones_allowed", "key", "want"),
    [
        pytest.param(["a"], ZONE, "a", id="a zonal volume pins the pod to its zone"),
        pytest.param(["a", "b"], ZONE, None, id="a regional volume lets it move"),
        pytest.param(["a"], "kubernetes.io/hostname", None, id="within the zone it may move"),
    ],
)
def test_pinned_value_is_the_domain_every_admitted_node_shares(
    zones_allowed: list[str], key: str, want: str | None
) -> None:
    from topospread.api.storage import PersistentVolume, PersistentVolumeClaim
    from topospread.api.types import Node
    from topospread.cluster.storage import StorageState

    def node(name: str, zone: str) -> Node:
        labels = {ZONE: zone, "kubernetes.io/hostname": name}
        return msgspec.convert({"metadata": {"name": name, "labels": labels}}, Node)

    nodes = [node("a1", "a"), node("a2", "a"), node("b1", "b")]
    expr = {"key": ZONE, "operator": "In", "values": zones_allowed}
    pv = msgspec.convert(
        {
            "metadata": {"name": "v"},
            "spec": {
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [expr]}]}}
            },
        },
        PersistentVolume,
    )
    pvc = msgspec.convert(
        {"metadata": {"name": "d", "namespace": "default"}, "spec": {"volumeName": "v"}},
        PersistentVolumeClaim,
    )
    pod = make_pod("p").node("a1").pvc("d").obj()
    assert pinned_value(pod, StorageState([pv, pvc]), nodes, key) == want


def test_the_descheduler_evicts_pods_pinned_by_volumes_and_the_report_calls_it_useless(
    capsys: pytest.CaptureFixture[str],
) -> None:
    sim = settled(_zonal_database(4))
    report = descheduler_rounds(sim, descheduler_options(RebalanceOptions()), rounds=3)
    first = report.rounds[0]
    (pick,) = first.picked
    # Its NodeFit does not read volumes: it evicts, and the replacement (same claim, same
    # zonal volume) cannot follow to zone c nor come back past maxSkew: it stays Pending.
    assert list(first.pinned) == [pick.pod]
    assert first.pinned[pick.pod].endswith("evicting it cannot move it")
    (eviction,) = first.evictions
    assert eviction.replacement == pick.pod and eviction.replacement_node is None
    assert first.to_json()["pinned"] == first.pinned
