"""API validation with upstream v1.35's exact messages and field paths.

Each table row is one rule; the expected strings are what kube-apiserver (or kube-scheduler for
PodTopologySpreadArgs) prints, byte for byte.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from topospread.api.field import (
    GoJSON,
    Path,
    aggregate_message,
    duplicate,
    forbidden,
    go_json,
    go_quote,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from topospread.api.spread_validation import (
    validate_pod_topology_spread_args,
    validate_topology_spread_constraints,
)
from topospread.api.types import Node, Pod, PodTopologySpreadArgs, TopologySpreadConstraint
from topospread.api.validation import validate_node, validate_pod

TSC = "spec.topologySpreadConstraints"
KEY_REGEX = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
NAME_PART_REGEX = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{KEY_REGEX}')"
)
VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    f"'my_value',  or '12345', regex used for validation is '({KEY_REGEX})?')"
)
SUBDOMAIN_REGEX = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS_LABEL_REGEX = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
SUPPORTED_ACTIONS = 'supported values: "DoNotSchedule", "ScheduleAnyway"'
APP = {"matchLabels": {"app": "web"}}


def spread(**fields: Any) -> dict[str, Any]:
    """A valid constraint (zone, DoNotSchedule, app=web) with ``fields`` overriding it."""
    c: dict[str, Any] = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": APP,
    }
    c.update(fields)
    return {k: v for k, v in c.items() if v is not None}


def constraints(*raw: dict[str, Any]) -> list[TopologySpreadConstraint]:
    return msgspec.convert(list(raw), list[TopologySpreadConstraint])


def messages(errors: list[Any]) -> list[str]:
    return [str(e) for e in errors]


# ---------------------------------------------------------------------------------------------
# field.Error rendering


@pytest.mark.parametrize(
    ("error", "text"),
    [
        pytest.param(
            invalid(Path.root("spec", "maxSkew"), 0, "must be greater than zero"),
            "spec.maxSkew: Invalid value: 0: must be greater than zero",
            id="an int64 prints with %v",
        ),
        pytest.param(
            invalid(Path.root("a"), "x\ty", "bad"),
            'a: Invalid value: "x\\ty": bad',
            id="a plain string prints with %q",
        ),
        pytest.param(
            invalid(Path.root("a"), GoJSON("<b>"), "bad"),
            'a: Invalid value: "\\u003cb\\u003e": bad',
            id="a named string type prints as JSON with HTML escaped",
        ),
        pytest.param(
            invalid(Path.root("a"), GoJSON(None), "bad"),
            "a: Invalid value: null: bad",
            id="a nil pointer prints null",
        ),
        pytest.param(
            invalid(Path.root("a"), GoJSON(["x", 1]), "bad"),
            'a: Invalid value: ["x",1]: bad',
            id="a slice prints as compact JSON",
        ),
        pytest.param(
            invalid(Path.root("a"), True, "bad"), "a: Invalid value: true: bad", id="a bool"
        ),
        pytest.param(required(Path.root("a")), "a: Required value", id="required without detail"),
        pytest.param(
            required(Path.root("a"), "can not be empty"),
            "a: Required value: can not be empty",
            id="required with detail",
        ),
        pytest.param(
            forbidden(Path.root("a").index(2).child("b"), "no"),
            "a[2].b: Forbidden: no",
            id="forbidden never shows a value",
        ),
        pytest.param(
            duplicate(Path.root("a").key("k"), "v"),
            'a[k]: Duplicate value: "v"',
            id="a map key subscript is unquoted",
        ),
        pytest.param(
            not_supported(Path.root("a"), GoJSON("X"), ["P", "Q"]),
            'a: Unsupported value: "X": supported values: "P", "Q"',
            id="unsupported lists the supported values quoted",
        ),
        pytest.param(
            not_supported(Path.root("a"), "X", []),
            'a: Unsupported value: "X"',
            id="unsupported without a list has no detail",
        ),
        pytest.param(
            too_long(Path.root("a"), 1), "a: Too long: may not be more than 1 byte", id="too long"
        ),
        pytest.param(
            too_many(Path.root("a"), 5, 3),
            "a: Too many: 5: must have at most 3 items",
            id="too many with a count",
        ),
        pytest.param(
            too_many(Path.root("a"), -1, 1),
            "a: Too many: must have at most 1 item",
            id="too many without a count",
        ),
    ],
)
def test_field_errors_print_as_upstream(error: Any, text: str) -> None:
    assert str(error) == text


@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("plain", '"plain"'),
        ('q"b\\', '"q\\"b\\\\"'),
        ("\x00\x7f\a\v", '"\\x00\\x7f\\a\\v"'),
        ("é\u00a0\u200b", '"é\\u00a0\\u200b"'),
        ("\U0001f600", '"\U0001f600"'),
    ],
    ids=["plain", "quote and backslash", "control bytes", "non-printable unicode", "emoji"],
)
def test_go_quote_matches_strconv_quote(value: str, quoted: str) -> None:
    assert go_quote(value) == quoted


def test_go_json_escapes_like_encoding_json() -> None:
    assert go_json({"a": "<&>\u2028\n\x01", "b": None}) == (
        '{"a":"\\u003c\\u0026\\u003e\\u2028\\n\\u0001","b":null}'
    )


def test_aggregate_message_dedupes_and_brackets() -> None:
    a = required(Path.root("a"))
    b = required(Path.root("b"))
    assert aggregate_message([a]) == "a: Required value"
    assert aggregate_message([a, b, a]) == "[a: Required value, b: Required value]"


# ---------------------------------------------------------------------------------------------
# Topology spread constraints


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param([spread()], id="a plain hard constraint"),
        pytest.param([spread(whenUnsatisfiable="ScheduleAnyway")], id="a soft constraint"),
        pytest.param(
            [spread(), spread(whenUnsatisfiable="ScheduleAnyway")],
            id="the same key with both actions",
        ),
        pytest.param([spread(), spread(topologyKey="node")], id="two keys with one action"),
        pytest.param([spread(minDomains=3)], id="minDomains with DoNotSchedule"),
        pytest.param(
            [spread(nodeAffinityPolicy="Honor", nodeTaintsPolicy="Ignore")],
            id="both node inclusion policies",
        ),
        pytest.param([spread(labelSelector=None)], id="a nil label selector"),
        pytest.param([spread(labelSelector={})], id="an empty label selector"),
        pytest.param([spread(matchLabelKeys=["pod-template-hash"])], id="matchLabelKeys"),
        pytest.param(
            [spread(topologyKey="not a label key!")],
            id="topologyKey is not checked to be a label key",
        ),
    ],
)
def test_valid_constraints_have_no_errors(raw: list[dict[str, Any]]) -> None:
    labels = {"app": "web", "pod-template-hash": "abc"}
    assert validate_topology_spread_constraints(constraints(*raw), TSC, labels) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            [spread(maxSkew=0)],
            [f"{TSC}[0].maxSkew: Invalid value: 0: must be greater than zero"],
            id="maxSkew of zero",
        ),
        pytest.param(
            [spread(maxSkew=-3)],
            [f"{TSC}[0].maxSkew: Invalid value: -3: must be greater than zero"],
            id="negative maxSkew",
        ),
        pytest.param(
            [spread(topologyKey="")],
            [f"{TSC}[0].topologyKey: Required value: can not be empty"],
            id="empty topologyKey",
        ),
        pytest.param(
            [spread(whenUnsatisfiable="")],
            [f'{TSC}[0].whenUnsatisfiable: Unsupported value: "": {SUPPORTED_ACTIONS}'],
            id="empty whenUnsatisfiable",
        ),
        pytest.param(
            [spread(whenUnsatisfiable="doNotSchedule")],
            [
                f'{TSC}[0].whenUnsatisfiable: Unsupported value: "doNotSchedule": '
                f"{SUPPORTED_ACTIONS}"
            ],
            id="whenUnsatisfiable is case-sensitive",
        ),
        pytest.param(
            [spread(), spread()],
            [
                f"{TSC}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "
                '"{zone, DoNotSchedule}"'
            ],
            id="a repeated key and action is reported on the first",
        ),
        pytest.param(
            [spread(), spread(), spread()],
            [
                f"{TSC}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "
                '"{zone, DoNotSchedule}"',
                f"{TSC}[1].{{topologyKey, whenUnsatisfiable}}: Duplicate value: "
                '"{zone, DoNotSchedule}"',
            ],
            id="three repeats give two errors",
        ),
        pytest.param(
            [spread(minDomains=0)],
            [f"{TSC}[0].minDomains: Invalid value: 0: must be greater than zero"],
            id="minDomains of zero",
        ),
        pytest.param(
            [spread(whenUnsatisfiable="ScheduleAnyway", minDomains=3)],
            [
                f"{TSC}[0].minDomains: Invalid value: 3: can only use minDomains if "
                "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
            ],
            id="minDomains with ScheduleAnyway",
        ),
        pytest.param(
            [spread(whenUnsatisfiable="ScheduleAnyway", minDomains=-1)],
            [
                f"{TSC}[0].minDomains: Invalid value: -1: must be greater than zero",
                f"{TSC}[0].minDomains: Invalid value: -1: can only use minDomains if "
                "whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
            ],
            id="a negative minDomains with ScheduleAnyway gives both errors",
        ),
        pytest.param(
            [spread(whenUnsatisfiable="", minDomains=2)],
            [
                f'{TSC}[0].whenUnsatisfiable: Unsupported value: "": {SUPPORTED_ACTIONS}',
                f"{TSC}[0].minDomains: Invalid value: 2: can only use minDomains if "
                "whenUnsatisfiable=DoNotSchedule, not ",
            ],
            id="minDomains with an empty action",
        ),
        pytest.param(
            [spread(nodeAffinityPolicy="honor")],
            [
                f'{TSC}[0].nodeAffinityPolicy: Unsupported value: "honor": supported values: '
                '"Honor", "Ignore"'
            ],
            id="nodeAffinityPolicy is case-sensitive",
        ),
        pytest.param(
            [spread(nodeTaintsPolicy="")],
            [
                f'{TSC}[0].nodeTaintsPolicy: Unsupported value: "": '
                'supported values: "Honor", "Ignore"'
            ],
            id="an empty nodeTaintsPolicy is not the same as none",
        ),
        pytest.param(
            [spread(nodeTaintsPolicy="<Honor>")],
            [
                f'{TSC}[0].nodeTaintsPolicy: Unsupported value: "\\u003cHonor\\u003e": '
                'supported values: "Honor", "Ignore"'
            ],
            id="a policy is a pointer and prints as JSON",
        ),
        pytest.param(
            [spread(labelSelector=None, matchLabelKeys=["app"])],
            [
                f"{TSC}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector "
                "is not set"
            ],
            id="matchLabelKeys without a labelSelector, as upstream's scheduler tests write",
        ),
        pytest.param(
            [spread(matchLabelKeys=["-bad"])],
            [f'{TSC}[0].matchLabelKeys[0]: Invalid value: "-bad": {NAME_PART_REGEX}'],
            id="a matchLabelKeys key must be a label key",
        ),
        pytest.param(
            [spread(matchLabelKeys=["app"])],
            [f'{TSC}[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
            id="a key in matchLabels and matchLabelKeys, at upstream's odd path",
        ),
        pytest.param(
            [spread(matchLabelKeys=["zone", "zone"])],
            [
                f'{TSC}[0][1]: Invalid value: "zone": '
                "exists in both matchLabelKeys and labelSelector"
            ],
            id="a key listed twice is merged twice and reported at the last index",
        ),
        pytest.param(
            [
                spread(
                    labelSelector={"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
                    matchLabelKeys=["zone"],
                )
            ],
            [
                f'{TSC}[0][0]: Invalid value: "zone": exists in both matchLabelKeys and '
                "labelSelector"
            ],
            id="a key in matchExpressions and matchLabelKeys",
        ),
        pytest.param(
            [
                spread(
                    labelSelector={"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                    matchLabelKeys=["tier"],
                )
            ],
            [],
            id="a key the pod lacks is merged nowhere and may be in the selector",
        ),
        pytest.param(
            [spread(labelSelector={"matchLabels": {"app": "-web"}})],
            [f'{TSC}[0].labelSelector.matchLabels: Invalid value: "-web": {VALUE_REGEX}'],
            id="selector values must be label values",
        ),
        pytest.param(
            [spread(labelSelector={"matchLabels": {"-app": "web"}})],
            [f'{TSC}[0].labelSelector.matchLabels: Invalid value: "-app": {NAME_PART_REGEX}'],
            id="selector keys are reported at matchLabels itself",
        ),
        pytest.param(
            [spread(labelSelector={"matchExpressions": [{"key": "a", "operator": "in"}]})],
            [
                f'{TSC}[0].labelSelector.matchExpressions[0].operator: Invalid value: "in": '
                "not a valid selector operator"
            ],
            id="selector operators are case-sensitive",
        ),
        pytest.param(
            [spread(labelSelector={"matchExpressions": [{"key": "a", "operator": "NotIn"}]})],
            [
                f"{TSC}[0].labelSelector.matchExpressions[0].values: Required value: must be "
                "specified when `operator` is 'In' or 'NotIn'"
            ],
            id="In and NotIn need values",
        ),
        pytest.param(
            [
                spread(
                    labelSelector={
                        "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]
                    }
                )
            ],
            [
                f"{TSC}[0].labelSelector.matchExpressions[0].values: Forbidden: may not be "
                "specified when `operator` is 'Exists' or 'DoesNotExist'"
            ],
            id="Exists takes no values",
        ),
        pytest.param(
            [
                spread(
                    labelSelector={
                        "matchExpressions": [{"key": "a", "operator": "In", "values": ["ok", "-x"]}]
                    }
                )
            ],
            [
                f"{TSC}[0].labelSelector.matchExpressions[0].values[1]: Invalid value: "
                f'"-x": {VALUE_REGEX}'
            ],
            id="each expression value must be a label value",
        ),
        pytest.param(
            [spread(maxSkew=0, topologyKey="", whenUnsatisfiable="Never")],
            [
                f"{TSC}[0].maxSkew: Invalid value: 0: must be greater than zero",
                f"{TSC}[0].topologyKey: Required value: can not be empty",
                f'{TSC}[0].whenUnsatisfiable: Unsupported value: "Never": {SUPPORTED_ACTIONS}',
            ],
            id="errors come in upstream's order",
        ),
    ],
)
def test_invalid_constraints_report_upstream_messages(
    raw: list[dict[str, Any]], expected: list[str]
) -> None:
    labels = {"app": "web", "zone": "z1"}
    errors = validate_topology_spread_constraints(constraints(*raw), TSC, pod_labels=labels)
    assert messages(errors) == expected


def test_without_pod_labels_constraints_are_validated_as_already_merged() -> None:
    # The v1.34+ rule allows one occurrence of a matchLabelKeys key: the merged one.
    c = constraints(spread(matchLabelKeys=["app"]))
    assert validate_topology_spread_constraints(c, TSC) == []


def test_an_already_merged_constraint_is_not_merged_again() -> None:
    merged = spread(
        labelSelector={
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "h", "operator": "In", "values": ["x"]}],
        },
        matchLabelKeys=["h"],
    )
    assert validate_topology_spread_constraints(constraints(merged), TSC, {"h": "x"}) == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(
            spread(matchLabelKeys=["app"]),
            [
                f'{TSC}[0].matchLabelKeys[0]: Invalid value: "app": exists in both '
                "matchLabelKeys and labelSelector"
            ],
            id="any key of the selector is refused, at matchLabelKeys[i]",
        ),
        pytest.param(
            spread(labelSelector=None, matchLabelKeys=["-x"]),
            [
                f"{TSC}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector "
                "is not set",
                f'{TSC}[0].matchLabelKeys[0]: Invalid value: "-x": {NAME_PART_REGEX}',
            ],
            id="keys are still checked without a selector",
        ),
    ],
)
def test_legacy_match_label_keys_rule_without_selector_merge(
    raw: dict[str, Any], expected: list[str]
) -> None:
    errors = validate_topology_spread_constraints(
        constraints(raw), TSC, {"app": "web"}, selector_merge=False
    )
    assert messages(errors) == expected


def test_a_path_can_be_given_as_a_path() -> None:
    path = Path.root("spec").child("template", "spec", "topologySpreadConstraints")
    errors = validate_topology_spread_constraints(constraints(spread(maxSkew=0)), path)
    assert messages(errors) == [
        "spec.template.spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: "
        "must be greater than zero"
    ]


# ---------------------------------------------------------------------------------------------
# Pods


def make_pod(
    *,
    labels: dict[str, str] | None = None,
    meta: dict[str, Any] | None = None,
    **spec: Any,
) -> Pod:
    metadata: dict[str, Any] = {
        "name": "web-1",
        "namespace": "default",
        "labels": {"app": "web"} if labels is None else labels,
    }
    metadata.update(meta or {})
    metadata = {k: v for k, v in metadata.items() if v is not None}
    # A pod has a container at least (validateContainers), unless the test says otherwise.
    spec.setdefault("containers", [{"name": "c", "image": "nginx"}])
    return msgspec.convert({"metadata": metadata, "spec": spec}, Pod)


NODE_TERMS = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
POD_TERMS = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution"


def node_affinity(*expressions: dict[str, Any], fields: Any = ()) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": list(expressions)}
    if fields:
        term["matchFields"] = list(fields)
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def pod_affinity(**term: Any) -> dict[str, Any]:
    full: dict[str, Any] = {"topologyKey": "zone", "labelSelector": APP}
    full.update(term)
    full = {k: v for k, v in full.items() if v is not None}
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [full]}}


def test_a_valid_pod_has_no_errors() -> None:
    pod = make_pod(
        labels={"app": "web", "pod-template-hash": "abc"},
        nodeSelector={"disk": "ssd"},
        affinity={
            **node_affinity({"key": "zone", "operator": "In", "values": ["z1"]}),
            **pod_affinity(matchLabelKeys=["pod-template-hash"]),
        },
        tolerations=[{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        topologySpreadConstraints=[spread(matchLabelKeys=["pod-template-hash"])],
        priorityClassName="high",
        preemptionPolicy="Never",
    )
    assert validate_pod(pod) == []


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            make_pod(meta={"name": None}),
            ["metadata.name: Required value: name or generateName is required"],
            id="a pod needs a name",
        ),
        pytest.param(
            make_pod(meta={"name": None, "generateName": "web-"}),
            [],
            id="generateName gives the pod a name",
        ),
        pytest.param(
            make_pod(meta={"name": "Web_1"}),
            [f'metadata.name: Invalid value: "Web_1": {SUBDOMAIN_REGEX}'],
            id="a pod name is a DNS subdomain",
        ),
        pytest.param(
            make_pod(meta={"namespace": None}),
            ["metadata.namespace: Required value"],
            id="a pod needs a namespace",
        ),
        pytest.param(
            make_pod(meta={"namespace": "team.a"}),
            ['metadata.namespace: Invalid value: "team.a": must not contain dots'],
            id="a namespace is a DNS label",
        ),
        pytest.param(
            make_pod(labels={"app": "web", "bad key": "x"}),
            [f'metadata.labels: Invalid value: "bad key": {NAME_PART_REGEX}'],
            id="label keys",
        ),
        pytest.param(
            make_pod(nodeSelector={"disk": "s s d"}),
            [f'spec.nodeSelector: Invalid value: "s s d": {VALUE_REGEX}'],
            id="nodeSelector values",
        ),
        pytest.param(
            make_pod(
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}
                    }
                }
            ),
            [
                f"{NODE_TERMS}.nodeSelectorTerms: Required value: must have at least one node "
                "selector term"
            ],
            id="a required node selector needs a term",
        ),
        pytest.param(
            make_pod(
                affinity=node_affinity({"key": "zone", "operator": "Within", "values": ["a"]})
            ),
            [
                f"{NODE_TERMS}.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "
                '"Within": not a valid selector operator'
            ],
            id="node selector operators",
        ),
        pytest.param(
            make_pod(
                affinity=node_affinity({"key": "cpu", "operator": "Gt", "values": ["1", "2"]})
            ),
            [
                f"{NODE_TERMS}.nodeSelectorTerms[0].matchExpressions[0].values: Required value: "
                "must be specified single value when `operator` is 'Lt' or 'Gt'"
            ],
            id="Gt needs exactly one value",
        ),
        pytest.param(
            make_pod(affinity=node_affinity({"key": "cpu", "operator": "Gt", "values": ["many"]})),
            [],
            id="Gt's value is not checked to be an integer",
        ),
        pytest.param(
            make_pod(affinity=node_affinity({"key": "zone", "operator": "In", "values": ["a b"]})),
            [
                f"{NODE_TERMS}.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: "
                f'"a b": {VALUE_REGEX}'
            ],
            id="required node affinity values must be label values",
        ),
        pytest.param(
            make_pod(
                affinity={
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 0,
                                "preference": {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "In", "values": ["a b"]}
                                    ]
                                },
                            }
                        ]
                    }
                }
            ),
            [
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
                ".weight: Invalid value: 0: must be in the range 1-100"
            ],
            id="preferred terms check weights but allow any value",
        ),
        pytest.param(
            make_pod(
                affinity=node_affinity(
                    fields=[{"key": "metadata.labels", "operator": "In", "values": ["a", "b"]}]
                )
            ),
            [
                f"{NODE_TERMS}.nodeSelectorTerms[0].matchFields[0].values: Required value: must "
                "be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                f"{NODE_TERMS}.nodeSelectorTerms[0].matchFields[0].key: Invalid value: "
                '"metadata.labels": not a valid field selector key',
            ],
            id="matchFields take metadata.name and one value",
        ),
        pytest.param(
            make_pod(affinity=pod_affinity(topologyKey="")),
            [
                f"{POD_TERMS}[0].topologyKey: Required value: can not be empty",
                f'{POD_TERMS}[0].topologyKey: Invalid value: "": name part must be non-empty',
                f'{POD_TERMS}[0].topologyKey: Invalid value: "": {NAME_PART_REGEX}',
            ],
            id="an empty pod affinity topologyKey gives three errors",
        ),
        pytest.param(
            make_pod(affinity=pod_affinity(namespaces=["Team"])),
            [f'{POD_TERMS}[0].namespace: Invalid value: "Team": {DNS_LABEL_REGEX}'],
            id="affinity namespaces are reported at namespace, singular",
        ),
        pytest.param(
            make_pod(affinity=pod_affinity(matchLabelKeys=["app"])),
            [
                f'{POD_TERMS}[0][0]: Invalid value: "app": exists in both matchLabelKeys and '
                "labelSelector"
            ],
            id="affinity matchLabelKeys in the selector, after the merge",
        ),
        pytest.param(
            make_pod(
                labels={"app": "web", "rev": "7"},
                affinity=pod_affinity(matchLabelKeys=["rev"], mismatchLabelKeys=["rev"]),
            ),
            [
                f'{POD_TERMS}[0][0]: Invalid value: "rev": exists in both matchLabelKeys and '
                "labelSelector",
                f'{POD_TERMS}[0].matchLabelKeys[0]: Invalid value: "rev": exists in both '
                "matchLabelKeys and mismatchLabelKeys",
            ],
            id="a key in both matchLabelKeys and mismatchLabelKeys",
        ),
        pytest.param(
            make_pod(
                affinity={
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 101, "podAffinityTerm": {"topologyKey": "zone"}}
                        ]
                    }
                }
            ),
            [
                "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution"
                "[0].weight: Invalid value: 101: must be in the range 1-100"
            ],
            id="weighted anti-affinity terms",
        ),
        pytest.param(
            make_pod(schedulingGates=[{"name": "-g"}, {"name": "ok"}, {"name": "ok"}]),
            [
                f'spec.schedulingGates[0]: Invalid value: "-g": {NAME_PART_REGEX}',
                'spec.schedulingGates[2]: Duplicate value: "ok"',
            ],
            id="scheduling gates",
        ),
        pytest.param(
            make_pod(topologySpreadConstraints=[spread(maxSkew=0)]),
            [f"{TSC}[0].maxSkew: Invalid value: 0: must be greater than zero"],
            id="topology spread constraints",
        ),
        pytest.param(
            make_pod(topologySpreadConstraints=[spread(matchLabelKeys=["app"])]),
            [f'{TSC}[0][0]: Invalid value: "app": exists in both matchLabelKeys and labelSelector'],
            id="the create-time merge happens before validation",
        ),
        pytest.param(
            make_pod(nodeName="Node_1"),
            [f'spec.nodeName: Invalid value: "Node_1": {SUBDOMAIN_REGEX}'],
            id="nodeName is a DNS subdomain",
        ),
        pytest.param(
            make_pod(nodeName="node-1", schedulingGates=[{"name": "wait"}]),
            ["spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"],
            id="nodeName with scheduling gates",
        ),
        pytest.param(
            make_pod(tolerations=[{"operator": "Equal", "value": "x"}]),
            [
                'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists '
                'when `key` is empty, which means "match all values and all keys"'
            ],
            id="an empty toleration key needs Exists",
        ),
        pytest.param(
            make_pod(
                tolerations=[
                    {
                        "key": "k",
                        "operator": "Exists",
                        "effect": "NoSchedule",
                        "tolerationSeconds": 5,
                    }
                ]
            ),
            [
                'spec.tolerations[0].effect: Invalid value: "NoSchedule": effect must be '
                "'NoExecute' when `tolerationSeconds` is set"
            ],
            id="tolerationSeconds needs NoExecute",
        ),
        pytest.param(
            make_pod(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
            [
                'spec.tolerations[0].operator: Invalid value: "v": value must be empty when '
                "`operator` is 'Exists'"
            ],
            id="Exists takes no value",
        ),
        pytest.param(
            make_pod(tolerations=[{"key": "k", "value": "a" * 63 + "-"}]),
            [
                f'spec.tolerations[0].operator: Invalid value: "{"a" * 63}-": must be no more '
                f"than 63 bytes;{VALUE_REGEX}"
            ],
            id="toleration value problems are joined with a semicolon at operator",
        ),
        pytest.param(
            make_pod(tolerations=[{"key": "k", "operator": "In"}]),
            [
                'spec.tolerations[0].operator: Unsupported value: "In": supported values: '
                '"Equal", "Exists"'
            ],
            id="unknown toleration operators",
        ),
        pytest.param(
            make_pod(tolerations=[{"key": "k", "operator": "Lt", "value": "5"}]),
            [
                'spec.tolerations[0].operator: Unsupported value: "Lt": supported values: '
                '"Equal", "Exists", "Lt", "Gt"'
            ],
            id="Lt is refused with the alpha gate off, though listed as supported",
        ),
        pytest.param(
            make_pod(tolerations=[{"key": "-k", "operator": "Exists", "effect": "NoRun"}]),
            [
                f'spec.tolerations[0].key: Invalid value: "-k": {NAME_PART_REGEX}',
                'spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: '
                '"NoSchedule", "PreferNoSchedule", "NoExecute"',
            ],
            id="toleration keys and effects",
        ),
        pytest.param(
            make_pod(priorityClassName="High"),
            [f'spec.priorityClassName: Invalid value: "High": {SUBDOMAIN_REGEX}'],
            id="priorityClassName is a DNS subdomain",
        ),
        pytest.param(
            make_pod(preemptionPolicy="Sometimes"),
            [
                'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: '
                '"PreemptLowerPriority", "Never"'
            ],
            id="preemptionPolicy",
        ),
        pytest.param(
            make_pod(preemptionPolicy=""),
            ["spec.preemptionPolicy: Required value"],
            id="an empty preemptionPolicy",
        ),
    ],
)
def test_invalid_pods_report_upstream_messages(pod: Pod, expected: list[str]) -> None:
    assert messages(validate_pod(pod)) == expected


def test_pod_errors_come_in_upstream_order() -> None:
    pod = make_pod(
        meta={"namespace": None},
        tolerations=[{"key": "k", "operator": "In"}],
        topologySpreadConstraints=[spread(maxSkew=0)],
        nodeSelector={"a": "-"},
        schedulingGates=[{"name": "g"}, {"name": "g"}],
    )
    assert [str(e).split(":")[0] for e in validate_pod(pod)] == [
        "metadata.namespace",
        "spec.nodeSelector",
        "spec.schedulingGates[1]",
        f"{TSC}[0].maxSkew",
        "spec.tolerations[0].operator",
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("5", [], id="a canonical integer"),
        pytest.param(
            "0100",
            [
                'spec.tolerations[0].value: Invalid value: "0100": must be a valid decimal '
                "integer in canonical form"
            ],
            id="a leading zero",
        ),
        pytest.param(
            "x",
            [
                'spec.tolerations[0].value: Invalid value: "x": must be a valid decimal integer '
                "in canonical form",
                'spec.tolerations[0].value: Invalid value: "x": strconv.ParseInt: parsing "x": '
                "invalid syntax",
            ],
            id="not a number",
        ),
        pytest.param(
            "9223372036854775808",
            [
                'spec.tolerations[0].value: Invalid value: "9223372036854775808": '
                'strconv.ParseInt: parsing "9223372036854775808": value out of range'
            ],
            id="out of int64 range",
        ),
    ],
)
def test_comparison_toleration_values_with_the_gate_on(value: str, expected: list[str]) -> None:
    pod = make_pod(tolerations=[{"key": "k", "operator": "Gt", "value": value}])
    errors = validate_pod(pod, allow_toleration_comparison_operators=True)
    assert messages(errors) == expected


# ---------------------------------------------------------------------------------------------
# Nodes


def make_node(*taints: dict[str, Any], namespace: str = "") -> Node:
    meta: dict[str, Any] = {"name": "node-1", "labels": {"zone": "z1"}}
    if namespace:
        meta["namespace"] = namespace
    return msgspec.convert({"metadata": meta, "spec": {"taints": list(taints)}}, Node)


def test_a_valid_node_has_no_errors() -> None:
    node = make_node(
        {"key": "gpu", "value": "a100", "effect": "NoSchedule"},
        {"key": "gpu", "value": "a100", "effect": "NoExecute"},
    )
    assert validate_node(node) == []


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param(
            make_node(namespace="default"),
            ["metadata.namespace: Forbidden: not allowed on this type"],
            id="nodes are cluster-scoped",
        ),
        pytest.param(
            make_node({"key": "k", "effect": ""}),
            ["metadata.taints[0].effect: Required value"],
            id="a taint needs an effect, reported under metadata",
        ),
        pytest.param(
            make_node({"key": "k", "effect": "NoRun"}),
            [
                'metadata.taints[0].effect: Unsupported value: "NoRun": supported values: '
                '"NoSchedule", "PreferNoSchedule", "NoExecute"'
            ],
            id="taint effects",
        ),
        pytest.param(
            make_node({"key": "", "effect": "NoSchedule"}),
            [
                'metadata.taints[0].key: Invalid value: "": name part must be non-empty',
                f'metadata.taints[0].key: Invalid value: "": {NAME_PART_REGEX}',
            ],
            id="a taint needs a key",
        ),
        pytest.param(
            make_node({"key": "k", "value": "a b", "effect": "NoSchedule"}),
            [f'metadata.taints[0].value: Invalid value: "a b": {VALUE_REGEX}'],
            id="taint values",
        ),
        pytest.param(
            make_node(
                {"key": "k", "value": "a", "effect": "NoSchedule"},
                {"key": "k", "value": "b", "effect": "NoSchedule"},
            ),
            [
                'metadata.taints[1]: Duplicate value: {"Key":"k","Value":"b","Effect":"NoSchedule",'
                '"TimeAdded":null}: taints must be unique by key and effect pair'
            ],
            id="a repeated key and effect prints the internal taint as JSON",
        ),
        pytest.param(
            make_node(
                {"key": "k", "effect": "NoExecute"},
                {"key": "k", "effect": "NoExecute", "timeAdded": "2024-05-01T10:00:00+02:00"},
            ),
            [
                'metadata.taints[1]: Duplicate value: {"Key":"k","Value":"","Effect":"NoExecute",'
                '"TimeAdded":"2024-05-01T08:00:00Z"}: taints must be unique by key and effect pair'
            ],
            id="timeAdded marshals in UTC",
        ),
    ],
)
def test_invalid_nodes_report_upstream_messages(node: Node, expected: list[str]) -> None:
    assert messages(validate_node(node)) == expected


# ---------------------------------------------------------------------------------------------
# PodTopologySpreadArgs


def args(defaulting: str = "", *raw: dict[str, Any]) -> PodTopologySpreadArgs:
    return msgspec.convert(
        {"defaultingType": defaulting, "defaultConstraints": list(raw)}, PodTopologySpreadArgs
    )


def default(**fields: Any) -> dict[str, Any]:
    return spread(**{"labelSelector": None, **fields})


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(args(), id="defaulting type left empty means System"),
        pytest.param(args("System"), id="System without constraints"),
        pytest.param(args("List"), id="List without constraints"),
        pytest.param(
            args(
                "List", default(), default(topologyKey="node", whenUnsatisfiable="ScheduleAnyway")
            ),
            id="List with constraints",
        ),
        pytest.param(
            args(
                "List",
                default(minDomains=-1, nodeAffinityPolicy="Bogus", matchLabelKeys=["-x"]),
            ),
            id="minDomains, policies and matchLabelKeys are not checked",
        ),
    ],
)
def test_valid_args_have_no_errors(value: PodTopologySpreadArgs) -> None:
    assert validate_pod_topology_spread_args(value, "args") == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            args("System", default()),
            [
                'args.defaultingType: Invalid value: "System": '
                "when .defaultConstraints are not empty"
            ],
            id="System with constraints",
        ),
        pytest.param(
            args("", default()),
            [
                'args.defaultingType: Invalid value: "System": '
                "when .defaultConstraints are not empty"
            ],
            id="an empty defaulting type is defaulted to System first",
        ),
        pytest.param(
            args("list"),
            ['args.defaultingType: Unsupported value: "list": supported values: "System", "List"'],
            id="defaulting types are case-sensitive",
        ),
        pytest.param(
            args("List", default(maxSkew=0)),
            ["args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)"],
            id="maxSkew has its own message",
        ),
        pytest.param(
            args("List", default(topologyKey="")),
            ["args.defaultConstraints[0].topologyKey: Required value: can not be empty"],
            id="empty topologyKey",
        ),
        pytest.param(
            args("List", default(topologyKey="a/b/c")),
            [
                'args.defaultConstraints[0].topologyKey: Invalid value: "a/b/c": a valid label key '
                "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                f"regex used for validation is '{KEY_REGEX}') with an optional DNS subdomain "
                "prefix and '/' (e.g. 'example.com/MyName')"
            ],
            id="topologyKey must be a label key here",
        ),
        pytest.param(
            args("List", default(whenUnsatisfiable="")),
            ["args.defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty"],
            id="empty whenUnsatisfiable is required, not unsupported",
        ),
        pytest.param(
            args("List", default(whenUnsatisfiable="Maybe")),
            [
                'args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": '
                f"{SUPPORTED_ACTIONS}"
            ],
            id="unknown whenUnsatisfiable",
        ),
        pytest.param(
            args("List", default(labelSelector=APP)),
            [
                "args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define "
                "a selector, as they deduced for each pod"
            ],
            id="default constraints must not set a selector",
        ),
        pytest.param(
            args("List", default(), default(), default()),
            [
                'args.defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"',
                'args.defaultConstraints[2]: Duplicate value: "{zone, DoNotSchedule}"',
            ],
            id="repeats are reported on the later constraints",
        ),
    ],
)
def test_invalid_args_report_the_schedulers_messages(
    value: PodTopologySpreadArgs, expected: list[str]
) -> None:
    assert messages(validate_pod_topology_spread_args(value, "args")) == expected


def test_args_paths_follow_the_profile() -> None:
    path = Path.root("profiles").index(0).child("pluginConfig").index(1).child("args")
    errors = validate_pod_topology_spread_args(args("List", default(maxSkew=0)), path)
    assert messages(errors) == [
        "profiles[0].pluginConfig[1].args.defaultConstraints[0].maxSkew: Invalid value: 0: "
        "not in valid range (0, inf)"
    ]


def test_a_pods_spec_errors_found_once_are_those_found_afresh() -> None:
    """validate_pod keeps the spec's errors by what they depend on (spec, labels, switches):
    every pod of the tables above, validated with the kept errors of all the others, gives
    what it gives alone, with nothing kept."""
    from topospread.api import validation

    marks = test_invalid_pods_report_upstream_messages.pytestmark  # type: ignore[attr-defined]
    pods = [case.values[0] for case in marks[0].args[1]]
    # The same spec with other labels: merged into the selector, a bad value is the spec's
    # error too.
    for tier in ("a", "bad value!"):
        pods.append(make_pod(labels={"app": "web", "tier": tier}, topologySpreadConstraints=[
            spread(matchLabelKeys=["tier"])]))  # fmt: skip
    # Pods that differ only where the kept errors do not look (the name, nodeName, volumes,
    # images) share them; nodeName's own checks are each pod's.
    for i, node_name in enumerate(("node-1", "Node_1", "", "node-2")):
        for gates in ([], [{"name": "wait"}]):
            for notes in ({}, {"bad key!": "x"}):
                pods.append(make_pod(
                    meta={"name": f"web-{i}", "annotations": notes},
                    nodeName=node_name, schedulingGates=gates,
                    containers=[{"name": "c", "image": f"img:{i}",
                                 "resources": {"requests": {"cpu": "-1" if i == 3 else "1"}}}],
                    volumes=[{"name": f"kube-api-access-{i}", "projected": {}}],
                ))  # fmt: skip
    fresh = []
    for pod in pods:
        validation._SPEC_ERRORS.clear()
        fresh.append(messages(validate_pod(pod)))
    validation._SPEC_ERRORS.clear()
    assert [messages(validate_pod(pod)) for pod in pods] == fresh  # each kept for the next
    assert [messages(validate_pod(pod)) for pod in pods] == fresh  # all kept
