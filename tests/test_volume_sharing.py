"""Equal volume sources are one object (``volumes.shared_source``), whichever path decoded the
pods: JSON in this process, YAML through the exact path, YAML parts decoded by a forked worker
and taken back as msgpack, or pods built in code. Sharing changes nothing a user sees: each
pod keeps its own volume names, an invalid source is reported under its own pod's path, and a
source equal only by Python's numbers (a divisor of 1.0 and one of 1) is not shared."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest
import yaml

from test_bad_input import GOOD_NODE, assert_one_line_exit_2, write_text
from test_volume_validation import CHART_VOLUMES, make_pod, messages
from topospread.api import loader, volumes, yaml_fast, yaml_file
from topospread.api.decode import Object
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod
from topospread.api.volumes import ProjectedVolumeSource, Volume
from worker_parts import spy_worker_parts, until_a_worker_claims_a_part

TOO_SHORT: Final = (
    "spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid "
    "value: 10: may not specify a duration less than 10 minutes"
)


def api_access(name: str, expiration: int = 3607) -> dict[str, Any]:
    """The ``kube-api-access-…`` volume the API server adds to every pod (the chart pod's,
    ``CHART_VOLUMES[0]``), with this name and token expiry."""
    volume = copy.deepcopy(CHART_VOLUMES[0])
    volume["name"] = name
    volume["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"] = expiration
    return volume


def pod(i: int, *vols: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "image": "nginx"}],
            "volumes": list(vols) or [api_access(f"kube-api-access-{i:05d}")],
        },
    }


def kubectl_list(items: list[dict[str, Any]]) -> str:
    body = yaml.safe_dump({"items": items}, default_flow_style=False, sort_keys=True)
    return f"apiVersion: v1\n{body}kind: List\nmetadata:\n  resourceVersion: ''\n"


def pods_of(objs: list[Object]) -> list[Pod]:
    assert all(isinstance(o, Pod) for o in objs)
    return [o for o in objs if isinstance(o, Pod)]


def projected_of(objs: list[Object]) -> list[ProjectedVolumeSource]:
    return [v.projected for p in pods_of(objs) for v in p.spec.volumes if v.projected is not None]


def assert_one_object(sources: list[Any]) -> None:
    assert len(sources) > 1
    assert all(s is sources[0] for s in sources), "equal sources decoded as separate objects"


def test_equal_sources_of_a_json_list_are_one_object() -> None:
    text = msgspec.json.encode(
        {"apiVersion": "v1", "kind": "List", "items": [pod(i) for i in range(8)]}
    )
    objs = loader.load_text(text, "pods.json")
    assert_one_object(projected_of(objs))
    names = [v.name for p in pods_of(objs) for v in p.spec.volumes]
    assert names == [f"kube-api-access-{i:05d}" for i in range(8)], "each volume keeps its name"


def test_equal_sources_read_by_the_exact_yaml_path_are_one_object() -> None:
    objs = loader.load_text(kubectl_list([pod(i) for i in range(5)]), "pods.yaml")
    assert_one_object(projected_of(objs))


def test_equal_sources_built_in_code_or_taken_back_from_msgpack_are_one_object() -> None:
    built = make_pod(api_access("a"))
    again = msgspec.msgpack.decode(msgspec.msgpack.encode(make_pod(api_access("b"))), type=Pod)
    assert built.spec.volumes[0].projected is again.spec.volumes[0].projected
    # The other kinds pods repeat are shared too, each with its equals only.
    config = {"name": "c", "configMap": {"name": "settings", "items": [{"key": "k", "path": "k"}]}}
    secret = {"name": "s", "secret": {"secretName": "settings"}}
    one, two = make_pod(config, secret), make_pod(secret, config)
    assert one.spec.volumes[0].config_map is two.spec.volumes[1].config_map
    assert one.spec.volumes[1].secret is two.spec.volumes[0].secret


@pytest.fixture
def worker_parts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A file cut in parts of 2 KiB, decoded by this process and one forked worker; the list
    gets the number of objects of each part the worker decoded, as taken back here."""
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    monkeypatch.setattr(yaml_fast, "_CHUNK_BYTES", 2048)
    monkeypatch.setattr(yaml_fast.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(yaml_file, "WINDOW", 4096)
    return spy_worker_parts(monkeypatch)


def read_with_worker(path: Path) -> list[Object]:
    """The file's objects, this process waiting for the worker to claim a part first."""
    return loader.load_manifests(path, meanwhile=until_a_worker_claims_a_part)


def test_equal_sources_decoded_by_a_worker_and_here_are_one_object(
    tmp_path: Path, worker_parts: list[int]
) -> None:
    path = tmp_path / "pods.yaml"
    path.write_text(kubectl_list([pod(i) for i in range(48)]))
    objs = read_with_worker(path)
    assert worker_parts and sum(worker_parts) < len(objs), "not decoded by both processes"
    assert [p.metadata.name for p in pods_of(objs)] == [f"p{i}" for i in range(48)]
    assert_one_object(projected_of(objs))


def test_a_bad_source_among_many_equal_good_ones_is_reported_under_its_own_pod(
    tmp_path: Path, worker_parts: list[int]
) -> None:
    items = [pod(i) for i in range(48)]
    # Equal (shared) bad sources near the front, which this process claims first, and near the
    # back, which the worker does; and one at another volume index.
    for bad in (5, 39):
        items[bad] = pod(bad, api_access(f"kube-api-access-{bad:05d}", expiration=10))
    items[41] = pod(41, {"name": "cfg", "configMap": {"name": "c"}}, api_access("x", 10))
    path = tmp_path / "pods.yaml"
    path.write_text(kubectl_list(items))
    objs = pods_of(read_with_worker(path))
    assert worker_parts, "no part decoded by the worker"
    found = {p.metadata.name: messages(p) for p in objs if messages(p)}
    assert found == {
        "p5": [TOO_SHORT],
        "p39": [TOO_SHORT],
        "p41": [TOO_SHORT.replace("volumes[0]", "volumes[1]")],
    }
    assert [o.metadata.name for o in objs if not pod_fields_valid(o)] == ["p5", "p39", "p41"]
    bad = [v.projected for i in (5, 39) for v in objs[i].spec.volumes]
    assert_one_object([*bad, objs[41].spec.volumes[1].projected])


def test_the_command_names_the_pod_whose_source_is_bad_among_equal_good_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    items = [pod(i) for i in range(6)]
    items[4] = pod(4, api_access("kube-api-access-00004", expiration=10))
    pods = write_text(tmp_path, "pods.yaml", kubectl_list(items))
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    argv = ["schedule", "--nodes", nodes, "--pods", pods]
    assert_one_line_exit_2(argv, capsys, f"pods.yaml: object 5 (Pod default/p4): {TOO_SHORT}")


def test_a_float_divisor_is_not_shared_with_an_equal_int_one_and_is_written_back_as_given() -> None:
    def file(divisor: float) -> dict[str, Any]:
        ref = {"containerName": "c", "resource": "limits.cpu", "divisor": divisor}
        return {"name": "d", "downwardAPI": {"items": [{"path": "cpu", "resourceFieldRef": ref}]}}

    as_int, as_float, again = make_pod(file(1)), make_pod(file(1.0)), make_pod(file(1))
    assert as_int.spec.volumes[0].downward_api is again.spec.volumes[0].downward_api
    assert as_float.spec.volumes[0].downward_api is not as_int.spec.volumes[0].downward_api
    written = msgspec.json.encode(as_float.spec.volumes[0])
    assert b'"divisor":1.0' in written
    assert messages(as_float) == messages(as_int) == []


def test_sources_holding_a_map_stay_each_pods_own() -> None:
    bundle = {"signerName": "example.com/s", "labelSelector": {"matchLabels": {"a": "b"}}}
    vol = {"name": "v", "projected": {"sources": [{"clusterTrustBundle": {**bundle, "path": "b"}}]}}
    one, two = make_pod(vol), make_pod(vol)
    assert one.spec.volumes[0].projected == two.spec.volumes[0].projected
    assert one.spec.volumes[0].projected is not two.spec.volumes[0].projected


def test_a_full_table_starts_afresh_and_sharing_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(volumes, "_SHARED", {})
    monkeypatch.setattr(volumes, "_SHARED_LIMIT", 3)
    made = [
        Volume(name="v", secret=volumes.SecretVolumeSource(secret_name=f"s{i}")) for i in range(5)
    ]
    assert len(volumes._SHARED) <= 3
    again = [
        Volume(name="w", secret=volumes.SecretVolumeSource(secret_name=f"s{i}")) for i in range(5)
    ]
    assert [a.secret == m.secret for a, m in zip(again, made, strict=True)] == [True] * 5
    last = Volume(name="x", secret=volumes.SecretVolumeSource(secret_name="s4"))
    assert last.secret is again[4].secret
