"""The command line: output shapes, exit codes, and one clear message for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from topospread.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "cases"

GOOD_CASE = """\
name: t
nodes:
- metadata: {name: n1, labels: {zone: a}}
- metadata: {name: n2, labels: {zone: b}}
pods:
- metadata: {name: p1, labels: {app: x}}
  spec: {nodeName: n1}
pod:
  metadata: {name: new, labels: {app: x}}
  spec:
    topologySpreadConstraints:
    - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
       labelSelector: {matchLabels: {app: x}}}
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def readme_output(command: str) -> str:
    """What the README shows ``command`` printing: the text block after its console block
    and "prints:"."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    return readme.split(f"{command}\n```\n\nprints:\n\n```text\n", 1)[1].split("\n```", 1)[0]


def write(tmp_path: Path, text: str, name: str = "case.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_evaluate_prints_one_json_object_per_case_with_every_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD_CASE)
    code, out, _ = run(["evaluate", str(path)], capsys)
    assert code == 0
    (line,) = out.splitlines()
    result = json.loads(line)
    assert list(result) == ["case", "preFilter", "filter", "preScore", "score", "domains"]
    assert result["filter"] == {"n1": "Unschedulable", "n2": "Success"}
    assert result["domains"] == [
        {"topologyKey": "zone", "counts": {"a": 1, "b": 0}, "globalMin": 0}
    ]
    assert result["preScore"] == "Skip"


def test_evaluate_walks_directories_recursively_in_sorted_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(["evaluate", str(EXAMPLES)], capsys)
    assert code == 0
    cases = [json.loads(line)["case"] for line in out.splitlines()]
    assert cases == sorted(cases) and len(cases) >= 2


def test_conformance_reports_each_difference_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD_CASE + "expect:\n  filter: {n1: Success}\n  preScore: Success\n")
    code, out, _ = run(["conformance", str(path)], capsys)
    assert code == 1
    assert out.splitlines() == [
        f"FAIL {path}",
        "  preScore: expected Success, got Skip",
        "  filter.n1: expected Success, got Unschedulable",
        "0 passed, 1 failed",
    ]


def test_conformance_counts_passes_and_skips_cases_without_expect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, GOOD_CASE, "no-expect.yaml")
    write(tmp_path, GOOD_CASE + "expect: {filter: {n2: Success}}\n", "ok.yaml")
    code, out, _ = run(["conformance", str(tmp_path)], capsys)
    assert code == 0
    assert out.splitlines()[-1] == "1 passed, 0 failed"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            GOOD_CASE.replace("spec: {nodeName: n1}", "spec: {nodeName: n9}"),
            'pods[0] (default/p1): spec.nodeName: Not found: "n9": no such node in the case',
            id="a bound pod on an unknown node",
        ),
        pytest.param(
            GOOD_CASE.replace("spec: {nodeName: n1}", "spec: {}"),
            "pods[0] (default/p1): spec.nodeName: Required value: existing pods must be bound",
            id="an existing pod that is not bound",
        ),
        pytest.param(
            GOOD_CASE + "features: {NodeInclusionPolicyInPodTopologySpread: false}\n",
            "features: cannot set feature gate NodeInclusionPolicyInPodTopologySpread to false, "
            "feature is locked to true",
            id="a locked feature gate turned off",
        ),
        pytest.param(
            GOOD_CASE + "features: {NoSuchGate: true}\n",
            "features: unrecognized feature gate: NoSuchGate",
            id="an unknown feature gate",
        ),
        pytest.param(
            GOOD_CASE.replace("pod:\n", "pod_:\n"),
            "unknown key 'pod_'",
            id="a misspelt case key",
        ),
        pytest.param(
            GOOD_CASE + "filteredNodes: [n1, n7]\n",
            "filteredNodes[1]: Not found: 'n7' is not a node of the case",
            id="a filtered node that does not exist",
        ),
    ],
)
def test_bad_cases_exit_2_with_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = write(tmp_path, text)
    code, out, err = run(["evaluate", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"topospread: error: {path}")
    assert message in err


def test_a_missing_path_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["conformance", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2
    assert err == f"topospread: error: {tmp_path / 'nope.yaml'}: no such file or directory\n"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run(["evaluate"], capsys)
    assert code == 2


SCENARIO = """\
nodes:
- metadata: {name: n1, labels: {zone: a}}
queue:
- metadata: {name: web}
  spec:
    containers: [{name: c, image: x}]
    topologySpreadConstraints:
    - {maxSkew: MAXSKEW, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,
       labelSelector: {matchLabels: {a: b}}}
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            SCENARIO.replace("MAXSKEW", "0"),
            "queue[0] (Pod default/web): spec.topologySpreadConstraints[0].maxSkew: "
            "Invalid value: 0: must be greater than zero",
            id="an invalid constraint gets the API server's message",
        ),
        pytest.param(
            SCENARIO.replace("MAXSKEW", "one"),
            "queue[0] (Pod default/web): json: cannot unmarshal string into Go struct field "
            "TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32",
            id="a wrong type",
        ),
        pytest.param(
            SCENARIO.replace("MAXSKEW", "1").replace("topologyKey: zone, ", ""),
            "queue[0] (Pod default/web): spec.topologySpreadConstraints[0].topologyKey: "
            "Required value: can not be empty",
            id="a missing field",
        ),
        pytest.param(
            "nodes:\n- metadata: {name: n1\n",
            "line 3, column 1: could not parse YAML: did not find expected ',' or '}'",
            id="malformed YAML",
        ),
        pytest.param(
            "nodes:\n- metadata: {name: n1}\npods:\n- metadata: {name: p}\n"
            "  spec: {nodeName: n9, containers: [{name: c, image: x}]}\n",
            'pods[0] (Pod default/p): spec.nodeName: Not found: "n9": no such node',
            id="a bound pod on an unknown node",
        ),
        pytest.param(
            "nodes:\n- metadata: {name: n1}\nqueue:\n- metadata: {name: p}\n"
            "  spec: {priorityClassName: gold, containers: [{name: c, image: x}]}\n",
            'queue[0] (Pod default/p): pods "p" is forbidden: '
            "no PriorityClass with name gold was found",
            id="an unknown PriorityClass",
        ),
        pytest.param(
            "nodes: []\nconfig: {apiVersion: kubescheduler.config.k8s.io/v1, "
            "kind: KubeSchedulerConfiguration, percentageOfNodesToScore: 101}\n",
            "config: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
            id="an invalid scheduler configuration",
        ),
        pytest.param(
            "nodes: []\nqueue: []\nextra: 1\n",
            "unknown key 'extra'; a scenario has nodes, pods, queue, objects, config",
            id="an unknown scenario key",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
            "holds Kubernetes objects (Node, Deployment), not a scenario (one mapping with keys "
            "nodes, pods, queue, objects, config): give such a file with --pods FILE",
            id="manifests given as the scenario",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node}\n"
            "- {apiVersion: v1, kind: Pod}\n- {apiVersion: v1, kind: Node}\n",
            "holds Kubernetes objects (Node, Pod), not a scenario",
            id="a List given as the scenario",
        ),
    ],
)
def test_bad_scenarios_exit_2_with_one_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    path = write(tmp_path, text, "scenario.yaml")
    code, out, err = run(["schedule", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1
    assert err.startswith(f"topospread: error: {path}: ")
    assert message in err


def test_schedule_without_inputs_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["schedule"], capsys)
    assert code == 2
    assert "nothing to schedule" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(
            ["design", "redis-cluster", "--shards", "abc", "--zones", "a"],
            "topospread: error: design redis-cluster: Invalid value for '--shards': Input should "
            "be a valid integer, unable to parse string as an integer (see --help)\n",
            id="an option's value of the wrong type",
        ),
        pytest.param(
            ["nosuch"],
            "topospread: error: No such command 'nosuch'. (see --help)\n",
            id="an unknown command",
        ),
        pytest.param(
            ["verify", "x.yaml", "--max-states", "0"],
            "topospread: error: verify: Invalid value for '--max-states': Input should be greater "
            "than or equal to 1 (see --help)\n",
            id="a value out of range",
        ),
    ],
)
def test_bad_command_line_arguments_exit_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert (code, out, err) == (2, "", message)


_BLAS_THREADS = """
import os
{before}
import topospread.cli
import numpy
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
@pytest.mark.parametrize(
    ("before", "expected"),
    [
        ('os.environ.pop("OPENBLAS_NUM_THREADS", None)', ["1", "1"]),
        ('os.environ["OPENBLAS_NUM_THREADS"] = "2"', ["2"]),
    ],
    ids=["unset: no thread beside the main one", "the user's setting kept"],
)
def test_numpy_starts_no_blas_threads_unless_the_user_asks(
    before: str, expected: list[str]
) -> None:
    from test_cli_coercion import last_line_in_a_fresh_interpreter

    said = last_line_in_a_fresh_interpreter(_BLAS_THREADS.format(before=before)).split()
    assert said[: len(expected)] == expected
