"""``schedule -o jsonl`` and ``-o json`` of an EKS-like cluster dump, byte for byte.

The golden files under ``tests/data/`` were written by the code this work started from
(``bench/chart.py``'s cluster at a twentieth of the benchmark's size: 50 nodes, 500 bound and
100 queued pods, 2.7 MiB of YAML). Every speed-up of loading, validation, admission and output
must leave them unchanged, whichever way the file is read: cut in parts and decoded by forked
workers, in one piece by the fast path, or by the exact (go-yaml) path.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from test_report_direct_write import DrainedPipe
from topospread.api import validation, yaml_fast
from topospread.cli import main
from topospread.render import positioned, report

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
DIVISOR = 20


@pytest.fixture(scope="module")
def chart_cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import chart  # bench/chart.py: the benchmark's generator
    finally:
        sys.path.remove(str(ROOT / "bench"))
    path = tmp_path_factory.mktemp("chart") / "chart-cluster.yaml"
    assert chart.write_chart_cluster(path, DIVISOR) == (500, 100)
    return path


def schedule_output(path: Path, fmt: str, capsysbinary: pytest.CaptureFixture[bytes]) -> bytes:
    try:
        main(["schedule", "--nodes", str(path), "-o", fmt])
    except SystemExit as exit_:
        assert exit_.code in (0, None)
    out, _ = capsysbinary.readouterr()
    return out


def golden(fmt: str) -> bytes:
    return gzip.decompress((DATA / f"chart-cluster-{DIVISOR}.{fmt}.gz").read_bytes())


@pytest.mark.parametrize("fmt", ["jsonl", "json"])
@pytest.mark.parametrize("reader", ["forked parts", "one piece", "exact path"])
def test_schedule_output_of_the_chart_cluster_is_unchanged(
    chart_cluster: Path,
    fmt: str,
    reader: str,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    if reader == "forked parts":
        monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 256 << 10)
        monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 2)
    elif reader == "one piece":
        monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 64 << 20)
    else:
        monkeypatch.setattr(yaml_fast, "ryml", None)
    # Each run starts with no pod's validation remembered from an earlier one.
    monkeypatch.setattr(validation, "_SPEC_ERRORS", {})
    assert schedule_output(chart_cluster, fmt, capsysbinary) == golden(fmt)


@pytest.mark.parametrize("writer", ["from the first attempt", "none"])
def test_the_detail_writer_process_leaves_the_output_unchanged(
    chart_cluster: Path,
    writer: str,
    monkeypatch: pytest.MonkeyPatch,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    """The spill's forked writer (after 64 attempts above) encodes the fast attempts' detail:
    every attempt through it, or none, gives the same bytes."""
    if writer == "none":
        monkeypatch.setattr(report, "can_fork", lambda: False)
    elif report.can_fork():
        monkeypatch.setattr(report, "WRITER_AFTER", 0)
    else:
        pytest.skip("no os.fork: the spill encodes in its own process")
    monkeypatch.setattr(validation, "_SPEC_ERRORS", {})
    assert schedule_output(chart_cluster, "jsonl", capsysbinary) == golden("jsonl")


@pytest.mark.parametrize("target", ["regular file", "regular file at the end", "pipe"])
def test_schedule_jsonl_to_a_file_descriptor_is_unchanged(
    chart_cluster: Path, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard output as a file or a pipe, the spill's fragments copied to it from the spill
    file (``report._Direct`` to a pipe; to a regular file, at offsets noted by ``positioned.Plan``),
    not through an in-memory stream, or to a regular file by the writer process during the run
    (``streaming.py``: every queued pod binds at its first attempt): the same bytes."""
    monkeypatch.setattr(validation, "_SPEC_ERRORS", {})
    pipe: DrainedPipe | None = None
    if target.startswith("regular file"):
        path = tmp_path / "out.jsonl"
        write_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    else:
        pipe = DrainedPipe()
        write_fd = pipe.fd
    if target == "regular file at the end":
        monkeypatch.setattr(report.DetailSpill, "stream", lambda *args: None)
    copies = []
    copier = positioned.Plan if target.startswith("regular file") else report._Direct
    copy = copier.copy
    monkeypatch.setattr(copier, "copy", lambda *args: copies.append(copy(*args)))
    streamed = []
    lines_end = report.DetailSpill.lines_end

    def spy(spill: report.DetailSpill) -> int:
        streamed.append(spill.lines_streamed)
        return lines_end(spill)

    monkeypatch.setattr(report.DetailSpill, "lines_end", spy)
    with open(write_fd, "w", encoding="utf-8") as stdout, monkeypatch.context() as patch:
        patch.setattr(sys, "stdout", stdout)
        try:
            main(["schedule", "--nodes", str(chart_cluster), "-o", "jsonl"])
        except SystemExit as exit_:
            assert exit_.code in (0, None)
    # Every queued pod's fragment went from the spill file, or with its line during the run.
    if target == "regular file" and report.can_fork():
        assert (streamed, copies) == ([100], [])
    else:
        assert streamed == []
        assert len(copies) >= 100
    got = pipe.bytes_read() if pipe is not None else path.read_bytes()
    assert got == golden("jsonl")


def test_an_interrupted_schedule_completes_the_file_with_what_was_decided(
    chart_cluster: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during the loop, with lines written to the file already (``streaming.py``):
    the report is finished with the decisions made so far, the lines streamed kept as they
    are, each queued pod once (those not attempted Pending, "not attempted: interrupted"),
    exit 130; the writer process is stopped."""
    if not report.can_fork():
        pytest.skip("no os.fork: nothing streams")
    monkeypatch.setattr(validation, "_SPEC_ERRORS", {})
    record = report.DetailSpill.record
    streamed = []

    def interrupted(spill: report.DetailSpill, decision: Any) -> None:
        record(spill, decision)
        if spill.lines_streamed == 80:
            streamed.append(spill.lines_streamed)
            raise KeyboardInterrupt

    monkeypatch.setattr(report.DetailSpill, "record", interrupted)
    path = tmp_path / "out.jsonl"
    path.write_bytes(b"before\n")
    write_fd = os.open(path, os.O_WRONLY)
    os.lseek(write_fd, 0, os.SEEK_END)
    with open(write_fd, "w", encoding="utf-8") as stdout, monkeypatch.context() as patch:
        patch.setattr(sys, "stdout", stdout)
        with pytest.raises(SystemExit) as exit_:
            main(["schedule", "--nodes", str(chart_cluster), "-o", "jsonl"])
    assert exit_.value.code == 130
    assert streamed == [80]
    before, header, *lines = path.read_bytes().splitlines()
    assert before == b"before" and b"plugins" in header
    pods = [json.loads(line) for line in lines]
    assert len(pods) == len({p["pod"] for p in pods}) == 100
    attempted = [p for p in pods if p["attempts"]]
    assert len(attempted) == 80 and all(p["node"] for p in attempted)
    assert all(p["message"] == "not attempted: interrupted" for p in pods if not p["attempts"])
    children = Path(f"/proc/self/task/{os.getpid()}/children")
    if children.exists():  # Linux: no process of the run is left (the writer was reaped)
        assert children.read_text() == ""
