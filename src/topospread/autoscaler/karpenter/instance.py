"""The cloud provider's launch of a nodeclaim: which capacity type, and which offerings in what
order, as the AWS provider's ``instance.DefaultProvider.Create`` asks EC2 for an instance.

Karpenter's core leaves the launch to the cloud provider. The AWS provider (whose catalogue,
prices and unavailable-offerings TTL this model uses) picks **one capacity type per launch**:
spot when the nodeclaim's ``karpenter.sh/capacity-type`` requirement allows it and an option
has an available compatible spot offering (after dropping spot offerings dearer than the
cheapest on-demand one), else on-demand. It then sends one CreateFleet request whose overrides
are every available compatible offering of that capacity type (each instance type in each
zone); the fleet launches the lowest-priced one it can serve (on-demand ``lowest-price``; spot
``price-capacity-optimized``, taken here as lowest price since the model has no capacity
pools). Offerings the fleet finds out of capacity go into the unavailable-offerings cache; when
none can be served the launch fails with an insufficient-capacity error and the nodeclaim is
deleted, so a spot launch falls back to on-demand only on a later pass, once the spot
offerings are cached (kubernetes-sigs/karpenter's kwok provider instead launches the cheapest
available offering of any capacity type and never runs out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from topospread.autoscaler.karpenter.instancetypes import InstanceType, Offering
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_SPOT,
    Requirements,
)


@dataclass(frozen=True, slots=True)
class Override:
    """One instance type in one zone of a CreateFleet request (an available offering)."""

    instance_type: InstanceType
    offering: Offering


def spot_offering_filter(
    options: Sequence[InstanceType], reqs: Requirements
) -> list[tuple[InstanceType, list[Offering]]]:
    """Each option with its available offerings compatible with ``reqs``; when ``reqs`` allow
    both capacity types and both are offered, without the spot offerings dearer than the
    cheapest on-demand one (an option left with none is dropped).
    Upstream: instancefilter.SpotOfferingFilter (karpenter-provider-aws
    pkg/providers/instance/filter/filter.go)"""
    offered = [(it, it.compatible_offerings(reqs)) for it in options]
    offered = [(it, ofs) for it, ofs in offered if ofs]
    ct = reqs.get_or_exists(CAPACITY_TYPE_LABEL)
    if not (ct.has(CAPACITY_TYPE_ON_DEMAND) and ct.has(CAPACITY_TYPE_SPOT)):
        return offered
    all_offerings = [o for _, ofs in offered for o in ofs]
    on_demand = [o.price for o in all_offerings if o.capacity_type == CAPACITY_TYPE_ON_DEMAND]
    if not on_demand or not any(o.capacity_type == CAPACITY_TYPE_SPOT for o in all_offerings):
        return offered
    cheapest = min(on_demand)
    out = []
    for it, ofs in offered:
        kept = [
            o for o in ofs if not (o.capacity_type == CAPACITY_TYPE_SPOT and o.price > cheapest)
        ]
        if kept:
            out.append((it, kept))
    return out


def capacity_type(
    offered: Sequence[tuple[InstanceType, list[Offering]]], reqs: Requirements
) -> str:
    """Spot when ``reqs`` allow it and an option has an available compatible spot offering,
    else on-demand. Upstream: getCapacityType (instance.go; reserved capacity not modelled)"""
    if reqs.get_or_exists(CAPACITY_TYPE_LABEL).has(CAPACITY_TYPE_SPOT) and any(
        o.capacity_type == CAPACITY_TYPE_SPOT for _, ofs in offered for o in ofs
    ):
        return CAPACITY_TYPE_SPOT
    return CAPACITY_TYPE_ON_DEMAND


def fleet_overrides(options: Sequence[InstanceType], reqs: Requirements) -> list[Override]:
    """The CreateFleet request for a nodeclaim with instance-type ``options`` and requirements
    ``reqs``: every available compatible offering of the launch's one capacity type, in the
    order the fleet tries them (lowest price first; ties by instance type, then zone).
    Upstream: DefaultProvider.Create, filterInstanceTypes and getOverrides (instance.go)"""
    offered = spot_offering_filter(options, reqs)
    chosen = capacity_type(offered, reqs)
    out = [Override(it, o) for it, ofs in offered for o in ofs if o.capacity_type == chosen]
    return sorted(out, key=lambda ov: (ov.offering.price, ov.instance_type.name, ov.offering.zone))


__all__ = ["Override", "capacity_type", "fleet_overrides", "spot_offering_filter"]
