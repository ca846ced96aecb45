"""Text, HTML and JSON of one run (schedule, explain, verify, design, simulate) say the same
thing: what one report shows, the others neither contradict nor leave out (a list cut short
says so, and by how many). Sweep and rebalance: test_report_agreement_sweep.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from test_cli import run
from test_html_json import EXAMPLES, SIMULATIONS, both, grid, parse
from topospread.render.html import verify_html
from topospread.render.schemas import load_schema

VERIFY = EXAMPLES / "verify"


def _node(name: str, zone: str, cpu: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": "110"}},
    }


def _pod(name: str, cpu: str, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "x"}},
        "spec": spec,
    }


def _page_text(root: Any) -> str:
    return re.sub(r"\s+", " ", root.all_text())


def test_the_verify_report_draws_the_pods_the_scenario_starts_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # "old" is bound before the search starts; p1 takes the other node, p2 fits nowhere.
    scenario = tmp_path / "v.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "nodes": [_node("n1", "a", "4"), _node("n2", "b", "4")],
                "pods": [_pod("old", "3", "n1")],
                "queue": [_pod("p1", "3"), _pod("p2", "3")],
            }
        )
    )
    root, doc = both(["verify", str(scenario)], capsys)
    counter = doc["counterexample"]
    assert counter["steps"] and "default/old" in counter["bound"]
    for i in range(1, len(counter["steps"]) + 1):
        pods, _ = grid(root.find("id", f"binding-{i}")[0])
        assert pods["default/old"] == "n1"
    last = root.find("id", f"binding-{len(counter['steps'])}")[0]
    assert grid(last)[0] == counter["bound"]


def test_the_verify_report_of_a_deadlock_before_any_binding_shows_the_pending_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "v.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "nodes": [_node("n1", "a", "1")],
                "pods": [_pod("old", "500m", "n1")],
                "queue": [_pod("big", "2")],
            }
        )
    )
    root, doc = both(["verify", str(scenario)], capsys)
    counter = doc["counterexample"]
    assert counter["steps"] == []
    assert root.values("data-pending") == [p["pod"] for p in counter["pending"]]
    (start,) = root.find("id", "start")
    pods, zones = grid(start)
    assert pods == counter["bound"] == {"default/old": "n1"}
    assert zones == {n["name"]: n["zone"] for n in counter["nodes"]}
    assert counter["pending"][0]["message"] in _page_text(root)


def test_the_verify_report_says_what_the_text_says_of_a_bounded_search(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Found by sampling past the state budget: maybe not the shortest, as the text says.
    argv = ["verify", str(VERIFY / "redis-3shards-3zones-maxskew1.yaml"), "--max-states", "2"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    assert doc["samples"] and doc["counterexample"] is not None
    assert f"found by random sampling, order {doc['samples']} with seed {doc['seed']}" in text
    (sampled,) = root.find("id", "sampled")
    assert f"order {doc['samples']} with seed {doc['seed']}" in sampled.all_text()
    assert "maybe not the shortest" in sampled.all_text()
    # Nothing found past the budget: the badge names it once.
    argv = ["verify", str(VERIFY / "redis-3shards-3zones-maxskew2.yaml"), "--max-states", "2"]
    root, doc = both(argv, capsys)
    assert doc["verdict"] == "bounded"
    (verdict,) = root.find("id", "verdict")
    assert verdict.all_text().lower().count("not a proof") == 1
    assert doc["note"].removeprefix("not a proof: ") in verdict.all_text()


def test_the_verify_report_of_an_interrupted_or_invariant_free_run_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(
        ["verify", str(VERIFY / "redis-3shards-3zones-maxskew1.yaml"), "-o", "json"], capsys
    )
    doc = json.loads(out)
    assert not parse(verify_html(doc)).find("id", "interrupted")
    (shown,) = parse(verify_html({**doc, "interrupted": True})).find("id", "interrupted")
    assert "interrupted" in shown.all_text()
    proved = {**doc, "verdict": "proved", "ok": True, "proved": True, "orders": 12}
    proved |= {"counterexample": None, "invariants": []}
    (verdict,) = parse(verify_html(proved)).find("id", "verdict")
    assert "invariant" not in verdict.all_text()
    (verdict,) = parse(verify_html({**proved, "invariants": ["x"]})).find("id", "verdict")
    assert "keeps every invariant" in verdict.all_text()


def test_the_verify_report_counts_one_pod_and_one_node_in_the_singular(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(
        ["verify", str(VERIFY / "redis-3shards-3zones-maxskew1.yaml"), "-o", "json"], capsys
    )
    doc = json.loads(out)
    assert "</span> pods on <span" in verify_html(doc)
    one = verify_html({**doc, "podCount": 1, "nodeCount": 1})
    assert '>1</span> pod on <span data-count="nodes">1</span> node;' in one


def _text_summary(text: str) -> dict[str, list[str]]:
    """The text's closing lines: which steps left pods Pending, constraints violated, ..."""
    heads = {
        "pending": "Pods Pending after: ",
        "violated": "Constraints violated after: ",
        "preferences": "ScheduleAnyway preferences not met after: ",
        "blocked": "Drains left pods on their nodes: ",
        "unsettled": "Did not settle within the round limit: ",
    }
    out: dict[str, list[str]] = {key: [] for key in heads}
    tail = text.rstrip().rsplit("\n\n", 1)[1]
    for sentence in re.split(r"(?<=\.)\s+", tail):
        for key, head in heads.items():
            if head in sentence:
                listed = sentence.split(head, 1)[1].rstrip(".")
                out[key] = [] if listed == "none" else listed.split(", ")
    return out


def _html_summary(root: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key in ("pending", "violated", "blocked", "unsettled"):
        found = root.find("id", f"summary-{key}")
        out[key] = found[0].all_text().split(": ", 1)[1].split(", ") if found else []
    prefs = [e for e in root.find("class", "badge warn") if "preferences not met" in e.all_text()]
    out["preferences"] = prefs[0].all_text().split(": ", 1)[1].split(", ") if prefs else []
    return out


def _drain_timeline(path: Path) -> Path:
    """Two nodes, a budget that allows no eviction, and a drain it blocks."""
    path.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [{"name": "node", "zones": ["zone-a", "zone-b"], "perZone": 1}],
                "objects": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "metadata": {"name": "web"},
                        "spec": {
                            "replicas": 2,
                            "selector": {"matchLabels": {"app": "web"}},
                            "template": {
                                "metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                            },
                        },
                    },
                    {
                        "apiVersion": "policy/v1",
                        "kind": "PodDisruptionBudget",
                        "metadata": {"name": "web"},
                        "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "web"}}},
                    },
                ],
                "timeline": [{"name": "drain a", "drain": "node-zone-a-1"}, {"wait": "90s"}],
            }
        )
    )
    return path


@pytest.mark.parametrize(
    "timeline", [*SIMULATIONS, None], ids=[p.stem for p in SIMULATIONS] + ["blocked-drain"]
)
def test_the_simulate_report_sums_up_the_steps_the_text_sums_up(
    timeline: Path | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = timeline or _drain_timeline(tmp_path / "drain.yaml")
    root, doc = both(["simulate", str(path)], capsys)
    _, text, _ = run(["simulate", str(path)], capsys)
    want = _text_summary(text)
    assert _html_summary(root) == want
    happy = "Every pod placed and every constraint held" in _page_text(root)
    assert happy == (not any(want.values()))
    # The initial state counts as any step, in every report.
    if doc["steps"][0]["pending"]:
        assert want["pending"][0] == "initial state"
    # Each step's time as the text prints it.
    headers = re.findall(r"^== (.*) ==$", text, re.M)
    titles = [a.all_text() for a in root.find("href") if a.attrs["href"].startswith("#step-")]
    titles = titles[: len(doc["steps"])]
    for header, title in zip(headers, titles, strict=True):
        if " at " in header:
            assert title == header


def test_the_simulate_report_of_a_blocked_drain_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, doc = both(["simulate", str(_drain_timeline(tmp_path / "drain.yaml"))], capsys)
    assert any(not d["complete"] for d in doc["steps"][1]["drains"])
    (line,) = root.find("id", "summary-blocked")
    assert line.all_text().endswith(": step 1")
    assert "Every pod placed" not in _page_text(root)


def test_the_explain_report_says_when_no_single_change_helps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        yaml.safe_dump({"nodes": [_node("n1", "a", "1")], "queue": [_pod("big", "2")]})
    )
    argv = ["explain", str(scenario), "--pod", "big"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    assert doc["node"] is None and doc["suggestions"] == []
    assert text.rstrip().endswith("none found")
    assert root.find("id", "no-suggestion")
    # A pod that has suggestions lists them, and only them.
    root, doc = both(
        [
            "explain",
            str(EXAMPLES / "scenarios" / "docs-conflicting-constraints.yaml"),
            "--pod",
            "mypod",
        ],
        capsys,
    )
    assert doc["suggestions"] and not root.find("id", "no-suggestion")


@pytest.mark.parametrize("relaxed", [False, True], ids=["counterexample", "proved"])
def test_design_verify_json_carries_the_verdict_its_exit_code_reports(
    relaxed: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "redis.yaml"
    argv = ["design", "redis-cluster", "--shards", "3", "--zones", "a,b,c", "--verify"]
    argv += ["--scenario", str(path), *(["--relaxed"] if relaxed else [])]
    code, out, err = run([*argv, "-o", "json"], capsys)
    doc = json.loads(out)
    jsonschema.validate(doc, load_schema("design"))
    jsonschema.validate(doc["verify"], load_schema("verify"))
    assert code == (0 if doc["verify"]["ok"] else 1) == (0 if relaxed else 1)
    assert doc["verify"]["scenario"] == str(path) and path.exists()
    # The text report (on stderr after JSON) says the same verdict.
    verdict = "PROVED" if doc["verify"]["proved"] else "COUNTEREXAMPLE"
    assert f"\n{verdict}: " in err
    if doc["verify"]["counterexample"]:
        assert doc["verify"]["counterexample"]["message"] in err
    # Without --verify the document is as before.
    _, out, _ = run([a for a in argv if a != "--verify"] + ["-o", "json"], capsys)
    assert "verify" not in json.loads(out)


def test_design_spread_verify_json_carries_the_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["design", "spread", "--selector", "app=web", "--topology-key", "zone"]
    argv += ["--replicas", "4", "--domains", "2", "--max-fraction", "3/4", "--verify", "-o", "json"]
    code, out, err = run(argv, capsys)
    doc = json.loads(out)
    jsonschema.validate(doc, load_schema("design"))
    assert code == 0 and doc["verify"]["verdict"] == "proved"
    assert f"{doc['verify']['orders']} complete scheduling orders covered" in err


def _simulate_steps(
    name: str, capsys: pytest.CaptureFixture[str]
) -> Iterator[tuple[dict[str, Any], str, Any]]:
    """Each step of ``simulate`` on an example: its JSON, its block of the text (after its
    ``== `` heading) and its section of the page."""
    path = EXAMPLES / "simulations" / f"{name}.yaml"
    root, doc = both(["simulate", str(path)], capsys)
    _, text, _ = run(["simulate", str(path)], capsys)
    blocks = re.split(r"^== ", text, flags=re.M)[1:]
    for step, block in zip(doc["steps"], blocks, strict=True):
        (section,) = root.find("id", f"step-{step['index']}")
        yield step, block, section


@pytest.mark.parametrize("name", ["autoscaler-min-domains", "zone-outage", "rolling-update"])
def test_the_simulate_spread_tables_show_the_texts_workload_counts_and_min_domains(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for step, block, section in _simulate_steps(name, capsys):
        page = _page_text(section)
        shown = section.values("data-workload-pods")
        assert sorted(set(shown)) == sorted(
            w["workload"] for w in step["workloads"] if w["constraints"]
        )
        for e in section.find("data-workload-pods"):
            line = f"  {e.attrs['data-workload-pods']}: {e.all_text()}"
            assert line in block.splitlines()
        for w in step["workloads"]:
            for c in w["constraints"]:
                named = c["minDomains"] != 1
                assert (f"minDomains {c['minDomains']}" in page) == named
                assert (f"minDomains {c['minDomains']}" in block) == named
        if not any(w["constraints"] for w in step["workloads"]):
            assert not section.find("class", "spread")


def test_the_explain_report_says_when_a_constraint_does_not_match_its_pod(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "other"}},
    }
    pod = _pod("p", "100m")
    pod["spec"]["topologySpreadConstraints"] = [spread]
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        yaml.safe_dump({"nodes": [_node("n1", "a", "2"), _node("n2", "b", "2")], "queue": [pod]})
    )
    argv = ["explain", str(scenario), "--pod", "p"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    assert doc["constraints"][0]["selfMatch"] is False
    assert "(does not match the pod itself)" in text
    assert root.values("data-self-match") == ["false"]


def test_a_spread_chart_says_when_it_draws_the_skew_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A hostname spread over 9 nodes: too many domains for a line each.
    doc = yaml.safe_load((EXAMPLES / "simulations" / "zone-outage.yaml").read_text())
    doc["nodeGroups"][0]["perZone"] = 3
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc))
    root, out = both(["simulate", str(path)], capsys)
    hostname = [
        c
        for w in out["steps"][0]["workloads"]
        for c in w["constraints"]
        if c["topologyKey"] == "kubernetes.io/hostname"
    ]
    assert len(hostname[0]["counts"]) == 9
    assert root.values("data-undrawn") == ["9"]


def test_explain_of_an_unknown_pod_says_how_many_queued_pods_it_does_not_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "s.yaml"
    queue = [_pod(f"p{i:02}", "10m") for i in range(12)]
    scenario.write_text(yaml.safe_dump({"nodes": [_node("n1", "a", "2")], "queue": queue}))
    code, _, err = run(["explain", str(scenario), "--pod", "nope"], capsys)
    assert code == 2
    assert "(queued: default/p00, " in err and "default/p09 and 2 more)" in err
    assert "default/p10" not in err


def _grid_zones(text: str) -> list[str]:
    """The zones a text grid draws, left to right (its first row)."""
    first = next(line for line in text.splitlines() if line.startswith("|"))
    return [cell.strip() for cell in first.strip("|").split("|")]


def _page_zones(section: Any) -> list[str]:
    return [e.attrs["data-zone"] or "(no zone)" for e in section.find("data-zone")]


def test_the_pages_group_nodes_into_zones_as_the_text_grids_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nodes listed zone-b first, one without a zone, zone-a last: the grid sorts them.
    labelled = [_node("b1", "zone-b", "4"), _node("x1", "", "4"), _node("a1", "zone-a", "4")]
    del labelled[1]["metadata"]["labels"]["topology.kubernetes.io/zone"]
    web = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump({"nodes": labelled, "objects": [web], "timeline": []}))
    root, doc = both(["simulate", str(path)], capsys)
    _, text, _ = run(["simulate", str(path)], capsys)
    assert _grid_zones(text) == ["zone-a", "zone-b", "(no zone)"]
    assert _page_zones(root.find("id", "step-0")[0]) == _grid_zones(text)
    # --zone-key groups the text's grid, the JSON's zones and the page alike.
    argv = ["simulate", str(path), "--zone-key", "kubernetes.io/hostname"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    assert [n["zone"] for n in doc["steps"][0]["nodes"]] == [
        n["name"] for n in doc["steps"][0]["nodes"]
    ]
    assert _page_zones(root.find("id", "step-0")[0]) == _grid_zones(text) == ["a1", "b1", "x1"]


def test_a_verify_counterexample_on_zone_labelled_nodes_is_grouped_as_the_text_groups_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Nodes with a plain "zone" label (as the docs' examples): the text groups by it.
    nodes = [_node("n1", "a", "4"), _node("n2", "b", "4")]
    for n in nodes:
        n["metadata"]["labels"]["zone"] = n["metadata"]["labels"].pop("topology.kubernetes.io/zone")
    scenario = tmp_path / "v.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "nodes": nodes,
                "pods": [_pod("old", "3", "n1")],
                "queue": [_pod("p1", "3"), _pod("p2", "3")],
            }
        )
    )
    root, doc = both(["verify", str(scenario)], capsys)
    _, text, _ = run(["verify", str(scenario)], capsys)
    counter = doc["counterexample"]
    assert {n["name"]: n["zone"] for n in counter["nodes"]} == {"n1": "a", "n2": "b"}
    grid_text = text.split("Cluster at the failing step:", 1)[1]
    last = root.find("id", f"binding-{len(counter['steps'])}")[0]
    assert _page_zones(last) == _grid_zones(grid_text) == ["a", "b"]


@pytest.mark.parametrize("name", ["zone-outage", "rolling-update", "autoscaler-stockout-deadlock"])
def test_the_simulate_page_says_what_the_controllers_and_scheduler_did_as_the_text_does(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for step, block, section in _simulate_steps(name, capsys):
        want = [line.strip() for line in block.splitlines() if line.startswith("  controllers: ")]
        assert [_page_text(e).strip() for e in section.find("data-churn")] == want
        if step["created"]:
            assert f"created {len(step['created'])}" in want[0]


def test_the_schedule_reports_each_keep_the_bound_pods_that_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Succeeded pod on n1 is read but not in the scheduler's cluster: the text said so (a
    # count), the JSON and the page left it out, so the pod was in no machine-read report.
    done = _pod("done", "1", "n1")
    done["status"] = {"phase": "Succeeded"}
    scenario = tmp_path / "s.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {"nodes": [_node("n1", "a", "4")], "pods": [done], "queue": [_pod("new", "1")]}
        )
    )
    root, doc = both(["schedule", str(scenario)], capsys)
    assert doc["finished"] == {"default/done": "n1"}
    assert doc["bound"] == {"default/new": "n1"}
    assert root.values("data-finished") == ["default/done"]
    assert root.counts()["finished"] == [1]
    assert "default/done" not in grid(root)[0]
    code, text, _ = run(["schedule", str(scenario)], capsys)
    assert code == 0
    assert "1 bound pod(s) Succeeded or Failed: not drawn, and ignored by kube-scheduler." in text
    jsonschema.validate(doc, load_schema("schedule"))
    # Without finished pods the key is absent, as before.
    scenario.write_text(yaml.safe_dump({"nodes": [_node("n1", "a", "4")], "queue": []}))
    assert "finished" not in both(["schedule", str(scenario)], capsys)[1]
