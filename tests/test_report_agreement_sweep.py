"""Text, HTML and JSON of one sweep or rebalance run say the same thing: what one report
shows, the others neither contradict nor leave out (a list cut short says by how many)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from test_cli import run
from test_html_json import EXAMPLES, both, parse
from test_rebalance import _zonal_database
from test_report_agreement import _page_text
from topospread.render import sweep as sweep_render
from topospread.render.html import rebalance_html, sweep_html
from topospread.render.schemas import load_schema


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


@pytest.mark.parametrize("soft", [False, True], ids=["DoNotSchedule", "ScheduleAnyway"])
def test_the_rebalance_page_states_each_target_as_the_text_does(
    soft: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _crowded_zone(tmp_path / "t.yaml")
    if soft:
        doc = yaml.safe_load(path.read_text())
        spec = doc["objects"][0]["spec"]["template"]["spec"]
        spec["topologySpreadConstraints"][0]["whenUnsatisfiable"] = "ScheduleAnyway"
        path.write_text(yaml.safe_dump(doc))
    argv = ["rebalance", str(path), "--include-soft"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    (target,) = doc["targets"]
    counts = " ".join(f"{d}={n}" for d, n in target["counts"].items())
    verdict = "VIOLATED" if not soft else "preference not met"
    assert f"{counts}; min {target['globalMin']}; {verdict} (skew {target['skew']}" in text
    (shown,) = root.find("data-target")
    assert f"{verdict} (skew {target['skew']} > maxSkew {target['maxSkew']}" in _page_text(shown)
    assert _page_text(shown).endswith(f": {counts}; min {target['globalMin']}")
    assert "()" not in _page_text(root)


def test_the_sweep_page_lists_a_runs_pending_messages_in_the_texts_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["sweep", str(EXAMPLES / "simulations" / "zone-outage.yaml"), "--zones", "-j", "1"]
    doc = json.loads(run([*argv, "-o", "json"], capsys)[1])
    first = doc["ranked"][0]
    (r,) = [x for x in doc["runs"] if x["failure"]["name"] == first["failure"]]
    # One pod with a message sorting first, before the two that share another: the text puts
    # the message most pods share first.
    r["during"]["pending"] = [
        {"pod": "default/a", "message": "0/6 nodes are available: a."},
        {"pod": "default/b", "message": "0/6 nodes are available: b."},
        {"pod": "default/c", "message": "0/6 nodes are available: b."},
    ]
    (section,) = parse(sweep_html(doc)).find("id", "run-0")
    assert section.values("data-pending") == ["default/b", "default/c", "default/a"]


def test_the_sweep_matrix_has_the_texts_columns_base_workloads_included(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["sweep", str(EXAMPLES / "simulations" / "zone-outage.yaml"), "--zones", "-j", "1"]
    doc = json.loads(run([*argv, "-o", "json"], capsys)[1])
    outcome = {"pending": 1, "violated": 0, "preferencesNotMet": 0}
    doc["base"]["0"]["workloads"]["statefulset default/db"] = outcome
    (matrix,) = parse(sweep_html(doc)).find("id", "matrix")
    heads = [e.all_text() for e in matrix.walk() if e.tag == "th"]
    assert heads[-2:] == ["deployment default/web", "statefulset default/db"]
