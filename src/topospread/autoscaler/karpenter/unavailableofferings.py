"""Karpenter's unavailable-offerings cache: offerings a launch found out of capacity.

Karpenter does not know a cloud's stock-outs ahead: it learns of one when a launch of an
offering fails with an insufficient-capacity error, and then leaves that offering (instance
type, zone, capacity type) out of its instance types for a while (3 minutes in the AWS
provider) before trying it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from topospread.autoscaler.karpenter.instancetypes import InstanceType, stock_out

# Upstream: UnavailableOfferingsTTL (karpenter-provider-aws pkg/cache/cache.go), 3m.
UNAVAILABLE_OFFERINGS_TTL: Final = 180.0

OfferingKey = tuple[str, str, str]  # instance type, zone, capacity type


@dataclass(slots=True)
class UnavailableOfferings:
    """Offerings marked unavailable, each until its entry expires (seconds).

    Upstream: cache.UnavailableOfferings (MarkUnavailable, IsUnavailable)
    """

    ttl: float = UNAVAILABLE_OFFERINGS_TTL
    until: dict[OfferingKey, float] = field(default_factory=dict)

    def mark_unavailable(self, now: float, instance_type: str, zone: str, capacity: str) -> None:
        self.until[(instance_type, zone, capacity)] = now + self.ttl

    def is_unavailable(self, now: float, instance_type: str, zone: str, capacity: str) -> bool:
        return self.until.get((instance_type, zone, capacity), float("-inf")) > now

    def active(self, now: float) -> tuple[OfferingKey, ...]:
        """The entries that have not expired at ``now``, sorted (older ones are dropped)."""
        self.until = {k: t for k, t in self.until.items() if t > now}
        return tuple(sorted(self.until))

    def apply(self, types: Iterable[InstanceType], now: float) -> list[InstanceType]:
        """The instance types with the cached offerings unavailable."""
        out = list(types)
        for instance_type, zone, capacity in self.active(now):
            out = stock_out(out, zone=zone, instance_type=instance_type, capacity_type=capacity)
        return out


__all__ = ["UNAVAILABLE_OFFERINGS_TTL", "UnavailableOfferings"]
