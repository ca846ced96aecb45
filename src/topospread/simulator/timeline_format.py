"""The what-if timeline format: a cluster, its workloads, and a list of steps.

A timeline scenario is one YAML/JSON mapping::

    nodes: [...]        # Node manifests
    nodeGroups: [...]   # {name, zones: [..], perZone: N | {zone: N}, count: N, template, zoneKey}
    objects: [...]      # any manifests: Deployments, ReplicaSets, StatefulSets, DaemonSets,
                        # Jobs, Pods, Services, PriorityClasses, PodDisruptionBudgets, Namespaces
    config: {...}       # optional KubeSchedulerConfiguration
    autoscaler: {...}   # optional: clusterAutoscaler or karpenter (simulator/autoscaler_spec.py)
    timeline: [...]     # steps: {name?: str, <action>: args}

This module reads and checks the document (``load_timeline``, ``parse_timeline``); node groups
are simulator/node_groups.py's, each step is parsed and carried out by its class in
simulator/timeline_steps/, and the state it all describes lives in simulator/simulation.py.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from topospread.api.loader import (
    decode_manifest,
    decode_object,
    read_yaml_documents,
)
from topospread.api.types import Node
from topospread.errors import ManifestError
from topospread.framework.config import SchedulerConfig, decode_config, default_config
from topospread.plugins.registry import ARGS_VALIDATORS
from topospread.simulator.autoscaler_spec import AutoscalerSpec, parse_autoscaler
from topospread.simulator.node_groups import NodeGroup, parse_group
from topospread.simulator.scenario import list_of
from topospread.simulator.timeline_steps.actions import parse_step
from topospread.simulator.timeline_steps.step import Step

_KEYS: Final = frozenset({"nodes", "nodeGroups", "objects", "config", "autoscaler", "timeline"})
_KEYS_TEXT: Final = "nodes, nodeGroups, objects, config, autoscaler, timeline"


@dataclass(slots=True)
class TimelineScenario:
    """A parsed timeline scenario (objects decoded, steps checked for shape)."""

    source: str
    nodes: list[tuple[str, Node]]
    groups: dict[str, NodeGroup]
    objects: list[tuple[str, Any]]
    config: SchedulerConfig
    steps: list[Step]
    warnings: list[str] = field(default_factory=list)
    autoscaler: AutoscalerSpec | None = None


def load_timeline(path: Path) -> TimelineScenario:
    """Read and check a timeline scenario; errors name the file, the entry and the field."""
    source = str(path)
    docs = read_yaml_documents(path)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ManifestError(f"{source}: a timeline scenario is one mapping with keys {_KEYS_TEXT}")
    return parse_timeline(docs[0], source)


def parse_timeline(doc: Mapping[str, Any], source: str) -> TimelineScenario:
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise ManifestError(
            f"{source}: unknown key {unknown[0]!r}; a timeline scenario has {_KEYS_TEXT}"
        )
    nodes = [
        (f"{source}: nodes[{i}]", decode_object(raw, Node, f"{source}: nodes[{i}]"))
        for i, raw in enumerate(list_of(doc, "nodes", source))
    ]
    groups: dict[str, NodeGroup] = {}
    for i, raw in enumerate(list_of(doc, "nodeGroups", source, "node groups")):
        group = parse_group(raw, f"{source}: nodeGroups[{i}]")
        if group.name in groups:
            raise ManifestError(f'{source}: nodeGroups[{i}]: name: Duplicate value: "{group.name}"')
        groups[group.name] = group
    objects: list[tuple[str, Any]] = []
    for i, raw in enumerate(list_of(doc, "objects", source)):
        where = f"{source}: objects[{i}]"
        objects.extend((where, obj) for obj in decode_manifest(raw, where))
    raw_config = doc.get("config")
    config = (
        decode_config(raw_config, f"{source}: config", ARGS_VALIDATORS)
        if raw_config
        else default_config()
    )
    steps = [
        parse_step(raw, i, source)
        for i, raw in enumerate(list_of(doc, "timeline", source, "steps"))
    ]
    autoscaler = None
    if doc.get("autoscaler") is not None:
        where = f"{source}: autoscaler"
        try:
            autoscaler = parse_autoscaler(doc["autoscaler"], where, groups, Path(source).parent)
        except ManifestError as err:
            if str(err).startswith(source):
                raise
            raise ManifestError(f"{where}: {err}") from err
    return TimelineScenario(
        source,
        nodes,
        groups,
        objects,
        config,
        steps,
        warnings=list(config.warnings),
        autoscaler=autoscaler,
    )


def with_cluster(
    scenario: TimelineScenario, objects: Iterable[tuple[str, Any]]
) -> TimelineScenario:
    """The timeline replayed on a given cluster: ``objects`` (each with where it came from: a
    saved ``kubectl get`` file or a live cluster) come before the scenario's own nodes and
    objects, so its bound pods keep their nodes and its workloads adopt their pods."""
    nodes: list[tuple[str, Node]] = []
    rest: list[tuple[str, Any]] = []
    for where, obj in objects:
        (nodes if isinstance(obj, Node) else rest).append((where, obj))
    return dataclasses.replace(
        scenario, nodes=[*nodes, *scenario.nodes], objects=[*rest, *scenario.objects]
    )


__all__ = [
    "TimelineScenario",
    "load_timeline",
    "parse_timeline",
    "with_cluster",
]
