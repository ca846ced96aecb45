"""The timeline's steps: one class per action (its YAML name, its argument checks, the change
it makes to a Simulation, how reports name it), registered in ``actions.STEPS``.

The package's own modules are grouped by family: ``workloads`` (apply, scale, rollout,
deleteWorkload, deletePods), ``nodes`` (cordon, uncordon, drain, taint, untaint, removeNode),
``provisioning`` (addNodes, stockout), ``failures`` (loseZone, restoreZone, loseNode, restoreNode),
``waiting`` (wait) and ``rebalancing`` (rebalance). This file imports none of them, so a
lower module (the timeline format, the node groups) can use ``arguments`` without pulling in
the Simulation.
"""
