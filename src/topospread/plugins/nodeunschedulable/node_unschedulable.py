"""NodeUnschedulable: cordoned nodes (spec.unschedulable) take only pods that tolerate it.

Upstream: pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go (v1.35)
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.types import TAINT_EFFECT_NO_SCHEDULE, Pod, Taint
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo
from topospread.taints import tolerations_tolerate_taint

NAME: Final = "NodeUnschedulable"

ERR_REASON_UNSCHEDULABLE: Final = "node(s) were unschedulable"
# Upstream keeps this constant although v1.35's Filter no longer returns it.
ERR_REASON_UNKNOWN_CONDITION: Final = "node(s) had unknown conditions"

# v1.TaintNodeUnschedulable: tolerating this taint also tolerates spec.unschedulable.
TAINT_NODE_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT: Final = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect=TAINT_EFFECT_NO_SCHEDULE)


class NodeUnschedulable:
    """Filters out nodes with spec.unschedulable unless the pod tolerates the cordon taint."""

    def __init__(self, features: Features) -> None:
        self._comparison_operators = features.enable_taint_toleration_comparison_operators

    @property
    def name(self) -> str:
        return NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: NodeUnschedulable.Filter (node_unschedulable.go, v1.35)."""
        if not node_info.node.spec.unschedulable:
            return SUCCESS
        if tolerations_tolerate_taint(
            pod.spec.tolerations,
            _UNSCHEDULABLE_TAINT,
            enable_comparison_operators=self._comparison_operators,
        ):
            return SUCCESS
        return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_UNSCHEDULABLE)


def new(args: Any | None, handle: Handle, features: Features) -> NodeUnschedulable:
    """NodeUnschedulable takes no args. Upstream: New (node_unschedulable.go, v1.35)."""
    return NodeUnschedulable(features)
