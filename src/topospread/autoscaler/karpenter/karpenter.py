"""``Karpenter.run_once``: one provisioning and disruption pass over a cluster and its pending pods.

The facade keeps only what Karpenter itself keeps between passes: the nodeclaims it launched that
have not registered yet (they count as in-flight capacity, so the same pods do not launch twice),
since when each node's pods have been unchanged (``consolidateAfter``), and the nodes it is
disrupting. It never changes the cluster it is given; the caller adds the nodes of the launched
nodeclaims (``NodeClaimLaunch.node``) and removes the disrupted ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

from topospread.api.types import (
    CONDITION_TRUE,
    NODE_READY,
    DaemonSet,
    Node,
    Pod,
    PodDisruptionBudget,
)
from topospread.autoscaler.clusterautoscaler.snapshot import ClusterSnapshot, PredicateChecker
from topospread.autoscaler.karpenter.daemons import daemon_pods, existing_node_reserve
from topospread.autoscaler.karpenter.disruption import (
    Candidate,
    Command,
    candidate_of,
    emptiness,
    multi_node,
    single_node,
)
from topospread.autoscaler.karpenter.instancetypes import (
    InstanceType,
    Offering,
    builtin_catalogue,
)
from topospread.autoscaler.karpenter.nodeclaim import (
    ExistingNode,
    NodeClaim,
    Resources,
    node_capacity_of,
    node_for,
)
from topospread.autoscaler.karpenter.nodepool import REASON_EMPTY, REASON_UNDERUTILIZED, NodePool
from topospread.autoscaler.karpenter.pending import ignored, provisionable
from topospread.autoscaler.karpenter.requirements import NODEPOOL_LABEL
from topospread.autoscaler.karpenter.scheduler import (
    NO_NODEPOOLS,
    Results,
    Scheduler,
    domain_sources,
    pod_key,
)
from topospread.autoscaler.karpenter.topology import Topology
from topospread.autoscaler.karpenter.unavailableofferings import UnavailableOfferings
from topospread.cluster.state import ClusterState
from topospread.framework.config import SchedulerConfig, default_config
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry


@dataclass(frozen=True, slots=True)
class NodeClaimLaunch:
    """A nodeclaim to create: where and what the cloud launches, and for which pods."""

    name: str
    nodepool: str
    instance_type: str
    zone: str
    capacity_type: str
    price: float
    pods: tuple[str, ...]
    instance_type_options: tuple[str, ...]
    node: Node

    @property
    def reason(self) -> str:
        return f"provisioning {len(self.pods)} pod(s): {', '.join(self.pods)}"


@dataclass(frozen=True, slots=True)
class Disruption:
    """Nodes to disrupt, why (method, reason), and the replacement when there is one."""

    method: str
    reason: str
    decision: str
    nodes: tuple[str, ...]
    replacement: NodeClaimLaunch | None
    savings: float

    @property
    def message(self) -> str:
        text = f"{self.method}: {self.decision} {', '.join(self.nodes)} ({self.reason})"
        if self.replacement is not None:
            r = self.replacement
            text += f", replaced by {r.instance_type} {r.capacity_type} in {r.zone}"
        return text + f", saving ${self.savings:.4f}/h"


@dataclass(frozen=True, slots=True)
class LaunchFailure:
    """A nodeclaim the cloud could not launch: every offering it tried was out of capacity
    (each now in the unavailable-offerings cache); the nodeclaim is deleted and its pods wait
    for the next pass."""

    name: str
    nodepool: str
    pods: tuple[str, ...]
    tried: tuple[tuple[str, str, str, str], ...]  # instance type, zone, capacity type, error

    @property
    def reason(self) -> str:
        offerings = ", ".join(f"{it} {ct} in {zone}" for it, zone, ct, _ in self.tried[:3])
        more = f" and {len(self.tried) - 3} more" if len(self.tried) > 3 else ""
        return (
            f"failed launching nodeclaim {self.name}: insufficient capacity for "
            f"{offerings}{more} ({self.tried[0][3]}); the nodeclaim is deleted and the "
            "offerings are unavailable for 3m"
        )


# The cloud's answer to one launch: None when it can launch the offering (instance type, zone,
# capacity type), else the insufficient-capacity error's text.
CreateFunc = Callable[[str, str, str], "str | None"]


@dataclass(slots=True)
class KarpenterResult:
    """What one pass decided."""

    now: float
    launched: list[NodeClaimLaunch] = field(default_factory=list)
    launch_failures: list[LaunchFailure] = field(default_factory=list)
    pod_errors: dict[str, str] = field(default_factory=dict)
    scheduled_on_existing: dict[str, list[str]] = field(default_factory=dict)
    disruptions: list[Disruption] = field(default_factory=list)


def _batch(pending: Sequence[Pod]) -> tuple[list[Pod], dict[str, str]]:
    """The pending pods the provisioner takes, and the errors of those it ignores.
    Upstream: Provisioner.GetPendingPods"""
    batch = []
    errors = {}
    for pod in pending:
        if not provisionable(pod):
            continue
        skip, why = ignored(pod)
        if not skip:
            batch.append(pod)
        elif why:
            errors[pod_key(pod)] = why
    return batch, errors


class Karpenter:
    """Karpenter's provisioner and disruption controller on the project's scheduler framework."""

    def __init__(
        self,
        pools: Iterable[NodePool],
        catalogue: Sequence[InstanceType] | None = None,
        *,
        daemonsets: Sequence[DaemonSet] = (),
        config: SchedulerConfig | None = None,
        registry: Registry | None = None,
        features: Features = DEFAULT_FEATURES,
    ) -> None:
        self.pools = {p.name: p for p in pools}
        # The instance types as the cloud lists them, and as a pass sees them (without the
        # offerings in the unavailable-offerings cache).
        self.base_catalogue = list(catalogue) if catalogue is not None else builtin_catalogue()
        self.catalogue = list(self.base_catalogue)
        self.daemonsets = list(daemonsets)
        self.profile = (config if config is not None else default_config()).profiles[0]
        if registry is None:
            from topospread.plugins.registry import IN_TREE

            registry = IN_TREE
        self.registry = registry
        self.features = features
        self.in_flight: dict[str, NodeClaimLaunch] = {}
        self.pods_since: dict[str, tuple[frozenset[str], float]] = {}
        self.disrupting: set[str] = set()
        self.unavailable = UnavailableOfferings()
        self._sequence = 0

    def run_once(
        self,
        now: float,
        cluster: ClusterState,
        pending: Sequence[Pod],
        not_initialized: Collection[str] = (),
        create: CreateFunc | None = None,
        pdbs: Sequence[PodDisruptionBudget] = (),
    ) -> KarpenterResult:
        """One pass at ``now`` (seconds) over ``cluster`` (not modified) and its pending pods.

        ``not_initialized`` names registered nodes still starting up: their nodeclaims stay
        in flight (packed as launched, without the node's ephemeral not-ready taints) and
        they are not disruption candidates, as Karpenter treats uninitialized nodes.
        ``pdbs``: the PodDisruptionBudgets, whose blocked pods keep their nodes from being
        disruption candidates.
        ``create`` is the cloud: each nodeclaim launches its cheapest offering the cloud can
        serve; those it cannot go into the unavailable-offerings cache, and a nodeclaim with
        none left fails (``launch_failures``). The decisions read the catalogue without the
        cached offerings.
        Upstream: the nodeclaim lifecycle's launch (cloudprovider Create, InsufficientCapacity)
        """
        self.catalogue = self.unavailable.apply(self.base_catalogue, now)
        names = {info.name for info in cluster.list()} - set(not_initialized)
        for name in [n for n in self.in_flight if n in names]:
            del self.in_flight[name]
        self.disrupting &= names
        self._track_pod_changes(now, cluster)
        result = KarpenterResult(now)
        starting = {n for n in not_initialized if n in self.in_flight}
        scheduler = self._scheduler(cluster, exclude=self.disrupting | starting)
        batch, errors = _batch(pending)
        if not self.pools:
            # Upstream: Provisioner.Schedule: without NodePools nothing is scheduled, not
            # even onto existing nodes.
            errors.update((pod_key(p), NO_NODEPOOLS) for p in batch)
            solved = Results()
        else:
            solved = scheduler.solve(batch)
        errors.update(solved.pod_errors)
        result.pod_errors = {k: errors[k] for k in sorted(errors)}
        result.scheduled_on_existing = solved.existing
        for claim in solved.new_nodeclaims:
            launched = self._launch(claim, now, create)
            if isinstance(launched, LaunchFailure):
                result.launch_failures.append(launched)
                continue
            self.in_flight[launched.name] = launched
            result.launched.append(launched)
        if result.launch_failures:
            self.catalogue = self.unavailable.apply(self.base_catalogue, now)
        if not result.launched and not self.in_flight:
            command = self._consolidate(now, cluster, not_initialized, pdbs)
            disruption = None if command is None else self._disruption(command, now, create)
            if isinstance(disruption, LaunchFailure):
                # Upstream: the command fails with its replacement; the candidates stay.
                result.launch_failures.append(disruption)
            elif disruption is not None:
                self.disrupting.update(disruption.nodes)
                if disruption.replacement is not None:
                    self.in_flight[disruption.replacement.name] = disruption.replacement
                result.disruptions.append(disruption)
        return result

    def _track_pod_changes(self, now: float, cluster: ClusterState) -> None:
        """Since when each node's pods are unchanged (Karpenter's Consolidatable condition)."""
        seen = {}
        for info in cluster.list():
            pods = frozenset(pod_key(p) for p in info.pods)
            previous = self.pods_since.get(info.name)
            seen[info.name] = (
                previous if previous is not None and previous[0] == pods else (pods, now)
            )
        self.pods_since = seen

    def _scheduler(
        self, cluster: ClusterState, exclude: set[str], settling: Collection[str] = ()
    ) -> Scheduler:
        """The provisioning scheduler over the cluster without the ``exclude`` nodes; the
        ``settling`` ones count for topology but take no pod (a consolidation simulation's
        nodes under consolidateAfter)."""
        existing = []
        daemons = daemon_pods(self.daemonsets)
        topo_nodes: list[tuple[Node, Sequence[Pod]]] = []
        usage: dict[str, Resources] = {}
        for info in cluster.list():
            if info.name in exclude or info.node.metadata.deletion_timestamp is not None:
                continue
            pods = list(info.pods)
            topo_nodes.append((info.node, pods))
            # Cordoned or settling: counted, never a destination.
            if not info.node.spec.unschedulable and info.name not in settling:
                reserve = existing_node_reserve(info.node, pods, daemons)
                existing.append(ExistingNode.of(info.node, pods, daemon_reserve=reserve))
            pool = info.node.metadata.labels.get(NODEPOOL_LABEL, "")
            usage[pool] = usage.get(pool, Resources()) + node_capacity_of(info.node)
        for launch in self.in_flight.values():
            reserve = existing_node_reserve(launch.node, [], daemons)
            existing.append(
                ExistingNode.of(launch.node, [], initialized=False, daemon_reserve=reserve)
            )
            topo_nodes.append((launch.node, []))
            usage[launch.nodepool] = usage.get(launch.nodepool, Resources()) + node_capacity_of(
                launch.node
            )
        pools = list(self.pools.values())
        topology = Topology(domain_sources(pools, self.catalogue), topo_nodes)
        return Scheduler(pools, self.catalogue, existing, topology, usage, self.daemonsets)

    def _launch(
        self, claim: NodeClaim, now: float, create: CreateFunc | None
    ) -> NodeClaimLaunch | LaunchFailure:
        """Launch the claim's cheapest offering the cloud can serve, caching the ones it
        cannot as unavailable."""
        self._sequence += 1
        name = f"{claim.nodepool.name}-{self._sequence:05d}"
        tried: list[tuple[str, str, str, str]] = []
        for it, offering in claim.launch_choices():
            error = create(it.name, offering.zone, offering.capacity_type) if create else None
            if error is None:
                return self._launched(claim, name, it, offering)
            self.unavailable.mark_unavailable(now, it.name, offering.zone, offering.capacity_type)
            tried.append((it.name, offering.zone, offering.capacity_type, error))
        return LaunchFailure(
            name, claim.nodepool.name, tuple(pod_key(p) for p in claim.pods), tuple(tried)
        )

    def _launched(
        self, claim: NodeClaim, name: str, it: InstanceType, offering: Offering
    ) -> NodeClaimLaunch:
        return NodeClaimLaunch(
            name,
            claim.nodepool.name,
            it.name,
            offering.zone,
            offering.capacity_type,
            offering.price,
            tuple(pod_key(p) for p in claim.pods),
            tuple(i.name for i in claim.instance_type_options()),
            node_for(claim, name, it, offering),
        )

    def _candidates(
        self, now: float, cluster: ClusterState, pdbs: Sequence[PodDisruptionBudget] = ()
    ) -> list[Candidate]:
        out = []
        for info in cluster.list():
            if info.name in self.disrupting or info.node.metadata.deletion_timestamp is not None:
                continue
            c = candidate_of(info.node, list(info.pods), self.pools, self.catalogue, pdbs)
            if isinstance(c, str):
                continue
            since = self.pods_since.get(info.name, (frozenset(), now))[1]
            if now - since < c.pool.consolidate_after:
                continue
            out.append(c)
        # Upstream: sortCandidates: by savings per unit of disruption, highest first (Go's
        # sort is not stable; ties here by name).
        return sorted(out, key=lambda c: (-c.savings_ratio, c.name))

    def _allowed(
        self, cluster: ClusterState, reason: str, not_initialized: Collection[str]
    ) -> dict[str, int]:
        """Per NodePool, how many more nodes may be disrupted for ``reason``: its budgets over
        its initialized nodes, less those disrupting or not Ready.
        Upstream: BuildDisruptionBudgetMapping (disruption/helpers.go)"""
        totals: dict[str, int] = {}
        disrupting: dict[str, int] = {}
        for info in cluster.list():
            pool = info.node.metadata.labels.get(NODEPOOL_LABEL)
            if pool is None or info.name in not_initialized:
                continue
            totals[pool] = totals.get(pool, 0) + 1
            deleting = info.name in self.disrupting or info.node.metadata.deletion_timestamp
            # NOTE: a node without a Ready condition counts as Ready (the model's nodes
            # usually carry none); upstream reads a missing condition as not Ready.
            not_ready = any(
                c.type == NODE_READY and c.status != CONDITION_TRUE
                for c in info.node.status.conditions
            )
            if deleting or not_ready:
                disrupting[pool] = disrupting.get(pool, 0) + 1
        return {
            name: pool.allowed_disruptions(totals.get(name, 0), disrupting.get(name, 0), reason)
            for name, pool in self.pools.items()
        }

    def _consolidate(
        self,
        now: float,
        cluster: ClusterState,
        not_initialized: Collection[str],
        pdbs: Sequence[PodDisruptionBudget] = (),
    ) -> Command | None:
        """Emptiness, then multi-node, then single-node consolidation; the first command wins.
        Upstream: disruption.Controller's method order"""
        candidates = [
            c for c in self._candidates(now, cluster, pdbs) if c.name not in set(not_initialized)
        ]
        if not candidates:
            return None
        command = emptiness(candidates, self._allowed(cluster, REASON_EMPTY, not_initialized))
        if command is not None:
            return command
        checker = PredicateChecker(
            ClusterSnapshot(cluster), self.profile, self.registry, self.features
        )
        allowed = self._allowed(cluster, REASON_UNDERUTILIZED, not_initialized)
        excluded = set(self.disrupting)
        settling = self._settling(now, cluster)

        def replacer(group: Sequence[Candidate]) -> NodeClaim | None:
            gone = excluded | {c.name for c in group}
            pods = [p for c in group for p in c.pods]
            solved = self._scheduler(cluster, gone, settling).solve(pods)
            if solved.pod_errors or len(solved.new_nodeclaims) != 1:
                return None
            return solved.new_nodeclaims[0]

        no_destination = excluded | settling
        return multi_node(candidates, allowed, checker, replacer, no_destination) or single_node(
            candidates, allowed, checker, replacer, no_destination
        )

    def _settling(self, now: float, cluster: ClusterState) -> set[str]:
        """Nodes whose pods changed within their NodePool's consolidateAfter (neither 0 nor
        Never): a consolidation moves no pod onto them.
        Upstream: IsUnderConsolidateAfter (utils/disruption), Scheduler.addToExistingNode"""
        out = set()
        for info in cluster.list():
            pool = self.pools.get(info.node.metadata.labels.get(NODEPOOL_LABEL, ""))
            if pool is None or not 0 < pool.consolidate_after < math.inf:
                continue
            since = self.pods_since.get(info.name, (frozenset(), now))[1]
            if now - since < pool.consolidate_after:
                out.add(info.name)
        return out

    def _disruption(
        self, command: Command, now: float, create: CreateFunc | None
    ) -> Disruption | LaunchFailure:
        replacement: NodeClaimLaunch | None = None
        if command.replacement is not None:
            launched = self._launch(command.replacement, now, create)
            if isinstance(launched, LaunchFailure):
                return launched
            replacement = launched
        total = sum(c.price for c in command.candidates)
        return Disruption(
            command.method,
            command.reason,
            command.decision,
            tuple(c.name for c in command.candidates),
            replacement,
            total - (replacement.price if replacement is not None else 0.0),
        )
