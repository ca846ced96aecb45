"""The node tree (upstream's nodeTree, pkg/scheduler/backend/cache/node_tree.go): names grouped
by zone in order of arrival, listed round robin over the zones in order of first appearance;
adding a name its zone holds already, or removing one it does not hold, changes nothing; a
zone left empty is dropped, and comes back last."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from topospread.api.types import Node, ObjectMeta
from topospread.cluster.state import NodeTree, get_zone_key


def _node(name: str, zone: str, region: str = "") -> Node:
    labels = {"topology.kubernetes.io/zone": zone} if zone else {}
    if region:
        labels["topology.kubernetes.io/region"] = region
    return Node(metadata=ObjectMeta(name=name, labels=labels))


def test_round_robin_over_zones_in_order_of_first_appearance() -> None:
    tree = NodeTree()
    for name, zone in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("c1", "c"), ("a3", "a")]:
        tree.add(_node(name, zone))
    assert tree.list() == ["a1", "b1", "c1", "a2", "a3"]


def test_duplicates_and_unknown_removals_change_nothing() -> None:
    tree = NodeTree()
    tree.add(_node("a1", "a"))
    tree.add(_node("a2", "a"))
    tree.add(_node("a1", "a"))
    tree.remove(_node("zz", "a"))
    tree.remove(_node("a1", "b"))  # not in that zone
    assert tree.list() == ["a1", "a2"]


def test_an_emptied_zone_is_dropped_and_comes_back_last() -> None:
    tree = NodeTree()
    for name, zone in [("a1", "a"), ("b1", "b"), ("c1", "c")]:
        tree.add(_node(name, zone))
    tree.remove(_node("a1", "a"))
    tree.add(_node("a2", "a"))
    assert tree.list() == ["b1", "c1", "a2"]


def test_update_moves_a_node_only_when_its_zone_changes() -> None:
    tree = NodeTree()
    for name, zone in [("a1", "a"), ("a2", "a"), ("b1", "b")]:
        tree.add(_node(name, zone))
    tree.update(_node("a1", "a"), _node("a1", "a"))
    assert tree.list() == ["a1", "b1", "a2"]
    tree.update(_node("a1", "a"), _node("a1", "b"))
    assert tree.list() == ["a2", "b1", "a1"]


def test_region_and_zone_make_the_key() -> None:
    tree = NodeTree()
    tree.add(_node("x", "z1", "r1"))
    tree.add(_node("y", "z1", "r2"))
    tree.add(_node("w", "z1", "r1"))
    assert tree.list() == ["x", "y", "w"]
    assert get_zone_key(_node("n", "")) == ""


def test_the_beta_labels_come_first_when_a_node_has_both() -> None:
    # Upstream's GetZoneKey reads failure-domain.beta.kubernetes.io/zone (and /region) first,
    # the GA label only when the beta one is absent; a present but empty beta label wins.
    both = Node(
        metadata=ObjectMeta(
            name="n",
            labels={
                "topology.kubernetes.io/zone": "ga-zone",
                "failure-domain.beta.kubernetes.io/zone": "beta-zone",
                "topology.kubernetes.io/region": "ga-region",
                "failure-domain.beta.kubernetes.io/region": "",
            },
        )
    )
    assert get_zone_key(both) == ":\x00:beta-zone"
    assert get_zone_key(_node("g", "ga-zone", "r")) == "r:\x00:ga-zone"


class _Reference:
    """The tree as upstream writes it: a list per zone, searched for each name."""

    def __init__(self) -> None:
        self.tree: dict[str, list[str]] = {}
        self.zones: list[str] = []

    def add(self, node: Node) -> None:
        zone, name = get_zone_key(node), node.metadata.name
        if zone not in self.tree:
            self.tree[zone] = []
            self.zones.append(zone)
        if name not in self.tree[zone]:
            self.tree[zone].append(name)

    def remove(self, node: Node) -> None:
        zone, name = get_zone_key(node), node.metadata.name
        if name in self.tree.get(zone, []):
            self.tree[zone].remove(name)
            if not self.tree[zone]:
                del self.tree[zone]
                self.zones.remove(zone)

    def list(self) -> list[str]:
        out: list[str] = []
        for i in range(max((len(v) for v in self.tree.values()), default=0)):
            out += [self.tree[z][i] for z in self.zones if i < len(self.tree[z])]
        return out


_ops = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "update"]),
        st.sampled_from([f"n{i}" for i in range(8)]),
        st.sampled_from(["", "a", "b", "c"]),
        st.sampled_from(["", "a", "b", "c"]),
    ),
    max_size=60,
)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(_ops)
def test_the_tree_lists_as_upstreams_does_after_any_changes(
    ops: list[tuple[str, str, str, str]],
) -> None:
    tree, reference = NodeTree(), _Reference()
    for op, name, zone, other in ops:
        if op == "update":
            tree.update(_node(name, zone), _node(name, other))
            # upstream's updateNode: nothing when the zone is the same, else remove and add
            if get_zone_key(_node(name, zone)) != get_zone_key(_node(name, other)):
                reference.remove(_node(name, zone))
                reference.add(_node(name, other))
        else:
            getattr(tree, op)(_node(name, zone))
            getattr(reference, op)(_node(name, zone))
        assert tree.list() == reference.list()
