"""``sweep --autoscaler``: after each failure, the autoscaler (cluster-autoscaler or Karpenter,
simulator/autoscaling.py) acts on the clock until nothing is Pending, or a time limit passes.

The recovery is a ``wait`` in the run's replay recipe: the clock moves on from the end of the
failure's steps, the autoscaler acting at its ticks in order with the taint manager and the
nodes starting up (timeline_steps/waiting.py: ``settle_with_autoscaler``), and the run records
the wait it took, so ``simulate`` with the run's timeline (and the same ``autoscaler:``
section) replays it. A lost zone is also stocked out while it is lost: a dark zone's cloud
cannot create nodes there (enhancements#3990's partial-zone-failure case), so an autoscaler
that would add nodes in the lost zone says why it cannot instead of recovering into it.

Per run the report says whether the cluster recovered within the limit, how long it took
(simulated time since the failure's steps ended: the evicted pods' replacements went Pending
then), the nodes added and removed per node group (NodePool), the node groups' sizes after,
and what the autoscaler could not do (stock-outs, provisioning time-outs, pods no group
helps, scale-downs a budget blocked).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from topospread.simulator.autoscaling import NodeChange, pending_pods
from topospread.simulator.clock import SECOND, format_duration, seconds
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.provisioning import Stockout
from topospread.simulator.timeline_steps.waiting import Wait, settle_with_autoscaler

# How long the autoscaler gets after a failure, by default: past cluster-autoscaler's
# max-node-provision-time (15m) and its back-off, so a stock-out's time-out is seen.
DEFAULT_RECOVERY_LIMIT: Final = 30 * 60 * SECOND
# NodeChange actions (simulator/autoscaling.py): a node added or removed, and the
# autoscaler's own reasons for what it could not do.
_ADD: Final = "add"
_REMOVE: Final = "remove"
_FAILED_ACTIONS: Final = ("stockout", "timeout", "noScaleUp", "blocked")
RECOVERY_STEP: Final = "the autoscaler acts"


class Recovery(msgspec.Struct, frozen=True, rename="camel"):
    """What the autoscaler made of one failure (or of the base state)."""

    autoscaler: str
    recovered: bool
    # Seconds from the end of the failure's steps until nothing was Pending and no node was
    # starting up; None when the limit passed first.
    took: float | None
    limit: float
    pending_before: int
    added: dict[str, int]
    removed: dict[str, int]
    node_groups: dict[str, int]
    reasons: list[str]
    changes: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


@dataclass(frozen=True, slots=True)
class AutoscalerInfo:
    """The autoscaler of a sweep: its name, how long it may act after each failure
    (nanoseconds), and what it made of each seed's base state."""

    name: str
    limit: int
    base: dict[int, Recovery]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "recoveryLimit": seconds(self.limit),
            "base": {str(s): r.to_json() for s, r in self.base.items()},
        }


def zone_stockout(zone: str, duration: int) -> dict[str, Any]:
    """The step that keeps the cloud from creating nodes in a lost zone while it is lost."""
    return Stockout.entry(
        {"zone": zone, "duration": format_duration(duration)}, f"no new nodes in {zone}"
    )


def recover(sim: Simulation, limit: int, where: str) -> tuple[Recovery, dict[str, Any] | None]:
    """Let the autoscaler act for at most ``limit`` nanoseconds: the recovery, and the
    ``wait`` step that replays it (None when no time passed: nothing was Pending). The
    changes taken are every change since the last ``take_changes`` (the run's start)."""
    auto = sim.autoscaler
    assert auto is not None
    before = len(pending_pods(sim))
    start = sim.now
    took = settle_with_autoscaler(sim, limit, where)
    waited = sim.now - start
    step = Wait.entry(format_duration(waited), RECOVERY_STEP) if waited > 0 else None
    changes = auto.take_changes()
    recovery = summarize_changes(
        auto.name, changes, auto.group_sizes(sim), took=took, limit=limit, pending_before=before
    )
    return recovery, step


def summarize_changes(
    autoscaler: str,
    changes: Sequence[NodeChange],
    sizes: dict[str, int],
    *,
    took: int | None,
    limit: int,
    pending_before: int,
) -> Recovery:
    # The changes by action, each with its place in time order.
    by_action: dict[str, list[tuple[int, NodeChange]]] = {}
    for i, c in enumerate(changes):
        by_action.setdefault(c.action, []).append((i, c))
    added = Counter(c.group for _, c in by_action.get(_ADD, ()))
    removed = Counter(c.group for _, c in by_action.get(_REMOVE, ()))
    failed = sorted(pair for a in _FAILED_ACTIONS for pair in by_action.get(a, ()))
    reasons = list(dict.fromkeys(c.reason for _, c in failed))
    return Recovery(
        autoscaler=autoscaler,
        recovered=took is not None,
        took=None if took is None else seconds(took),
        limit=seconds(limit),
        pending_before=pending_before,
        added=dict(sorted(added.items())),
        removed=dict(sorted(removed.items())),
        node_groups=sizes,
        reasons=reasons,
        changes=[c.to_json() for c in changes],
    )


def recovery_text(r: Recovery) -> str:
    """``recovered in 1m10s: +1 node-zone-a`` or ``NOT recovered within 30m0s: ...``."""
    nodes = ", ".join(
        [f"+{n} {g}" for g, n in r.added.items()] + [f"-{n} {g}" for g, n in r.removed.items()]
    )
    if r.recovered:
        assert r.took is not None
        head = f"recovered in {format_duration(round(r.took * SECOND))}"
    else:
        head = f"NOT recovered within {format_duration(round(r.limit * SECOND))}"
    return f"{head}: {nodes or 'no node added or removed'}"


__all__ = [
    "DEFAULT_RECOVERY_LIMIT",
    "RECOVERY_STEP",
    "AutoscalerInfo",
    "Recovery",
    "recover",
    "recovery_text",
    "summarize_changes",
    "zone_stockout",
]
