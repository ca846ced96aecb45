"""cluster-autoscaler's core decisions, as kubernetes/autoscaler's cluster-autoscaler makes them.

One module per upstream concept: ``options`` (flags and defaults), ``nodegroup`` (node groups and
their template nodes), ``snapshot`` (the forkable cluster snapshot and the scheduler-based
predicate checker), ``estimator`` (equivalence groups and binpacking), ``expander`` (random,
most-pods, least-waste, priority and their chain), ``nodegroupset`` (similar node groups and
balancing), ``scaleup`` (the orchestrator), ``drainability`` (the drain rules), ``scaledown``
(eligibility, unneeded tracking, FindNodesToRemove, the planner), ``taints`` (the startup and
status taints, the taint config and template sanitization), ``autoscaler`` (``run_once``).
"""

from __future__ import annotations

from topospread.autoscaler.clusterautoscaler.autoscaler import ClusterAutoscaler, RunOnceResult
from topospread.autoscaler.clusterautoscaler.nodegroup import NodeGroup
from topospread.autoscaler.clusterautoscaler.options import AutoscalingOptions, parse_options
from topospread.autoscaler.clusterautoscaler.scaledown import ScaleDownResult
from topospread.autoscaler.clusterautoscaler.scaleup import ScaleUpResult

__all__ = [
    "AutoscalingOptions",
    "ClusterAutoscaler",
    "NodeGroup",
    "RunOnceResult",
    "ScaleDownResult",
    "ScaleUpResult",
    "parse_options",
]
