"""How large a run may be (topospread.limits): every count in an input that becomes objects is
refused past ``--max-nodes`` and ``--max-pods`` with one line naming the file, the object, the
field and its value, and exit code 2, before anything is built (so a count of 10^9 is refused at
once); the options raise the bounds; a realistic large cluster is never refused. Running out of
memory is one line and exit code 1; a Ctrl-C before a command's work one line and 130."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_cli import run
from topospread.cli.options import MAX_NODES_DEFAULT, MAX_PODS_DEFAULT
from topospread.errors import SizeError
from topospread.inputs import Inputs
from topospread.limits import DEFAULT_MAX_NODES, DEFAULT_MAX_PODS, Budget, Limits
from topospread.simulator.sizes import check_timeline
from topospread.simulator.timeline_format import parse_timeline

ROOT = Path(__file__).resolve().parents[1]
SRC = str(ROOT / "src")
ROLLING_UPDATE = ROOT / "examples" / "simulations" / "rolling-update.yaml"
BILLION = 1_000_000_000
POD_BOUND = "more than the 1,000,000 pods topospread simulates (--max-pods raises the bound)"
NODE_BOUND = "more than the 100,000 nodes topospread simulates (--max-nodes raises the bound)"

TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx"}]},
}


def workload(kind: str, spec: dict[str, Any], name: str = "web") -> dict[str, Any]:
    api = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name}, "spec": spec}


def deployment(replicas: int, name: str = "web") -> dict[str, Any]:
    selector = {"matchLabels": {"app": "web"}}
    return workload(
        "Deployment", {"replicas": replicas, "selector": selector, "template": TEMPLATE}, name
    )


def timeline(tmp_path: Path, **doc: Any) -> Path:
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``topospread argv`` refuses its input with (exit 2, quickly)."""
    start = time.process_time()
    code, out, err = run(argv, capsys)
    assert (code, out) == (2, ""), err
    assert time.process_time() - start < 5, "refused only after building"
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err.removeprefix("topospread: error: ").rstrip("\n")


GROUP = {"name": "node", "zones": ["a", "b", "c"], "perZone": 2}

# ---------------------------------------------------------------------------------------------
# The bounds


def test_the_cli_defaults_are_the_library_bounds_and_far_past_the_bench_cluster() -> None:
    assert (MAX_NODES_DEFAULT, MAX_PODS_DEFAULT) == (DEFAULT_MAX_NODES, DEFAULT_MAX_PODS)
    assert DEFAULT_MAX_NODES >= 65_000 and DEFAULT_MAX_PODS >= 10 * 65_000


@pytest.mark.parametrize(
    "words",
    [
        ["schedule"],
        ["explain"],
        ["verify"],
        ["simulate"],
        ["sweep"],
        ["check"],
        ["rebalance"],
        ["design", "spread"],
        ["design", "redis-cluster"],
    ],
    ids=" ".join,
)
def test_every_command_that_reads_inputs_takes_both_bounds_with_the_same_defaults(
    words: list[str],
) -> None:
    import typer

    from topospread.cli import app

    found: Any = typer.main.get_command(app)
    for word in words:
        found = found.commands[word]
    defaults = {opt: p.default for p in found.params for opt in p.opts}
    assert defaults["--max-nodes"] == DEFAULT_MAX_NODES
    assert defaults["--max-pods"] == DEFAULT_MAX_PODS


def test_a_realistic_large_cluster_is_not_refused() -> None:
    doc = {
        "nodeGroups": [{**GROUP, "perZone": 21_667}],  # the bench's 65,000 nodes
        "objects": [
            deployment(100_000),
            deployment(200_000, "api"),
            workload(
                "DaemonSet", {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}
            ),
        ],
        "timeline": [
            {"addNodes": {"group": "node", "zone": "a", "count": 5_000}},
            {"scale": {"workload": "deployment/web", "replicas": 150_000}},
        ],
    }
    budget = check_timeline(parse_timeline(doc, "big.yaml"), Limits())
    assert budget.nodes == 65_001 + 5_000
    assert budget.pods == 150_000 + 200_000 + 70_001


# ---------------------------------------------------------------------------------------------
# simulate (sweep and rebalance read timelines the same way)


def test_a_node_group_of_60_million_nodes_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(ROLLING_UPDATE.read_text().replace("perZone: 2", "perZone: 20000000"))
    assert refused(["simulate", str(big), "-o", "json"], capsys) == (
        f"{big}: nodeGroups[0]: perZone: 20000000 in each of 3 zone(s) would make the run "
        f"hold {NODE_BOUND}"
    )


def test_a_deployment_of_200_million_replicas_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(ROLLING_UPDATE.read_text().replace("replicas: 6", "replicas: 200000000", 1))
    assert refused(["simulate", str(big), "-o", "json"], capsys) == (
        f"{big}: objects[0]: Deployment default/plain: spec.replicas: 200000000 would make the "
        f"run hold {POD_BOUND}"
    )


def test_the_options_raise_the_bounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = timeline(tmp_path, nodeGroups=[GROUP], objects=[deployment(6)])
    assert refused(["simulate", str(path), "--max-nodes", "5"], capsys) == (
        f"{path}: nodeGroups[0]: perZone: 2 in each of 3 zone(s) would make the run hold more "
        "than the 5 nodes topospread simulates (--max-nodes raises the bound)"
    )
    assert refused(["simulate", str(path), "--max-pods", "5"], capsys) == (
        f"{path}: objects[0]: Deployment default/web: spec.replicas: 6 would make the run hold "
        "more than the 5 pods topospread simulates (--max-pods raises the bound)"
    )
    code, out, err = run(["simulate", str(path), "--max-nodes", "6", "--max-pods", "6"], capsys)
    assert code == 0, err
    assert "6 pods: 6 Running" in out


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        pytest.param(
            {"nodeGroups": [{"name": "workers", "count": BILLION}]},
            f"nodeGroups[0]: count: {BILLION} would make the run hold {NODE_BOUND}",
            id="node group count",
        ),
        pytest.param(
            {
                "nodeGroups": [
                    {"name": "workers", "zones": ["a", "b"], "perZone": {"a": 1, "b": BILLION}}
                ],
            },
            f"nodeGroups[0]: perZone: {BILLION + 1:,} in all would make the run hold {NODE_BOUND}",
            id="node group perZone per zone",
        ),
        pytest.param(
            {
                "nodeGroups": [GROUP],
                "timeline": [{"addNodes": {"group": "node", "zone": "a", "count": BILLION}}],
            },
            f"timeline[0] (addNodes): count: {BILLION} would bring the run to {BILLION + 6:,} "
            "nodes (6 asked for before it), " + NODE_BOUND,
            id="addNodes step",
        ),
        pytest.param(
            {
                "objects": [deployment(6)],
                "timeline": [{"scale": {"workload": "deployment/web", "replicas": BILLION}}],
            },
            f"timeline[0] (scale): replicas: {BILLION} would bring the run to {BILLION:,} pods (6 "
            "asked for before it), " + POD_BOUND,
            id="scale step",
        ),
        pytest.param(
            {"timeline": [{"apply": deployment(BILLION)}]},
            f"timeline[0] (apply)[0]: Deployment default/web: spec.replicas: {BILLION} would make "
            f"the run hold {POD_BOUND}",
            id="apply step",
        ),
        pytest.param(
            {"objects": [deployment(600_000), deployment(600_000, "api")]},
            "objects[1]: Deployment default/api: spec.replicas: 600000 would bring the run to "
            "1,200,000 pods (600,000 asked for before it), " + POD_BOUND,
            id="workloads together",
        ),
        pytest.param(
            {"objects": [workload("Job", {"parallelism": BILLION, "template": TEMPLATE})]},
            f"objects[0]: Job default/web: spec.parallelism: {BILLION} would make the run hold "
            f"{POD_BOUND}",
            id="Job parallelism",
        ),
        pytest.param(
            {
                "objects": [
                    workload(
                        "Job",
                        {"completions": BILLION, "completionMode": "Indexed", "template": TEMPLATE},
                    )
                ]
            },
            f"objects[0]: Job default/web: spec.completions: {BILLION} would make the run hold "
            f"{POD_BOUND}",
            id="Job completions",
        ),
        pytest.param(
            {
                "objects": [
                    workload(
                        "CronJob",
                        {
                            "schedule": "* * * * *",
                            "jobTemplate": {"spec": {"parallelism": BILLION, "template": TEMPLATE}},
                        },
                    )
                ]
            },
            f"objects[0]: CronJob default/web: spec.jobTemplate.spec.parallelism: {BILLION} would "
            f"make the run hold {POD_BOUND}",
            id="CronJob",
        ),
        pytest.param(
            {
                "nodeGroups": [{"name": "workers", "count": 100_000}],
                "objects": [
                    workload(
                        "DaemonSet",
                        {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE},
                        f"d{i}",
                    )
                    for i in range(11)
                ],
            },
            "objects[10]: DaemonSet default/d10: its pod on each of 100,000 nodes would bring the "
            "run to 1,100,000 pods (1,000,000 asked for before it), " + POD_BOUND,
            id="DaemonSets x nodes",
        ),
        pytest.param(
            {
                "objects": [
                    workload(
                        "StatefulSet",
                        {
                            "replicas": 600_000,
                            "selector": {"matchLabels": {"app": "web"}},
                            "template": TEMPLATE,
                            "volumeClaimTemplates": [
                                {
                                    "metadata": {"name": n},
                                    "spec": {
                                        "accessModes": ["ReadWriteOnce"],
                                        "resources": {"requests": {"storage": "1Gi"}},
                                    },
                                }
                                for n in ("data", "logs")
                            ],
                        },
                    )
                ]
            },
            "objects[0]: StatefulSet default/web: spec.volumeClaimTemplates: 2 claim(s) for each "
            "of 600000 replicas would make the run hold more than the 1,000,000 claims topospread "
            "simulates (--max-pods raises the bound)",
            id="StatefulSet claims",
        ),
        pytest.param(
            {
                "autoscaler": {
                    "clusterAutoscaler": {
                        "nodeGroups": [{"name": "own", "minSize": BILLION, "maxSize": BILLION}]
                    }
                }
            },
            f"autoscaler: own: size: {BILLION} would make the run hold {NODE_BOUND}",
            id="autoscaler node group size",
        ),
    ],
)
def test_each_count_that_makes_objects_is_bounded(
    doc: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = timeline(tmp_path, **doc)
    assert refused(["simulate", str(path), "-o", "json"], capsys) == f"{path}: {message}"


def test_autoscaler_max_sizes_and_pods_a_controller_owns_are_not_counted() -> None:
    owned = {
        **deployment(BILLION),
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-1",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": "web",
                    "uid": "u",
                    "controller": True,
                }
            ],
        },
    }
    doc = {
        "nodeGroups": [GROUP],
        "objects": [owned],
        "autoscaler": {
            "clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "maxSize": BILLION}]}
        },
    }
    budget = check_timeline(parse_timeline(doc, "x.yaml"), Limits())
    assert (budget.nodes, budget.pods) == (6, 0)


def test_sweeps_then_steps_are_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = timeline(tmp_path, nodeGroups=[GROUP], objects=[deployment(6)])
    then = tmp_path / "then.yaml"
    then.write_text(
        yaml.safe_dump([{"scale": {"workload": "deployment/web", "replicas": BILLION}}])
    )
    assert refused(["sweep", str(path), "--zones", "--then", str(then)], capsys) == (
        f"{then}: timeline[0] (scale): replicas: {BILLION} would bring the run to {BILLION:,} "
        "pods (6 asked for before it), " + POD_BOUND
    )


def test_a_sweep_of_too_many_runs_is_refused_before_its_failures_are_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = timeline(tmp_path, nodeGroups=[{**GROUP, "perZone": 100}])
    assert refused(["sweep", str(path), "--max-failures", "3"], capsys) == (
        "--max-failures 3 --seeds 1 on 300 nodes would make 4,500,250 runs, more than the "
        "1,000,000 runs a sweep replays (--max-pods raises the bound)"
    )
    assert refused(["sweep", str(path), "--zones", "--seeds", str(BILLION)], capsys) == (
        f"--zones --seeds {BILLION} on 300 nodes would make {3 * BILLION:,} runs, more than the "
        "1,000,000 runs a sweep replays (--max-pods raises the bound)"
    )


# ---------------------------------------------------------------------------------------------
# The other commands that read inputs


def test_schedule_refuses_workloads_given_as_pods_before_making_their_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text(yaml.safe_dump(deployment(BILLION)))
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}})
    )
    message = refused(["schedule", "--nodes", str(nodes), "--pods", str(pods)], capsys)
    assert message == (
        f"{pods}: object 1: Deployment default/web: spec.replicas: {BILLION} would make the run "
        f"hold {POD_BOUND}"
    )


def test_verify_refuses_its_workloads_before_making_their_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = timeline(tmp_path, nodes=[], workloads=[deployment(BILLION)])
    assert refused(["verify", str(path)], capsys) == (
        f"{path}: workloads[0]: Deployment default/web: spec.replicas: {BILLION} would make the "
        f"run hold {POD_BOUND}"
    )
    assert refused(["verify", str(path), "--max-pods", "5"], capsys).endswith(
        "more than the 5 pods topospread simulates (--max-pods raises the bound)"
    )


def test_check_refuses_a_generated_shape_and_chart_workloads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "chart.yaml"
    chart.write_text(yaml.safe_dump(deployment(3)))
    assert refused(
        ["check", str(chart), "--zones", "3", "--nodes-per-zone", str(BILLION)], capsys
    ) == (f"check: --zones 3 x --nodes-per-zone {BILLION} would make the run hold {NODE_BOUND}")
    chart.write_text(yaml.safe_dump(deployment(BILLION)))
    assert refused(["check", str(chart), "--zones", "3"], capsys) == (
        f"{chart}: object 1: Deployment default/web: spec.replicas: {BILLION} would make the "
        f"run hold {POD_BOUND}"
    )


def test_design_refuses_designs_past_the_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(
        ["design", "redis-cluster", "--shards", "100000000", "--zones", "a,b,c"], capsys
    ) == (
        "design redis-cluster: --shards 100000000 x (1 + --replicas 1) would make the run hold "
        f"{POD_BOUND}"
    )
    spread = ["design", "spread", "--selector", "app=a", "--topology-key", "zone"]
    assert refused(
        [*spread, "--replicas", str(BILLION), "--domains", "3", "--max-fraction", "0.5"], capsys
    ) == (f"design spread: --replicas {BILLION} would make the run hold {POD_BOUND}")
    assert refused(
        [
            *spread,
            "--replicas",
            "6",
            "--domains",
            "3",
            "--nodes-per-domain",
            str(BILLION),
            "--max-fraction",
            "0.5",
        ],
        capsys,
    ) == (
        f"design spread: --domains 3 x --nodes-per-domain {BILLION} would make the run hold "
        f"{NODE_BOUND}"
    )


def test_a_budget_refuses_the_count_that_takes_it_past_its_bound() -> None:
    budget = Budget(Limits(max_nodes=3, max_pods=3))
    budget.add_nodes(3, "f", "count: 3")
    with pytest.raises(SizeError, match=r"^f: count: 1 would bring the run to 4 nodes"):
        budget.add_nodes(1, "f", "count: 1")
    assert budget.nodes == 3


# ---------------------------------------------------------------------------------------------
# Out of memory


def test_running_out_of_memory_is_one_line_and_exit_code_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def exhausted(*_args: Any, **_kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(Inputs, "timeline", exhausted)
    code, out, err = run(["simulate", str(ROLLING_UPDATE)], capsys)
    assert (code, out, err) == (
        1,
        "",
        "topospread: error: out of memory while topospread simulate was reading its inputs\n",
    )
    from topospread.analysis import simulate as simulate_module

    monkeypatch.undo()
    monkeypatch.setattr(simulate_module, "simulate", exhausted)
    code, out, err = run(["simulate", str(ROLLING_UPDATE)], capsys)
    assert (code, err) == (
        1,
        "topospread: error: out of memory while topospread simulate was running\n",
    )


def test_a_memory_error_in_a_decoding_worker_is_the_same_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from topospread.api import loader

    def exhausted(*_args: Any, **_kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(loader, "load_manifests", exhausted)
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("{}")
    code, _, err = run(["schedule", "--nodes", str(nodes)], capsys)
    assert (code, err) == (
        1,
        "topospread: error: out of memory while topospread schedule was reading its inputs\n",
    )


# ---------------------------------------------------------------------------------------------
# Ctrl-C before the work


def console(args: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """The ``topospread`` console script (as pip writes it) in a new process."""
    script = "import sys\nfrom topospread.console import topospread\nsys.exit(topospread())"
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen([sys.executable, "-c", script, *args], env=env, **kwargs)


def test_ctrl_c_while_the_inputs_are_read_is_one_line_and_130(tmp_path: Path) -> None:
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)
    proc = console(["simulate", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Opening the pipe for writing waits until the command opens it to read its scenario.
    writer = os.open(fifo, os.O_WRONLY)
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    assert (proc.returncode, out) == (130, b"")
    assert err == b"topospread: interrupted before the work began: nothing to report\n"


def test_ctrl_c_while_the_console_script_imports_is_one_line_and_130(tmp_path: Path) -> None:
    # A module that receives SIGINT while it is imported, as the command line's modules might.
    (tmp_path / "interrupted_import.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nimport json\n"
    )
    script = (
        "import sys\nfrom topospread import console\n"
        "console.load('interrupted_import')\nprint('not reached')"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, str(tmp_path)])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (130, b"")
    assert done.stderr == b"topospread: interrupted while starting: nothing to report\n"


def test_the_console_scripts_go_through_the_guarded_entry_points() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert 'topospread = "topospread.console:topospread"' in text
    assert 'kubectl-topospread = "topospread.console:kubectl_topospread"' in text
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, topospread.console\n"
            "print('topospread.cli' in sys.modules, 'typing' in sys.modules)",
        ],
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == "False False\n"  # nothing imported before the guard is in place


def test_a_cluster_dumps_pods_are_counted_unless_a_controller_owns_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def pod(name: str, **meta: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, **meta},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]},
        }

    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u"}
    dump = tmp_path / "cluster.yaml"
    items = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        pod("a"),
        pod("b"),
        pod("c", ownerReferences=[{**owner, "controller": True}]),
    ]
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    assert refused(["simulate", "--cluster", str(dump), "--max-pods", "1"], capsys) == (
        "cluster: objects: 2 pods listed would make the run hold more than the 1 pods "
        "topospread simulates (--max-pods raises the bound)"
    )
