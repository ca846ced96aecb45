"""Consolidation: Karpenter's emptiness, multi-node and single-node methods, within budgets.

Candidates are the NodePools' nodes that are consolidatable (their pods unchanged for the
pool's ``consolidateAfter``), not annotated ``karpenter.sh/do-not-disrupt`` and without such a
pod. They are taken in disruption-cost order while each pool's budget for the reason allows.
A set of candidates can go when their pods fit the remaining nodes by the scheduler's own
filters (the cluster-autoscaler core's snapshot and predicate checker, the project's one
framework); failing that it may be replaced by one new nodeclaim from Karpenter's packing, if
that nodeclaim is cheaper than the candidates together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from topospread.api.types import (
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_TOPOLOGY_ZONE,
    Node,
    Pod,
    PodDisruptionBudget,
)
from topospread.autoscaler.clusterautoscaler.drainability import (
    RemainingPdbTracker,
    is_daemonset_pod,
    is_mirror_pod,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.clusterautoscaler.options import parse_go_duration
from topospread.autoscaler.clusterautoscaler.snapshot import PredicateChecker
from topospread.autoscaler.karpenter.instancetypes import InstanceType, satisfies_min_values
from topospread.autoscaler.karpenter.nodeclaim import NodeClaim
from topospread.autoscaler.karpenter.nodepool import (
    CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED,
    REASON_EMPTY,
    REASON_UNDERUTILIZED,
    NodePool,
)
from topospread.autoscaler.karpenter.requirements import (
    CAPACITY_TYPE_LABEL,
    CAPACITY_TYPE_ON_DEMAND,
    CAPACITY_TYPE_SPOT,
    NODEPOOL_LABEL,
    Requirement,
)

DO_NOT_DISRUPT: Final = "karpenter.sh/do-not-disrupt"
# Upstream: MultiNodeConsolidation considers at most 100 candidates.
MAX_MULTI_NODE_CANDIDATES: Final = 100
# Upstream: PerNodeBaseDisruptionCost (disruption/types.go).
PER_NODE_BASE_DISRUPTION_COST: Final = 1.0
METHOD_EMPTINESS: Final = "emptiness"
METHOD_MULTI_NODE: Final = "multi-node consolidation"
METHOD_SINGLE_NODE: Final = "single-node consolidation"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node that may be disrupted. Upstream: disruption.Candidate"""

    node: Node
    pool: NodePool
    pods: tuple[Pod, ...]  # the pods that would be rescheduled
    price: float
    disruption_cost: float
    # Whether the catalogue knows the node's instance type (consolidation prices it).
    known_type: bool = True

    @property
    def name(self) -> str:
        return self.node.metadata.name

    @property
    def reschedule_disruption_cost(self) -> float:
        """1 for the node, plus each moving pod's eviction cost (not below 0).
        Upstream: computeRescheduleDisruptionCost (disruption/types.go)"""
        return PER_NODE_BASE_DISRUPTION_COST + sum(max(0.0, eviction_cost(p)) for p in self.pods)

    @property
    def savings_ratio(self) -> float:
        """Price per unit of disruption: the higher, the sooner disrupted.
        Upstream: Candidate.SavingsRatio"""
        return self.price / self.reschedule_disruption_cost

    @property
    def is_empty(self) -> bool:
        """No moving pod adds to the disruption cost. Upstream: Candidate.IsEmpty"""
        return self.reschedule_disruption_cost <= PER_NODE_BASE_DISRUPTION_COST

    @property
    def capacity_type(self) -> str:
        return self.node.metadata.labels.get(CAPACITY_TYPE_LABEL, "")

    @property
    def instance_type(self) -> str:
        return self.node.metadata.labels.get(LABEL_INSTANCE_TYPE_STABLE, "")


def reschedulable(pod: Pod) -> bool:
    """Pods that move when their node goes: not DaemonSet, mirror or finished pods."""
    return not (
        is_daemonset_pod(pod)
        or is_mirror_pod(pod)
        or pod.status.phase in ("Succeeded", "Failed")
        or pod.metadata.deletion_timestamp is not None
    )


def node_price(node: Node, catalogue: Sequence[InstanceType]) -> float:
    """The node's offering price (0 when the catalogue does not know it)."""
    labels = node.metadata.labels
    for it in catalogue:
        if it.name != labels.get(LABEL_INSTANCE_TYPE_STABLE):
            continue
        for o in it.offerings:
            if o.zone == labels.get(LABEL_TOPOLOGY_ZONE) and o.capacity_type == labels.get(
                CAPACITY_TYPE_LABEL
            ):
                return o.price
    return 0.0


def eviction_cost(pod: Pod) -> float:
    """Upstream: disruptionutils.EvictionCost: 1, plus the deletion cost and priority scaled."""
    cost = 1.0
    raw = pod.metadata.annotations.get("controller.kubernetes.io/pod-deletion-cost")
    if raw is not None and raw.lstrip("-").isdigit():
        cost += int(raw) / 2**27
    cost += (pod.spec.priority or 0) / 2**25
    return min(max(cost, -10.0), 10.0)


def _active(pod: Pod) -> bool:
    """Upstream: pod.IsActive (not terminal, not terminating)"""
    terminal = pod.status.phase in ("Succeeded", "Failed")
    return not terminal and pod.metadata.deletion_timestamp is None


def _pdb_blocks(pod: Pod, pdbs: RemainingPdbTracker) -> str:
    """Why a PodDisruptionBudget keeps the pod from being evicted ("" when none does): more
    than one budget selects it, or its budget allows no disruption (an unready pod passes an
    AlwaysAllow budget). Upstream: pdb.Limits.isEvictable (zeroDisruptions)"""
    if not _active(pod) or is_mirror_pod(pod):
        return ""
    matching = pdbs.matching_pdbs(pod)
    if len(matching) > 1:
        return "eviction does not support multiple PDBs"
    for pdb in matching:
        unready = any(c.type == "Ready" and c.status == "False" for c in pod.status.conditions)
        if pdb.spec.unhealthy_pod_eviction_policy == "AlwaysAllow" and unready:
            return ""
        if pdb.status.disruptions_allowed == 0:
            return "pdb prevents pod evictions"
    return ""


def do_not_disrupt_active(pod: Pod, now: float, started: float | None) -> bool:
    """Whether the pod's ``karpenter.sh/do-not-disrupt`` annotation protects it now: ``true``
    always; a positive Go duration while the pod has run (since ``started``, seconds on the
    caller's clock) for less than it, and always when its start is unknown; any other value
    is ignored (upstream publishes an InvalidDoNotDisruptAnnotation event).
    Upstream: IsDoNotDisruptActive, parseDoNotDisrupt (pkg/utils/pod/scheduling.go)"""
    value = pod.metadata.annotations.get(DO_NOT_DISRUPT)
    if value is None:
        return False
    if value == "true":
        return True
    try:
        duration = parse_go_duration(value)
    except ValueError:
        return False
    if duration <= 0:
        return False
    if started is None:
        return True
    return now - started < duration


def candidate_of(
    node: Node,
    pods: Sequence[Pod],
    pools: Mapping[str, NodePool],
    catalogue: Sequence[InstanceType],
    pdbs: Sequence[PodDisruptionBudget] = (),
    now: float = 0.0,
    started: Callable[[Pod], float | None] = lambda pod: None,
    eventual: bool = False,
) -> Candidate | str:
    """The node as a candidate, or why it is not one: do-not-disrupt (``true``) on the node,
    or an active do-not-disrupt on any active pod (DaemonSet and mirror pods included; a
    duration protects a pod for that long after ``started(pod)``), or a PodDisruptionBudget
    that keeps a pod from being evicted. For an ``eventual`` method (drift) the pods' blocks
    do not count when the NodePool sets a terminationGracePeriod.
    Upstream: NewCandidate, StateNode.ValidatePodsDisruptable, pod.IsDisruptable"""
    pool = pools.get(node.metadata.labels.get(NODEPOOL_LABEL, ""))
    if pool is None:
        return "node is not managed by a known nodepool"
    if node.metadata.annotations.get(DO_NOT_DISRUPT) == "true":
        return f'disruption is blocked through the "{DO_NOT_DISRUPT}" annotation'
    if not (eventual and pool.termination_grace_period is not None):
        for p in pods:
            if _active(p) and do_not_disrupt_active(p, now, started(p)):
                name = f"{p.metadata.namespace}/{p.metadata.name}"
                return f'pod {name} has "{DO_NOT_DISRUPT}" annotation'
        tracker = RemainingPdbTracker(list(pdbs))
        for p in pods:
            if why := _pdb_blocks(p, tracker):
                return why
    moving = tuple(p for p in pods if reschedulable(p))
    cost = sum(eviction_cost(p) for p in moving)
    type_name = node.metadata.labels.get(LABEL_INSTANCE_TYPE_STABLE)
    known = any(it.name == type_name for it in catalogue)
    return Candidate(node, pool, moving, node_price(node, catalogue), cost, known)


def consolidatable(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates consolidation may take: priced (an instance type the catalogue knows,
    a capacity type and a zone), not empty (emptiness takes those) and from a
    WhenEmptyOrUnderutilized NodePool. Upstream: consolidation.ShouldDisrupt"""
    return [
        c
        for c in candidates
        if c.known_type
        and CAPACITY_TYPE_LABEL in c.node.metadata.labels
        and LABEL_TOPOLOGY_ZONE in c.node.metadata.labels
        and not c.is_empty
        and c.pool.consolidation_policy == CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED
    ]


def _interweaved(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The first candidate of each NodePool, then the second of each, and so on (NodePools
    by name, where upstream takes Go's map order).
    Upstream: SingleNodeConsolidation.shuffleCandidates"""
    by_pool: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_pool.setdefault(c.pool.name, []).append(c)
    pools = [by_pool[name] for name in sorted(by_pool)]
    depth = max((len(p) for p in pools), default=0)
    return [p[i] for i in range(depth) for p in pools if i < len(p)]


def within_budgets(candidates: Sequence[Candidate], allowed: Mapping[str, int]) -> list[Candidate]:
    """Candidates in order while each pool's budget lasts."""
    left = dict(allowed)
    out = []
    for c in candidates:
        if left.get(c.pool.name, 0) > 0:
            left[c.pool.name] -= 1
            out.append(c)
    return out


@dataclass(frozen=True, slots=True)
class Command:
    """One disruption decision. Upstream: disruption.Command (decision delete or replace)."""

    method: str
    reason: str
    candidates: tuple[Candidate, ...]
    replacement: NodeClaim | None = None
    replacement_price: float = 0.0
    # Drift's further replacements, when its simulation needed more than one nodeclaim.
    extra_replacements: tuple[NodeClaim, ...] = ()

    @property
    def decision(self) -> str:
        return "replace" if self.replacement is not None else "delete"


# (candidates) -> the new nodeclaims a scheduling simulation without the candidates needs, or
# None when one of the pods that must move (theirs, the deleting nodes') would not schedule or
# would schedule onto a node that is not initialized. Upstream: SimulateScheduling (helpers.go)
Simulate = Callable[[Sequence[Candidate]], "list[NodeClaim] | None"]


@dataclass(frozen=True, slots=True)
class Rescheduling:
    """Where a consolidation's pods may go: the scheduler's own filters over the remaining
    nodes (``checker``, never onto ``excluded``), and Karpenter's scheduling simulation
    (``simulate``), which also packs the pending pods and those of the nodes being deleted.
    With such pods (``crowded``) a deletion needs that simulation to launch nothing too:
    upstream decides by one simulation of all of them, and a pending pod that needs a new
    nodeclaim makes the command a replacement, if anything.
    Upstream: SimulateScheduling (helpers.go), consolidation.computeConsolidation"""

    checker: PredicateChecker
    simulate: Simulate
    excluded: set[str]
    crowded: bool = False


def fits_elsewhere(
    checker: PredicateChecker, candidates: Sequence[Candidate], excluded: set[str]
) -> bool:
    """Whether every pod of the candidates fits a remaining node by the scheduler's filters,
    placed one after another (kept only inside a fork). As the CA core's removal simulation."""
    snapshot = checker.snapshot
    gone = {c.name for c in candidates} | excluded
    snapshot.fork()
    try:
        for c in candidates:
            for pod in c.pods:
                snapshot.remove_pod(pod)
        for c in candidates:
            for pod in c.pods:
                target = checker.fits_any_node_matching(
                    with_node_name(pod, ""), lambda i: i.name not in gone
                )
                if target is None:
                    return False
                snapshot.add_pod(with_node_name(pod, target), target)
        return True
    finally:
        snapshot.revert()


def outcome(
    candidates: Sequence[Candidate], where: Rescheduling
) -> tuple[bool, NodeClaim | None] | None:
    """What removing the candidates takes: ``(True, None)`` when their pods fit the remaining
    nodes (a deletion), ``(False, claim)`` when one new nodeclaim is needed, None when neither
    (a pod fits nowhere, or more than one nodeclaim). Upstream: the scheduling results' reading
    in consolidation.computeConsolidation and validation.validateCommand"""
    claims: list[NodeClaim] | None
    if fits_elsewhere(where.checker, candidates, where.excluded):
        if not where.crowded:
            return True, None
        claims = where.simulate(candidates)
        if claims == []:
            return True, None
    else:
        claims = where.simulate(candidates)
    if claims is None or len(claims) != 1:
        return None
    return False, claims[0]


def compute_consolidation(
    method: str, candidates: Sequence[Candidate], where: Rescheduling
) -> Command | None:
    """Delete when the pods fit elsewhere; else replace by one cheaper nodeclaim; else None.

    Spot candidates whose replacement may be spot are left alone (SpotToSpotConsolidation is
    off by default). Otherwise the replacement keeps the instance types whose worst launch
    price is below the candidates' total, and one that may be spot or on-demand is narrowed to
    spot: a spot launch that fails must not become a dearer on-demand node.
    The cheaper types must still cover the NodePool's minValues.
    Upstream: consolidation.computeConsolidation, NodeClaim.RemoveInstanceTypeOptionsByPrice
    AndMinValues"""
    found = outcome(candidates, where)
    if found is None:
        return None
    delete, claim = found
    if delete:
        return Command(method, REASON_UNDERUTILIZED, tuple(candidates))
    assert claim is not None
    total = sum(c.price for c in candidates)
    capacity = claim.requirements.get_or_exists(CAPACITY_TYPE_LABEL)
    all_spot = all(c.capacity_type == CAPACITY_TYPE_SPOT for c in candidates)
    if all_spot and capacity.has(CAPACITY_TYPE_SPOT):
        return None
    cheaper = [
        it for it in claim.instance_types if it.worst_launch_price(claim.requirements) < total
    ]
    if not cheaper or satisfies_min_values(cheaper, claim.requirements)[1]:
        return None
    claim.instance_types = cheaper
    if capacity.has(CAPACITY_TYPE_SPOT) and capacity.has(CAPACITY_TYPE_ON_DEMAND):
        claim.requirements.add(Requirement.new(CAPACITY_TYPE_LABEL, "In", [CAPACITY_TYPE_SPOT]))
    choices = claim.launch_choices()
    if not choices:  # upstream's launch would fail and the command with it
        return None
    return Command(method, REASON_UNDERUTILIZED, tuple(candidates), claim, choices[0][1].price)


def _without_same_type(cmd: Command, group: Sequence[Candidate]) -> Command | None:
    """A replacement may be of a type one of the candidates has only if it is cheaper than
    that candidate: keeping it and deleting the others would move fewer pods.
    Upstream: filterOutSameInstanceType (multinodeconsolidation.go)"""
    claim = cmd.replacement
    assert claim is not None
    options = {it.name for it in claim.instance_types}
    same = [c.price for c in group if c.instance_type in options]
    if not same:
        return cmd
    ceiling = min(same)
    claim.instance_types = [
        it for it in claim.instance_types if it.worst_launch_price(claim.requirements) < ceiling
    ]
    if satisfies_min_values(claim.instance_types, claim.requirements)[1]:
        return None
    choices = claim.launch_choices() if claim.instance_types else []
    if not choices:
        return None
    return replace(cmd, replacement_price=choices[0][1].price)


def emptiness(candidates: Sequence[Candidate], allowed: Mapping[str, int]) -> Command | None:
    """Every empty candidate the Empty budgets allow. Upstream: Emptiness.ComputeCommands"""
    empty = within_budgets([c for c in candidates if c.is_empty], allowed)
    if not empty:
        return None
    return Command(METHOD_EMPTINESS, REASON_EMPTY, tuple(empty))


def multi_node(
    candidates: Sequence[Candidate],
    allowed: Mapping[str, int],
    where: Rescheduling,
) -> Command | None:
    """The longest prefix of the cost-ordered candidates that can go together (binary search,
    at least two nodes). Upstream: MultiNodeConsolidation.firstNConsolidationOption"""
    usable = within_budgets(consolidatable(candidates), allowed)[:MAX_MULTI_NODE_CANDIDATES]
    if len(usable) < 2:
        return None
    lo, hi = 1, len(usable) - 1
    best: Command | None = None
    while lo <= hi:
        mid = (lo + hi) // 2
        group = usable[: mid + 1]
        cmd = compute_consolidation(METHOD_MULTI_NODE, group, where)
        if cmd is not None and cmd.replacement is not None:
            cmd = _without_same_type(cmd, group)
        if cmd is not None:
            best = cmd
            lo = mid + 1
        else:
            hi = mid - 1
    return best


def single_node(
    candidates: Sequence[Candidate],
    allowed: Mapping[str, int],
    where: Rescheduling,
) -> Command | None:
    """The first candidate that can go alone, taking the NodePools in turn (each one's
    candidates in savings order), every candidate of a NodePool whose budget allows one
    more (a command disrupts one node, so the budget is not counted down).
    Upstream: SingleNodeConsolidation.ComputeCommands and SortCandidates"""
    for c in _interweaved(consolidatable(candidates)):
        if allowed.get(c.pool.name, 0) <= 0:
            continue
        cmd = compute_consolidation(METHOD_SINGLE_NODE, [c], where)
        if cmd is not None:
            return cmd
    return None
