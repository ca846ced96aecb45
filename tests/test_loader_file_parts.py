"""A large List file decoded in parts read from the file by the processes that decode them
(``api.yaml_file``): the same objects as the whole text's cut and as the exact path, or, when
the file is not the List its head and tail make it look like, the whole text read and cut."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from topospread.api import loader, yaml_fast, yaml_file
from topospread.errors import ManifestError


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Parts of 300 bytes, windows of 512, two cores; counts the whole reads and the cuts
    from the file."""
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 300)
    monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(yaml_file, "WINDOW", 512)
    counts = {"whole reads": 0, "file cuts": 0, "fast texts": 0}
    read_from, cut_file, fast_yaml = loader._read_from, loader.cut_file, loader.fast_yaml

    def counted_read(file: Any, source: str) -> bytes:
        counts["whole reads"] += 1
        return read_from(file, source)

    def counted_cut(fd: int, source: str) -> yaml_file.FileParts | None:
        parts = cut_file(fd, source)
        counts["file cuts"] += parts is not None
        return parts

    def counted_fast(*args: Any, **kwargs: Any) -> Any:
        counts["fast texts"] += 1
        return fast_yaml(*args, **kwargs)

    monkeypatch.setattr(loader, "_read_from", counted_read)
    monkeypatch.setattr(loader, "cut_file", counted_cut)
    monkeypatch.setattr(loader, "fast_yaml", counted_fast)
    return counts


def pod(i: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "ns", "labels": labels or {"app": "web"}},
        "spec": {"nodeName": f"n{i % 3}", "containers": [{"name": "c", "image": "pause"}]},
    }


def items(pods: list[dict[str, Any]]) -> str:
    return yaml.safe_dump(pods, default_flow_style=False, sort_keys=True)


def kubectl_list(pods: list[dict[str, Any]], tail: str | None = None) -> str:
    """As ``kubectl get pods -o yaml`` prints it: items at column 0, kind and metadata after."""
    after = "kind: List\nmetadata:\n  resourceVersion: ''\n" if tail is None else tail
    return f"apiVersion: v1\nitems:\n{items(pods)}{after}"


def read(path: Path) -> Any:
    try:
        return [msgspec.to_builtins(o) for o in loader.load_manifests(path)]
    except ManifestError as err:
        return ("error", str(err))


def exact(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The exact path's objects (or error) of the file, read from its text."""
    with monkeypatch.context() as m:
        m.setattr(yaml_fast, "ryml", None)
        try:
            return [msgspec.to_builtins(o) for o in loader.load_text(path.read_text(), str(path))]
        except ManifestError as err:
            return ("error", str(err))


def written(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(kubectl_list([pod(i) for i in range(40)]), id="kubectl's List"),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems:\n" + items([pod(i) for i in range(40)]),
            id="a List whose kind is before its items",
        ),
    ],
)
def test_a_large_list_is_decoded_from_parts_read_from_the_file(
    text: str, small_windows: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = written(tmp_path, text)
    objs = read(path)
    assert small_windows == {"whole reads": 0, "file cuts": 1, "fast texts": 0}
    assert [o["metadata"]["name"] for o in objs] == [f"p{i}" for i in range(40)]
    assert objs == exact(path, monkeypatch)


def test_the_file_parts_are_the_texts_the_whole_texts_cut_makes(
    small_windows: dict[str, int], tmp_path: Path
) -> None:
    text = kubectl_list([pod(i) for i in range(40)])
    raw = text.encode()
    with open(written(tmp_path, text), "rb") as file:
        parts = yaml_file.cut_file(file.fileno(), "t.yaml")
        assert parts is not None
        whole = yaml_fast.split_yaml(raw, len(raw) // yaml_fast._CHUNK_BYTES)
        assert whole is not None
        assert [parts[i] for i in range(len(parts))] == [whole[i] for i in range(len(whole))]
        assert parts.outside == whole.outside
        assert parts.sizes() == whole.sizes()


@pytest.mark.parametrize(
    "middle",
    [
        pytest.param("kind: List\n", id="a key between the items"),
        pytest.param("---\n", id="a document start between the items"),
        pytest.param("metadata:\n  name: x\nfoo:\n", id="keys with a sequence after them"),
    ],
)
def test_a_file_that_is_not_the_list_its_head_and_tail_tell_is_read_whole(
    middle: str, small_windows: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line at column 0 among the items, found by the part that reads it: the whole text
    is read, and cut (or not) as any text."""
    text = kubectl_list([pod(i) for i in range(20)])
    text = text.replace("- apiVersion: v1", middle + "- apiVersion: v1", 11).replace(
        middle + "- apiVersion: v1", "- apiVersion: v1", 10
    )
    assert text.count(middle) >= 1
    path = written(tmp_path, text)
    objs = read(path)
    assert small_windows == {"whole reads": 1, "file cuts": 1, "fast texts": 1}
    assert objs == exact(path, monkeypatch)


def test_a_part_that_declines_sends_the_file_down_the_exact_path_at_once(
    small_windows: dict[str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = [pod(i) for i in range(40)]
    text = kubectl_list(pods).replace("app: web", "app: yes", 1)  # YAML 1.1 reads a bool
    path = written(tmp_path, text)
    objs = read(path)
    assert small_windows == {"whole reads": 1, "file cuts": 1, "fast texts": 0}
    assert objs == exact(path, monkeypatch)


@pytest.mark.parametrize(
    ("text", "cut"),
    [
        pytest.param(yaml.safe_dump_all([pod(i) for i in range(40)]), 0, id="a stream"),
        pytest.param(
            kubectl_list([pod(i) for i in range(40)], "kind: List\nmetadata: [a\n"),
            1,
            id="an unclosed flow sequence in the tail",
        ),
    ],
)
def test_other_files_are_read_whole_as_before(
    text: str,
    cut: int,
    small_windows: dict[str, int],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = written(tmp_path, text)
    objs = read(path)
    assert small_windows["whole reads"] == 1 and small_windows["file cuts"] == cut
    assert objs == exact(path, monkeypatch)


def test_meanwhile_runs_once_when_the_file_is_then_read_whole(
    small_windows: dict[str, int], tmp_path: Path
) -> None:
    text = kubectl_list([pod(i) for i in range(20)])
    text = text.replace("- apiVersion: v1", "---\n- apiVersion: v1", 11).replace(
        "---\n- apiVersion: v1", "- apiVersion: v1", 10
    )
    calls: list[int] = []
    with pytest.raises(ManifestError):  # a document start among a List's items
        loader.load_manifests(written(tmp_path, text), meanwhile=lambda: calls.append(1))
    assert small_windows["file cuts"] == 1 and small_windows["whole reads"] == 1
    assert calls == [1]


def test_a_part_the_file_no_longer_holds_is_not_cut(
    small_windows: dict[str, int], tmp_path: Path
) -> None:
    path = written(tmp_path, kubectl_list([pod(i) for i in range(40)]))
    with open(path, "rb") as file:
        parts = yaml_file.cut_file(file.fileno(), "t.yaml")
        assert parts is not None
        os.truncate(path, path.stat().st_size // 2)
        with pytest.raises(yaml_file.NotCut):
            parts[len(parts) - 1]


def test_a_missing_file_or_a_directory_is_the_same_error(tmp_path: Path) -> None:
    missing = tmp_path / "none.yaml"
    assert read(missing) == ("error", f"{missing}: no such file or directory")
    assert read(tmp_path) == ("error", f"{tmp_path}: is a directory, not a manifest file")
