"""Streaming reports: ``schedule -o jsonl|yaml`` and ``explain -o json|jsonl`` write the same
content as the plain constructions they replace, one line or document at a time."""

from __future__ import annotations

import io
import itertools
import json
import os
import types
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import make_node, make_pod, match_labels
from topospread.analysis.explain import explain
from topospread.cli import main
from topospread.framework.config import default_config
from topospread.render import detail_writer, report
from topospread.render.detail_writer import DetailWriter
from topospread.render.report import (
    DetailSpill,
    cluster_documents,
    cluster_yaml,
    dump_yaml_documents,
    jsonl,
    write_cluster_yaml,
    write_jsonl,
)
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario, load_scenario

SCENARIOS = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def reference_jsonl(run: ScheduleRun) -> list[dict[str, Any]]:
    """The report as it was built before streaming: one dict per line, from ``to_json``."""
    frameworks = run.scheduler.frameworks
    header: dict[str, Any] = {"plugins": next(iter(frameworks.values())).describe()}
    if len(frameworks) > 1:
        header["profiles"] = {name: f.describe() for name, f in frameworks.items()}
    return [header, *(o.to_json() for o in run.outcomes)]


def reference_yaml(run: ScheduleRun) -> str:
    """The cluster document stream as it was built before streaming: all at once."""
    return yaml.safe_dump_all(
        list(cluster_documents(run)), sort_keys=False, default_flow_style=False
    )


def same_json(got: list[Any], want: list[Any]) -> bool:
    """Equal values with the same key order (json.dumps keeps a dict's order)."""
    return [json.dumps(g) for g in got] == [json.dumps(w) for w in want]


def spread_scenario() -> Scenario:
    """Six nodes in three zones, bound pods, and a queue that binds, fails, is gated, and
    preempts a bound pod of lower priority."""
    nodes = [
        make_node(f"n{i}")
        .label(ZONE, f"z{i % 3}")
        .label(HOST, f"n{i}")
        .capacity(cpu="2", memory="4Gi")
        .obj()
        for i in range(6)
    ]
    bound = [
        make_pod(f"old-{i}").label("app", "web").node(f"n{i % 6}").req(cpu="500m").obj()
        for i in range(9)
    ]
    bound.append(make_pod("filler").node("n5").req(cpu="1500m").priority(0).obj())
    queue = [
        make_pod(f"web-{i}")
        .label("app", "web")
        .req(cpu="500m")
        .spread_constraint(1, ZONE, "DoNotSchedule", match_labels(app="web"))
        .spread_constraint(1, HOST, "ScheduleAnyway", match_labels(app="web"))
        .obj()
        for i in range(6)
    ]
    queue.append(make_pod("huge").req(cpu="64").obj())
    queue.append(make_pod("gated").scheduling_gates("wait").container().obj())
    queue.append(make_pod("vip").priority(1000).node_selector(HOST, "n5").req(cpu="1500m").obj())
    return Scenario(nodes=nodes, pods=bound, queue=queue, objects=[], config=default_config())


def example(name: str) -> Scenario:
    return load_scenario(SCENARIOS / f"{name}.yaml")


CASES = {
    "docs-one-constraint": lambda: example("docs-one-constraint"),
    "docs-two-constraints": lambda: example("docs-two-constraints"),
    "docs-conflicting-constraints": lambda: example("docs-conflicting-constraints"),
    "spread-fail-gate-preempt": spread_scenario,
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_jsonl_lines_parse_to_the_to_json_report_key_for_key(case: str) -> None:
    run = schedule(CASES[case](), seed=3)
    lines = list(jsonl(run))
    assert all(line.endswith(b"\n") and line.count(b"\n") == 1 for line in lines)
    assert same_json([json.loads(line) for line in lines], reference_jsonl(run))


@pytest.mark.parametrize("writer", ["in process", "writer process", "writer behind"])
@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_spill_takes_each_attempts_detail_and_the_report_is_unchanged(
    case: str, writer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if writer != "in process":
        if not report.can_fork():
            pytest.skip("no os.fork: the spill encodes in its own process")
        # Every attempt through the forked writer: fast ones as columns, the others
        # (failures, preemption) as fragments encoded here.
        monkeypatch.setattr(report, "WRITER_AFTER", 0)
        # Every other attempt finds the pipe full, and is encoded here, beside the writer's;
        # each batch goes at once.
        if writer == "writer behind":
            room = itertools.cycle([False, True])
            monkeypatch.setattr(DetailWriter, "_has_room", lambda self, size: next(room))
            monkeypatch.setattr(detail_writer, "_BATCH_BYTES", 1)
    else:
        monkeypatch.setattr(report, "can_fork", lambda: False)
    want = reference_jsonl(schedule(CASES[case](), seed=3))
    with DetailSpill() as spill:
        run = schedule(CASES[case](), seed=3, on_decision=spill.record)
        # No attempt keeps its per-node detail in memory once it is decided...
        assert all(
            not (d.feasible or d.scores or d.plugin_scores or d.reasons) for d in run.attempts
        )
        out = io.BytesIO()
        write_jsonl(run, out, spill)
    # ... and the spill gives back exactly what each pod's last attempt decided.
    got = [json.loads(line) for line in out.getvalue().splitlines()]
    assert same_json(got, want)


def test_a_spill_closed_unread_stops_its_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    if not report.can_fork():
        pytest.skip("no os.fork: the spill encodes in its own process")
    monkeypatch.setattr(report, "WRITER_AFTER", 0)
    with DetailSpill() as spill:
        schedule(spread_scenario(), seed=3, on_decision=spill.record)
        writer = spill._writer
        assert writer is not None  # the attempts went to a writer process...
    with pytest.raises(ChildProcessError):  # ... which close() stopped and reaped
        os.waitpid(writer._pid, os.WNOHANG)


def test_the_spill_covers_every_kind_of_outcome() -> None:
    run = schedule(spread_scenario(), seed=3)
    messages = [o.message or "" for o in run.outcomes]
    assert any(o.node is not None for o in run.outcomes)
    assert any(m.startswith("0/6 nodes are available") for m in messages)
    assert "Scheduling is blocked due to non-empty scheduling gates" in messages
    assert any(d.preempted for d in run.attempts)


def test_jsonl_is_a_generator_that_encodes_lines_as_they_are_read() -> None:
    run = schedule(spread_scenario(), seed=3)
    lines = jsonl(run)
    assert isinstance(lines, types.GeneratorType)
    header = json.loads(next(lines))
    assert list(header) == ["plugins"]
    first = json.loads(next(lines))
    assert first["pod"] == run.outcomes[0].key


class RecordingStream(io.BytesIO):
    """A binary stream that remembers each write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []

    def write(self, b: Any) -> int:
        self.writes.append(bytes(b))
        return super().write(b)


def test_write_jsonl_writes_one_line_per_write() -> None:
    run = schedule(spread_scenario(), seed=3)
    out = RecordingStream()
    write_jsonl(run, out)
    assert len(out.writes) == len(run.outcomes) + 1
    assert [json.loads(w)["pod"] for w in out.writes[1:]] == [o.key for o in run.outcomes]


def test_a_pod_never_attempted_reports_no_attempt() -> None:
    run = schedule(spread_scenario(), seed=3)
    gated = next(json.loads(line) for line in jsonl(run) if b"default/gated" in line)
    assert gated == {
        "pod": "default/gated",
        "node": None,
        "message": "Scheduling is blocked due to non-empty scheduling gates",
        "attempts": [],
    }


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_cluster_yaml_is_byte_for_byte_the_all_at_once_dump(case: str) -> None:
    run = schedule(CASES[case](), seed=3)
    assert cluster_yaml(run) == reference_yaml(run)


class TextRecordingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return super().write(s)


def test_cluster_yaml_is_written_document_by_document() -> None:
    run = schedule(spread_scenario(), seed=3)
    documents = cluster_documents(run)
    assert isinstance(documents, types.GeneratorType)
    first = next(documents)
    assert (first["kind"], first["metadata"]["name"]) == ("Node", "n0")
    out = TextRecordingStream()
    write_cluster_yaml(run, out)
    count = sum(1 for _ in cluster_documents(run))
    assert out.getvalue().count("\n---\n") == count - 1
    assert out.writes >= count  # at least one write per document: nothing is held back


def test_documents_libyaml_would_fold_differently_are_still_the_same_bytes() -> None:
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "annotations": {
                "description": "Ünïcödé text — with a dash " * 5,
                "k" * 128: "a key at libyaml's simple-key limit",
                "windows": "line\r\nbreaks\tand tabs",
                "": "empty key",
            },
        },
    }
    plain = {"kind": "Node", "metadata": {"name": "n", "labels": {"a/b": "c"}}}
    # Printable ASCII, but double-quoted, and so folded differently.
    folded = {"kind": "ConfigMap", "data": {"folded": "x" * 100 + " a\n "}}
    documents = [plain, pod, plain, folded]
    out = io.StringIO()
    dump_yaml_documents(documents, out)
    assert out.getvalue() == yaml.safe_dump_all(
        documents, sort_keys=False, default_flow_style=False
    )


_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=140),
    st.sampled_from(
        [
            "",
            "yes",
            "null",
            "1e3",
            "a: b",
            "- x",
            "#c",
            "a\nb",
            "x" * 128,
            " a ",
            "x" * 100 + " a\n ",
        ]
    ),
)
_VALUES = st.recursive(
    st.one_of(_TEXT, st.integers(), st.booleans(), st.none(), st.floats()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(_TEXT, _VALUES, max_size=4), max_size=3))
def test_the_streaming_yaml_dump_equals_safe_dump_all_on_random_documents(
    documents: list[dict[str, Any]],
) -> None:
    out = io.StringIO()
    dump_yaml_documents(documents, out)
    assert out.getvalue() == yaml.safe_dump_all(
        documents, sort_keys=False, default_flow_style=False
    )


def run_cli(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0


def test_schedule_jsonl_from_the_cli_parses_to_the_reference_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.yaml"
    s = spread_scenario()
    path.write_text(
        yaml.safe_dump(
            {
                "nodes": [msgspec.to_builtins(n) for n in s.nodes],
                "pods": [msgspec.to_builtins(p) for p in s.pods],
                "queue": [msgspec.to_builtins(p) for p in s.queue],
            }
        )
    )
    run_cli(["schedule", str(path), "-o", "jsonl", "--seed", "5"])
    got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert same_json(got, reference_jsonl(schedule(load_scenario(path), seed=5)))
    run_cli(["schedule", str(path), "-o", "yaml", "--seed", "5"])
    assert capsys.readouterr().out == reference_yaml(schedule(load_scenario(path), seed=5))


def test_explain_json_is_byte_for_byte_the_indented_dump(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = SCENARIOS / "docs-conflicting-constraints.yaml"
    want = explain(load_scenario(path), "mypod").to_json()
    run_cli(["explain", str(path), "--pod", "mypod", "-o", "json"])
    assert capsys.readouterr().out == json.dumps(want, indent=2) + "\n"
    run_cli(["explain", str(path), "--pod", "mypod", "-o", "jsonl"])
    (line,) = capsys.readouterr().out.splitlines()
    assert same_json([json.loads(line)], [want])
