"""The cloud's instance types and their offerings: what Karpenter may launch, where, at what price.

An instance type has the resources a node of that type offers (taken here as its allocatable:
the cloud provider's overhead already subtracted), its architecture, and one offering per zone
and capacity type with a price and an availability flag; a stock-out marks offerings
unavailable. The built-in catalogue holds twelve common AWS types with us-east-1 list prices;
spot prices vary per zone. A file can replace it (``parse_catalogue``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from topospread.api.loader import read_yaml_documents
from topospread.api.resource import parse_quantity
from topospread.api.types import (
    LABEL_ARCH_STABLE,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_ZONE,
)
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_SPOT,
    Requirement,
    Requirements,
)
from topospread.errors import ManifestError

GIB: Final = 1024**3
DEFAULT_ZONES: Final = ("us-east-1a", "us-east-1b", "us-east-1c")


@dataclass(frozen=True, slots=True)
class Offering:
    """Upstream: cloudprovider.Offering (pkg/cloudprovider/types.go)"""

    zone: str
    capacity_type: str
    price: float
    available: bool = True


@dataclass(frozen=True, slots=True)
class InstanceType:
    """Upstream: cloudprovider.InstanceType; ``cpu_milli``/``memory``/``pods`` are allocatable."""

    name: str
    cpu_milli: int
    memory: int
    pods: int
    arch: str = "amd64"
    offerings: tuple[Offering, ...] = ()

    def requirements(self) -> Requirements:
        """The labels a node of this type may carry: its name, arch, os and the zones and
        capacity types it is offered in (available or not, as upstream's)."""
        return Requirements(
            [
                Requirement.new(LABEL_INSTANCE_TYPE_STABLE, "In", [self.name]),
                Requirement.new(LABEL_ARCH_STABLE, "In", [self.arch]),
                Requirement.new(LABEL_OS_STABLE, "In", ["linux"]),
                Requirement.new(LABEL_TOPOLOGY_ZONE, "In", {o.zone for o in self.offerings}),
                Requirement.new(
                    CAPACITY_TYPE_LABEL, "In", {o.capacity_type for o in self.offerings}
                ),
            ]
        )

    def compatible_offerings(self, reqs: Requirements) -> list[Offering]:
        """Available offerings whose zone and capacity type ``reqs`` allow, cheapest first
        (ties by zone, then capacity type)."""
        zone = reqs.get_or_exists(LABEL_TOPOLOGY_ZONE)
        ct = reqs.get_or_exists(CAPACITY_TYPE_LABEL)
        out = [
            o
            for o in self.offerings
            if o.available and zone.has(o.zone) and ct.has(o.capacity_type)
        ]
        return sorted(out, key=lambda o: (o.price, o.zone, o.capacity_type))

    def worst_launch_price(self, reqs: Requirements) -> float:
        """The dearest available offering ``reqs`` allow of the capacity type a launch would
        take (spot before on-demand); infinity when there is none.
        Upstream: Offerings.WorstLaunchPrice (pkg/cloudprovider/types.go; reserved capacity
        not modelled)"""
        offers = self.compatible_offerings(reqs)
        for capacity in (CAPACITY_TYPE_SPOT, CAPACITY_TYPE_ON_DEMAND):
            prices = [o.price for o in offers if o.capacity_type == capacity]
            if prices:
                return max(prices)
        return float("inf")

    def cheapest_price(self, reqs: Requirements) -> float | None:
        offers = self.compatible_offerings(reqs)
        return offers[0].price if offers else None


# name, vCPUs, GiB, max pods, arch, on-demand $/h (us-east-1 list prices).
_BUILTIN: Final = (
    ("t3.medium", 2, 4, 17, "amd64", 0.0416),
    ("t3.large", 2, 8, 35, "amd64", 0.0832),
    ("c5.large", 2, 4, 29, "amd64", 0.085),
    ("c5.xlarge", 4, 8, 58, "amd64", 0.17),
    ("c5.2xlarge", 8, 16, 58, "amd64", 0.34),
    ("m5.large", 2, 8, 29, "amd64", 0.096),
    ("m5.xlarge", 4, 16, 58, "amd64", 0.192),
    ("m5.2xlarge", 8, 32, 58, "amd64", 0.384),
    ("r5.large", 2, 16, 29, "amd64", 0.126),
    ("r5.xlarge", 4, 32, 58, "amd64", 0.252),
    ("m6g.large", 2, 8, 29, "arm64", 0.077),
    ("m6g.xlarge", 4, 16, 58, "arm64", 0.154),
)
# Spot discount per zone position: zones differ, as real spot markets do.
_SPOT_FACTORS: Final = (0.32, 0.35, 0.38, 0.34, 0.36, 0.33)


def builtin_catalogue(zones: Sequence[str] = DEFAULT_ZONES) -> list[InstanceType]:
    """The built-in catalogue, offered on demand and as spot in every zone of ``zones``."""
    out = []
    for name, cpus, gib, pods, arch, price in _BUILTIN:
        offerings = []
        for i, zone in enumerate(zones):
            offerings.append(Offering(zone, CAPACITY_TYPE_ON_DEMAND, price))
            spot = round(price * _SPOT_FACTORS[i % len(_SPOT_FACTORS)], 5)
            offerings.append(Offering(zone, CAPACITY_TYPE_SPOT, spot))
        out.append(InstanceType(name, cpus * 1000, gib * GIB, pods, arch, tuple(offerings)))
    return out


def stock_out(
    types: Iterable[InstanceType],
    *,
    zone: str | None = None,
    instance_type: str | None = None,
    capacity_type: str | None = None,
) -> list[InstanceType]:
    """The catalogue with the matching offerings unavailable (an insufficient-capacity error)."""
    out = []
    for it in types:
        if instance_type is not None and it.name != instance_type:
            out.append(it)
            continue
        offerings = tuple(
            replace(o, available=False)
            if (zone is None or o.zone == zone)
            and (capacity_type is None or o.capacity_type == capacity_type)
            else o
            for o in it.offerings
        )
        out.append(replace(it, offerings=offerings))
    return out


_TYPE_KEYS: Final = ("name", "cpu", "memory", "pods", "arch", "offerings")
_OFFERING_KEYS: Final = ("zone", "capacityType", "price", "available")


def _known(raw: Mapping[str, object], keys: tuple[str, ...], where: str) -> None:
    """An unknown (e.g. misspelled) key is an error, not ignored."""
    unknown = [str(k) for k in raw if k not in keys]
    if unknown:
        raise ManifestError(f"{where}: {unknown[0]}: unknown field; expected {', '.join(keys)}")


def _field(raw: Mapping[str, object], key: str, where: str) -> object:
    if key not in raw:
        raise ManifestError(f"{where}: {key}: Required value")
    return raw[key]


def _parse_offering(raw: object, where: str) -> Offering:
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with zone, capacityType, price")
    _known(raw, _OFFERING_KEYS, where)
    zone = _field(raw, "zone", where)
    ct = raw.get("capacityType", CAPACITY_TYPE_ON_DEMAND)
    price = _field(raw, "price", where)
    available = raw.get("available", True)
    if not isinstance(zone, str) or not zone:
        raise ManifestError(f"{where}: zone: Invalid value: {zone!r}: expected a zone name")
    if ct not in (CAPACITY_TYPE_ON_DEMAND, CAPACITY_TYPE_SPOT):
        raise ManifestError(
            f"{where}: capacityType: Unsupported value: {ct!r}: "
            'supported values: "on-demand", "spot"'
        )
    if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
        raise ManifestError(
            f"{where}: price: Invalid value: {price!r}: expected a price (0 or more)"
        )
    if not isinstance(available, bool):
        raise ManifestError(
            f"{where}: available: Invalid value: {available!r}: expected true or false"
        )
    return Offering(zone, str(ct), float(price), available)


def _quantity(raw: Mapping[str, object], key: str, where: str, milli: bool) -> int:
    value = _field(raw, key, where)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ManifestError(f"{where}: {key}: Invalid value: {value!r}: expected a quantity")
    try:
        q = parse_quantity(value)
    except ValueError as e:
        raise ManifestError(f"{where}: {key}: Invalid value: {value!r}: {e}") from e
    n = q.milli_value() if milli else q.value()
    if n <= 0:
        raise ManifestError(f"{where}: {key}: Invalid value: {value!r}: must be greater than zero")
    return n


def parse_instance_type(raw: object, where: str) -> InstanceType:
    """An instance type from ``{name, cpu, memory, pods, arch, offerings: [{zone, capacityType,
    price, available}]}``."""
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where}: expected a mapping with name, cpu, memory, pods, offerings")
    _known(raw, _TYPE_KEYS, where)
    name = _field(raw, "name", where)
    if not isinstance(name, str) or not name:
        raise ManifestError(f"{where}: name: Invalid value: {name!r}: expected a name")
    pods = raw.get("pods", 110)
    if isinstance(pods, bool) or not isinstance(pods, int) or pods <= 0:
        raise ManifestError(f"{where}: pods: Invalid value: {pods!r}: expected a count above 0")
    arch = raw.get("arch", "amd64")
    if not isinstance(arch, str) or not arch:
        raise ManifestError(f"{where}: arch: Invalid value: {arch!r}: expected an architecture")
    offerings = _field(raw, "offerings", where)
    if not isinstance(offerings, list) or not offerings:
        raise ManifestError(f"{where}: offerings: expected a non-empty list of offerings")
    return InstanceType(
        name,
        _quantity(raw, "cpu", where, milli=True),
        _quantity(raw, "memory", where, milli=False),
        pods,
        arch,
        tuple(_parse_offering(o, f"{where}.offerings[{i}]") for i, o in enumerate(offerings)),
    )


def parse_catalogue(raw: object, where: str) -> list[InstanceType]:
    """A catalogue: a list of instance types with unique names (``where`` names the file)."""
    if isinstance(raw, Mapping):
        _known(raw, ("instanceTypes",), where)
        raw, where = raw.get("instanceTypes"), f"{where}: instanceTypes"
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: expected a list of instance types")
    out: list[InstanceType] = []
    for i, item in enumerate(raw):
        it = parse_instance_type(item, f"{where}[{i}]")
        if any(o.name == it.name for o in out):
            raise ManifestError(f'{where}[{i}]: name: Duplicate value: "{it.name}"')
        out.append(it)
    return out


def load_catalogue(path: str | os.PathLike[str]) -> list[InstanceType]:
    """A catalogue file (one YAML document: a list, or ``instanceTypes:`` and a list) that
    replaces the built-in catalogue; errors name the file and field."""
    docs = read_yaml_documents(path)
    source = os.fspath(path)
    if len(docs) != 1:
        raise ManifestError(f"{source}: expected one YAML document with the instance types")
    return parse_catalogue(docs[0], source)


def satisfies_min_values(
    types: Sequence[InstanceType], requirements: Requirements
) -> tuple[int, str]:
    """How many of ``types``, in order, it takes to cover every minValues of the
    requirements, and "" ; or all of them and the error naming the keys left short (sorted,
    where upstream lists Go's map order). A type adds the values its own requirements give
    the key (none for a key it does not define).
    Upstream: InstanceTypes.SatisfiesMinValues (pkg/cloudprovider/types.go)"""
    minimums = {k: r.min_values for k, r in requirements.items() if r.min_values is not None}
    if not minimums:
        return 0, ""
    seen: dict[str, set[str]] = {k: set() for k in minimums}
    short: set[str] = set()
    for i, it in enumerate(types):
        own = it.requirements()
        for key in minimums:
            r = own.get(key)
            if r is not None and not r.complement:
                seen[key].update(r.values)
        short = {k for k, m in minimums.items() if len(seen[k]) < m}
        if not short:
            return i + 1, ""
    if short:
        keys = " ".join(sorted(short))
        return len(types), f"minValues requirement is not met for label(s) (label(s)=[{keys}])"
    return len(types), ""
