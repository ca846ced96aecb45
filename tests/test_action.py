"""The GitHub Action (action.yml at the repository root), run step by step as a runner runs a
composite action: each ``run`` step in bash with its ``env`` and the action's inputs substituted,
``GITHUB_ACTION_PATH``, ``RUNNER_TEMP`` and ``GITHUB_PATH`` (whose lines join ``PATH`` for the
steps after). The ``uses: actions/setup-python`` step is the one step not run: this machine's
``python3`` stands for the Python it sets up. The install step really installs the package from
the repository into a fresh virtual environment (pip, about 20 s)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION: dict[str, Any] = yaml.safe_load((ROOT / "action.yml").read_text())
_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")

FAILING = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 6
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: no-such-label, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""
PASSING = FAILING.replace("no-such-label", "topology.kubernetes.io/zone")


class Runner:
    """The composite action's steps, run as GitHub's runner runs them."""

    def __init__(self, temp: Path) -> None:
        self.temp = temp
        self.github_path = temp / "github_path"
        self.github_path.write_text("")
        python_dir = temp / "setup-python"  # what actions/setup-python puts on PATH
        python_dir.mkdir()
        (python_dir / "python").symlink_to(shutil.which("python3") or sys.executable)
        self.path = [str(python_dir)]

    def inputs(self, given: Mapping[str, str]) -> dict[str, str]:
        declared = ACTION["inputs"]
        unknown = set(given) - set(declared)
        assert not unknown, f"inputs the action does not declare: {unknown}"
        values = {name: str(spec.get("default", "")) for name, spec in declared.items()}
        return {**values, **given}

    def expand(self, text: str, inputs: Mapping[str, str]) -> str:
        def value(m: re.Match[str]) -> str:
            expr = m.group(1)
            if expr.startswith("inputs."):
                return inputs[expr.removeprefix("inputs.")]
            if expr == "github.action_path":
                return str(ROOT)
            raise AssertionError(f"unknown expression {expr}")

        return _EXPR.sub(value, text)

    def run(
        self, step: Mapping[str, Any], given: Mapping[str, str]
    ) -> subprocess.CompletedProcess[str]:
        inputs = self.inputs(given)
        assert step.get("shell") == "bash"
        env = {
            "HOME": os.environ.get("HOME", str(self.temp)),
            "LANG": "C.UTF-8",
            "PATH": os.pathsep.join([*self.path, "/usr/local/bin", "/usr/bin", "/bin"]),
            "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_PATH": str(self.github_path),
            "RUNNER_TEMP": str(self.temp),
            "GITHUB_ACTIONS": "true",
        }
        env.update({k: self.expand(str(v), inputs) for k, v in step.get("env", {}).items()})
        script = self.expand(step["run"], inputs)
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            env=env,
            capture_output=True,
            text=True,
            cwd=self.temp,
            timeout=600,
        )
        # A runner adds GITHUB_PATH's lines to PATH for the steps that follow.
        self.path = [*reversed(self.github_path.read_text().split()), *self.path]
        return done


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    runner = Runner(tmp_path_factory.mktemp("action"))
    steps = ACTION["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    done = runner.run(steps[1], {"manifests": "-"})
    assert done.returncode == 0, done.stderr
    return runner


def check_step() -> dict[str, Any]:
    (step,) = [s for s in ACTION["runs"]["steps"] if s.get("name") == "topospread check"]
    return dict(step)


def test_the_action_is_a_composite_action_with_documented_inputs() -> None:
    assert ACTION["runs"]["using"] == "composite"
    assert ACTION["inputs"]["manifests"]["required"] is True
    for name, spec in ACTION["inputs"].items():
        assert spec.get("description"), name


def test_a_failing_chart_fails_the_job_with_annotations_on_its_file(runner: Runner) -> None:
    chart = runner.temp / "failing.yaml"
    chart.write_text(FAILING)
    done = runner.run(check_step(), {"manifests": str(chart)})
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert errors and all(f"file={chart}" in line for line in errors)


def test_a_chart_passes_on_the_shape_and_survive_replays_each_zone_loss(runner: Runner) -> None:
    chart = runner.temp / "passing.yaml"
    chart.write_text(PASSING)
    done = runner.run(check_step(), {"manifests": str(chart), "zones": "3"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "::error" not in done.stdout
    # A zone's nodes lost: with the default nodeTaintsPolicy the dark zone still counts, and
    # its two replicas stay Pending (the tainted-zone trap).
    done = runner.run(check_step(), {"manifests": str(chart), "survive": "zone"})
    assert done.returncode == 1
    assert "after losing region-1a: 2 pod(s) stay Pending" in done.stdout


def test_bad_input_is_one_line_and_exit_2(runner: Runner) -> None:
    chart = runner.temp / "typo.yaml"
    chart.write_text(PASSING.replace("replicas: 6", "replicaz: 6"))
    done = runner.run(check_step(), {"manifests": str(chart)})
    assert done.returncode == 2
    assert 'unknown field "spec.replicaz"' in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
