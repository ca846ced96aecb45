"""What a newcomer tripped on (issue 12), tried as a new user would: each with the fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli import run
from topospread import __version__

NODES = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "4"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {topology.kubernetes.io/zone: b}},
   status: {allocatable: {cpu: "4", memory: 8Gi, pods: "4"}}}
"""


def deployment(replicas: int) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers: [{{name: web, image: nginx}}]
      topologySpreadConstraints:
      - {{maxSkew: 1, topologyKey: topology.kubernetes.io/zone,
          whenUnsatisfiable: DoNotSchedule, labelSelector: {{matchLabels: {{app: web}}}}}}
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    deploy = tmp_path / "deploy.yaml"
    deploy.write_text(deployment(4))
    return nodes, deploy


def test_python_dash_m_runs_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "topospread", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == f"topospread {__version__}\n"


@pytest.mark.parametrize("command", ["conformance", "evaluate"])
def test_a_path_with_no_case_is_an_error_not_a_pass(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([command, str(tmp_path)], capsys)
    assert code == 2 and out == ""
    assert err == f"topospread: error: {tmp_path}: no case file (*.yaml, *.yml) found\n"


def test_schedule_expands_a_deployment_through_its_controllers(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, deploy = files
    code, out, err = run(["schedule", "--nodes", str(nodes), "--pods", str(deploy)], capsys)
    assert code == 0 and err == ""  # no "ignored a Deployment" warning
    placed = [line for line in out.splitlines() if "  -> " in line]
    assert len(placed) == 4 and all(line.startswith("default/web-") for line in placed)
    assert sum(line.endswith("-> n1") for line in placed) == 2  # spread 2/2 over the zones


def test_a_replica_set_listed_with_its_pods_creates_no_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    rs = tmp_path / "rs.yaml"
    rs.write_text(
        """\
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, uid: rs-1}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-a
  labels: {app: web}
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: rs-1, controller: true}]
spec: {nodeName: n1, containers: [{name: c, image: x}]}
"""
    )
    code, out, _ = run(["schedule", "--nodes", str(nodes), "--pods", str(rs), "-o", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and len(doc["pods"]) == 1  # the missing replica only


def test_schedule_says_pending_pods_by_exit_code_when_asked(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, deploy = files
    argv = ["schedule", "--nodes", str(nodes), "--pods", str(deploy), "--require", "no-pending"]
    assert run(argv, capsys)[0] == 0
    deploy.write_text(deployment(10))  # 8 pods fit (4 a node)
    code, out, _ = run(argv, capsys)
    assert code == 1 and "8 of 10 queued pods bound, 2 not bound." in out
    assert run(argv[:-2], capsys)[0] == 0  # without --require: a report, not a verdict
    code, _, err = run([*argv[:-1], "no-violation"], capsys)
    assert code == 2 and 'supported values: "no-pending"' in err


def test_schedule_writes_one_json_document(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, deploy = files
    base = ["schedule", "--nodes", str(nodes), "--pods", str(deploy)]
    _, out, _ = run([*base, "-o", "json"], capsys)
    doc = json.loads(out)
    _, lines, _ = run([*base, "-o", "jsonl"], capsys)
    header, *pods = (json.loads(line) for line in lines.splitlines())
    assert doc["plugins"] == header["plugins"] and doc["pods"] == pods
    assert (len(doc["bound"]), doc["pending"]) == (4, [])


def test_nothing_queued_prints_no_leading_blank_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(NODES)
    _, out, _ = run(["schedule", "--nodes", str(nodes)], capsys)
    assert out.startswith("0 of 0 queued pods bound.\n")


COMMANDS = ["schedule", "explain", "verify", "simulate", "sweep", "rebalance", "evaluate",
            "conformance", "design"]  # fmt: skip


def test_the_help_names_every_command_and_flags_take_no_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, out, _ = run(["--help"], capsys)
    summary = out.split("╭")[0]
    assert all(c in summary for c in COMMANDS), summary
    for command in [[], *([c] for c in COMMANDS), ["design", "spread"]]:
        _, out, _ = run([*command, "--help"], capsys)
        assert "<bool>" not in out, command
    _, out, _ = run(["rebalance", "--help"], capsys)
    assert "--include-soft" in out and "<int>" in out  # other options keep their type


def test_a_case_error_names_the_keys_not_a_file_the_package_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = tmp_path / "c.yaml"
    case.write_text("pod: {metadata: {name: p}}\nnode: []\n")
    code, _, err = run(["evaluate", str(case)], capsys)
    assert code == 2 and "FORMAT.md" not in err
    assert "unknown key 'node'; a case's keys are" in err and "nodes" in err
