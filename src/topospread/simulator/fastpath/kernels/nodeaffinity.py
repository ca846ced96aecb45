"""NodeAffinity's kernel: its verdicts and raw scores are the pod shape's (its node selector,
required and preferred node affinity against the node's labels); a PreFilter that narrows the
nodes (metadata.name) declines the shape."""

from __future__ import annotations

from topospread.simulator.fastpath.kernels.base import StaticKernel


class NodeAffinity(StaticKernel):
    node_only = True
    static_score = True
    reverse = False
