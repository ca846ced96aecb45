"""A vectorised scheduling cycle, decision for decision the reference's.

The reference path (framework/runtime.py, schedule_one.py) calls every plugin for every node,
as upstream does. This package computes the same cycle over numpy columns of the node table
(``table.py``), one kernel per upstream plugin (``kernels/``, registered by the plugin's name
in ``KERNELS``):

- static, per pod shape (``shapes.py``): the verdicts and raw scores of the plugins that read
  only the pod's scheduling fields and the node (NodeUnschedulable, NodeName, TaintToleration,
  NodeAffinity, ImageLocality), taken once from the reference plugins;
- dynamic, per decision: NodeResourcesFit, BalancedAllocation, PodTopologySpread and
  InterPodAffinity, whose pod counts are kept incrementally on every bind and unbind and
  summed per topology domain with one vector operation;
- a plugin with no kernel runs its reference plugin node by node, for that plugin alone
  (``kernels/reference.py``), its statuses interned into the same vector; every other plugin
  stays vectorised; so do the volume plugins for a pod with claims (``kernels/volumes.py``),
  only on the nodes the search visits (``lazy.py``);
- every filter yields, per node, the index of the status it rejects with (``statuses.py``),
  in the profile's filter order; then upstream's sampling, normalisation and weights, and
  host selection with the same random draws (``cycle.py``);
- nominated pods (``nominated.py``): their requests per node, per priority, so that where only
  NodeResourcesFit can tell a node with them from one without, the filters take them off the
  free room.

It handles the pods and profiles it can prove equal and returns None for everything else —
pods with host ports, extended resources, resource claims, a pod whose PreFilter
narrows the nodes (a DaemonSet pod's node affinity on metadata.name), a pod whose affinity does
not parse, a kernelled plugin configured beyond its kernel (a non-default scoring strategy).
tests/test_fastpath.py checks it against the reference path on random clusters, decision for
decision (tests/test_fastpath_claims.py with claims, zonal volumes and attach limits);
tests/test_kernels.py checks each kernel against its reference plugin alone;
tests/test_preemption_fit.py checks preemption's Fit-only dry run the same way.
"""

from __future__ import annotations

from topospread.simulator.fastpath.cycle import FastFailure, FastPath, FastResult
from topospread.simulator.fastpath.kernels import KERNELS, Kernel

__all__ = ["KERNELS", "FastFailure", "FastPath", "FastResult", "Kernel"]
