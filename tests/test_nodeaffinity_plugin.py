"""The NodeAffinity plugin, translated from node_affinity_test.go and the NodeAffinityArgs
cases of validation_pluginargs_test.go (v1.35)."""

from __future__ import annotations

from typing import Any

import pytest

from builders import make_node, make_pod
from topospread.api.types import Node, Pod
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import (
    FilterPlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
)
from topospread.framework.status import SKIP, SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo, NodeScore
from topospread.plugins import nodeaffinity
from topospread.plugins.nodeaffinity import (
    NodeAffinity,
    NodeAffinityArgs,
    decode_node_affinity_args,
    validate_node_affinity_args,
)

ERR_POD = new_status(
    Code.UnschedulableAndUnresolvable, "node(s) didn't match Pod's node affinity/selector"
)
ERR_ENFORCED = new_status(
    Code.UnschedulableAndUnresolvable, "node(s) didn't match scheduler-enforced node affinity"
)
ERR_CONFLICT = new_status(Code.UnschedulableAndUnresolvable, "pod affinity terms conflict")

QUALIFIED_NAME_DETAIL = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def test_reason_constants() -> None:
    assert nodeaffinity.ERR_REASON_POD == "node(s) didn't match Pod's node affinity/selector"
    assert (
        nodeaffinity.ERR_REASON_ENFORCED == "node(s) didn't match scheduler-enforced node affinity"
    )
    assert nodeaffinity.ERR_REASON_CONFLICT == "pod affinity terms conflict"


def _expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        e["values"] = list(values)
    return e


def _name_in(*names: str) -> dict[str, Any]:
    return _expr("metadata.name", "In", *names)


def _required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


def _preferred(*terms: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": p} for w, p in terms
            ]
        }
    }


def _affinity_pod(affinity: dict[str, Any], node_selector: dict[str, str] | None = None) -> Pod:
    builder = make_pod("p").spec_field("affinity", affinity)
    for k, v in (node_selector or {}).items():
        builder = builder.node_selector(k, v)
    return builder.obj()


def _selector_pod(**labels: str) -> Pod:
    builder = make_pod("p")
    for k, v in labels.items():
        builder = builder.node_selector(k, v)
    return builder.obj()


def _node(name: str = "", **labels: str) -> Node:
    builder = make_node(name)
    for k, v in labels.items():
        builder = builder.label(k, v)
    return builder.obj()


def _plugin(args: dict[str, Any] | None = None) -> NodeAffinity:
    return nodeaffinity.new(args, SnapshotHandle(Snapshot([])), DEFAULT_FEATURES)


ADDED_NODE2 = {"addedAffinity": _required({"matchFields": [_name_in("node2")]})["nodeAffinity"]}
ADDED_ZONE_BAR = {
    "addedAffinity": _required({"matchExpressions": [_expr("zone", "In", "bar")]})["nodeAffinity"]
}

# ---------------------------------------------------------------------------------------------
# PreFilter and Filter (TestNodeAffinity)


@pytest.mark.parametrize(
    ("pod", "node", "args", "want_pre_filter", "want_filter"),
    [
        pytest.param(
            _selector_pod(foo="bar"), _node(), None, (None, SUCCESS), ERR_POD, id="missing labels"
        ),
        pytest.param(
            _selector_pod(foo="bar"),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="same labels",
        ),
        pytest.param(
            _selector_pod(foo="bar"),
            _node(foo="bar", baz="blah"),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="node labels are superset",
        ),
        pytest.param(
            _selector_pod(foo="bar", baz="blah"),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            ERR_POD,
            id="node labels are subset",
        ),
        pytest.param(
            _affinity_pod(_required({"matchExpressions": [_expr("foo", "In", "bar", "value2")]})),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="matchExpressions using In operator that matches the existing node",
        ),
        pytest.param(
            _affinity_pod(_required({"matchExpressions": [_expr("kernel-version", "Gt", "0204")]})),
            _node(**{"kernel-version": "0206"}),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="matchExpressions using Gt operator that matches the existing node",
        ),
        pytest.param(
            _affinity_pod(
                _required({"matchExpressions": [_expr("mem-type", "NotIn", "DDR", "DDR2")]})
            ),
            _node(**{"mem-type": "DDR3"}),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="matchExpressions using NotIn operator that matches the existing node",
        ),
        pytest.param(
            _affinity_pod(
                _required({"matchExpressions": [_expr("foo", "In", "value1", "value2")]})
            ),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            ERR_POD,
            id="affinity that doesn't match node's labels won't schedule onto the node",
        ),
        pytest.param(
            _affinity_pod(_required({"matchExpressions": []})),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            ERR_POD,
            id="empty MatchExpressions match no objects",
        ),
        pytest.param(
            make_pod("p").obj(),
            _node(foo="bar"),
            None,
            (None, SKIP),
            SUCCESS,
            id="Pod with no Affinity will schedule onto a node",
        ),
        pytest.param(
            _affinity_pod({"nodeAffinity": {}}),
            _node(foo="bar"),
            None,
            (None, SKIP),
            SUCCESS,
            id="Pod with Affinity but nil NodeSelector will schedule onto a node",
        ),
        pytest.param(
            _affinity_pod(
                _required({"matchExpressions": [_expr("GPU", "Exists"), _expr("GPU", "In", "AMD")]})
            ),
            _node(GPU="NVIDIA-GRID-K1"),
            None,
            (None, SUCCESS),
            ERR_POD,
            id="multiple matchExpressions ANDed that doesn't match the existing node",
        ),
        pytest.param(
            _affinity_pod(
                _required(
                    {"matchExpressions": [_expr("foo", "In", "bar", "value2")]},
                    {"matchExpressions": [_expr("diffkey", "In", "wrong", "value2")]},
                )
            ),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="multiple NodeSelectorTerms ORed in affinity, matches the node's labels",
        ),
        pytest.param(
            _affinity_pod(
                _required({"matchExpressions": [_expr("foo", "Exists")]}), {"foo": "bar"}
            ),
            _node(foo="barrrrrr"),
            None,
            (None, SUCCESS),
            ERR_POD,
            id="Affinity matches but the PodSpec.NodeSelector is not satisfied",
        ),
        pytest.param(
            _affinity_pod(
                _required({"matchExpressions": [_expr("foo", "NotIn", "invalid value: ___@#$%^")]})
            ),
            _node(foo="bar"),
            None,
            (None, SUCCESS),
            ERR_POD,
            id="an invalid value in Affinity term won't be scheduled onto the node",
        ),
        pytest.param(
            _affinity_pod(_required({"matchFields": [_name_in("node1")]})),
            _node("node1"),
            None,
            (PreFilterResult(frozenset({"node1"})), SUCCESS),
            SUCCESS,
            id="matchFields using In operator that matches the existing node",
        ),
        pytest.param(
            _affinity_pod(_required({"matchFields": [_name_in("node1")]})),
            _node("node2"),
            None,
            (PreFilterResult(frozenset({"node1"})), SUCCESS),
            ERR_POD,
            id="matchFields using In operator that does not match the existing node",
        ),
        pytest.param(
            _affinity_pod(
                _required(
                    {"matchFields": [_name_in("node1"), _name_in("node2")]},
                    {"matchExpressions": [_expr("foo", "In", "bar")]},
                )
            ),
            _node("node2", foo="bar"),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="two terms: matchFields does not match, but matchExpressions matches",
        ),
        pytest.param(
            _affinity_pod(
                _required(
                    {
                        "matchFields": [_name_in("node1")],
                        "matchExpressions": [_expr("foo", "In", "bar")],
                    }
                )
            ),
            _node("node2", foo="bar"),
            None,
            (PreFilterResult(frozenset({"node1"})), SUCCESS),
            ERR_POD,
            id="one term: matchFields does not match, but matchExpressions matches",
        ),
        pytest.param(
            _affinity_pod(
                _required(
                    {"matchFields": [_name_in("node1")]},
                    {"matchFields": [_name_in("node2")]},
                )
            ),
            _node("node2"),
            None,
            (PreFilterResult(frozenset({"node1", "node2"})), SUCCESS),
            SUCCESS,
            id="two terms of node.Name affinity",
        ),
        pytest.param(
            _affinity_pod(_required({"matchFields": [_name_in("node1"), _name_in("node2")]})),
            _node("node2", foo="bar"),
            None,
            (None, ERR_CONFLICT),
            ERR_POD,
            id="two conflicting match field requirements",
        ),
        pytest.param(
            _affinity_pod(_required({"matchFields": [_expr("metadata.name", "NotIn", "node1")]})),
            _node("node2"),
            None,
            (None, SUCCESS),
            SUCCESS,
            id="a NotIn name requirement does not narrow the nodes",
        ),
        pytest.param(
            _affinity_pod(_required({"matchExpressions": [_expr("zone", "In", "foo")]})),
            _node("node2", zone="foo"),
            ADDED_NODE2,
            (None, SUCCESS),
            SUCCESS,
            id="Matches added affinity and Pod's node affinity",
        ),
        pytest.param(
            _affinity_pod(_required({"matchExpressions": [_expr("zone", "In", "bar")]})),
            _node("node2", zone="foo"),
            ADDED_NODE2,
            (None, SUCCESS),
            ERR_POD,
            id="Matches added affinity but not Pod's node affinity",
        ),
        pytest.param(
            make_pod("p").obj(),
            _node("node2", zone="foo"),
            ADDED_ZONE_BAR,
            (None, SUCCESS),
            ERR_ENFORCED,
            id="Doesn't match added affinity",
        ),
    ],
)
def test_pre_filter_and_filter(
    pod: Pod,
    node: Node,
    args: dict[str, Any] | None,
    want_pre_filter: tuple[PreFilterResult | None, Status],
    want_filter: Status,
) -> None:
    plugin = _plugin(args)
    assert isinstance(plugin, PreFilterPlugin)
    assert isinstance(plugin, FilterPlugin)
    assert plugin.pre_filter_extensions() is None
    info = NodeInfo(node)
    state = CycleState()
    assert plugin.pre_filter(state, pod, [info]) == want_pre_filter
    assert plugin.filter(state, pod, info) == want_filter


@pytest.mark.parametrize(
    ("pod", "node", "want"),
    [
        pytest.param(
            _selector_pod(foo="bar"),
            _node(foo="bar", baz="blah"),
            SUCCESS,
            id="Matches node selector correctly even if PreFilter is not called",
        ),
        pytest.param(
            _affinity_pod(
                _required(
                    {"matchExpressions": [_expr("GPU", "Exists"), _expr("GPU", "NotIn", "AMD")]}
                )
            ),
            _node(GPU="NVIDIA-GRID-K1"),
            SUCCESS,
            id="Matches node affinity correctly even if PreFilter is not called",
        ),
        pytest.param(
            _selector_pod(foo="bar"),
            _node(foo="baz"),
            ERR_POD,
            id="rejects correctly even if PreFilter is not called",
        ),
    ],
)
def test_filter_without_pre_filter(pod: Pod, node: Node, want: Status) -> None:
    assert _plugin().filter(CycleState(), pod, NodeInfo(node)) == want


# ---------------------------------------------------------------------------------------------
# PreScore, Score, NormalizeScore (TestNodeAffinityPriority)

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}

AFFINITY1 = _preferred((2, {"matchExpressions": [_expr("foo", "In", "bar")]}))
AFFINITY2 = _preferred(
    (2, {"matchExpressions": [_expr("foo", "In", "bar")]}),
    (4, {"matchExpressions": [_expr("key", "In", "value")]}),
    (
        5,
        {
            "matchExpressions": [
                _expr("foo", "In", "bar"),
                _expr("key", "In", "value"),
                _expr("az", "In", "az1"),
            ]
        },
    ),
)


KEY_VALUE_WEIGHT_3 = _preferred((3, {"matchExpressions": [_expr("key", "In", "value")]}))


def _labelled(name: str, labels: dict[str, str]) -> Node:
    return _node(name, **labels)


@pytest.mark.parametrize(
    ("pod", "nodes", "args", "run_pre_score", "want"),
    [
        pytest.param(
            make_pod("p").obj(),
            [_labelled("node1", LABEL1), _labelled("node2", LABEL2), _labelled("node3", LABEL3)],
            None,
            False,
            [0, 0, 0],
            id="all nodes are same priority as NodeAffinity is nil",
        ),
        pytest.param(
            _affinity_pod(AFFINITY1),
            [_labelled("node1", LABEL4), _labelled("node2", LABEL2), _labelled("node3", LABEL3)],
            None,
            True,
            [0, 0, 0],
            id="no node matches preferred scheduling requirements so all nodes' priority is zero",
        ),
        pytest.param(
            _affinity_pod(AFFINITY1),
            [_labelled("node1", LABEL1), _labelled("node2", LABEL2), _labelled("node3", LABEL3)],
            None,
            True,
            [100, 0, 0],
            id="only node1 matches the preferred scheduling requirements of pod",
        ),
        pytest.param(
            _affinity_pod(AFFINITY2),
            [_labelled("node1", LABEL1), _labelled("node5", LABEL5), _labelled("node2", LABEL2)],
            None,
            True,
            [18, 100, 36],
            id="all nodes matches the preferred scheduling requirements but different priorities",
        ),
        pytest.param(
            make_pod("p").obj(),
            [_labelled("node1", LABEL1), _labelled("node2", LABEL2)],
            {"addedAffinity": AFFINITY1["nodeAffinity"]},
            True,
            [100, 0],
            id="added affinity",
        ),
        pytest.param(
            _affinity_pod(AFFINITY1),
            [_labelled("node1", LABEL1), _labelled("node2", LABEL2), _labelled("node3", LABEL5)],
            {"addedAffinity": KEY_VALUE_WEIGHT_3["nodeAffinity"]},
            True,
            [40, 60, 100],
            id="added affinity and pod has default affinity",
        ),
        pytest.param(
            _affinity_pod(AFFINITY2),
            [_labelled("node1", LABEL1), _labelled("node5", LABEL5), _labelled("node2", LABEL2)],
            None,
            False,
            [18, 100, 36],
            id="calculate the priorities correctly even if PreScore is not called",
        ),
        pytest.param(
            _affinity_pod(
                _preferred(
                    (0, {"matchExpressions": [_expr("foo", "In", "bar")]}),
                    (1, {}),
                    (3, {"matchFields": [_name_in("node2")]}),
                )
            ),
            [_labelled("node1", LABEL1), _labelled("node2", LABEL2)],
            None,
            True,
            [0, 100],
            id="zero-weight and empty preferences are ignored, matchFields select by name",
        ),
    ],
)
def test_score(
    pod: Pod, nodes: list[Node], args: dict[str, Any] | None, run_pre_score: bool, want: list[int]
) -> None:
    plugin = _plugin(args)
    assert isinstance(plugin, PreScorePlugin)
    assert isinstance(plugin, ScorePlugin)
    infos = [NodeInfo(n) for n in nodes]
    state = CycleState()
    if run_pre_score:
        assert plugin.pre_score(state, pod, infos) is SUCCESS
    scores = []
    for info in infos:
        score, status = plugin.score(state, pod, info)
        assert status is SUCCESS
        scores.append(NodeScore(info.name, score))
    extensions = plugin.score_extensions()
    assert extensions is not None
    assert extensions.normalize_score(state, pod, scores) is SUCCESS
    assert [s.score for s in scores] == want


def test_pre_score_skips_without_preferred_terms() -> None:
    # "Skip is returned in PreScore when NodeAffinity is nil"
    pod = make_pod("p").obj()
    assert _plugin().pre_score(CycleState(), pod, [NodeInfo(_labelled("node1", LABEL1))]) is SKIP


def test_pre_score_reports_a_broken_preferred_term() -> None:
    # "PreScore returns error when an incoming Pod has a broken affinity"
    pod = _affinity_pod(_preferred((2, {"matchExpressions": [_expr("invalid key", "In", "bar")]})))
    status = _plugin().pre_score(CycleState(), pod, [])
    assert status.code is Code.Error
    assert status.message == (
        f'[0].matchExpressions[0].key: Invalid value: "invalid key": {QUALIFIED_NAME_DETAIL}'
    )
    # Score falls back to parsing when PreScore did not run, and fails the same way.
    _, score_status = _plugin().score(CycleState(), pod, NodeInfo(_node("n")))
    assert score_status.message == status.message


# ---------------------------------------------------------------------------------------------
# NodeAffinityArgs (TestValidateNodeAffinityArgs) and New


VALID_ADDED = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [_expr("label-1", "In", "label-1-val")]}]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchFields": [_name_in("node-1")]}}
    ],
}
INVALID_ADDED = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [
            {"matchExpressions": [_expr("invalid/label/key", "In", "label-1-val")]}
        ]
    },
    "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchFields": [_name_in("node-1", "node-2")]}}
    ],
}
BAD_KEY = _expr("a b", "In", "x")
BAD_VALUE = _expr("k", "In", "a b")
INVALID_KEY_DETAIL = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
    "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
)
INVALID_ERRORS = [
    "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
    f'.matchExpressions[0].key: Invalid value: "invalid/label/key": {INVALID_KEY_DETAIL}',
    "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values: "
    'Invalid value: ["node-1","node-2"]: must have one element',
]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(None, [], id="empty"),
        pytest.param({"addedAffinity": VALID_ADDED}, [], id="valid added affinity"),
        pytest.param({"addedAffinity": INVALID_ADDED}, INVALID_ERRORS, id="invalid added affinity"),
        pytest.param(
            {
                "addedAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {},
                            {
                                "matchExpressions": [
                                    _expr("zone", "Foo", "a"),
                                    _expr("gen", "Gt", "x"),
                                    _expr("zone", "In"),
                                    _expr("zone", "Exists", "a"),
                                ],
                                "matchFields": [_expr("metadata.name", "Exists")],
                            },
                        ]
                    }
                }
            },
            [
                "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
                + suffix
                for suffix in (
                    '.matchExpressions[0].operator: Unsupported value: "Foo": supported values: '
                    '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
                    '.matchExpressions[1].values[0]: Invalid value: "x": '
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                    ".matchExpressions[2].values: Invalid value: null: "
                    "for 'in', 'notin' operators, values set can't be empty",
                    '.matchExpressions[3].values: Invalid value: ["a"]: '
                    "values set must be empty for exists and does not exist",
                    '.matchFields[0].operator: Unsupported value: "Exists": supported values: '
                    '"In", "NotIn"',
                )
            ],
            id="every requirement error, with the empty term's index skipped",
        ),
        pytest.param(
            {
                "addedAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "preference": {"matchExpressions": [BAD_KEY]}},
                        {"weight": 1, "preference": {"matchExpressions": [BAD_VALUE]}},
                    ]
                }
            },
            [
                "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1]"
                '.matchExpressions[0].values[0][k]: Invalid value: "a b": a valid label must be '
                "an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyValue',  or "
                "'my_value',  or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
            id="zero-weight preferred terms are not parsed; label values are checked",
        ),
    ],
)
def test_validate_node_affinity_args(raw: dict[str, Any] | None, want: list[str]) -> None:
    assert validate_node_affinity_args(decode_node_affinity_args(raw)) == want


def test_validation_errors_carry_the_args_path() -> None:
    errors = validate_node_affinity_args(
        decode_node_affinity_args({"addedAffinity": INVALID_ADDED}),
        "profiles[0].pluginConfig[0].args",
    )
    assert errors == [f"profiles[0].pluginConfig[0].args.{e}" for e in INVALID_ERRORS]


def test_new_rejects_invalid_args_with_the_aggregated_message() -> None:
    with pytest.raises(ConfigError) as info:
        _plugin({"apiVersion": "kubescheduler.config.k8s.io/v1", "addedAffinity": INVALID_ADDED})
    assert str(info.value) == "[" + ", ".join(INVALID_ERRORS) + "]"


def test_new_accepts_typed_args_and_wire_names() -> None:
    args = decode_node_affinity_args({"kind": "NodeAffinityArgs", "addedAffinity": VALID_ADDED})
    assert isinstance(args, NodeAffinityArgs)
    assert args.added_affinity is not None
    plugin = nodeaffinity.new(args, SnapshotHandle(Snapshot([])), DEFAULT_FEATURES)
    assert plugin.added_node_selector is not None
    assert plugin.added_pref_sched_terms is not None
    assert plugin.name == "NodeAffinity"


def test_new_rejects_args_of_the_wrong_shape() -> None:
    with pytest.raises(ConfigError, match="decoding NodeAffinityArgs"):
        _plugin({"addedAffinity": "not an object"})
