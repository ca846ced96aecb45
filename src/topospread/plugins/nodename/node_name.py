"""NodeName: a pod that names its node (spec.nodeName) fits only that node.

Upstream: pkg/scheduler/framework/plugins/nodename/node_name.go (v1.35)
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo

NAME: Final = "NodeName"

ERR_REASON: Final = "node(s) didn't match the requested node name"


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """True when the pod names no node or names this one. Upstream: Fits (node_name.go, v1.35)."""
    requested = pod.spec.node_name
    return not requested or requested == node_info.node.metadata.name


class NodeName:
    """Filters out every node but the one a pod asks for in spec.nodeName."""

    @property
    def name(self) -> str:
        return NAME

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: NodeName.Filter (node_name.go, v1.35)."""
        if fits(pod, node_info):
            return SUCCESS
        return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON)


def new(args: Any | None, handle: Handle, features: Features) -> NodeName:
    """NodeName takes no args. Upstream: New (node_name.go, v1.35)."""
    return NodeName()
