"""Manifests read as kubectl's default ``--validate=strict`` and sigs.k8s.io/yaml read them:
unknown fields, duplicate keys, and go-yaml's limits on aliasing and nesting."""

from __future__ import annotations

import json
from typing import Any

import pytest

from topospread.api import decode, goyaml
from topospread.api.loader import UnknownObject, load_text
from topospread.api.strict import FieldValidation, field_validation, type_of, unknown_fields
from topospread.api.types import Deployment, StatefulSet
from topospread.errors import ManifestError

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicaz: 30
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraint:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}
      containers:
      - name: c
        image: nginx
        imagePullPolicyx: Always
"""

UNKNOWN = (
    'unknown field "spec.replicaz", '
    'unknown field "spec.template.spec.topologySpreadConstraint", '
    'unknown field "spec.template.spec.containers[0].imagePullPolicyx"'
)


def as_json(text: str) -> str:
    docs = list(goyaml.parse_yaml(text, "t"))
    return json.dumps(docs[0])


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_unknown_fields_are_the_api_servers_strict_decoding_error(form: str) -> None:
    text = DEPLOYMENT if form == "yaml" else as_json(DEPLOYMENT)
    with pytest.raises(ManifestError) as err:
        load_text(text, f"web.{form}")
    assert str(err.value) == (
        f"web.{form} (Deployment default/web): strict decoding error: {UNKNOWN}"
    )


def test_strict_is_the_default_and_warn_reads_on_with_a_warning_per_field() -> None:
    with field_validation(FieldValidation.WARN) as warnings:
        (obj,) = load_text(DEPLOYMENT, "web.yaml")
    assert isinstance(obj, Deployment)
    assert warnings == [
        f"web.yaml (Deployment default/web): {field}" for field in UNKNOWN.split(", ")
    ]


def test_ignore_reads_on_without_a_word() -> None:
    with field_validation(FieldValidation.IGNORE) as warnings:
        (obj,) = load_text(DEPLOYMENT, "web.yaml")
    assert isinstance(obj, Deployment) and warnings == []


def test_kinds_the_simulator_leaves_out_are_checked_too_and_custom_resources_are_not() -> None:
    config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndta: {a: b}\n"
    with pytest.raises(ManifestError, match=r'^c.yaml \(ConfigMap c\): .*unknown field "dta"$'):
        load_text(config_map, "c.yaml")
    custom = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nanything: 1\n"
    (obj,) = load_text(custom, "w.yaml")
    assert isinstance(obj, UnknownObject)


def test_a_field_of_the_right_name_in_the_wrong_place_is_unknown() -> None:
    # The hello-dotnet mistake: containers under the template's metadata.
    data: dict[str, Any] = {
        "spec": {"template": {"metadata": {"containers": [], "labels": {"a": "b"}}}}
    }
    assert unknown_fields(data, "V1Deployment") == ["spec.template.metadata.containers"]


def test_status_and_metadata_fields_kubectl_prints_are_known() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "uid": "u",
            "resourceVersion": "1",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r"}],
        },
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }
    assert unknown_fields(pod, "V1Pod") == []


def test_every_kind_the_loader_decodes_has_its_fields_in_the_schema() -> None:
    for api_version, kind in decode._BY_GVK:
        assert type_of(api_version, kind) is not None, (api_version, kind)


@pytest.mark.parametrize(
    ("text", "mode"),
    [("true", "strict"), ("Strict", "strict"), ("warn", "warn"), ("false", "ignore")],
)
def test_validate_values_are_read_as_kubectl_reads_them(text: str, mode: str) -> None:
    assert FieldValidation.parse(text) == mode


def test_a_bad_validate_value_is_one_clear_error() -> None:
    with pytest.raises(ManifestError, match='--validate: invalid value "maybe"'):
        FieldValidation.parse("maybe")


# ---------------------------------------------------------------------------------------------
# Duplicate keys, as sigs.k8s.io/yaml's strict conversion reports them

TWO_WITHOUT_SEPARATOR = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c}]}}
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache}
spec:
  selector: {matchLabels: {app: cache}}
  template: {metadata: {labels: {app: cache}}, spec: {containers: [{name: c}]}}
"""


def test_two_documents_without_a_separator_are_an_error_not_one_lost_object() -> None:
    with pytest.raises(ManifestError) as err:
        load_text(TWO_WITHOUT_SEPARATOR, "sts.yaml")
    assert str(err.value) == (
        "sts.yaml: error converting YAML to JSON: yaml: unmarshal errors: "
        'line 7: key "apiVersion" already set in map; line 8: key "kind" already set in map; '
        'line 9: key "metadata" already set in map; line 11: key "spec" already set in map'
    )


def test_a_nested_duplicate_names_its_line_and_warn_keeps_the_last_value() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\nspec: {containers: []}\n"
    with pytest.raises(ManifestError, match=r'line 5: key "name" already set in map$'):
        load_text(text, "p.yaml")
    with field_validation(FieldValidation.WARN) as warnings:
        (pod,) = load_text(text, "p.yaml")
    assert pod.metadata.name == "q"  # type: ignore[attr-defined]
    assert warnings == [
        'p.yaml: error converting YAML to JSON: yaml: unmarshal errors: line 5: key "name" '
        "already set in map"
    ]


def test_a_merge_that_sets_a_key_twice_is_a_duplicate_in_strict_mode() -> None:
    text = "base: &b {a: 1}\nm: {a: 0, <<: *b}\n"
    with pytest.raises(ManifestError, match='key "a" already set in map'):
        list(goyaml.parse_yaml(text, "m.yaml"))


def test_the_documents_after_a_duplicate_are_still_read_under_warn() -> None:
    text = "apiVersion: v1\nkind: Namespace\nmetadata: {name: a, name: b}\n---\n" + (
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: c}\n"
    )
    with field_validation(FieldValidation.WARN) as warnings:
        objs = load_text(text, "ns.yaml")
    assert [o.metadata.name for o in objs] == ["b", "c"]  # type: ignore[attr-defined]
    assert len(warnings) == 1


def test_large_machine_written_files_keep_the_fast_path_and_its_checks() -> None:
    items = [
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": f"s{i}", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"a": "b"}}, "replicaz": 1},
        }
        for i in range(6000)
    ]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1)
    assert len(text) > decode.SMALL_TEXT_BYTES
    with pytest.raises(ManifestError, match=r'\(StatefulSet default/s0\).*"spec.replicaz"$'):
        load_text(text, "big.json")
    with field_validation(FieldValidation.IGNORE):
        objs = load_text(text, "big.json")
    assert len(objs) == 6000 and all(isinstance(o, StatefulSet) for o in objs)


# ---------------------------------------------------------------------------------------------
# go-yaml's limits


def laughs(levels: int, width: int = 10) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_is_refused_before_anything_is_expanded() -> None:
    with pytest.raises(ManifestError) as err:
        load_text(laughs(9), "lol.yaml")
    assert str(err.value).endswith("could not parse YAML: document contains excessive aliasing")
    assert "line 4," in str(err.value)  # the first alias past the budget, as go-yaml counts


def test_ordinary_use_of_anchors_stays_within_the_alias_budget() -> None:
    text = "base: &b {cpu: 1, memory: 2Gi}\n" + "".join(f"r{i}: *b\n" for i in range(200))
    (doc,) = list(goyaml.parse_yaml(text, "ok.yaml"))
    assert doc["r199"] == {"cpu": 1, "memory": "2Gi"}


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 10_001 + "]" * 10_001, id="flow sequences"),
        pytest.param("x: " + "{a: " * 10_001 + "1" + "}" * 10_001, id="flow mappings"),
        pytest.param("- " * 10_001 + "x", id="block sequences"),
    ],
)
def test_nesting_past_go_yamls_max_depth_is_refused(text: str) -> None:
    with pytest.raises(ManifestError, match=r"exceeded max depth of 10000$"):
        load_text(text, "deep.yaml")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[" * 5000 + "]" * 5000, id="a deep sequence"),
        pytest.param('{"x": ' + "[" * 5000 + "]" * 5000 + "}", id="deep JSON"),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: c, annotations: {a: "
            + "[" * 5000
            + "]" * 5000
            + "}}\n",
            id="deep in a field",
        ),
    ],
)
def test_nesting_below_the_limit_is_one_error_not_a_recursion_error(text: str) -> None:
    with pytest.raises(ManifestError, match=r"^deep\.yaml"):
        load_text(text, "deep.yaml")


def test_objects_read_from_a_live_cluster_are_not_held_to_this_releases_fields(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A newer API server writes fields v1.35 does not have; kubectl get does not refuse them.
    from topospread.cluster import live

    page = json.dumps(
        {
            "apiVersion": "v1",
            "kind": "NodeList",
            "metadata": {},
            "items": [{"metadata": {"name": "n1"}, "spec": {"aFieldFromV1_40": True}}],
        }
    ).encode()
    with pytest.raises(ManifestError, match=r'unknown field "spec\.aFieldFromV1_40"'):
        load_text(page, "nodes.json")
    monkeypatch.setattr(live, "_get_page", lambda *args, **kwargs: page)
    (node,) = live._list_all(None, lambda: None, live.RESOURCES[0], "cluster")  # type: ignore[arg-type]
    assert node.metadata.name == "n1"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("validate", "code", "warned"),
    [("strict", 2, False), ("warn", 0, True), ("false", 0, False)],
)
def test_every_command_that_reads_manifests_takes_validate(
    validate: str,
    code: int,
    warned: bool,
    tmp_path: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from test_cli import run

    chart = tmp_path / "web.yaml"
    chart.write_text(DEPLOYMENT.replace("\n        imagePullPolicyx: Always", ""))
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n"
        "status: {capacity: {cpu: '8', pods: '110'}}\n"
    )
    for argv in (
        ["check", str(chart), "--zones", "3"],
        ["schedule", "--nodes", str(nodes), "--pods", str(chart)],
    ):
        got, _, err = run([*argv, "--validate", validate], capsys)
        assert got == code, (argv, err)
        assert (
            'web.yaml (Deployment default/web): unknown field "spec.replicaz"' in err
        ) is warned, err


def test_a_json_key_that_comes_twice_is_the_api_servers_duplicate_field() -> None:
    text = (
        '{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},'
        ' "spec": {"replicas": 2, "replicaz": 1, "replicas": 3,'
        ' "template": {"metadata": {"labels": {"a": "b", "a": "c"}}}}}'
    )
    with pytest.raises(ManifestError) as err:
        load_text(text, "web.json")
    assert str(err.value) == (
        'web.json (Deployment default/web): strict decoding error: unknown field "spec.replicaz", '
        'duplicate field "spec.replicas", duplicate field "spec.template.metadata.labels.a"'
    )
    with field_validation(FieldValidation.IGNORE):
        (obj,) = load_text(text, "web.json")
    assert obj.spec.replicas == 3  # type: ignore[attr-defined]
    custom = '{"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w", "name": "v"}}'
    with pytest.raises(ManifestError, match=r'duplicate field "metadata\.name"'):
        load_text(custom, "w.json")
