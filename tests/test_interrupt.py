"""Ctrl-C during a long command, in-process: ``KeyboardInterrupt`` raised from a hook at a
chosen point. Each command reports what it finished, marked interrupted in every format (its
JSON still valid against its schema), says on stderr what the report covers, and exits 130;
what was cut half-way is in no report. (A real SIGINT to a running process:
test_interrupt_signal.py.)"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from test_cli import run
from topospread.analysis import check as check_module
from topospread.analysis import simulate as simulate_module
from topospread.analysis.sweep import sweep
from topospread.analysis.sweep_workers import serial_backend
from topospread.analysis.verify import load_verify_scenario, verify
from topospread.analysis.verify_explorer import Explorer
from topospread.cli.interrupting import INTERRUPTED_EXIT, interruptible
from topospread.render.schemas import load_schema
from topospread.simulator.checkpoint import Copies
from topospread.simulator.scheduler import Scheduler
from topospread.simulator.timeline_format import load_timeline

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
ZONE_OUTAGE = EXAMPLES / "simulations" / "zone-outage.yaml"
VERIFY = EXAMPLES / "verify" / "redis-3shards-3zones-maxskew2.yaml"
_replay_step = simulate_module.replay_step


def after(calls: int, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, raising ``KeyboardInterrupt`` instead of making its call number ``calls``."""
    seen = [0]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] == calls:
            raise KeyboardInterrupt
        return fn(*args, **kwargs)

    return wrapped


def valid(command: str, doc: Any) -> Any:
    jsonschema.Draft202012Validator(load_schema(command)).validate(doc)
    return doc


def test_the_first_ctrl_c_interrupts_and_gives_sigint_its_default_action_back() -> None:
    previous = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(KeyboardInterrupt), interruptible() as interrupt:
            os.kill(os.getpid(), signal.SIGINT)
            signal.pause()  # never reached past the handler
        # A second Ctrl-C ends the process at once: not caught, not deferred.
        assert interrupt() and signal.getsignal(signal.SIGINT) is signal.SIG_DFL
        with interruptible(defer=True) as deferred:
            os.kill(os.getpid(), signal.SIGINT)
        assert deferred() and signal.getsignal(signal.SIGINT) is signal.SIG_DFL
        signal.signal(signal.SIGINT, previous)
        with interruptible() as quiet:
            pass
        assert not quiet() and signal.getsignal(signal.SIGINT) is previous
    finally:
        signal.signal(signal.SIGINT, previous)


def test_simulate_reports_the_steps_before_the_one_cut(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(simulate_module, "replay_step", after(2, _replay_step))
    report = simulate_module.simulate(load_timeline(ZONE_OUTAGE))
    assert [s.index for s in report.steps] == [0, 1]
    cut = report.interrupted
    assert cut is not None and (cut.index, cut.total, cut.name) == (2, 4, "zone-c stays dark")

    monkeypatch.setattr(simulate_module, "replay_step", after(2, _replay_step))
    code, out, err = run(["simulate", str(ZONE_OUTAGE)], capsys)
    assert code == INTERRUPTED_EXIT
    assert "== Step 1/4: zone-c goes dark (loseZone) at 0s ==" in out
    assert "Step 2/4" not in out
    assert (
        out.rstrip()
        .splitlines()[-1]
        .startswith(
            "Interrupted during step 2/4 (zone-c stays dark): 1 of 4 steps replayed (seed 0)."
        )
    )
    assert err.splitlines()[-1] == (
        "topospread: interrupted during step 2/4 (zone-c stays dark): the report covers the "
        "initial state and step 1"
    )


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_simulate_json_and_html_say_which_step_was_cut(
    fmt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(simulate_module, "replay_step", after(3, _replay_step))
    code, out, _ = run(["simulate", str(ZONE_OUTAGE), "-o", fmt], capsys)
    assert code == INTERRUPTED_EXIT
    if fmt == "html":
        assert 'id="interrupted"' in out and "2 of 4 step(s) replayed" in out
        return
    doc = valid("simulate", yaml.safe_load(out))
    assert [s["index"] for s in doc["steps"]] == [0, 1, 2]
    assert doc["interrupted"] == {
        "step": 3, "of": 4, "name": "zone-c comes back", "action": "restoreZone"
    }  # fmt: skip


def test_simulate_cut_in_its_initial_state_reports_no_step(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from topospread.simulator.simulation import Simulation

    monkeypatch.setattr(Simulation, "settle", after(1, Simulation.settle))
    code, out, err = run(["simulate", str(ZONE_OUTAGE), "-o", "json"], capsys)
    assert code == INTERRUPTED_EXIT
    doc = valid("simulate", yaml.safe_load(out))
    assert doc["steps"] == [] and doc["interrupted"]["step"] == 0
    assert "the initial state" in err and "covers no step" in err


def test_an_interrupted_rebalance_step_is_not_carried_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A timeline's ``rebalance`` step cut in its search: the step is cut, not done without
    its evictions."""
    doc = yaml.safe_load(ZONE_OUTAGE.read_text())
    doc["timeline"].append({"rebalance": None})
    path = tmp_path / "rebalanced.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert simulate_module.simulate(load_timeline(path)).interrupted is None
    monkeypatch.setattr(Copies, "run", after(1, Copies.run))
    report = simulate_module.simulate(load_timeline(path))
    assert report.interrupted is not None
    assert (report.interrupted.index, report.interrupted.action) == (5, "rebalance")
    assert len(report.steps) == 5


def scenario(tmp_path: Path, queued: int = 4, nodes: int = 3) -> Path:
    """``nodes`` nodes over three zones, room for every pod; ``queued`` pods spread by zone."""
    room = str(queued // nodes + 110)
    node_docs = [
        {
            "metadata": {
                "name": f"n{i}",
                "labels": {
                    "kubernetes.io/hostname": f"n{i}",
                    "topology.kubernetes.io/zone": "abc"[i % 3],
                },
            },
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": room}},
        }
        for i in range(nodes)
    ]
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    queue = [
        {
            "metadata": {"name": f"web-{i}", "labels": {"app": "web"}},
            "spec": {
                "containers": [{"name": "c", "image": "pause"}],
                "topologySpreadConstraints": [spread],
            },
        }
        for i in range(queued)
    ]
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump({"nodes": node_docs, "pods": [], "queue": queue}))
    return path


@pytest.mark.parametrize("fmt", ["text", "json", "yaml", "html", "jsonl"])
def test_schedule_lists_every_pod_those_not_attempted_pending(
    fmt: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    queued = [f"web-{i}" for i in range(4)]
    monkeypatch.setattr(Scheduler, "schedule_one", after(2, Scheduler.schedule_one))
    code, out, err = run(["schedule", str(scenario(tmp_path)), "-o", fmt], capsys)
    assert code == INTERRUPTED_EXIT, err
    assert err.splitlines()[-1] == (
        f"topospread: interrupted after 1 scheduling attempts: {len(queued) - 1} of "
        f"{len(queued)} queued pods not attempted (Pending: not attempted: interrupted)"
    )
    if fmt == "text":
        assert "Pending: not attempted: interrupted" in out
        assert f"interrupted: {len(queued) - 1} not attempted." in out
    elif fmt == "json":
        doc = valid("schedule", yaml.safe_load(out))
        assert doc["interrupted"] is True
        assert [p["pod"].split("/")[1] for p in doc["pods"]] == queued
        assert doc["pods"][0]["attempts"] and doc["pods"][0]["message"] != "not attempted"
        assert [p["message"] for p in doc["pods"][1:]] == ["not attempted: interrupted"] * (
            len(queued) - 1
        )
    elif fmt == "jsonl":
        lines = [yaml.safe_load(line) for line in out.splitlines()]
        assert [p["pod"].split("/")[1] for p in lines[1:]] == queued
    elif fmt == "yaml":
        pods = [d for d in yaml.safe_load_all(out) if d and d.get("kind") == "Pod"]
        names = {p["metadata"]["name"] for p in pods}
        assert set(queued) <= names
    else:
        assert 'id="interrupted"' in out and "not attempted: interrupted" in out


def test_schedule_stops_between_two_attempts_when_asked(tmp_path: Path) -> None:
    from topospread.simulator.run import NOT_ATTEMPTED, schedule
    from topospread.simulator.scenario import load_scenario

    loaded = load_scenario(scenario(tmp_path))
    decided: list[Any] = []
    run_ = schedule(loaded, on_decision=decided.append, stop=lambda: len(decided) >= 1)
    assert run_.interrupted and len(run_.attempts) == 1
    assert [o.message for o in run_.outcomes[1:]] == [NOT_ATTEMPTED] * (len(run_.outcomes) - 1)
    whole = schedule(loaded, stop=lambda: False)
    assert not whole.interrupted and all(o.message != NOT_ATTEMPTED for o in whole.outcomes)


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_explain_before_the_pods_attempt_says_it_was_not_attempted(
    fmt: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(Scheduler, "schedule_one", after(2, Scheduler.schedule_one))
    path = str(scenario(tmp_path))
    code, out, err = run(["explain", path, "--pod", "web-3", "-o", fmt], capsys)
    assert code == INTERRUPTED_EXIT
    assert "the pod was not attempted" in err
    if fmt == "json":
        doc = valid("explain", yaml.safe_load(out))
        assert doc["interrupted"] is True and doc["message"] == "not attempted: interrupted"
    else:
        assert "not attempted: interrupted" in out
        assert ('id="interrupted"' if fmt == "html" else "Interrupted:") in out


def test_verify_interrupted_is_never_a_proof(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    whole = verify(load_verify_scenario(VERIFY))
    assert whole.proved and whole.states > 20
    transitions = Explorer.transitions
    monkeypatch.setattr(Explorer, "transitions", after(20, transitions))
    cut = verify(load_verify_scenario(VERIFY))
    assert cut.interrupted and not cut.proved and cut.ok and cut.counterexample is None
    assert 19 < cut.states < whole.states and cut.depth < whole.depth
    monkeypatch.setattr(Explorer, "transitions", after(20, transitions))
    code, out, err = run(["verify", str(VERIFY), "-o", "json"], capsys)
    assert code == INTERRUPTED_EXIT
    doc = valid("verify", yaml.safe_load(out))
    assert doc["interrupted"] is True and doc["verdict"] == "bounded" and not doc["proved"]
    assert doc["note"].startswith("not a proof: interrupted after")
    assert "not a proof" in err and "no counterexample found so far" in err
    monkeypatch.setattr(Explorer, "transitions", after(20, transitions))
    code, out, _ = run(["verify", str(VERIFY)], capsys)
    assert code == INTERRUPTED_EXIT and "NOT A PROOF: interrupted (Ctrl-C)" in out
    assert "PROVED" not in out


def test_verify_interrupted_while_sampling_counts_the_orders_completed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scenario = load_verify_scenario(VERIFY)
    calls = [0]
    options = Explorer.options

    def counted(self: Explorer, pod: Any) -> Any:
        calls[0] += 1
        return options(self, pod)

    monkeypatch.setattr(Explorer, "options", counted)
    sampled = verify(scenario, max_states=10, samples=5)
    assert sampled.samples == 5 and not sampled.interrupted
    per_order = calls[0] // 5 + 1
    calls[0] = 0
    monkeypatch.setattr(Explorer, "options", after(per_order * 3, counted))
    cut = verify(scenario, max_states=10, samples=50)
    assert cut.interrupted and not cut.proved and cut.counterexample is None
    assert 0 < cut.samples < 50
    assert f"then {cut.samples} random orders were sampled" in (cut.note() or "")


@pytest.mark.parametrize("fmt", ["text", "json", "html"])
def test_rebalance_reports_the_replays_completed(
    fmt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(["rebalance", str(ZONE_OUTAGE), "-o", "json"], capsys)
    assert code == 0 and yaml.safe_load(out)["plan"] is not None
    monkeypatch.setattr(Copies, "run", after(1, Copies.run))
    code, out, err = run(["rebalance", str(ZONE_OUTAGE), "-o", fmt], capsys)
    assert code == INTERRUPTED_EXIT
    assert err.splitlines()[-1].startswith("topospread: interrupted after 0 replay(s): no plan")
    if fmt == "json":
        doc = valid("rebalance", yaml.safe_load(out))
        assert doc["interrupted"] is True and doc["plan"] is None and doc["replays"] == 0
    elif fmt == "text":
        assert "No plan yet: interrupted before a plan was found (0 replay(s) completed)." in out
    else:
        assert "Interrupted before a plan was found" in out


def test_rebalance_interrupted_in_the_descheduler_keeps_the_plan(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from topospread.analysis import descheduler_replay

    def cut(*_: Any, **__: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(descheduler_replay, "descheduler_rounds", cut)
    code, out, err = run(["rebalance", str(ZONE_OUTAGE), "--descheduler", "-o", "json"], capsys)
    assert code == INTERRUPTED_EXIT
    doc = valid("rebalance", yaml.safe_load(out))
    assert doc["plan"] is not None and doc["descheduler"] is None and doc["interrupted"]
    assert "the plan is reported, the descheduler's rounds are not" in err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_survive_reports_the_losses_checked(
    fmt: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def one_then_ctrl_c(bases: Any, options: Any, jobs: Any, done: Any) -> None:
        serial_backend(bases, options, jobs[:1], done)
        raise KeyboardInterrupt

    def swept(*args: Any, **kwargs: Any) -> Any:
        return sweep(*args, **kwargs, backend=one_then_ctrl_c)

    monkeypatch.setattr(check_module, "sweep", swept)
    web = str(EXAMPLES / "check" / "web.yaml")
    argv = ["check", web, "--zones", "3", "--nodes-per-zone", "2", "--survive", "zone"]
    code, out, err = run([*argv, "-o", fmt], capsys)
    assert code == INTERRUPTED_EXIT
    assert err.splitlines()[-1] == (
        "topospread: interrupted after 1 of 3 failure(s) replayed: the report covers them"
    )
    if fmt == "json":
        doc = valid("check", yaml.safe_load(out))
        assert doc["interrupted"] is True and doc["losses"] == 3
        assert len(doc["survived"]) == 1 and doc["passed"] is False
    else:
        assert out.startswith(("INTERRUPTED: ", "FAIL: "))
        assert "  interrupted: 1 of 3 failure(s) replayed; the report covers them" in out


def test_explain_after_the_pods_attempt_explains_it_marked_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(scenario(tmp_path))
    code, out, _ = run(["explain", path, "--pod", "web-0", "-o", "json"], capsys)
    whole = yaml.safe_load(out)
    monkeypatch.setattr(Scheduler, "schedule_one", after(2, Scheduler.schedule_one))
    code, out, err = run(["explain", path, "--pod", "web-0", "-o", "json"], capsys)
    assert code == INTERRUPTED_EXIT and "the explanation is of the pod's last attempt" in err
    doc = valid("explain", yaml.safe_load(out))
    assert doc.pop("interrupted") is True
    assert doc == whole  # its one attempt came before the cut
