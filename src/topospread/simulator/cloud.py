"""What the cloud does on the simulation's clock, apart from the cluster: stock-outs (a zone
or an instance type that cannot be provisioned for a while) and nodes still starting up.
The ``stockout`` and ``addNodes`` steps write it; ``addNodes`` reads the stock-outs and
``wait`` makes the started nodes Ready at their times. An autoscaler reads the same state."""

from __future__ import annotations

from dataclasses import dataclass, field

from topospread.simulator.clock import format_duration
from topospread.util.natural import natural_key


@dataclass(frozen=True, slots=True)
class Stockout:
    """No new node of ``instance_type`` (any, when empty) in ``zone`` (any, when empty) from
    ``since`` until ``until`` (the clock's nanoseconds)."""

    zone: str
    instance_type: str
    since: int
    until: int

    def covers(self, zone: str, instance_type: str, now: int) -> bool:
        return (
            self.since <= now < self.until
            and (not self.zone or self.zone == zone)
            and (not self.instance_type or self.instance_type == instance_type)
        )

    def what(self) -> str:
        """``new 4cpu-16Gi nodes in zone a``, ``new nodes in zone a``, ``new 4cpu-16Gi nodes``."""
        kind = f"new {self.instance_type} nodes" if self.instance_type else "new nodes"
        return kind + (f" in zone {self.zone}" if self.zone else "")

    def text(self) -> str:
        return f"no {self.what()} until {format_duration(self.until)}"


@dataclass(slots=True)
class CloudState:
    """The stock-outs declared so far and the nodes not yet started (name -> Ready time)."""

    stockouts: list[Stockout] = field(default_factory=list)
    starting: dict[str, int] = field(default_factory=dict)

    def stocked_out(self, zone: str, instance_type: str, now: int) -> Stockout | None:
        """The stock-out that keeps a node of ``instance_type`` in ``zone`` from being
        provisioned now (the one that lasts longest), if any."""
        covering = [s for s in self.stockouts if s.covers(zone, instance_type, now)]
        return max(covering, key=lambda s: s.until, default=None)

    def ended(self, after: int, until: int) -> list[Stockout]:
        """The stock-outs that end in (``after``, ``until``], by end time."""
        over = [s for s in self.stockouts if after < s.until <= until]
        return sorted(over, key=lambda s: s.until)

    def due_startups(self, until: int) -> list[tuple[int, list[str]]]:
        """Take the nodes whose start-up ends by ``until``: (time, names) by time."""
        due: dict[int, list[str]] = {}
        for name, at in sorted(
            self.starting.items(), key=lambda item: (item[1], natural_key(item[0]))
        ):
            if at <= until:
                due.setdefault(at, []).append(name)
        for names in due.values():
            for name in names:
                del self.starting[name]
        return sorted(due.items())


__all__ = ["CloudState", "Stockout"]
