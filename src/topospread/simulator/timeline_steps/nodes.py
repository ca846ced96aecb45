"""Steps on nodes as an operator makes them: ``cordon``, ``uncordon``, ``drain``, ``taint``,
``untaint``, ``removeNode``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Self

import msgspec

from topospread.api.field import Path as FieldPath
from topospread.api.field import invalid
from topospread.api.meta_validation import validate_label_name
from topospread.api.types import LABEL_TOPOLOGY_ZONE, Node, Taint
from topospread.errors import ManifestError
from topospread.simulator.drain import OPTION_FLAGS, DrainOptions, DrainResult, drain_node
from topospread.simulator.simulation import Simulation
from topospread.simulator.taint_eviction_controller import count_text
from topospread.simulator.timeline_steps.arguments import mapping_arg, names_arg, string_arg
from topospread.simulator.timeline_steps.node_status import set_taints
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult, describe_args
from topospread.util.validation import is_valid_label_value

_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass(frozen=True, slots=True, kw_only=True)
class Cordon(Step):
    """``cordon``: a node name or a list; the nodes become unschedulable."""

    action = "cordon"
    unschedulable: ClassVar[bool] = True
    nodes: tuple[str, ...]

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        return cls(args=args, where=where, nodes=tuple(names_arg(args, where)))

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        return StepResult(
            set_unschedulable(sim, self.nodes, self.where, unschedulable=self.unschedulable)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Uncordon(Cordon):
    """``uncordon``: a node name or a list; the nodes become schedulable again."""

    action = "uncordon"
    unschedulable: ClassVar[bool] = False


def set_unschedulable(
    sim: Simulation, names: tuple[str, ...] | list[str], where: str, *, unschedulable: bool
) -> list[str]:
    events = []
    for name in names:
        node = sim.node(name, where)
        sim.update_node(
            msgspec.structs.replace(
                node, spec=msgspec.structs.replace(node.spec, unschedulable=unschedulable)
            )
        )
        events.append(f"{'cordoned' if unschedulable else 'uncordoned'} {name}")
    return events


@dataclass(frozen=True, slots=True, kw_only=True)
class Drain(Step):
    """``drain``: node names, or ``{node | nodes, force?, disableEviction?,
    deleteEmptyDirData?}`` (kubectl drain's --force, --disable-eviction and
    --delete-emptydir-data). kubectl drain --ignore-daemonsets: cordon every node, then drain
    them one by one (simulator/drain.py)."""

    action = "drain"
    nodes: tuple[str, ...]
    options: DrainOptions

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        names, options = drain_args(args, where)
        return cls(args=args, where=where, nodes=tuple(names), options=options)

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        events = set_unschedulable(sim, self.nodes, self.where, unschedulable=True)
        drains: list[DrainResult] = []
        for name in self.nodes:
            result = drain_node(sim, name, self.options, self.where)
            drains.append(result)
            events += _drain_events(result)
        return StepResult(events, drains)

    def describe(self) -> str:
        args = self.args
        if isinstance(args, Mapping):
            return describe_args(self.action, args.get("nodes", args.get("node")))
        return describe_args(self.action, args)


def drain_args(a: Any, where: str) -> tuple[list[str], DrainOptions]:
    """``drain``'s nodes and kubectl drain's options."""
    if not isinstance(a, Mapping):
        return names_arg(a, where), DrainOptions()
    mapping_arg(a, where, required=(), allowed=("node", "nodes", *OPTION_FLAGS))
    if ("node" in a) == ("nodes" in a):
        raise ManifestError(f"{where}: give exactly one of node or nodes")
    names = names_arg(a["node"] if "node" in a else a["nodes"], where)
    for key in OPTION_FLAGS:
        if key in a and not isinstance(a[key], bool):
            raise ManifestError(
                f"{where}: {key}: Invalid value: {json.dumps(a[key])}: expected true or false "
                f"(kubectl drain {OPTION_FLAGS[key]})"
            )
    options = DrainOptions(
        force=a.get("force", False),
        disable_eviction=a.get("disableEviction", False),
        delete_emptydir_data=a.get("deleteEmptyDirData", False),
    )
    return names, options


def _drain_events(result: DrainResult) -> list[str]:
    """One node's drain as report lines: what was evicted, then each group of pods left on
    the node with the eviction's refusal, then kubectl's warnings."""
    node = result.node
    verb = "deleted" if result.deleted_directly else "evicted"
    if result.errors:
        lines = [f"drain {node} failed: {verb} no pods; {e}" for e in result.errors]
    elif result.blocked:
        lines = [f"drain {node} incomplete: {verb} {count_text(result.evicted)}"]
    else:
        lines = [f"drained {node}: {verb} {count_text(result.evicted)}"]
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for b in result.blocked:
        groups.setdefault((b.refusal.message, b.refusal.pdbs), []).append(b.pod)
    for (message, pdbs), pods in sorted(groups.items()):
        what = "PodDisruptionBudget" if len(pdbs) == 1 else "PodDisruptionBudgets"
        lines.append(
            f"drain {node} incomplete: {len(pods)} pod{'s' if len(pods) != 1 else ''} "
            f"blocked by {what} {', '.join(pdbs)} ({message}): {', '.join(pods)}"
        )
    lines += [f"drain {node}: Warning: {w}" for w in result.warnings]
    return lines


@dataclass(frozen=True, slots=True, kw_only=True)
class TaintNodes(Step):
    """``taint``: ``{node | nodes | zone, zoneKey?, key, value?, effect}``: add a taint (a
    NoExecute one stamped with timeAdded, the taint manager acting on it)."""

    action = "taint"
    required: ClassVar[tuple[str, ...]] = ("key", "effect")

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        a = mapping_arg(
            args,
            where,
            required=cls.required,
            allowed=("node", "nodes", "zone", "zoneKey", "key", "value", "effect"),
        )
        if sum(k in a for k in ("node", "nodes", "zone")) != 1:
            raise ManifestError(f"{where}: give exactly one of node, nodes or zone")
        for key in ("node", "nodes"):
            if key in a:
                names_arg(a[key], f"{where}: {key}")
        string_arg(a, "zone", where, "a zone name")
        string_arg(a, "zoneKey", where, "a node label key")
        _check_taint(a, where)
        effect = a.get("effect")
        if effect is not None and effect not in _EFFECTS:
            raise ManifestError(
                f'{where}: effect: Unsupported value: "{effect}": supported values: '
                + ", ".join(f'"{e}"' for e in _EFFECTS)
            )
        return cls(args=args, where=where)

    def targets(self, sim: Simulation) -> list[Node]:
        a = self.args
        if "zone" in a:
            zone_key = a.get("zoneKey", LABEL_TOPOLOGY_ZONE)
            return sim.zone_nodes(str(a["zone"]), str(zone_key), self.where)
        names = names_arg(a["node"] if "node" in a else a["nodes"], self.where)
        return [sim.node(n, self.where) for n in names]

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        a = self.args
        taint = Taint(key=str(a["key"]), value=str(a.get("value", "")), effect=str(a["effect"]))
        events = []
        for node in self.targets(sim):
            events += set_taints(sim, node, [taint], [])
        return StepResult(events)


def _check_taint(a: Mapping[str, Any], where: str) -> None:
    """The taint's key and value, typed and checked as the API server checks a node's taints.

    Upstream: validateNodeTaints (pkg/apis/core/validation/validation.go, v1.35)
    """
    key = a["key"]
    if not isinstance(key, str):
        raise ManifestError(f"{where}: key: expected a taint key")
    errors = validate_label_name(key, FieldPath.root("key"))
    if "value" in a:
        value = a["value"]
        if not isinstance(value, str):
            raise ManifestError(f"{where}: value: expected a string")
        detail = is_valid_label_value(value)
        if detail:
            errors.append(invalid(FieldPath.root("value"), value, ";".join(detail)))
    if errors:
        raise ManifestError(f"{where}: {errors[0]}")


@dataclass(frozen=True, slots=True, kw_only=True)
class UntaintNodes(TaintNodes):
    """``untaint``: ``{node | nodes | zone, zoneKey?, key, effect?}``: remove the taints of
    that key (and effect, if given)."""

    action = "untaint"
    required: ClassVar[tuple[str, ...]] = ("key",)

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        a = self.args
        events = []
        for node in self.targets(sim):
            gone = [
                t
                for t in node.spec.taints
                if t.key == a["key"] and ("effect" not in a or t.effect == a["effect"])
            ]
            events += set_taints(sim, node, [], gone)
        return StepResult(events)


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveNode(Step):
    """``removeNode``: a node name or a list; the nodes are deleted and the pod garbage
    collector deletes their pods. A node of a Karpenter NodePool (in the ``autoscaler:``
    section) carries Karpenter's termination finalizer: it stays while Karpenter drains it
    (simulator/karpenter_termination.py), and goes at a later tick."""

    action = "removeNode"
    nodes: tuple[str, ...]

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        return cls(args=args, where=where, nodes=tuple(names_arg(args, where)))

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        events = []
        for name in self.nodes:
            sim.node(name, self.where)
            auto = sim.autoscaler
            if auto is not None and auto.delete_node(sim, name, self.where):
                events.append(
                    f"deleted node {name}: Karpenter's termination finalizer holds it while "
                    "its nodeclaim's termination drains it"
                )
                continue
            deleted = sim.remove_node(name)
            events.append(f"removed node {name}; its pods were deleted: {count_text(deleted)}")
        return StepResult(events)


__all__ = [
    "Cordon",
    "Drain",
    "RemoveNode",
    "TaintNodes",
    "Uncordon",
    "UntaintNodes",
    "drain_args",
    "set_unschedulable",
]
