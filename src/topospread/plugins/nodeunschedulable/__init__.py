"""plugins/nodeunschedulable: NodeUnschedulable."""

from topospread.plugins.nodeunschedulable.node_unschedulable import (
    ERR_REASON_UNSCHEDULABLE,
    NAME,
    TAINT_NODE_UNSCHEDULABLE,
    NodeUnschedulable,
    new,
)

__all__ = [
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "TAINT_NODE_UNSCHEDULABLE",
    "NodeUnschedulable",
    "new",
]
