"""The cloud provider's launch: one capacity type per nodeclaim, the fleet's offerings cheapest
first (karpenter-provider-aws pkg/providers/instance: instance.go Create and getCapacityType,
filter/filter.go SpotOfferingFilter; the cases after filter_test.go and
instancetype/suite_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from builders import make_pod
from karpenter_helpers import Env, nodepool
from topospread.autoscaler.karpenter import Karpenter, parse_catalogue
from topospread.autoscaler.karpenter.instance import (
    capacity_type,
    fleet_overrides,
    spot_offering_filter,
)
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    Requirement,
    Requirements,
)
from topospread.cluster.state import ClusterState

ZONE = "test-zone-1"


def instance_type(name: str, *offerings: tuple[str, float]) -> dict[str, Any]:
    return {
        "name": name,
        "cpu": "4",
        "memory": "8Gi",
        "offerings": [
            {"zone": ZONE, "capacityType": ct, "price": price} for ct, price in offerings
        ],
    }


def catalogue(*types: dict[str, Any]) -> Any:
    return parse_catalogue(list(types), "types.yaml")


def capacity(*values: str) -> Requirements:
    if not values:
        return Requirements()
    return Requirements([Requirement.new(CAPACITY_TYPE_LABEL, "In", values)])


def test_spot_offering_filter_drops_spot_dearer_than_the_cheapest_on_demand() -> None:
    types = catalogue(
        instance_type("od-instance", ("on-demand", 5.0), ("on-demand", 10.0)),
        instance_type("cheap-spot-instance", ("spot", 1.0), ("spot", 2.0)),
        instance_type("mixed-spot-instance", ("spot", 1.0), ("spot", 10.0)),
        instance_type("expensive-spot-instance", ("spot", 10.0), ("spot", 15.0)),
    )
    kept = spot_offering_filter(types, capacity())
    assert [(it.name, sorted(o.price for o in ofs)) for it, ofs in kept] == [
        ("od-instance", [5.0, 10.0]),
        ("cheap-spot-instance", [1.0, 2.0]),
        ("mixed-spot-instance", [1.0]),
    ]


@pytest.mark.parametrize(
    ("types", "reqs"),
    [
        ((instance_type("spot-instance", ("spot", 10.0)),), capacity()),
        (
            (
                instance_type("spot-instance", ("spot", 10.0)),
                instance_type("od-instance", ("on-demand", 5.0)),
            ),
            capacity("spot"),
        ),
    ],
    ids=["no on-demand offerings", "requirements do not allow both"],
)
def test_spot_offering_filter_keeps_everything(
    types: tuple[dict[str, Any], ...], reqs: Requirements
) -> None:
    # The spot offering dearer than on-demand stays (the on-demand type, incompatible with a
    # spot-only nodeclaim, is already gone: the compatible-available filter runs first).
    kept = spot_offering_filter(catalogue(*types), reqs)
    assert [(it.name, [o.price for o in ofs]) for it, ofs in kept] == [("spot-instance", [10.0])]


@pytest.mark.parametrize(
    ("reqs", "expected"),
    [
        (capacity(), "spot"),
        (capacity("spot", "on-demand"), "spot"),
        (capacity("on-demand"), "on-demand"),
        (capacity("spot"), "spot"),
    ],
    ids=["unrestricted", "both", "on-demand only", "spot only"],
)
def test_the_launch_asks_for_spot_whenever_it_may(reqs: Requirements, expected: str) -> None:
    types = catalogue(instance_type("m", ("on-demand", 0.2), ("spot", 0.07)))
    offered = spot_offering_filter(types, reqs)
    assert capacity_type(offered, reqs) == expected
    assert {ov.offering.capacity_type for ov in fleet_overrides(types, reqs)} == {expected}


def test_on_demand_when_every_spot_offering_is_dearer_than_on_demand() -> None:
    # "should order the instance types by price and only consider the spot types that are
    # cheaper than the cheapest on-demand": the filter leaves no spot offering.
    types = catalogue(
        instance_type("a", ("on-demand", 0.30), ("spot", 0.50)),
        instance_type("b", ("on-demand", 0.40), ("spot", 0.35)),
    )
    [first, *_] = fleet_overrides(types, capacity())
    assert (first.instance_type.name, first.offering.capacity_type) == ("a", "on-demand")


def test_a_spot_offering_cheaper_than_on_demand_makes_the_launch_spot() -> None:
    # The per-type cheapest offering would be a's on-demand (0.30) against b's spot (0.25):
    # the launch is spot, and its fleet holds only spot offerings, cheapest first.
    types = catalogue(
        instance_type("a", ("on-demand", 0.30), ("spot", 0.29)),
        instance_type("b", ("on-demand", 0.60), ("spot", 0.25)),
    )
    overrides = fleet_overrides(types, capacity())
    assert [(ov.instance_type.name, ov.offering.price) for ov in overrides] == [
        ("b", 0.25),
        ("a", 0.29),
    ]


def test_falls_back_to_on_demand_on_the_next_pass_once_spot_is_cached() -> None:
    # "should launch on-demand capacity if flexible to both spot and on-demand, but spot is
    # unavailable": the first launch is spot and fails (the nodeclaim is deleted, its
    # offerings cached); the next pass launches on-demand.
    both = [{"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": ["spot", "on-demand"]}]
    zone = [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [ZONE]}]
    env = Env(nodepool(requirements=both + zone))

    def no_spot(instance_type: str, zone: str, capacity: str) -> str | None:
        return "InsufficientInstanceCapacity" if capacity == "spot" else None

    pod = make_pod("p").req(cpu="1").obj()
    first = env.provision(pod, create=no_spot)
    assert first.launched == [] and len(first.launch_failures) == 1
    assert {ct for _, _, ct, _ in first.launch_failures[0].tried} == {"spot"}
    assert env.node_of(pod) is None
    env.now = 1.0
    [launch] = env.provision(pod, create=no_spot).launched
    assert launch.capacity_type == "on-demand"
    node = env.node_of(pod)
    assert node is not None and node.metadata.labels[CAPACITY_TYPE_LABEL] == "on-demand"


def test_a_refused_offering_is_skipped_within_the_launchs_capacity_type() -> None:
    # The fleet serves the next cheapest spot offering when the cheapest is out of capacity.
    types = catalogue(
        instance_type("a", ("on-demand", 0.30), ("spot", 0.10)),
        instance_type("b", ("on-demand", 0.40), ("spot", 0.12)),
    )
    karpenter = Karpenter([nodepool()], types)

    def no_a(instance_type: str, zone: str, capacity: str) -> str | None:
        return "InsufficientInstanceCapacity" if instance_type == "a" else None

    result = karpenter.run_once(0.0, ClusterState([], []), [make_pod("p").obj()], create=no_a)
    [launch] = result.launched
    assert (launch.instance_type, launch.capacity_type) == ("b", "spot")
    assert karpenter.unavailable.is_unavailable(0.0, "a", ZONE, "spot")
    assert not karpenter.unavailable.is_unavailable(0.0, "a", ZONE, "on-demand")
