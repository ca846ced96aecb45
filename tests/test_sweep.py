"""``sweep``: each failure replayed from the settled base state equals ``simulate`` of the
same steps; the tainted-zone trap ranks first; requirements gate the exit code; the local
pool gives the serial result; Ctrl-C keeps what finished."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import pickle
import re
import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_cli import readme_output
from test_cli import run as cli
from test_timeline import deployment, zones
from topospread.analysis.simulate import settle_timeline, simulate
from topospread.analysis.sweep import (
    KILL_HOOK_ENV,
    Bases,
    Failure,
    Job,
    Phase,
    Run,
    RunError,
    SweepOptions,
    SweepReport,
    death,
    enumerate_failures,
    phase,
    serial_backend,
    sweep,
)
from topospread.analysis.sweep_pool import pool_size, process_backend
from topospread.framework.features import DEFAULT_FEATURES
from topospread.render.html import sweep_html
from topospread.render.sweep import sweep_text
from topospread.simulator.checkpoint import FORKS, ChildDied, Snapshot, call_forked
from topospread.simulator.drain import DrainOptions
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import load_timeline, parse_timeline

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "simulations"


def web(policy: str | None = None, replicas: int = 6) -> dict[str, Any]:
    """A zone-spread Deployment (DoNotSchedule, maxSkew 1) with a hostname preference."""
    doc = deployment(replicas, match_label_keys=True, node_taints_policy=policy)
    constraints = doc["spec"]["template"]["spec"]["topologySpreadConstraints"]
    constraints.append(
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    )
    return doc


def budget() -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 6, "selector": {"matchLabels": {"app": "web"}}},
    }


def cluster_doc(*objects: dict[str, Any]) -> dict[str, Any]:
    return {"nodeGroups": zones(2), "objects": list(objects)}


def simulate_phases(doc: dict[str, Any], run: Run, seed: int) -> tuple[Phase, Phase]:
    """The same failure as a timeline for ``simulate``: the phases read at the same steps."""
    recovery = 1  # every failure is undone in one step
    replay = simulate(parse_timeline({**doc, "timeline": run.timeline}, "t.yaml"), seed=seed)
    steps = replay.steps[1:]
    during, after = steps[-recovery - 1], steps[-1]
    drains = [d for s in steps[:-recovery] for d in s.drains]
    return phase(during, drains), phase(after)


@pytest.mark.parametrize("seed", [0, 7])
def test_each_run_equals_simulate_of_its_steps(seed: int) -> None:
    doc = cluster_doc(web(), budget())
    then = ({"scale": {"workload": "deployment/web", "replicas": 8}},)
    report = sweep(
        parse_timeline(doc, "t.yaml"),
        zones=True,
        nodes=True,
        drains=True,
        seeds=[seed],
        options=SweepOptions(then=then, source="t.yaml"),
    )
    assert report.planned == len(report.outcomes) == 3 + 6 + 6
    for outcome in report.outcomes:
        run = outcome.run
        assert run.timeline[-2] == then[0]
        assert simulate_phases(doc, run, seed) == (run.during, run.after), run.failure.name


def test_runs_wait_until_the_tolerations_run_out_and_drains_honour_budgets() -> None:
    doc = cluster_doc(web(), budget())
    report = sweep(parse_timeline(doc, "t.yaml"), nodes=True, drains=True)
    lost = next(o for o in report.outcomes if o.failure.kind == "node")
    assert [next(iter(s)) for s in lost.run.timeline] == ["name"] * 3
    assert [k for s in lost.run.timeline for k in s if k != "name"] == [
        "loseNode",
        "wait",
        "restoreNode",
    ]
    assert lost.run.timeline[1]["wait"] == "5m0s"  # DefaultTolerationSeconds: 300 s
    drained = next(o for o in report.outcomes if o.failure.kind == "drain")
    # minAvailable 6 of 6: the eviction is refused and the pod stays; nothing goes Pending.
    assert drained.run.during.blocked and "disruption budget" in drained.run.during.blocked[0]
    assert drained.new_pending == 0 and drained.recovered


def test_the_tainted_zone_trap_is_the_worst_failure_and_honor_avoids_it() -> None:
    trap = sweep(parse_timeline(cluster_doc(web()), "t.yaml"), zones=True, nodes=True)
    worst = trap.ranked()[0]
    assert worst.failure.kind == "zone" and worst.new_pending == 2
    (message,) = set(worst.run.during.pending.values())
    assert "2 node(s) had untolerated taint(s)" in message
    assert "didn't match pod topology spread constraints" in message
    assert worst.recovered  # the zone's return lets the Pending pods in
    assert all(o.failure.kind == "zone" for o in trap.ranked()[:3])
    honor = sweep(parse_timeline(cluster_doc(web("Honor")), "t.yaml"), zones=True)
    assert [o.new_pending for o in honor.ranked()] == [0, 0, 0]
    assert [o.recovered for o in honor.ranked()] == [False] * 3


def test_require_gates_the_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trap = tmp_path / "trap.yaml"
    trap.write_text(yaml.safe_dump(cluster_doc(web())))
    honor = tmp_path / "honor.yaml"
    honor.write_text(yaml.safe_dump(cluster_doc(web("Honor"))))
    code, out, _ = cli(
        ["sweep", str(trap), "--zones", "--require", "no-pending", "-j", "1"], capsys
    )
    assert code == 1 and "FAIL: 3 of 3 runs break --require no-pending." in out
    code, out, _ = cli(["sweep", str(honor), "--zones", "--require", "no-pending"], capsys)
    assert code == 0 and "PASS: every run meets --require no-pending." in out
    # With Honor the evicted pods go to the other zones and stay there once the zone is
    # back: nothing Pending, but the zone spread stays past maxSkew (nothing rebalances).
    code, out, _ = cli(["sweep", str(honor), "--zones", "--require", "recovers"], capsys)
    assert code == 1 and "FAIL: 3 of 3 runs break --require recovers." in out
    assert "after the failure is undone: 0 pods still Pending, violated: deployment" in out
    code, out, _ = cli(["sweep", str(trap), "--zones"], capsys)
    assert code == 0 and out.splitlines()[3] == "Worst failures first:"


def test_the_process_pool_gives_the_serial_result() -> None:
    scenario = parse_timeline(cluster_doc(web(), budget()), "t.yaml")
    kwargs: dict[str, Any] = {"zones": True, "nodes": True, "drains": True, "seeds": [0, 1]}
    serial = sweep(scenario, **kwargs).to_json()
    pooled = sweep(scenario, backend=process_backend(2), **kwargs).to_json()
    assert pooled == serial
    assert serial["completed"] == serial["planned"] == 30
    zones = sweep(scenario, zones=True).to_json()  # 3 runs: one process each on 2 cores
    assert (
        sweep(scenario, zones=True, backend=process_backend(2, share_cores=True)).to_json() == zones
    )


@pytest.mark.parametrize(
    ("cores", "jobs", "want"),
    [
        pytest.param(2, 1, 1, id="one job: one process"),
        pytest.param(4, 3, 3, id="fewer jobs than cores: one each"),
        pytest.param(2, 3, 3, id="three zones on two cores: all at once"),
        pytest.param(2, 4, 2, id="jobs that divide evenly: one per core"),
        pytest.param(2, 5, 2, id="more than twice the cores: one per core"),
        pytest.param(8, 1000, 8, id="a node sweep: one per core"),
    ],
)
def test_a_few_jobs_that_do_not_divide_over_the_cores_get_a_process_each(
    cores: int, jobs: int, want: int
) -> None:
    assert pool_size(cores, jobs) == want


def test_json_and_yaml_carry_every_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cluster_doc(web())))
    code, out, _ = cli(["sweep", str(path), "--nodes", "--seeds", "2", "-o", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["planned"] == doc["completed"] == 12
    assert len(doc["runs"]) == 12 and doc["seeds"] == [0, 1]
    assert doc["runs"][0]["failure"] == {
        "name": "node pool-a-1",
        "kind": "node",
        "targets": ["pool-a-1"],
    }
    code, out2, _ = cli(["sweep", str(path), "--nodes", "--seeds", "2", "-o", "yaml"], capsys)
    assert code == 0 and yaml.safe_load(out2) == doc


def test_max_failures_tries_every_combination() -> None:
    sim = settle_timeline(parse_timeline(cluster_doc(web()), "t.yaml"), 0, DEFAULT_FEATURES)
    failures = enumerate_failures(sim, zones=False, nodes=False, drains=False, max_failures=2)
    assert len(failures) == 6 + 15
    assert failures[6].name == "nodes pool-a-1 + pool-a-2"


def test_ctrl_c_keeps_the_runs_that_finished() -> None:
    scenario = parse_timeline(cluster_doc(web()), "t.yaml")

    def stopped(bases: Any, options: Any, jobs: Any, done: Any) -> None:
        serial_backend(bases, options, jobs[:2], done)
        raise KeyboardInterrupt

    report = sweep(scenario, nodes=True, backend=stopped)
    assert report.interrupted and report.planned == 6 and len(report.outcomes) == 2
    # The process pool stops its workers and gives back what completed.
    seen: list[int] = []

    def interrupt_after_one(outcome: Any) -> None:
        seen.append(1)
        raise KeyboardInterrupt

    pooled = sweep(scenario, nodes=True, backend=process_backend(2), on_run=interrupt_after_one)
    assert pooled.interrupted and len(seen) == 1 and len(pooled.outcomes) == 1


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cluster_doc(web())))
    then = tmp_path / "then.yaml"
    then.write_text("- scale: {workload: deployment/web}\n")
    cases = [
        ([str(path)], "choose what fails: --zones, --nodes, --drains or --max-failures K"),
        ([str(path), "--zones", "--require", "fast"], '--require: Unsupported value: "fast"'),
        ([str(path), "--zones", "--then", str(then)], "then.yaml: timeline[0] (scale): replicas"),
        ([str(path), "--zones", "--wait", "soon"], '--wait: Invalid value: "soon"'),
        (["--zones"], "give a timeline scenario, --cluster files or a live cluster"),
        ([str(path), "--zones", "--zone-key", "rack"], "--zones: no node has the label rack"),
    ]
    for argv, message in cases:
        code, out, err = cli(["sweep", *argv], capsys)
        assert code == 2 and out == "", argv
        assert err.startswith("topospread: error: ") and message in err, err
        assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_the_base_state_follows_the_timeline_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    example = EXAMPLES / "zone-outage.yaml"
    _, out, _ = cli(["sweep", str(example), "--zones", "-o", "json"], capsys)
    assert json.loads(out)["base"]["0"]["running"] == 6
    _, out, _ = cli(["sweep", str(example), "--zones", "--after-timeline", "-o", "json"], capsys)
    assert json.loads(out)["base"]["0"]["running"] == 4  # scaled down to 4 at its end


def test_the_replay_recipe_followed_literally_reproduces_each_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recipe: the run's steps replace the scenario's timeline, and ``simulate --seed``
    replays the run. The example has its own timeline, which the sweep left out: appending
    the steps after it replays something else."""
    example = EXAMPLES / "zone-outage.yaml"
    doc = yaml.safe_load(example.read_text())
    assert doc["timeline"]
    _, out, _ = cli(["sweep", str(example), "--zones", "--seed", "3", "-o", "json"], capsys)
    swept = sweep(dataclasses.replace(load_timeline(example), steps=[]), zones=True, seeds=[3])
    runs = {o.failure.name: o.run for o in swept.outcomes}
    differs = 0
    for r in json.loads(out)["runs"]:
        run = runs[r["failure"]["name"]]
        assert r["timeline"] == run.timeline
        replaced = tmp_path / "replaced.yaml"
        replaced.write_text(yaml.safe_dump({**doc, "timeline": r["timeline"]}))
        assert replay_phases(replaced, len(r["timeline"]), r["seed"]) == (run.during, run.after)
        appended = tmp_path / "appended.yaml"
        appended.write_text(yaml.safe_dump({**doc, "timeline": doc["timeline"] + r["timeline"]}))
        differs += replay_phases(appended, len(r["timeline"]), r["seed"]) != (run.during, run.after)
    assert differs
    _, page, _ = cli(["sweep", str(example), "--zones", "-o", "html"], capsys)
    assert "Replace the scenario's <code>timeline</code> with these steps" in page
    assert "Append" not in page


def replay_phases(path: Path, steps: int, seed: int) -> tuple[Phase, Phase]:
    """``simulate`` of a scenario file: the phases read where the run's last ``steps`` steps
    leave the failure in place (all but the recovery) and at the end."""
    replay = simulate(load_timeline(path), seed=seed).steps[-steps:]
    drains = [d for s in replay[:-1] for d in s.drains]
    return phase(replay[-2], drains), phase(replay[-1])


def test_nodes_and_zones_are_listed_in_natural_order(capsys: pytest.CaptureFixture[str]) -> None:
    """Numbers by value (a-2 before a-10), the same order on every run."""
    doc = {
        "nodeGroups": [{"name": "a", "zones": ["z1", "z2", "z10"], "perZone": {"z1": 11,
                                                                               "z2": 1,
                                                                               "z10": 1}}],
        "objects": [],
    }  # fmt: skip
    sim = settle_timeline(parse_timeline(doc, "t.yaml"), 0)
    failures = enumerate_failures(sim, zones=True, nodes=True, drains=False)
    zone_names = [f.name for f in failures if f.kind == "zone"]
    assert zone_names == ["zone z1", "zone z2", "zone z10"]
    node_names = [f.targets[0] for f in failures if f.kind == "node"]
    assert node_names == [*(f"a-z1-{i}" for i in range(1, 12)), "a-z2-1", "a-z10-1"]
    # No run breaks anything: ranked by kind, then in that order, in the text and the JSON.
    report = sweep(parse_timeline(doc, "t.yaml"), zones=True, nodes=True)
    names = [f.name for f in failures if f.kind == "node"] + zone_names
    assert [o.failure.name for o in report.ranked()] == names
    table = sweep_text(report).split("Worst failures first:\n", 1)[1].splitlines()
    assert [" ".join(line.split()[1:3]) for line in table[1 : 1 + len(names)]] == names
    assert [r["failure"]["name"] for r in report.to_json()["runs"]] == names
    assert [r["failure"] for r in report.to_json()["ranked"]] == names


def test_jobs_are_numbered_in_failure_then_seed_order() -> None:
    scenario = parse_timeline(cluster_doc(web()), "t.yaml")
    seen: list[Job] = []

    def recording(bases: Any, options: Any, jobs: Any, done: Any) -> None:
        seen.extend(jobs)
        serial_backend(bases, options, jobs, done)

    report = sweep(scenario, zones=True, seeds=[3, 4], backend=recording)
    assert [(j.index, j.failure.name, j.seed) for j in seen][:3] == [
        (0, "zone a", 3),
        (1, "zone a", 4),
        (2, "zone b", 3),
    ]
    assert [(o.failure.name, o.run.seed) for o in report.outcomes][:2] == [
        ("zone a", 3),
        ("zone a", 4),
    ]


def test_readme_shows_exactly_what_the_sweep_prints(capsys: pytest.CaptureFixture[str]) -> None:
    command = "topospread sweep examples/simulations/zone-outage.yaml --zones --nodes"
    shown = readme_output(command)
    _, out, _ = cli(command.split()[1:], capsys)
    assert shown == out.rstrip("\n")


def test_the_bases_hand_out_a_restorable_snapshot_and_pickle_as_plain_bytes() -> None:
    """Where the platform forks the settled base stays live (forked workers read it as it
    is) and its snapshot is taken only when a backend asks; either way the bytes restore to
    the same state, and the mapping crosses a process boundary as a plain dict of them."""
    sim = settle_timeline(parse_timeline(cluster_doc(web()), "t.yaml"), 0, DEFAULT_FEATURES)
    bases = Bases()
    bases.add(0, sim)
    assert list(bases) == [0] and len(bases) == 1
    assert (bases.live(0) is sim) == FORKS
    data = bases[0]
    assert bases[0] is data  # taken once
    copied = pickle.loads(pickle.dumps(bases))
    assert type(copied) is dict and copied == {0: data}
    restored = Snapshot[Simulation](data).restore()
    assert sorted((k, p.spec.node_name) for k, p in restored.pods.items()) == sorted(
        (k, p.spec.node_name) for k, p in sim.pods.items()
    )
    bases.release()
    assert bases.live(0) is None and bases[0] is data


@pytest.mark.parametrize(
    ("options", "blocked"),
    [
        pytest.param(DrainOptions(), True, id="kubectl drain refuses emptyDir pods"),
        pytest.param(DrainOptions(delete_emptydir_data=True), False, id="--delete-emptydir-data"),
    ],
)
def test_drains_delete_emptydir_data_when_asked(options: DrainOptions, blocked: bool) -> None:
    doc = web()
    spec = doc["spec"]["template"]["spec"]
    spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    report = sweep(
        parse_timeline(cluster_doc(doc), "t.yaml"),
        drains=True,
        options=SweepOptions(source="t.yaml", drain=options),
    )
    drained = [o for o in report.outcomes if o.failure.kind == "drain"]
    assert drained
    for outcome in drained:
        step = outcome.run.timeline[0]["drain"]
        assert step == (
            {"node": outcome.failure.targets[0], "deleteEmptyDirData": True}
            if not blocked
            else outcome.failure.targets[0]
        )
        refused = [b for b in outcome.run.during.blocked if "local storage" in b]
        assert bool(refused) == blocked, outcome.run.during.blocked


def test_sweep_takes_kubectl_drains_flags_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = web()
    doc["spec"]["template"]["spec"]["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(cluster_doc(doc)))
    outcomes = {}
    for flags in ([], ["--delete-emptydir-data", "--force"]):
        code, out, err = cli(
            ["sweep", str(path), "--drains", "-j", "1", "-o", "json", *flags], capsys
        )
        assert code == 0, err
        runs = json.loads(out)["runs"]
        outcomes[bool(flags)] = runs
    blocked = [
        r for r in outcomes[False] if any("local storage" in b for b in r["during"]["blocked"])
    ]
    assert blocked
    assert not any(r["during"]["blocked"] for r in outcomes[True])
    steps = [r["timeline"][0]["drain"] for r in outcomes[True]]
    assert all(s["deleteEmptyDirData"] is True and s["force"] is True for s in steps)


# ------------------------------------------------------------------ dead workers


def kill_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *lines: str) -> None:
    """The test hook: a worker about to run a failure named in ``lines`` ("once NAME",
    "always NAME") kills itself with SIGKILL, as the OOM killer would."""
    plan = tmp_path / "kill-plan"
    plan.write_text("".join(f"{line}\n" for line in lines))
    monkeypatch.setenv(KILL_HOOK_ENV, str(plan))


def node_sweep(backend: Any = serial_backend, **kwargs: Any) -> SweepReport:
    scenario = parse_timeline(cluster_doc(web()), "t.yaml")
    return sweep(scenario, nodes=True, backend=backend, **kwargs)


def test_a_worker_killed_once_is_replaced_and_its_run_retried_so_nothing_is_lost(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    serial = node_sweep().to_json()
    kill_workers(monkeypatch, tmp_path, "once node pool-a-1", "once node pool-c-2")
    pooled = node_sweep(process_backend(2)).to_json()
    assert pooled == serial and pooled["completed"] == 6 and pooled["failed"] == []
    # The hook did kill: each marked its first attempt.
    assert len(list(tmp_path.glob("kill-plan.*.killed"))) == 2


def test_a_run_that_kills_its_worker_twice_is_reported_failed_and_every_other_run_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serial = node_sweep()
    kill_workers(monkeypatch, tmp_path, "always node pool-b-1")
    pooled = node_sweep(process_backend(2))
    failure = Failure("node", ("pool-b-1",))
    assert pooled.failed == [RunError(failure, 0, "worker killed by SIGKILL", 2)]
    assert [o.run for o in pooled.outcomes] == [
        o.run for o in serial.outcomes if o.failure != failure
    ]
    doc = pooled.to_json()
    assert doc["completed"] == 5 and doc["planned"] == 6
    assert doc["failed"] == [
        {
            "failure": {"name": "node pool-b-1", "kind": "node", "targets": ["pool-b-1"]},
            "seed": 0,
            "error": "worker killed by SIGKILL",
            "attempts": 2,
        }
    ]
    text = sweep_text(pooled)
    assert (
        "Failed: 1 of 6 runs did not complete (the worker died on every attempt):\n"
        "  node pool-b-1: worker killed by SIGKILL (2 attempts)\n"
    ) in text
    assert text.rstrip().endswith("1 run failed and is not judged.")
    page = sweep_html(doc)
    assert "node pool-b-1: worker killed by SIGKILL (2 attempts)" in page
    shown = re.sub(r"<[^>]+>", "", page)  # the counts sit in data-count spans
    assert "5 of 6 runs" in shown and "1 failed" in shown

    # The command prints the report, says which run failed, and exits 1.
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cluster_doc(web())))
    code, out, err = cli(["sweep", str(path), "--nodes", "-j", "2", "-o", "json"], capsys)
    assert code == 1 and json.loads(out)["failed"] == doc["failed"]
    assert "topospread: 1 of 6 runs failed: node pool-b-1: worker killed by SIGKILL" in err
    assert "Traceback" not in err


def test_a_worker_killed_from_outside_mid_sweep_loses_no_run() -> None:
    serial = node_sweep().to_json()
    killed: list[int] = []

    def kill_the_workers(outcome: Any) -> None:
        # The first run is in: the other worker is mid-run. SIGKILL every worker, as the OOM
        # killer would, once.
        if not killed:
            for child in multiprocessing.active_children():
                assert child.pid is not None
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)

    pooled = node_sweep(process_backend(2), on_run=kill_the_workers).to_json()
    assert len(killed) == 2
    assert pooled == serial and pooled["failed"] == []


@pytest.mark.skipif(not FORKS, reason="runs fork a child only where the platform forks")
def test_a_forked_child_killed_is_reported_with_its_signal() -> None:
    with pytest.raises(ChildDied) as died:
        call_forked(lambda _: os.kill(os.getpid(), signal.SIGKILL), None)
    assert died.value.exitcode == -signal.SIGKILL
    assert death(died.value.exitcode, "worker's child") == "worker's child killed by SIGKILL"
    assert death(3) == "worker exited with code 3"


def test_a_zone_loss_leaves_the_statefulset_replica_pinned_by_its_volume_pending() -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "simulations"
    doc = yaml.safe_load((example / "database-zone-outage.yaml").read_text())
    del doc["timeline"]
    report = sweep(parse_timeline(doc, "db.yaml"), zones=True)
    assert [o.failure.name for o in report.outcomes] == [
        "zone zone-a",
        "zone zone-b",
        "zone zone-c",
    ]
    for outcome in report.outcomes:
        # Each zone holds one replica; its volume keeps it there: it stays Pending with
        # upstream's reason, and comes back with the zone.
        assert outcome.new_pending == 1, outcome.failure.name
        (message,) = outcome.run.during.pending.values()
        assert "4 node(s) didn't match PersistentVolume's node affinity" in message
        assert outcome.recovered


def test_a_job_given_to_a_worker_killed_while_idle_is_not_lost_nor_counted() -> None:
    # A worker killed between its answer and its next job has a broken pipe: giving it the
    # job raised BrokenPipeError out of the sweep (seen when a test killed both workers).
    from topospread.analysis.sweep_pool import _Worker

    context = multiprocessing.get_context("fork" if FORKS else "spawn")
    worker = _Worker(context, {}, SweepOptions())
    assert worker.process.pid is not None
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.join()
    for _ in range(3):  # the pipe breaks once the child's end is gone; send until it tells
        worker.give("job")  # type: ignore[arg-type]
        if not worker.sent:
            break
    assert worker.job == "job" and not worker.sent
    worker.conn.close()
