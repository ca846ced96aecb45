"""NodeName's kernel: its verdicts are the pod shape's (the pod's spec.nodeName against the
node's name; pods with a nodeName never reach the fast path)."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import StaticKernel


class NodeName(StaticKernel):
    node_only = True
