"""The HTML reports, opened in real headless Chromium (Debian's ``chromium``; ``make test``
installs it where it can): no console error, the key elements and numbers there, nothing
fetched from the network, and a screenshot of each kept under the test's temporary folder."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from test_cli import run
from topospread.render.html import simulate_html

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "simulations"


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on PATH: install Debian's chromium (make test does, as root)")


def plain(dom: str) -> str:
    """The page's text: its markup dropped (counts sit in their own elements)."""
    return re.sub(r"<[^>]+>", "", dom)


def open_in_chromium(page: Path, shot: Path) -> tuple[str, list[str]]:
    """The page's DOM after load, the console's messages, and a screenshot at ``shot``."""
    base = [
        chromium(),
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={shot.parent / 'chromium-profile'}",
    ]
    done = subprocess.run(
        [*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [
        line for line in done.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line
    ]
    taken = subprocess.run(
        [*base, "--window-size=1280,1800", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert taken.returncode == 0 and shot.stat().st_size > 10_000, taken.stderr[-2000:]
    return done.stdout, console


def test_the_zone_outage_timeline_report_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "zone-outage.html"
    code, out, _ = run(
        ["simulate", str(EXAMPLES / "zone-outage.yaml"), "--html", str(page)], capsys
    )
    assert code == 0 and out.startswith("== Initial state")  # the text report still printed
    dom, console = open_in_chromium(page, tmp_path / "zone-outage.png")
    assert console == []
    assert "Pods Pending after: step 2" in dom
    assert "Constraints violated after: step 2, step 4" in dom
    assert len(re.findall(r'<section class="step[^"]*" id="step-\d+"', dom)) == 5
    assert dom.count("VIOLATED") == 2  # steps 2 and 4, the zone constraint
    assert 'title="default/web-6b995ff6b8-pl5lt"' in dom
    assert dom.count('<figure class="chart"') == 2  # zone and hostname constraints
    assert "0/6 nodes are available: 2 node(s) had untolerated taint(s)" in dom


def test_the_report_fetches_nothing_and_follows_the_colour_scheme(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, html, _ = run(["simulate", str(EXAMPLES / "rolling-update.yaml"), "-o", "html"], capsys)
    assert html.startswith("<!doctype html>")
    links = re.findall(r'(?:src|href)="([^"#][^"]*)"', html)
    assert links == [], links  # only in-page anchors
    assert "<script" not in html and "@import" not in html and "url(" not in html
    assert "prefers-color-scheme: dark" in html and "@media print" in html


def test_the_html_is_made_from_the_json(capsys: pytest.CaptureFixture[str]) -> None:
    """The same document -o json prints is what the page draws: its numbers are there."""
    _, out, _ = run(["simulate", str(EXAMPLES / "tainted-zone.yaml"), "-o", "json"], capsys)
    doc = json.loads(out)
    page = simulate_html(doc)
    _, html, _ = run(["simulate", str(EXAMPLES / "tainted-zone.yaml"), "-o", "html"], capsys)
    assert page == html
    for step in doc["steps"]:
        for pod in step["bound"]:
            assert f'title="{pod}"' in html


def test_the_redis_counterexample_report_steps_through_each_binding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = EXAMPLES.parent / "verify" / "redis-3shards-3zones-maxskew1.yaml"
    page = tmp_path / "redis.html"
    code, _, _ = run(["verify", str(scenario), "--html", str(page)], capsys)
    assert code == 1  # a counterexample
    dom, console = open_in_chromium(page, tmp_path / "redis.png")
    assert console == []
    assert "COUNTEREXAMPLE: deadlock after 5 bindings: 1 pod left and none can be placed" in dom
    assert len(re.findall(r'id="binding-\d+"', dom)) == 5
    assert "default/redis-shard-0-0 → node-a1" in dom
    assert dom.count('class="node could"') == 5 + 3 + 3 + 2 + 1  # the other choices, per binding
    assert "default/redis-shard-2-1" in dom and "didn't match pod anti-affinity rules" in dom


def test_a_proof_is_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = EXAMPLES.parent / "verify" / "redis-3shards-2zones.yaml"
    code, html, _ = run(["verify", str(scenario), "-o", "html"], capsys)
    assert code == 0 and 'class="badge pass" id="verdict">PROVED' in html
    assert 'id="counterexample"' not in html


def test_the_explain_report_sorts_its_node_table_by_any_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = EXAMPLES.parent / "scenarios" / "docs-two-constraints.yaml"
    page = tmp_path / "explain.html"
    code, _, _ = run(["explain", str(scenario), "--pod", "mypod", "--html", str(page)], capsys)
    assert code == 0
    dom, console = open_in_chromium(page, tmp_path / "explain.png")
    assert console == []
    assert "default/mypod → node4 (attempt 1); 1 of 4 node(s) feasible." in plain(dom)

    def order(fragment: str) -> list[str]:
        done = subprocess.run(
            [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--dump-dom",
             page.as_uri() + fragment],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        return re.findall(r"<tr[^>]*><td>(node\d)</td>", done.stdout)

    assert order("") == ["node1", "node2", "node3", "node4"]
    assert order("#sort=-total") == ["node4", "node1", "node2", "node3"]
    assert order("#sort=-node") == ["node4", "node3", "node2", "node1"]


def test_the_sweep_report_ranks_failures_and_links_each_to_its_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "sweep.html"
    argv = ["sweep", str(EXAMPLES / "zone-outage.yaml"), "--zones", "--nodes", "-j", "1"]
    code, out, _ = run([*argv, "--html", str(page)], capsys)
    assert code == 0 and out.startswith("Sweep of")
    dom, console = open_in_chromium(page, tmp_path / "sweep.png")
    assert console == []
    assert "9 of 9 runs leave something broken; the worst: zone zone-a." in plain(dom)
    rows = re.findall(r'<tr><td><a href="#(run-\d+)">([^<]+)</a>', dom)
    assert [name for _, name in rows][:3] == ["zone zone-a", "zone zone-b", "zone zone-c"]
    assert len(rows) == 9
    for anchor, _ in rows:  # every failure links to its replay's section
        assert f'id="{anchor}"' in dom
    assert "- name: lose zone zone-a\n  loseZone:" in page.read_text()


def test_every_in_page_link_of_every_report_has_its_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = [
        run(["simulate", str(EXAMPLES / "zone-outage.yaml"), "-o", "html"], capsys)[1],
        run(["verify", str(EXAMPLES.parent / "verify" / "redis-6shards-3zones-4nodes.yaml"),
             "-o", "html"], capsys)[1],
        run(["sweep", str(EXAMPLES / "tainted-zone.yaml"), "--zones", "-j", "1", "-o", "html"],
            capsys)[1],
    ]  # fmt: skip
    for html in pages:
        targets = set(re.findall(r'id="([^"]+)"', html))
        links = re.findall(r'href="#([^"]+)"', html)
        assert set(links) <= targets, set(links) - targets
    assert all(re.search(r'href="#', html) for html in pages[:2])  # the steps, the bindings


def test_the_rebalance_report_shows_the_plan_before_and_after_and_the_descheduler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "rebalance.html"
    argv = ["rebalance", str(EXAMPLES / "zone-outage.yaml"), "--descheduler"]
    code, _, _ = run([*argv, "--html", str(page)], capsys)
    assert code == 0
    dom, console = open_in_chromium(page, tmp_path / "rebalance.png")
    assert console == []
    assert "Plan: 1 eviction(s), proven the fewest (1 replay(s))." in dom
    assert dom.count('class="eviction"') == 1 and "lands on <b>node-zone-c-2</b>" in dom
    assert 'id="before"' in dom and 'id="after"' in dom
    assert "zone-a=2 zone-b=2 zone-c=0" in dom and "zone-a=1 zone-b=2 zone-c=1" in dom
    assert "It stops after 1 round(s): nothing more to evict; 1 eviction(s) in all." in dom
    _, loop, _ = run(
        ["rebalance", str(EXAMPLES / "descheduler-loop.yaml"), "--descheduler", "-o", "html"],
        capsys,
    )
    assert "Nothing to rebalance" in loop and "It loops: after round 1" in loop


def test_the_schedule_report_draws_the_cluster_after_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = EXAMPLES.parent / "scenarios" / "docs-conflicting-constraints.yaml"
    page = tmp_path / "schedule.html"
    code, out, _ = run(["schedule", str(scenario), "-o", "json", "--html", str(page)], capsys)
    doc = json.loads(out)
    dom, console = open_in_chromium(page, tmp_path / "schedule.png")
    assert code == 0 and console == []
    bound = sum(1 for p in doc["pods"] if p["node"])
    assert f"{bound} of {len(doc['pods'])} queued pod(s) bound" in plain(dom)
    for node in doc["nodes"]:
        assert f'title="{node["name"]}' in dom
    for pod in doc["bound"]:
        assert f'title="{pod}"' in dom
    for p in doc["pending"]:
        assert p["message"] in dom


def test_the_reports_follow_a_dark_colour_scheme_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report's own style sheet, in a probe page that reads the body's computed colour:
    white by default, the dark background when the reader prefers dark (Chromium's
    --force-dark-mode), and a dark screenshot of the report kept beside it."""
    _, html, _ = run(["simulate", str(EXAMPLES / "zone-outage.yaml"), "-o", "html"], capsys)
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    assert style is not None
    probe = tmp_path / "probe.html"
    probe.write_text(
        f"<!doctype html><html><head><style>{style.group(1)}</style></head><body>"
        '<p id="out"></p><script>document.getElementById("out").textContent = '
        "getComputedStyle(document.body).backgroundColor;</script></body></html>"
    )

    def background(*flags: str) -> str:
        done = subprocess.run(
            [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", *flags,
             "--dump-dom", probe.as_uri()],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        found = re.search(r'id="out">([^<]*)<', done.stdout)
        assert found is not None, done.stdout[-500:]
        return found.group(1)

    assert background() == "rgb(255, 255, 255)"
    assert background("--force-dark-mode") == "rgb(13, 17, 23)"
    page = tmp_path / "dark.html"
    page.write_text(html)
    shot = tmp_path / "dark.png"
    subprocess.run(
        [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--force-dark-mode",
         "--window-size=1280,1200", f"--screenshot={shot}", page.as_uri()],
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    assert shot.stat().st_size > 10_000
