"""HTML = JSON: every count and name each command's HTML report shows, read back from the page
(its ``data-`` attributes mark them), equals the same run's ``-o json``; and ``-o html`` on
standard output is the page alone."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from test_cli import run
from test_json_schemas import preemption_scenario

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SIMULATIONS = sorted((EXAMPLES / "simulations").glob("*.yaml"))
VOID = {"meta", "br", "link", "img", "input", "hr", "col", "wbr", "source", "area", "base"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None
    children: list[Element] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)

    def walk(self) -> list[Element]:
        out = [self]
        for c in self.children:
            out += c.walk()
        return out

    def find(self, attr: str, value: str | None = None) -> list[Element]:
        return [
            e for e in self.walk() if attr in e.attrs and (value is None or e.attrs[attr] == value)
        ]

    def up(self, attr: str) -> str | None:
        """The value of ``attr`` on the nearest enclosing element that has it."""
        e = self.parent
        while e is not None:
            if attr in e.attrs:
                return e.attrs[attr]
            e = e.parent
        return None

    def counts(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for e in self.find("data-count"):
            out.setdefault(e.attrs["data-count"], []).append(int(e.all_text()))
        return out

    def values(self, attr: str) -> list[str]:
        return [e.attrs[attr] for e in self.find(attr)]


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {}, None)
        self.at = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        e = Element(tag, {k: v or "" for k, v in attrs}, self.at)
        self.at.children.append(e)
        if tag not in VOID:
            self.at = e

    def handle_endtag(self, tag: str) -> None:
        e: Element | None = self.at
        while e is not None and e.tag != tag:
            e = e.parent
        if e is not None and e.parent is not None:
            self.at = e.parent

    def handle_data(self, data: str) -> None:
        self.at.text.append(data)


def parse(page: str) -> Element:
    parser = _Parser()
    parser.feed(page)
    parser.close()
    return parser.root


def both(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Element, Any]:
    """The run's HTML page (parsed) and its JSON document."""
    code, page, err = run([*argv, "-o", "html"], capsys)
    assert code in (0, 1), err
    code2, out, _ = run([*argv, "-o", "json"], capsys)
    assert code2 == code
    return parse(page), json.loads(out)


def grid(root: Element) -> tuple[dict[str, str], dict[str, str]]:
    """The pods the grid draws -> their node, and each node -> its zone."""
    pods = {e.attrs["data-pod"]: e.up("data-node") or "" for e in root.find("data-pod")}
    zones = {e.attrs["data-node"]: e.up("data-zone") or "" for e in root.find("data-node")}
    return pods, zones


def pods_labelled(root: Element) -> None:
    """Every pod drawn carries its name as text, and the page has a legend."""
    for e in root.find("data-pod"):
        assert e.all_text().strip(), e.attrs
        assert e.attrs["data-pod"].endswith(e.all_text().strip())
    assert root.find("data-legend")


def schedule_argvs(tmp: Path) -> list[list[str]]:
    scenarios = sorted((EXAMPLES / "scenarios").glob("*.yaml"))
    return [
        ["schedule", str(s)] for s in [*scenarios, preemption_scenario(tmp / "preemption.yaml")]
    ]


def test_the_schedule_report_shows_what_its_json_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in schedule_argvs(tmp_path):
        root, doc = both(argv, capsys)
        pods, zones = grid(root)
        assert pods == doc["bound"]
        assert zones == {n["name"]: n["zone"] for n in doc["nodes"]}
        assert all(zones.values()), "every example node has a zone"
        bound = sum(1 for p in doc["pods"] if p["node"])
        pending = {"pending": [len(doc["pending"])]} if doc["pending"] else {}
        assert root.counts() == {"bound": [bound], "queued": [len(doc["pods"])], **pending}
        assert root.values("data-pending") == [p["pod"] for p in doc["pending"]]
        attempts = [f"{p['pod']}#{a['attempt']}" for p in doc["pods"] for a in p["attempts"]]
        attempts += [f"{p['pod']}#0" for p in doc["pods"] if not p["attempts"]]
        assert sorted(root.values("data-attempt")) == sorted(attempts)
        every = [a for p in doc["pods"] for a in p["attempts"]]
        assert root.values("data-preempted") == [v for a in every for v in a["preempted"]]
        assert root.values("data-nominated") == [
            a["nominatedNode"] for a in every if a["nominatedNode"]
        ]
        pods_labelled(root)


def test_the_preemptors_failed_attempt_is_in_the_schedule_and_explain_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = str(preemption_scenario(tmp_path / "preemption.yaml"))
    root, _ = both(["schedule", scenario], capsys)
    assert root.values("data-attempt") == ["default/high#1", "default/high#2"]
    assert root.values("data-preempted") == ["default/low-1"]
    assert root.values("data-nominated") == ["n1"]
    root, doc = both(["explain", scenario, "--pod", "high"], capsys)
    assert root.values("data-attempt") == [str(a["attempt"]) for a in doc["attempts"][:-1]]
    assert root.values("data-preempted") == ["default/low-1"]
    assert root.values("data-nominated") == ["n1"]


def test_the_explain_report_shows_what_its_json_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for scenario, pod in [
        (EXAMPLES / "scenarios" / "docs-two-constraints.yaml", "mypod"),
        (EXAMPLES / "scenarios" / "docs-conflicting-constraints.yaml", "mypod"),
        (preemption_scenario(tmp_path / "preemption.yaml"), "high"),
    ]:
        root, doc = both(["explain", str(scenario), "--pod", pod], capsys)
        assert root.values("data-node") == [n["node"] for n in doc["nodes"]]
        if doc["node"]:
            feasible = sum(1 for n in doc["nodes"] if n["feasible"])
            assert root.counts() == {
                "attempts": [doc["attempts"][-1]["attempt"]],
                "feasible": [feasible],
                "nodes": [len(doc["nodes"])],
            }
        skews = [
            (node, "missing label" if s is None else str(s))
            for c in doc["constraints"]
            for node, s in c["skewByNode"].items()
        ]
        shown = [
            (e.attrs["data-skew"], e.all_text().split("=", 1)[1].replace(" (too high)", ""))
            for e in root.find("data-skew")
        ]
        assert shown == skews
        domains = [d for c in doc["constraints"] for d in c["counts"]]
        assert root.values("data-domain") == domains


def test_the_verify_report_shows_what_its_json_says(capsys: pytest.CaptureFixture[str]) -> None:
    scenario = EXAMPLES / "verify" / "redis-3shards-3zones-maxskew1.yaml"
    root, doc = both(["verify", str(scenario)], capsys)
    counter = doc["counterexample"]
    assert counter is not None
    assert root.counts() == {"pods": [doc["podCount"]], "nodes": [doc["nodeCount"]]}
    last = root.find("id", f"binding-{len(counter['steps'])}")[0]
    pods, zones = grid(last)
    assert pods == counter["bound"]
    assert zones == {n["name"]: n["zone"] for n in counter["nodes"]}
    assert root.values("data-pending") == [p["pod"] for p in counter["pending"]]
    pods_labelled(root)


@pytest.mark.parametrize("timeline", SIMULATIONS, ids=[p.stem for p in SIMULATIONS])
def test_the_simulate_report_shows_what_its_json_says(
    timeline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, doc = both(["simulate", str(timeline)], capsys)
    for step in doc["steps"]:
        (section,) = root.find("id", f"step-{step['index']}")
        pods, zones = grid(section)
        assert pods == step["bound"]
        assert zones == {n["name"]: n["zone"] for n in step["nodes"]}
        placed = {"placed": [len(step["placed"])]} if step["placed"] else {}
        assert section.counts() == {
            "running": [len(step["bound"])],
            "pending": [len(step["pending"])],
            **placed,
        }
        assert Counter(section.values("data-pending")) == Counter(p["pod"] for p in step["pending"])
    groups = sorted({g for step in doc["steps"] for g in step.get("nodeGroups", {})})
    tables = root.find("id", "node-groups")
    assert len(tables) == (1 if any("nodeGroups" in s for s in doc["steps"]) else 0)
    rows = {r.attrs["data-group"]: r for t in tables for r in t.find("data-group")}
    assert sorted(rows) == groups
    for group, row in rows.items():
        shown = {int(td.attrs["data-step"]): int(td.all_text()) for td in row.find("data-step")}
        assert shown == {s["index"]: s["nodeGroups"].get(group, 0) for s in doc["steps"]}
    pods_labelled(root)


def test_the_sweep_report_shows_what_its_json_and_text_say(
    capsys: pytest.CaptureFixture[str],
) -> None:
    timeline = EXAMPLES / "simulations" / "zone-outage.yaml"
    argv = ["sweep", str(timeline), "--zones", "--nodes", "--drains", "-j", "1"]
    root, doc = both(argv, capsys)
    _, text, _ = run(argv, capsys)
    broken = sum(1 for r in doc["ranked"] if r["broken"])
    counts = root.counts()
    assert counts["planned"] == [doc["planned"]]
    if broken:
        assert counts["broken"] == [broken]
        assert f"{broken} of {doc['completed']} runs leave something broken." in text
    else:
        assert f"All {doc['completed']} runs leave every pod placed" in text
    runs = {(r["failure"]["name"], r["seed"]): r for r in doc["runs"]}
    shown = [p for p in root.values("data-pending")]
    want = [
        p["pod"]
        for r in doc["ranked"]
        if r["broken"]
        for p in runs[(r["failure"], r["seed"])]["during"]["pending"]
    ]
    assert Counter(shown) == Counter(want)


@pytest.mark.parametrize("timeline", SIMULATIONS, ids=[p.stem for p in SIMULATIONS])
def test_the_rebalance_report_shows_what_its_json_says(
    timeline: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, doc = both(["rebalance", str(timeline), "--descheduler"], capsys)
    for anchor in ("before", "after"):
        if doc[anchor] is None:
            assert not root.find("id", anchor)
            continue
        (section,) = root.find("id", anchor)
        pods, zones = grid(section)
        assert pods == doc[anchor]["bound"]
        assert zones == {n["name"]: n["zone"] for n in doc[anchor]["nodes"]}
    pods_labelled(root)


@pytest.mark.parametrize(
    "argv",
    [
        ["schedule", str(EXAMPLES / "scenarios" / "docs-two-constraints.yaml")],
        ["explain", str(EXAMPLES / "scenarios" / "docs-two-constraints.yaml"), "--pod", "mypod"],
        ["verify", str(EXAMPLES / "verify" / "redis-3shards-3zones-maxskew1.yaml")],
        ["simulate", str(EXAMPLES / "simulations" / "zone-outage.yaml")],
        ["sweep", str(EXAMPLES / "simulations" / "zone-outage.yaml"), "--zones", "-j", "1"],
        ["rebalance", str(EXAMPLES / "simulations" / "zone-outage.yaml")],
    ],
    ids=lambda argv: argv[0],
)
def test_html_on_standard_output_is_the_page_alone(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, page, _ = run([*argv, "-o", "html"], capsys)
    assert page.startswith("<!doctype html>\n")
    assert page.endswith("</html>\n") and page.count("</html>") == 1
