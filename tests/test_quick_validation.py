"""The yes/no forms of validation (api/quick_validation.py, util/validation.py's ``valid_*``)
beside the checks they stand for: each says "valid" exactly when its check finds nothing, and
validate_pod and validate_node, which consult them first, return what the full checks return.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topospread.api import quick_validation as quick
from topospread.api import validation
from topospread.api.affinity_validation import validate_node_affinity
from topospread.api.field import FieldError, Path
from topospread.api.meta_validation import validate_annotations, validate_labels
from topospread.api.taint_validation import validate_taints
from topospread.api.types import Node, NodeAffinity, Pod, Taint
from topospread.api.validation import pod_spec_errors, validate_node, validate_pod
from topospread.util.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    valid_dns1123_label,
    valid_dns1123_subdomain,
    valid_label_value,
    valid_qualified_name,
)

HERE = Path.root("x")

# Characters around the rules' edges: the allowed ones, the separators, upper case, white
# space, and ones whose UTF-8 encoding is longer than one byte.
_CHARS = st.sampled_from("ab9-._/Z A\t\u00e9\u3000")
_STRINGS = st.one_of(
    st.text(_CHARS, max_size=12),
    st.builds(lambda a, n, b: a + "a" * n + b, st.text(_CHARS, max_size=3), st.integers(50, 260),
              st.text(_CHARS, max_size=3)),
)  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_STRINGS)
def test_each_yes_no_string_check_is_true_exactly_when_its_check_finds_nothing(
    value: str,
) -> None:
    assert valid_dns1123_subdomain(value) == (is_dns1123_subdomain(value) == [])
    assert valid_dns1123_label(value) == (is_dns1123_label(value) == [])
    assert valid_label_value(value) == (is_valid_label_value(value) == [])
    assert valid_qualified_name(value) == (is_qualified_name(value) == [])
    assert valid_qualified_name(value) == (is_qualified_name(value) == [])  # remembered


@pytest.mark.parametrize(
    "value",
    ["a" * 63, "a" * 64, "a" * 253, "a." * 126 + "a", "a" * 254, "\u00e9" * 40, "x-", "-x", ""],
    ids=lambda v: f"{v[:8]}..{len(v)}",
)
def test_the_yes_no_string_checks_at_the_length_limits(value: str) -> None:
    assert valid_dns1123_subdomain(value) == (is_dns1123_subdomain(value) == [])
    assert valid_dns1123_label(value) == (is_dns1123_label(value) == [])
    assert valid_label_value(value) == (is_valid_label_value(value) == [])
    assert valid_qualified_name(value) == (is_qualified_name(value) == [])


_LABEL_MAPS: list[dict[str, str]] = [
    {},
    {"app": "web", "example.com/tier": "front"},
    {"app": "web!"},
    {"App!": "web"},
    {"/app": "web"},
    {"a/b/c": "x"},
    {"app": "a" * 64},
    {"Example.COM/app": "x"},
]


@pytest.mark.parametrize("labels", _LABEL_MAPS, ids=str)
def test_labels_and_annotations_are_valid_exactly_when_their_checks_find_nothing(
    labels: dict[str, str],
) -> None:
    assert quick.labels_valid(labels) == (validate_labels(labels, HERE) == [])
    assert quick.annotations_valid(labels) == (validate_annotations(labels, HERE) == [])


def test_annotations_over_the_size_limit_are_not_valid() -> None:
    """256 KiB of keys and values, counted in UTF-8 bytes."""
    at_limit = {"k": "a" * (256 * 1024 - 1)}
    over = {"k": "\u00e9" * (128 * 1024)}
    assert quick.annotations_valid(at_limit) and validate_annotations(at_limit, HERE) == []
    assert not quick.annotations_valid(over) and validate_annotations(over, HERE) != []


_TAINTS: list[list[dict[str, Any]]] = [
    [],
    [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
    [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoExecute"}],
    [{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}],
    [{"key": "a", "effect": ""}],
    [{"key": "a", "effect": "Sometimes"}],
    [{"key": "a!", "effect": "NoSchedule"}],
    [{"key": "a", "value": "b c", "effect": "NoSchedule"}],
]


@pytest.mark.parametrize("taints", _TAINTS, ids=str)
def test_taints_are_valid_exactly_when_their_check_finds_nothing(
    taints: list[dict[str, Any]],
) -> None:
    typed = msgspec.convert(taints, list[Taint])
    assert quick.taints_valid(typed) == (validate_taints(typed, HERE) == [])


# Node affinity drawn from the values around each rule: operators valid for expressions, for
# fields, for neither; keys valid, invalid, the one field key; values and their counts.
_OPERATORS = st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Is", ""])
_KEYS = st.sampled_from(["zone", "example.com/zone", "metadata.name", "bad key", ""])
_VALUES = st.lists(st.sampled_from(["a", "node-1", "Node_1", "b c", "1", ""]), max_size=3)
_REQUIREMENTS = st.fixed_dictionaries({"key": _KEYS, "operator": _OPERATORS, "values": _VALUES})
_TERMS = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": st.lists(_REQUIREMENTS, max_size=2),
        "matchFields": st.lists(_REQUIREMENTS, max_size=2),
    },
)
_NODE_AFFINITIES = st.fixed_dictionaries(
    {},
    optional={
        "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
            {"nodeSelectorTerms": st.lists(_TERMS, max_size=2)}
        ),
        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
            st.fixed_dictionaries({"weight": st.sampled_from([-1, 0, 1, 100, 101]),
                                   "preference": _TERMS}),
            max_size=2,
        ),
    },
)  # fmt: skip


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(_NODE_AFFINITIES)
def test_node_affinity_is_valid_exactly_when_its_check_finds_nothing(raw: dict[str, Any]) -> None:
    affinity = msgspec.convert(raw, NodeAffinity)
    assert quick.node_affinity_valid(affinity) == (validate_node_affinity(affinity, HERE) == [])


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}


def _fields(operator: str, *values: str, key: str = "metadata.name") -> dict[str, Any]:
    return {"matchFields": [{"key": key, "operator": operator, "values": list(values)}]}


def _expression(operator: str, *values: str, key: str = "zone") -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": operator, "values": list(values)}]}


def _preferred(weight: int, term: dict[str, Any]) -> dict[str, Any]:
    return {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": weight, "preference": term}]
    }


_NODE_AFFINITY_CASES: dict[str, dict[str, Any]] = {
    "a DaemonSet pod's": _required(_fields("In", "ip-10-0-0-1.ec2.internal")),
    "no terms": _required(),
    "an empty term": _required({}),
    "two node names": _required(_fields("In", "n-1", "n-2")),
    "no node name": _required(_fields("NotIn")),
    "a bad node name": _required(_fields("In", "N_1")),
    "another field": _required(_fields("In", "n-1", key="metadata.uid")),
    "Exists on a field": _required(_fields("Exists")),
    "In without values": _required(_expression("In")),
    "Exists with values": _required(_expression("Exists", "a")),
    "Gt with two values": _required(_expression("Gt", "1", "2")),
    "Lt with one": _required(_expression("Lt", "1")),
    "an unknown operator": _required(_expression("Is", "a")),
    "a bad key": _required(_expression("In", "a", key="a b")),
    "a bad value": _required(_expression("In", "a b")),
    "weight 0": _preferred(0, _expression("In", "a")),
    "weight 100": _preferred(100, _expression("In", "a")),
    "weight 101": _preferred(101, _expression("In", "a")),
    "a preferred bad value": _preferred(1, _expression("In", "a b")),
    "a preferred bad key": _preferred(1, _expression("In", "a", key="a b")),
    "preferred fields": _preferred(1, _fields("In", "n-1", "n-2")),
}


@pytest.mark.parametrize("raw", list(_NODE_AFFINITY_CASES.values()), ids=list(_NODE_AFFINITY_CASES))
def test_node_affinity_cases_are_valid_exactly_when_their_check_finds_nothing(
    raw: dict[str, Any],
) -> None:
    affinity = msgspec.convert(raw, NodeAffinity)
    assert quick.node_affinity_valid(affinity) == (validate_node_affinity(affinity, HERE) == [])


def _full(check: Any, *args: Any, **kwargs: Any) -> list[FieldError]:
    """What ``check`` returns without the yes/no shortcuts (they say "not valid")."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(validation, "pod_valid", lambda *_, **__: False)
        patch.setattr(validation, "node_meta_and_taints_valid", lambda *_: False)
        result: list[FieldError] = check(*args, **kwargs)
    return result


_POD: dict[str, Any] = {
    "metadata": {"name": "web-1", "generateName": "web-", "namespace": "default"},
    "spec": {
        "containers": [{"name": "c", "image": "nginx"}],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": ["n-1"]}
                            ]
                        }
                    ]
                }
            }
        },
    },
}

# Each changes one field validate_pod checks for each pod (not kept per template).
_POD_CHANGES: dict[str, tuple[str, Any]] = {
    "valid": ("metadata.name", "web-1"),
    "no name": ("metadata.name", ""),
    "name to generate": ("metadata.name", None),
    "bad name": ("metadata.name", "Web_1"),
    "long name": ("metadata.name", "a" * 254),
    "no generateName": ("metadata.generateName", None),
    "bad generateName": ("metadata.generateName", "Web_"),
    "generateName ending in two dashes": ("metadata.generateName", "web--"),
    "no namespace": ("metadata.namespace", None),
    "bad namespace": ("metadata.namespace", "a.b"),
    "nodeName": ("spec.nodeName", "ip-10-0-0-1.ec2.internal"),
    "bad nodeName": ("spec.nodeName", "Node_1"),
    "gates without nodeName": ("spec.schedulingGates", [{"name": "example.com/gate"}]),
    "image with a space": ("spec.containers", [{"name": "c", "image": "nginx "}]),
    "no image": ("spec.containers", [{"name": "c"}]),
    "init image with a tab": ("spec.initContainers", [{"name": "i", "image": "\tbusybox"}]),
    "bad node affinity": (
        "spec.affinity.nodeAffinity",
        {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}},
    ),
    "no affinity": ("spec.affinity", None),
    "bad label": ("metadata.labels", {"app": "web!"}),
}


def _changed(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """``doc`` with the value at a dotted path replaced (None deletes it)."""
    out: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(doc))
    *parents, last = path.split(".")
    node = out
    for part in parents:
        node = node[part]
    if value is None:
        node.pop(last, None)
    else:
        node[last] = value
    return out


@pytest.mark.parametrize("from_template", [False, True], ids=["pod", "template"])
@pytest.mark.parametrize(
    ("path", "value"), list(_POD_CHANGES.values()), ids=list(_POD_CHANGES)
)  # fmt: skip
def test_validate_pod_finds_what_the_full_check_finds(
    path: str, value: Any, from_template: bool
) -> None:
    pod = msgspec.convert(_changed(_POD, path, value), Pod)
    full = _full(validate_pod, pod, from_template=from_template)
    assert validate_pod(pod, from_template=from_template) == full
    spec_errors = pod_spec_errors(pod)
    assert validate_pod(pod, spec_errors=spec_errors, from_template=from_template) == full
    # A name yet to generate is left to the full check.
    valid = full == [] and bool(pod.metadata.name)
    assert quick.pod_valid(pod, any(spec_errors), from_template=from_template) == valid


def test_a_bound_pod_with_scheduling_gates_is_not_valid() -> None:
    doc = _changed(_POD, "spec.nodeName", "n-1")
    pod = msgspec.convert(_changed(doc, "spec.schedulingGates", [{"name": "g"}]), Pod)
    full = _full(validate_pod, pod)
    assert [str(e) for e in full] == [
        "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"
    ]
    assert validate_pod(pod) == full


_NODE: dict[str, Any] = {
    "metadata": {"name": "n-1", "labels": {"kubernetes.io/hostname": "n-1"}},
    "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
    "status": {"capacity": {"cpu": "4", "pods": "110"}},
}

_NODE_CHANGES: dict[str, tuple[str, Any]] = {
    "valid": ("metadata.name", "n-1"),
    "no name": ("metadata.name", ""),
    "bad name": ("metadata.name", "N_1"),
    "generateName": ("metadata.generateName", "n-"),
    "bad generateName": ("metadata.generateName", "N_"),
    "namespace": ("metadata.namespace", "default"),
    "bad label": ("metadata.labels", {"zone": "a b"}),
    "bad annotation": ("metadata.annotations", {"a b": "x"}),
    "duplicate taint": ("spec.taints", [{"key": "k", "effect": "NoSchedule"}] * 2),
    "bad capacity": ("status.capacity", {"cpu": "-1"}),
}


@pytest.mark.parametrize(
    ("path", "value"), list(_NODE_CHANGES.values()), ids=list(_NODE_CHANGES)
)  # fmt: skip
def test_validate_node_finds_what_the_full_check_finds(path: str, value: Any) -> None:
    node = msgspec.convert(_changed(_NODE, path, value), Node)
    full = _full(validate_node, node)
    assert validate_node(node) == full
    resources_only = path == "status.capacity"
    assert quick.node_meta_and_taints_valid(node) == (full == [] or resources_only)


def test_a_remembered_check_keeps_only_valid_values_and_at_most_its_limit() -> None:
    from topospread.util.validation import Remembered

    calls: list[str] = []

    def check(value: str) -> bool:
        calls.append(value)
        return value.islower()

    remembered = Remembered(check, limit=2)
    assert [remembered(v) for v in ("a", "a", "B", "B")] == [True, True, False, False]
    assert calls == ["a", "B", "B"]  # the valid value asked once, the invalid one each time
    assert remembered("b") and remembered("c")
    assert len(remembered.known) <= 2
