"""The InterPodAffinity plugin, translated from filtering_test.go and scoring_test.go (v1.35).

Each table row keeps upstream's case name as its id (shortened where upstream's is a paragraph);
rows added here for semantics upstream's tables do not pin down say so in their id.
Upstream's test pods live in namespace "" unless a case says otherwise; so do these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import make_node
from topospread.api.types import Namespace, Node, Pod, PodAffinityTerm
from topospread.cluster.snapshot import ObjectStore, Snapshot, SnapshotHandle
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import (
    FilterPlugin,
    PreFilterPlugin,
    PreScorePlugin,
    ScorePlugin,
)
from topospread.framework.status import SKIP, SUCCESS, Code, Status, new_status
from topospread.framework.types import MAX_NODE_SCORE, NodeScore
from topospread.labels.selector import label_selector_as_selector
from topospread.plugins import interpodaffinity
from topospread.plugins.interpodaffinity import (
    PRE_FILTER_STATE_KEY,
    InterPodAffinity,
    InterPodAffinityArgs,
    apply_affinity_match_label_keys,
    decode_inter_pod_affinity_args,
    set_defaults_inter_pod_affinity_args,
    validate_inter_pod_affinity_args,
)

# ---------------------------------------------------------------------------------------------
# Expected statuses, byte for byte upstream's

AFFINITY = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"

ERR_AFFINITY = new_status(Code.UnschedulableAndUnresolvable, AFFINITY)
ERR_ANTI = new_status(Code.Unschedulable, ANTI_AFFINITY)
ERR_EXISTING = new_status(Code.Unschedulable, EXISTING)
OK = SUCCESS


def test_reason_constants_are_upstreams() -> None:
    assert interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH == AFFINITY
    assert interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH == ANTI_AFFINITY
    assert interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH == EXISTING
    assert interpodaffinity.NAME == "InterPodAffinity"


# ---------------------------------------------------------------------------------------------
# Builders in the spirit of st.MakePod().PodAffinityIn(...)

Selector = dict[str, Any] | None


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    e: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        e["values"] = list(values)
    return e


def sel(*exprs: dict[str, Any]) -> dict[str, Any]:
    return {"matchExpressions": list(exprs)}


def in_(key: str, *values: str) -> dict[str, Any]:
    return sel(expr(key, "In", *values))


def not_in(key: str, *values: str) -> dict[str, Any]:
    return sel(expr(key, "NotIn", *values))


def exists(key: str) -> dict[str, Any]:
    return sel(expr(key, "Exists"))


def term(
    selector: Selector,
    topology_key: str = "",
    *,
    namespaces: Sequence[str] | None = None,
    namespace_selector: Selector = None,
    match_label_keys: Sequence[str] | None = None,
    mismatch_label_keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    t: dict[str, Any] = {"topologyKey": topology_key}
    if selector is not None:
        t["labelSelector"] = selector
    if namespaces is not None:
        t["namespaces"] = list(namespaces)
    if namespace_selector is not None:
        t["namespaceSelector"] = namespace_selector
    if match_label_keys is not None:
        t["matchLabelKeys"] = list(match_label_keys)
    if mismatch_label_keys is not None:
        t["mismatchLabelKeys"] = list(mismatch_label_keys)
    return t


Weighted = tuple[int, dict[str, Any]]


def pod(
    name: str = "",
    *,
    namespace: str = "",
    labels: dict[str, str] | None = None,
    node: str = "",
    affinity: Sequence[dict[str, Any]] = (),
    anti_affinity: Sequence[dict[str, Any]] = (),
    preferred_affinity: Sequence[Weighted] = (),
    preferred_anti_affinity: Sequence[Weighted] = (),
    terminating: bool = False,
) -> Pod:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels or {}}
    if terminating:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    spec: dict[str, Any] = {"nodeName": node}
    aff: dict[str, Any] = {}
    if affinity or preferred_affinity:
        aff["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": list(affinity),
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred_affinity
            ],
        }
    if anti_affinity or preferred_anti_affinity:
        aff["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": list(anti_affinity),
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "podAffinityTerm": t} for w, t in preferred_anti_affinity
            ],
        }
    if aff:
        spec["affinity"] = aff
    return msgspec.convert({"metadata": meta, "spec": spec}, Pod)


def node(name: str, **labels: str) -> Node:
    b = make_node(name)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def namespace(name: str, **labels: str) -> Namespace:
    return msgspec.convert({"metadata": {"name": name, "labels": labels}}, Namespace)


# var namespaces in scoring_test.go
NAMESPACES = (
    namespace("subteam1.team1", team="team1"),
    namespace("subteam2.team1", team="team1"),
    namespace("subteam1.team2", team="team2"),
    namespace("subteam2.team2", team="team2"),
)


def plugin(
    nodes: Sequence[Node],
    pods: Sequence[Pod] = (),
    namespaces: Sequence[Namespace] = NAMESPACES,
    args: dict[str, Any] | None = None,
) -> tuple[InterPodAffinity, Snapshot]:
    snapshot = Snapshot(nodes, pods)
    handle = SnapshotHandle(snapshot, ObjectStore(namespaces=namespaces))
    pl = interpodaffinity.new(args, handle, DEFAULT_FEATURES)
    assert isinstance(pl, PreFilterPlugin)
    assert isinstance(pl, FilterPlugin)
    assert isinstance(pl, PreScorePlugin)
    assert isinstance(pl, ScorePlugin)
    return pl, snapshot


@dataclass
class FilterCase:
    pod: Pod
    nodes: Sequence[Node]
    pods: Sequence[Pod] = ()
    want_pre_filter: Status = OK
    want_filter: Sequence[Status] = ()
    namespaces: Sequence[Namespace] = NAMESPACES


def run_filter(case: FilterCase) -> tuple[Status, list[Status]]:
    pl, snapshot = plugin(case.nodes, case.pods, case.namespaces)
    state = CycleState()
    result, status = pl.pre_filter(state, case.pod, snapshot.list())
    assert result is None
    if not status.is_success:
        return status, []
    return status, [pl.filter(state, case.pod, info) for info in snapshot.list()]


def check_filter(case: FilterCase) -> None:
    pre, got = run_filter(case)
    assert pre == case.want_pre_filter
    if pre.is_success:
        want = list(case.want_filter) or [OK] * len(case.nodes)
        assert got == want


# ---------------------------------------------------------------------------------------------
# TestRequiredAffinitySingleNode

POD_LABEL = {"service": "securityscan"}
POD_LABEL2 = {"security": "S1"}
NODE1 = node("node1", region="r1", zone="z11")
EXISTING_POD = pod("p", labels=POD_LABEL, node="node1")


def single(
    incoming: Pod,
    pods: Sequence[Pod] = (EXISTING_POD,),
    *,
    pre: Status = OK,
    want: Status = OK,
) -> FilterCase:
    return FilterCase(incoming, [NODE1], pods, pre, [want])


SINGLE_NODE_CASES = {
    "A pod that has no required pod affinity scheduling rules can schedule onto a node with no "
    "existing pods": single(pod(), [], pre=SKIP),
    "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In "
    "operator that matches the existing pod": single(
        pod(labels=POD_LABEL2, affinity=[term(in_("service", "securityscan", "value2"), "region")])
    ),
    "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using "
    "not in operator in labelSelector that matches the existing pod": single(
        pod(
            labels=POD_LABEL2,
            affinity=[term(not_in("service", "securityscan3", "value3"), "region")],
        )
    ),
    "Does not satisfy the PodAffinity with labelSelector because of diff Namespace": single(
        pod(
            labels=POD_LABEL2,
            affinity=[term(in_("service", "securityscan", "value2"), namespaces=["DiffNameSpace"])],
        ),
        [pod("p", namespace="ns", labels=POD_LABEL, node="node1")],
        want=ERR_AFFINITY,
    ),
    "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod": (
        single(
            pod(labels=POD_LABEL, affinity=[term(in_("service", "antivirusscan", "value2"))]),
            want=ERR_AFFINITY,
        )
    ),
    "satisfies the PodAffinity with different label Operators in multiple "
    "RequiredDuringSchedulingIgnoredDuringExecution": single(
        pod(
            labels=POD_LABEL2,
            affinity=[
                term(sel(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")), "region"),
                term(
                    sel(
                        expr("service", "In", "securityscan"),
                        expr("service", "NotIn", "WrongValue"),
                    ),
                    "region",
                ),
            ],
        )
    ),
    "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot "
    "schedule onto the node because one of the matchExpression item don't match.": single(
        pod(
            labels=POD_LABEL2,
            affinity=[
                term(sel(expr("service", "Exists"), expr("wrongkey", "DoesNotExist")), "region"),
                term(
                    sel(
                        expr("service", "In", "securityscan2"),
                        expr("service", "NotIn", "WrongValue"),
                    ),
                    "region",
                ),
            ],
        ),
        want=ERR_AFFINITY,
    ),
    "satisfies the PodAffinity and PodAntiAffinity with the existing pod": single(
        pod(
            labels=POD_LABEL2,
            affinity=[term(in_("service", "securityscan", "value2"), "region")],
            anti_affinity=[term(in_("service", "antivirusscan", "value2"), "node")],
        )
    ),
    "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the "
    "existing pod": single(
        pod(
            labels=POD_LABEL2,
            affinity=[term(in_("service", "securityscan", "value2"), "region")],
            anti_affinity=[term(in_("service", "antivirusscan", "value2"), "node")],
        ),
        [
            pod(
                "p",
                labels=POD_LABEL,
                node="node1",
                anti_affinity=[term(in_("service", "antivirusscan", "value2"), "node")],
            )
        ],
    ),
    "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod": (
        single(
            pod(
                labels=POD_LABEL2,
                affinity=[term(in_("service", "securityscan", "value2"), "region")],
                anti_affinity=[term(in_("service", "securityscan", "value2"), "zone")],
            ),
            want=ERR_ANTI,
        )
    ),
    "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry "
    "with the existing pod": single(
        pod(
            labels=POD_LABEL,
            affinity=[term(in_("service", "securityscan", "value2"), "region")],
            anti_affinity=[term(in_("service", "antivirusscan", "value2"), "node")],
        ),
        [
            pod(
                "p",
                labels=POD_LABEL,
                node="node1",
                anti_affinity=[term(in_("service", "securityscan", "value2"), "zone")],
            )
        ],
        want=ERR_EXISTING,
    ),
    # Upstream's existing pod sits on node2, which is not in the snapshot: no pod is visible.
    "pod matches its own Label in PodAffinity and that matches the existing pod Labels": single(
        pod(
            labels=POD_LABEL, affinity=[term(not_in("service", "securityscan", "value2"), "region")]
        ),
        [],
        want=ERR_AFFINITY,
    ),
    "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
    "constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod": single(
        pod(labels=POD_LABEL),
        [
            pod(
                "p",
                labels=POD_LABEL,
                node="node1",
                anti_affinity=[term(in_("service", "securityscan", "value2"), "zone")],
            )
        ],
        want=ERR_EXISTING,
    ),
    "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity "
    "constraints. satisfy PodAntiAffinity symmetry with the existing pod": single(
        pod(labels=POD_LABEL),
        [
            pod(
                "p",
                labels=POD_LABEL,
                node="node1",
                anti_affinity=[term(not_in("service", "securityscan", "value2"), "zone")],
            )
        ],
        pre=SKIP,
    ),
    "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity "
    "symmetry with incoming pod": single(
        pod(
            labels=POD_LABEL,
            anti_affinity=[term(exists("service"), "region"), term(exists("security"), "region")],
        ),
        [
            pod(
                "p",
                labels=POD_LABEL2,
                node="node1",
                anti_affinity=[term(exists("security"), "zone")],
            )
        ],
        want=ERR_ANTI,
    ),
    "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other "
    "on AffinityTerms": single(
        pod(
            labels=POD_LABEL,
            anti_affinity=[term(exists("service"), "zone"), term(exists("security"), "zone")],
        ),
        [
            pod(
                "p",
                labels=POD_LABEL2,
                node="node1",
                anti_affinity=[term(exists("security"), "zone")],
            )
        ],
        want=ERR_ANTI,
    ),
    "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other "
    "on AffinityTerms": single(
        pod(labels=POD_LABEL2, anti_affinity=[term(exists("security"), "zone")]),
        [
            pod(
                "p",
                labels=POD_LABEL,
                node="node1",
                anti_affinity=[term(exists("service"), "zone"), term(exists("security"), "zone")],
            )
        ],
        want=ERR_EXISTING,
    ),
    "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other "
    "on AffinityTerms": single(
        pod(
            labels={"abc": "", "xyz": ""},
            anti_affinity=[term(exists("abc"), "zone"), term(exists("def"), "zone")],
        ),
        [
            pod(
                "p",
                labels={"def": "", "xyz": ""},
                node="node1",
                anti_affinity=[term(exists("abc"), "zone"), term(exists("def"), "zone")],
            )
        ],
        want=ERR_ANTI,
    ),
    "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other "
    "on AffinityTerms": single(
        pod(
            labels={"def": "", "xyz": ""},
            anti_affinity=[term(exists("abc"), "zone"), term(exists("def"), "zone")],
        ),
        [
            pod(
                "p",
                labels={"abc": "", "xyz": ""},
                node="node1",
                anti_affinity=[term(exists("abc"), "zone"), term(exists("def"), "zone")],
            )
        ],
        want=ERR_ANTI,
    ),
    "affinity with NamespaceSelector": single(
        pod(
            labels=POD_LABEL2,
            affinity=[
                term(
                    in_("service", "securityscan", "value2"),
                    "region",
                    namespace_selector=in_("team", "team1"),
                )
            ],
        ),
        [pod("p", namespace="subteam1.team1", labels=POD_LABEL, node="node1")],
    ),
    "affinity with non-matching NamespaceSelector": single(
        pod(
            labels=POD_LABEL2,
            affinity=[
                term(
                    in_("service", "securityscan", "value2"),
                    "region",
                    namespace_selector=in_("team", "team1"),
                )
            ],
        ),
        [pod("p", namespace="subteam1.team2", labels=POD_LABEL, node="node1")],
        want=ERR_AFFINITY,
    ),
    "anti-affinity with matching NamespaceSelector": single(
        pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti_affinity=[
                term(
                    in_("service", "securityscan", "value2"),
                    "zone",
                    namespace_selector=in_("team", "team1"),
                )
            ],
        ),
        [pod("p", namespace="subteam2.team1", labels=POD_LABEL, node="node1")],
        want=ERR_ANTI,
    ),
    "anti-affinity with matching all NamespaceSelector": single(
        pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti_affinity=[
                term(in_("service", "securityscan", "value2"), "zone", namespace_selector={})
            ],
        ),
        [pod("p", namespace="subteam2.team1", labels=POD_LABEL, node="node1")],
        want=ERR_ANTI,
    ),
    "anti-affinity with non-matching NamespaceSelector": single(
        pod(
            namespace="subteam1.team1",
            labels=POD_LABEL2,
            anti_affinity=[
                term(
                    in_("service", "securityscan", "value2"),
                    "zone",
                    namespace_selector=in_("team", "team1"),
                )
            ],
        ),
        [pod("p", namespace="subteam1.team2", labels=POD_LABEL, node="node1")],
    ),
}


@pytest.mark.parametrize("case", SINGLE_NODE_CASES.values(), ids=SINGLE_NODE_CASES.keys())
def test_required_affinity_single_node(case: FilterCase) -> None:
    check_filter(case)


BAD_VALUE_DETAIL = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
BAD_AFFINITY_POD = pod(
    labels=POD_LABEL,
    affinity=[
        term(in_("service", "{{.bad-value.}}"), "region"),
        term(in_("service", "antivirusscan", "value2"), "node"),
    ],
)


def test_an_invalid_affinity_label_fails_pre_filter_as_unresolvable() -> None:
    # "PodAffinity fails PreFilter with an invalid affinity label syntax"
    pre, _ = run_filter(FilterCase(BAD_AFFINITY_POD, [NODE1]))
    assert pre.code is Code.UnschedulableAndUnresolvable
    assert pre.message.startswith("parsing pod: requiredAffinityTerms: values[0]")
    assert pre.message.endswith(f'Invalid value: "{{{{.bad-value.}}}}": {BAD_VALUE_DETAIL}')


def test_an_invalid_affinity_label_fails_pre_filter_with_upstreams_exact_message() -> None:
    pre, _ = run_filter(FilterCase(BAD_AFFINITY_POD, [NODE1]))
    assert pre == new_status(
        Code.UnschedulableAndUnresolvable,
        "parsing pod: requiredAffinityTerms: values[0][service]: "
        f'Invalid value: "{{{{.bad-value.}}}}": {BAD_VALUE_DETAIL}',
    )


def test_filter_without_pre_filter_is_an_error() -> None:
    # TestPreFilterDisabled
    pl, snapshot = plugin([node("n")])
    status = pl.filter(CycleState(), pod(), snapshot.list()[0])
    assert status.code is Code.Error
    assert status.message == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# TestRequiredAffinityMultipleNodes

RG_CHINA = {"region": "China"}
RG_CHINA_AZ1 = {"region": "China", "az": "az1"}
RG_INDIA = {"region": "India"}


def abc_nodes(zones: Sequence[str] = ("z1", "z1")) -> list[Node]:
    return [
        node(f"node{x}", region="r1", zone=z, hostname=f"node{x}")
        for x, z in zip("ABC", zones, strict=False)
    ]


MULTI_NODE_CASES = {
    "A pod can be scheduled onto all the nodes that have the same topology key & label value "
    "with one of them has an existing pod that matches the affinity rules": FilterCase(
        pod(affinity=[term(in_("foo", "bar"), "region")]),
        [node("node1", **RG_CHINA), node("node2", **RG_CHINA_AZ1), node("node3", **RG_INDIA)],
        [pod("p1", node="node1", labels={"foo": "bar"})],
        want_filter=[OK, OK, ERR_AFFINITY],
    ),
    "The first pod of the collection should not be blocked from being scheduled onto any node, "
    "even there's no existing pod that matches the rule anywhere": FilterCase(
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            affinity=[
                term(in_("foo", "bar"), "zone"),
                term(in_("service", "securityscan"), "zone"),
            ],
        ),
        [node("nodeA", zone="az1", hostname="h1"), node("nodeB", zone="az2", hostname="h2")],
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        want_filter=[OK, OK],
    ),
    "The first pod of the collection can only be scheduled on nodes labelled with the requested "
    "topology keys": FilterCase(
        pod(
            labels={"foo": "bar", "service": "securityscan"},
            affinity=[
                term(in_("foo", "bar"), "zone"),
                term(in_("service", "securityscan"), "zone"),
            ],
        ),
        [
            node("nodeA", zoneLabel="az1", hostname="h1"),
            node("nodeB", zoneLabel="az2", hostname="h2"),
        ],
        [pod("p1", node="nodeA", labels={"foo": "bar"})],
        want_filter=[ERR_AFFINITY, ERR_AFFINITY],
    ),
    "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that "
    "matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.": (
        FilterCase(
            pod(anti_affinity=[term(in_("foo", "abc"), "region")]),
            [node("nodeA", region="r1", hostname="nodeA"), node("nodeB", region="r1")],
            [pod("p", node="nodeA", labels={"foo": "abc"})],
            want_filter=[ERR_ANTI, ERR_ANTI],
        )
    ),
    "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule "
    "matches a pod.": FilterCase(
        pod(
            anti_affinity=[
                term(in_("foo", "abc"), "region"),
                term(in_("service", "securityscan"), "zone"),
            ]
        ),
        [node("nodeA", region="r1", zone="z1"), node("nodeB", region="r1", zone="z2")],
        [pod("p", node="nodeA", labels={"foo": "abc", "service": "securityscan"})],
        want_filter=[ERR_ANTI, ERR_ANTI],
    ),
    "The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has "
    "an existing pod that match the inter pod affinity rule but in different namespace)": (
        FilterCase(
            pod(
                namespace="NS1",
                labels={"foo": "123"},
                anti_affinity=[term(in_("foo", "bar"), "region")],
            ),
            [node("nodeA", **RG_CHINA), node("nodeB", **RG_CHINA_AZ1), node("nodeC", **RG_INDIA)],
            [
                pod("p1", node="nodeA", namespace="NS1", labels={"foo": "bar"}),
                pod(
                    "p2",
                    node="nodeC",
                    namespace="NS2",
                    anti_affinity=[term(in_("foo", "123"), "region")],
                ),
            ],
            want_filter=[ERR_ANTI, ERR_ANTI, OK],
            namespaces=[namespace("NS1")],
        )
    ),
    "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, "
    "labelSelector of the term is firstly checked, and then topologyKey of the term is also "
    "checked": FilterCase(
        pod(labels={"foo": ""}),
        abc_nodes(),
        [pod("p", node="nodeA", anti_affinity=[term(exists("foo"), "invalid-node-label")])],
        want_pre_filter=SKIP,
    ),
    "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if "
    "topologyKey matches": FilterCase(
        pod(anti_affinity=[term(exists("foo"), "invalid-node-label")]),
        abc_nodes(),
        [pod("p", node="nodeA", labels={"foo": ""})],
        want_filter=[OK, OK],
    ),
    "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates "
    "each existingPod's terms on all nodes": FilterCase(
        pod(labels={"foo": "", "bar": ""}),
        abc_nodes(("z1", "z2")),
        [
            pod("p1", node="nodeA", anti_affinity=[term(exists("foo"), "zone")]),
            pod("p2", node="nodeA", anti_affinity=[term(exists("bar"), "region")]),
        ],
        want_filter=[ERR_EXISTING, ERR_EXISTING],
    ),
    "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least "
    "violates one anti-affinity rule of existingPod": FilterCase(
        pod(anti_affinity=[term(exists("foo"), "zone"), term(exists("bar"), "region")]),
        abc_nodes(("z1", "z2")),
        [pod("p1", node="nodeA", labels={"foo": ""}), pod("p2", node="nodeB", labels={"bar": ""})],
        want_filter=[ERR_ANTI, ERR_ANTI],
    ),
    "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
    "counted as a single term match - case when one term has invalid topologyKey": FilterCase(
        pod(labels={"foo": "", "bar": ""}),
        abc_nodes(("z1", "z2")),
        [
            pod(
                "p",
                node="nodeA",
                anti_affinity=[
                    term(exists("foo"), "invalid-node-label"),
                    term(exists("bar"), "zone"),
                ],
            )
        ],
        want_filter=[ERR_EXISTING, OK],
    ),
    "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's "
    "counted as a single term match - case when one term has invalid topologyKey": FilterCase(
        pod(
            anti_affinity=[
                term(exists("foo"), "invalid-node-label"),
                term(exists("bar"), "zone"),
            ]
        ),
        abc_nodes(("z1", "z2")),
        [pod("podA", node="nodeA", labels={"foo": "", "bar": ""})],
        want_filter=[ERR_ANTI, OK],
    ),
    "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one "
    "anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC": (
        FilterCase(
            pod(labels={"foo": "", "bar": ""}),
            abc_nodes(("z1", "z2", "z3")),
            [
                pod(
                    "p1",
                    node="nodeA",
                    anti_affinity=[term(exists("foo"), "zone"), term(exists("labelA"), "zone")],
                ),
                pod(
                    "p2",
                    node="nodeB",
                    anti_affinity=[term(exists("bar"), "zone"), term(exists("labelB"), "zone")],
                ),
            ],
            want_filter=[ERR_EXISTING, ERR_EXISTING, OK],
        )
    ),
    "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
    "all topologyKeys match": FilterCase(
        pod(affinity=[term(exists("foo"), "region"), term(exists("bar"), "zone")]),
        abc_nodes(),
        [pod("pod1", node="nodeA", labels={"foo": "", "bar": ""})],
        want_filter=[OK, OK],
    ),
    "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if "
    "all topologyKeys match, and the match logic should be satisfied on the same pod": FilterCase(
        pod(affinity=[term(exists("foo"), "region"), term(exists("bar"), "zone")]),
        abc_nodes(("z1", "z2")),
        [
            pod("pod1", node="nodeA", labels={"foo": ""}),
            pod("pod2", node="nodeB", labels={"bar": ""}),
        ],
        want_filter=[ERR_AFFINITY, ERR_AFFINITY],
    ),
}


@pytest.mark.parametrize("case", MULTI_NODE_CASES.values(), ids=MULTI_NODE_CASES.keys())
def test_required_affinity_multiple_nodes(case: FilterCase) -> None:
    check_filter(case)


# ---------------------------------------------------------------------------------------------
# Term semantics that upstream's tables leave implicit (added here)

TWO_ZONES = [node("n1", zone="z1"), node("n2", zone="z2")]

SEMANTICS_CASES = {
    "terminating pods still count for the incoming pod's anti-affinity (kubernetes#112098)": (
        FilterCase(
            pod(anti_affinity=[term(in_("app", "a"), "zone")]),
            TWO_ZONES,
            [pod("t", node="n1", labels={"app": "a"}, terminating=True)],
            want_filter=[ERR_ANTI, OK],
        )
    ),
    "a terminating pod's anti-affinity still repels the incoming pod": FilterCase(
        pod(labels={"app": "a"}),
        TWO_ZONES,
        [pod("t", node="n1", terminating=True, anti_affinity=[term(in_("app", "a"), "zone")])],
        want_filter=[ERR_EXISTING, OK],
    ),
    "a terminating pod satisfies the incoming pod's affinity": FilterCase(
        pod(affinity=[term(in_("app", "a"), "zone")]),
        TWO_ZONES,
        [pod("t", node="n1", labels={"app": "a"}, terminating=True)],
        want_filter=[OK, ERR_AFFINITY],
    ),
    "a nil labelSelector selects no pod, not even the pod itself": FilterCase(
        pod(labels={"app": "a"}, affinity=[term(None, "zone")]),
        TWO_ZONES,
        [pod("p", node="n1", labels={"app": "a"})],
        want_filter=[ERR_AFFINITY, ERR_AFFINITY],
    ),
    "an empty labelSelector selects every pod in the namespace": FilterCase(
        pod(affinity=[term({}, "zone")]),
        TWO_ZONES,
        [pod("p", node="n2", labels={"any": "thing"})],
        want_filter=[ERR_AFFINITY, OK],
    ),
    "an empty labelSelector matches the pod itself: the first pod may go anywhere": FilterCase(
        pod(affinity=[term({}, "zone")]),
        TWO_ZONES,
        [pod("p", node="n2", namespace="elsewhere")],
        want_filter=[OK, OK],
    ),
    "without namespaces or a namespaceSelector a term covers only its pod's own namespace": (
        FilterCase(
            pod(namespace="ns1", anti_affinity=[term(in_("app", "a"), "zone")]),
            TWO_ZONES,
            [
                pod("p1", node="n1", namespace="ns1", labels={"app": "a"}),
                pod("p2", node="n2", namespace="ns2", labels={"app": "a"}),
            ],
            want_filter=[ERR_ANTI, OK],
        )
    ),
    "namespaceSelector {} covers every namespace, listed or not": FilterCase(
        pod(namespace="ns1", anti_affinity=[term(in_("app", "a"), "zone", namespace_selector={})]),
        TWO_ZONES,
        [
            pod("p1", node="n1", namespace="ns1", labels={"app": "a"}),
            pod("p2", node="n2", namespace="unlisted", labels={"app": "a"}),
        ],
        want_filter=[ERR_ANTI, ERR_ANTI],
    ),
    "namespaces and a namespaceSelector are ORed": FilterCase(
        pod(
            namespace="ns1",
            anti_affinity=[
                term(
                    in_("app", "a"),
                    "zone",
                    namespaces=["other"],
                    namespace_selector=in_("team", "team2"),
                )
            ],
        ),
        TWO_ZONES,
        [
            pod("p1", node="n1", namespace="other", labels={"app": "a"}),
            pod("p2", node="n2", namespace="subteam1.team2", labels={"app": "a"}),
        ],
        want_filter=[ERR_ANTI, ERR_ANTI],
    ),
    "a namespace that is not listed has no labels (NotIn matches it)": FilterCase(
        pod(
            namespace="subteam1.team1",
            anti_affinity=[
                term(in_("app", "a"), "zone", namespace_selector=not_in("team", "team1"))
            ],
        ),
        TWO_ZONES,
        [
            pod("p1", node="n1", namespace="unlisted", labels={"app": "a"}),
            pod("p2", node="n2", namespace="subteam2.team1", labels={"app": "a"}),
        ],
        want_filter=[ERR_ANTI, OK],
    ),
    "an existing pod's namespaceSelector is matched against the incoming pod's namespace labels": (
        FilterCase(
            pod(namespace="subteam1.team2", labels={"app": "a"}),
            TWO_ZONES,
            [
                pod(
                    "p1",
                    node="n1",
                    namespace="x",
                    anti_affinity=[
                        term(in_("app", "a"), "zone", namespace_selector=in_("team", "team2"))
                    ],
                ),
                pod(
                    "p2",
                    node="n2",
                    namespace="x",
                    anti_affinity=[
                        term(in_("app", "a"), "zone", namespace_selector=in_("team", "team1"))
                    ],
                ),
            ],
            want_filter=[ERR_EXISTING, OK],
        )
    ),
    "a node missing the affinity term's topology key is unresolvable": FilterCase(
        pod(affinity=[term(in_("app", "a"), "zone")]),
        [node("n1", zone="z1"), node("n2", region="r1")],
        [pod("p", node="n1", labels={"app": "a"})],
        want_filter=[OK, ERR_AFFINITY],
    ),
    "a node missing the anti-affinity term's topology key passes": FilterCase(
        pod(anti_affinity=[term(in_("app", "a"), "zone")]),
        [node("n1", zone="z1"), node("n2", region="r1")],
        [pod("p", node="n1", labels={"app": "a"}), pod("q", node="n2", labels={"app": "a"})],
        want_filter=[ERR_ANTI, OK],
    ),
    "the self-match exception does not apply once any pod matches all the terms": FilterCase(
        pod(labels={"app": "a"}, affinity=[term(in_("app", "a"), "zone")]),
        [node("n1", zone="z1"), node("n2", zone="z2")],
        [pod("p", node="n1", labels={"app": "a"})],
        want_filter=[OK, ERR_AFFINITY],
    ),
    "the affinity check comes first: unresolvable wins over anti-affinity": FilterCase(
        pod(
            affinity=[term(in_("app", "b"), "zone")],
            anti_affinity=[term(in_("app", "a"), "zone")],
        ),
        TWO_ZONES,
        [pod("p", node="n1", labels={"app": "a"}), pod("q", node="n2", labels={"app": "b"})],
        want_filter=[ERR_AFFINITY, OK],
    ),
}


@pytest.mark.parametrize("case", SEMANTICS_CASES.values(), ids=SEMANTICS_CASES.keys())
def test_affinity_term_semantics(case: FilterCase) -> None:
    check_filter(case)


# ---------------------------------------------------------------------------------------------
# TestPreFilterStateAddRemovePod

LABEL1 = {"region": "r1", "zone": "z11"}
LABEL2 = {"region": "r1", "zone": "z12"}
LABEL3 = {"region": "r2", "zone": "z21"}
SELECTOR1 = {"foo": "bar"}
ANTI_FOO_BAR = [term(in_("foo", "bar"), "region")]
COMPLEX = [
    term(in_("foo", "bar", "buzz"), "region"),
    term(not_in("service", "bar", "security", "test"), "zone"),
]
ADD_REMOVE_NODES = [node("nodeA", **LABEL1), node("nodeB", **LABEL2), node("nodeC", **LABEL3)]


@dataclass
class AddRemoveCase:
    pending: Pod
    existing: Sequence[Pod]
    added: Pod
    expected_anti_affinity: dict[tuple[str, str], int] = field(default_factory=dict)
    expected_affinity: dict[tuple[str, str], int] = field(default_factory=dict)


ADD_REMOVE_CASES = {
    "preFilterState anti-affinity terms are updated correctly after adding and removing a pod": (
        AddRemoveCase(
            pod("pending", labels=SELECTOR1, anti_affinity=ANTI_FOO_BAR),
            [
                pod("p1", labels=SELECTOR1, node="nodeA"),
                pod("p2", node="nodeC", anti_affinity=ANTI_FOO_BAR),
            ],
            pod("addedPod", labels=SELECTOR1, node="nodeB", anti_affinity=ANTI_FOO_BAR),
            expected_anti_affinity={("region", "r1"): 2},
        )
    ),
    "preFilterState anti-affinity terms are updated correctly after adding and removing a pod "
    "(complex terms)": AddRemoveCase(
        pod("pending", labels=SELECTOR1, anti_affinity=COMPLEX),
        [
            pod("p1", labels=SELECTOR1, node="nodeA"),
            pod("p2", node="nodeC", anti_affinity=ANTI_FOO_BAR),
        ],
        pod("addedPod", labels=SELECTOR1, node="nodeA", anti_affinity=COMPLEX),
        expected_anti_affinity={("region", "r1"): 2, ("zone", "z11"): 2, ("zone", "z21"): 1},
    ),
    "preFilterState matching pod affinity and anti-affinity are updated correctly after adding "
    "and removing a pod": AddRemoveCase(
        pod("pending", labels=SELECTOR1, affinity=COMPLEX),
        [
            pod("p1", labels=SELECTOR1, node="nodeA"),
            pod("p2", node="nodeC", affinity=COMPLEX, anti_affinity=ANTI_FOO_BAR),
        ],
        pod("addedPod", labels=SELECTOR1, node="nodeA", anti_affinity=COMPLEX),
        expected_affinity={("region", "r1"): 2, ("zone", "z11"): 2},
    ),
}


def _pre_filter_state(
    pending: Pod, pods: Sequence[Pod]
) -> tuple[InterPodAffinity, CycleState, Snapshot]:
    pl, snapshot = plugin(ADD_REMOVE_NODES, pods)
    state = CycleState()
    _, status = pl.pre_filter(state, pending, snapshot.list())
    assert status.is_success
    return pl, state, snapshot


def _counts(state: CycleState) -> tuple[dict[Any, int], dict[Any, int], dict[Any, int]]:
    s = state.read(PRE_FILTER_STATE_KEY)
    return (
        dict(s.existing_anti_affinity_counts),
        dict(s.affinity_counts),
        dict(s.anti_affinity_counts),
    )


@pytest.mark.parametrize("case", ADD_REMOVE_CASES.values(), ids=ADD_REMOVE_CASES.keys())
def test_pre_filter_state_add_remove_pod(case: AddRemoveCase) -> None:
    _, all_pods_state, _ = _pre_filter_state(case.pending, [*case.existing, case.added])
    pl, state, snapshot = _pre_filter_state(case.pending, case.existing)
    original = state.clone()
    info = snapshot.get(case.added.spec.node_name)
    assert info is not None

    assert pl.add_pod(state, case.pending, case.added, info) == SUCCESS
    s = state.read(PRE_FILTER_STATE_KEY)
    assert s.anti_affinity_counts == case.expected_anti_affinity
    assert s.affinity_counts == case.expected_affinity
    assert _counts(state) == _counts(all_pods_state)

    assert pl.remove_pod(state, case.pending, case.added, info) == SUCCESS
    assert _counts(state) == _counts(original)


def test_pre_filter_state_clone_copies_the_counts() -> None:
    # TestPreFilterStateClone: a clone is equal to, and independent of, its source.
    pl, state, snapshot = _pre_filter_state(
        pod("pending", labels=SELECTOR1, anti_affinity=ANTI_FOO_BAR),
        [pod("p1", labels=SELECTOR1, node="nodeA")],
    )
    clone = state.clone()
    assert _counts(clone) == _counts(state)
    info = snapshot.get("nodeB")
    assert info is not None
    pl.add_pod(clone, pod("pending"), pod("x", labels=SELECTOR1, node="nodeB"), info)
    assert _counts(clone) != _counts(state)
    assert state.read(PRE_FILTER_STATE_KEY).anti_affinity_counts == {("region", "r1"): 1}


def test_removing_the_only_matching_pod_reopens_the_first_pod_exception() -> None:
    # Preemption's what-if: once the counts are empty again, the self-matching pod fits.
    incoming = pod("new", labels={"app": "a"}, affinity=[term(in_("app", "a"), "zone")])
    victim = pod("v", labels={"app": "a"}, node="n1")
    pl, snapshot = plugin(TWO_ZONES, [victim])
    state = CycleState()
    pl.pre_filter(state, incoming, snapshot.list())
    n1, n2 = snapshot.list()
    assert pl.filter(state, incoming, n2) == ERR_AFFINITY
    assert pl.remove_pod(state, incoming, victim, n1) == SUCCESS
    assert state.read(PRE_FILTER_STATE_KEY).affinity_counts == {}
    assert pl.filter(state, incoming, n2) == SUCCESS


def test_add_pod_without_pre_filter_is_an_error() -> None:
    pl, snapshot = plugin([node("n")])
    status = pl.add_pod(CycleState(), pod(), pod("x"), snapshot.list()[0])
    assert status.code is Code.Error
    assert status.message == 'error reading "PreFilterInterPodAffinity" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# TestGetTPMapMatchingIncomingAffinityAntiAffinity

NODE_A_HOST = node("nodeA", hostname="nodeA")


def _normal(*label_keys: str) -> Pod:
    return pod("normal", node="nodeA", labels=dict.fromkeys(label_keys, ""))


INCOMING_COUNT_CASES = {
    "nil test": (pod("aaa-normal"), [], {}, {}),
    "incoming pod without affinity/anti-affinity causes a no-op": (
        pod("aaa-normal"),
        [_normal("aaa")],
        {},
        {},
    ),
    "no pod has label that violates incoming pod's affinity and anti-affinity": (
        pod(
            "aaa-anti",
            affinity=[term(exists("aaa"), "hostname")],
            anti_affinity=[term(exists("aaa"), "hostname")],
        ),
        [_normal("bbb")],
        {},
        {},
    ),
    "existing pod matches incoming pod's affinity and anti-affinity - single term case": (
        pod(
            "affi-antiaffi",
            affinity=[term(exists("aaa"), "hostname")],
            anti_affinity=[term(exists("aaa"), "hostname")],
        ),
        [_normal("aaa")],
        {("hostname", "nodeA"): 1},
        {("hostname", "nodeA"): 1},
    ),
    "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case": (
        pod(
            "affi-antiaffi",
            affinity=[term(exists("aaa"), "hostname"), term(exists("bbb"), "hostname")],
            anti_affinity=[term(exists("aaa"), "hostname")],
        ),
        [_normal("aaa", "bbb")],
        {("hostname", "nodeA"): 2},  # one for each term
        {("hostname", "nodeA"): 1},
    ),
    "existing pod not match incoming pod's affinity but matches anti-affinity": (
        pod(
            "affi-antiaffi",
            affinity=[term(exists("aaa"), "hostname"), term(exists("bbb"), "hostname")],
            anti_affinity=[term(exists("aaa"), "hostname"), term(exists("bbb"), "hostname")],
        ),
        [_normal("aaa")],
        {},
        {("hostname", "nodeA"): 1},
    ),
    "incoming pod's anti-affinity has more than one term - existing pod violates partial term - "
    "case 1": (
        pod(
            "anaffi-antiaffiti",
            affinity=[term(exists("aaa"), "hostname"), term(exists("ccc"), "hostname")],
            anti_affinity=[term(exists("aaa"), "hostname"), term(exists("ccc"), "hostname")],
        ),
        [_normal("aaa", "bbb")],
        {},
        {("hostname", "nodeA"): 1},
    ),
}


@pytest.mark.parametrize(
    ("incoming", "existing", "want_affinity", "want_anti"),
    INCOMING_COUNT_CASES.values(),
    ids=INCOMING_COUNT_CASES.keys(),
)
def test_incoming_affinity_anti_affinity_counts(
    incoming: Pod,
    existing: Sequence[Pod],
    want_affinity: dict[tuple[str, str], int],
    want_anti: dict[tuple[str, str], int],
) -> None:
    pl, snapshot = plugin([NODE_A_HOST], existing)
    terms = pl.terms_cache.get(incoming)
    affinity, anti = pl.incoming_affinity_anti_affinity_counts(
        terms, pl.namespace_labels(), snapshot.list()
    )
    assert affinity == want_affinity
    assert anti == want_anti


# ---------------------------------------------------------------------------------------------
# TestPreferredAffinity (scoring_test.go)

S1 = {"security": "S1"}
S2 = {"security": "S2"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}

STAY_WITH_S1_IN_REGION: list[Weighted] = [(5, term(in_("security", "S1"), "region"))]
STAY_WITH_S2_IN_REGION: list[Weighted] = [(6, term(in_("security", "S2"), "region"))]
AFFINITY3: list[Weighted] = [
    (8, term(sel(expr("security", "NotIn", "S1"), expr("security", "In", "S2")), "region")),
    (2, term(sel(expr("security", "Exists"), expr("wrongkey", "DoesNotExist")), "region")),
]
HARD_AFFINITY = [
    term(in_("security", "S1", "value2"), "region"),
    term(sel(expr("security", "Exists"), expr("wrongkey", "DoesNotExist")), "region"),
]
AWAY_FROM_S1_IN_AZ: list[Weighted] = [(5, term(in_("security", "S1"), "az"))]
AWAY_FROM_S2_IN_AZ: list[Weighted] = [(5, term(in_("security", "S2"), "az"))]
STAY_S1_AWAY_S2_AFFINITY: list[Weighted] = [(8, term(in_("security", "S1"), "region"))]
STAY_S1_AWAY_S2_ANTI: list[Weighted] = [(5, term(in_("security", "S2"), "az"))]
NS_SELECTOR_TERM = term(
    in_("security", "S1"),
    "region",
    namespaces=["subteam2.team2"],
    namespace_selector=in_("team", "team1"),
)


def stay_s1_away_s2(**kw: Any) -> Pod:
    return pod(
        preferred_affinity=STAY_S1_AWAY_S2_AFFINITY,
        preferred_anti_affinity=STAY_S1_AWAY_S2_ANTI,
        **kw,
    )


@dataclass
class ScoreCase:
    pod: Pod
    nodes: Sequence[Node]
    pods: Sequence[Pod] = ()
    want: Sequence[int] = ()
    want_status: Status = OK
    args: dict[str, Any] | None = None


def run_score(case: ScoreCase) -> tuple[Status, list[NodeScore]]:
    pl, snapshot = plugin(case.nodes, case.pods, NAMESPACES, case.args)
    state = CycleState()
    status = pl.pre_score(state, case.pod, snapshot.list())
    if not status.is_success:
        return status, []
    scores = []
    for info in snapshot.list():
        score, s = pl.score(state, case.pod, info)
        assert s == SUCCESS
        scores.append(NodeScore(info.name, score))
    ext = pl.score_extensions()
    assert ext is not None
    assert ext.normalize_score(state, case.pod, scores) == SUCCESS
    return status, scores


def check_score(case: ScoreCase) -> None:
    status, scores = run_score(case)
    assert status == case.want_status
    if status.is_success:
        assert [(s.name, s.score) for s in scores] == [
            (n.metadata.name, w) for n, w in zip(case.nodes, case.want, strict=True)
        ]


M = MAX_NODE_SCORE
CHINA_INDIA_AZ1 = [node("node1", **RG_CHINA), node("node2", **RG_INDIA), node("node3", **AZ1)]

PREFERRED_CASES = {
    "all nodes are same priority as Affinity is nil": ScoreCase(
        pod(labels=S1), CHINA_INDIA_AZ1, want_status=SKIP
    ),
    "Affinity: pod that matches topology key & pods in nodes will get high score comparing to "
    "others which doesn't match either pods in nodes or in topology key": ScoreCase(
        pod(labels=S1, preferred_affinity=STAY_WITH_S1_IN_REGION),
        CHINA_INDIA_AZ1,
        [
            pod("a", node="node1", labels=S1),
            pod("b", node="node2", labels=S2),
            pod("c", node="node3", labels=S1),
        ],
        [M, 0, 0],
    ),
    "All the nodes that have the same topology key & label value with one of them has an "
    "existing pod that match the affinity rules, have the same score": ScoreCase(
        pod(preferred_affinity=STAY_WITH_S1_IN_REGION),
        [node("node1", **RG_CHINA), node("node2", **RG_CHINA_AZ1), node("node3", **RG_INDIA)],
        [pod("a", node="node1", labels=S1)],
        [M, M, 0],
    ),
    "Affinity: nodes in one region has more matching pods comparing to other region, so the "
    "region which has more matches will get high score": ScoreCase(
        pod(labels=S1, preferred_affinity=STAY_WITH_S2_IN_REGION),
        [
            node("node1", **RG_CHINA),
            node("node2", **RG_INDIA),
            node("node3", **RG_CHINA),
            node("node4", **RG_CHINA),
            node("node5", **RG_INDIA),
        ],
        [
            pod("a", node="node1", labels=S2),
            pod("b", node="node1", labels=S2),
            pod("c", node="node2", labels=S2),
            pod("d", node="node3", labels=S2),
            pod("e", node="node4", labels=S2),
            pod("f", node="node5", labels=S2),
        ],
        [M, 0, M, M, 0],
    ),
    "Affinity: different Label operators and values for pod affinity scheduling preference, "
    "including some match failures": ScoreCase(
        pod(labels=S1, preferred_affinity=AFFINITY3),
        CHINA_INDIA_AZ1,
        [
            pod("a", node="node1", labels=S1),
            pod("b", node="node2", labels=S2),
            pod("c", node="node3", labels=S1),
        ],
        [20, M, 0],
    ),
    "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution in "
    "pod affinity symmetry": ScoreCase(
        pod(labels=S2),
        CHINA_INDIA_AZ1,
        [
            pod("a", node="node1", labels=S1, preferred_affinity=STAY_WITH_S1_IN_REGION),
            pod("b", node="node2", labels=S2, preferred_affinity=STAY_WITH_S2_IN_REGION),
        ],
        [0, M, 0],
    ),
    "Affinity symmetry with namespace selector": ScoreCase(
        pod(namespace="subteam1.team1", labels=S1),
        CHINA_INDIA_AZ1,
        [
            pod("a", node="node1", labels=S1, preferred_affinity=[(5, NS_SELECTOR_TERM)]),
            pod("b", node="node2", labels=S2, preferred_affinity=STAY_WITH_S2_IN_REGION),
        ],
        [M, 0, 0],
    ),
    "AntiAffinity symmetry with namespace selector": ScoreCase(
        pod(namespace="subteam1.team1", labels=S1),
        CHINA_INDIA_AZ1,
        [
            pod("a", node="node1", labels=S1, preferred_anti_affinity=[(5, NS_SELECTOR_TERM)]),
            pod("b", node="node2", labels=S2, preferred_affinity=STAY_WITH_S2_IN_REGION),
        ],
        [0, M, M],
    ),
    "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution in pod "
    "affinity symmetry": ScoreCase(
        pod(labels=S1),
        CHINA_INDIA_AZ1,
        [
            pod("a", node="node1", labels=S1, affinity=HARD_AFFINITY),
            pod("b", node="node2", labels=S2, affinity=HARD_AFFINITY),
        ],
        [M, M, 0],
    ),
    "Anti Affinity: pod that does not match existing pods in node will get high score": ScoreCase(
        pod(labels=S1, preferred_anti_affinity=AWAY_FROM_S1_IN_AZ),
        [node("node1", **AZ1), node("node2", **RG_CHINA)],
        [pod("a", node="node1", labels=S1), pod("b", node="node2", labels=S2)],
        [0, M],
    ),
    "Anti Affinity: pod that does not match topology key & match the pods in nodes will get "
    "higher score comparing to others": ScoreCase(
        pod(labels=S1, preferred_anti_affinity=AWAY_FROM_S1_IN_AZ),
        [node("node1", **AZ1), node("node2", **RG_CHINA)],
        [pod("a", node="node1", labels=S1), pod("b", node="node2", labels=S1)],
        [0, M],
    ),
    "Anti Affinity: one node has more matching pods comparing to other node, so the node which "
    "has more unmatches will get high score": ScoreCase(
        pod(labels=S1, preferred_anti_affinity=AWAY_FROM_S1_IN_AZ),
        [node("node1", **AZ1), node("node2", **RG_INDIA)],
        [
            pod("a", node="node1", labels=S1),
            pod("b", node="node1", labels=S1),
            pod("c", node="node2", labels=S2),
        ],
        [0, M],
    ),
    "Anti Affinity symmetry: the existing pods in node which has anti affinity match will get "
    "high score": ScoreCase(
        pod(labels=S2),
        [node("node1", **AZ1), node("node2", **AZ2)],
        [
            pod("a", node="node1", labels=S1, preferred_anti_affinity=AWAY_FROM_S2_IN_AZ),
            pod("b", node="node2", labels=S2, preferred_anti_affinity=AWAY_FROM_S1_IN_AZ),
        ],
        [0, M],
    ),
    "Affinity and Anti Affinity: considered only preferredDuringSchedulingIgnoredDuringExecution "
    "in both pod affinity & anti affinity": ScoreCase(
        stay_s1_away_s2(labels=S1),
        [node("node1", **RG_CHINA), node("node2", **AZ1)],
        [pod("a", node="node1", labels=S1), pod("b", node="node2", labels=S1)],
        [M, 0],
    ),
    "Affinity and Anti Affinity: considering both affinity and anti-affinity, the pod to "
    "schedule and existing pods have the same labels": ScoreCase(
        stay_s1_away_s2(labels=S1),
        [
            node("node1", **RG_CHINA_AZ1),
            node("node2", **RG_INDIA),
            node("node3", **RG_CHINA),
            node("node4", **RG_CHINA),
            node("node5", **RG_INDIA),
        ],
        [
            pod("a", node="node1", labels=S1),
            pod("b", node="node1", labels=S1),
            pod("c", node="node2", labels=S1),
            pod("d", node="node3", labels=S1),
            pod("e", node="node3", labels=S1),
            pod("f", node="node4", labels=S1),
            pod("g", node="node5", labels=S1),
        ],
        [M, 0, M, M, 0],
    ),
    "Affinity and Anti Affinity and symmetry: considered only "
    "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity & "
    "symmetry": ScoreCase(
        stay_s1_away_s2(labels=S1),
        [
            node("node1", **RG_CHINA),
            node("node2", **AZ1),
            node("node3", **RG_INDIA),
            node("node4", **AZ2),
        ],
        [
            pod("a", node="node1", labels=S1),
            pod("b", node="node2", labels=S2),
            stay_s1_away_s2(name="c", node="node3"),
            pod("d", node="node4", preferred_anti_affinity=AWAY_FROM_S1_IN_AZ),
        ],
        [M, 0, M, 0],
    ),
    "Avoid panic when partial nodes in a topology don't have pods with affinity": ScoreCase(
        pod(labels=S1),
        [node("node1", **RG_CHINA), node("node2", **RG_CHINA)],
        [pod("a", node="node1", labels=S1), stay_s1_away_s2(name="b", node="node2")],
        [0, 0],
    ),
    "Affinity with pods matching NamespaceSelector": ScoreCase(
        pod(namespace="subteam1.team1", labels=S1, preferred_affinity=[(5, NS_SELECTOR_TERM)]),
        [node("node1", **RG_CHINA), node("node2", **RG_INDIA)],
        [
            pod("a", node="node1", namespace="subteam1.team1", labels=S1),
            pod("b", node="node1", namespace="subteam1.team1", labels=S1),
            pod("c", node="node1", namespace="subteam1.team2", labels=S1),
            pod("d", node="node2", namespace="subteam2.team1", labels=S1),
        ],
        [M, 0],
    ),
    "Affinity with pods matching both NamespaceSelector and Namespaces fields": ScoreCase(
        pod(namespace="subteam1.team1", labels=S1, preferred_affinity=[(5, NS_SELECTOR_TERM)]),
        [node("node1", **RG_CHINA), node("node2", **RG_INDIA)],
        [
            pod("a", node="node1", namespace="subteam1.team1", labels=S1),
            pod("b", node="node1", namespace="subteam1.team1", labels=S1),
            pod("c", node="node1", namespace="subteam2.team2", labels=S1),
            pod("d", node="node2", namespace="subteam2.team1", labels=S1),
        ],
        [M, 0],
    ),
    "Anti-affinity with pods matching NamespaceSelector": ScoreCase(
        pod(namespace="subteam1.team1", labels=S1, preferred_anti_affinity=[(5, NS_SELECTOR_TERM)]),
        [node("node1", **RG_CHINA), node("node2", **RG_INDIA)],
        [
            pod("a", node="node1", namespace="subteam1.team1", labels=S1),
            pod("b", node="node1", namespace="subteam1.team1", labels=S1),
            pod("c", node="node1", namespace="subteam1.team2", labels=S1),
            pod("d", node="node2", namespace="subteam2.team1", labels=S1),
        ],
        [0, M],
    ),
    "Ignore preferred terms of existing pods": ScoreCase(
        pod(labels=S2),
        [node("node1", **RG_CHINA), node("node2", **RG_INDIA)],
        [
            stay_s1_away_s2(name="a", node="node1", labels=S1),
            pod("b", node="node2", labels=S2, preferred_affinity=STAY_WITH_S2_IN_REGION),
        ],
        want_status=SKIP,
        args={"ignorePreferredTermsOfExistingPods": True},
    ),
    "Do not ignore preferred terms of existing pods": ScoreCase(
        pod(labels=S2),
        [node("node1", **RG_CHINA), node("node2", **RG_INDIA)],
        [
            stay_s1_away_s2(name="a", node="node1", labels=S1),
            pod("b", node="node2", labels=S2, preferred_affinity=STAY_WITH_S2_IN_REGION),
        ],
        [0, M],
        args={"ignorePreferredTermsOfExistingPods": False},
    ),
    "No nodes to score": ScoreCase(pod(labels=S2), [], want_status=SKIP),
    # Added: the weights are summed before normalizing, and ties at the top all score 100.
    "raw scores are the summed weights, scaled between the lowest and the highest": ScoreCase(
        pod(labels=S1, preferred_affinity=[(3, term(in_("app", "x"), "zone"))]),
        [node("n1", zone="z1"), node("n2", zone="z2"), node("n3", zone="z3")],
        [
            pod("a", node="n1", labels={"app": "x"}),
            pod("b", node="n2", labels={"app": "x"}),
            pod("c", node="n2", labels={"app": "x"}),
            pod("d", node="n2", labels={"app": "x"}),
        ],
        [33, M, 0],
    ),
    "a terminating pod still attracts the incoming pod (added)": ScoreCase(
        pod(preferred_affinity=[(1, term(in_("app", "x"), "zone"))]),
        [node("n1", zone="z1"), node("n2", zone="z2")],
        [pod("a", node="n1", labels={"app": "x"}, terminating=True)],
        [M, 0],
    ),
}


@pytest.mark.parametrize("case", PREFERRED_CASES.values(), ids=PREFERRED_CASES.keys())
def test_preferred_affinity(case: ScoreCase) -> None:
    check_score(case)


@pytest.mark.parametrize(
    "affinity",
    [
        {"preferred_affinity": [(8, term(in_("security", "{{.bad-value.}}"), "region"))]},
        {"preferred_anti_affinity": [(5, term(in_("security", "{{.bad-value.}}"), "az"))]},
    ],
    ids=["invalid Affinity fails PreScore", "invalid AntiAffinity fails PreScore"],
)
def test_invalid_preferred_terms_fail_pre_score(affinity: dict[str, Any]) -> None:
    status, _ = run_score(
        ScoreCase(pod(**affinity), [node("node1", **RG_CHINA), node("node2", **RG_CHINA)])
    )
    assert status.code is Code.Error
    assert status.message.startswith("failed to parse pod: preferred")
    assert 'Invalid value: "{{.bad-value.}}"' in status.message


# TestPreferredAffinityWithHardPodAffinitySymmetricWeight

HARD_POD_AFFINITY = [
    term(
        in_("service", "S1"),
        "region",
        namespaces=["", "subteam2.team2"],
        namespace_selector=in_("team", "team1"),
    )
]
HARD_PODS = [
    pod("a", node="node1", affinity=HARD_POD_AFFINITY),
    pod("b", node="node2", affinity=HARD_POD_AFFINITY),
]
SERVICE_S1 = {"service": "S1"}

HARD_WEIGHT_CASES = {
    "with default weight": ScoreCase(pod(labels=SERVICE_S1), CHINA_INDIA_AZ1, HARD_PODS, [M, M, 0]),
    "with zero weight": ScoreCase(
        pod(labels=SERVICE_S1),
        CHINA_INDIA_AZ1,
        HARD_PODS,
        want_status=SKIP,
        args={"hardPodAffinityWeight": 0},
    ),
    "with no matching namespace": ScoreCase(
        pod(namespace="subteam1.team2", labels=SERVICE_S1),
        CHINA_INDIA_AZ1,
        HARD_PODS,
        want_status=SKIP,
    ),
    "with matching NamespaceSelector": ScoreCase(
        pod(namespace="subteam1.team1", labels=SERVICE_S1), CHINA_INDIA_AZ1, HARD_PODS, [M, M, 0]
    ),
    "with matching Namespaces": ScoreCase(
        pod(namespace="subteam2.team2", labels=SERVICE_S1), CHINA_INDIA_AZ1, HARD_PODS, [M, M, 0]
    ),
}


@pytest.mark.parametrize("case", HARD_WEIGHT_CASES.values(), ids=HARD_WEIGHT_CASES.keys())
def test_preferred_affinity_with_hard_pod_affinity_symmetric_weight(case: ScoreCase) -> None:
    check_score(case)


def test_hard_pod_affinity_weight_multiplies_the_symmetric_contribution() -> None:
    # Added: the raw score is the weight itself, before normalization.
    pl, snapshot = plugin(CHINA_INDIA_AZ1, HARD_PODS[:1], NAMESPACES, {"hardPodAffinityWeight": 7})
    state = CycleState()
    assert pl.pre_score(state, pod(labels=SERVICE_S1), snapshot.list()) == SUCCESS
    raw = [pl.score(state, pod(labels=SERVICE_S1), info)[0] for info in snapshot.list()]
    assert raw == [7, 0, 0]


def test_score_without_pre_score_is_an_error() -> None:
    pl, snapshot = plugin([node("n")])
    score, status = pl.score(CycleState(), pod(), snapshot.list()[0])
    assert (score, status.code) == (0, Code.Error)
    assert status.message == 'failed to read "PreScoreInterPodAffinity" from cycleState: not found'


# ---------------------------------------------------------------------------------------------
# InterPodAffinityArgs (validation_pluginargs_test.go, defaults_test.go)


def test_args_default_the_hard_pod_affinity_weight_to_one() -> None:
    assert set_defaults_inter_pod_affinity_args(InterPodAffinityArgs()) == InterPodAffinityArgs(
        hard_pod_affinity_weight=1
    )
    assert decode_inter_pod_affinity_args(None).weight == 1
    explicit_zero = set_defaults_inter_pod_affinity_args(
        decode_inter_pod_affinity_args({"hardPodAffinityWeight": 0})
    )
    assert explicit_zero.hard_pod_affinity_weight == 0


def test_args_decode_camel_case_and_ignore_type_meta() -> None:
    args = decode_inter_pod_affinity_args(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "InterPodAffinityArgs",
            "hardPodAffinityWeight": 5,
            "ignorePreferredTermsOfExistingPods": True,
        }
    )
    assert args == InterPodAffinityArgs(
        hard_pod_affinity_weight=5, ignore_preferred_terms_of_existing_pods=True
    )


@pytest.mark.parametrize(
    ("weight", "path", "want"),
    [
        (0, "", []),
        (100, "", []),
        (
            -1,
            "",
            ["hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"],
        ),
        (
            101,
            "profiles[0].pluginConfig[0].args",
            [
                "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: "
                "not in valid range [0, 100]"
            ],
        ),
    ],
    ids=["zero is valid", "100 is valid", "hardPodAffinityWeight less than min", "more than max"],
)
def test_args_validation(weight: int, path: str, want: list[str]) -> None:
    args = InterPodAffinityArgs(hard_pod_affinity_weight=weight)
    assert validate_inter_pod_affinity_args(args, path) == want


def test_new_rejects_invalid_args_with_the_schedulers_message() -> None:
    snapshot = Snapshot([])
    with pytest.raises(ConfigError) as err:
        interpodaffinity.new(
            {"hardPodAffinityWeight": 101}, SnapshotHandle(snapshot), DEFAULT_FEATURES
        )
    assert (
        str(err.value) == "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
    )
    with pytest.raises(ConfigError, match="decoding InterPodAffinityArgs"):
        interpodaffinity.new(
            {"hardPodAffinityWeight": "x"}, SnapshotHandle(snapshot), DEFAULT_FEATURES
        )


# ---------------------------------------------------------------------------------------------
# matchLabelKeys / mismatchLabelKeys: merged by the API server (strategy.go), not the scheduler


def _selector_of(p: Pod, kind: str = "podAffinity", i: int = 0) -> dict[str, Any]:
    spec = msgspec.to_builtins(p.spec)
    terms = spec["affinity"][kind]["requiredDuringSchedulingIgnoredDuringExecution"]
    selector: dict[str, Any] = terms[i].get("labelSelector")
    return selector


def test_match_label_keys_are_merged_as_in_and_mismatch_label_keys_as_not_in() -> None:
    p = pod(
        labels={"app": "web", "tenant": "t1", "tier": "fe"},
        affinity=[
            term(
                in_("tier", "fe"),
                "zone",
                match_label_keys=["app", "missing"],
                mismatch_label_keys=["tenant"],
            )
        ],
        anti_affinity=[term({"matchLabels": {"x": "y"}}, "zone", match_label_keys=["tenant"])],
    )
    merged = apply_affinity_match_label_keys(p)
    assert _selector_of(merged) == {
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["fe"]},
            {"key": "app", "operator": "In", "values": ["web"]},
            {"key": "tenant", "operator": "NotIn", "values": ["t1"]},
        ]
    }
    assert _selector_of(merged, "podAntiAffinity") == {
        "matchLabels": {"x": "y"},
        "matchExpressions": [{"key": "tenant", "operator": "In", "values": ["t1"]}],
    }
    # The key lists themselves are kept, as the API server keeps them.
    assert merged.spec.affinity is not None
    assert merged.spec.affinity.pod_affinity is not None
    kept = merged.spec.affinity.pod_affinity.required_during_scheduling_ignored_during_execution
    assert kept[0].match_label_keys == ["app", "missing"]
    # A pod read back from a cluster is already merged and stays as it is.
    assert apply_affinity_match_label_keys(merged) is merged


def test_match_label_keys_leave_a_nil_selector_and_plain_pods_alone() -> None:
    nil_selector = pod(labels={"app": "a"}, affinity=[term(None, "zone", match_label_keys=["app"])])
    assert apply_affinity_match_label_keys(nil_selector) is nil_selector
    plain = pod(labels={"app": "a"}, affinity=[term(in_("app", "a"), "zone")])
    assert apply_affinity_match_label_keys(plain) is plain
    assert apply_affinity_match_label_keys(pod()) == pod()


def test_match_label_keys_cover_preferred_terms() -> None:
    p = pod(
        labels={"rev": "2"},
        preferred_anti_affinity=[(10, term({}, "zone", match_label_keys=["rev"]))],
    )
    merged = apply_affinity_match_label_keys(p)
    assert merged.spec.affinity is not None
    assert merged.spec.affinity.pod_anti_affinity is not None
    weighted = (
        merged.spec.affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
    )
    selector = weighted[0].pod_affinity_term.label_selector
    assert selector is not None
    assert [(e.key, e.operator, e.values) for e in selector.match_expressions] == [
        ("rev", "In", ["2"])
    ]


def test_the_scheduler_ignores_unmerged_match_label_keys() -> None:
    # A rolling update: the old revision repels the new one only while the keys are unmerged.
    incoming = pod(
        labels={"app": "web", "rev": "2"},
        anti_affinity=[term(in_("app", "web"), "zone", match_label_keys=["rev"])],
    )
    old = pod("old", node="n1", labels={"app": "web", "rev": "1"})
    assert run_filter(FilterCase(incoming, TWO_ZONES, [old])) == (SUCCESS, [ERR_ANTI, OK])
    merged = apply_affinity_match_label_keys(incoming)
    assert run_filter(FilterCase(merged, TWO_ZONES, [old])) == (SUCCESS, [OK, OK])


# ---------------------------------------------------------------------------------------------
# Invariants on random clusters (hypothesis): Filter against a from-scratch oracle, and
# AddPod/RemovePod against a fresh PreFilter.


KEYS = ["zone", "region", "hostname"]
SELECTORS: list[Selector] = [in_("app", "a"), exists("app"), not_in("app", "b"), {}, None]


@st.composite
def random_term(draw: st.DrawFn) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if draw(st.integers(0, 3)) == 0:
        kw["namespace_selector"] = draw(st.sampled_from([{}, in_("team", "t1")]))
    if draw(st.integers(0, 3)) == 0:
        kw["namespaces"] = draw(st.lists(st.sampled_from(["ns1", "ns2"]), max_size=2))
    return term(draw(st.sampled_from(SELECTORS)), draw(st.sampled_from(KEYS)), **kw)


@st.composite
def random_pod(draw: st.DrawFn, name: str, nodes: Sequence[Node] = ()) -> Pod:
    terms = st.lists(random_term(), max_size=2)
    return pod(
        name,
        namespace=draw(st.sampled_from(["ns1", "ns2", "ns3"])),
        labels=draw(st.sampled_from([{"app": "a"}, {"app": "b"}, {}])),
        node=draw(st.sampled_from([n.metadata.name for n in nodes])) if nodes else "",
        affinity=draw(terms) if draw(st.integers(0, 3)) == 0 else (),
        anti_affinity=draw(terms) if draw(st.integers(0, 2)) == 0 else (),
        terminating=draw(st.integers(0, 5)) == 0,
    )


@st.composite
def random_cluster(draw: st.DrawFn) -> tuple[list[Node], list[Pod], Pod]:
    nodes = []
    for i in range(draw(st.integers(1, 5))):
        labels = {"hostname": f"n{i}"}
        for key, values in (("zone", ["z1", "z2"]), ("region", ["r1", "r2"])):
            value = draw(st.sampled_from([*values, None]))
            if value is not None:
                labels[key] = value
        nodes.append(node(f"n{i}", **labels))
    pods = [draw(random_pod(f"p{i}", nodes)) for i in range(draw(st.integers(0, 8)))]
    return nodes, pods, draw(random_pod("incoming"))


ORACLE_NAMESPACES = (namespace("ns1", team="t1"), namespace("ns2", team="t2"))


def _oracle_matches(t: dict[str, Any], owner: Pod, target: Pod) -> bool:
    """A term of ``owner`` matches ``target``, evaluated straight from the API objects."""
    at = msgspec.convert(t, PodAffinityTerm)
    namespaces = set(at.namespaces)
    if not at.namespaces and at.namespace_selector is None:
        namespaces = {owner.metadata.namespace}
    in_ns = target.metadata.namespace in namespaces
    if not in_ns and at.namespace_selector is not None:
        ns_labels = next(
            (n.metadata.labels for n in ORACLE_NAMESPACES if n.metadata.name == target.namespace),
            {},
        )
        in_ns = label_selector_as_selector(at.namespace_selector).matches(ns_labels)
    return in_ns and label_selector_as_selector(at.label_selector).matches(target.labels)


def _raw_terms(p: Pod, kind: str) -> list[dict[str, Any]]:
    spec = msgspec.to_builtins(p.spec)
    section = spec.get("affinity", {}).get(kind, {})
    terms: list[dict[str, Any]] = section.get("requiredDuringSchedulingIgnoredDuringExecution", [])
    return terms


def oracle_filter(nodes: Sequence[Node], pods: Sequence[Pod], incoming: Pod, n: Node) -> Status:
    where = {x.metadata.name: x.metadata.labels for x in nodes}
    labels = n.metadata.labels
    affinity = _raw_terms(incoming, "podAffinity")
    if affinity:
        if any(t["topologyKey"] not in labels for t in affinity):
            return ERR_AFFINITY
        matching = [p for p in pods if all(_oracle_matches(t, incoming, p) for t in affinity)]
        ok = all(
            any(
                where[p.spec.node_name].get(t["topologyKey"]) == labels[t["topologyKey"]]
                for p in matching
            )
            for t in affinity
        )
        if not ok:
            anywhere = any(
                t["topologyKey"] in where[p.spec.node_name] for p in matching for t in affinity
            )
            if anywhere or not all(_oracle_matches(t, incoming, incoming) for t in affinity):
                return ERR_AFFINITY
    for t in _raw_terms(incoming, "podAntiAffinity"):
        key = t["topologyKey"]
        if key in labels and any(
            where[p.spec.node_name].get(key) == labels[key] and _oracle_matches(t, incoming, p)
            for p in pods
        ):
            return ERR_ANTI
    for p in pods:
        for t in _raw_terms(p, "podAntiAffinity"):
            key = t["topologyKey"]
            if (
                key in labels
                and where[p.spec.node_name].get(key) == labels[key]
                and _oracle_matches(t, p, incoming)
            ):
                return ERR_EXISTING
    return OK


PROPERTY_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY_SETTINGS
@given(random_cluster())
def test_filter_agrees_with_a_from_scratch_oracle(
    cluster: tuple[list[Node], list[Pod], Pod],
) -> None:
    nodes, pods, incoming = cluster
    pre, got = run_filter(FilterCase(incoming, nodes, pods, namespaces=ORACLE_NAMESPACES))
    want = [oracle_filter(nodes, pods, incoming, n) for n in nodes]
    if pre.is_skip:
        assert want == [OK] * len(nodes)
    else:
        assert pre == SUCCESS
        assert got == want


@PROPERTY_SETTINGS
@given(random_cluster(), st.data())
def test_add_then_remove_pod_matches_a_fresh_pre_filter(
    cluster: tuple[list[Node], list[Pod], Pod], data: st.DataObject
) -> None:
    nodes, pods, incoming = cluster
    added = data.draw(random_pod("added", nodes))
    pl, snapshot = plugin(nodes, pods, ORACLE_NAMESPACES)
    state = CycleState()
    _, status = pl.pre_filter(state, incoming, snapshot.list())
    if not status.is_success:
        return
    before = _counts(state)
    info = snapshot.get(added.spec.node_name)
    assert info is not None
    pl.add_pod(state, incoming, added, info)
    full, full_snapshot = plugin(nodes, [*pods, added], ORACLE_NAMESPACES)
    full_state = CycleState()
    full.pre_filter(full_state, incoming, full_snapshot.list())
    assert _counts(state) == _counts(full_state)
    pl.remove_pod(state, incoming, added, info)
    assert _counts(state) == before


def test_the_terms_cache_gives_pods_sharing_their_affinity_objects_one_parse() -> None:
    """PodTermsCache finds pods whose podAffinity/podAntiAffinity are the same objects by
    identity, pods with equal ones by content, and keeps namespaces apart (a term without
    namespaces selects its pod's own)."""
    from topospread.plugins.interpodaffinity.terms import PodTermsCache, parse_pod_affinity_terms

    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
            ]
        }
    }

    def pod(name: str, namespace: str = "default", **affinity: Any) -> Pod:
        return msgspec.convert(
            {
                "metadata": {"name": name, "namespace": namespace},
                "spec": {"affinity": {**anti, **affinity}},
            },
            Pod,
        )

    a = pod("a")
    assert a.spec.affinity is not None
    same_objects = msgspec.structs.replace(
        pod("b"),
        spec=msgspec.structs.replace(
            a.spec, affinity=msgspec.structs.replace(a.spec.affinity, node_affinity=None)
        ),
    )
    equal = pod("c")
    other_namespace = msgspec.structs.replace(
        same_objects, metadata=msgspec.structs.replace(a.metadata, namespace="other")
    )
    cache = PodTermsCache()
    first = cache.get(a)
    assert cache.get(same_objects) is first
    assert cache.get(equal) is first
    elsewhere = cache.get(other_namespace)
    assert elsewhere == parse_pod_affinity_terms(other_namespace) != first
    assert cache.get(other_namespace) is elsewhere


def test_pods_told_alike_are_keyed_by_the_other_pods_affinity_objects() -> None:
    """``same_pod_terms_as`` makes the caches key a pod's terms by another pod's (equal)
    podAffinity and podAntiAffinity objects; an equal Affinity it was not told of keeps its
    own (found by its content)."""
    from topospread.plugins.interpodaffinity.terms import (
        PodTermsCache,
        same_pod_terms_as,
        terms_objects,
    )

    def pod(name: str) -> Pod:
        anti = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
        required = {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}
        return msgspec.convert(
            {
                "metadata": {"name": name, "namespace": "default"},
                "spec": {"affinity": {"podAntiAffinity": required}},
            },
            Pod,
        )

    first, told, untold = pod("a"), pod("b"), pod("c")
    assert first.spec.affinity is not None
    assert told.spec.affinity is not None and untold.spec.affinity is not None
    same_pod_terms_as([(told, first), (first, first)])
    assert terms_objects(told.spec.affinity) == (None, first.spec.affinity.pod_anti_affinity)
    assert terms_objects(told.spec.affinity)[1] is first.spec.affinity.pod_anti_affinity
    assert terms_objects(untold.spec.affinity)[1] is untold.spec.affinity.pod_anti_affinity
    cache = PodTermsCache()
    parsed = cache.get(first)
    assert cache.get(told) is parsed
    assert cache.get(untold) == parsed
