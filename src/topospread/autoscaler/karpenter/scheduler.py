"""Karpenter's provisioning scheduler: pack a batch of pending pods onto existing nodes, in-flight
nodeclaims and new nodeclaims.

Pods are taken largest first (CPU, then memory, then age and uid) from a queue; a pod that fits
nowhere goes to the back and is retried while others still schedule (the topology may change
under it). Each pod tries the existing nodes (initialized first, then by name), then the new
nodeclaims of this run with the fewest pods first, then a new nodeclaim from each NodePool in
weight order, within the NodePool's limits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from topospread.api.types import LABEL_HOSTNAME, DaemonSet, Pod
from topospread.autoscaler.karpenter.daemons import daemon_pods, nodeclaim_overhead
from topospread.autoscaler.karpenter.instancetypes import InstanceType, satisfies_min_values
from topospread.autoscaler.karpenter.nodeclaim import (
    ExistingNode,
    NodeClaim,
    Resources,
    capacity_of,
    hostname_requirement,
    requests_of,
)
from topospread.autoscaler.karpenter.nodepool import NodePool, sorted_by_weight
from topospread.autoscaler.karpenter.preferences import relax
from topospread.autoscaler.karpenter.requirements import (
    Requirements,
    from_labels,
    pod_requirements,
)
from topospread.autoscaler.karpenter.topology import DomainSource, Topology
from topospread.autoscaler.karpenter.volumetopology import (
    Alternatives,
    MissingVolume,
    volume_requirements,
)

if TYPE_CHECKING:
    from topospread.cluster.storage import StorageState

NO_LIMIT: Final = 1 << 62
# Upstream: Scheduler.add when no NodePool has an instance type left.
NO_TEMPLATES: Final = "nodepool requirements filtered out all available instance types"
NO_NODEPOOLS: Final = "no dynamic nodepools found"


@dataclass(slots=True)
class Results:
    """Upstream: scheduling.Results: the new nodeclaims, pods placed on existing nodes, and the
    error of every pod that could not be placed."""

    new_nodeclaims: list[NodeClaim] = field(default_factory=list)
    existing: dict[str, list[str]] = field(default_factory=dict)  # node name -> pod keys
    pod_errors: dict[str, str] = field(default_factory=dict)


def pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace or 'default'}/{pod.metadata.name}"


def _sort_key(pod: Pod) -> tuple[int, int, str, str]:
    """Upstream: byCPUAndMemoryDescending (queue.go)"""
    r = requests_of(pod)
    return (
        -r.cpu_milli,
        -r.memory,
        pod.metadata.creation_timestamp or "",
        pod.metadata.uid or pod_key(pod),
    )


def truncation_error(claim: NodeClaim) -> str:
    """Why a new nodeclaim cannot launch: its cheapest MAX_INSTANCE_TYPES options do not cover
    a minValues (Strict policy); "" when they do. Its pods get the error.
    Upstream: Results.TruncateInstanceTypes (scheduler.go), InstanceTypes.Truncate"""
    if not claim.requirements.has_min_values():
        return ""
    _, short = satisfies_min_values(claim.instance_type_options(), claim.requirements)
    if not short:
        return ""
    return (
        "pod didn\u2019t schedule because NodePool couldn\u2019t meet minValues requirements, "
        f"validating minValues, {short} (NodePool={claim.nodepool.name})"
    )


class Queue:
    """Pods in packing order; stops once every pod has been retried without progress.

    Upstream: Queue (queue.go)"""

    def __init__(self, pods: Sequence[Pod]) -> None:
        self.pods = sorted(pods, key=_sort_key)
        self.last_len: dict[str, int] = {}

    def pop(self) -> Pod | None:
        if not self.pods:
            return None
        pod = self.pods[0]
        if self.last_len.get(pod_key(pod)) == len(self.pods):
            return None
        self.pods.pop(0)
        return pod

    def push(self, pod: Pod) -> None:
        self.pods.append(pod)
        self.last_len[pod_key(pod)] = len(self.pods)


def domain_sources(
    pools: Sequence[NodePool], catalogue: Sequence[InstanceType]
) -> list[DomainSource]:
    """Per NodePool, every value each label key can take on a node it launches: for each
    instance type, the NodePool's requirements and labels intersected key by key with the
    type's requirements (whose zones are every zone the type is offered in, available or
    not: the AWS provider's instance types keep a zone whose offerings are all in the
    unavailable-offerings cache), and the values of the NodePool's own ``In`` requirements
    and labels whether or not a type offers them. A NodePool without instance types adds
    nothing.
    Upstream: buildDomainGroups (topology.go)"""
    if not catalogue:
        return []
    out = []
    for pool in pools:
        base = Requirements(pool.requirements)
        base.add(*from_labels(pool.labels).values())
        domains: dict[str, set[str]] = {}
        for it in catalogue:
            reqs = base.copy()
            reqs.add(*it.requirements().values())
            for key, req in reqs.items():
                # NOTE: upstream inserts Requirement.Values(), which for a complement
                # (NotIn) requirement are the values it excludes; kept as upstream does.
                domains.setdefault(key, set()).update(req.values)
        for key, req in base.items():
            if not req.complement and req.values:
                domains.setdefault(key, set()).update(req.values)
        frozen = {k: frozenset(v) for k, v in domains.items() if v}
        out.append(DomainSource(frozen, pool.taints))
    return out


class Scheduler:
    """One provisioning run. Upstream: Scheduler (scheduler.go)"""

    def __init__(
        self,
        pools: Sequence[NodePool],
        catalogue: Sequence[InstanceType],
        existing: Sequence[ExistingNode],
        topology: Topology,
        pool_usage: Mapping[str, Resources],
        daemonsets: Sequence[DaemonSet] = (),
        hostname_start: int = 1,
        storage: StorageState | None = None,
    ) -> None:
        """``storage``: the claims, volumes and classes the pods' volumes name
        (volumetopology.py); None: their volumes do not constrain them."""
        self.pools = sorted_by_weight(pools)
        # Upstream: NewScheduler: with a PreferNoSchedule taint on any NodePool, relaxation
        # ends by tolerating PreferNoSchedule taints.
        self.tolerate_prefer_no_schedule = any(
            t.effect == "PreferNoSchedule" for p in self.pools for t in p.taints
        )
        self.catalogue = list(catalogue)
        # Upstream: sortExistingNodes: initialized nodes first, then by name.
        self.existing = sorted(existing, key=lambda n: (not n.initialized, n.name))
        self.topology = topology
        # Upstream: NewScheduler keeps, per NodePool, the instance types its requirements
        # allow with an available offering; a NodePool left with none is skipped.
        self.templates = {p.name: self._template_options(p) for p in self.pools}
        self.pools = [p for p in self.pools if self.templates[p.name]]
        daemons = daemon_pods(daemonsets)
        self.overhead = {
            p.name: nodeclaim_overhead(p, self.templates[p.name], daemons) for p in self.pools
        }
        self.remaining = {
            p.name: self._initial_remaining(p, pool_usage.get(p.name)) for p in self.pools
        }
        self.new_nodeclaims: list[NodeClaim] = []
        self._next_host = hostname_start
        self.storage = storage
        # Per pod key, the alternatives its volumes allow (None: unconstrained).
        self.volumes: dict[str, Alternatives | None] = {}

    def _template_options(self, pool: NodePool) -> list[InstanceType]:
        """Upstream: filterInstanceTypesByRequirements for an empty pod (NewScheduler)"""
        reqs = pool.node_requirements()
        options = [
            it
            for it in self.catalogue
            if it.requirements().intersects(reqs) and it.compatible_offerings(reqs)
        ]
        # Strict minValues: a NodePool whose types cannot cover them is skipped.
        return [] if satisfies_min_values(options, reqs)[1] else options

    @staticmethod
    def _initial_remaining(pool: NodePool, used: Resources | None) -> Resources:
        used = used or Resources()
        cpu = NO_LIMIT if pool.limits_cpu_milli is None else pool.limits_cpu_milli - used.cpu_milli
        mem = NO_LIMIT if pool.limits_memory is None else pool.limits_memory - used.memory
        return Resources(cpu, mem, NO_LIMIT)

    def solve(self, pods: Sequence[Pod]) -> Results:
        """Upstream: Scheduler.Solve; a pod whose claim or volume is missing is left out
        (Provisioner.getVolumeTopologyRequirements)"""
        if self.storage is not None:
            pods = [p for p in pods if self._read_volumes(p)]
        for p in pods:
            self.topology.update(p)
        results = Results()
        errors: dict[str, str] = {}
        queue = Queue(pods)
        while (pod := queue.pop()) is not None:
            error = self._try_schedule(pod, results)
            if error:
                errors[pod_key(pod)] = error
                # The pod goes back as it was, preferences and all: the next attempt relaxes
                # it again from the start (the topology may have changed under it).
                self.topology.update(pod)
                queue.push(pod)
            else:
                errors.pop(pod_key(pod), None)
        results.new_nodeclaims = []
        for claim in (c for c in self.new_nodeclaims if c.pods):
            if why := truncation_error(claim):
                errors.update((pod_key(p), why) for p in claim.pods)
            else:
                results.new_nodeclaims.append(claim)
        results.pod_errors = {k: errors[k] for k in sorted(errors)}
        return results

    def _read_volumes(self, pod: Pod) -> bool:
        assert self.storage is not None
        try:
            self.volumes[pod_key(pod)] = volume_requirements(pod, self.storage)
        except MissingVolume:
            return False
        return True

    def _try_schedule(self, pod: Pod, results: Results) -> str:
        """Add a copy of the pod, relaxing one preference after each failure until it fits or
        nothing is left to relax; "" when it fits, else the last error.
        Upstream: Scheduler.trySchedule (Solve passes it a deep copy)"""
        while True:
            error = self._add(pod, results)
            if not error:
                return ""
            relaxed = relax(pod, self.tolerate_prefer_no_schedule)
            if relaxed is None:
                return error
            pod = relaxed
            self.topology.update(pod)

    def _add(self, pod: Pod, results: Results) -> str:
        """Upstream: Scheduler.add"""
        pod_reqs = pod_requirements(pod)
        volumes = self.volumes.get(pod_key(pod))
        for node in self.existing:
            reqs, _ = node.can_add(pod, pod_reqs, self.topology, volumes)
            if reqs is not None:
                node.add(pod, reqs, self.topology)
                results.existing.setdefault(node.name, []).append(pod_key(pod))
                return ""
        # Upstream sorts the new nodeclaims by pod count so pods spread over them.
        self.new_nodeclaims.sort(key=lambda c: len(c.pods))
        for claim in self.new_nodeclaims:
            fit, _ = claim.can_add(pod, pod_reqs, self.topology, volumes)
            if fit is not None:
                claim.add(pod, fit[0], fit[1], self.topology)
                return ""
        if not self.pools:
            return NO_TEMPLATES
        return self._add_to_new_nodeclaim(pod, pod_reqs, volumes)

    def _add_to_new_nodeclaim(
        self, pod: Pod, pod_reqs: Requirements, volumes: Alternatives | None
    ) -> str:
        """Upstream: Scheduler.addToNewNodeClaim (errors joined as multierr does)"""
        errors = []
        for pool in self.pools:
            remaining = self.remaining[pool.name]
            options = [it for it in self.templates[pool.name] if capacity_of(it).fits_in(remaining)]
            if not options:
                errors.append("all available instance types exceed limits for nodepool")
                continue
            hostname = f"hostname-placeholder-{self._next_host:04d}"
            base = pool.node_requirements()
            base.add(hostname_requirement(hostname))
            overhead = self.overhead[pool.name]
            claim = NodeClaim(pool, hostname, base, options, overhead)
            self.topology.register(LABEL_HOSTNAME, hostname)
            fit, why = claim.can_add(pod, pod_reqs, self.topology, volumes)
            if fit is None:
                errors.append(why)
                continue
            self._next_host += 1
            claim.add(pod, fit[0], fit[1], self.topology)
            self.new_nodeclaims.append(claim)
            biggest = Resources(
                max(it.cpu_milli for it in claim.instance_types),
                max(it.memory for it in claim.instance_types),
                0,
            )
            self.remaining[pool.name] = remaining - biggest
            return ""
        return "; ".join(errors)
