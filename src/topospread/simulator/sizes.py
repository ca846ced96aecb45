"""A timeline scenario's size, counted before the simulation builds anything (see
``topospread.limits``): the most nodes its node groups, nodes, ``addNodes`` steps and
autoscaler's own node groups can make, then the most pods its workloads, ``apply`` and
``scale`` steps can ask for on them.

NOTE: counted generously, so that the count is an upper bound of the run's nodes and pods
(nodes a step adds are counted as if none ever left; a workload at its largest replica count
over the timeline). Autoscalers add nodes only for Pending pods, which are bounded already:
their max sizes and NodePool limits are not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from topospread.api.loader import decode_manifest
from topospread.api.strict import FieldValidation, field_validation
from topospread.api.types import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from topospread.errors import TopospreadError
from topospread.limits import Budget, Limits
from topospread.simulator.autoscaler_spec import ClusterAutoscalerSpec
from topospread.simulator.node_groups import NodeGroup
from topospread.simulator.stores import parse_workload_ref
from topospread.simulator.timeline_format import TimelineScenario
from topospread.simulator.timeline_steps.actions import parse_step
from topospread.simulator.timeline_steps.provisioning import AddNodes
from topospread.simulator.timeline_steps.step import Step
from topospread.simulator.timeline_steps.workloads import Apply, Scale

_SCALED_TYPES = (Deployment, ReplicaSet, ReplicationController, StatefulSet)
_WORKLOAD_TYPES = (*_SCALED_TYPES, DaemonSet, Job, CronJob)


def check_timeline(
    scenario: TimelineScenario,
    limits: Limits,
    then: Sequence[Mapping[str, Any]] = (),
    then_source: str = "--then",
) -> Budget:
    """Refuse (``SizeError``) a timeline scenario that could take its run past ``limits``;
    ``then``: the raw steps sweep's ``--then`` applies after each failure, read from
    ``then_source``. The count, when within them."""
    budget = limits.budget()
    source = scenario.source
    steps = [*scenario.steps, *(parse_step(raw, i, then_source) for i, raw in enumerate(then))]
    applied = [(where, obj) for step in steps for where, obj in _applied(step)]
    if scenario.nodes:
        budget.add_nodes(len(scenario.nodes), f"{source}: nodes", f"{len(scenario.nodes):,} nodes")
    for i, group in enumerate(scenario.groups.values()):
        _add_group(budget, group, f"{source}: nodeGroups[{i}]")
    spec = scenario.autoscaler
    if isinstance(spec, ClusterAutoscalerSpec):
        for binding in spec.groups:
            if not binding.source:  # a group of its own: its nodes are made at the start
                size = binding.group.target_size
                budget.add_nodes(
                    size, f"{source}: autoscaler: {binding.group.name}", f"size: {size}"
                )
    for step in steps:
        if isinstance(step, AddNodes):
            budget.add_nodes(step.count, step.where, f"count: {step.count}")
    objects = [*scenario.objects, *applied]
    listed_nodes, listed_pods, makers = _sorted_out(objects)
    if listed_nodes:
        budget.add_nodes(listed_nodes, f"{source}: objects", f"{listed_nodes:,} nodes listed")
    if listed_pods:
        budget.add_pods(listed_pods, f"{source}: objects", f"{listed_pods:,} pods listed")
    for where, obj in makers:  # a DaemonSet's pods are one per node: counted once all are
        budget.add_object(obj, where)
    _add_scaling(budget, makers, steps)
    return budget


def _add_group(budget: Budget, group: NodeGroup, where: str) -> None:
    """A node group's nodes: ``count``, or ``perZone`` in each of its zones."""
    if not group.zones:
        budget.add_nodes(group.count, where, f"count: {group.count}")
        return
    counts = [group.per_zone.get(zone, 0) for zone in group.zones]
    total = sum(counts)
    if len(set(counts)) == 1:
        what = f"perZone: {counts[0]} in each of {len(counts)} zone(s)"
    else:
        what = f"perZone: {total:,} in all"
    budget.add_nodes(total, where, what)


def _applied(step: Step) -> Iterable[tuple[str, Any]]:
    """The objects an ``apply`` step creates; one it cannot decode is left for the step to
    report when it runs."""
    if not isinstance(step, Apply):
        return []
    raw = step.args if isinstance(step.args, list) else [step.args]
    found: list[tuple[str, Any]] = []
    # Unknown fields are the step's to report (or warn about) when it runs, once.
    with field_validation(FieldValidation.IGNORE):
        for i, item in enumerate(raw):
            where = f"{step.where}[{i}]"
            try:
                found += [(where, obj) for obj in decode_manifest(item, where)]
            except TopospreadError:
                continue
    return found


def _sorted_out(objects: Sequence[tuple[str, Any]]) -> tuple[int, int, list[tuple[str, Any]]]:
    """The nodes and the pods no controller owns among ``objects``, counted, and the objects
    that make pods (the rest are neither).

    NOTE: a cluster dump's every object passes here (200,000 pods in 0.05 CPU s): nodes and pods
    are counted in this one loop, not one by one in the budget.
    """
    nodes = pods = 0
    makers: list[tuple[str, Any]] = []
    for where, obj in objects:
        # By type, not by kind: a kind of that name in a version no module decodes (read as
        # an UnknownObject under --validate=ignore) has no spec to count.
        if isinstance(obj, Pod):
            refs = obj.metadata.owner_references
            if not refs or not any(ref.controller for ref in refs):
                pods += 1
        elif isinstance(obj, Node):
            nodes += 1
        elif isinstance(obj, _WORKLOAD_TYPES):
            makers.append((where, obj))
    return nodes, pods, makers


def _add_scaling(budget: Budget, objects: Sequence[tuple[str, Any]], steps: Sequence[Step]) -> None:
    """``scale`` steps: a workload's pods past the most it had before."""
    most: dict[tuple[str, str, str], int] = {}
    for _, obj in objects:
        if isinstance(obj, _SCALED_TYPES):
            replicas = obj.spec.replicas
            key = (obj.kind, obj.metadata.namespace or "default", obj.metadata.name)
            most[key] = max(most.get(key, 0), 1 if replicas is None else replicas)
    for step in steps:
        if not isinstance(step, Scale):
            continue
        target = parse_workload_ref(step.workload, step.where)  # checked when parsed
        before = most.get(target, 0)
        if step.replicas > before:
            budget.add_pods(step.replicas - before, step.where, f"replicas: {step.replicas}")
            most[target] = step.replicas


__all__ = ["check_timeline"]
