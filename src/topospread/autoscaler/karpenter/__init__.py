"""Karpenter's core decisions, as kubernetes-sigs/karpenter makes them.

One module per upstream concept: ``requirements`` (label requirements, pkg/scheduling),
``instancetypes`` (instance types and offerings, pkg/cloudprovider; a built-in catalogue),
``unavailableofferings`` (the cache of offerings a launch found out of capacity), ``instance``
(the cloud provider's launch: one capacity type, the fleet's offerings cheapest first),
``nodepool`` (NodePools: requirements, limits, weight, disruption and budgets), ``topology``
(topology groups: spread, pod affinity and anti-affinity over every domain the NodePools allow),
``nodeclaim`` (existing nodes and new nodeclaims as the packing sees them), ``scheduler`` (the
provisioning scheduler), ``disruption`` (emptiness, multi-node and single-node consolidation),
``karpenter`` (``Karpenter.run_once``).
"""

from __future__ import annotations

from topospread.autoscaler.karpenter.instancetypes import (
    InstanceType,
    Offering,
    builtin_catalogue,
    load_catalogue,
    parse_catalogue,
    stock_out,
)
from topospread.autoscaler.karpenter.karpenter import Karpenter
from topospread.autoscaler.karpenter.nodepool import (
    Budget,
    NodePool,
    parse_nodepool,
    parse_nodepools,
)
from topospread.autoscaler.karpenter.results import (
    CreateFunc,
    Disruption,
    KarpenterResult,
    NodeClaimLaunch,
)

__all__ = [
    "Budget",
    "CreateFunc",
    "Disruption",
    "InstanceType",
    "Karpenter",
    "KarpenterResult",
    "NodeClaimLaunch",
    "NodePool",
    "Offering",
    "builtin_catalogue",
    "load_catalogue",
    "parse_catalogue",
    "parse_nodepool",
    "parse_nodepools",
    "stock_out",
]
