"""The sweep on Ray (analysis/sweep_ray.py): the same runs as the local backends, through the
library and the CLI, and clear errors when Ray is missing or nothing answers at the address.

One local Ray cluster serves the whole module (starting one takes seconds); the backends find
it connected and leave it running.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_cli import run
from topospread.analysis.sweep import (
    KILL_HOOK_ENV,
    MAX_ATTEMPTS,
    Backend,
    Failure,
    Outcome,
    serial_backend,
    sweep,
)
from topospread.analysis.sweep_pool import process_backend
from topospread.analysis.sweep_ray import connect, ray_backend
from topospread.errors import ManifestError
from topospread.simulator.timeline_format import TimelineScenario, load_timeline

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "simulations" / "zone-outage.yaml"
MISSING = "--ray: Ray is not installed: install the ray extra: pip install 'topospread[ray]'"


@pytest.fixture(scope="module")
def kill_plan(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the tests write the workers' kill plan (the sweep's test hook): set before the
    local Ray cluster starts, so that its workers inherit it; no plan, no kill."""
    plan = tmp_path_factory.mktemp("ray-kill") / "kill-plan"
    before = os.environ.get(KILL_HOOK_ENV)
    os.environ[KILL_HOOK_ENV] = str(plan)
    yield plan
    if before is None:
        os.environ.pop(KILL_HOOK_ENV, None)
    else:
        os.environ[KILL_HOOK_ENV] = before


@pytest.fixture(scope="module")
def ray_cluster(kill_plan: Path) -> Iterator[None]:
    ray = pytest.importorskip("ray")
    started = connect("local")
    yield
    if started:
        ray.shutdown()


def scenario() -> TimelineScenario:
    return dataclasses.replace(load_timeline(EXAMPLE), steps=[])


def sweep_json(backend: Backend) -> dict[str, Any]:
    report = sweep(scenario(), zones=True, nodes=True, drains=True, seeds=[0, 1], backend=backend)
    assert not report.interrupted
    return report.to_json()


def test_ray_gives_the_runs_the_serial_and_process_backends_give(ray_cluster: None) -> None:
    serial = sweep_json(serial_backend)
    assert serial["completed"] == serial["planned"] == 2 * (3 + 6 + 6)
    assert sweep_json(process_backend(2)) == serial
    assert sweep_json(ray_backend("local")) == serial
    # One job per task: the most tasks, the same runs.
    assert sweep_json(ray_backend("local", batch=1)) == serial


def test_sweep_with_ray_local_prints_what_it_prints_without(
    ray_cluster: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sweep", str(EXAMPLE), "--zones", "-o", "json"]
    code, expected, _ = run(argv, capsys)
    assert code == 0
    assert run([*argv, "--ray", "local"], capsys) == (0, expected, "")


def test_ctrl_c_keeps_the_runs_completed_and_cancels_the_rest(ray_cluster: None) -> None:
    seen: list[Outcome] = []

    def interrupt(outcome: Outcome) -> None:
        seen.append(outcome)
        if len(seen) == 3:
            raise KeyboardInterrupt

    report = sweep(
        scenario(), nodes=True, drains=True, backend=ray_backend("local", batch=1), on_run=interrupt
    )
    assert report.interrupted
    assert len(report.outcomes) == 3 < report.planned
    # The cluster is still usable after the cancelled tasks' workers were stopped.
    assert sweep_json(ray_backend("local")) == sweep_json(serial_backend)


@pytest.mark.parametrize("batch", [1, None], ids=["one job per task", "batches"])
def test_a_run_whose_worker_dies_once_is_retried_and_twice_is_reported_failed(
    ray_cluster: None, kill_plan: Path, batch: int | None
) -> None:
    serial = sweep(scenario(), nodes=True, drains=True)
    lost = Failure("node", ("node-zone-b-1",))
    try:
        # Killed on its first attempt only: Ray retries it, and the sweep is the serial one.
        kill_plan.write_text("once node node-zone-b-1\n")
        once = sweep(scenario(), nodes=True, drains=True, backend=ray_backend("local", batch=batch))
        assert once.to_json() == serial.to_json()
        assert len(list(kill_plan.parent.glob("kill-plan.*.killed"))) == 1  # it did die
        # Killed on every attempt: reported failed; every other run is kept.
        kill_plan.write_text("always node node-zone-b-1\n")
        always = sweep(
            scenario(), nodes=True, drains=True, backend=ray_backend("local", batch=batch)
        )
    finally:
        kill_plan.unlink()
        for mark in kill_plan.parent.glob("kill-plan.*"):
            mark.unlink()
    (failed,) = always.failed
    assert (failed.failure, failed.seed, failed.attempts) == (lost, 0, MAX_ATTEMPTS)
    assert failed.error.startswith("worker died (WorkerCrashedError: The worker died")
    assert [o.run for o in always.outcomes] == [o.run for o in serial.outcomes if o.failure != lost]
    assert always.to_json()["completed"] == serial.to_json()["completed"] - 1


def test_without_ray_installed_the_backend_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ManifestError) as raised:
        ray_backend("local")
    assert str(raised.value) == MISSING
    code, out, err = run(["sweep", str(EXAMPLE), "--zones", "--ray", "local"], capsys)
    assert (code, out) == (2, "")
    assert err == f"topospread: error: {MISSING}\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@pytest.mark.parametrize(
    ("address", "message"),
    [
        pytest.param(
            "127.0.0.1:{port}",
            "--ray 127.0.0.1:{port}: no Ray cluster answers there (Connection refused); "
            "start one with `ray start --head`, or run one here with --ray local",
            id="nothing listening",
        ),
        pytest.param(
            "ray://127.0.0.1:{port}",
            "--ray ray://127.0.0.1:{port}: no Ray cluster answers there (Connection refused); "
            "start one with `ray start --head`, or run one here with --ray local",
            id="no Ray Client server",
        ),
        pytest.param(
            "head-node",
            "--ray head-node: expected local, auto, HOST:PORT or ray://HOST:PORT",
            id="no port",
        ),
    ],
)
def test_a_bad_address_is_an_error_naming_the_option(
    address: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ray")
    port = free_port()
    address, message = address.format(port=port), message.format(port=port)
    with pytest.raises(ManifestError) as raised:
        ray_backend(address)
    assert str(raised.value) == message
    code, out, err = run(["sweep", str(EXAMPLE), "--zones", "--ray", address], capsys)
    assert (code, out, err) == (2, "", f"topospread: error: {message}\n")
