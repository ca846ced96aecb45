"""Changes to a node's taints and Ready condition as the node lifecycle controller and kubectl
write them, shared by the steps that cordon, taint, lose, restore and start nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

import msgspec

from topospread.api.admission import TAINT_NODE_NOT_READY, TAINT_NODE_UNREACHABLE
from topospread.api.types import (
    CONDITION_TRUE,
    CONDITION_UNKNOWN,
    NODE_READY,
    Node,
    NodeCondition,
    Taint,
)
from topospread.simulator.clock import format_duration
from topospread.simulator.controllers.common import format_time

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

# NodeConditionStatus "False" (api/types.py names only True and Unknown).
CONDITION_FALSE: Final = "False"
EFFECT_NO_SCHEDULE: Final = "NoSchedule"
EFFECT_NO_EXECUTE: Final = "NoExecute"

# The node lifecycle controller's taints for a node whose kubelet stopped reporting.
UNREACHABLE_TAINTS: Final = (
    Taint(key=TAINT_NODE_UNREACHABLE, effect=EFFECT_NO_SCHEDULE),
    Taint(key=TAINT_NODE_UNREACHABLE, effect=EFFECT_NO_EXECUTE),
)
# Its taints for a node whose kubelet reports Ready=False, as a new node's does while it
# starts (TaintNodesByCondition's NoSchedule, doNoExecuteTaintingPass's NoExecute).
NOT_READY_TAINTS: Final = (
    Taint(key=TAINT_NODE_NOT_READY, effect=EFFECT_NO_SCHEDULE),
    Taint(key=TAINT_NODE_NOT_READY, effect=EFFECT_NO_EXECUTE),
)
# The Ready condition the node lifecycle controller writes when the kubelet stops posting
# (tryUpdateNodeHealth, NodeStatusUnknown), and the one the kubelet posts when it is back.
READY_UNKNOWN: Final = NodeCondition(
    type=NODE_READY, status=CONDITION_UNKNOWN, reason="NodeStatusUnknown"
)
READY_TRUE: Final = NodeCondition(type=NODE_READY, status=CONDITION_TRUE, reason="KubeletReady")
# What a starting kubelet posts until its runtime and network are up (KubeletNotReady).
READY_FALSE_STARTING: Final = NodeCondition(
    type=NODE_READY, status=CONDITION_FALSE, reason="KubeletNotReady"
)


def set_taints(
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
        # The condition's lastTransitionTime moves only when its status changes.
        old = ready_condition(node)
        same = old is not None and old.status == ready.status
        since = old.last_transition_time if old is not None and same else stamp_time
        ready = msgspec.structs.replace(ready, last_transition_time=since)
        others = [c for c in status.conditions if c.type != NODE_READY]
        status = msgspec.structs.replace(status, conditions=[ready, *others])
    updated = msgspec.structs.replace(
        node, spec=msgspec.structs.replace(node.spec, taints=kept), status=status
    )
    changes = sim.update_node(updated)
    parts = [what] if what else []
    if add:
        parts.append(f"tainted {taints_text(add)}")
    if remove:
        parts.append(f"untainted {taints_text(remove)}")
    parts += changes.text()
    return [f"{node.metadata.name}: {'; '.join(parts) or 'no change'}"]


def start_nodes(sim: Simulation, names: Sequence[str], delay: int, where: str) -> list[str]:
    """New nodes whose kubelets start up for ``delay`` nanoseconds: NotReady, tainted
    not-ready (NoSchedule, NoExecute) until then; ``wait`` makes them Ready at that time."""
    ready_at = sim.now + delay
    what = f"NotReady (starting up, Ready at {format_duration(ready_at)})"
    events = []
    for name in names:
        sim.cloud.starting[name] = ready_at
        node = sim.node(name, where)
        events += set_taints(sim, node, NOT_READY_TAINTS, [], what, READY_FALSE_STARTING)
    return events


def taints_text(taints: Sequence[Taint]) -> str:
    """``key=value (NoSchedule, NoExecute)``: the effects of one key and value together."""
    effects: dict[str, list[str]] = {}
    for t in taints:
        effects.setdefault(f"{t.key}{'=' + t.value if t.value else ''}", []).append(t.effect)
    return ", ".join(f"{k} ({', '.join(e)})" for k, e in effects.items())


def ready_condition(node: Node) -> NodeCondition | None:
    return next((c for c in node.status.conditions if c.type == NODE_READY), None)


def is_starting(node: Node) -> bool:
    """Whether the node's kubelet posts what a starting one does (``READY_FALSE_STARTING``)."""
    cond = ready_condition(node)
    return cond is not None and (cond.status, cond.reason) == (
        READY_FALSE_STARTING.status,
        READY_FALSE_STARTING.reason,
    )


__all__ = [
    "EFFECT_NO_EXECUTE",
    "EFFECT_NO_SCHEDULE",
    "NOT_READY_TAINTS",
    "READY_FALSE_STARTING",
    "READY_TRUE",
    "READY_UNKNOWN",
    "UNREACHABLE_TAINTS",
    "is_starting",
    "ready_condition",
    "set_taints",
    "start_nodes",
    "taints_text",
]
