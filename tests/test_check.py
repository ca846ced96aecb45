"""``topospread check``: chart output (multi-document YAML, Lists, JSON, CRDs mixed in) against
a cluster shape; each mistake the linter names; zone and node losses; GitHub annotations."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from builders import make_node
from test_cli import readme_output, run
from topospread.analysis.check import Shape, check, lint
from topospread.api.loader import load_text

ZONE = "topology.kubernetes.io/zone"


def deployment(
    name: str = "web",
    replicas: int = 6,
    *,
    constraint: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    cpu: str = "500m",
) -> dict[str, Any]:
    c = {
        "maxSkew": 1,
        "topologyKey": ZONE,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": name}},
        "matchLabelKeys": ["pod-template-hash"],
        **(constraint or {}),
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": labels or {"app": name}},
                "spec": {
                    "containers": [
                        {"name": name, "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
                    ],
                    "topologySpreadConstraints": [c],
                },
            },
        },
    }


CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {}}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com"},
}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}


def helm_template(*docs: dict[str, Any]) -> str:
    """Objects as ``helm template`` prints them: one document each, a Source comment first."""
    return "".join(
        f"---\n# Source: chart/templates/{d['kind'].lower()}.yaml\n{yaml.safe_dump(d)}"
        for d in docs
    )


def objects(text: str, name: str = "out.yaml") -> list[tuple[str, Any]]:
    return [(f"{name}: object {i + 1}", o) for i, o in enumerate(load_text(text, name))]


SHAPE = Shape(zones=3, nodes_per_zone=2)


@pytest.mark.parametrize(
    "shape",
    ["helm", "list", "json", "kustomize"],
)
def test_chart_output_in_every_shape_passes_and_names_the_kinds_left_out(
    shape: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [CONFIG_MAP, deployment(), CRD, WIDGET]
    if shape == "helm":
        text = helm_template(*docs)
    elif shape == "list":
        text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": docs})
    elif shape == "json":
        text = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs})
    else:  # kustomize build: documents separated by ---, no comments, keys sorted
        text = "---\n".join(yaml.safe_dump(d, sort_keys=True) for d in docs)
    path = tmp_path / "out.yaml"
    path.write_text(text)
    code, out, err = run(["check", str(path), "--zones", "3", "--nodes-per-zone", "2"], capsys)
    assert code == 0 and err == "", err
    assert out.startswith(f"PASS: {path}: 1 workload(s) on 6 node(s); 0 error(s), 0 warning(s)")
    assert out.splitlines()[-1] == (
        "note: read and left out (the scheduler does not need them): "
        "1 ConfigMap, 1 CustomResourceDefinition, 1 Widget"
    )


def test_pods_that_cannot_all_fit_fail_with_the_scheduler_message() -> None:
    report = check(
        objects(helm_template(deployment(replicas=40, cpu="2"))), source="t", shape=SHAPE
    )
    assert not report.passed
    (pending,) = [f for f in report.errors if f.rule == "pending"]
    assert pending.obj == "Deployment default/web" and pending.where == "out.yaml: object 1"
    assert pending.message.startswith("16 pod(s) stay Pending (")
    assert "Insufficient cpu" in pending.message


def test_standard_input_and_the_github_format(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = helm_template(deployment(constraint={"matchLabelKeys": []}), CONFIG_MAP)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    code, out, _ = run(["check", "-", "--zones", "3", "--format", "github"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "::warning title=topospread rollout-skew%3A Deployment default/web::"
        "topologySpreadConstraints[0]: without matchLabelKeys: [pod-template-hash] a rollout "
        "counts the old and new ReplicaSets' pods together, and the new revision can end up "
        "skewed"
    )
    assert lines[1] == (
        "::notice title=topospread::read and left out (the scheduler does not need them): "
        "1 ConfigMap"
    )
    assert lines[2].startswith("PASS: <stdin>:")


def test_annotations_name_the_file_of_the_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chart.yaml"
    path.write_text(helm_template(deployment(replicas=40, cpu="2")))
    code, out, _ = run(["check", str(path), "--zones", "3", "-o", "github"], capsys)
    assert code == 1
    assert out.startswith(
        f"::error file={path},title=topospread pending%3A Deployment default/web::16 pod(s)"
    )


MISTAKES = [
    ("selector-matches-nothing",
     deployment(constraint={"labelSelector": {"matchLabels": {"app": "api"}}}),
     "labelSelector app=api matches none of its own pods (labels app=web)"),
    ("unknown-topology-key", deployment(constraint={"topologyKey": "rack"}),
     "topologyKey rack is on no node (hard: every pod stays Pending)"),
    ("max-skew-never-restricts", deployment(replicas=3, constraint={"maxSkew": 3}),
     "maxSkew 3 ≥ 3 replicas: all of them may share one domain"),
    ("min-domains-unreachable", deployment(replicas=9, constraint={"minDomains": 5, "maxSkew": 2}),
     "minDomains 5 with 3 topology.kubernetes.io/zone domain(s): the global minimum stays 0, so "
     "at most maxSkew 2 matching pods per domain: room for 6 of 9 replicas; 3 of 9 stay Pending "
     "in this run"),
    ("rollout-skew", deployment(constraint={"matchLabelKeys": []}),
     "without matchLabelKeys: [pod-template-hash]"),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "doc", "text"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_each_mistake_is_named(rule: str, doc: dict[str, Any], text: str) -> None:
    report = check(objects(helm_template(doc)), source="t", shape=SHAPE)
    found = [f for f in report.findings if f.rule == rule]
    assert found and text in found[0].message, report.findings
    assert found[0].level == "warning"
    others = {f.rule for f in report.warnings} - {rule}
    assert not others, others  # each document has only its own mistake


def test_the_min_domains_warning_quotes_the_pending_pods_of_the_run() -> None:
    doc = deployment(replicas=3, constraint={"minDomains": 3})
    report = check(objects(helm_template(doc)), source="t", shape=Shape(zones=2))
    (pending,) = [f for f in report.errors if f.rule == "pending"]
    assert pending.message.startswith("1 pod(s) stay Pending")
    (warning,) = [f for f in report.warnings if f.rule == "min-domains-unreachable"]
    assert warning.message.endswith("room for 2 of 3 replicas; 1 of 3 stay Pending in this run")
    # Checked alone, before any run, it says the risk and no count.
    nodes = [make_node(f"n-{z}").label(ZONE, z).obj() for z in "ab"]
    (alone,) = [f for f in lint(objects(helm_template(doc)), nodes)
                if f.rule == "min-domains-unreachable"]  # fmt: skip
    assert alone.message.endswith("room for 2 of 3 replicas")


def test_a_constraint_without_a_label_selector_restricts_nothing_and_says_so() -> None:
    """The scheduler reads an absent labelSelector as matching nothing: the run places every
    replica, so the minDomains room (for pods the constraint does not count) is not claimed."""
    doc = deployment(replicas=3, constraint={"minDomains": 3})
    c = doc["spec"]["template"]["spec"]["topologySpreadConstraints"][0]
    del c["labelSelector"], c["matchLabelKeys"]
    report = check(objects(helm_template(doc)), source="t", shape=Shape(zones=2))
    assert report.passed and report.placed is not None and not report.placed.pending
    rules = {f.rule: f.message for f in report.warnings}
    assert "min-domains-unreachable" not in rules
    assert rules["selector-matches-nothing"] == (
        "topologySpreadConstraints[0]: no labelSelector: the constraint counts no pods (its own "
        "included) and never restricts"
    )


def test_min_domains_without_do_not_schedule_is_the_api_servers_error() -> None:
    doc = deployment(constraint={"whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2})
    report = check(objects(helm_template(doc)), source="t", shape=SHAPE)
    (f,) = report.errors
    assert f.rule == "min-domains-schedule-anyway" and report.placed is None
    assert "can only use minDomains if whenUnsatisfiable=DoNotSchedule" in f.message


def test_survive_zone_finds_the_tainted_zone_trap_and_honor_survives() -> None:
    trapped = check(objects(helm_template(deployment())), source="t", shape=SHAPE, survive=["zone"])
    assert trapped.survived == ["zone region-1a", "zone region-1b", "zone region-1c"]
    assert {f.rule for f in trapped.errors} == {"survive-zone"}
    honor = deployment(constraint={"nodeTaintsPolicy": "Honor"})
    survived = check(objects(helm_template(honor)), source="t", shape=SHAPE, survive=["zone"])
    assert survived.passed, survived.errors


def test_survive_node_replays_every_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(helm_template(deployment(replicas=3, constraint={"maxSkew": 2})))
    code, out, _ = run(
        ["check", str(path), "--zones", "3", "--survive", "node", "-o", "json"], capsys
    )
    report = json.loads(out)
    assert len(report["survived"]) == 6 and code == (0 if report["passed"] else 1)


def test_a_cluster_from_node_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {
                        "apiVersion": "v1",
                        "kind": "Node",
                        "metadata": {"name": f"n{i}", "labels": {ZONE: z}},
                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
                    }
                    for i, z in enumerate("ab")
                ],
            }
        )
    )
    chart = tmp_path / "chart.yaml"
    chart.write_text(helm_template(deployment(replicas=4)))
    code, out, _ = run(["check", str(chart), "--cluster", str(nodes)], capsys)
    assert code == 0 and "1 workload(s) on 2 node(s)" in out


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "chart.yaml"
    chart.write_text(helm_template(deployment()))
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        ([str(chart)], "give the cluster once"),
        ([str(chart), "--zones", "3", "--cluster", str(chart)], "give the cluster once"),
        ([str(chart), "--zones", "3", "--survive", "rack"], '--survive: Unsupported value: "rack"'),
        ([str(tmp_path / "nope.yaml"), "--zones", "3"], "nope.yaml: no such file or directory"),
        ([str(empty), "--zones", "3"], "no manifest (*.yaml, *.yml, *.json) found"),
        # Zones are named <region>a to <region>z: a 27th was an IndexError (a traceback).
        (
            [str(chart), "--zones", "27"],
            "check: Invalid value for '--zones': Input should be less than or equal to 26",
        ),
    ]
    for argv, message in cases:
        code, out, err = run(["check", *argv], capsys)
        assert code == 2 and out == "" and message in err, (argv, err)
        assert len(err.splitlines()) == 1


def test_lint_reads_the_templates_of_every_workload_kind() -> None:
    sts = deployment(constraint={"labelSelector": {"matchLabels": {"app": "other"}}})
    sts["kind"] = "StatefulSet"
    sts["spec"]["serviceName"] = "web"
    found = lint(objects(helm_template(sts)), [])
    assert [f.rule for f in found] == [
        "selector-matches-nothing"
    ]  # no rollout-skew: not a Deployment


def test_the_pre_commit_hook_runs_the_installed_command(tmp_path: Path) -> None:
    """The hook's entry and default arguments, run as pre-commit runs them: the command from
    the package's environment, then the arguments, then the changed files."""
    hooks = yaml.safe_load(
        (Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml").read_text()
    )
    (hook,) = hooks
    assert hook["id"] == "topospread-check" and hook["language"] == "python"
    good = tmp_path / "good.yaml"
    good.write_text(helm_template(deployment()))
    bad = tmp_path / "bad.yaml"
    bad.write_text(helm_template(deployment(replicas=40, cpu="2")))
    entry = hook["entry"].split()
    entry[0] = str(Path(sys.executable).parent / entry[0])
    assert subprocess.run([*entry, *hook["args"], str(good)], capture_output=True).returncode == 0
    done = subprocess.run(
        [*entry, *hook["args"], str(good), str(bad)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "stay Pending" in done.stdout


def test_readme_shows_exactly_what_check_prints(capsys: pytest.CaptureFixture[str]) -> None:
    command = "topospread check examples/check/web.yaml --zones 3 --nodes-per-zone 2 --survive zone"
    shown = readme_output(command)
    code, out, _ = run(command.split()[1:], capsys)
    assert code == 1 and shown == out.rstrip("\n")


def test_a_file_that_does_not_parse_is_one_line_on_stderr(tmp_path: Path) -> None:
    """The fast YAML parser's own C++ error output never reaches the terminal: the exact
    parser's message is the one line (a subprocess: the C++ writes to descriptor 2)."""
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    command = Path(sys.executable).parent / "topospread"
    done = subprocess.run(
        [str(command), "check", str(broken), "--zones", "3"], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"topospread: error: {broken}: line 2, column 1: could not parse YAML: did not find "
        "expected node content (while parsing a flow node at line 2, column 1)"
    ]


# ---------------------------------------------------------------------------------------------
# Every pod-making kind placed; every other kind counted once


def guestbook_rc(replicas: int = 30, *, topology_key: str = ZONE, cpu: str = "7") -> dict[str, Any]:
    """kubernetes/examples' guestbook redis-master ReplicationController, with a zone
    constraint: no spec.selector (it defaults to the template's labels)."""
    return {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "redis-master", "labels": {"app": "redis", "role": "master"}},
        "spec": {
            "replicas": replicas,
            "template": {
                "metadata": {"labels": {"app": "redis", "role": "master", "tier": "backend"}},
                "spec": {
                    "containers": [
                        {
                            "name": "master",
                            "image": "registry.k8s.io/redis:e2e",
                            "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}},
                            "ports": [{"containerPort": 6379}],
                        }
                    ],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": topology_key,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": {"app": "redis"}},
                        }
                    ],
                },
            },
        },
    }


def test_a_replication_controller_with_an_impossible_topology_key_fails_and_is_named() -> None:
    rc = guestbook_rc(topology_key="example.com/rack")
    report = check(objects(helm_template(rc)), source="t", shape=SHAPE)
    assert not report.passed and report.workloads == 1
    (pending,) = [f for f in report.errors if f.rule == "pending"]
    assert (pending.obj, pending.where) == (
        "ReplicationController default/redis-master",
        "out.yaml: object 1",
    )
    assert pending.message.startswith("30 pod(s) stay Pending (default/redis-master-")
    (unknown,) = [f for f in report.warnings if f.rule == "unknown-topology-key"]
    assert unknown.obj == "ReplicationController default/redis-master"


def test_a_replication_controllers_pods_are_placed_and_spread_under_it() -> None:
    report = check(objects(helm_template(guestbook_rc(6, cpu="1"))), source="t", shape=SHAPE)
    assert report.passed, report.findings
    assert report.placed is not None
    placed = [p for p in report.placed.bound if p.startswith("default/redis-master-")]
    assert len(placed) == 6
    (w,) = report.placed.workloads
    assert w.workload == "replicationcontroller default/redis-master"
    assert sorted(w.constraints[0].view.counts.values()) == [2, 2, 2]


def cron_job(suspend: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "report"},
        "spec": {
            "schedule": "*/5 * * * *",
            "suspend": suspend,
            "jobTemplate": {
                "spec": {
                    "parallelism": 3,
                    "completions": 3,
                    "template": {
                        "metadata": {"labels": {"app": "report"}},
                        "spec": {
                            "restartPolicy": "OnFailure",
                            "containers": [{"name": "c", "image": "busybox"}],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": ZONE,
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": {"matchLabels": {"app": "report"}},
                                }
                            ],
                        },
                    },
                }
            },
        },
    }


def test_a_cron_jobs_next_job_has_its_pods_placed() -> None:
    report = check(objects(helm_template(cron_job())), source="t", shape=SHAPE)
    assert report.passed and report.workloads == 1
    assert report.placed is not None
    # The clock starts at the Unix epoch: the first run is at 00:05, minute 5.
    placed = sorted(p for p in report.placed.bound if p.startswith("default/report-5-"))
    assert len(placed) == 3
    (w,) = report.placed.workloads
    assert w.workload == "cronjob default/report"
    assert sorted(w.constraints[0].view.counts.values()) == [1, 1, 1]


def test_a_suspended_cron_job_creates_no_job() -> None:
    report = check(objects(helm_template(cron_job(suspend=True))), source="t", shape=SHAPE)
    assert report.passed and report.placed is not None and report.placed.bound == {}


def test_bare_pods_are_placed_and_checked() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big"},
        "spec": {
            "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "9"}}}]
        },
    }
    report = check(objects(helm_template(pod)), source="t", shape=SHAPE)
    (pending,) = report.errors
    assert pending.obj == "Pod default/big" and "Insufficient cpu" in pending.message


def test_kinds_left_out_are_counted_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ingress = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "i"}}
    maps = [{**CONFIG_MAP, "metadata": {"name": f"c{i}"}} for i in range(3)]
    path = tmp_path / "out.yaml"
    path.write_text(helm_template(*maps, ingress, guestbook_rc(3, cpu="1"), cron_job()))
    code, out, err = run(["check", str(path), "--zones", "3"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"PASS: {path}: 2 workload(s) on 6 node(s)")
    assert lines[-1] == (
        "note: read and left out (the scheduler does not need them): 3 ConfigMap, 1 Ingress"
    )
    assert sum("left out" in line for line in lines) == 1


def test_pod_making_objects_that_are_not_modelled_are_findings_never_left_out() -> None:
    old = {**deployment("old"), "apiVersion": "extensions/v1beta1"}
    rollout = {**deployment("ro"), "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"}
    report = check(objects(helm_template(old, rollout)), source="t", shape=SHAPE)
    assert not report.passed and report.ignored == {}
    assert report.unmodelled == {
        "Deployment (extensions/v1beta1)": 1,
        "Rollout (argoproj.io/v1alpha1)": 1,
    }
    (error,) = report.errors
    assert (error.rule, error.obj) == ("not-modelled", "Deployment default/old")
    assert error.message.startswith(
        'no matches for kind "Deployment" in version "extensions/v1beta1"'
    )
    (warning,) = report.warnings
    assert (warning.rule, warning.obj) == ("not-modelled", "Rollout default/ro")


# ---------------------------------------------------------------------------------------------
# Generated nodes look like real ones


def with_pod_spec(doc: dict[str, Any], **spec: Any) -> dict[str, Any]:
    doc["spec"]["template"]["spec"].update(spec)
    return doc


def test_a_generated_shape_has_ephemeral_storage_and_the_os_label() -> None:
    web = deployment(replicas=6)
    container = web["spec"]["template"]["spec"]["containers"][0]
    container["resources"]["requests"]["ephemeral-storage"] = "2Gi"
    with_pod_spec(web, nodeSelector={"kubernetes.io/os": "linux"})
    report = check(objects(helm_template(web)), source="t", shape=SHAPE)
    assert report.passed, report.findings


def test_generated_nodes_carry_the_labels_and_resources_of_real_nodes() -> None:
    from topospread.simulator.simulation import Simulation
    from topospread.simulator.timeline_format import parse_timeline

    shape = Shape(zones=2, nodes_per_zone=1, ephemeral_storage="50Gi", pods=64, arch="arm64")
    sim = Simulation(parse_timeline({"nodeGroups": shape.node_groups()}, "t"))
    node = sim.cluster.infos["node-region-1a-1"].node
    assert node.metadata.labels == {
        "kubernetes.io/hostname": "node-region-1a-1",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64",
        "node.kubernetes.io/instance-type": "8cpu-32Gi",
        "topology.kubernetes.io/zone": "region-1a",
        "topology.kubernetes.io/region": "region-1",
    }
    resources = {"cpu": "8", "memory": "32Gi", "ephemeral-storage": "50Gi", "pods": "64"}
    assert node.status.capacity == resources and node.status.allocatable == resources


def test_the_generated_shape_takes_its_node_labels_and_resources_from_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chart = tmp_path / "arm.yaml"
    chart.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: arm}\nspec:\n"
        "  replicas: 2\n  selector: {matchLabels: {app: arm}}\n  template:\n"
        "    metadata: {labels: {app: arm}}\n    spec:\n"
        "      nodeSelector:\n"
        "        {kubernetes.io/arch: arm64, topology.kubernetes.io/region: eu-west-1}\n"
        "      containers:\n"
        "      - {name: c, image: x, resources: {requests: {ephemeral-storage: 150Gi}}}\n"
    )
    code, out, _ = run(["check", str(chart), "--zones", "2"], capsys)
    assert code == 1 and "FAIL" in out
    flags = ["--node-arch", "arm64", "--region", "eu-west-1", "--node-ephemeral-storage", "200Gi"]
    code, out, err = run(["check", str(chart), "--zones", "2", *flags], capsys)
    assert code == 0, out + err
