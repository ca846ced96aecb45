"""TaintToleration's kernel: its verdicts and raw scores are the pod shape's (the pod's
tolerations against the node's taints); scores normalized reversed, as the plugin does."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import StaticKernel


class TaintToleration(StaticKernel):
    node_only = True
    static_score = True
    reverse = True
    reads_spec = True
