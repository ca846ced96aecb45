"""What a cloud provisions and what stops it: ``addNodes`` (more nodes of a node group,
optionally starting up for a while before they are Ready) and ``stockout`` (a zone or an
instance type that cannot be provisioned for a while). Both keep their state in
``Simulation.cloud`` (simulator/cloud.py), on the clock ``wait`` moves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from topospread.api.types import LABEL_INSTANCE_TYPE_STABLE
from topospread.errors import ManifestError
from topospread.simulator.cloud import Stockout as CloudStockout
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_steps.arguments import (
    count_arg,
    duration_arg,
    mapping_arg,
    string_arg,
)
from topospread.simulator.timeline_steps.node_status import start_nodes
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult


@dataclass(frozen=True, slots=True, kw_only=True)
class AddNodes(Step):
    """``addNodes``: ``{group, zone?, count?, startupDelay?}``: ``count`` (1) more nodes of a
    node group, in ``zone`` when the group spreads over zones. With ``startupDelay`` the nodes
    register NotReady, tainted node.kubernetes.io/not-ready (NoSchedule, NoExecute) as the
    node lifecycle controller taints a node whose kubelet posts Ready=False, and become Ready
    when the clock has moved that far. Nothing is added where a stock-out holds."""

    action = "addNodes"
    group: str  # a group's name; resolved when the step runs
    zone: str
    count: int
    startup_delay: int

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        a = mapping_arg(
            args, where, required=("group",), allowed=("group", "zone", "count", "startupDelay")
        )
        group = string_arg(a, "group", where, "a node group's name") or ""
        zone = string_arg(a, "zone", where, "a zone name") or ""
        count = count_arg(a.get("count", 1), f"{where}: count")
        delay = a.get("startupDelay")
        nanos = 0 if delay is None else duration_arg(delay, where, "startupDelay")
        return cls(
            args=args,
            where=where,
            group=group,
            zone=zone,
            count=count,
            startup_delay=nanos,
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
        labels = group.template.metadata.labels
        stockout = sim.cloud.stocked_out(
            zone or labels.get(group.zone_key, ""),
            labels.get(LABEL_INSTANCE_TYPE_STABLE, ""),
            sim.now,
        )
        if stockout is not None and self.count:
            return StepResult(
                [f"added no node to group {group.name}{where_to}: stockout, {stockout.text()}"]
            )
        names = sim.add_group_nodes(group, zone, self.count, self.where)
        events = [f"added node {n}{where_to}" for n in names]
        if self.startup_delay:
            events += start_nodes(sim, names, self.startup_delay, self.where)
        return StepResult(events)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stockout(Step):
    """``stockout``: ``{zone?, instanceType?, duration}`` (at least one of zone and
    instanceType): from now, for ``duration``, the cloud cannot provision a node of that
    instance type (``node.kubernetes.io/instance-type``, any when not given) in that zone
    (any, when not given); an ``addNodes`` there adds nothing and says why."""

    action = "stockout"
    zone: str
    instance_type: str
    duration: int

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        a = mapping_arg(
            args, where, required=("duration",), allowed=("zone", "instanceType", "duration")
        )
        if "zone" not in a and "instanceType" not in a:
            raise ManifestError(f"{where}: give zone, instanceType or both")
        for key, what in (("zone", "a zone name"), ("instanceType", "an instance type")):
            if key in a and not (isinstance(a[key], str) and a[key]):
                raise ManifestError(f"{where}: {key}: expected {what}")
        nanos = duration_arg(a["duration"], where, "duration")
        if nanos == 0:
            raise ManifestError(
                f'{where}: duration: Invalid value: "{a["duration"]}": must be more than 0s'
            )
        return cls(
            args=args,
            where=where,
            zone=a.get("zone", ""),
            instance_type=a.get("instanceType", ""),
            duration=nanos,
        )

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        stockout = CloudStockout(self.zone, self.instance_type, sim.now, sim.now + self.duration)
        sim.cloud.stockouts.append(stockout)
        return StepResult([f"stockout: {stockout.text()}"])


__all__ = ["AddNodes", "Stockout"]
