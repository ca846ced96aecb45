"""Failures and their ends: ``loseZone``/``restoreZone`` (every node of a zone) and
``loseNode``/``restoreNode`` (some nodes) turn nodes NotReady and back, as the node lifecycle
controller sees a kubelet stop and resume posting; the nodes remain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from topospread.api.admission import TAINT_NODE_UNREACHABLE
from topospread.api.types import LABEL_TOPOLOGY_ZONE, Node
from topospread.errors import ManifestError
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.arguments import mapping_arg, names_arg, string_arg
from topospread.simulator.timeline_steps.node_status import (
    READY_TRUE,
    READY_UNKNOWN,
    UNREACHABLE_TAINTS,
    set_taints,
)
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class LoseZone(Step):
    """``loseZone``: a zone name or ``{zone, zoneKey}``. A zone outage: every node of the
    zone turns NotReady (Unknown) and the node lifecycle controller taints it
    node.kubernetes.io/unreachable NoSchedule and NoExecute; the taint manager evicts the pods
    that do not tolerate that for ever. The nodes remain."""

    action = "loseZone"
    zone: str
    zone_key: str

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        if isinstance(args, Mapping):
            mapping_arg(args, where, required=("zone",), allowed=("zone", "zoneKey"))
            zone = string_arg(args, "zone", where, "a zone name") or ""
            zone_key = string_arg(args, "zoneKey", where, "a node label key")
            zone_key = zone_key or LABEL_TOPOLOGY_ZONE
        elif not isinstance(args, str) or not args:
            raise ManifestError(f"{where}: expected a zone name or {{zone, zoneKey}}")
        else:
            zone, zone_key = args, LABEL_TOPOLOGY_ZONE
        return cls(args=args, where=where, zone=zone, zone_key=zone_key)

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        return StepResult(lose(sim, sim.zone_nodes(self.zone, self.zone_key, self.where)))


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoreZone(LoseZone):
    """``restoreZone``: a zone name or ``{zone, zoneKey}``; its nodes are Ready again."""

    action = "restoreZone"

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        return StepResult(restore(sim, sim.zone_nodes(self.zone, self.zone_key, self.where)))


@dataclass(frozen=True, slots=True, kw_only=True)
class LoseNode(Step):
    """``loseNode``: a node name or a list. Nodes whose kubelet stopped reporting (a crashed
    or cut-off machine): NotReady and tainted unreachable, as in a zone outage; the nodes
    remain."""

    action = "loseNode"
    nodes: tuple[str, ...]

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        return cls(args=args, where=where, nodes=tuple(names_arg(args, where)))

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        return StepResult(lose(sim, [sim.node(n, self.where) for n in self.nodes]))


@dataclass(frozen=True, slots=True, kw_only=True)
class RestoreNode(LoseNode):
    """``restoreNode``: a node name or a list; the nodes are Ready again."""

    action = "restoreNode"

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        return StepResult(restore(sim, [sim.node(n, self.where) for n in self.nodes]))


def lose(sim: Simulation, nodes: list[Node]) -> list[str]:
    events = []
    for node in nodes:
        events += set_taints(
            sim, node, UNREACHABLE_TAINTS, [], "NotReady (unreachable)", READY_UNKNOWN
        )
    return events


def restore(sim: Simulation, nodes: list[Node]) -> list[str]:
    events = []
    for node in nodes:
        gone = [t for t in node.spec.taints if t.key == TAINT_NODE_UNREACHABLE]
        events += set_taints(sim, node, [], gone, "Ready again", READY_TRUE)
    return events


__all__ = ["LoseNode", "LoseZone", "RestoreNode", "RestoreZone"]
