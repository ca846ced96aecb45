"""Autoscalers modelled as libraries on top of the scheduler framework.

``clusterautoscaler`` is kubernetes/autoscaler's cluster-autoscaler: node groups, the binpacking
estimator, expanders, scale-up with balancing and limits, scale-down with the drain rules. It
imports only the layers below the simulator (api, labels, framework, plugins, cluster), so the
simulation loop can call it without a cycle.
"""
