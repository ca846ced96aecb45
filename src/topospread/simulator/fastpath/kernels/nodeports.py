"""NodePorts' kernel: the path takes no pod with host ports (``FastPath.accepts``), so its
PreFilter skips for every pod it decides."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import SkippingKernel


class NodePorts(SkippingKernel):
    pass
