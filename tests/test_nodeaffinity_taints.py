"""Required node affinity and taint toleration, as component-helpers define them."""

from __future__ import annotations

import msgspec
import pytest

from builders import make_node, make_pod
from topospread.api.types import Pod, Taint, Toleration
from topospread.nodeaffinity import get_required_node_affinity
from topospread.taints import (
    do_not_schedule_taints_filter,
    find_matching_untolerated_taint,
    tolerates_taint,
)


def _pod_with_terms(terms: list[dict[str, object]]) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": "p"},
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": terms
                        }
                    }
                }
            },
        },
        Pod,
    )


NODE = make_node("node-a").label("zone", "z1").label("gen", "5").obj()


@pytest.mark.parametrize(
    ("terms", "want"),
    [
        pytest.param(
            [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}],
            True,
            id="In on a label matches",
        ),
        pytest.param(
            [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z2"]}]},
                {"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]},
            ],
            True,
            id="terms are ORed",
        ),
        pytest.param(
            [
                {
                    "matchExpressions": [
                        {"key": "zone", "operator": "In", "values": ["z1"]},
                        {"key": "gen", "operator": "Lt", "values": ["5"]},
                    ]
                }
            ],
            False,
            id="expressions within a term are ANDed",
        ),
        pytest.param([{}], False, id="an empty term selects no node"),
        pytest.param(
            [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}],
            True,
            id="matchFields on metadata.name",
        ),
        pytest.param(
            [
                {"matchExpressions": [{"key": "zone", "operator": "Bogus", "values": []}]},
                {"matchExpressions": [{"key": "zone", "operator": "Exists"}]},
            ],
            True,
            id="a term that fails to parse does not stop the others",
        ),
        pytest.param(
            [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}],
            False,
            id="matchFields with two values is a parse error",
        ),
    ],
)
def test_required_node_affinity(terms: list[dict[str, object]], want: bool) -> None:
    assert get_required_node_affinity(_pod_with_terms(terms)).match(NODE) is want


def test_node_selector_and_affinity_must_both_match() -> None:
    pod = make_pod("p").node_selector("zone", "z1").node_affinity("gen", "In", ["6"]).obj()
    assert not get_required_node_affinity(pod).match(NODE)
    pod = make_pod("p").node_selector("zone", "z1").node_affinity("gen", "In", ["5"]).obj()
    assert get_required_node_affinity(pod).match(NODE)


@pytest.mark.parametrize(
    ("toleration", "taint", "want"),
    [
        pytest.param(
            Toleration(key="k", operator="Exists"),
            Taint(key="k", effect="NoSchedule"),
            True,
            id="Exists on the key, any effect",
        ),
        pytest.param(
            Toleration(operator="Exists"),
            Taint(key="any", effect="NoExecute"),
            True,
            id="empty key with Exists tolerates everything",
        ),
        pytest.param(
            Toleration(key="k", value="v"),
            Taint(key="k", value="v", effect="NoSchedule"),
            True,
            id="empty operator means Equal",
        ),
        pytest.param(
            Toleration(key="k", operator="Equal", value="v"),
            Taint(key="k", value="w", effect="NoSchedule"),
            False,
            id="Equal other value",
        ),
        pytest.param(
            Toleration(key="k", operator="Exists", effect="NoExecute"),
            Taint(key="k", effect="NoSchedule"),
            False,
            id="effect must match when set",
        ),
        pytest.param(
            Toleration(key="k", operator="Gt", value="1"),
            Taint(key="k", value="5", effect="NoSchedule"),
            False,
            id="Gt tolerates nothing while its alpha gate is off",
        ),
    ],
)
def test_toleration_matching(toleration: Toleration, taint: Taint, want: bool) -> None:
    assert tolerates_taint(toleration, taint) is want


def test_prefer_no_schedule_taints_do_not_keep_pods_off() -> None:
    taints = [Taint(key="soft", effect="PreferNoSchedule"), Taint(key="hard", effect="NoExecute")]
    found = find_matching_untolerated_taint(taints, [], do_not_schedule_taints_filter)
    assert found is not None and found.key == "hard"
    assert find_matching_untolerated_taint(taints[:1], [], do_not_schedule_taints_filter) is None
