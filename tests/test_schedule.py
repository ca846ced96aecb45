"""Whole scheduling runs: the docs examples, FailedScheduling texts, node order, sampling."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import yaml

from topospread.analysis.explain import explain
from topospread.api.types import Node, Pod, Taint
from topospread.cli import main
from topospread.cluster.state import ClusterState, get_zone_key
from topospread.framework.config import default_config
from topospread.framework.schedule_one import num_feasible_nodes_to_find
from topospread.simulator.run import schedule
from topospread.simulator.scenario import Scenario, load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def node(name: str, zone: str | None = None, **labels: str) -> Node:
    all_labels = {"kubernetes.io/hostname": name, **labels}
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    return msgspec.convert(
        {
            "metadata": {"name": name, "labels": all_labels},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        Node,
    )


def pod(name: str, node_name: str = "", **spec: object) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "x"}], **spec},
        },
        Pod,
    )


def scenario(nodes: list[Node], queue: list[Pod], bound: list[Pod] | None = None) -> Scenario:
    return Scenario(nodes=nodes, pods=bound or [], queue=queue, objects=[], config=default_config())


def test_docs_one_constraint_places_the_pod_in_zone_b() -> None:
    run = schedule(load_scenario(SCENARIOS / "docs-one-constraint.yaml"))
    (outcome,) = run.outcomes
    assert outcome.node in {"node3", "node4"}
    assert outcome.decision is not None
    assert outcome.decision.feasible == ["node3", "node4"]


def test_docs_two_constraints_leave_only_node4() -> None:
    run = schedule(load_scenario(SCENARIOS / "docs-two-constraints.yaml"))
    assert [o.node for o in run.outcomes] == ["node4"]


def test_docs_conflicting_constraints_keep_the_pod_pending_with_upstreams_text() -> None:
    run = schedule(load_scenario(SCENARIOS / "docs-conflicting-constraints.yaml"))
    (outcome,) = run.outcomes
    assert outcome.node is None
    assert outcome.message == (
        "0/3 nodes are available: 3 node(s) didn't match pod topology spread constraints. "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )


def test_failed_scheduling_reasons_are_counted_and_sorted_like_upstream() -> None:
    nodes = [node("a", "z1"), node("b", "z2"), node("c")]
    nodes[0] = msgspec.structs.replace(
        nodes[0],
        spec=msgspec.structs.replace(nodes[0].spec, taints=[Taint(key="k", effect="NoSchedule")]),
    )
    constraint = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    big = pod(
        "p",
        topologySpreadConstraints=[constraint],
        containers=[{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
    )
    busy = pod("busy", "b", containers=[{"name": "c", "resources": {"requests": {"cpu": "2"}}}])
    run = schedule(scenario(nodes, [big], [busy]))
    assert run.outcomes[0].message == (
        "0/3 nodes are available: 1 Insufficient cpu, "
        "1 node(s) didn't match pod topology spread constraints (missing required label), "
        "1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, "
        "2 Preemption is not helpful for scheduling."
    )


def test_zones_are_interleaved_in_the_schedulers_node_order() -> None:
    cluster = ClusterState(
        [node("a1", "a"), node("a2", "a"), node("a3", "a"), node("b1", "b"), node("c1", "c")]
    )
    assert [i.name for i in cluster.list()] == ["a1", "b1", "c1", "a2", "a3"]
    assert get_zone_key(node("x", "z")) == ":\x00:z"


@pytest.mark.parametrize(
    ("nodes", "percentage", "want"),
    [
        pytest.param(50, 0, 50, id="fewer than 100 nodes are all searched"),
        pytest.param(1000, 0, 420, id="adaptive: 50 - 1000/125 = 42 percent"),
        pytest.param(5000, 0, 500, id="adaptive: 10 percent of 5000"),
        pytest.param(6000, 0, 300, id="adaptive floor of 5 percent"),
        pytest.param(1000, 5, 100, id="at least 100 nodes"),
        pytest.param(1000, 100, 1000, id="100 percent searches everything"),
    ],
)
def test_number_of_feasible_nodes_to_find(nodes: int, percentage: int, want: int) -> None:
    assert num_feasible_nodes_to_find(percentage, nodes) == want


def _spread_run(seed: int, tie_break: str = "random") -> list[str | None]:
    nodes = [node(f"n{i}", f"z{i % 3}") for i in range(9)]
    constraint = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    queue = [pod(f"p{i}", topologySpreadConstraints=[constraint]) for i in range(12)]
    run = schedule(scenario(nodes, queue), seed=seed, tie_break=tie_break)  # type: ignore[arg-type]
    return [o.node for o in run.outcomes]


def test_the_same_seed_gives_the_same_placement() -> None:
    assert _spread_run(7) == _spread_run(7)
    assert _spread_run(7, "name") == _spread_run(99, "name")


def test_hard_zone_spreading_keeps_zones_within_max_skew_after_every_pod() -> None:
    placed = _spread_run(3)
    assert None not in placed
    zones = [int(name[1:]) % 3 for name in placed if name is not None]
    for k in range(1, len(zones) + 1):
        counts = [zones[:k].count(z) for z in range(3)]
        assert max(counts) - min(counts) <= 1


def test_a_gated_pod_waits_with_upstreams_condition_message() -> None:
    gated = pod("g", schedulingGates=[{"name": "example.com/wait"}])
    run = schedule(scenario([node("a", "z")], [gated]))
    assert run.outcomes[0].node is None
    assert run.outcomes[0].message == "Scheduling is blocked due to non-empty scheduling gates"


def run_cli(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0


def test_schedule_jsonl_has_a_plugins_header_then_one_line_per_queued_pod(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run_cli(["schedule", str(SCENARIOS / "docs-two-constraints.yaml"), "-o", "jsonl"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert list(lines[0]) == ["plugins"]
    assert lines[0]["plugins"]["score"][:2] == ["TaintToleration=3", "NodeAffinity=2"]
    assert lines[1]["pod"] == "default/mypod"
    assert lines[1]["node"] == "node4"
    assert list(lines[1]) == ["pod", "node", "message", "attempts"]
    (attempt,) = lines[1]["attempts"]
    assert list(attempt) == [
        "attempt", "node", "nominatedNode", "message", "preempted",
        "feasible", "scores", "pluginScores", "reasons",
    ]  # fmt: skip
    assert attempt["reasons"]["node1"] == [
        "PodTopologySpread: node(s) didn't match pod topology spread constraints"
    ]


def test_schedule_yaml_output_feeds_back_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_cli(["schedule", str(SCENARIOS / "docs-two-constraints.yaml"), "-o", "yaml"])
    out = tmp_path / "cluster.yaml"
    out.write_text(capsys.readouterr().out)
    run_cli(["schedule", "--nodes", str(out), "-o", "jsonl"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1  # nothing left to schedule: mypod came back bound


def test_explain_shows_domains_skews_and_verified_fixes() -> None:
    result = explain(load_scenario(SCENARIOS / "docs-conflicting-constraints.yaml"), "mypod")
    assert result.node is None
    zone, host = result.constraints
    assert zone.counts == {"zoneA": 3, "zoneB": 2}
    assert zone.global_min == 2
    assert host.skew_by_node == {"node1": 2, "node2": 1, "node3": 2}
    changes = {s.change: s.lands_on for s in result.suggestions}
    assert changes["raise topologySpreadConstraints[0].maxSkew (zone) from 1 to 2"] == "node2"
    assert changes["raise topologySpreadConstraints[1].maxSkew (node) from 1 to 2"] == "node3"


def test_explain_text_says_why_the_global_minimum_is_0_below_min_domains() -> None:
    from topospread.render.explain import explanation_text

    def spread(min_domains: int, when: str = "DoNotSchedule") -> Pod:
        constraint = {
            "maxSkew": 1,
            "minDomains": min_domains,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
        return pod("p", topologySpreadConstraints=[constraint])

    nodes = [node("a", "z1"), node("b", "z2")]
    bound = [pod("w1", "a"), pod("w2", "b")]
    text = explanation_text(explain(scenario(nodes, [spread(3)], bound), "p"))
    assert "  global minimum: 0 (2 eligible domains, fewer than minDomains 3)\n" in text
    text = explanation_text(explain(scenario(nodes, [spread(2)], bound), "p"))
    assert "  global minimum: 1\n" in text


@pytest.mark.parametrize("form", ["json", "jsonl"])
def test_explain_prints_the_same_document_as_indented_json_or_one_line(
    form: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = SCENARIOS / "docs-conflicting-constraints.yaml"
    run_cli(["explain", str(path), "--pod", "mypod", "-o", form])
    out = capsys.readouterr().out
    assert json.loads(out) == explain(load_scenario(path), "mypod").to_json()
    lines = len(out.splitlines())
    assert lines == 1 if form == "jsonl" else lines > 1


def test_sampling_stops_at_enough_feasible_nodes_and_the_next_search_starts_after_them() -> None:
    nodes = [node(f"n{i:03d}") for i in range(200)]
    queue = [pod("first"), pod("second")]
    run = schedule(scenario(nodes, queue), tie_break="name", percentage_of_nodes_to_score=50)
    first, second = (o.decision for o in run.outcomes)
    assert first is not None and second is not None
    assert first.feasible == [f"n{i:03d}" for i in range(100)]
    assert second.feasible == [f"n{i:03d}" for i in range(100, 200)]
    assert (first.node, second.node) == ("n000", "n100")


def test_a_higher_priority_pod_preempts_and_the_report_names_the_victim() -> None:
    small = node("only", "z")
    low = pod("low", "only", containers=[{"name": "c", "resources": {"requests": {"cpu": "3"}}}])
    low = msgspec.structs.replace(low, spec=msgspec.structs.replace(low.spec, priority=0))
    high = pod(
        "high",
        priority=1000,
        containers=[{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
    )
    run = schedule(scenario([small], [high], [low]))
    assert [o.node for o in run.outcomes] == ["only"]
    assert run.preempted_existing == [("default/low", "default/high")]
    decisions = [d for d in run.attempts if d.preempted]
    assert decisions[0].preempted == ["default/low"]
    # A successful preemption adds no PostFilter message to the attempt's FitError.
    assert decisions[0].message == "0/1 nodes are available: 1 Insufficient cpu."


def finished(p: Pod, phase: str) -> Pod:
    return msgspec.structs.replace(p, status=msgspec.structs.replace(p.status, phase=phase))


SPREAD_BY_ZONE = {
    "maxSkew": 1,
    "topologyKey": "topology.kubernetes.io/zone",
    "whenUnsatisfiable": "DoNotSchedule",
    "labelSelector": {"matchLabels": {"app": "web"}},
}


def test_finished_pods_take_no_room_and_count_in_no_spread_domain() -> None:
    # Counted, the two finished pods would make zone a the fuller zone and fill a1's cpu.
    whole_node = [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "4"}}}]
    bound = [
        finished(pod("done", "a1", containers=whole_node), "Succeeded"),
        finished(pod("evicted", "a1", containers=whole_node), "Failed"),
        pod("running", "b1"),
    ]
    new = pod("new", topologySpreadConstraints=[SPREAD_BY_ZONE])
    run = schedule(scenario([node("a1", "a"), node("b1", "b")], [new], bound))
    assert [(o.key, o.node) for o in run.outcomes] == [("default/new", "a1")]
    assert [p.metadata.name for info in run.cluster.list() for p in info.pods] == [
        "new",
        "running",
    ]


def test_an_unbound_finished_pod_is_not_scheduled_and_says_why() -> None:
    run = schedule(scenario([node("a1", "a")], [finished(pod("job-x"), "Failed")]))
    (outcome,) = run.outcomes
    assert (outcome.node, outcome.message) == (
        None,
        "the pod is Failed: kube-scheduler does not watch pods in a terminal phase",
    )


def test_reports_keep_finished_pods_though_the_scheduler_ignores_them() -> None:
    from topospread.render.report import cluster_yaml, human

    bound = [finished(pod("done", "a1"), "Succeeded"), pod("running", "a1")]
    run = schedule(scenario([node("a1", "a")], [pod("new")], bound))
    assert "1 bound pod(s) Succeeded or Failed: not drawn, and ignored by kube-scheduler." in (
        human(run)
    )
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(cluster_yaml(run))]
    assert sorted(names) == ["a1", "done", "new", "running"]
