"""Which unneeded nodes one scale-down loop deletes: every check (unneeded long enough, group
min size, cluster minimums) made on the empty nodes first, then on those with pods (the risky
ones last), each that passes taking its room; then the crop to --max-scale-down-parallelism
(empty nodes first, group by group) and to --max-drain-parallelism within what the empty ones
left (upstream's RemovableAt, NodesToDelete's sortByRisk and ScaleDownBudgetProcessor.CropNodes,
kubernetes-sigs/cluster-autoscaler 33c3f97)."""

from __future__ import annotations

import pytest

from topospread.api.meta_types import ObjectMeta
from topospread.api.types import Pod, PodSpec
from topospread.autoscaler.clusterautoscaler.nodegroup import NodeGroup
from topospread.autoscaler.clusterautoscaler.options import parse_options
from topospread.autoscaler.clusterautoscaler.scaledown import (
    NodeToRemove,
    UnneededNodes,
    UnremovableReason,
    removable_now,
)
from topospread.errors import ManifestError

NOW = 1000.0


def candidate(name: str, group: str, pods: int = 0, *, risky: bool = False) -> NodeToRemove:
    moved = [
        Pod(metadata=ObjectMeta(name=f"{name}-p{i}", namespace="default"), spec=PodSpec())
        for i in range(pods)
    ]
    return NodeToRemove(name, group, moved, [], risky=risky)


def deleted(
    candidates: list[NodeToRemove],
    groups: dict[str, NodeGroup],
    options: dict[str, object],
    draining: int = 0,
) -> tuple[list[str], list[tuple[str, UnremovableReason]]]:
    tracker = UnneededNodes({c.node: 0.0 for c in candidates})
    removed, skipped = removable_now(
        candidates, groups, tracker, {}, parse_options(options, "t"), NOW, {}, draining=draining
    )
    return [r.node for r in removed], [(u.node, u.reason) for u in skipped]


def group(name: str, size: int, min_size: int = 0) -> NodeGroup:
    return NodeGroup(name, min_size, 10, size)


def test_the_empty_nodes_use_up_the_parallelism_the_drains_then_lack() -> None:
    groups = {"a": group("a", 5)}
    nodes = [candidate("a-1", "a", pods=1), candidate("a-2", "a"), candidate("a-3", "a")]
    assert deleted(nodes, groups, {"max-scale-down-parallelism": 2}) == (["a-2", "a-3"], [])
    assert deleted(nodes, groups, {"max-scale-down-parallelism": 3}) == (
        ["a-2", "a-3", "a-1"],
        [],
    )
    # A drain in progress counts against both limits.
    assert deleted(
        nodes, groups, {"max-scale-down-parallelism": 3, "max-drain-parallelism": 2}, draining=1
    ) == (
        ["a-2", "a-3"],
        [],
    )


def test_a_node_the_crop_leaves_still_takes_its_groups_room_above_min_size() -> None:
    # Size 3, min 1: the two empty nodes pass and take the group's room, so the node with pods
    # is at min size, though the crop (parallelism 1) deletes only one empty node this loop.
    groups = {"a": group("a", 3, min_size=1)}
    nodes = [candidate("a-1", "a", pods=1), candidate("a-2", "a"), candidate("a-3", "a")]
    assert deleted(nodes, groups, {"max-scale-down-parallelism": 1}) == (
        ["a-2"],
        [("a-1", UnremovableReason.NodeGroupMinSizeReached)],
    )


def test_risky_drains_go_last() -> None:
    groups = {"a": group("a", 5)}
    nodes = [candidate("a-1", "a", pods=2, risky=True), candidate("a-2", "a", pods=1)]
    assert deleted(nodes, groups, {})[0] == ["a-2"]
    assert deleted(nodes, groups, {"max-drain-parallelism": 2})[0] == ["a-2", "a-1"]


def test_empty_nodes_are_cropped_group_by_group() -> None:
    groups = {"a": group("a", 5), "b": group("b", 5)}
    nodes = [
        candidate("a-1", "a"),
        candidate("b-1", "b"),
        candidate("a-2", "a"),
        candidate("b-2", "b"),
    ]
    assert deleted(nodes, groups, {"max-scale-down-parallelism": 3})[0] == ["a-1", "a-2", "b-1"]


def test_max_empty_bulk_delete_is_no_flag_of_current_cluster_autoscaler() -> None:

    with pytest.raises(
        ManifestError, match="max-empty-bulk-delete: unknown cluster-autoscaler option"
    ):
        parse_options({"max-empty-bulk-delete": 5}, "t")
