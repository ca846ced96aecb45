"""Node groups read from a mapping (what a scenario's ``autoscaler:`` section will hold)."""

from __future__ import annotations

import pytest

from topospread.autoscaler.clusterautoscaler.nodegroup import (
    parse_node_groups,
    template_node_info,
)
from topospread.errors import ManifestError

WHERE = "scenario.yaml: autoscaler.nodeGroups"


def test_a_node_group_takes_its_template_from_a_node_manifest() -> None:
    (group,) = parse_node_groups(
        [
            {
                "name": "pool-a",
                "minSize": 1,
                "maxSize": 5,
                "zones": ["zone-a", "zone-b"],
                "template": {
                    "metadata": {"labels": {"tier": "web"}},
                    "spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]},
                    "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": 110}},
                },
            }
        ],
        WHERE,
    )
    assert (group.min_size, group.max_size, group.target_size) == (1, 5, 1)
    info = template_node_info(group)
    node = info.node
    assert node.metadata.labels["tier"] == "web"
    assert node.metadata.labels["topology.kubernetes.io/zone"] == "zone-a"
    assert [t.key for t in node.spec.taints] == ["dedicated"]
    assert node.status.allocatable == {"cpu": "4", "memory": "16Gi", "pods": "110"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"maxSize": 3}], f"{WHERE}[0]: name: Required value: a node group needs a name"),
        ([{"name": "a"}], f"{WHERE}[0]: maxSize: Required value: a node group needs a max size"),
        ([{"name": "a", "maxSize": 2, "minSize": 3}],
         f"{WHERE}[0]: minSize: Invalid value: 3: must not exceed maxSize (2)"),
        ([{"name": "a", "maxSize": 2, "size": 5}],
         f"{WHERE}[0]: size: Invalid value: 5: must lie between minSize (0) and maxSize (2)"),
        ([{"name": "a", "maxSize": -1}],
         f"{WHERE}[0]: maxSize: Invalid value: -1: expected a count (0 or more)"),
        ([{"name": "a", "maxSize": 2, "zone": "z"}],
         f"{WHERE}[0]: zone: unknown field; a node group has name, minSize, maxSize, size, "
         "zones, template"),
        ([{"name": "a", "maxSize": 2}, {"name": "a", "maxSize": 2}],
         f'{WHERE}[1]: name: Duplicate value: "a"'),
        ({"name": "a"}, f"{WHERE}: expected a list of node groups"),
    ],
)  # fmt: skip
def test_bad_node_groups_name_the_group_and_the_field(raw: object, message: str) -> None:
    with pytest.raises(ManifestError) as err:
        parse_node_groups(raw, WHERE)
    assert str(err.value) == message
