"""``topospread check`` on chart output with Helm hooks, as ``helm install`` (Helm v3) runs
them: tests and other events' hooks left out, pre-install hooks one at a time before the
release, post-install hooks beside it, each finding naming the hook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_check import deployment, objects
from test_cli import readme_output, run
from topospread.analysis.check import Shape, check
from topospread.analysis.check_hooks import hook_weight, split_release

# Three zones of one node with 2 CPUs: six pods of 1 CPU fill it.
SMALL = Shape(zones=3, nodes_per_zone=1, cpu="2")


def helm_template(*docs: tuple[str, dict[str, Any]]) -> str:
    """``helm template`` output: each document after a Source comment naming its template."""
    return "".join(f"---\n# Source: web/templates/{path}\n{yaml.safe_dump(d)}" for path, d in docs)


def hooked(doc: dict[str, Any], hook: str, **annotations: str) -> dict[str, Any]:
    meta = doc["metadata"]
    meta["annotations"] = {"helm.sh/hook": hook, **annotations}
    return doc


def job(name: str, cpu: str = "2", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}
                    ],
                }
            },
            **spec,
        },
    }


def connection_test_pod(cpu: str = "100m", hook: str = "test") -> dict[str, Any]:
    """``helm create``'s templates/tests/test-connection.yaml, with a CPU request."""
    return hooked(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web-test-connection"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "wget",
                        "image": "busybox",
                        "command": ["wget"],
                        "args": ["web:80"],
                        "resources": {"requests": {"cpu": cpu}},
                    }
                ],
            },
        },
        hook,
    )


def web(replicas: int = 6, cpu: str = "1", **constraint: Any) -> tuple[str, dict[str, Any]]:
    return "deployment.yaml", deployment(replicas=replicas, cpu=cpu, constraint=constraint)


def test_a_chart_test_pod_is_left_out_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The test Pod would take the room of a replica: helm install never creates it."""
    text = helm_template(web(), ("tests/test-connection.yaml", connection_test_pod()))
    report = check(objects(text), source="t", shape=SMALL)
    assert report.passed, report.findings
    assert report.placed is not None and "default/web-test-connection" not in report.placed.bound
    assert len(report.placed.bound) == 6
    assert [h.to_json() for h in report.hooks_not_run] == [
        {"object": "Pod default/web-test-connection", "where": "out.yaml: object 2",
         "hooks": ["test"]}
    ]  # fmt: skip
    path = tmp_path / "out.yaml"
    path.write_text(text)
    args = ["check", str(path), "--zones", "3", "--nodes-per-zone", "1", "--node-cpu", "2"]
    code, out, _ = run(args, capsys)
    assert code == 0
    assert out.splitlines()[-1] == (
        "note: hooks helm install does not run, left out: Pod default/web-test-connection (test)"
    )
    code, out, _ = run([*args, "-o", "json"], capsys)
    assert json.loads(out)["hooksNotRun"] == [
        {"object": "Pod default/web-test-connection", "where": f"{path}: object 2",
         "hooks": ["test"]}
    ]  # fmt: skip


def test_hooks_of_other_events_are_left_out_and_unknown_events_skip_the_object() -> None:
    upgrade = hooked(job("upgrade-migrate"), "pre-upgrade, Post-Upgrade")
    legacy = connection_test_pod(hook="test-success")
    failing = hooked(job("test-fails", cpu="100m"), "test-failure")
    text = helm_template(
        web(), ("upgrade.yaml", upgrade), ("legacy.yaml", legacy), ("fails.yaml", failing)
    )
    report = check(objects(text), source="t", shape=SMALL)
    assert [h.note() for h in report.hooks_not_run] == [
        "Job default/upgrade-migrate (pre-upgrade,post-upgrade)",
        "Pod default/web-test-connection (test)",
        "Job default/test-fails (test-failure)",
    ]
    assert report.passed and report.workloads == 1
    (warning,) = report.warnings
    assert (warning.rule, warning.obj, warning.where) == (
        "unknown-hook",
        "Job default/test-fails",
        "out.yaml: object 4",
    )
    assert warning.message == (
        "helm.sh/hook: test-failure: 'test-failure' is not a Helm 3 hook event: helm skips "
        "the object (it is neither created nor run)"
    )


def test_a_pre_install_job_runs_before_the_release_and_then_takes_no_room() -> None:
    """The migration needs a whole node; placed with the Deployment it took the room of two
    replicas. It runs first, completes, and the six replicas then fit."""
    migrate = hooked(job("migrate"), "pre-install", **{"helm.sh/hook-weight": "-5"})
    report = check(objects(helm_template(web(), ("migrate.yaml", migrate))), source="t",
                   shape=SMALL)  # fmt: skip
    assert report.passed, report.findings
    assert report.placed is not None
    assert sorted(report.placed.bound) == sorted(
        k for k in report.placed.bound if k.startswith("default/web-")
    )
    assert len(report.placed.bound) == 6 and not report.placed.pending


def test_a_pre_install_job_that_cannot_schedule_is_an_error_naming_the_hook() -> None:
    migrate = hooked(job("migrate", cpu="3"), "pre-install")
    report = check(objects(helm_template(web(), ("migrate.yaml", migrate))), source="t",
                   shape=SMALL)  # fmt: skip
    (error,) = report.errors
    assert (error.rule, error.obj, error.where) == (
        "hook-pending",
        "Job default/migrate",
        "out.yaml: object 2",
    )
    assert error.message.startswith("pre-install hook: 1 pod(s) stay Pending (default/migrate-")
    assert (
        "helm install waits for the Job to complete and fails when --timeout (5m0s) passes: "
        "0/3 nodes are available: 3 Insufficient cpu."
    ) in error.message
    # The release is still checked: its six replicas fit.
    assert report.placed is not None and len(report.placed.bound) == 6


def test_pre_install_hooks_run_one_at_a_time_by_weight_and_a_job_to_its_completions() -> None:
    """Each hook alone needs the whole cluster: one at a time they all run (a Job of three
    completions, one pod at a time, each a whole node), and so does the release."""
    first = hooked(job("b-first", cpu="2", completions=3, parallelism=3), "pre-install",
                   **{"helm.sh/hook-weight": "-1"})  # fmt: skip
    second = hooked(job("a-second", cpu="2", completions=4, parallelism=2), "pre-install")
    pod = connection_test_pod(cpu="2", hook="pre-install")
    docs = [("b.yaml", first), ("a.yaml", second), ("pod.yaml", pod), web(cpu="1")]
    report = check(objects(helm_template(*docs)), source="t", shape=SMALL)
    assert report.passed, report.findings
    assert [h.name for h in split_release(objects(helm_template(*docs))).hooks] == [
        "Job default/b-first",  # weight -1
        "Job default/a-second",  # weight 0, by name
        "Pod default/web-test-connection",
    ]


def test_a_post_install_job_is_placed_beside_the_release_and_pending_is_an_error() -> None:
    seed = hooked(job("seed", cpu="1"), "post-install")
    report = check(objects(helm_template(web(), ("seed.yaml", seed))), source="t", shape=SMALL)
    (error,) = report.errors
    assert (error.rule, error.obj) == ("hook-pending", "Job default/seed")
    assert error.message.startswith("post-install hook: 1 pod(s) stay Pending (default/seed-")
    assert report.placed is not None and len(report.placed.bound) == 6
    # Run before the release (pre-install) it fits and is done before the replicas come.
    early = hooked(job("seed", cpu="1"), "pre-install")
    assert check(objects(helm_template(web(), ("seed.yaml", early))), source="t",
                 shape=SMALL).passed  # fmt: skip


def test_a_hook_for_both_events_runs_twice_and_may_collide_with_itself() -> None:
    """The pre-install run has the cluster to itself; the post-install run (its
    before-hook-creation policy deletes the first Job) finds no node with 2 CPUs free."""
    both = hooked(job("seed", cpu="2"), "pre-install,post-install")
    report = check(objects(helm_template(web(4), ("seed.yaml", both))), source="t", shape=SMALL)
    (error,) = report.errors
    assert error.message.startswith("post-install hook: 1 pod(s) stay Pending")
    assert check(objects(helm_template(web(4), ("seed.yaml", hooked(job("seed", cpu="1"),
                 "pre-install,post-install")))), source="t", shape=SMALL).passed  # fmt: skip
    kept = hooked(job("seed", cpu="1"), "pre-install,post-install",
                  **{"helm.sh/hook-delete-policy": "hook-failed"})  # fmt: skip
    report = check(objects(helm_template(web(4), ("seed.yaml", kept))), source="t", shape=SMALL)
    (error,) = report.errors
    assert (error.rule, error.obj) == ("hook-exists", "Job default/seed")
    assert error.message == (
        "post-install hook: helm install fails: Job seed already exists (the "
        "pre-install,post-install hook left it; no before-hook-creation delete policy)"
    )


def test_a_long_running_hook_stays_and_its_findings_name_the_hook() -> None:
    """helm waits only for Jobs and Pods: a Deployment made as a hook is created and runs
    on; the linter's warning on it says which hook it is."""
    _, sidecar = web(2, cpu="1", matchLabelKeys=[])
    sidecar["metadata"]["name"] = "cache"
    sidecar = hooked(sidecar, "pre-install")
    report = check(objects(helm_template(("cache.yaml", sidecar))), source="t", shape=SMALL)
    assert report.placed is not None and len(report.placed.bound) == 2
    (warning,) = report.warnings
    assert warning.rule == "rollout-skew" and warning.obj == "Deployment default/cache"
    assert warning.message.startswith(
        "pre-install hook: topologySpreadConstraints[0]: without matchLabelKeys"
    )


def test_survive_checks_the_release_without_the_finished_hooks() -> None:
    """Losing a zone leaves room for the four replicas, not for them and the migration (a
    whole node); the migration ran before the release and is done."""
    migrate = hooked(job("migrate", cpu="4"), "pre-install")
    docs = [web(4, cpu="1", nodeTaintsPolicy="Honor"), ("migrate.yaml", migrate)]
    shape = Shape(zones=3, nodes_per_zone=1, cpu="4")
    report = check(objects(helm_template(*docs)), source="t", shape=shape, survive=["zone"])
    assert report.passed, report.findings
    assert len(report.survived) == 3


@pytest.mark.parametrize(
    ("text", "weight"),
    [("5", 5), ("+5", 5), ("-3", -3), (" 5", 0), ("1e3", 0), ("1_000", 0), ("", 0),
     ("9223372036854775807", 9223372036854775807), ("9223372036854775808", 0),
     ("-9223372036854775808", -9223372036854775808), (None, 0)],
)  # fmt: skip
def test_a_hook_weight_is_read_as_go_reads_it(text: str | None, weight: int) -> None:
    assert hook_weight(text) == weight


def test_hooks_of_one_weight_and_name_go_in_helms_kind_order() -> None:
    docs = [
        ("job.yaml", hooked(job("setup"), "pre-install")),
        ("widget.yaml", hooked({"apiVersion": "example.com/v1", "kind": "Widget",
                                "metadata": {"name": "setup"}}, "pre-install")),
        ("sa.yaml", hooked({"apiVersion": "v1", "kind": "ServiceAccount",
                            "metadata": {"name": "setup"}}, "pre-install")),
    ]  # fmt: skip
    release = split_release(objects(helm_template(*docs)))
    assert [h.kind for h in release.hooks] == ["ServiceAccount", "Job", "Widget"]


def test_readme_shows_exactly_what_check_prints_for_a_chart_with_hooks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    command = "topospread check examples/check/hooks.yaml --zones 3 --nodes-per-zone 1 --node-cpu 2"
    shown = readme_output(command)
    code, out, _ = run(command.split()[1:], capsys)
    assert code == 0 and shown == out.rstrip("\n")


def test_the_autoscaler_adds_nodes_for_a_pre_install_hooks_pending_pods(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two migration pods of a whole node each on one node: cluster-autoscaler adds a node
    within helm's timeout, both run, and the verdict counts the node."""
    migrate = hooked(job("migrate", cpu="2", completions=2, parallelism=2), "pre-install")
    chart = tmp_path / "chart.yaml"
    chart.write_text(helm_template(web(1, cpu="1"), ("migrate.yaml", migrate)))
    ca = Path(__file__).resolve().parents[1] / "examples" / "check" / "cluster-autoscaler.yaml"
    args = ["check", str(chart), "--zones", "1", "--nodes-per-zone", "1", "--node-cpu", "2"]
    code, out, _ = run(args, capsys)
    assert code == 1 and "pre-install hook: 1 pod(s) stay Pending (default/migrate-" in out
    code, out, _ = run([*args, "--autoscaler", str(ca)], capsys)
    assert code == 0, out
    assert "  autoscaler: fits with cluster-autoscaler adding 1 node(s) (node-region-1a +1)" in out


def test_helm_timeout_bounds_how_long_a_hook_waits_for_the_autoscalers_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The node cluster-autoscaler adds comes after helm install's --timeout when it is short:
    the hook fails, and the finding names that timeout; the default (5m0s) waits for it."""
    migrate = hooked(job("migrate", cpu="2", completions=2, parallelism=2), "pre-install")
    chart = tmp_path / "chart.yaml"
    chart.write_text(helm_template(web(1, cpu="1"), ("migrate.yaml", migrate)))
    ca = Path(__file__).resolve().parents[1] / "examples" / "check" / "cluster-autoscaler.yaml"
    args = ["check", str(chart), "--zones", "1", "--nodes-per-zone", "1", "--node-cpu", "2",
            "--autoscaler", str(ca)]  # fmt: skip
    code, out, _ = run([*args, "--helm-timeout", "5s"], capsys)
    assert code == 1, out
    assert "pre-install hook: 1 pod(s) stay Pending even with cluster-autoscaler" in out
    assert "fails when --timeout (5s) passes" in out
    assert run([*args, "--helm-timeout", "10m"], capsys)[0] == 0
    code, _, err = run([*args, "--helm-timeout", "soon"], capsys)
    assert code == 2 and '--helm-timeout: Invalid value: "soon"' in err


def test_a_hook_the_api_server_refuses_before_the_release_exists_is_an_error() -> None:
    """The pre-install Job's pods name the chart's PriorityClass, which the release creates
    only after the hook: the Job controller cannot create them, and helm install fails."""
    high = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "high"}, "value": 1000}  # fmt: skip
    migrate = hooked(job("migrate", cpu="1"), "pre-install")
    migrate["spec"]["template"]["spec"]["priorityClassName"] = "high"
    docs = [("priorityclass.yaml", high), web(2), ("migrate.yaml", migrate)]
    report = check(objects(helm_template(*docs)), source="t", shape=SMALL)
    (error,) = report.errors
    assert (error.rule, error.obj, error.where) == (
        "hook-refused",
        "Job default/migrate",
        "out.yaml: object 3",
    )
    assert error.message.startswith("pre-install hook: helm install fails: pods ")
    assert error.message.endswith("is forbidden: no PriorityClass with name high was found")
    # As a post-install hook it finds the class the release made.
    migrate["metadata"]["annotations"]["helm.sh/hook"] = "post-install"
    assert check(objects(helm_template(*docs)), source="t", shape=SMALL).passed


def test_the_autoscaler_verdict_counts_the_nodes_it_adds_for_a_post_install_hook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The release fills the cluster; the post-install Job needs a node more, which
    cluster-autoscaler adds after the release is placed."""
    seed = hooked(job("seed", cpu="2"), "post-install")
    chart = tmp_path / "chart.yaml"
    chart.write_text(helm_template(web(3, cpu="2"), ("seed.yaml", seed)))
    ca = Path(__file__).resolve().parents[1] / "examples" / "check" / "cluster-autoscaler.yaml"
    args = ["check", str(chart), "--zones", "3", "--nodes-per-zone", "1", "--node-cpu", "2"]
    code, out, _ = run(args, capsys)
    assert code == 1 and "post-install hook: 1 pod(s) stay Pending (default/seed-" in out
    code, out, _ = run([*args, "--autoscaler", str(ca), "-o", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["passed"], doc["findings"]
    assert sum(doc["autoscaler"]["added"].values()) == 1 and doc["autoscaler"]["pendingBefore"] == 1
    assert [(h["hook"], h["object"]) for h in doc["hooksRun"]] == [
        ("post-install", "Job default/seed")
    ]
