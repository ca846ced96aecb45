"""The command line as one package over one inputs layer: every command reads its cluster the
same way, each shared option means the same on every command, and the help shows every option
whole at 80 columns."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer

from test_cli import run
from topospread.cli import app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCENARIO = str(EXAMPLES / "scenarios" / "docs-two-constraints.yaml")
TIMELINE = str(EXAMPLES / "simulations" / "zone-outage.yaml")
VERIFY = str(EXAMPLES / "verify" / "redis-2shards-2zones.yaml")
CHART = str(EXAMPLES / "check" / "web.yaml")

NODES = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {topology.kubernetes.io/zone: b}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
"""
PODS = """\
apiVersion: v1
kind: Pod
metadata: {name: old, labels: {app: web}}
spec: {nodeName: n1, containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec:
  containers: [{name: c, image: x}]
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}
"""

# NODES and PODS as one scenario document.
SAME_SCENARIO = """\
nodes:
- {metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
- {metadata: {name: n2, labels: {topology.kubernetes.io/zone: b}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
pods:
- metadata: {name: old, labels: {app: web}}
  spec: {nodeName: n1, containers: [{name: c, image: x}]}
queue:
- metadata: {name: web-1, labels: {app: web}}
  spec:
    containers: [{name: c, image: x}]
    topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
       labelSelector: {matchLabels: {app: web}}}
"""

# Each command that reads a cluster, run on a small input (its own document, or a shape).
RUNS = {
    "schedule": ["schedule", SCENARIO],
    "explain": ["explain", SCENARIO, "--pod", "mypod"],
    "verify": ["verify", VERIFY],
    "simulate": ["simulate", TIMELINE],
    "sweep": ["sweep", TIMELINE, "--zones", "-j", "1"],
    "rebalance": ["rebalance", TIMELINE],
    "check": ["check", CHART, "--zones", "3"],
}


def command(name: str) -> typer.core.TyperCommand:
    group = typer.main.get_command(app)
    found = group.commands[name]  # type: ignore[attr-defined]
    assert isinstance(found, typer.core.TyperCommand)
    return found


def takes(name: str, option: str) -> bool:
    return any(option in p.opts for p in command(name).params)


def runs_taking(option: str) -> list[str]:
    return [name for name in RUNS if takes(name, option)]


@pytest.fixture
def dumps(tmp_path: Path) -> tuple[Path, Path]:
    nodes, pods = tmp_path / "nodes.yaml", tmp_path / "pods.yaml"
    nodes.write_text(NODES)
    pods.write_text(PODS)
    return nodes, pods


# ---------------------------------------------------------------------------------------------
# explain reads what schedule reads


def test_explain_reads_the_node_and_pod_dumps_schedule_reads(
    dumps: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = dumps
    files = ["--nodes", str(nodes), "--pods", str(pods)]
    code, scheduled, _ = run(["schedule", *files], capsys)
    assert code == 0 and "default/web-1  -> n2" in scheduled
    code, out, err = run(["explain", *files, "--pod", "web-1"], capsys)
    assert (code, err) == (0, "")
    assert out.startswith("default/web-1 -> n2 (attempt 1)\n")
    assert "matching pods per domain: a=1, b=0" in out


def test_explain_from_dumps_says_what_it_says_from_the_same_scenario(
    dumps: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = dumps
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(SAME_SCENARIO)
    _, from_scenario, _ = run(["explain", str(scenario), "--pod", "web-1", "-o", "json"], capsys)
    both = [str(nodes), str(pods)]
    for files in (
        ["--nodes", both[0], "--pods", both[1]],
        ["--cluster", both[0], "--cluster", both[1]],
        ["--objects", both[0], "--objects", both[1]],
    ):
        code, out, _ = run(["explain", *files, "--pod", "web-1", "-o", "json"], capsys)
        assert code == 0 and json.loads(out) == json.loads(from_scenario), files


def test_explain_takes_one_input_as_schedule_does(
    dumps: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, _ = dumps
    for name in ("schedule", "explain"):
        argv = [name, SCENARIO, "--nodes", str(nodes), "--pod", "mypod"]
        code, out, err = run(argv if name == "explain" else argv[:-2], capsys)
        assert (code, out) == (2, "")
        assert err.startswith("topospread: error: give one input: a SCENARIO file"), name
        code, _, err = run([name, "--pod", "mypod"] if name == "explain" else [name], capsys)
        assert code == 2 and "nothing to schedule" in err, name


# ---------------------------------------------------------------------------------------------
# Shared options: the same name, the same meaning, the same errors on every command


@pytest.mark.parametrize("name", list(RUNS))
def test_every_command_that_reads_a_cluster_takes_cluster_files_and_a_live_cluster(
    name: str,
) -> None:
    for option in ("--cluster", "--live", "--kubeconfig", "--context"):
        assert takes(name, option) or name == "verify", (name, option)


@pytest.mark.parametrize("name", [n for n in RUNS if n != "verify"])
def test_a_missing_cluster_file_is_the_same_error_on_every_command(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    argv = [a for a in RUNS[name] if a not in ("--zones", "3")] if name == "check" else RUNS[name]
    if name in ("schedule", "explain"):
        argv = [a for a in argv if a != SCENARIO]
    code, out, err = run([*argv, "--cluster", str(missing)], capsys)
    assert (code, out, err) == (2, "", f"topospread: error: {missing}: no such file or directory\n")


@pytest.mark.parametrize("name", [n for n in RUNS if n not in ("verify", "check")])
def test_cluster_files_read_a_directory_of_dumps(
    name: str, dumps: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, _ = dumps
    argv = [a for a in RUNS[name] if a not in (SCENARIO, TIMELINE)]
    if name == "explain":
        argv = ["explain", "--pod", "web-1"]
    code, _, err = run([*argv, "--cluster", str(nodes.parent)], capsys)
    assert code in (0, 1) and "error" not in err, err


@pytest.mark.parametrize("name", runs_taking("--seed"))
def test_seed_takes_a_whole_number_on_every_command(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*RUNS[name], "--seed", "x"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        f"topospread: error: {name}: Invalid value for '--seed': Input should be a valid "
        "integer, unable to parse string as an integer (see --help)\n"
    )
    assert run([*RUNS[name], "--seed", "7"], capsys)[0] in (0, 1)


@pytest.mark.parametrize("name", runs_taking("--output"))
def test_output_names_its_choices_on_every_command(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*RUNS[name], "-o", "nosuch"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"topospread: error: {name}: Invalid value for '--output' / '-o': ")
    assert "'nosuch' is not one of 'text', 'json'" in err


@pytest.mark.parametrize("name", runs_taking("--output"))
def test_output_json_is_one_json_document_on_every_command(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run([*RUNS[name], "-o", "json"], capsys)
    assert code in (0, 1)
    assert isinstance(json.loads(out), dict)


@pytest.mark.parametrize("name", runs_taking("--html"))
def test_html_writes_the_page_output_html_prints(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "report.html"
    code, printed, _ = run([*RUNS[name], "-o", "html"], capsys)
    assert printed.lower().startswith("<!doctype html>") and printed.endswith("</html>\n")
    _, text, _ = run([*RUNS[name], "--html", str(page)], capsys)
    assert not text.lower().startswith("<!doctype html>")  # the text report, and the page beside it
    assert page.read_text() == printed
    code, _, err = run([*RUNS[name], "--html", str(tmp_path / "no" / "such.html")], capsys)
    assert code == 2 and "such.html: cannot write it: No such file or directory" in err


@pytest.mark.parametrize("name", runs_taking("--zone-key"))
def test_zone_key_takes_a_node_label_on_every_command(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*RUNS[name], "--zone-key", "topology.kubernetes.io/zone"], capsys)
    assert code in (0, 1) and out and "error" not in err


def test_shared_options_are_declared_once_with_one_help() -> None:
    shown: dict[str, set[str]] = {}
    for name in RUNS:
        for p in command(name).params:
            for opt in p.opts:
                if opt in ("--cluster", "--live", "--kubeconfig", "--context", "--html"):
                    shown.setdefault(opt, set()).add(getattr(p, "help", "") or "")
    assert all(len(helps) == 1 for helps in shown.values()), shown


# ---------------------------------------------------------------------------------------------
# The help


def visible_options(name: list[str]) -> list[str]:
    found: typer.core.TyperGroup | typer.core.TyperCommand = typer.main.get_command(app)  # type: ignore[assignment]
    for part in name:
        found = found.commands[part]  # type: ignore[union-attr]
    return [
        opt
        for p in found.params
        if not getattr(p, "hidden", False)
        for opt in (*p.opts, *p.secondary_opts)
        if opt.startswith("-")
    ]


HELP = [[c] for c in ("evaluate", "conformance", *RUNS)] + [
    ["design", "redis-cluster"],
    ["design", "spread"],
]


@pytest.mark.parametrize("name", HELP, ids=[" ".join(h) for h in HELP])
def test_no_option_name_is_cut_at_80_columns(
    name: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = run([*name, "--help"], capsys)
    assert max(len(line) for line in out.splitlines()) <= 80
    for opt in visible_options(name):
        assert re.search(re.escape(opt) + r"(?![\w-])", out), (opt, out)


def test_rebalance_keeps_both_topology_balance_node_fit_flags(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import topospread.analysis.descheduler_replay as rebalance

    seen: list[bool] = []
    replay = rebalance.descheduler_rounds

    def rounds(sim: Any, options: rebalance.DeschedulerOptions, **kwargs: Any) -> Any:
        seen.append(options.topology_balance_node_fit)
        return replay(sim, options, **kwargs)

    monkeypatch.setattr(rebalance, "descheduler_rounds", rounds)
    base = ["rebalance", str(EXAMPLES / "simulations" / "descheduler-loop.yaml"), "--descheduler"]
    for flags in ([], ["--topology-balance-node-fit"], ["--no-topology-balance-node-fit"]):
        assert run([*base, *flags], capsys)[0] == 0
    assert seen == [True, True, False]
    code, _, err = run(
        [*base, "--topology-balance-node-fit", "--no-topology-balance-node-fit"], capsys
    )
    assert code == 2 and "give one of --topology-balance-node-fit" in err


def test_sweep_help_names_the_ray_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = run(["sweep", "--help"], capsys)
    assert "pip install 'topospread[ray]'" in out


def test_verify_help_shows_the_librarys_defaults(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from topospread.analysis.verify import DEFAULT_MAX_STATES, DEFAULT_SAMPLES

    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = run(["verify", "--help"], capsys)
    assert f"State budget before falling back. [default: {DEFAULT_MAX_STATES}]" in out
    assert f"Random complete orders to try past the budget. [default: {DEFAULT_SAMPLES}]" in out
    defaults = {p.name: p.default for p in command("verify").params}
    assert (defaults["max_states"], defaults["samples"]) == (DEFAULT_MAX_STATES, DEFAULT_SAMPLES)


# ---------------------------------------------------------------------------------------------
# Layers


def test_no_layer_below_imports_the_inputs_or_the_cli() -> None:
    src = ROOT / "src" / "topospread"
    above = {"cli", "inputs"}
    for path in src.rglob("*.py"):
        part = path.relative_to(src).parts[0]
        if part in above or path.name in ("kubectl.py", "console.py", "__main__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for module in names:
                assert not any(module.startswith(f"topospread.{layer}") for layer in above), (
                    f"{path.relative_to(src)} imports {module}"
                )
    inputs = src / "inputs"
    for path in inputs.rglob("*.py"):
        assert "topospread.cli" not in path.read_text(), path


@pytest.mark.parametrize("name", runs_taking("--seed"))
def test_an_option_without_its_value_names_the_command(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Click's parser raises this error without a context: the line named no command.
    code, out, err = run([*RUNS[name], "--seed"], capsys)
    assert (code, out) == (2, "")
    assert err == f"topospread: error: {name}: Option '--seed' requires an argument. (see --help)\n"


def test_an_option_without_its_value_names_a_group_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The design group's name was not found (a placeholder stood for it): no command named.
    code, out, err = run(["design", "spread", "--replicas"], capsys)
    assert (code, out) == (2, "")
    assert err == (
        "topospread: error: design spread: Option '--replicas' requires an argument. (see --help)\n"
    )
