"""Admission hints (``api.admission_hints``): each pod's admission key and own-field check,
found during the read (the pod's text read by this process, or by a forked worker), are the
values admission would find for it, and admission with them admits every pod, and rejects
every invalid one with its message, as admission without them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from topospread.api import admission_hints, loader, yaml_fast, yaml_file
from topospread.api.admission_hints import AdmissionHints, admission_key, collecting
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod
from topospread.errors import ValidationError
from topospread.framework.config import default_config
from topospread.simulator.scenario import build_scenario
from worker_parts import spy_worker_parts, until_a_worker_claims_a_part


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts of 2 KiB decoded by this process and one forked worker."""
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 2048)
    monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(yaml_file, "WINDOW", 4096)


def pod(i: int, **changes: Any) -> dict[str, Any]:
    """A bound pod of one of three templates (i % 3), its own volume named after it."""
    app = f"app{i % 3}"
    spec: dict[str, Any] = {
        "nodeName": "n1",
        "containers": [
            {
                "name": "c",
                "image": f"registry/{app}:1",
                "resources": {"requests": {"cpu": f"{100 * (i % 3 + 1)}m"}},
            }
        ],
        "volumes": [{"name": f"kube-api-access-{i:05d}", "projected": {"sources": []}}],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app": app}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
    }
    spec.update(changes.pop("spec", {}))
    meta = {"name": f"{app}-{i}", "namespace": "ns", "labels": {"app": app}}
    meta.update(changes.pop("metadata", {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, **changes}


NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
    "status": {"allocatable": {"cpu": "64", "memory": "64Gi", "pods": "110"}},
}


def written(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cluster.yaml"
    text = yaml.safe_dump(items, default_flow_style=False, sort_keys=True)
    path.write_text(f"apiVersion: v1\nitems:\n{text}kind: List\nmetadata:\n  resourceVersion: ''\n")
    return path


def read_with_hints(path: Path) -> tuple[list[tuple[str, Any]], AdmissionHints]:
    """The file's objects, located, and their hints; read in parts, a worker reads some."""
    with collecting() as hints:
        objs = loader.load_manifests(path, meanwhile=until_a_worker_claims_a_part)
    return [(f"{path}: object {i + 1}", o) for i, o in enumerate(objs)], hints


def test_every_pod_a_cut_file_holds_gets_the_hint_found_here(
    small_parts: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_worker = spy_worker_parts(monkeypatch)  # the worker's parts' objects
    bad = [
        pod(40, metadata={"namespace": "Not_A_Label"}),
        pod(41, spec={"volumes": [{"name": "Bad_Name", "emptyDir": {}}]}),
        pod(42, spec={"nodeName": "n1", "schedulingGates": [{"name": "g"}]}),
    ]
    path = written(tmp_path, [NODE, *[pod(i) for i in range(40)], *bad])
    located, hints = read_with_hints(path)
    pods = [o for _, o in located if type(o) is Pod]
    assert len(pods) == 43 and len(hints) == 43
    for p in pods:
        assert hints.get(p) == (admission_key(p), pod_fields_valid(p))
    assert sum(valid for _, valid in map(hints.get, pods)) == 40  # type: ignore[misc]
    assert 0 < sum(from_worker) < len(pods)


def test_no_hints_are_found_when_not_collecting(small_parts: None, tmp_path: Path) -> None:
    path = written(tmp_path, [NODE, *[pod(i) for i in range(40)]])
    assert admission_hints._COLLECTING is None
    with collecting() as hints:
        pass
    loader.load_manifests(path)
    assert len(hints) == 0


def test_a_hint_is_only_for_its_own_pod() -> None:
    first = msgspec.json.decode(msgspec.json.encode(pod(1)), type=Pod)
    equal = msgspec.json.decode(msgspec.json.encode(pod(1)), type=Pod)
    hints = AdmissionHints()
    hints.add_objects([first])
    assert hints.get(first) == (admission_key(first), True)
    assert hints.get(equal) is None


def admitted(located: list[tuple[str, Any]], hints: AdmissionHints | None) -> Any:
    try:
        scenario = build_scenario(located, default_config(), hints=hints)
    except ValidationError as err:
        return ("error", str(err))
    return [msgspec.to_builtins(p) for p in scenario.pods + scenario.queue]


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(None, id="all valid"),
        pytest.param(pod(90, metadata={"namespace": "Not_A_Label"}), id="a bad namespace"),
        pytest.param(
            pod(91, spec={"volumes": [{"name": "Bad_Name", "emptyDir": {}}]}), id="a bad volume"
        ),
        pytest.param(
            pod(92, spec={"containers": [{"name": "c", "image": " pause"}]}),
            id="an untrimmed image",
        ),
        pytest.param(pod(93, metadata={"name": "app0-3"}), id="a repeated name"),
    ],
)
def test_admission_with_hints_admits_and_rejects_as_without(
    bad: dict[str, Any] | None, small_parts: None, tmp_path: Path
) -> None:
    pods = [pod(i) for i in range(60)]
    if bad is not None:
        pods.insert(45, bad)  # in the file's back half: a worker's part
    located, hints = read_with_hints(written(tmp_path, [NODE, *pods]))
    assert len(hints) == len(pods)
    with_hints = admitted(located, hints)
    assert with_hints == admitted(located, None)
    assert (bad is None) == isinstance(with_hints, list)
