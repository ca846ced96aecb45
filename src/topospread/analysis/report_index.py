"""The reports' index of the pods: every pod's report facts (its spread constraints, its
revision), bucketed by controller reference and grouped by constraints, followed from the keys
the simulation touched so that a report (reports.py's ``workload_reports``) costs what changed,
not a walk over every pod."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import msgspec

from topospread.api.types import Pod
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.decision import is_terminal
from topospread.simulator.simulation import Simulation

ORPHANS: Final = "orphans"
OWNED: Final = "owned"


@dataclass(slots=True)
class Fact:
    """What a report reads of one pod besides its placement."""

    pod: Pod
    constraints: bytes  # its spread constraints encoded: pods with equal ones count once
    revision: str
    bucket: tuple[str, ...]


@dataclass(slots=True)
class Group:
    """A bucket's pods with one set of spread constraints, and their revisions."""

    keys: set[str] = field(default_factory=set)
    revisions: dict[str, int] = field(default_factory=dict)  # revision -> its pods


@dataclass(slots=True)
class Bucket:
    """The pods of one controller reference (or a namespace's orphans), as the simulation's
    pod index buckets them, grouped by spread constraints and counted."""

    keys: set[str] = field(default_factory=set)
    groups: dict[bytes, Group] = field(default_factory=dict)
    running: int = 0  # not finished, bound
    pending: set[str] = field(default_factory=set)  # not finished, not bound


class ReportIndex:
    """Every pod's report facts, bucketed by controller reference as ``Simulation.pods``
    indexes them, grouped and counted — kept in ``Simulation.memo`` (snapshots carry it) and
    brought up to date from the keys the simulation touched since (``take_touched``), so that a
    report costs what changed, not a walk over every pod. tests/test_simulation.py checks
    its reports against a fresh index's on random timelines."""

    KEY: Final = "report-index"

    def __init__(self, sim: Simulation) -> None:
        self.pods = sim.pods
        self.facts: dict[str, Fact] = {}
        self.buckets: dict[tuple[str, ...], Bucket] = {}
        sim.pods.take_touched()
        for key, pod in sim.pods.items():
            self._add(key, pod)

    @classmethod
    def of(cls, sim: Simulation) -> ReportIndex:
        found = sim.memo.get(cls.KEY)
        if not isinstance(found, ReportIndex) or found.pods is not sim.pods:
            found = sim.memo[cls.KEY] = ReportIndex(sim)
        else:
            found._follow(sim)
        return found

    def _follow(self, sim: Simulation) -> None:
        pods = sim.pods
        for key in pods.take_touched():
            pod = pods.get(key)
            fact = self.facts.get(key)
            if fact is not None:
                if fact.pod is pod:
                    continue
                self._remove(key, fact)
            if pod is not None:
                self._add(key, pod)

    def _add(self, key: str, pod: Pod) -> None:
        meta = pod.metadata
        ref = get_controller_of(meta)
        bucket_key: tuple[str, ...] = (
            (ORPHANS, meta.namespace)
            if ref is None
            else (OWNED, meta.namespace, ref.kind, ref.name)
        )
        fact = Fact(
            pod,
            msgspec.json.encode(pod.spec.topology_spread_constraints),
            revision(pod),
            bucket_key,
        )
        self.facts[key] = fact
        bucket = self.buckets.get(bucket_key)
        if bucket is None:
            bucket = self.buckets[bucket_key] = Bucket()
        bucket.keys.add(key)
        group = bucket.groups.get(fact.constraints)
        if group is None:
            group = bucket.groups[fact.constraints] = Group()
        group.keys.add(key)
        if fact.revision:
            group.revisions[fact.revision] = group.revisions.get(fact.revision, 0) + 1
        if not is_terminal(pod):
            if pod.spec.node_name:
                bucket.running += 1
            else:
                bucket.pending.add(key)

    def _remove(self, key: str, fact: Fact) -> None:
        del self.facts[key]
        bucket = self.buckets[fact.bucket]
        bucket.keys.discard(key)
        group = bucket.groups[fact.constraints]
        group.keys.discard(key)
        if not group.keys:
            del bucket.groups[fact.constraints]
        elif fact.revision:
            left = group.revisions[fact.revision] - 1
            if left:
                group.revisions[fact.revision] = left
            else:
                del group.revisions[fact.revision]
        pod = fact.pod
        if not is_terminal(pod):
            if pod.spec.node_name:
                bucket.running -= 1
            else:
                bucket.pending.discard(key)
        if not bucket.keys:
            del self.buckets[fact.bucket]


def revision(pod: Pod) -> str:
    """The pod's revision: its ReplicaSet, or its controller-revision-hash."""
    ref = get_controller_of(pod.metadata)
    if ref is not None and ref.kind == "ReplicaSet":
        return ref.name
    return pod.metadata.labels.get("controller-revision-hash", "")
