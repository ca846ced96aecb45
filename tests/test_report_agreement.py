"""Text, HTML and JSON of one run say the same thing: what one report shows, the others neither
contradict nor leave out (a list cut short says so, and by how many)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from test_cli import run
from test_html_json import EXAMPLES, SIMULATIONS, both, grid, parse
from test_rebalance import _zonal_database
from topospread.render import sweep as sweep_render
from topospread.render.html import rebalance_html, verify_html
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


def test_the_sweep_report_shows_the_base_state_and_every_column_of_the_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["sweep", str(EXAMPLES / "simulations" / "autoscaler-zone-outage-karpenter.yaml")]
    argv += ["--zones", "--nodes", "-j", "1"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    page = _page_text(root)
    base = [line for line in text.splitlines() if line.startswith("Base state")]
    assert base and all(line in page for line in base)
    limit = re.search(r"acting up to (\S+) after each failure", text)
    assert limit is not None and f"acts up to {limit.group(1)} (" in page
    (matrix,) = root.find("id", "matrix")
    assert [int(v) for v in matrix.values("data-blocked")] == [r["blocked"] for r in doc["ranked"]]
    assert [int(v) for v in matrix.values("data-preferences")] == [
        r["preferencesNotMet"] for r in doc["ranked"]
    ]
    assert any(r["preferencesNotMet"] for r in doc["ranked"])


def test_the_sweep_text_says_how_many_rows_and_lines_it_leaves_out(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sweep", str(EXAMPLES / "simulations" / "autoscaler-zone-outage-karpenter.yaml")]
    argv += ["--zones", "--nodes", "-j", "1"]
    doc = json.loads(run([*argv, "-o", "json"], capsys)[1])
    ranked = len(doc["ranked"])
    unmet = {
        (r["failure"]["name"]): len(r["during"]["preferencesNotMet"])
        for r in doc["runs"]
        if r["during"]["preferencesNotMet"]
    }
    assert ranked > 2 and unmet
    monkeypatch.setattr(sweep_render, "MAX_ROWS", 2)
    monkeypatch.setattr(sweep_render, "MAX_LINES", 0)
    _, text, _ = run(argv, capsys)
    matrix = text.split("During each failure", 1)[1].split("\n\n", 1)[0]
    assert f"  ... and {ranked - 2} more failures (see -o json)" in matrix
    details = text.split("What broke:", 1)[1]
    for failure, n in unmet.items():
        if f"  {failure}:" in details:
            block = details.split(f"  {failure}:", 1)[1]
            assert f"... and {n} more preferences not met" in block


def test_the_rebalance_report_lists_the_descheduler_rounds_as_the_text_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The descheduler evicts a replica its zonal volume pins: its replacement stays Pending.
    path = tmp_path / "db.yaml"
    path.write_text(yaml.safe_dump(_zonal_database(4)))
    argv = ["rebalance", str(path), "--descheduler", "--rounds", "2"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    rounds = doc["descheduler"]["rounds"]
    assert root.values("data-picked") == [p["pod"] for r in rounds for p in r["picked"]]
    pinned = [pod for r in rounds for pod in r["pinned"]]
    assert pinned and root.values("data-pinned") == pinned
    page = _page_text(root)
    for r in rounds:
        for p in r["picked"]:
            assert f"{p['pod']} from {p['node']}: {p['reason']}" in page
        for e in r["evictions"]:
            if e["replacement"] is None:
                line = f"{e['pod']}: no replacement"
            elif e["replacementNode"] is None:
                line = f"{e['pod']}: its replacement {e['replacement']} stays Pending"
            else:
                continue
            assert line in text and line in page
    assert "None" not in page
    verdict = next(line for line in text.splitlines() if line.startswith("The descheduler "))
    assert verdict.replace("The descheduler ", "It ", 1) in page


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


def _crowded_zone(path: Path) -> Path:
    """Four replicas in zone-a, then zone-b's nodes join: two evictions are needed."""
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    web = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [{"name": "web", "image": "nginx"}],
                    "topologySpreadConstraints": [spread],
                },
            },
        },
    }
    group = {"name": "node", "zones": ["zone-a", "zone-b"], "perZone": {"zone-a": 2, "zone-b": 0}}
    path.write_text(
        yaml.safe_dump(
            {
                "nodeGroups": [group],
                "objects": [web],
                "timeline": [{"addNodes": {"group": "node", "zone": "zone-b", "count": 2}}],
            }
        )
    )
    return path


def test_the_rebalance_report_says_how_far_the_search_ruled_plans_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["rebalance", str(_crowded_zone(tmp_path / "t.yaml")), "--max-evictions", "1"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    assert doc["plan"] is None and doc["ruledOutUpTo"] == 1
    assert "no plan of up to 1 eviction(s) brings it within maxSkew" in text
    (verdict,) = root.find("id", "verdict")
    assert "of up to 1 eviction(s)" in verdict.all_text()
    # A plan the budget cut short is the best found, not the fewest.
    root, doc = both(argv[:2], capsys)
    assert doc["plan"]["minimal"] and len(doc["plan"]["evictions"]) == 2
    cut = {**doc, "plan": {**doc["plan"], "minimal": False}, "ruledOutUpTo": 1}
    (verdict,) = parse(rebalance_html(cut)).find("id", "verdict")
    assert "plans of 1 eviction(s) or fewer were ruled out" in verdict.all_text()


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


@pytest.mark.parametrize("name", ["autoscaler-min-domains", "zone-outage", "rolling-update"])
def test_the_simulate_spread_tables_show_the_texts_workload_counts_and_min_domains(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = EXAMPLES / "simulations" / f"{name}.yaml"
    root, doc = both(["simulate", str(path)], capsys)
    _, text, _ = run(["simulate", str(path)], capsys)
    blocks = re.split(r"^== ", text, flags=re.M)[1:]
    for step, block in zip(doc["steps"], blocks, strict=True):
        (section,) = root.find("id", f"step-{step['index']}")
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


@pytest.mark.parametrize("require", ["no-pending,recovers", "no-blocked-drain"])
def test_a_sweeps_json_and_page_carry_the_require_verdict_of_its_exit_code(
    require: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sweep", str(EXAMPLES / "simulations" / "zone-outage.yaml"), "--zones", "-j", "1"]
    argv += ["--require", require]
    root, doc = both(argv, capsys)
    code, text, _ = run(argv, capsys)
    jsonschema.validate(doc, load_schema("sweep"))
    verdict = doc["require"]
    assert verdict["requirements"] == require.split(",")
    assert code == (0 if verdict["passed"] else 1)
    runs = {(r["failure"]["name"], r["seed"]): r for r in doc["runs"]}
    for f in verdict["failing"]:
        during = runs[(f["failure"], f["seed"])]["during"]
        assert ("no-pending" in f["breaks"]) == bool(during["pending"])
    (badge,) = root.find("id", "require")
    last = text.rstrip().splitlines()[-1]
    if verdict["passed"]:
        assert last == _page_text(badge) == f"PASS: every run meets --require {require}."
    else:
        n = len(verdict["failing"])
        assert last == f"FAIL: {n} of {doc['completed']} runs break --require {require}."
        assert badge.counts() == {"require-failing": [n]}
        assert f"of {doc['completed']} runs break --require {require}: " in _page_text(badge)
    # Without --require the document has no verdict of it.
    _, out, _ = run([*argv[:-2], "-o", "json"], capsys)
    assert "require" not in json.loads(out)


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


def test_the_sweep_page_names_the_failure_families_as_the_text_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["sweep", str(EXAMPLES / "simulations" / "tainted-zone.yaml"), "--zones"]
    argv += ["--max-failures", "2", "-j", "1"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    families = re.search(r"failures \((.*)\) x", text.splitlines()[0])
    assert families is not None and "node combinations" in families.group(1)
    assert text.startswith(f"Sweep of {doc['source']}: {sum(doc['failures'].values())} failures")
    assert f"runs ({families.group(1)}) × seeds" in _page_text(root)
