"""``verify``'s search states: their shape, the state one binding leads to, and the key under
which states equal up to symmetry (verify_symmetry.py) are merged."""

from __future__ import annotations

import bisect
from typing import Any

from topospread.analysis.verify_symmetry import Symmetry

# A state: per node (scenario order), the sorted pod classes on it; per class, how many of its
# pods are bound. Pods of a class are bound in member order, so the counts name the pods.
Contents = tuple[tuple[int, ...], ...]
State = tuple[Contents, tuple[int, ...]]


def successor(state: State, c: int, i: int) -> State:
    """``state`` with one more pod of class ``c`` bound, to node ``i``."""
    contents, counts = state
    on_node = list(contents[i])
    bisect.insort(on_node, c)
    new_contents = (*contents[:i], tuple(on_node), *contents[i + 1 :])
    new_counts = (*counts[:c], counts[c] + 1, *counts[c + 1 :])
    return new_contents, new_counts


class StateKeys:
    """The key of a state: equal for states that are images of each other under the
    scenario's symmetries."""

    def __init__(self, symmetry: Symmetry, nodes: int) -> None:
        self.sym = symmetry
        k = symmetry.pod_classes
        # A class's id blind to which workload of its orbit it belongs to.
        self._blind: list[tuple[int, ...]] = [(0, c) for c in range(k)]
        for o, orbit in enumerate(symmetry.orbits):
            for roles in orbit:
                for r, c in enumerate(roles):
                    self._blind[c] = (1, o, r)
        self._zones = [zone for group in symmetry.zone_groups for zone in group]
        self._zone_group = [0] * nodes
        for g, group in enumerate(symmetry.zone_groups):
            for zone in group:
                for i in zone:
                    self._zone_group[i] = g

    def canonical(self, state: State) -> Any:
        """A key equal for states that are images of each other under the symmetries: the
        state with its interchangeable workloads put in a standard order, then its zones and
        nodes sorted. Any image would be sound; the standard order only merges more."""
        contents, counts = self._order_workloads(state) if self.sym.orbits else state
        shape = self.sym.node_shape
        return (
            counts,
            tuple(
                tuple(
                    sorted(tuple(sorted((shape[i], contents[i]) for i in zone)) for zone in group)
                )
                for group in self.sym.zone_groups
            ),
        )

    def _order_workloads(self, state: State) -> State:
        """The image of ``state`` in which the workloads of each orbit come in the order of a
        description of their placement that no symmetry changes (ties keep their order)."""
        contents, counts = state
        blind = self._blind
        node_desc = []
        for zone_members in self._zones:
            zone_content = tuple(sorted(blind[c] for i in zone_members for c in contents[i]))
            for i in zone_members:
                node_desc.append(
                    (
                        i,
                        (
                            self._zone_group[i],
                            self.sym.node_shape[i],
                            zone_content,
                            tuple(sorted(blind[c] for c in contents[i])),
                        ),
                    )
                )
        desc_of = dict(node_desc)
        where: dict[int, list[Any]] = {}
        for i, classes in enumerate(contents):
            for c in classes:
                where.setdefault(c, []).append(desc_of[i])
        relabel = list(range(len(counts)))
        for orbit in self.sym.orbits:
            keyed = sorted(
                (tuple((counts[c], sorted(where.get(c, ()))) for c in roles), n)
                for n, roles in enumerate(orbit)
            )
            for target, (_, source) in enumerate(keyed):
                for c_from, c_to in zip(orbit[source], orbit[target], strict=True):
                    relabel[c_from] = c_to
        new_contents = tuple(tuple(sorted(relabel[c] for c in classes)) for classes in contents)
        new_counts = [0] * len(counts)
        for c, n in enumerate(counts):
            new_counts[relabel[c]] = n
        return new_contents, tuple(new_counts)
