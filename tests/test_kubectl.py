"""The kubectl plugin: ``kubectl topospread ...`` on kubectl's current context and namespace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_live import FakeServer, kubeconfig, server  # noqa: F401  (fixtures)
from topospread.cli import main as cli_main
from topospread.cluster.live import context_namespace
from topospread.kubectl import main as kubectl_main
from topospread.kubectl import plugin_argv

CASES = [
    (["rebalance"], ["rebalance", "--live"]),
    (["rebalance", "-n", "shop"], ["rebalance", "-n", "shop", "--live"]),
    (["rebalance", "timeline.yaml"], ["rebalance", "timeline.yaml"]),
    (["rebalance", "--cluster", "c.yaml"], ["rebalance", "--cluster", "c.yaml"]),
    (["simulate", "outage.yaml"], ["simulate", "outage.yaml", "--live"]),
    (["simulate", "t.yaml", "--context", "prod"], ["simulate", "t.yaml", "--context", "prod"]),
    (["check", "chart.yaml", "--zones", "3"], ["check", "chart.yaml", "--zones", "3"]),
    (["check", "-", "-o", "github"], ["check", "-", "-o", "github", "--live"]),
    (["schedule", "-o", "json"], ["schedule", "-o", "json", "--live"]),
    (["sweep", "--zones", "-j", "2"], ["sweep", "--zones", "-j", "2", "--live"]),
    (["explain", "--pod", "web-1"], ["explain", "--pod", "ctx-ns/web-1", "--live"]),
    (["explain", "-n", "shop", "--pod", "web-1"], ["explain", "--pod", "shop/web-1", "--live"]),
    (["explain", "--pod=web-1", "--namespace=shop"], ["explain", "--pod=shop/web-1", "--live"]),
    (["explain", "--pod", "a/web-1"], ["explain", "--pod", "a/web-1", "--live"]),
    (["verify", "s.yaml"], ["verify", "s.yaml"]),
    (["--version"], ["--version"]),
    ([], []),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "expected"), CASES, ids=[" ".join(c[0]) or "-" for c in CASES])
def test_commands_read_the_current_context_and_namespace_unless_told_otherwise(
    argv: list[str], expected: list[str]
) -> None:
    assert plugin_argv(argv, lambda context: "ctx-ns") == expected


KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: kind-dev
contexts:
- name: kind-dev
  context: {cluster: kind, user: me, namespace: shop}
- name: other
  context: {cluster: kind, user: me}
"""


def test_the_contexts_namespace_is_read_from_the_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config"
    path.write_text(KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(path))
    assert context_namespace(None, None) == "shop"
    assert context_namespace(None, "other") is None
    assert context_namespace(None, "missing") is None
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nope"))
    assert context_namespace(None, None) is None


def test_kubectl_topospread_explain_finds_the_pod_in_the_contexts_namespace(
    server: FakeServer,  # noqa: F811
    kubeconfig: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    kubeconfig.write_text(KUBECONFIG)
    with pytest.raises(SystemExit) as done:
        kubectl_main(["explain", "--pod", "web-4", "-o", "jsonl"])
    out, err = capsys.readouterr()
    assert done.value.code == 0 and err == ""
    assert json.loads(out)["pod"] == "shop/web-4"


def test_the_plugin_runs_from_a_venvs_bin_on_path() -> None:
    bin_dir = Path(sys.executable).parent
    plugin = bin_dir / "kubectl-topospread"
    assert plugin.exists(), "installing the package installs kubectl-topospread"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["kubectl-topospread", "--help"], capture_output=True, text=True, env=env)
    assert done.returncode == 0
    assert "Usage: kubectl topospread" in done.stdout and "rebalance" in done.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # -n was dropped in silence (explain ran in the context's namespace) ...
        (
            ["explain", "s.yaml", "--pod", "web-1", "-n"],
            "explain: Option '-n' requires an argument.",
        ),
        # ... or took the --live added after it as its value (rebalance's -n is its own).
        (["rebalance", "-n"], "rebalance: Option '-n' requires an argument."),
        (["schedule", "--context"], "schedule: Option '--context' requires an argument."),
    ],
    ids=["explain -n", "rebalance -n", "schedule --context"],
)
def test_an_option_without_its_value_is_refused_as_topospread_refuses_it(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        kubectl_main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"topospread: error: {message} (see --help)\n"
    if argv[0] == "explain":
        return  # -n is the plugin's own there (topospread explain has no -n)
    # The same words without the plugin: the same line.
    with pytest.raises(SystemExit) as stop:
        cli_main(argv)
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"topospread: error: {message} (see --help)\n"
