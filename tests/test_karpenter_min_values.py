"""A NodePool requirement's minValues: a nodeclaim's instance types must cover at least that many
distinct values of the key (MinValuesPolicy Strict, upstream's default): pods that would narrow
the options below it do not share a nodeclaim, a pod no such nodeclaim fits gets the minValues
error, a NodePool whose types cannot cover it is skipped, and a consolidation's cheaper
replacement must still cover it.
Upstream: InstanceTypes.SatisfiesMinValues (pkg/cloudprovider/types.go),
filterInstanceTypesByRequirements (provisioning/scheduling/nodeclaim.go),
NodeClaim.RemoveInstanceTypeOptionsByPriceAndMinValues."""

from __future__ import annotations

from typing import Any

import pytest

from builders import make_node
from karpenter_helpers import Env, nodepool
from test_karpenter_consolidation import rs_pod
from topospread.api.types import (
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
)
from topospread.autoscaler.karpenter import Karpenter, NodePool, parse_catalogue
from topospread.autoscaler.karpenter.requirements import CAPACITY_TYPE_LABEL, NODEPOOL_LABEL
from topospread.autoscaler.karpenter.scheduler import NO_TEMPLATES

TYPES = ["c5.xlarge", "m5.xlarge", "r5.xlarge", "c5.2xlarge", "m5.2xlarge"]
ZONE = {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["test-zone-1"]}
ON_DEMAND = {"key": CAPACITY_TYPE_LABEL, "operator": "In", "values": ["on-demand"]}


def _pool(min_values: int | None, *extra: dict[str, Any]) -> NodePool:
    req: dict[str, Any] = {"key": LABEL_INSTANCE_TYPE_STABLE, "operator": "In", "values": TYPES}
    if min_values is not None:
        req["minValues"] = min_values
    return nodepool(requirements=[req, ZONE, *extra])


def test_a_nodepool_manifest_with_min_values_is_accepted() -> None:
    pool = _pool(3)
    (req,) = [r for r in pool.requirements if r.key == LABEL_INSTANCE_TYPE_STABLE]
    assert req.min_values == 3
    assert str(req).endswith("minValues 3")


@pytest.mark.parametrize(
    ("min_values", "launched"),
    [
        # 6 CPUs fit only c5.2xlarge and m5.2xlarge: without minValues both pods share one.
        (None, [("c5.2xlarge", ("default/a", "default/b"), ("c5.2xlarge", "m5.2xlarge"))]),
        # With minValues 3 the second pod would leave two types: it gets its own nodeclaim.
        (
            3,
            [
                ("c5.xlarge", ("default/a",), tuple(TYPES)),
                ("c5.xlarge", ("default/b",), tuple(TYPES)),
            ],
        ),
    ],
)
def test_pods_do_not_narrow_a_nodeclaim_below_min_values(
    min_values: int | None, launched: list[tuple[str, tuple[str, ...], tuple[str, ...]]]
) -> None:
    env = Env(_pool(min_values))
    result = env.karpenter.run_once(0.0, env.cluster, [rs_pod("a", cpu="3"), rs_pod("b", cpu="3")])
    assert [(x.instance_type, x.pods, x.instance_type_options) for x in result.launched] == (
        launched
    )
    assert result.pod_errors == {}


def test_a_pod_no_nodeclaim_covering_min_values_fits_gets_the_min_values_error() -> None:
    env = Env(_pool(3))
    result = env.karpenter.run_once(0.0, env.cluster, [rs_pod("big", cpu="5")])
    assert result.launched == []
    assert result.pod_errors == {
        "default/big": "minValues requirement is not met for label(s) "
        "(label(s)=[node.kubernetes.io/instance-type]), requirements=karpenter.sh/nodepool In "
        "[default], node.kubernetes.io/instance-type In [c5.2xlarge c5.xlarge m5.2xlarge "
        "m5.xlarge r5.xlarge] minValues 3, topology.kubernetes.io/zone In [test-zone-1], "
        'resources={"cpu":"5","pods":"1"}'
    }


def test_a_nodepool_whose_types_cannot_cover_min_values_is_skipped() -> None:
    arch = {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}
    pool = nodepool(
        requirements=[
            {**arch, "minValues": 2},
            {"key": LABEL_INSTANCE_TYPE_STABLE, "operator": "In", "values": ["c5.large"]},
        ]
    )
    env = Env(pool)
    result = env.karpenter.run_once(0.0, env.cluster, [rs_pod("x", cpu="1")])
    assert result.launched == [] and result.pod_errors == {"default/x": NO_TEMPLATES}


def _node(name: str, instance_type: str, cpu: str) -> Node:
    b = make_node(name).capacity(cpu=cpu, memory="32Gi", pods="58")
    for k, v in {
        NODEPOOL_LABEL: "default",
        LABEL_INSTANCE_TYPE_STABLE: instance_type,
        CAPACITY_TYPE_LABEL: "on-demand",
        LABEL_TOPOLOGY_ZONE: "test-zone-1",
        LABEL_HOSTNAME: name,
    }.items():
        b = b.label(k, v)
    return b.obj()


@pytest.mark.parametrize(
    ("min_values", "replacement"),
    [
        # r5.xlarge ($0.252/h) may become a c5.xlarge ($0.17/h) ...
        (None, "c5.xlarge"),
        # ... but only c5.xlarge and m5.xlarge are cheaper: two types cannot cover 3.
        (3, None),
    ],
)
def test_a_replacement_must_cover_min_values_with_its_cheaper_types(
    min_values: int | None, replacement: str | None
) -> None:
    env = Env(_pool(min_values, ON_DEMAND))
    env.add_node(_node("node-0", "r5.xlarge", "4"), rs_pod("pod-0", cpu="3"))
    result = env.karpenter.run_once(0.0, env.cluster, [])
    got = [d.replacement.instance_type for d in result.disruptions if d.replacement is not None]
    assert got == ([] if replacement is None else [replacement])


def test_a_nodeclaim_whose_60_cheapest_types_miss_min_values_does_not_launch() -> None:
    # Sixty cheap types in zone-a, one dear one in zone-b: all 61 cover both zones, the 60
    # launched (the cheapest) do not. Upstream: Results.TruncateInstanceTypes.
    def kind(i: int, zone: str, price: float) -> dict[str, Any]:
        offering = {"zone": zone, "capacityType": "on-demand", "price": price}
        return {"name": f"t{i:02d}", "cpu": "2", "memory": "4Gi", "offerings": [offering]}

    catalogue = parse_catalogue(
        [kind(i, "zone-a", 0.1 + i / 1000) for i in range(60)] + [kind(60, "zone-b", 1.0)],
        "types.yaml",
    )
    zones = {"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["zone-a", "zone-b"]}
    env = Env()
    env.karpenter = Karpenter([nodepool(requirements=[{**zones, "minValues": 2}])], catalogue)
    result = env.karpenter.run_once(0.0, env.cluster, [rs_pod("p", cpu="1")])
    assert result.launched == []
    assert result.pod_errors == {
        "default/p": "pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues "
        "requirements, validating minValues, minValues requirement is not met for label(s) "
        "(label(s)=[topology.kubernetes.io/zone]) (NodePool=default)"
    }
