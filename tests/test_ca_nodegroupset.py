"""Similar node groups and balancing, from upstream's tests: compare_nodegroups_test.go and
balancing_processor_test.go (processors/nodegroupset)."""

from __future__ import annotations

import pytest

from ca_helpers import build_test_node, build_test_pod, with_labels
from topospread.api.resource import must_parse
from topospread.api.types import Node, Pod
from topospread.autoscaler.clusterautoscaler.nodegroup import NodeGroup, with_node_name
from topospread.autoscaler.clusterautoscaler.nodegroupset import (
    MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO,
    balance_scale_up_between_groups,
    find_similar_node_groups,
    generic_ignored_labels,
    is_node_info_similar,
)
from topospread.framework.types import NodeInfo


def similar(n1: Node, n2: Node, pods1: list[Pod] = (), pods2: list[Pod] = (), extra=()) -> bool:  # type: ignore[assignment]
    i1 = NodeInfo(n1, [with_node_name(p, n1.metadata.name) for p in pods1])
    i2 = NodeInfo(n2, [with_node_name(p, n2.metadata.name) for p in pods2])
    return is_node_info_similar(i1, i2, generic_ignored_labels(extra))


def with_resource(node: Node, section: str, name: str, value: str) -> Node:
    import msgspec

    status = node.status
    res = {**getattr(status, section), name: value}
    return msgspec.structs.replace(node, status=msgspec.structs.replace(status, **{section: res}))


def test_identical_nodes_are_similar() -> None:
    assert similar(build_test_node("node1", 1000, 2000), build_test_node("node2", 1000, 2000))


def test_nodes_similar_various_requirements() -> None:
    n1 = build_test_node("node1", 1000, 2000)
    # Different CPU capacity.
    n2 = with_resource(build_test_node("node2", 1000, 2000), "capacity", "cpu", "1001m")
    assert not similar(n1, n2)
    # Same CPU capacity, but slightly different allocatable.
    n3 = with_resource(build_test_node("node3", 1000, 2000), "allocatable", "cpu", "999m")
    assert similar(n1, n3)
    # Same CPU capacity, significantly different allocatable.
    n4 = with_resource(build_test_node("node4", 1000, 2000), "allocatable", "cpu", "500m")
    assert not similar(n1, n4)
    # One with GPU, one without.
    n5 = with_resource(build_test_node("node5", 1000, 2000), "capacity", "nvidia.com/gpu", "1")
    n5 = with_resource(n5, "allocatable", "nvidia.com/gpu", "1")
    assert not similar(n1, n5)


def test_nodes_similar_various_requirements_and_pods() -> None:
    n1 = build_test_node("node1", 1000, 2000)
    p1 = build_test_pod("pod1", 500, 1000)
    # Different allocatable, but same free.
    n2 = with_resource(build_test_node("node2", 1000, 2000), "allocatable", "cpu", "500m")
    n2 = with_resource(n2, "allocatable", "memory", "1000")
    assert not similar(n1, n2, [p1], [])
    # Same requests of pods.
    n3 = build_test_node("node3", 1000, 2000)
    assert similar(n1, n3, [p1], [build_test_pod("pod3", 500, 1000)])
    # Similar allocatable, similar pods.
    n4 = with_resource(build_test_node("node4", 1000, 2000), "allocatable", "cpu", "999m")
    assert similar(n1, n4, [p1], [build_test_pod("pod4", 501, 1001)])


def test_nodes_similar_various_memory_requirements() -> None:
    n1 = build_test_node("node1", 1000, 1000)
    within = int(1000 - 1000 * MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO + 1)
    n2 = with_resource(build_test_node("node2", 1000, 1000), "capacity", "memory", str(within))
    assert similar(n1, n2)
    beyond = int(1000 - 1000 * MAX_CAPACITY_MEMORY_DIFFERENCE_RATIO - 1)
    n3 = with_resource(build_test_node("node3", 1000, 1000), "capacity", "memory", str(beyond))
    assert not similar(n1, n3)


@pytest.mark.parametrize(
    ("q1", "q2", "q3"),
    [
        ("16116152Ki", "15944120Ki", "16438475Ki"),  # m5.xlarge
        ("259970052Ki", "257217528Ki", "265169453Ki"),  # m5.16xlarge
    ],
    ids=["m5.xlarge", "m5.16xlarge"],
)
def test_nodes_similar_various_large_memory_requirements(q1: str, q2: str, q3: str) -> None:
    n1 = build_test_node("node1", 1000, must_parse(q1).value())
    # Another zone's machine of the same type: within tolerance.
    assert similar(n1, build_test_node("node2", 1000, must_parse(q2).value()))
    # q1 * 1.02: beyond it.
    assert not similar(n1, build_test_node("node3", 1000, must_parse(q3).value()))


def test_nodes_similar_various_labels() -> None:
    n1 = with_labels(build_test_node("node1", 1000, 2000), **{"test-label": "test-value"})
    n1 = with_labels(n1, character="winnie the pooh")
    n2 = with_labels(build_test_node("node2", 1000, 2000), **{"test-label": "test-value"})
    extra = ["example.com/ready"]
    # Missing character label.
    assert not similar(n1, n2, extra=extra)
    n2 = with_labels(n2, character="winnie the pooh")
    assert similar(n1, n2, extra=extra)
    # Different hostname labels shouldn't matter.
    n1 = with_labels(n1, **{"kubernetes.io/hostname": "node1"})
    n2 = with_labels(n2, **{"kubernetes.io/hostname": "node2"})
    assert similar(n1, n2, extra=extra)
    # Different zone shouldn't matter either.
    n1 = with_labels(n1, **{"failure-domain.beta.kubernetes.io/zone": "mars-olympus-mons1-b"})
    n2 = with_labels(n2, **{"failure-domain.beta.kubernetes.io/zone": "us-houston1-a"})
    assert similar(n1, n2, extra=extra)
    # Different beta.kubernetes.io/fluentd-ds-ready should not matter.
    n1 = with_labels(n1, **{"beta.kubernetes.io/fluentd-ds-ready": "true"})
    n2 = with_labels(n2, **{"beta.kubernetes.io/fluentd-ds-ready": "false"})
    assert similar(n1, n2, extra=extra)
    # Different custom labels should not matter when ignored.
    n1 = with_labels(n1, **{"example.com/ready": "true"})
    n2 = with_labels(n2, **{"example.com/ready": "false"})
    assert similar(n1, n2, extra=extra)
    assert not similar(n1, n2)


def basic_groups() -> tuple[list[NodeGroup], dict[str, NodeInfo]]:
    groups = [NodeGroup(f"ng{i}", 1, 10, 1) for i in (1, 2, 3)]
    infos = {
        "ng1": NodeInfo(build_test_node("n1", 1000, 1000)),
        "ng2": NodeInfo(build_test_node("n2", 1000, 1000)),
        "ng3": NodeInfo(build_test_node("n3", 2000, 2000)),
    }
    return groups, infos


def test_find_similar_node_groups() -> None:
    groups, infos = basic_groups()
    ignored = generic_ignored_labels()
    names = [[g.name for g in find_similar_node_groups(g, groups, infos, ignored)] for g in groups]
    assert names == [["ng2"], ["ng1"], []]


def test_find_similar_node_groups_custom_labels() -> None:
    groups, infos = basic_groups()
    infos["ng1"].node = with_labels(infos["ng1"].node, **{"example.com/ready": "true"})
    infos["ng2"].node = with_labels(infos["ng2"].node, **{"example.com/ready": "false"})
    ignored = generic_ignored_labels(["example.com/ready"])
    names = [[g.name for g in find_similar_node_groups(g, groups, infos, ignored)] for g in groups]
    assert names == [["ng2"], ["ng1"], []]


def sizes(infos: list) -> dict[str, int]:  # type: ignore[type-arg]
    return {i.group: i.new_size for i in infos}


def test_balance_single_group() -> None:
    ng1 = NodeGroup("ng1", 1, 10, 1)
    assert sizes(balance_scale_up_between_groups([ng1], 1)) == {"ng1": 2}
    assert sizes(balance_scale_up_between_groups([ng1], 4)) == {"ng1": 5}


def test_balance_under_max_size() -> None:
    groups = [NodeGroup("ng1", 1, 10, 1), NodeGroup("ng2", 1, 10, 3)]
    groups += [NodeGroup("ng3", 1, 10, 5), NodeGroup("ng4", 1, 10, 5)]
    assert sizes(balance_scale_up_between_groups(groups, 1)) == {"ng1": 2}
    assert sizes(balance_scale_up_between_groups(groups, 2)) == {"ng1": 3}
    assert sizes(balance_scale_up_between_groups(groups, 4)) == {"ng1": 4, "ng2": 4}
    five = sizes(balance_scale_up_between_groups(groups, 5))
    assert set(five) == {"ng1", "ng2"}
    assert sorted(five.values()) == [4, 5]
    assert sizes(balance_scale_up_between_groups(groups, 10)) == {f"ng{i}": 6 for i in range(1, 5)}


def test_balance_hitting_max_size() -> None:
    g = {
        "ng1": NodeGroup("ng1", 1, 1, 1),
        "ng2": NodeGroup("ng2", 1, 3, 1),
        "ng3": NodeGroup("ng3", 1, 10, 3),
        "ng4": NodeGroup("ng4", 1, 7, 5),
        "ng5": NodeGroup("ng5", 1, 3, 6),
    }

    def balance(names: str, n: int) -> dict[str, int]:
        return sizes(balance_scale_up_between_groups([g[x] for x in names.split()], n))

    # Just one maxed out group.
    assert balance("ng1", 1) == {}
    # Smallest group already maxed out, add one node.
    assert balance("ng1 ng2", 1) == {"ng2": 2}
    # Smallest group already maxed out, too many nodes (capped to max capacity).
    assert balance("ng1 ng2", 5) == {"ng2": 3}
    # First group maxes out before proceeding to the next one.
    assert balance("ng2 ng3", 4) == {"ng2": 3, "ng3": 5}
    # Last group maxes out before the previous one.
    assert balance("ng2 ng3 ng4", 9) == {"ng2": 3, "ng3": 8, "ng4": 7}
    # Use all capacity, cap to max.
    assert balance("ng2 ng3 ng4", 900) == {"ng2": 3, "ng3": 10, "ng4": 7}
    # One node group exceeds max.
    assert balance("ng2 ng5", 1) == {"ng2": 2}
