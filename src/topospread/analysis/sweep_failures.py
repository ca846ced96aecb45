"""``sweep``'s families of failures (zone, node, combinations of nodes, drain): each failure's
timeline steps, how it is undone, and the failures of the chosen families in a cluster, in a
fixed order."""

from __future__ import annotations

import itertools
import math
from typing import Any, Final

import msgspec

from topospread.api.types import LABEL_TOPOLOGY_ZONE
from topospread.errors import ManifestError, SizeError
from topospread.limits import MAX_PODS_FLAG
from topospread.simulator.drain import DrainOptions
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.failures import (
    LoseNode,
    LoseZone,
    RestoreNode,
    RestoreZone,
)
from topospread.simulator.timeline_steps.nodes import Drain, Uncordon
from topospread.util.natural import natural_key

NO_DRAIN_OPTIONS: Final = DrainOptions()
# The families of failures.
ZONE: Final = "zone"
NODE: Final = "node"
NODES: Final = "nodes"
DRAIN: Final = "drain"
KINDS: Final = (ZONE, NODE, NODES, DRAIN)


class Failure(msgspec.Struct, frozen=True):
    """One failure: ``kind`` (zone, node, nodes, drain) of ``targets``. Not ordered by its
    fields (code points would put ``a-10`` before ``a-2``): sort by ``sort_key``."""

    kind: str
    targets: tuple[str, ...]
    zone_key: str = LABEL_TOPOLOGY_ZONE

    @property
    def name(self) -> str:
        return f"{self.kind} {' + '.join(self.targets)}"

    def sort_key(self) -> tuple[Any, ...]:
        """Kind, then the targets in natural order (``node a-2`` before ``node a-10``)."""
        return self.kind, tuple(natural_key(t) for t in self.targets), self.zone_key

    def loss(self, drain: DrainOptions = NO_DRAIN_OPTIONS) -> list[dict[str, Any]]:
        """The timeline steps of the failure; a drain with kubectl drain's ``drain`` options."""
        if self.kind == ZONE:
            zone = {"zone": self.targets[0], "zoneKey": self.zone_key}
            return [LoseZone.entry(zone, f"lose zone {self.targets[0]}")]
        if self.kind == DRAIN:
            flags = {
                key: True
                for key, on in (
                    ("force", drain.force),
                    ("disableEviction", drain.disable_eviction),
                    ("deleteEmptyDirData", drain.delete_emptydir_data),
                )
                if on
            }
            target: str | dict[str, Any] = (
                {"node": self.targets[0], **flags} if flags else self.targets[0]
            )
            return [Drain.entry(target, f"drain {self.targets[0]}")]
        return [LoseNode.entry(list(self.targets), f"lose {self.name}")]

    def recovery(self) -> list[dict[str, Any]]:
        if self.kind == ZONE:
            zone = {"zone": self.targets[0], "zoneKey": self.zone_key}
            return [RestoreZone.entry(zone, f"restore zone {self.targets[0]}")]
        if self.kind == DRAIN:
            return [Uncordon.entry(self.targets[0], f"uncordon {self.targets[0]}")]
        return [RestoreNode.entry(list(self.targets), f"restore {self.name}")]


def enumerate_failures(
    sim: Simulation,
    *,
    zones: bool,
    nodes: bool,
    drains: bool,
    max_failures: int = 1,
    zone_key: str = LABEL_TOPOLOGY_ZONE,
    seeds: int = 1,
    max_runs: int | None = None,
) -> list[Failure]:
    """The failures of the chosen families, in a fixed order: zones, single nodes (and every
    combination of up to ``max_failures`` nodes), drains; each by name in natural order
    (numbers by value: ``a-2`` before ``a-10``). More than ``max_runs`` runs of them (each
    replayed for ``seeds`` seeds) are refused before they are listed: a ``SizeError``."""
    names = sorted(sim.cluster.infos, key=natural_key)
    out: list[Failure] = []
    if zones:
        found = sorted(
            {
                v
                for info in sim.cluster.infos.values()
                if (v := info.node.metadata.labels.get(zone_key))
            },
            key=natural_key,
        )
        if not found:
            raise ManifestError(
                f"--zones: no node has the label {zone_key} (--zone-key names the label that "
                "tells zones apart)"
            )
        out += [Failure(ZONE, (z,), zone_key) for z in found]
    if max_runs is not None:
        _check_runs(len(out), len(names), (nodes, drains, max_failures), seeds, max_runs)
    if nodes or max_failures > 1:
        out += [Failure(NODE, (n,)) for n in names]
        for k in range(2, max_failures + 1):
            out += [Failure(NODES, combo) for combo in itertools.combinations(names, k)]
    if drains:
        out += [Failure(DRAIN, (n,)) for n in names]
    return out


def _check_runs(
    zones: int, nodes: int, families: tuple[bool, bool, int], seeds: int, max_runs: int
) -> None:
    """Refuse a sweep of more than ``max_runs`` runs (``--max-pods`` bounds them) before its
    failures are listed: ``zones`` zones lost, then (``families``: whether each node is lost,
    whether each is drained, and up to how many nodes fail together) failures of ``nodes``
    nodes, each for ``seeds`` seeds. The combinations of up to K nodes grow as nodes**K."""
    each_node, drains, k = families
    combined = sum(math.comb(nodes, i) for i in range(1, k + 1)) if each_node or k > 1 else 0
    runs = (zones + combined + (nodes if drains else 0)) * seeds
    if runs <= max_runs:
        return
    chosen = [
        flag
        for flag, on in (
            ("--zones", zones > 0),
            ("--nodes", each_node),
            ("--drains", drains),
            (f"--max-failures {k}", k > 1),
        )
        if on
    ]
    raise SizeError(
        f"{' '.join(chosen)} --seeds {seeds} on {nodes:,} nodes would make {runs:,} runs, more "
        f"than the {max_runs:,} runs a sweep replays ({MAX_PODS_FLAG} raises the bound)"
    )
