"""plugins: one package per upstream in-tree plugin."""

from __future__ import annotations

from typing import Final

# The filter plugins whose verdict reads only the pod and the node, never the pods running on
# it: NodeUnschedulable, NodeName, TaintToleration and NodeAffinity. Binding or evicting pods
# cannot change it (the fast path computes it once per pod shape; preemption's dry run relies
# on it not changing as victims come and go).
NODE_ONLY_FILTERS: Final = frozenset(
    ("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity")
)
