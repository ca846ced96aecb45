"""What a command does while its manifests are read: the ``meanwhile`` warm-up runs once, in
this process, while forked workers decode the parts (which stay claimed as before), or after
the read when none is forked; and the CLI's start imports only what reading needs."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from test_cli_coercion import last_line_in_a_fresh_interpreter
from topospread.api import loader, yaml_fast, yaml_workers
from topospread.api.decode import Object
from topospread.inputs import Inputs


def node(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": {"topology.kubernetes.io/zone": f"z{i % 3}"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }


def nodes_list(count: int) -> str:
    """Nodes as ``kubectl get nodes -o yaml`` prints them: items at column 0."""
    body = yaml.safe_dump({"items": [node(i) for i in range(count)]}, default_flow_style=False)
    return f"apiVersion: v1\n{body}kind: List\nmetadata:\n  resourceVersion: ''\n"


@pytest.fixture
def tiny_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any text read through the fast path, cut in parts of 300 bytes, with two cores."""
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 300)
    monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 2)


def names(objs: list[Object]) -> list[str]:
    return [o.metadata.name for o in objs]  # type: ignore[attr-defined]


def test_meanwhile_runs_once_after_the_fork_while_the_worker_claims_the_parts() -> None:
    """This process runs ``meanwhile`` before it claims a part; the worker, forked before,
    claims parts meanwhile: here all of them, since ``meanwhile`` waits until none is left.
    The objects still come back whole and in order."""
    parts = [b"apiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n" % i for i in range(6)]
    here: list[str] = []
    parent = os.getpid()

    def decode(raw: bytes, scratch: yaml_fast._Scratch) -> list[Object] | None:
        if os.getpid() == parent:
            here.append("decoded")
        return yaml_fast._decode_part(raw, scratch)

    def waiting() -> None:
        here.append("meanwhile")
        work = yaml_workers._WORK
        assert work is not None, "called outside the read"
        deadline = time.monotonic() + 60
        while _left(work) and time.monotonic() < deadline:
            time.sleep(0.005)

    reader = dataclasses.replace(yaml_fast.PART_READER, decode=decode)
    objs = yaml_workers.decode_parts(parts, [len(p) for p in parts], 1, reader, waiting)
    assert objs is not None and names(objs) == [f"n{i}" for i in range(6)]
    assert here == ["meanwhile"], "this process decoded parts the worker had claimed"


def _left(work: Any) -> bool:
    """Whether parts are left to claim (read without claiming one)."""
    first, end, declined = work.claims._state
    return not declined and first < end


def test_what_meanwhile_raises_is_raised_once_the_workers_have_stopped() -> None:
    parts = [b"apiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n" % i for i in range(4)]

    def failing() -> None:
        raise RuntimeError("warm-up failed")

    with pytest.raises(RuntimeError, match="warm-up failed"):
        yaml_workers.decode_parts(parts, [len(p) for p in parts], 1, yaml_fast.PART_READER, failing)
    assert yaml_workers._WORK is None
    assert multiprocessing.active_children() == []


def test_a_read_that_forks_no_worker_does_not_call_meanwhile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    text = nodes_list(12)
    assert names(loader.load_text(text, "n.yaml", meanwhile=lambda: calls.append(1)))[-1] == "n11"
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 300)
    monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 1)  # parts, decoded here one by one
    assert names(loader.load_text(text, "n.yaml", meanwhile=lambda: calls.append(1)))[-1] == "n11"
    assert calls == []


def test_a_parallel_read_calls_meanwhile_once_while_its_workers_run(tiny_parts: None) -> None:
    during: list[bool] = []
    objs = loader.load_text(
        nodes_list(12), "n.yaml", meanwhile=lambda: during.append(yaml_workers._WORK is not None)
    )
    assert names(objs) == [f"n{i}" for i in range(12)]
    assert during == [True]


@pytest.mark.parametrize("parallel", [True, False], ids=["forked workers", "one process"])
def test_the_scenario_of_manifest_files_calls_meanwhile_once(
    parallel: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once, whatever the files: during the first read that forks workers, else after the
    reads; the scenario is the same either way."""
    if parallel:
        monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
        monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 300)
        monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 2)
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(nodes_list(12))
    second.write_text(nodes_list(12).replace("name: n", "name: m"))
    during: list[bool] = []
    loaded = Inputs(nodes=(first, second)).scenario(
        meanwhile=lambda: during.append(yaml_workers._WORK is not None)
    )
    assert during == [parallel]
    assert [n.metadata.name for n in loaded.nodes][:2] == ["n0", "n1"]
    assert len(loaded.nodes) == 24


def test_a_scenario_document_calls_meanwhile_once_after_it_is_read(tmp_path: Path) -> None:
    doc = tmp_path / "s.yaml"
    doc.write_text(yaml.safe_dump({"nodes": [node(0)], "pods": []}))
    calls: list[int] = []
    loaded = Inputs(doc).scenario(meanwhile=lambda: calls.append(1))
    assert calls == [1] and len(loaded.nodes) == 1


def test_a_read_that_fails_does_not_call_meanwhile(tmp_path: Path) -> None:
    calls: list[int] = []
    with pytest.raises(Exception, match="no such file"):
        Inputs(nodes=(tmp_path / "missing.yaml",)).scenario(meanwhile=lambda: calls.append(1))
    assert calls == []


def test_the_cli_imports_no_decoder_scheduler_or_numpy_before_a_command_runs() -> None:
    """``topospread --help`` and every command's start: the decoders are imported when a
    manifest is read, the scheduler and numpy while it is read (or when a command needs
    them)."""
    script = (
        "import sys\n"
        "import topospread.cli\n"
        "heavy = ('numpy', 'topospread.api.loader', 'topospread.simulator', 'topospread.plugins',"
        " 'topospread.render', 'topospread.conformance', 'topospread.analysis')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    assert last_line_in_a_fresh_interpreter(script) == "[]"
