"""NodeUnschedulable's kernel: its verdicts are the pod shape's (they read the pod's
tolerations and the node's unschedulable flag)."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import StaticKernel


class NodeUnschedulable(StaticKernel):
    node_only = True
    reads_spec = True
