"""A real SIGINT (Ctrl-C) sent to a running ``topospread``: it reports what it finished and
exits 130; a second SIGINT ends it at once, even while it writes that report. Each test waits
for the command's own progress (on a pseudo-terminal, where it shows it) or its output before
it interrupts, rather than for a fixed time."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from test_interrupt import scenario

pty = pytest.importorskip("pty")

ROOT = Path(__file__).resolve().parents[1]
ZONE_OUTAGE = ROOT / "examples" / "simulations" / "zone-outage.yaml"
SRC = str(ROOT / "src")
DEADLINE = 60.0  # seconds: a loaded machine is slow, a hung command is a failure


def topospread(
    args: list[str], *, stdout: int, on_pty: bool
) -> tuple[subprocess.Popen[bytes], int | None]:
    """The command in a new process, its standard error on a pseudo-terminal (``on_pty``:
    progress shown; the terminal's side returned) or a pipe."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}
    if not on_pty:
        proc = subprocess.Popen(
            [sys.executable, "-m", "topospread", *args],
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env,
        )
        return proc, None
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "topospread", *args], stdout=stdout, stderr=secondary, env=env
    )
    os.close(secondary)
    return proc, primary


def wait_for(done: Callable[[], bool], proc: subprocess.Popen[bytes]) -> None:
    start = time.monotonic()
    while not done():
        assert proc.poll() is None, "the command ended before it was interrupted"
        assert time.monotonic() - start < DEADLINE, "no progress"
        time.sleep(0.02)


class Terminal:
    """What the command wrote to its terminal (standard error), read as it comes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.text = b""

    def read(self) -> bytes:
        while select.select([self.fd], [], [], 0)[0]:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # the command ended: its side is closed
                break
            if not chunk:
                break
            self.text += chunk
        return self.text

    def shows(self, *needles: bytes) -> Callable[[], bool]:
        """Whether the terminal has shown one of ``needles``."""
        return lambda: any(needle in self.read() for needle in needles)


# Enough replicas that each of the timeline's first steps takes several of the progress's
# redraws (a tenth of a second each), on a fast machine too.
BIG_REPLICAS = 10_000


def big_timeline(tmp_path: Path, replicas: int) -> Path:
    path = tmp_path / "big.yaml"
    path.write_text(ZONE_OUTAGE.read_text().replace("replicas: 6", f"replicas: {replicas}"))
    return path


# The progress names the last step completed, refreshed ten times a second: a step done within
# a tenth of a second may never show. Whichever of the first three shows, the run is past its
# initial state and has steps left to cut.
COMPLETED = (b"step 0: initial state", b"step 1: zone-c goes dark", b"step 2: zone-c stays")


def interrupted_on_terminal(argv: list[str], out: Path, *shown: bytes) -> str:
    """Run ``topospread argv`` with its standard output to ``out`` and its standard error on a
    pseudo-terminal (where progress shows); once the terminal shows one of ``shown``, one
    SIGINT: the command exits 130. What the terminal showed."""
    with out.open("wb") as stdout:
        proc, fd = topospread(argv, stdout=stdout.fileno(), on_pty=True)
    assert fd is not None
    terminal = Terminal(fd)
    try:
        wait_for(terminal.shows(*shown), proc)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(DEADLINE) == 130
        return terminal.read().decode()
    finally:
        os.close(fd)


def test_ctrl_c_during_simulate_reports_the_steps_completed(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    argv = ["simulate", str(big_timeline(tmp_path, BIG_REPLICAS)), "-o", "json"]
    err = interrupted_on_terminal(argv, out, *COMPLETED)
    doc = json.loads(out.read_text())
    cut = doc["interrupted"]
    assert 1 <= cut["step"] <= 4 and cut["of"] == 4
    assert [s["index"] for s in doc["steps"]] == list(range(cut["step"]))
    assert f"topospread: interrupted during step {cut['step']}/4 ({cut['name']})" in err


def test_ctrl_c_during_verify_reports_what_the_search_established(tmp_path: Path) -> None:
    from topospread.cli import main

    design = tmp_path / "redis.yaml"
    with pytest.raises(SystemExit):  # writes the scenario, then verifies nothing
        main(["design", "redis-cluster", "--shards", "5", "--replicas", "1", "--zones",
              "a,b,c", "--relaxed", "--scenario", str(design), "-o", "json"])  # fmt: skip
    out = tmp_path / "out.txt"
    argv = ["verify", str(design), "--any-feasible", "--max-states", "10000000"]
    err = interrupted_on_terminal(argv, out, b"searching: ")
    text = out.read_text()
    assert "NOT A PROOF: interrupted (Ctrl-C) after " in text and "PROVED" not in text
    assert "no counterexample found so far" in err


def test_ctrl_c_during_schedule_lists_every_pod(tmp_path: Path) -> None:
    """The jsonl report to a file is written as the pods are placed: once it grows, the run is
    under way."""
    path = scenario(tmp_path, queued=12000, nodes=60)
    out = tmp_path / "out.jsonl"
    with out.open("wb") as stdout:
        proc, _ = topospread(
            ["schedule", str(path), "-o", "jsonl"], stdout=stdout.fileno(), on_pty=False
        )
    wait_for(lambda: out.stat().st_size > 0, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 130, err
    header, *lines = out.read_bytes().splitlines()
    assert b'"plugins"' in header
    pods = [json.loads(line) for line in lines]
    assert [p["pod"] for p in pods] == [f"default/web-{i}" for i in range(12000)]
    cut = [p for p in pods if p["message"] == "not attempted: interrupted"]
    assert cut and all(not p["attempts"] for p in cut)
    assert all(p["node"] for p in pods if p["attempts"])
    assert b"not attempted (Pending: not attempted: interrupted)" in err


def test_a_second_ctrl_c_ends_the_process_at_once(tmp_path: Path) -> None:
    """Its report blocked on a full pipe nobody reads, the command still ends on the second
    SIGINT: by the signal, at once."""
    read, write = os.pipe()
    proc, fd = topospread(
        ["simulate", str(big_timeline(tmp_path, BIG_REPLICAS)), "-o", "json"],
        stdout=write,
        on_pty=True,
    )
    os.close(write)
    assert fd is not None
    terminal = Terminal(fd)
    try:
        wait_for(terminal.shows(*COMPLETED), proc)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)  # writing a report of megabytes into a pipe's 64 KiB: it blocks
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        assert proc.wait(10) == -signal.SIGINT
    finally:
        os.close(fd)
        os.close(read)
        if proc.poll() is None:
            proc.kill()
