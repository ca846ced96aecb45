"""``Karpenter.run_once``: one provisioning and disruption pass over a cluster and its pending pods.

The facade keeps only what Karpenter itself keeps between passes: the nodeclaims it launched that
have not registered yet (they count as in-flight capacity, so the same pods do not launch twice),
since when each node's pods have been unchanged (``consolidateAfter``), the nodes it is
disrupting, the nodes a provisioning pass nominated for pending pods, and the disruption
controller's clock: when it looks next and the command it is validating (validation.py). It
never changes the cluster it is given; the caller adds the nodes of the launched nodeclaims
(``NodeClaimLaunch.node``) and removes the disrupted ones.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

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
    METHOD_EMPTINESS,
    METHOD_MULTI_NODE,
    METHOD_SINGLE_NODE,
    Candidate,
    Command,
    Rescheduling,
    candidate_of,
    consolidatable,
    emptiness,
    multi_node,
    reschedulable,
    single_node,
    within_budgets,
)
from topospread.autoscaler.karpenter.drift import (
    METHOD_DRIFT,
    Drifted,
    drift,
    drift_reason,
    launch_key,
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
from topospread.autoscaler.karpenter.nodepool import (
    REASON_DRIFTED,
    REASON_EMPTY,
    REASON_UNDERUTILIZED,
    NodePool,
)
from topospread.autoscaler.karpenter.pending import ignored, provisionable
from topospread.autoscaler.karpenter.requirements import NODEPOOL_LABEL
from topospread.autoscaler.karpenter.results import (
    CreateFunc,
    Disruption,
    KarpenterResult,
    LaunchFailure,
    NodeClaimLaunch,
)
from topospread.autoscaler.karpenter.scheduler import (
    NO_NODEPOOLS,
    Results,
    Scheduler,
    domain_sources,
    pod_key,
)
from topospread.autoscaler.karpenter.topology import Topology
from topospread.autoscaler.karpenter.unavailableofferings import UnavailableOfferings
from topospread.autoscaler.karpenter.validation import (
    COMMAND_VALIDATION_DELAY,
    POLLING_PERIOD,
    Awaiting,
    ConsolidationState,
    nomination_window,
    validate,
)
from topospread.cluster.state import ClusterState
from topospread.framework.config import SchedulerConfig, default_config
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.preemption import parse_rfc3339_nanos
from topospread.framework.runtime import Registry


@dataclass(frozen=True, slots=True)
class _Pass:
    """What a disruption pass reads: the time, the cluster, the provisioner's pending pods,
    the nodes still starting up and the PodDisruptionBudgets."""

    now: float
    cluster: ClusterState
    pending: Sequence[Pod]
    not_initialized: frozenset[str]
    pdbs: Sequence[PodDisruptionBudget]


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


# Upstream: NewMethods (disruption/controller.go), less static drift (static NodePools are
# not modelled). Drift is the eventual one: its command is carried out without a wait.
_METHODS: Final = (METHOD_EMPTINESS, METHOD_DRIFT, METHOD_MULTI_NODE, METHOD_SINGLE_NODE)


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
        validation_delay: float = COMMAND_VALIDATION_DELAY,
        polling_period: float = POLLING_PERIOD,
        batch_max_duration: float = 10.0,
    ) -> None:
        """``validation_delay`` and ``polling_period``: the disruption controller's wait
        before it validates a command and between passes that found nothing (upstream's
        15s and 10s; 0 runs disruption at every pass and carries a command out at once, as
        upstream's tests do by stepping their clock); ``batch_max_duration`` sets how long
        a provisioning pass nominates the nodes it chose (``nomination_window``)."""
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
        self.pods_first_seen: dict[str, float] = {}
        # The wall clock at the model's second 0, nanoseconds since the Unix epoch: pods'
        # startTimes and budgets' schedules are read on it.
        self.clock_origin = 0
        self.disrupting: set[str] = set()
        self.unavailable = UnavailableOfferings()
        self._sequence = 0
        self.validation_delay = validation_delay
        self.polling_period = polling_period
        self.nomination_window = nomination_window(batch_max_duration)
        # Until when each node is nominated for a pending pod (not a candidate meanwhile).
        self.nominated: dict[str, float] = {}
        # When the disruption controller looks next, and the command it is validating.
        self.disruption_at = 0.0
        self.awaiting: Awaiting | None = None
        self.consolidation = ConsolidationState()
        # Drift: the template key each node was launched with (a node first seen: its
        # NodePool's then), and the nodes drifted since when and why.
        self.launched_with: dict[str, tuple[str, str]] = {}
        self.drifted: dict[str, Drifted] = {}

    def set_pools(self, pools: Iterable[NodePool]) -> None:
        """The NodePools as they are now (one applied or changed): the nodes launched from
        a NodePool whose template changed drift from it."""
        self.pools = {p.name: p for p in pools}

    def note_nodes(self, cluster: ClusterState) -> None:
        """Each node of a known NodePool not seen before was launched from it as it is now."""
        for info in cluster.list():
            pool = self.pools.get(info.node.metadata.labels.get(NODEPOOL_LABEL, ""))
            if pool is not None and info.name not in self.launched_with:
                self.launched_with[info.name] = launch_key(pool)

    def _observe_drift(self, now: float, cluster: ClusterState) -> None:
        """The nodes' Drifted conditions now (set when first found drifted, cleared when no
        longer). Upstream: the nodeclaim disruption controller's Drift.Reconcile, woken by a
        NodePool's change"""
        self.note_nodes(cluster)
        drifted = {}
        for info in cluster.list():
            pool = self.pools.get(info.node.metadata.labels.get(NODEPOOL_LABEL, ""))
            if pool is None:
                continue
            reason = drift_reason(info.node, pool, self.launched_with[info.name])
            if reason:
                drifted[info.name] = self.drifted.get(info.name) or Drifted(now, reason)
        self.drifted = drifted

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
        cached offerings. The disruption controller takes its turn when ``now`` reaches
        ``disruption_at`` (``_reconcile_disruption``), after the provisioning.
        Upstream: the nodeclaim lifecycle's launch (cloudprovider Create, InsufficientCapacity)
        """
        self.catalogue = self.unavailable.apply(self.base_catalogue, now)
        names = {info.name for info in cluster.list()} - set(not_initialized)
        for name in [n for n in self.in_flight if n in names]:
            del self.in_flight[name]
        self.disrupting &= names
        self._track_pod_changes(now, cluster)
        self._observe_drift(now, cluster)
        self._observe(now, cluster, not_initialized)
        result = KarpenterResult(now)
        starting = {n for n in not_initialized if n in self.in_flight}
        scheduler = self._scheduler(cluster, exclude=self.disrupting | starting)
        batch, errors = _batch(pending)
        # Upstream: Provisioner.Schedule places the pods of the nodes being deleted as well
        # (nodes.Deleting().ReschedulablePods), after the pending ones.
        placed = [*batch, *self.deleting_pods(cluster)]
        if not self.pools:
            # Upstream: Provisioner.Schedule: without NodePools nothing is scheduled, not
            # even onto existing nodes.
            errors.update((pod_key(p), NO_NODEPOOLS) for p in placed)
            solved = Results()
        else:
            solved = scheduler.solve(placed)
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
        # Upstream: Results.Record nominates the existing nodes (in-flight ones too) the
        # pass chose for pending pods.
        self.nominated = {n: t for n, t in self.nominated.items() if t > now}
        for name in solved.existing:
            self.nominated[name] = now + self.nomination_window
        if now >= self.disruption_at:
            # Upstream: the disruption controller runs beside the provisioner, whatever it
            # is launching; its simulation packs the pending pods too (SimulateScheduling).
            state = _Pass(now, cluster, batch, frozenset(not_initialized), pdbs)
            self._reconcile_disruption(state, create, result)
        return result

    def deleting_pods(self, cluster: ClusterState) -> list[Pod]:
        """The pods that must move off the nodes being deleted (disrupted or expired), which
        the provisioner places as it places pending pods."""
        return [
            pod
            for name in sorted(self.disrupting)
            if (info := cluster.get(name)) is not None
            for pod in sorted(info.pods, key=pod_key)
            if reschedulable(pod)
        ]

    def started(self, pod: Pod) -> float | None:
        """When the pod started, on the model's clock: its ``status.startTime``, else when
        a pass first saw it on a node (the kubelet's stamp, which the simulation's pods do
        not get), else unknown."""
        if pod.status.start_time:
            nanos = parse_rfc3339_nanos(pod.status.start_time)
            if nanos is not None:
                return (nanos - self.clock_origin) / 1e9
        return self.pods_first_seen.get(pod_key(pod))

    def _track_pod_changes(self, now: float, cluster: ClusterState) -> None:
        """Since when each node's pods are unchanged (Karpenter's Consolidatable condition),
        and since when each pod is on a node."""
        seen = {}
        first_seen = {}
        for info in cluster.list():
            for p in info.pods:
                key = pod_key(p)
                first_seen[key] = self.pods_first_seen.get(key, now)
            pods = frozenset(pod_key(p) for p in info.pods)
            previous = self.pods_since.get(info.name)
            seen[info.name] = (
                previous if previous is not None and previous[0] == pods else (pods, now)
            )
        self.pods_since = seen
        self.pods_first_seen = first_seen

    def _scheduler(
        self,
        cluster: ClusterState,
        exclude: set[str],
        settling: Collection[str] = (),
        uninitialized: Collection[str] = (),
    ) -> Scheduler:
        """The provisioning scheduler over the cluster without the ``exclude`` nodes; the
        ``settling`` ones count for topology but take no pod (a consolidation simulation's
        nodes under consolidateAfter); the ``uninitialized`` ones are packed after the
        initialized ones."""
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
                initialized = info.name not in uninitialized
                existing.append(
                    ExistingNode.of(info.node, pods, initialized, daemon_reserve=reserve)
                )
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
        return Scheduler(
            pools,
            self.catalogue,
            existing,
            topology,
            usage,
            self.daemonsets,
            storage=cluster.storage_state,
        )

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
        self.launched_with[name] = launch_key(claim.nodepool)
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

    def _candidates(self, p: _Pass, eventual: bool = False) -> list[Candidate]:
        """The nodes that may be disrupted now: initialized, not being disrupted, not
        nominated for a pending pod, their pods unchanged for consolidateAfter (for
        consolidation; not ``eventual``, drift), and disruptable (candidate_of), highest
        savings per disruption first.
        Upstream: GetCandidates, StateNode.ValidateNodeDisruptable (Nominated), the methods'
        ShouldDisrupt"""
        out = []
        for info in p.cluster.list():
            name = info.name
            if (
                name in self.disrupting
                or name in p.not_initialized
                or self.nominated.get(name, 0.0) > p.now
                or info.node.metadata.deletion_timestamp is not None
            ):
                continue
            pods = list(info.pods)
            c = candidate_of(
                info.node, pods, self.pools, self.catalogue, p.pdbs, p.now, self.started, eventual
            )
            if isinstance(c, str):
                continue
            since = self.pods_since.get(name, (frozenset(), p.now))[1]
            if not eventual and p.now - since < c.pool.consolidate_after:
                continue
            out.append(c)
        # Upstream: sortCandidates: by savings per unit of disruption, highest first (Go's
        # sort is not stable; ties here by name).
        return sorted(out, key=lambda c: (-c.savings_ratio, c.name))

    def _allowed(
        self, cluster: ClusterState, reason: str, not_initialized: Collection[str], now: float
    ) -> dict[str, int]:
        """Per NodePool, how many more nodes may be disrupted for ``reason`` at ``now``: its
        budgets active then over its initialized nodes, less those disrupting or not Ready.
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
        wall = self.clock_origin + round(now * 1e9)
        return {
            name: pool.allowed_disruptions(
                totals.get(name, 0), disrupting.get(name, 0), reason, wall
            )
            for name, pool in self.pools.items()
        }

    def _reconcile_disruption(
        self, p: _Pass, create: CreateFunc | None, result: KarpenterResult
    ) -> None:
        """The disruption controller at ``p.now``: validate the command it computed a
        validation delay ago and carry it out, then try emptiness, drift, multi-node and
        single-node consolidation in turn (after a command fails validation, the methods
        after its own); the first command found waits for its validation, but drift's,
        which is carried out at once before the methods are tried again. With no delay
        the command is carried out at once and the controller looks again at the next pass.
        Upstream: Controller.Reconcile, Controller.disrupt (disruption/controller.go), the
        methods' ComputeCommands and their Validator.Validate"""
        start = 0
        self._observe(p.now, p.cluster, p.not_initialized)
        if self.awaiting is not None:
            awaiting, self.awaiting = self.awaiting, None
            command, why = self._validate(awaiting.command, p)
            if command is None:
                result.rejected.append((awaiting.command, why))
                start = awaiting.method + 1
            else:
                self._execute(command, p.now, create, result)
                self._observe(p.now, p.cluster, p.not_initialized)
        method = start
        while method < len(_METHODS):
            command = self._compute(method, p)
            if command is None:
                method += 1
                continue
            if _METHODS[method] == METHOD_DRIFT:
                # Eventual: carried out at once, and the controller looks again at once
                # (RequeueImmediately), from its first method; a replacement that cannot
                # launch ends the pass (the offering is cached as unavailable meanwhile).
                if not self._execute(command, p.now, create, result):
                    break
                self._observe(p.now, p.cluster, p.not_initialized)
                method = 0
                continue
            if self.validation_delay > 0:
                due = p.now + self.validation_delay
                self.awaiting = Awaiting(command, method, due)
                self.disruption_at = due
            else:
                self._execute(command, p.now, create, result)
                self.disruption_at = p.now
            return
        self.disruption_at = p.now + self.polling_period

    def _compute(self, method: int, p: _Pass) -> Command | None:
        """The command of one method (emptiness, multi-node, single-node), if any: none
        without candidates of its own, or while the cluster is as it was when the method
        last found nothing (unless a budget held a candidate back then).
        Upstream: Controller.disrupt, the methods' ComputeCommands (IsConsolidated,
        constrainedByBudgets, markConsolidated)"""
        if _METHODS[method] == METHOD_DRIFT:
            if not self.drifted:
                return None
            allowed = self._allowed(p.cluster, REASON_DRIFTED, p.not_initialized, p.now)
            return drift(
                self._candidates(p, eventual=True), self.drifted, allowed, self._rescheduling(p)
            )
        empty = _METHODS[method] == METHOD_EMPTINESS
        candidates = self._candidates(p)
        mine = [c for c in candidates if c.is_empty] if empty else consolidatable(candidates)
        if not mine or self.consolidation.is_consolidated(method, p.now):
            return None
        reason = REASON_EMPTY if empty else REASON_UNDERUTILIZED
        allowed = self._allowed(p.cluster, reason, p.not_initialized, p.now)
        command: Command | None
        if empty:
            command = emptiness(candidates, allowed)
            constrained = len(within_budgets(mine, allowed)) < len(mine)
        elif _METHODS[method] == METHOD_MULTI_NODE:
            command = multi_node(candidates, allowed, self._rescheduling(p))
            constrained = len(within_budgets(mine, allowed)) < len(mine)
        else:
            command = single_node(candidates, allowed, self._rescheduling(p))
            constrained = any(allowed.get(c.pool.name, 0) <= 0 for c in mine)
        if command is None and not constrained:
            self.consolidation.mark_consolidated(method, p.now)
        return command

    def _observe(self, now: float, cluster: ClusterState, not_initialized: Collection[str]) -> None:
        """Note the cluster as upstream's consolidation-state triggers see it: each node
        (initialized, marked for deletion), each nodeclaim not yet registered, each node's
        pods. Upstream: the cluster state's MarkUnconsolidated calls (state/cluster.go)"""
        names = set()
        nodes = []
        for info in cluster.list():
            names.add(info.name)
            marked = info.name in self.disrupting or info.node.metadata.deletion_timestamp
            nodes.append((info.name, info.name not in not_initialized, bool(marked)))
        claims = frozenset(n for n in self.in_flight if n not in names)
        pods = frozenset((n, since[0]) for n, since in self.pods_since.items())
        self.consolidation.observe(now, (frozenset(nodes), claims, pods))

    def _validate(self, command: Command, p: _Pass) -> tuple[Command | None, str]:
        """Upstream: the methods' Validator.Validate (disruption/validation.go)"""
        current = {c.name: c for c in self._candidates(p)}
        nominated = frozenset(n for n, t in self.nominated.items() if t > p.now)
        reason = REASON_EMPTY if command.method == METHOD_EMPTINESS else REASON_UNDERUTILIZED
        allowed = self._allowed(p.cluster, reason, p.not_initialized, p.now)
        where = None if command.method == METHOD_EMPTINESS else self._rescheduling(p)
        return validate(command, current, nominated, allowed, where)

    def _rescheduling(self, p: _Pass) -> Rescheduling:
        """Where a consolidation's pods may go now: not onto nodes being disrupted, starting
        up or settling (under consolidateAfter); the simulation also packs the pending pods
        and those of the nodes being disrupted, and fails when a candidate's pod would go to
        a node not yet initialized (an in-flight nodeclaim).
        Upstream: SimulateScheduling (disruption/helpers.go), UninitializedNodeError"""
        checker = PredicateChecker(
            ClusterSnapshot(p.cluster), self.profile, self.registry, self.features
        )
        settling = self._settling(p.now, p.cluster)
        starting = {n for n in p.not_initialized if n in self.in_flight}
        uninitialized = set(p.not_initialized) | set(self.in_flight)
        deleting = [
            pod
            for info in p.cluster.list()
            if info.name in self.disrupting
            for pod in info.pods
            if reschedulable(pod)
        ]
        deleting_keys = {pod_key(pod) for pod in deleting}

        def simulate(group: Sequence[Candidate]) -> list[NodeClaim] | None:
            gone = self.disrupting | starting | {c.name for c in group}
            moving = [pod for c in group for pod in c.pods]
            scheduler = self._scheduler(p.cluster, gone, settling, p.not_initialized)
            solved = scheduler.solve([*p.pending, *deleting, *moving])
            moving_keys = {pod_key(pod) for pod in moving}
            if any(k in moving_keys or k in deleting_keys for k in solved.pod_errors):
                return None
            for node, keys in solved.existing.items():
                if node in uninitialized and any(k in moving_keys for k in keys):
                    return None
            return solved.new_nodeclaims

        excluded = set(self.disrupting) | settling | set(p.not_initialized)
        crowded = bool(p.pending or deleting)
        return Rescheduling(checker, simulate, excluded, crowded)

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

    def _execute(
        self, command: Command, now: float, create: CreateFunc | None, result: KarpenterResult
    ) -> bool:
        """Start the command: launch its replacement (the command fails with it, and its
        candidates stay) and mark its candidates as disrupting.
        Upstream: Queue.StartCommand (disruption/queue.go)"""
        disruption = self._disruption(command, now, create)
        if isinstance(disruption, LaunchFailure):
            result.launch_failures.append(disruption)
            return False
        self.disrupting.update(disruption.nodes)
        for replacement in disruption.replacements:
            self.in_flight[replacement.name] = replacement
        result.disruptions.append(disruption)
        return True

    def _disruption(
        self, command: Command, now: float, create: CreateFunc | None
    ) -> Disruption | LaunchFailure:
        """The command's replacements launched (the first that fails fails the command)."""
        claims = [command.replacement, *command.extra_replacements]
        replacements: list[NodeClaimLaunch] = []
        for claim in claims:
            if claim is None:
                continue
            launched = self._launch(claim, now, create)
            if isinstance(launched, LaunchFailure):
                return launched
            replacements.append(launched)
        total = sum(c.price for c in command.candidates)
        return Disruption(
            command.method,
            command.reason,
            command.decision,
            tuple(c.name for c in command.candidates),
            tuple(replacements),
            total - sum(r.price for r in replacements),
        )
