"""The timeline's steps, each carried out on a Simulation: ``apply_step(sim, step)`` makes the
step's own change (before the controllers and the scheduler react) and says what it did;
``Simulation.settle`` then lets the cluster react.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.api.admission import (
    TAINT_NODE_UNREACHABLE,
)
from topospread.api.loader import (
    decode_manifests,
    decode_object,
)
from topospread.api.types import (
    CONDITION_TRUE,
    CONDITION_UNKNOWN,
    LABEL_TOPOLOGY_ZONE,
    NODE_READY,
    DaemonSet,
    Deployment,
    Node,
    NodeCondition,
    Pod,
    PodTemplateSpec,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    Taint,
)
from topospread.errors import ManifestError, TopospreadError
from topospread.simulator.clock import format_duration
from topospread.simulator.controllers.common import (
    format_time,
)
from topospread.simulator.drain import DrainResult, drain_node
from topospread.simulator.simulation import (
    Simulation,
    count_text,
    describe_workload,
    ran_out_text,
    workload_key,
)
from topospread.simulator.timeline_format import Step, drain_args, names_arg, wait_args

EFFECT_NO_SCHEDULE: Final = "NoSchedule"
EFFECT_NO_EXECUTE: Final = "NoExecute"


def _step_apply(sim: Simulation, step: Step) -> list[str]:
    raw = step.args if isinstance(step.args, list) else [step.args]
    events = []
    for i, item in enumerate(raw):
        where = f"{step.where}[{i}]"
        for obj in decode_manifests(item, where):
            events.append(sim.apply(obj, where))
    return events


def _step_scale(sim: Simulation, step: Step) -> list[str]:
    obj = sim.find_workload(step.args["workload"], step.where)
    replicas = step.args["replicas"]
    if not isinstance(obj, (Deployment, ReplicaSet, ReplicationController, StatefulSet)):
        raise ManifestError(
            f"{step.where}: workload: {obj.kind} {obj.metadata.name} has no replicas to scale "
            "(Deployments, ReplicaSets, ReplicationControllers and StatefulSets do)"
        )
    before = obj.spec.replicas if obj.spec.replicas is not None else 1
    spec = msgspec.structs.replace(obj.spec, replicas=replicas)
    sim.workloads[workload_key(obj)] = msgspec.structs.replace(obj, spec=spec)
    sim.refresh_objects()
    return [f"scaled {describe_workload(workload_key(obj))} from {before} to {replicas} replicas"]


def merge_patch(target: Any, patch: Any) -> Any:
    """A JSON merge patch (RFC 7386: mappings merge key by key, ``null`` deletes, the rest
    replaces) that, like kubectl's strategic merge patch for containers, merges lists whose
    entries all have a ``name`` entry by entry, by name (new names are appended)."""
    if _named_list(target) and _named_list(patch):
        merged = {item["name"]: item for item in target}
        for item in patch:
            merged[item["name"]] = merge_patch(merged.get(item["name"]), item)
        return list(merged.values())
    if not isinstance(patch, Mapping):
        return patch
    out = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _named_list(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, Mapping) and "name" in v for v in value)
    )


def _step_rollout(sim: Simulation, step: Step) -> list[str]:
    obj = sim.find_workload(step.args["workload"], step.where)
    if not isinstance(obj, (Deployment, StatefulSet, DaemonSet)):
        raise ManifestError(
            f"{step.where}: workload: a {obj.kind} does not roll out "
            "(Deployments, StatefulSets and DaemonSets do)"
        )
    if "patch" in step.args:
        raw = merge_patch(msgspec.to_builtins(obj.spec.template), step.args["patch"])
        field_name = "patch"
    else:
        raw, field_name = step.args["template"], "template"
    where = f"{step.where}: {field_name}"
    template = decode_template(raw, where)
    spec = msgspec.structs.replace(obj.spec, template=template)
    new = msgspec.structs.replace(obj, spec=spec)
    if new.spec.template == obj.spec.template:
        return [f"{describe_workload(workload_key(obj))}: the template is unchanged; no rollout"]
    sim.apply(new, where)
    return [f"rolled out a new template for {describe_workload(workload_key(obj))}"]


def decode_template(raw: Any, where: str) -> PodTemplateSpec:
    """A pod template from parsed data, with the loader's errors (field paths, types)."""
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a pod template (metadata, spec)")
    pod = decode_object({**raw, "apiVersion": "v1", "kind": "Pod"}, Pod, where)
    return PodTemplateSpec(metadata=pod.metadata, spec=pod.spec)


def _step_cordon(sim: Simulation, step: Step, *, unschedulable: bool) -> list[str]:
    return _cordon(sim, names_arg(step.args, step.where), step.where, unschedulable=unschedulable)


def _cordon(sim: Simulation, names: list[str], where: str, *, unschedulable: bool) -> list[str]:
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


def _step_drain(sim: Simulation, step: Step, drains: list[DrainResult]) -> list[str]:
    """kubectl drain --ignore-daemonsets: cordon every node, then drain them one by one
    (simulator/drain.py)."""
    names, options = drain_args(step.args, step.where)
    events = _cordon(sim, names, step.where, unschedulable=True)
    for name in names:
        result = drain_node(sim, name, options, step.where)
        drains.append(result)
        events += _drain_events(result)
    return events


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


def _targets(sim: Simulation, step: Step) -> list[Node]:
    a = step.args
    if "zone" in a:
        zone_key = a.get("zoneKey", LABEL_TOPOLOGY_ZONE)
        return sim.zone_nodes(str(a["zone"]), str(zone_key), step.where)
    names = names_arg(a["node"] if "node" in a else a["nodes"], step.where)
    return [sim.node(n, step.where) for n in names]


def _step_taint(sim: Simulation, step: Step) -> list[str]:
    a = step.args
    taint = Taint(key=str(a["key"]), value=str(a.get("value", "")), effect=str(a["effect"]))
    events = []
    for node in _targets(sim, step):
        events += _set_taints(sim, node, [taint], [])
    return events


def _step_untaint(sim: Simulation, step: Step) -> list[str]:
    a = step.args
    events = []
    for node in _targets(sim, step):
        gone = [
            t
            for t in node.spec.taints
            if t.key == a["key"] and ("effect" not in a or t.effect == a["effect"])
        ]
        events += _set_taints(sim, node, [], gone)
    return events


def _set_taints(
    sim: Simulation,
    node: Node,
    add: Sequence[Taint],
    remove: Sequence[Taint],
    what: str = "",
    ready: NodeCondition | None = None,
) -> list[str]:
    """Replace the node's taints (a NoExecute one added records its timeAdded, as kubectl
    and the node lifecycle controller write it) and, given ``ready``, its Ready condition;
    then let the taint manager act; one line of report."""
    stamp_time = format_time(sim.epoch + sim.now)
    added = [
        msgspec.structs.replace(t, time_added=stamp_time) if t.effect == EFFECT_NO_EXECUTE else t
        for t in add
    ]
    kept = [t for t in node.spec.taints if t not in remove]
    kept += [t for t in added if not any(k.key == t.key and k.effect == t.effect for k in kept)]
    status = node.status
    if ready is not None:
        others = [c for c in status.conditions if c.type != NODE_READY]
        status = msgspec.structs.replace(status, conditions=[ready, *others])
    updated = msgspec.structs.replace(
        node, spec=msgspec.structs.replace(node.spec, taints=kept), status=status
    )
    changes = sim.update_node(updated)
    parts = [what] if what else []
    if add:
        parts.append(f"tainted {_taints_text(add)}")
    if remove:
        parts.append(f"untainted {_taints_text(remove)}")
    parts += changes.text()
    return [f"{node.metadata.name}: {'; '.join(parts) or 'no change'}"]


def _taints_text(taints: Sequence[Taint]) -> str:
    """``key=value (NoSchedule, NoExecute)``: the effects of one key and value together."""
    effects: dict[str, list[str]] = {}
    for t in taints:
        effects.setdefault(f"{t.key}{'=' + t.value if t.value else ''}", []).append(t.effect)
    return ", ".join(f"{k} ({', '.join(e)})" for k, e in effects.items())


def _step_add_nodes(sim: Simulation, step: Step) -> list[str]:
    a = step.args
    group = sim.scenario.groups.get(str(a["group"]))
    if group is None:
        known = ", ".join(sorted(sim.scenario.groups)) or "none"
        raise ManifestError(
            f'{step.where}: group: Not found: "{a["group"]}": no such node group (groups: {known})'
        )
    zone = a.get("zone", "")
    if group.zones and not zone:
        raise ManifestError(
            f"{step.where}: zone: Required value: group {group.name} spreads over zones"
        )
    if not isinstance(zone, str):
        raise ManifestError(f"{step.where}: zone: expected a zone name")
    names = sim.add_group_nodes(group, zone, a.get("count", 1), step.where)
    return [f"added node {n}" + (f" ({group.zone_key}={zone})" if zone else "") for n in names]


def _step_remove_node(sim: Simulation, step: Step) -> list[str]:
    events = []
    for name in names_arg(step.args, step.where):
        sim.node(name, step.where)
        deleted = sim.remove_node(name)
        events.append(f"removed node {name}; its pods were deleted: {count_text(deleted)}")
    return events


# The node lifecycle controller's taints for a node whose kubelet stopped reporting.
UNREACHABLE_TAINTS: Final = (
    Taint(key=TAINT_NODE_UNREACHABLE, effect=EFFECT_NO_SCHEDULE),
    Taint(key=TAINT_NODE_UNREACHABLE, effect=EFFECT_NO_EXECUTE),
)
# The Ready condition the node lifecycle controller writes when the kubelet stops posting
# (tryUpdateNodeHealth, NodeStatusUnknown), and the one the kubelet posts when it is back.
READY_UNKNOWN: Final = NodeCondition(
    type=NODE_READY, status=CONDITION_UNKNOWN, reason="NodeStatusUnknown"
)
READY_TRUE: Final = NodeCondition(type=NODE_READY, status=CONDITION_TRUE, reason="KubeletReady")


def _zone_args(step: Step) -> tuple[str, str]:
    a = step.args
    if isinstance(a, Mapping):
        return str(a["zone"]), str(a.get("zoneKey", LABEL_TOPOLOGY_ZONE))
    return str(a), LABEL_TOPOLOGY_ZONE


def _step_lose_zone(sim: Simulation, step: Step) -> list[str]:
    """A zone outage: every node of the zone turns NotReady (Unknown) and the node lifecycle
    controller taints it node.kubernetes.io/unreachable NoSchedule and NoExecute; the taint
    manager evicts the pods that do not tolerate that for ever. The nodes remain."""
    zone, zone_key = _zone_args(step)
    return _lose(sim, sim.zone_nodes(zone, zone_key, step.where))


def _step_restore_zone(sim: Simulation, step: Step) -> list[str]:
    zone, zone_key = _zone_args(step)
    return _restore(sim, sim.zone_nodes(zone, zone_key, step.where))


def _step_lose_nodes(sim: Simulation, step: Step) -> list[str]:
    """Nodes whose kubelet stopped reporting (a crashed or cut-off machine): NotReady and
    tainted unreachable, as in a zone outage; the nodes remain."""
    return _lose(sim, [sim.node(n, step.where) for n in names_arg(step.args, step.where)])


def _step_restore_nodes(sim: Simulation, step: Step) -> list[str]:
    return _restore(sim, [sim.node(n, step.where) for n in names_arg(step.args, step.where)])


def _lose(sim: Simulation, nodes: list[Node]) -> list[str]:
    events = []
    for node in nodes:
        events += _set_taints(
            sim, node, UNREACHABLE_TAINTS, [], "NotReady (unreachable)", READY_UNKNOWN
        )
    return events


def _restore(sim: Simulation, nodes: list[Node]) -> list[str]:
    events = []
    for node in nodes:
        gone = [t for t in node.spec.taints if t.key == TAINT_NODE_UNREACHABLE]
        events += _set_taints(sim, node, [], gone, "Ready again", READY_TRUE)
    return events


def _step_wait(sim: Simulation, step: Step) -> list[str]:
    """Move the clock on; the evictions that fall due meanwhile happen at their times."""
    until = sim.now + wait_args(step.args, step.where)
    fired = sim.fire_due_evictions(until, step.where)
    sim.now = until
    head = f"waited {step.args} (now {format_duration(until)})"
    parts = [
        ran_out_text(keys, taints) + (f" at {format_duration(at)}" if at != until else "")
        for at, taints, keys in fired
    ]
    if not parts:
        parts.append("no eviction fell due")
    if sim.taint_evictions.work:
        n = len(sim.taint_evictions.work)
        next_at = min(w.fire_at for w in sim.taint_evictions.work.values())
        parts.append(
            f"{n} more eviction{'s' if n != 1 else ''} scheduled, the next at "
            f"{format_duration(next_at)}"
        )
    return [f"{head}: {'; '.join(parts)}"]


def _step_delete_pods(sim: Simulation, step: Step) -> list[str]:
    pods = [sim.find_pod(n, step.where) for n in names_arg(step.args, step.where)]
    for pod in pods:
        sim.delete_pod(pod)
    return [f"deleted {count_text([p.key for p in pods])}"]


_HANDLERS: Final[Mapping[str, Callable[[Simulation, Step], list[str]]]] = {
    "apply": _step_apply,
    "scale": _step_scale,
    "rollout": _step_rollout,
    "cordon": lambda sim, step: _step_cordon(sim, step, unschedulable=True),
    "uncordon": lambda sim, step: _step_cordon(sim, step, unschedulable=False),
    "taint": _step_taint,
    "untaint": _step_untaint,
    "addNodes": _step_add_nodes,
    "removeNode": _step_remove_node,
    "loseZone": _step_lose_zone,
    "restoreZone": _step_restore_zone,
    "loseNode": _step_lose_nodes,
    "restoreNode": _step_restore_nodes,
    "deletePods": _step_delete_pods,
    "wait": _step_wait,
}


@dataclass(slots=True)
class StepResult:
    """What a step's own change did: report lines, and the drains it ran (one per node)."""

    events: list[str]
    drains: list[DrainResult] = field(default_factory=list)


def apply_step(sim: Simulation, step: Step) -> StepResult:
    """Carry out one step's own change (before the controllers and the scheduler react, which
    ``sim.settle`` then lets them do); errors name the step."""
    try:
        if step.action == "drain":
            drains: list[DrainResult] = []
            return StepResult(_step_drain(sim, step, drains), drains)
        handler = _HANDLERS.get(step.action)
        if handler is None:  # rebalance: analysis.timeline.carry_out plans it
            raise ManifestError(f"{step.where}: the simulator alone cannot carry out this step")
        return StepResult(handler(sim, step))
    except TopospreadError as err:
        if str(err).startswith(step.where):
            raise
        raise type(err)(f"{step.where}: {err}") from err


__all__ = ["UNREACHABLE_TAINTS", "StepResult", "apply_step", "decode_template", "merge_patch"]
