"""The jsonl report's lines written during the run, as each becomes final (``streaming.py``):
the file is byte for byte the report written at the end, whether every line streams, the
stream stops midway (a pod that fails and binds later, a preemptor) or never starts (a pod of
a higher priority later in the queue, a run too small for the writer process, an output that
is not a regular file written at its end). A writer that cannot write a line, a line that
would differ, an interrupted run: an error, and the lines written are taken back."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from builders import make_node, make_pod, match_labels
from test_report_direct_write import in_memory, through_a_pipe
from test_reports import HOST, ZONE, spread_scenario
from topospread.api.types import Pod
from topospread.framework.config import default_config
from topospread.render import detail_writer, report
from topospread.render.report import DetailSpill, write_jsonl
from topospread.simulator.decision import Decision
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario

pytestmark = pytest.mark.skipif(not report.can_fork(), reason="no os.fork: nothing streams")

BEFORE = b"kept before the report\n"


def web(name: str, priority: int = 0) -> Pod:
    return (
        make_pod(name)
        .label("app", "web")
        .req(cpu="500m")
        .priority(priority)
        .spread_constraint(1, ZONE, "DoNotSchedule", match_labels(app="web"))
        .obj()
    )


def cluster(queue: list[Pod], bound: list[Pod] | None = None) -> Scenario:
    """Six nodes of 2 CPUs in three zones."""
    nodes = [
        make_node(f"n{i}")
        .label(ZONE, f"z{i % 3}")
        .label(HOST, f"n{i}")
        .capacity(cpu="2", memory="4Gi")
        .obj()
        for i in range(6)
    ]
    return Scenario(nodes=nodes, pods=bound or [], queue=queue, objects=[], config=default_config())


def all_bind() -> Scenario:
    return cluster([web(f"web-{i}") for i in range(8)])


# A pod that must run on a node where a pod labelled app=leader runs.
BY_A_LEADER = {
    "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "leader"}}, "topologyKey": HOST}
        ]
    }
}


def fails_then_binds() -> Scenario:
    """``follower`` needs a ``leader`` on its node: it fails, and binds once the leader has."""
    follower = make_pod("follower").req(cpu="100m").spec_field("affinity", BY_A_LEADER).obj()
    leader = make_pod("leader").label("app", "leader").req(cpu="100m").obj()
    return cluster([web("web-0"), web("web-1"), web("web-2"), follower, leader, web("web-3")])


def preempts() -> Scenario:
    """``grab`` preempts a bound pod of lower priority than every queued pod."""
    filler = make_pod("filler").node("n5").req(cpu="1800m").priority(0).obj()
    grab = make_pod("grab").priority(100).node_selector(HOST, "n5").req(cpu="1500m").obj()
    queue = [web("web-0", 100), web("web-1", 100), grab, web("web-2", 100)]
    return cluster(queue, [filler])


def scheduled(
    make: Callable[[], Scenario],
    spill: DetailSpill,
    out: IO[bytes] | None,
    on_decision: Callable[[Decision], None] | None = None,
    *,
    fast: bool = True,
) -> ScheduleRun:
    """The run, its lines streamed to ``out`` where they can be."""
    scenario = make()

    def started(scheduler: Any) -> None:
        if out is not None:
            spill.stream(out, scheduler.frameworks, scenario.queue)

    return schedule(
        scenario, seed=3, on_decision=on_decision or spill.record, on_start=started, fast=fast
    )


def report_at_the_end(make: Callable[[], Scenario], *, fast: bool = True) -> bytes:
    """The report as written when nothing streams."""
    with DetailSpill() as spill:
        return in_memory(schedule(make(), seed=3, on_decision=spill.record, fast=fast), spill)


@contextlib.contextmanager
def streaming_to(path: Path) -> Iterator[IO[bytes]]:
    with path.open("wb") as out:
        out.write(BEFORE)
        yield out


CASES = {
    "every pod binds at its first attempt": (all_bind, 8),
    "a pod fails, then binds later": (fails_then_binds, 3),
    "a preemptor's first attempt": (preempts, 2),
    "a pod of a higher priority later": (spread_scenario, 0),
}


@pytest.mark.parametrize("writer_after", [0, 2], ids=["writer first", "writer after two"])
@pytest.mark.parametrize(("make", "streamed"), CASES.values(), ids=CASES.keys())
def test_the_file_is_the_report_written_at_the_end(
    make: Callable[[], Scenario],
    streamed: int,
    writer_after: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", writer_after)
    want = report_at_the_end(make)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out, DetailSpill() as spill:
        run = scheduled(make, spill, out)
        assert spill.lines_streamed == streamed
        write_jsonl(run, out, spill, final=True)
        assert out.tell() == len(BEFORE) + len(want)
        out.write(b"after\n")
    assert path.read_bytes() == BEFORE + want + b"after\n"
    lines = want.splitlines()[1:]
    if 0 < streamed < len(lines):  # stopped at a pod whose first attempt did not bind it
        assert b'"attempts":[{"attempt":1,"node":null' in lines[streamed]


@pytest.mark.parametrize("writer_after", [0, 2], ids=["writer first", "writer after two"])
def test_lines_whose_detail_this_process_encoded_stream_too(
    writer_after: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference path's attempts have no columns for the writer: their fragments are
    encoded here, and the writer copies each line's from the spill's second file."""
    monkeypatch.setattr(report, "WRITER_AFTER", writer_after)
    want = report_at_the_end(fails_then_binds, fast=False)
    assert want == report_at_the_end(fails_then_binds)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out, DetailSpill() as spill:
        run = scheduled(fails_then_binds, spill, out, fast=False)
        assert spill.lines_streamed == 3
        write_jsonl(run, out, spill, final=True)
    assert path.read_bytes() == BEFORE + want


def test_a_run_too_small_for_the_writer_streams_nothing(tmp_path: Path) -> None:
    want = report_at_the_end(all_bind)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out, DetailSpill() as spill:
        run = scheduled(all_bind, spill, out)
        assert spill.lines_streamed == 0  # 8 attempts: no writer process
        write_jsonl(run, out, spill, final=True)
    assert path.read_bytes() == BEFORE + want


@pytest.mark.parametrize(
    "output", ["appended file", "pipe", "in-memory stream", "file updated", "standard error's file"]
)
def test_other_outputs_stream_nothing(
    output: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", 0)
    want = report_at_the_end(all_bind)

    def written(out: IO[bytes]) -> None:
        with DetailSpill() as spill:
            run = scheduled(all_bind, spill, out)
            assert spill.lines_streamed == 0
            write_jsonl(run, out, spill, final=True)

    path = tmp_path / "out.jsonl"
    if output == "appended file":
        path.write_bytes(BEFORE)
        with path.open("ab") as out:
            written(out)
        assert path.read_bytes() == BEFORE + want
    elif output == "pipe":
        assert through_a_pipe(written) == want
    elif output == "standard error's file":  # ``> out 2>&1``: warnings may come meanwhile
        with path.open("wb") as out, path.open("ab") as stderr, monkeypatch.context() as patch:
            patch.setattr("sys.stderr", stderr)
            written(out)
        assert path.read_bytes() == want
    elif output == "in-memory stream":
        buffer = io.BytesIO()
        written(buffer)
        assert buffer.getvalue() == want
    else:  # opened to update, over longer contents: the bytes after the report stay
        path.write_bytes(b"x" * (1 << 20))
        with path.open("r+b") as out:
            written(out)
        assert path.read_bytes() == want + b"x" * ((1 << 20) - len(want))


def test_a_line_the_writer_cannot_write_is_an_error_and_the_lines_are_taken_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", 0)

    def full(*args: object) -> tuple[int, str]:
        return (errno.ENOSPC, os.strerror(errno.ENOSPC))

    # Patched before the fork: the writer's line writes fail.
    monkeypatch.setattr(detail_writer, "_write_line", full)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out:
        with DetailSpill() as spill:
            run = scheduled(all_bind, spill, out)
            assert spill.lines_streamed == 8
            with pytest.raises(OSError, match="No space left on device"):
                write_jsonl(run, out, spill, final=True)
        out.flush()
        assert path.read_bytes() == BEFORE


def test_a_writer_that_dies_while_streaming_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", 0)

    def dies(*args: object) -> None:
        os._exit(3)

    monkeypatch.setattr(detail_writer, "_write_line", dies)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out:
        with DetailSpill() as spill:
            run = scheduled(all_bind, spill, out)
            with pytest.raises(RuntimeError, match="detail writer exited with status"):
                write_jsonl(run, out, spill, final=True)
        assert path.read_bytes() == BEFORE


@pytest.mark.parametrize("written", [False, True], ids=["not written", "written"])
def test_an_interrupted_run_is_reported_or_its_lines_taken_back(
    written: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C with lines written already: the run ends with the decisions made so far
    (``run.interrupted``). Its report written, the lines streamed stay and the rest follow;
    not written (the command stopped before), the lines written are taken back."""
    monkeypatch.setattr(report, "WRITER_AFTER", 0)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out:
        with DetailSpill() as spill:
            seen: list[Decision] = []

            def record(decision: Decision) -> None:
                spill.record(decision)
                seen.append(decision)
                if len(seen) == 5:  # Ctrl-C, with lines written already
                    assert spill.lines_streamed == 5
                    raise KeyboardInterrupt

            run = scheduled(all_bind, spill, out, record)
            assert run.interrupted and len(run.attempts) == 5
            if written:
                write_jsonl(run, out, spill, final=True)
        if not written:
            assert path.read_bytes() == BEFORE
            return
    lines = path.read_bytes().removeprefix(BEFORE).splitlines()
    pods = [json.loads(line) for line in lines[1:]]
    assert [bool(p["node"]) for p in pods] == [True] * 5 + [False] * (len(pods) - 5)
    assert {p["message"] for p in pods[5:]} == {"not attempted: interrupted"}


def test_a_line_that_would_differ_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", 0)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out:
        with DetailSpill() as spill:
            run = scheduled(all_bind, spill, out)
            run.outcomes[3].message = "changed after the run"
            with pytest.raises(RuntimeError, match="default/web-3 was written during the run"):
                write_jsonl(run, out, spill, final=True)
        assert path.read_bytes() == BEFORE


def test_the_report_to_another_output_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", 0)
    with streaming_to(tmp_path / "out.jsonl") as out, DetailSpill() as spill:
        run = scheduled(all_bind, spill, out)
        with (
            (tmp_path / "other.jsonl").open("wb") as other,
            pytest.raises(RuntimeError, match="first lines went to another output"),
        ):
            write_jsonl(run, other, spill, final=True)
        # Nor can a streamed line's detail be read from the spill.
        with pytest.raises(RuntimeError, match="written to the report during the run"):
            in_memory(run, spill)


def random_cluster(seed: int) -> Callable[[], Scenario]:
    """Pods of mostly one priority, some too large to fit at first, some bound pods of a lower
    priority that preemption may evict, pods that need a leader's node, and the leaders."""

    def make() -> Scenario:
        rng = random.Random(seed)
        bound = [
            make_pod(f"old-{i}").node(f"n{rng.randrange(6)}").req(cpu="700m").priority(0).obj()
            for i in range(rng.randrange(6))
        ]
        queue = []
        size = rng.randrange(6, 16)
        higher = rng.randrange(size) if seed % 4 == 3 else -1  # one pod of priority 80
        for i in range(size):
            kind = rng.choice(["web"] * 8 + ["big", "follower", "leader"])
            priority = 80 if i == higher else 50
            if kind == "web":
                queue.append(web(f"web-{i}", priority))
            elif kind == "big":
                cpu = rng.choice(["1500m", "1900m", "3"])
                queue.append(make_pod(f"big-{i}").req(cpu=cpu).priority(priority).obj())
            else:
                pod = make_pod(f"{kind}-{i}").req(cpu="100m").priority(priority)
                if kind == "leader":
                    pod = pod.label("app", "leader")
                else:
                    pod = pod.spec_field("affinity", BY_A_LEADER)
                queue.append(pod.obj())
        return cluster(queue, bound)

    return make


@pytest.mark.parametrize("seed", range(12))
def test_random_runs_give_the_report_written_at_the_end(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(report, "WRITER_AFTER", seed % 3)
    make = random_cluster(seed)
    want = report_at_the_end(make)
    path = tmp_path / "out.jsonl"
    with streaming_to(path) as out, DetailSpill() as spill:
        run = scheduled(make, spill, out)
        streamed = spill.lines_streamed
        write_jsonl(run, out, spill, final=True)
    assert path.read_bytes() == BEFORE + want
    # Every line streamed is one bound attempt; the next one, if any, is not (or a pod of a
    # higher priority is queued).
    lines = [json.loads(line) for line in want.splitlines()[1:]]
    assert all(len(line["attempts"]) == 1 and line["node"] for line in lines[:streamed])
