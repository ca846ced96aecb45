"""What the third edges audit found in the reports: every pod of the input is in every report
(text, JSON, HTML), placed, Pending with its reason, or named in a note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest

from test_bad_input import GOOD_NODE, assert_one_line_exit_2, write_text
from test_cli import run
from test_html_json import both

FINISHED_PODS: Final = """\
nodes:
- metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
objects:
- apiVersion: v1
  kind: Pod
  metadata: {name: done}
  spec: {nodeName: n1, containers: [{name: c, image: i}]}
  status: {phase: Succeeded}
- apiVersion: v1
  kind: Pod
  metadata: {name: failed}
  spec: {containers: [{name: c, image: i}]}
  status: {phase: Failed}
- apiVersion: v1
  kind: Pod
  metadata: {name: running}
  spec: {containers: [{name: c, image: i}]}
timeline:
- wait: 1m
"""
NOTE: Final = (
    "read and not drawn (Succeeded or Failed: ignored by kube-scheduler): "
    "2 Pod (default/done, default/failed)"
)


def test_simulate_names_the_pods_it_read_finished_in_every_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Succeeded or Failed pod is kept (a Job counts it) but the scheduler never sees it, so
    # no step's grid or Pending list has it: it was in no report at all.
    path = tmp_path / "t.yaml"
    path.write_text(FINISHED_PODS)
    root, doc = both(["simulate", str(path)], capsys)
    assert doc["warnings"] == [NOTE]
    assert [s["bound"] for s in doc["steps"]] == [{"default/running": "n1"}] * 2
    assert [s["pending"] for s in doc["steps"]] == [[], []]
    assert NOTE in [e.all_text() for e in root.find("class", "badge warn")]
    code, _, err = run(["simulate", str(path)], capsys)
    assert (code, err) == (0, f"topospread: warning: {NOTE}\n")


def test_the_note_names_five_finished_pods_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    done = """\
- apiVersion: v1
  kind: Pod
  metadata: {name: job-NAME}
  spec: {nodeName: n1, containers: [{name: c, image: i}]}
  status: {phase: Succeeded}
"""
    pods = "".join(done.replace("NAME", str(i)) for i in range(7))
    path = tmp_path / "t.yaml"
    path.write_text(FINISHED_PODS.replace("objects:\n", "objects:\n" + pods))
    code, _, err = run(["simulate", str(path), "-o", "json"], capsys)
    assert code == 0
    assert err == (
        "topospread: warning: read and not drawn (Succeeded or Failed: ignored by "
        "kube-scheduler): 9 Pod (default/job-0, default/job-1, default/job-2, default/job-3, "
        "default/job-4 and 4 more)\n"
    )


@pytest.mark.parametrize(
    ("quantities", "message"),
    [
        (
            'capacity: {cpu: "4x", memory: 32Gi, pods: "110"}',
            'status.capacity.cpu: Invalid value: "4x": quantities must match the regular '
            "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            'allocatable: {cpu: "8", memory: [1], pods: "110"}',
            "status.allocatable.memory: Invalid value: a list: quantities must match",
        ),
        # Upstream's own validation of a node's resources, for comparison: the same path.
        (
            'allocatable: {cpu: "-1", memory: 32Gi, pods: "110"}',
            'status.allocatable.cpu: Invalid value: "-1": must be greater than or equal to 0',
        ),
    ],
    ids=["capacity", "allocatable of another type", "allocatable negative"],
)
def test_a_node_quantity_that_does_not_parse_is_named_as_validation_names_it(
    quantities: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # validateNodeResources names status.allocatable.cpu (Child, not Key); the decoding error
    # was given the path status.allocatable[cpu], so one field had two names.
    key = quantities.split(":")[0]
    node = GOOD_NODE.replace(
        next(x for x in GOOD_NODE.splitlines() if f"  {key}:" in x), "  " + quantities
    )
    nodes = write_text(tmp_path, "nodes.yaml", node)
    assert_one_line_exit_2(["schedule", "--nodes", nodes], capsys, f"(Node n1): {message}")
    assert_one_line_exit_2(["schedule", "--nodes", nodes], capsys, "nodes.yaml")


COPIED_POD: Final = """\
apiVersion: v1
kind: Pod
metadata: {name: copied, namespace: default}
spec: {containers: [{name: c, image: i}]}
status: {phase: Succeeded, startTime: "2024-01-01T00:00:00Z"}
"""


def test_a_pod_created_from_a_manifest_starts_pending_whatever_status_it_carries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The API server sets a created pod's status (podStrategy.PrepareForCreate): a manifest
    # copied from kubectl get -o yaml, Succeeded, is scheduled like any new pod. check and an
    # apply step read it as finished, so it was in no report.
    chart = write_text(tmp_path, "chart.yaml", COPIED_POD)
    code, out, _ = run(
        ["check", chart, "--zones", "1", "--nodes-per-zone", "1", "-o", "json"], capsys
    )
    assert code == 0
    assert json.loads(out)["bound"] == {"default/copied": "node-region-1a-1"}
    step = "  - apply:\n" + "".join(f"      {line}\n" for line in COPIED_POD.splitlines())
    path = write_text(tmp_path, "t.yaml", FINISHED_PODS.replace("- wait: 1m\n", step))
    code, out, _ = run(["simulate", path, "-o", "json"], capsys)
    assert code == 0
    last = json.loads(out)["steps"][-1]
    assert last["bound"] == {"default/copied": "n1", "default/running": "n1"}
    # The scenario's own objects are the cluster's state: their status stays.
    assert json.loads(out)["warnings"] == [NOTE]


def test_verify_refuses_a_queued_pod_that_has_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # kube-scheduler never schedules a Failed pod (schedule reports it Pending, saying so):
    # verify placed it, and reported the deadlock it caused on the node's last cpu.
    scenario = """\
nodes:
- metadata: {name: n1, labels: {topology.kubernetes.io/zone: a}}
  status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}
queue:
- metadata: {name: job-1}
  spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
  status: {phase: Failed}
- metadata: {name: web}
  spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
"""
    path = write_text(tmp_path, "v.yaml", scenario)
    assert_one_line_exit_2(
        ["verify", path],
        capsys,
        "v.yaml: pod default/job-1: status.phase: verify places pods that have not finished (a "
        "Failed pod is never scheduled)",
    )
