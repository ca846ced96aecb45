"""What a cloud provisions: ``addNodes`` (more nodes of a node group)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from topospread.errors import ManifestError
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.arguments import count_arg, mapping_arg
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class AddNodes(Step):
    """``addNodes``: ``{group, zone?, count?}``: ``count`` (1) more nodes of a node group, in
    ``zone`` when the group spreads over zones."""

    action = "addNodes"
    group: Any  # a group's name; resolved when the step runs
    zone: Any
    count: int

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        a = mapping_arg(args, where, required=("group",), allowed=("group", "zone", "count"))
        count = count_arg(a.get("count", 1), f"{where}: count")
        return cls(
            args=args,
            where=where,
            group=a["group"],
            zone=a.get("zone", ""),
            count=count,
        )

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        group = sim.scenario.groups.get(str(self.group))
        if group is None:
            known = ", ".join(sorted(sim.scenario.groups)) or "none"
            raise ManifestError(
                f'{self.where}: group: Not found: "{self.group}": no such node group '
                f"(groups: {known})"
            )
        zone = self.zone
        if group.zones and not zone:
            raise ManifestError(
                f"{self.where}: zone: Required value: group {group.name} spreads over zones"
            )
        if not isinstance(zone, str):
            raise ManifestError(f"{self.where}: zone: expected a zone name")
        where_to = f" ({group.zone_key}={zone})" if zone else ""
        names = sim.add_group_nodes(group, zone, self.count, self.where)
        events = [f"added node {n}{where_to}" for n in names]
        return StepResult(events)


__all__ = ["AddNodes"]
