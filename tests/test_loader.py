"""The manifest loader: every input form, Kubernetes' YAML and null rules, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from topospread.api import decode
from topospread.api.loader import (
    UnknownObject,
    decode_manifests,
    decode_object,
    load_manifests,
    load_text,
    read_yaml_documents,
    register_kind,
)
from topospread.api.strict import FieldValidation, field_validation
from topospread.api.types import (
    Namespace,
    Node,
    ObjectMeta,
    Pod,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    Toleration,
)
from topospread.errors import ManifestError

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: shop
  labels: {app: web}
spec:
  nodeName: node-1
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector: {matchLabels: {app: web}}
  containers:
  - name: main
    resources: {requests: {cpu: 250m, memory: 1Gi}}
"""

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {topology.kubernetes.io/zone: zone-a}
status: {allocatable: {cpu: "4", pods: 110}}
"""


def write(tmp_path: Path, text: str | bytes, name: str = "manifests.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def summary(objects: list[Any]) -> list[str]:
    """Each object as ``Kind namespace/name`` (``Kind name`` when cluster-scoped)."""
    out = []
    for obj in objects:
        if isinstance(obj, UnknownObject):
            out.append(f"?{obj.kind} {obj.namespace}/{obj.name}")
        elif obj.metadata.namespace:
            out.append(f"{obj.kind} {obj.metadata.namespace}/{obj.metadata.name}")
        else:
            out.append(f"{obj.kind} {obj.metadata.name}")
    return out


def load_error(tmp_path: Path, text: str | bytes, name: str = "manifests.yaml") -> str:
    path = write(tmp_path, text, name)
    with pytest.raises(ManifestError) as info:
        load_manifests(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:") or message.startswith(f"{path} (")
    return message.replace(str(path), name)


# ---------------------------------------------------------------------------------------------
# Input forms


def test_a_single_yaml_document_decodes_into_a_typed_pod(tmp_path: Path) -> None:
    (pod,) = load_manifests(write(tmp_path, POD))
    assert isinstance(pod, Pod)
    assert pod.key == "shop/web-1"
    assert pod.labels == {"app": "web"}
    (constraint,) = pod.spec.topology_spread_constraints
    assert constraint.max_skew == 1
    assert constraint.label_selector is not None
    assert constraint.label_selector.match_labels == {"app": "web"}
    assert pod.spec.containers[0].resources.requests == {"cpu": "250m", "memory": "1Gi"}


def test_a_multi_document_stream_keeps_file_order_and_skips_empty_documents(
    tmp_path: Path,
) -> None:
    text = f"---\n{NODE}---\n---\n# only a comment\n---\n{POD}---\n"
    assert summary(load_manifests(write(tmp_path, text))) == ["Node node-1", "Pod shop/web-1"]


def test_a_kubectl_list_flattens_its_items(tmp_path: Path) -> None:
    items = [
        json.loads(json.dumps(read_yaml_documents(write(tmp_path, t))[0])) for t in (NODE, POD)
    ]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}})
    objects = load_manifests(write(tmp_path, text, "list.json"))
    assert summary(objects) == ["Node node-1", "Pod shop/web-1"]
    assert isinstance(objects[0], Node)
    assert objects[0].status.allocatable == {"cpu": "4", "pods": 110}


@pytest.mark.parametrize(
    ("name", "text"),
    [
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nkind: NodeList\nitems:\n"
            "- metadata: {name: a}\n- metadata: {name: b}\n",
            id="a NodeList in YAML",
        ),
        pytest.param(
            "nodes.json",
            '{"apiVersion": "v1", "kind": "NodeList", "metadata": {"resourceVersion": "7"},\n'
            ' "items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]}',
            id="a NodeList in JSON",
        ),
    ],
)
def test_items_of_a_typed_list_take_their_kind_from_the_list(
    tmp_path: Path, name: str, text: str
) -> None:
    objects = load_manifests(write(tmp_path, text, name))
    assert all(isinstance(obj, Node) for obj in objects)
    assert summary(objects) == ["Node a", "Node b"]


@pytest.mark.parametrize("name", ["nested.yaml", "nested.json"])
def test_lists_nested_in_lists_are_flattened(tmp_path: Path, name: str) -> None:
    data = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "p"}}]},
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
        ],
    }
    objects = load_manifests(write(tmp_path, json.dumps(data), name))
    assert summary(objects) == ["Pod default/p", "Service default/s"]


def test_a_top_level_sequence_of_manifests_is_refused_in_yaml_and_json_as_kubectl_does(
    tmp_path: Path,
) -> None:
    # kubectl decodes each document as one object: an array is not one ("cannot unmarshal
    # array"), so a tool that read it would pass what `kubectl apply` refuses.
    for text, name in (
        ('[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}]', "a.json"),
        ("- {apiVersion: v1, kind: Node, metadata: {name: a}}\n", "a.yaml"),
    ):
        with pytest.raises(ManifestError, match="got a sequence: kubectl reads one object"):
            load_manifests(write(tmp_path, text, name))


def test_a_yaml_flow_mapping_that_starts_like_json_is_read_as_yaml(tmp_path: Path) -> None:
    text = "{apiVersion: v1, kind: Node, metadata: {name: a}}\n"
    assert summary(load_manifests(write(tmp_path, text))) == ["Node a"]


def test_text_and_bytes_load_alike_with_or_without_a_byte_order_mark() -> None:
    assert summary(load_text(NODE, "n.yaml")) == ["Node node-1"]
    assert summary(load_text(NODE.encode(), "n.yaml")) == ["Node node-1"]
    assert summary(load_text(b"\xef\xbb\xbf" + NODE.encode(), "n.yaml")) == ["Node node-1"]
    assert summary(load_text("\ufeff" + json.dumps({"apiVersion": "v1", "kind": "Node"}), "j")) == [
        "Node "
    ]


def test_every_registered_kind_decodes_into_its_struct() -> None:
    data = [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}},
        {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "rc"}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "ss"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "value": 1000},
    ]
    objects = decode_manifests(data, "case.yaml: objects")
    assert [type(o) for o in objects] == [
        Service,
        ReplicationController,
        ReplicaSet,
        StatefulSet,
        Namespace,
        PriorityClass,
    ]
    assert isinstance(objects[-1], PriorityClass) and objects[-1].value == 1000


def test_decode_manifests_takes_one_manifest_a_list_or_nothing() -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "a"}}
    assert summary(decode_manifests(node, "s")) == ["Node a"]
    assert summary(decode_manifests([node, node], "s")) == ["Node a", "Node a"]
    assert decode_manifests(None, "s") == []


def test_a_registered_kind_is_decoded_by_later_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decode, "_BY_GVK", dict(decode._BY_GVK))
    monkeypatch.setattr(decode, "_BY_CLASS", dict(decode._BY_CLASS))

    class Widget(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
        api_version: str = "example.com/v1"
        kind: str = "Widget"
        metadata: ObjectMeta = ObjectMeta()
        size: int = 0

    manifest = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert isinstance(decode_manifests(manifest, "w.yaml")[0], UnknownObject)
    register_kind(Widget, api_version="example.com/v1", kind="Widget", namespaced=True)
    (widget,) = decode_manifests({**manifest, "size": 3}, "w.yaml")
    assert isinstance(widget, Widget)
    assert (widget.size, widget.metadata.namespace) == (3, "default")
    assert decode_object({"size": 4}, Widget, "w.yaml").size == 4
    with pytest.raises(ValueError, match="already registered to Widget"):
        register_kind(Node, api_version="example.com/v1", kind="Widget", namespaced=False)


# ---------------------------------------------------------------------------------------------
# decode_object: one object where the caller knows what it must be


def test_an_expected_kind_may_leave_out_apiversion_and_kind() -> None:
    node = decode_object({"metadata": {"name": "n1"}}, Node, "case.yaml: nodes[0]")
    assert isinstance(node, Node) and node.name == "n1"
    pod = decode_object({"kind": "Pod", "metadata": {"name": "p"}}, Pod, "case.yaml: pod")
    assert pod.key == "default/p"


def test_without_an_expected_kind_any_registered_or_unknown_object_comes_back() -> None:
    service = decode_object({"apiVersion": "v1", "kind": "Service"}, None, "case.yaml")
    assert isinstance(service, Service)
    unknown = decode_object(
        {"apiVersion": "apps/v1", "kind": "ControllerRevision"}, None, "case.yaml"
    )
    assert isinstance(unknown, UnknownObject)


@pytest.mark.parametrize(
    ("data", "expected", "message"),
    [
        pytest.param(
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
            Node,
            'case.yaml: nodes[0]: kind: expected "Node", got "Pod"',
            id="a Pod where a Node must be",
        ),
        pytest.param(
            {"apiVersion": "apps/v1", "metadata": {"name": "n1"}},
            Node,
            'case.yaml: nodes[0] (Node n1): apiVersion: expected "v1" for a Node, got "apps/v1"',
            id="a Node with another group's apiVersion",
        ),
        pytest.param(
            {"apiVersion": "v1", "kind": "List", "items": []},
            None,
            "case.yaml: nodes[0]: expected one object, got a List",
            id="a List where one object must be",
        ),
        pytest.param(
            "node1",
            Node,
            'case.yaml: nodes[0]: expected an object (a mapping), got "node1"',
            id="a string where an object must be",
        ),
    ],
)
def test_decode_object_rejects_what_cannot_be_the_expected_object(
    data: Any, expected: type[Node] | None, message: str
) -> None:
    with pytest.raises(ManifestError) as info:
        decode_object(data, expected, "case.yaml: nodes[0]")
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# Namespaces


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "default", id="absent"),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ''}\n", "default", id="empty"
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: null}\n",
            "default",
            id="null",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop}\n", "shop", id="given"
        ),
        pytest.param("apiVersion: v1\nkind: Service\n", "default", id="a Service"),
        pytest.param("apiVersion: v1\nkind: ReplicationController\n", "default", id="an RC"),
        pytest.param("apiVersion: apps/v1\nkind: ReplicaSet\n", "default", id="a ReplicaSet"),
        pytest.param("apiVersion: apps/v1\nkind: StatefulSet\n", "default", id="a StatefulSet"),
        pytest.param("apiVersion: apps/v1\nkind: Deployment\n", "default", id="a Deployment"),
        pytest.param("apiVersion: apps/v1\nkind: DaemonSet\n", "default", id="a DaemonSet"),
        pytest.param("apiVersion: batch/v1\nkind: Job\n", "default", id="a Job"),
        pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: a}\n", "", id="a Node"),
        pytest.param("apiVersion: v1\nkind: Namespace\n", "", id="a Namespace"),
    ],
)
def test_namespaced_kinds_default_to_the_default_namespace(text: str, expected: str) -> None:
    (obj,) = load_text(text, "x.yaml")
    assert obj.metadata.namespace == expected  # type: ignore[attr-defined]


def test_unknown_objects_keep_the_namespace_they_were_given() -> None:
    text = "apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: d}\n"
    (obj,) = load_text(text, "x.yaml")
    assert obj == UnknownObject(
        api_version="apps/v1",
        kind="ControllerRevision",
        namespace="",
        name="d",
        raw={"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "d"}},
    )


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        pytest.param("apps/v1", "ControllerRevision", id="an unregistered kind"),
        pytest.param("extensions/v1beta1", "ReplicaSet", id="a registered kind in an old group"),
        pytest.param("example.com/v1", "WidgetList", id="a typed list without items"),
    ],
)
@pytest.mark.parametrize("form", ["yaml", "json"])
def test_unknown_kinds_come_back_as_unknown_objects_never_dropped(
    api_version: str, kind: str, form: str
) -> None:
    data = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}}
    text = json.dumps(data)
    if form == "yaml":
        text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: x, namespace: ns}}\n"
    (obj,) = load_text(text, f"x.{form}")
    assert obj == UnknownObject(
        api_version=api_version, kind=kind, namespace="ns", name="x", raw=data
    )


# ---------------------------------------------------------------------------------------------
# YAML as Kubernetes reads it (go-yaml v2, YAML 1.1, then JSON)


def test_timestamps_stay_the_strings_they_were_written_as(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "  deletionTimestamp: 2020-01-01T00:00:00Z\n"
        "  creationTimestamp: 2020-01-01T10:00:00.5+01:00\n"
        "  labels: {built: 2001-12-14 21:59:43.10, day: 2020-01-01}\n"
    )
    (pod,) = load_manifests(write(tmp_path, text))
    assert isinstance(pod, Pod)
    assert pod.metadata.deletion_timestamp == "2020-01-01T00:00:00Z"
    assert pod.metadata.creation_timestamp == "2020-01-01T10:00:00.5+01:00"
    assert pod.labels == {"built": "2001-12-14 21:59:43.10", "day": "2020-01-01"}
    assert pod.is_terminating


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        pytest.param("y", True, id="y is true"),
        pytest.param("N", False, id="N is false"),
        pytest.param("Yes", True, id="Yes is true"),
        pytest.param("off", False, id="off is false"),
        pytest.param("~", None, id="tilde is null"),
        pytest.param("", None, id="nothing is null"),
        pytest.param("0o17", 15, id="0o is octal"),
        pytest.param("017", 15, id="a leading zero is octal"),
        pytest.param("08", 8, id="08 is a float that JSON prints as 8"),
        pytest.param("0x1F", 31, id="0x is hexadecimal"),
        pytest.param("-0b101", -5, id="0b is binary"),
        pytest.param("1_000", 1000, id="underscores are dropped"),
        pytest.param("1.0", 1, id="an integral float is an integer after JSON"),
        pytest.param("1e3", 1000, id="an exponent without a dot is a float"),
        pytest.param(".5", 0.5, id="a leading dot is a float"),
        pytest.param("1.5", 1.5, id="a fraction stays a float"),
        pytest.param("99999999999999999999", 10**20, id="beyond uint64 is a float"),
        pytest.param("1:30", "1:30", id="no sexagesimal numbers"),
        pytest.param("=", "=", id="the YAML 1.1 value key is a string"),
        pytest.param("'1'", "1", id="a quoted number is a string"),
        pytest.param("!!str 1", "1", id="an explicit string tag"),
        pytest.param("!!float 1", 1, id="an explicit float tag"),
        pytest.param("!custom x", "x", id="an unknown tag is ignored"),
        pytest.param("!!binary aGk=", "hi", id="binary is decoded to text"),
    ],
)
def test_plain_scalars_resolve_as_go_yaml_resolves_them(
    tmp_path: Path, scalar: str, value: Any
) -> None:
    (doc,) = read_yaml_documents(write(tmp_path, f"v: {scalar}\n"))
    assert doc == {"v": value}
    assert type(doc["v"]) is type(value)


def test_map_keys_become_strings_as_sigs_k8s_io_yaml_prints_them(tmp_path: Path) -> None:
    text = "{1: a, true: b, 1.5: c, 1e6: d, 0x10: e, 1e-7: f}"
    (doc,) = read_yaml_documents(write(tmp_path, text))
    assert doc == {"1": "a", "true": "b", "1.5": "c", "1e+06": "d", "16": "e", "1e-07": "f"}


def test_merge_keys_apply_where_they_stand_as_in_go_yaml(tmp_path: Path) -> None:
    text = (
        "base: &base {a: 1, b: 1}\n"
        "other: &other {b: 2, c: 2}\n"
        "m: {a: 0, <<: *base, c: 3}\n"
        "seq: {<<: [*base, *other]}\n"
        "quoted: {'<<': 1}\n"
    )
    # Without field validation (kubectl --validate=false), as go-yaml's lenient Unmarshal.
    with field_validation(FieldValidation.IGNORE):
        (doc,) = read_yaml_documents(write(tmp_path, text))
    assert doc["m"] == {"a": 1, "b": 1, "c": 3}
    assert doc["seq"] == {"a": 1, "b": 1, "c": 2}
    assert doc["quoted"] == {"<<": 1}


def test_anchors_and_aliases_share_one_value(tmp_path: Path) -> None:
    (doc,) = read_yaml_documents(write(tmp_path, "a: &x {k: [1, 2]}\nb: *x\n"))
    assert doc["a"] == doc["b"] == {"k": [1, 2]}


def test_read_yaml_documents_returns_the_non_empty_documents(tmp_path: Path) -> None:
    path = write(tmp_path, "a: 1\n---\n---\nb: on\n")
    assert read_yaml_documents(path) == [{"a": 1}, {"b": True}]


# ---------------------------------------------------------------------------------------------
# null means unset, as the API server's JSON decoder reads it


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_null_fields_mean_unset_and_null_map_values_are_zero(form: str) -> None:
    data = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": None, "annotations": {"a": None}},
        "spec": {
            "nodeSelector": None,
            "affinity": None,
            "priority": None,
            "tolerations": [None, {"key": "k"}],
            "containers": [{"name": "c", "resources": {"requests": {"cpu": None}}}],
            "topologySpreadConstraints": [{"maxSkew": 1, "minDomains": None}],
        },
        "status": None,
    }
    text = json.dumps(data)
    (pod,) = load_text(text if form == "json" else text.replace('"', ""), f"p.{form}")
    assert isinstance(pod, Pod)
    assert pod.labels == {}
    assert pod.metadata.annotations == {"a": ""}
    assert pod.spec.node_selector == {}
    assert pod.spec.affinity is None and pod.spec.priority is None
    assert pod.spec.tolerations == [Toleration(), Toleration(key="k")]
    assert pod.spec.containers[0].resources.requests == {"cpu": 0}
    assert pod.spec.topology_spread_constraints[0].min_domains is None


def test_a_null_service_selector_differs_from_an_empty_one() -> None:
    text = "apiVersion: v1\nkind: Service\nspec: {selector: null}\n"
    (service,) = load_text(text, "s.yaml")
    assert isinstance(service, Service) and service.spec.selector is None
    (service,) = load_text(text.replace("null", "{}"), "s.yaml")
    assert isinstance(service, Service) and service.spec.selector == {}


# ---------------------------------------------------------------------------------------------
# Errors: one line, naming the file, the object and the field


BAD_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: web-1}\nspec:\n"


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        pytest.param(
            "pods.yaml",
            BAD_POD + "  topologySpreadConstraints:\n  - {maxSkew: one, topologyKey: zone}\n",
            "pods.yaml (Pod default/web-1): json: cannot unmarshal string into Go struct field "
            "TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32",
            id="a string where an integer must be",
        ),
        pytest.param(
            "pods.yaml",
            f"{NODE}---\n{NODE}---\n"
            + BAD_POD
            + "  topologySpreadConstraints:\n  - {maxSkew: one, topologyKey: zone}\n",
            "pods.yaml: document 3 (Pod default/web-1): json: cannot unmarshal string into Go "
            "struct field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type "
            "int32",
            id="the third document of a stream",
        ),
        pytest.param(
            "pods.json",
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": [
                        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}"}}
                        for i in range(4)
                    ]
                    + [
                        {
                            "apiVersion": "v1",
                            "kind": "Pod",
                            "metadata": {"name": "web-1", "namespace": "shop"},
                            "spec": {"topologySpreadConstraints": [{"maxSkew": "one"}]},
                        }
                    ],
                }
            ),
            "pods.json: items[4] (Pod shop/web-1): json: cannot unmarshal string into Go struct "
            "field TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32",
            id="an item of a JSON List",
        ),
        pytest.param(
            "pods.yaml",
            BAD_POD.replace("{name: web-1}", "{name: web-1, labels: {ready: yes}}"),
            "pods.yaml (Pod default/web-1): json: cannot unmarshal bool into Go struct field "
            "ObjectMeta.metadata.labels of type string",
            id="a YAML 1.1 boolean as a label value",
        ),
        pytest.param(
            "pods.yaml",
            BAD_POD + "  containers: [{resources: {requests: {cpu: [1]}}}]\n",
            "pods.yaml (Pod default/web-1): spec.containers[0].resources.requests[cpu]: "
            "Invalid value: a list: quantities must match the regular expression "
            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            id="a list as a quantity",
        ),
        pytest.param(
            "pods.yaml",
            BAD_POD + "  tolerations: [NoSchedule]\n",
            "pods.yaml (Pod default/web-1): json: cannot unmarshal string into Go struct field "
            "PodSpec.spec.tolerations of type v1.Toleration",
            id="a string where a mapping must be",
        ),
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {taints: {key: k}}\n",
            "nodes.yaml (Node n1): json: cannot unmarshal object into Go struct field "
            "NodeSpec.spec.taints of type []v1.Taint",
            id="a mapping where a list must be",
        ),
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n zone: a\n",
            "nodes.yaml: line 6, column 2: could not parse YAML: did not find expected key "
            "(while parsing a block mapping at line 1, column 1)",
            id="malformed YAML",
        ),
        pytest.param(
            "nodes.yaml",
            "metadata: {name: a: b}\n",
            "nodes.yaml: line 1, column 19: could not parse YAML: did not find expected ',' or '}' "
            "(while parsing a flow mapping at line 1, column 11)",
            id="malformed flow YAML",
        ),
        pytest.param(
            "nodes.yaml",
            "a: *missing\n",
            "nodes.yaml: line 1, column 4: could not parse YAML: found undefined alias 'missing'",
            id="an undefined alias",
        ),
        pytest.param(
            "nodes.yaml",
            "a: &x [*x]\n",
            "nodes.yaml: line 1, column 8: could not parse YAML: alias 'x' refers to itself",
            id="a recursive alias",
        ),
        pytest.param(
            "nodes.yaml",
            "a: .inf\n",
            "nodes.yaml: line 1, column 4: could not parse YAML: "
            ".inf cannot be represented in JSON",
            id="infinity, which JSON cannot hold",
        ),
        pytest.param(
            "nodes.yaml",
            "labels: {~: a}\n",
            "nodes.yaml: line 1, column 10: could not parse YAML: "
            "a null mapping key cannot be converted to JSON",
            id="a null key",
        ),
        pytest.param(
            "nodes.yaml",
            "a: !!int ten\n",
            "nodes.yaml: line 1, column 4: could not parse YAML: cannot decode `ten` as a !!int",
            id="an explicit tag that does not fit",
        ),
        pytest.param(
            "nodes.yaml",
            "a: b\x07\n",
            "nodes.yaml: line 1, column 5: could not parse YAML: "
            "unacceptable character #x0007: control characters are not allowed",
            id="a control character",
        ),
        pytest.param(
            "nodes.json",
            '{"apiVersion": "v1",\n  "kind": "Node",,}',
            "nodes.json: line 2, column 18: could not parse JSON: object keys must be strings",
            id="malformed JSON",
        ),
        pytest.param(
            "nodes.json",
            '{"apiVersion": "v1", "kind": "Node"',
            "nodes.json: line 1, column 36: could not parse JSON: unexpected end of input",
            id="truncated JSON",
        ),
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nmetadata: {name: n1}\n",
            'nodes.yaml (name "n1"): error validating data: kind not set; if you choose to ignore '
            "these errors, turn validation off with --validate=false",
            id="a missing kind",
        ),
        pytest.param(
            "nodes.yaml",
            "kind: Node\nmetadata: {name: n1}\n",
            "nodes.yaml (Node n1): error validating data: apiVersion not set; if you choose to "
            "ignore these errors, turn validation off with --validate=false",
            id="a missing apiVersion",
        ),
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nkind: [Node]\n",
            "nodes.yaml: error validating data: kind isn't string type; if you choose to ignore "
            "these errors, turn validation off with --validate=false",
            id="a kind that is not a string",
        ),
        pytest.param(
            "nodes.yaml",
            f"{NODE}---\njust some text\n",
            'nodes.yaml: document 2: expected an object (a mapping), got "just some text"',
            id="a document that is not a mapping",
        ),
        pytest.param(
            "nodes.yaml",
            "- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n",
            "nodes.yaml: expected an object (a mapping) or a List, got a sequence: kubectl "
            "reads one object per document (separate them with ---, or give them as the items "
            "of a kind: List)",
            id="a document that is a sequence, as kubectl refuses it",
        ),
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nkind: List\nitems: [null]\n",
            "nodes.yaml: items[0]: expected an object (a mapping), got null",
            id="a null List item",
        ),
        pytest.param(
            "nodes.yaml",
            "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
            "nodes.yaml: items: expected a list, got a mapping",
            id="List items that are not a list",
        ),
        pytest.param("nodes.yaml", "", "nodes.yaml: the file is empty", id="an empty file"),
        pytest.param("nodes.yaml", " \n\n", "nodes.yaml: the file is empty", id="a blank file"),
        pytest.param(
            "nodes.yaml",
            "# nothing yet\n---\n",
            "nodes.yaml: no objects: the file holds only comments or empty documents",
            id="a file of comments",
        ),
        pytest.param(
            "nodes.yaml",
            b"apiVersion: v1\nkind: Node\nmetadata: {name: caf\xe9}\n",
            "nodes.yaml: line 3, column 21: "
            "invalid UTF-8 (byte 0xe9); manifests must be UTF-8 text",
            id="Latin-1 text",
        ),
        pytest.param(
            "nodes.json",
            b'{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "caf\xe9"}}',
            "nodes.json: line 1, column 63: "
            "invalid UTF-8 (byte 0xe9); manifests must be UTF-8 text",
            id="Latin-1 JSON",
        ),
    ],
)
def test_bad_manifests_fail_with_one_line_naming_file_object_and_field(
    tmp_path: Path, name: str, text: str | bytes, message: str
) -> None:
    assert load_error(tmp_path, text, name) == message


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ManifestError) as info:
        load_manifests(path)
    assert str(info.value) == f"{path}: no such file or directory"
    with pytest.raises(ManifestError) as info:
        read_yaml_documents(path)
    assert str(info.value) == f"{path}: no such file or directory"


def test_a_directory_is_not_a_manifest_file(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifests(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a directory, not a manifest file"


def test_errors_keep_their_cause(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as info:
        load_manifests(write(tmp_path, BAD_POD + "  priority: high\n"))
    assert isinstance(info.value.__cause__, msgspec.ValidationError)
