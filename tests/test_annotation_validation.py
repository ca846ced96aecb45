"""The annotations kube-apiserver v1.35 reads as more than text on create, refused as it refuses
them: a node's ``scheduler.alpha.kubernetes.io/taints`` and ``.../preferAvoidPods`` (JSON the
server decodes with Go's encoding/json, whose error is the message), a pod's or template's
mirror-pod, tolerations (JSON), deletion-cost, seccomp and AppArmor annotations; exact
messages and paths, upstream's order, one line and exit 2 from the command line.

Rows named as upstream's come from TestValidateNode / TestValidateAvoidPodsInNodeAnnotations,
TestValidatePod's annotation cases and TestValidateSeccompAnnotations/AppArmor (core
validation_test.go, v1.35); the Go error texts are those of encoding/json (scanner.go,
decode.go, Go 1.25).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import (
    DEPLOYMENT,
    GOOD_NODE,
    GOOD_POD,
    assert_manifest_refused,
    assert_one_line_exit_2,
    write_text,
)
from topospread.api.annotation_validation import (
    APISERVER_PANIC,
    PREFER_AVOID_PODS,
    TAINTS,
    deletion_cost_valid,
    node_annotations_valid,
)
from topospread.api.go_json import UNEXPECTED_END, syntax_error
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Node, Pod
from topospread.api.validation import validate_node, validate_pod

AVOID: Final = "metadata.annotations.AvoidPods: Invalid value: " + json.dumps(PREFER_AVOID_PODS)
ENTRY: Final = f"metadata.annotations.{PREFER_AVOID_PODS}"
TAINTS_BAD: Final = "metadata.annotations: Invalid value: " + json.dumps(TAINTS)
TOLERATIONS_BAD: Final = (
    'metadata.annotations: Invalid value: "scheduler.alpha.kubernetes.io/tolerations"'
)
COST: Final = "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value"
SECCOMP: Final = "metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value"
APPARMOR_C: Final = "metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]"


def controller(value: Any = True, **more: Any) -> str:
    ref = {"apiVersion": "v1", "kind": "ReplicationController", "name": "foo", **more}
    if value is not None:
        ref["controller"] = value
    return json.dumps({"preferAvoidPods": [{"podSignature": {"podController": ref}}]})


def node(**annotations: str) -> Node:
    meta = {"name": "abc", "annotations": annotations}
    return msgspec.convert({"metadata": meta, "status": {"capacity": {"cpu": "1"}}}, Node)


def node_messages(**annotations: str) -> list[str]:
    return [str(e) for e in validate_node(node(**annotations))]


# Go's syntax errors: checkValid's scan, every state that can fail, and the end of input
# (eof feeds one space: a literal or number cut short fails on it).
SYNTAX: Final = {
    "": UNEXPECTED_END,
    "   ": UNEXPECTED_END,
    "x": "invalid character 'x' looking for beginning of value",
    "{": UNEXPECTED_END,
    '{"a"': UNEXPECTED_END,
    '{"a":1,}': "invalid character '}' looking for beginning of object key string",
    "{,}": "invalid character ',' looking for beginning of object key string",
    '{"a" 1}': "invalid character '1' after object key",
    '{"a":1 "b":2}': "invalid character '\"' after object key:value pair",
    "[1,]": "invalid character ']' looking for beginning of value",
    "[1 2]": "invalid character '2' after array element",
    "tr": "invalid character ' ' in literal true (expecting 'u')",
    "fals3": "invalid character '3' in literal false (expecting 'e')",
    "nul": "invalid character ' ' in literal null (expecting 'l')",
    "true x": "invalid character 'x' after top-level value",
    "01": "invalid character '1' after top-level value",
    "-": "invalid character ' ' in numeric literal",
    "-a": "invalid character 'a' in numeric literal",
    "1.": "invalid character ' ' after decimal point in numeric literal",
    "1.e": "invalid character 'e' after decimal point in numeric literal",
    "1e": "invalid character ' ' in exponent of numeric literal",
    "1e+x": "invalid character 'x' in exponent of numeric literal",
    '"\\x"': "invalid character 'x' in string escape code",
    '"\\u12g4"': "invalid character 'g' in \\u hexadecimal character escape",
    '"a\tb"': "invalid character '\\t' in string literal",
    '"abc': UNEXPECTED_END,
    "'": "invalid character '\\'' looking for beginning of value",
    "\x01": "invalid character '\\x01' looking for beginning of value",
    "é": "invalid character 'Ã' looking for beginning of value",  # the first byte, as a rune
    "NaN": "invalid character 'N' looking for beginning of value",
    '[1, {"a": [true, null, -0.5e-3]}] ': None,
}


@pytest.mark.parametrize("text", list(SYNTAX), ids=[repr(t) for t in SYNTAX])
def test_json_syntax_errors_are_gos_own_words(text: str) -> None:
    assert syntax_error(text.encode()) == SYNTAX[text]


# A node's annotations: (annotations, the node's messages). A node without them is valid.
NODES: Final[dict[str, tuple[dict[str, str], list[str]]]] = {
    "valid-avoid-pods": ({PREFER_AVOID_PODS: controller()}, []),
    "empty annotation is not read": ({PREFER_AVOID_PODS: "", TAINTS: ""}, []),
    "null": ({PREFER_AVOID_PODS: "null"}, []),
    "keys match without regard to case": (
        {PREFER_AVOID_PODS: controller().replace("podController", "PODCONTROLLER")},
        [],
    ),
    "invalid-json-annotation": (
        {PREFER_AVOID_PODS: "not a json"},
        [f"{AVOID}: invalid character 'o' in literal null (expecting 'u')"],
    ),
    "an array": (
        {PREFER_AVOID_PODS: "[]"},
        [f"{AVOID}: json: cannot unmarshal array into Go value of type v1.AvoidPods"],
    ),
    "a field of the wrong type": (
        {PREFER_AVOID_PODS: '{"preferAvoidPods": [{"podSignature": 3}]}'},
        [
            f"{AVOID}: json: cannot unmarshal number into Go struct field "
            "PreferAvoidPodsEntry.preferAvoidPods.podSignature of type v1.PodSignature"
        ],
    ),
    "a controller that is not a bool": (
        {PREFER_AVOID_PODS: controller("yes")},
        [
            f"{AVOID}: json: cannot unmarshal string into Go struct field "
            "OwnerReference.preferAvoidPods.podSignature.podController.controller of type bool"
        ],
    ),
    "a bad eviction time ends the decode, ahead of an earlier type error": (
        {
            PREFER_AVOID_PODS: json.dumps(
                {"preferAvoidPods": [{"reason": 1, "evictionTime": "2020-01-01"}]}
            )
        },
        [
            f'{AVOID}: parsing time "2020-01-01" as "2006-01-02T15:04:05Z07:00": '
            'cannot parse "" as "T"'
        ],
    ),
    "an eviction time that is not a string": (
        {PREFER_AVOID_PODS: '{"preferAvoidPods": [{"evictionTime": 5}]}'},
        [
            f"{AVOID}: json: cannot unmarshal number into Go struct field "
            "PreferAvoidPodsEntry.preferAvoidPods.evictionTime of type string"
        ],
    ),
    "invalid-empty-pod-signature": (
        {PREFER_AVOID_PODS: '{"preferAvoidPods": [{"podSignature": {}}, null]}'},
        [
            f"{ENTRY}[0].PodSignature: Required value",
            f"{ENTRY}[1].PodSignature: Required value",
        ],
    ),
    "invalid-pod-signature-not-controller": (
        {PREFER_AVOID_PODS: controller(False)},
        [
            f"{ENTRY}[0].PodSignature.PodController.Controller: Invalid value: false: "
            "must point to a controller"
        ],
    ),
    "taints annotation": (
        {TAINTS: '[{"key": "a", "effect": "Sometimes"}]'},
        [
            f'metadata.annotations.{TAINTS}[0].effect: Unsupported value: "Sometimes": '
            'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
        ],
    ),
    "taints annotation: the internal type's fields, named as in Go": (
        {TAINTS: '[{"key": 5}]', PREFER_AVOID_PODS: "{"},
        [
            f"{TAINTS_BAD}: json: cannot unmarshal number into Go struct field Taint.Key of "
            "type string",
            f"{AVOID}: {UNEXPECTED_END}",
        ],
    ),
    "taints annotation: duplicates": (
        {TAINTS: '[{"key": "a", "effect": "NoSchedule"}, {"Key": "a", "EFFECT": "NoSchedule"}]'},
        [
            f'metadata.annotations.{TAINTS}[1]: Duplicate value: {{"Key":"a","Value":"",'
            '"Effect":"NoSchedule","TimeAdded":null}: taints must be unique by key and effect '
            "pair"
        ],
    ),
}


@pytest.mark.parametrize("name", list(NODES))
def test_a_nodes_annotations_are_refused_as_the_api_server_refuses_them(name: str) -> None:
    annotations, expected = NODES[name]
    assert node_messages(**annotations) == expected
    assert node_annotations_valid(annotations) == (not expected)


def test_a_pod_controller_without_controller_is_the_api_servers_panic_and_nothing_else() -> None:
    # validatePreferAvoidPodsEntry dereferences the nil *bool: the request fails with a 500,
    # whatever else is wrong with the node (here, a bad label key).
    bad = node(**{PREFER_AVOID_PODS: controller(None)})
    bad = msgspec.structs.replace(
        bad, metadata=msgspec.structs.replace(bad.metadata, labels={"a/b/c": "x"})
    )
    assert [str(e) for e in validate_node(bad)] == [
        f"{ENTRY}[0].PodSignature.PodController.Controller: Internal error: {APISERVER_PANIC}"
    ]


def test_node_annotation_errors_follow_the_metadatas_and_precede_the_taints() -> None:
    found = msgspec.convert(
        {
            "metadata": {
                "name": "n1",
                "labels": {"x/y/z": "a"},
                "annotations": {PREFER_AVOID_PODS: "[]"},
            },
            "spec": {"taints": [{"key": "k", "effect": "Bad"}]},
        },
        Node,
    )
    messages = [str(e) for e in validate_node(found)]
    assert messages[0].startswith('metadata.labels: Invalid value: "x/y/z"')
    assert messages[1].startswith(AVOID)
    assert messages[2].startswith("metadata.taints[0].effect")


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        pytest.param(
            '\'{"preferAvoidPods": [{"podSignature": {}}]}\'',
            f"nodes.yaml: object 1 (Node n1): {ENTRY}[0].PodSignature: Required value",
            id="preferAvoidPods",
        ),
        pytest.param(
            '\'[{"effect": "NoSchedule", "key": 7}]\'',
            f"nodes.yaml: object 1 (Node n1): {TAINTS_BAD}: json: cannot unmarshal number "
            "into Go struct field Taint.Key of type string",
            id="taints",
        ),
    ],
)
def test_a_bad_node_annotation_is_one_line_and_exit_2(
    annotation: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = PREFER_AVOID_PODS if "preferAvoidPods" in message else TAINTS
    text = GOOD_NODE.replace("  labels:", f"  annotations: {{{key}: {annotation}}}\n  labels:")
    nodes = write_text(tmp_path, "nodes.yaml", text)
    pods = write_text(tmp_path, "pods.yaml", GOOD_POD)
    assert_one_line_exit_2(["schedule", "--nodes", nodes, "--pods", pods], capsys, message)


# ---------------------------------------------------------------------------------------------
# Pods


def pod(node_name: str = "", **annotations: str) -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx"}],
        "initContainers": [{"name": "init", "image": "busybox"}],
    }
    if node_name:
        spec["nodeName"] = node_name
    meta = {"name": "p", "namespace": "default", "annotations": annotations}
    return msgspec.convert({"metadata": meta, "spec": spec}, Pod)


def pod_messages(node_name: str = "", **annotations: str) -> list[str]:
    return [str(e) for e in validate_pod(pod(node_name, **annotations))]


TOLERATIONS: Final = "scheduler.alpha.kubernetes.io/tolerations"
MIRROR: Final = "kubernetes.io/config.mirror"
SECCOMP_KEY: Final = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_C: Final = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR: Final = "container.apparmor.security.beta.kubernetes.io/"

# A pod's annotations: (annotations, the pod's messages).
PODS: Final[dict[str, tuple[dict[str, str], list[str]]]] = {
    "none of them": ({"a": "b"}, []),
    "a mirror pod without nodeName": (
        {MIRROR: "hash"},
        [
            f'metadata.annotations[{MIRROR}]: Invalid value: "hash": must set spec.nodeName '
            "if mirror pod annotation is set"
        ],
    ),
    "tolerations: valid": (
        {
            TOLERATIONS: '[{"key": "k", "operator": "Exists", "effect": "NoExecute", '
            '"tolerationSeconds": 30}]'
        },
        [],
    ),
    "tolerations: an empty annotation is not read": ({TOLERATIONS: ""}, []),
    "tolerations: not JSON": (
        {TOLERATIONS: "[{]"},
        [f"{TOLERATIONS_BAD}: invalid character ']' looking for beginning of object key string"],
    ),
    "tolerations: seconds that are not an int64": (
        {TOLERATIONS: '[{"key": "k", "tolerationSeconds": 1.5}]'},
        [
            f"{TOLERATIONS_BAD}: json: cannot unmarshal number 1.5 into Go struct field "
            "Toleration.TolerationSeconds of type int64"
        ],
    ),
    "tolerations: a bad operator": (
        {TOLERATIONS: '[{"key": "k", "operator": "Sometimes"}]'},
        [
            f'metadata.annotations.{TOLERATIONS}[0].operator: Unsupported value: "Sometimes": '
            'supported values: "Equal", "Exists"'
        ],
    ),
    "deletion cost: valid, negative, with a leading zero after the sign": (
        {"controller.kubernetes.io/pod-deletion-cost": "-01"},
        [],
    ),
    "deletion cost: a plus sign": (
        {"controller.kubernetes.io/pod-deletion-cost": "+10"},
        [f'{COST}: "+10": must be a 32bit integer'],
    ),
    "deletion cost: outside int32": (
        {"controller.kubernetes.io/pod-deletion-cost": "2147483648"},
        [f'{COST}: "2147483648": must be a 32bit integer'],
    ),
    "seccomp: every valid profile": (
        {
            SECCOMP_KEY: "runtime/default",
            f"{SECCOMP_C}c": "docker/default",
            f"{SECCOMP_C}d": "unconfined",
            f"{SECCOMP_C}e": "localhost/profiles/a.json",
        },
        [],
    ),
    "seccomp: the pod's first, then the containers' in key order": (
        {f"{SECCOMP_C}z": "localhost/../x", f"{SECCOMP_C}b": "localhost//abs", SECCOMP_KEY: "x"},
        [
            f'{SECCOMP}: "x": must be a valid seccomp profile',
            f'metadata.annotations.{SECCOMP_C}b: Invalid value: "/abs": must be a relative path',
            f"metadata.annotations.{SECCOMP_C}z: Invalid value: \"../x\": must not contain '..'",
        ],
    ),
    "apparmor: every valid profile, init containers included": (
        {f"{APPARMOR}c": "runtime/default", f"{APPARMOR}init": "localhost/p"},
        [],
    ),
    "apparmor: unknown container and bad profile": (
        {f"{APPARMOR}c": "foo", f"{APPARMOR}x": "unconfined"},
        [
            f'{APPARMOR_C}: Invalid value: "foo": invalid AppArmor profile name: "foo"',
            f'metadata.annotations[{APPARMOR}x]: Invalid value: "x": container not found',
        ],
    ),
}


@pytest.mark.parametrize("name", list(PODS))
def test_a_pods_annotations_are_refused_as_the_api_server_refuses_them(name: str) -> None:
    annotations, expected = PODS[name]
    assert pod_messages(**annotations) == expected


def test_a_bound_mirror_pod_is_valid_and_the_quick_check_agrees() -> None:
    assert pod_messages("node-1", **{MIRROR: "hash"}) == []
    assert pod_fields_valid(pod("node-1", **{MIRROR: "hash"}))
    assert not pod_fields_valid(pod(**{MIRROR: "hash"}))


def test_the_mirror_check_comes_after_the_annotations_own_and_before_the_others() -> None:
    messages = pod_messages(**{MIRROR: "h", "a/b/c": "x", POD_COST_KEY: "x"})
    assert messages[0].startswith('metadata.annotations: Invalid value: "a/b/c"')
    assert messages[1].startswith(f"metadata.annotations[{MIRROR}]")
    assert messages[2].startswith(COST)
    assert len(messages) == 3


POD_COST_KEY: Final = "controller.kubernetes.io/pod-deletion-cost"


@pytest.mark.parametrize(
    ("value", "valid"),
    [("0", True), ("-0", True), ("12", True), ("-2147483648", True), ("2147483647", True),
     ("", False), ("00", False), ("012", False), ("+1", False), ("1.0", False), ("1e3", False),
     ("-", False), (" 1", False), ("-2147483649", False)],
)  # fmt: skip
def test_a_deletion_cost_parses_as_upstream_parses_it(value: str, valid: bool) -> None:
    assert deletion_cost_valid(value) is valid


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            GOOD_POD.replace("labels: {app: web}}", f"labels: {{app: web}}, annotations: "
                             f"{{{MIRROR}: x}}}}"),
            f'(Pod default/p): metadata.annotations[{MIRROR}]: Invalid value: "x": must set '
            "spec.nodeName if mirror pod annotation is set",
            id="mirror pod",
        ),
        pytest.param(
            DEPLOYMENT.replace(
                "    metadata: {labels: {app: web}}",
                f"    metadata: {{labels: {{app: web}}, annotations: {{{TOLERATIONS}: '[1]'}}}}",
            ),
            "(Deployment default/web): spec.template.annotations: Invalid value: "
            f'"{TOLERATIONS}": json: cannot unmarshal number into Go value of type '
            "core.Toleration",
            id="template tolerations",
        ),
        pytest.param(
            DEPLOYMENT.replace("    metadata: {labels: {app: web}}",
                               "    metadata: {labels: {app: web, a/b/c: x}}"),
            '(Deployment default/web): spec.template.labels: Invalid value: "a/b/c": a '
            "valid label key must consist of",
            id="template label: ValidatePodTemplateSpec's path, not under metadata",
        ),
        pytest.param(
            DEPLOYMENT.replace(
                "    metadata: {labels: {app: web}}",
                f"    metadata: {{labels: {{app: web}}, annotations: {{{APPARMOR}d: foo}}}}",
            ),
            f"(Deployment default/web): spec.template.annotations[{APPARMOR}d]: "
            'Invalid value: "d": container not found',
            id="template apparmor",
        ),
    ],
)  # fmt: skip
def test_a_bad_pod_annotation_is_one_line_and_exit_2(
    command: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_manifest_refused(command, text, message, tmp_path, capsys)
