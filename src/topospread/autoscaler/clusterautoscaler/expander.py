"""Expanders: which expansion option a scale-up takes.

Each expander is a filter that keeps the best options; ``--expander=priority,least-waste``
chains them, each narrowing the previous one's survivors, and random picks among what is left.
Random draws from one seeded ``random.Random``, so runs are reproducible.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from topospread.api.resource import parse_quantity
from topospread.api.types import Pod
from topospread.autoscaler.clusterautoscaler.options import (
    EXPANDER_LEAST_WASTE,
    EXPANDER_MOST_PODS,
    EXPANDER_PRIORITY,
    EXPANDER_RANDOM,
)
from topospread.framework.types import NodeInfo
from topospread.plugins.noderesources.resource_helpers import pod_requests

PRIORITY_CONFIG_MAP_NAME = "cluster-autoscaler-priority-expander"


@dataclass(slots=True)
class Option:
    """Adding ``node_count`` nodes to ``node_group`` would schedule ``pods``.

    Upstream: expander.Option (expander/expander.go)
    """

    node_group: str
    node_count: int
    pods: list[Pod] = field(default_factory=list)
    similar_node_groups: list[str] = field(default_factory=list)
    debug: str = ""


class Filter(Protocol):
    """Upstream: expander.Filter: BestOptions keeps the best of the options."""

    def best_options(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> list[Option]: ...


class RandomExpander:
    """One option, uniformly at random. Upstream: expander/random."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def best_option(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> Option | None:
        if not options:
            return None
        return options[self.rng.randrange(len(options))]

    def best_options(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> list[Option]:
        best = self.best_option(options, infos)
        return [] if best is None else [best]


class MostPodsExpander:
    """The options that schedule the most pods. Upstream: expander/mostpods."""

    def best_options(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> list[Option]:
        most = max((len(o.pods) for o in options), default=0)
        return [o for o in options if len(o.pods) == most]


def _requests(pods: Sequence[Pod]) -> tuple[int, int]:
    """The pods' cpu (millicores) and memory (bytes) requests as the API counts a pod's:
    init containers (the larger of an init container and the containers after it), sidecars,
    pod-level requests and overhead included. Upstream: resourcesForPods (expander/waste),
    podutils.PodRequests"""
    cpu = mem = 0
    for pod in pods:
        reqs = pod_requests(pod)
        if "cpu" in reqs:
            cpu += reqs["cpu"].milli_value()
        if "memory" in reqs:
            mem += reqs["memory"].value()
    return cpu, mem


def waste_score(option: Option, info: NodeInfo) -> float:
    """Idle fraction of cpu plus idle fraction of memory over the option's new nodes'
    capacity. Upstream: leastwaste.BestOptions (expander/waste/waste.go)"""
    capacity = info.node.status.capacity
    cpu = parse_quantity(capacity.get("cpu", 0)).milli_value() * option.node_count
    mem = parse_quantity(capacity.get("memory", 0)).value() * option.node_count
    req_cpu, req_mem = _requests(option.pods)
    wasted_cpu = (cpu - req_cpu) / cpu if cpu else float("nan")
    wasted_mem = (mem - req_mem) / mem if mem else float("nan")
    return wasted_cpu + wasted_mem


class LeastWasteExpander:
    """The options that leave the least cpu and memory idle. Upstream: expander/waste."""

    def best_options(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> list[Option]:
        best: list[Option] = []
        least = 0.0
        for option in options:
            info = infos.get(option.node_group)
            if info is None:
                continue
            score = waste_score(option, info)
            if not best or score < least:
                least, best = score, [option]
            elif score == least:
                best.append(option)
        return best


class PriorityExpander:
    """The options whose group matches the highest priority's patterns; all options when none
    matches. A group matching several priorities takes the highest (upstream iterates a Go map
    and takes the first match, so its choice there is not deterministic).

    Upstream: expander/priority (config map cluster-autoscaler-priority-expander, key priorities)
    """

    def __init__(self, priorities: Mapping[int, Sequence[str]]) -> None:
        self.priorities = sorted(
            ((prio, [re.compile(p) for p in patterns]) for prio, patterns in priorities.items()),
            key=lambda item: -item[0],
        )
        self.warnings: list[str] = []

    def priority_of(self, group: str) -> int | None:
        for prio, patterns in self.priorities:
            if any(p.search(group) for p in patterns):
                return prio
        return None

    def best_options(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> list[Option]:
        best: list[Option] = []
        top: int | None = None
        for option in options:
            prio = self.priority_of(option.node_group)
            if prio is None:
                self.warnings.append(
                    f"Priority expander: node group {option.node_group} not found in priority "
                    "expander configuration. The group won't be used."
                )
                continue
            if top is None or prio > top:
                top, best = prio, [option]
            elif prio == top:
                best.append(option)
        if not best:
            self.warnings.append(
                "Priority expander: no priorities info found for any of the expansion options. "
                "Falling back to random choice."
            )
            return list(options)
        return best


class ChainStrategy:
    """Filters in order, stopping once one option is left; random decides the rest.

    Upstream: expander/factory/chain.go (chainStrategy.BestOption)
    """

    def __init__(self, filters: Sequence[Filter], fallback: RandomExpander) -> None:
        self.filters = list(filters)
        self.fallback = fallback

    def best_option(
        self, options: Sequence[Option], infos: Mapping[str, NodeInfo]
    ) -> Option | None:
        remaining = list(options)
        for f in self.filters:
            remaining = f.best_options(remaining, infos)
            if len(remaining) == 1:
                return remaining[0]
        return self.fallback.best_option(remaining, infos)


def build_expander(
    names: Sequence[str], rng: random.Random, priorities: Mapping[int, Sequence[str]]
) -> ChainStrategy:
    """The strategy ``--expander`` names.

    Upstream: expander/factory (ExpanderStrategyFromStrings)
    """
    fallback = RandomExpander(rng)
    filters: list[Filter] = []
    for name in names:
        if name == EXPANDER_RANDOM:
            filters.append(fallback)
        elif name == EXPANDER_MOST_PODS:
            filters.append(MostPodsExpander())
        elif name == EXPANDER_LEAST_WASTE:
            filters.append(LeastWasteExpander())
        elif name == EXPANDER_PRIORITY:
            filters.append(PriorityExpander(priorities))
        else:
            raise ValueError(f"unknown expander {name!r}")
    return ChainStrategy(filters, fallback)
