"""Preemption: when no node fits a pod, find the node where evicting lower-priority pods helps.

The Evaluator runs the steps every preemption plugin shares: check that the pod may preempt,
keep the nodes whose failure eviction could fix (Unschedulable, not UnschedulableAndUnresolvable),
dry-run the eviction on each of them over copies of the cycle state and the NodeInfo, pick the
best candidate, and evict its victims. The plugin supplies the policy (``PreemptionInterface``):
eligibility, which victims to take on one node, how many candidates to look for.

When no node can be made to fit, the PostFilter message is a FitError of its own over the nodes
the dry run rejected, those it never tried reading "Preemption is not helpful for scheduling".

Upstream: pkg/scheduler/framework/preemption/preemption.go (v1.35) and the ordering helpers of
pkg/scheduler/util/utils.go (MoreImportantPod, GetPodStartTime, GetEarliestPodStartTime).
Upstream dry-runs nodes in parallel and stops once enough candidates are found; topospread
visits them one by one from the same random offset, which is what upstream's run with
parallelism 1 does, and breaks the last tie by candidate order where upstream walks a Go map.
"""

from __future__ import annotations

import bisect
import datetime
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast, overload

from topospread.api.field import go_quote
from topospread.api.types import Pod, PodDisruptionBudget
from topospread.framework.cycle_state import CycleState
from topospread.framework.handle import FrameworkHandle
from topospread.framework.interface import PostFilterResult
from topospread.framework.nominator import pod_priority
from topospread.framework.schedule_one import Diagnosis, NodeStatuses, fit_error_message
from topospread.framework.status import SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo

ERR_PREEMPTION_NOT_HELPFUL: Final = "Preemption is not helpful for scheduling"
ERR_NO_CANDIDATE: Final = "no candidate node for preemption"
ERR_NO_NODES: Final = "no nodes available"

# The sum-of-priorities tie-breaker shifts every priority by MaxInt32+1 so that all are >= 0.
_PRIORITY_SHIFT: Final = 2**31
# A pod without status.startTime counts as starting "now", after every recorded start.
_NOW: Final = 2**63 - 1

ScoreFunc = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Victims:
    """The pods to evict on one node, most important first, and how many PDBs that violates.

    Upstream: extenderv1.Victims
    """

    pods: tuple[Pod, ...]
    num_pdb_violations: int = 0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node the preemptor would fit on once its victims are gone. Upstream: candidate."""

    name: str
    victims: Victims


class RankedCandidates(Sequence[Candidate]):
    """Candidates, in dry-run order, whose pick (``pick_one_node_for_preemption`` with the
    interface's score functions) is already known: a vectorised dry run ranks them at once.
    ``select_candidate`` takes ``best`` without ranking them again."""

    best: Candidate


class PreemptionInterface(Protocol):
    """What a preemption plugin decides. Upstream: preemption.Interface (preemption.go, v1.35)."""

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status]: ...

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc]: ...

    def no_victims_status(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        """What ``select_victims_on_node`` would return for a node where no pod may be evicted
        for ``pod``, or None when some may: asked of the cluster's own NodeInfo before the dry
        run copies it (topospread's: most nodes of a large cluster have nothing to offer)."""
        ...


# ---------------------------------------------------------------------------------------------
# Ordering helpers


_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})"
)


def parse_rfc3339_nanos(text: str) -> int | None:
    """An RFC 3339 time (fractional seconds to the nanosecond) as nanoseconds since the epoch;
    None when it is not one.

    Upstream: metav1.Time.UnmarshalJSON (apimachinery/pkg/apis/meta/v1/time.go, v1.35)
    """
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        when = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.UTC)
    except ValueError:
        return None
    zone = m.group(8)
    offset = 0
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        offset = sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    seconds = (when - epoch) // datetime.timedelta(seconds=1) - offset
    fraction = (m.group(7) or "")[:9].ljust(9, "0")
    return seconds * 1_000_000_000 + int(fraction)


def pod_start_time(pod: Pod) -> int:
    """``status.startTime`` in nanoseconds since the epoch; "now" (later than any recorded
    start) when it is unset or unreadable, as upstream takes time.Now() for a pod that has not
    started. The pods topospread binds itself have no start time.

    Upstream: GetPodStartTime (pkg/scheduler/util/utils.go, v1.35)
    """
    text = pod.status.start_time
    nanos = parse_rfc3339_nanos(text) if text else None
    return _NOW if nanos is None else nanos


def more_important_pod(pod1: Pod, pod2: Pod) -> bool:
    """Higher priority first; for equal priorities the one that started earlier.

    Upstream: MoreImportantPod (pkg/scheduler/util/utils.go, v1.35)
    """
    p1, p2 = pod_priority(pod1), pod_priority(pod2)
    if p1 != p2:
        return p1 > p2
    return pod_start_time(pod1) < pod_start_time(pod2)


def importance_order(pods: Iterable[Pod]) -> list[Pod]:
    """The pods sorted most important first (``more_important_pod``), ties in the given order.

    Upstream sorts with sort.Slice and a start time of time.Now() for pods that have not
    started, so its order among such pods of equal priority is arbitrary; here the pod that
    came first (on a node: was bound first, so would have started first) is more important.
    Upstream: sort.Slice(potentialVictims, MoreImportantPod) (default_preemption.go, v1.35)
    """
    indexed = list(enumerate(pods))
    indexed.sort(key=lambda ip: (-pod_priority(ip[1]), pod_start_time(ip[1]), ip[0]))
    return [p for _, p in indexed]


def earliest_pod_start_time(victims: Victims) -> int | None:
    """The earliest start time among the victims of the highest priority.

    Upstream: GetEarliestPodStartTime (pkg/scheduler/util/utils.go, v1.35)
    """
    if not victims.pods:
        return None
    earliest = pod_start_time(victims.pods[0])
    max_priority = pod_priority(victims.pods[0])
    for pod in victims.pods:
        priority = pod_priority(pod)
        if priority == max_priority:
            earliest = min(earliest, pod_start_time(pod))
        elif priority > max_priority:
            max_priority = priority
            earliest = pod_start_time(pod)
    return earliest


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Victims], score_funcs: Sequence[ScoreFunc] = ()
) -> str:
    """The node whose eviction hurts least; each score function breaks the previous ties.

    Without score functions of the plugin's own: fewest PDB violations, then the lowest
    highest-priority victim, the smallest sum of (shifted) priorities, the fewest victims, the
    latest start among the highest-priority victims; then the first node in candidate order.
    Victims must be listed most important first.
    Upstream: pickOneNodeForPreemption (preemption.go, v1.35)
    """
    if not nodes_to_victims:
        return ""
    candidates = list(nodes_to_victims)
    funcs = list(score_funcs)
    if not funcs and all(v.pods for v in nodes_to_victims.values()):
        # NOTE: the default criteria at once, as one key compared lexicographically: keeping
        # the nodes with the best first score, then among them the best second, ... equals the
        # greatest key, the first such node in candidate order (max keeps the first).
        return max(candidates, key=lambda node: _default_rank(nodes_to_victims[node]))
    if not funcs:

        def min_num_pdb_violating(node: str) -> int:
            return -nodes_to_victims[node].num_pdb_violations

        def min_highest_priority(node: str) -> int:
            return -pod_priority(nodes_to_victims[node].pods[0])

        def min_sum_priorities(node: str) -> int:
            pods = nodes_to_victims[node].pods
            return -sum(pod_priority(p) + _PRIORITY_SHIFT for p in pods)

        def min_num_pods(node: str) -> int:
            return -len(nodes_to_victims[node].pods)

        def latest_start_time(node: str) -> int:
            earliest = earliest_pod_start_time(nodes_to_victims[node])
            return -(2**63) if earliest is None else earliest

        funcs = [
            min_num_pdb_violating,
            min_highest_priority,
            min_sum_priorities,
            min_num_pods,
            latest_start_time,
        ]
    for score in funcs:
        scores = {node: score(node) for node in candidates}
        best = max(scores.values())
        selected = [node for node in candidates if scores[node] == best]
        if len(selected) == 1:
            return selected[0]
        candidates = selected
    return candidates[0]


def _default_rank(victims: Victims) -> tuple[int, int, int, int, int]:
    """pickOneNodeForPreemption's default scores of one node, in order (higher is better):
    fewest PDB violations, lowest highest priority, lowest sum of shifted priorities, fewest
    victims, latest start among the highest-priority victims. Victims must not be empty."""
    pods = victims.pods
    priorities = [pod_priority(p) for p in pods]
    highest = max(priorities)
    earliest = min(pod_start_time(p) for p, q in zip(pods, priorities, strict=True) if q == highest)
    total = sum(priorities) + _PRIORITY_SHIFT * len(pods)
    # The second score reads the first victim, as min_highest_priority does.
    return (-victims.num_pdb_violations, -priorities[0], -total, -len(pods), earliest)


def aggregate_message(errors: Sequence[str]) -> str:
    """Several error messages as one: deduplicated, ``[a, b]`` when more than one remains.

    Upstream: utilerrors.NewAggregate(...).Error() (apimachinery, v1.35)
    """
    unique = list(dict.fromkeys(errors))
    if len(errors) == 1 or len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


# ---------------------------------------------------------------------------------------------
# The Evaluator


class _Picked(Sequence[NodeInfo]):
    """The nodes at ``positions`` of ``nodes``, read as they are asked for: a victimless dry
    run reads one of thousands."""

    __slots__ = ("_nodes", "_positions")

    def __init__(self, nodes: Sequence[NodeInfo], positions: Sequence[int]) -> None:
        self._nodes = nodes
        self._positions = positions

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, i: int) -> NodeInfo: ...
    @overload
    def __getitem__(self, i: slice) -> list[NodeInfo]: ...
    def __getitem__(self, i: int | slice) -> NodeInfo | list[NodeInfo]:
        if isinstance(i, slice):
            return [self._nodes[p] for p in self._positions[i]]
        return self._nodes[self._positions[i]]


def nodes_where_preemption_might_help(
    all_nodes: Sequence[NodeInfo], statuses: Mapping[str, Status]
) -> Sequence[NodeInfo]:
    """The nodes, in node order, that failed with Unschedulable: evicting pods may fix those.

    UnschedulableAndUnresolvable (and a node without a status, which NodeToStatus reads as
    UnschedulableAndUnresolvable) is not worth a dry run.
    Upstream: NodeToStatus.NodesForStatusCode(..., Unschedulable) in findCandidates
    (preemption.go, v1.35)
    """
    if isinstance(statuses, NodeStatuses) and statuses.unschedulable is not None:
        return _Picked(all_nodes, statuses.unschedulable)
    return [
        info
        for info in all_nodes
        if (status := statuses.get(info.name)) is not None and status.code is Code.Unschedulable
    ]


class UniformStatuses(Mapping[str, Status]):
    """One status for every node of ``nodes``, in visiting order from ``offset`` round the
    list: the dry run's statuses when no node can have a victim, without a dict of them
    (FitError's message counts it as one status times the number of nodes)."""

    __slots__ = ("_known", "_nodes", "_offset", "status")

    def __init__(self, nodes: Sequence[NodeInfo], offset: int, status: Status) -> None:
        self._nodes = nodes
        self._offset = offset
        self.status = status
        self._known: set[str] | None = None

    def __getitem__(self, name: str) -> Status:
        if self._known is None:
            self._known = {n.name for n in self._nodes}
        if name not in self._known:
            raise KeyError(name)
        return self.status

    def __iter__(self) -> Iterator[str]:
        n = len(self._nodes)
        return (self._nodes[(self._offset + i) % n].name for i in range(n))

    def __len__(self) -> int:
        return len(self._nodes)


class Evaluator:
    """The preemption steps shared by preemption plugins. Upstream: Evaluator (preemption.go)."""

    def __init__(
        self, plugin_name: str, handle: FrameworkHandle, interface: PreemptionInterface
    ) -> None:
        self.plugin_name = plugin_name
        self.handle = handle
        self.interface = interface

    def preempt(
        self, state: CycleState, pod: Pod, statuses: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """A nominated node with Success; ``PostFilterResult("")`` (clear the nomination) with
        Unschedulable and the FitError text when no node can be helped; ``None`` with a status
        when the pod may not preempt or something failed.

        Upstream: Evaluator.Preempt (preemption.go, v1.35)
        """
        nominated = pod.status.nominated_node_name
        # A node absent from the statuses reads as UnschedulableAndUnresolvable (NodeToStatus).
        nominated_status = statuses.get(nominated)
        if nominated_status is None:
            nominated_status = new_status(Code.UnschedulableAndUnresolvable)
        ok, msg = self.interface.pod_eligible_to_preempt_others(pod, nominated_status)
        if not ok:
            return None, new_status(Code.Unschedulable, msg)

        all_nodes = self.handle.snapshot_shared_lister().node_infos().list()
        candidates, node_statuses, errors = self.find_candidates(state, all_nodes, pod, statuses)
        if errors and not candidates:
            return None, as_status(aggregate_message(errors))
        if not candidates:
            diagnosis = Diagnosis(
                # Read only: fit_error_message counts it (a UniformStatuses as one status).
                node_to_status=cast(dict[str, Status], node_statuses),
                absent_status=new_status(
                    Code.UnschedulableAndUnresolvable, ERR_PREEMPTION_NOT_HELPFUL
                ),
            )
            message = fit_error_message(len(all_nodes), diagnosis)
            return PostFilterResult(""), new_status(Code.Unschedulable, message)

        best = self.select_candidate(candidates)
        if best is None or not best.name:
            return None, new_status(Code.Unschedulable, ERR_NO_CANDIDATE)
        status = self.prepare_candidate(best, pod)
        if not status.is_success:
            return None, status
        return PostFilterResult(best.name), SUCCESS

    def find_candidates(
        self,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        statuses: Mapping[str, Status],
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        """Dry-run preemption on the nodes where it might help.

        Upstream: Evaluator.findCandidates (preemption.go, v1.35)
        """
        if not all_nodes:
            return [], {}, [ERR_NO_NODES]
        potential = nodes_where_preemption_might_help(all_nodes, statuses)
        if not potential:
            return [], {}, []
        pdbs = self.handle.pod_disruption_budgets()
        offset, num_candidates = self.interface.get_offset_and_num_candidates(len(potential))
        if isinstance(statuses, NodeStatuses) and statuses.victimless:
            # Every node visited would say it has no victim: the dry run's outcome, at once.
            n = len(potential)
            nothing = self.interface.no_victims_status(pod, potential[offset % n])
            if nothing is not None:
                return [], UniformStatuses(potential, offset, nothing), []
        screen = statuses.screen if isinstance(statuses, NodeStatuses) else None
        # An interface may dry-run the screened nodes all at once (DefaultPreemption's
        # vectorised_candidates); None where it cannot prove its answer the reference's.
        vectorised = getattr(self.interface, "vectorised_candidates", None)
        if screen is not None and vectorised is not None:
            ranked = vectorised(state, pod, potential, pdbs, offset, num_candidates, screen)
            if ranked:
                return ranked, {}, []
        if screen is not None:
            found = self.dry_run_screened(
                state, pod, potential, pdbs, offset, num_candidates, screen
            )
            if found:
                return found, {}, []
        return self.dry_run_preemption(state, pod, potential, pdbs, offset, num_candidates)

    def dry_run_screened(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
        screen: Sequence[int],
    ) -> list[Candidate]:
        """``dry_run_preemption``'s candidates, dry-running only the nodes at ``screen``
        (ascending indices into ``potential_nodes``), in the same visiting order.

        NOTE: exact when no node outside ``screen`` can be a candidate: the candidates and
        where the search stops depend on the candidates alone. The other nodes' statuses are
        not computed; preempt() reads statuses and errors only when there is no candidate, so
        an empty list sends the caller to the full dry run.
        """
        split = bisect.bisect_left(screen, offset)
        order = [*screen[split:], *screen[:split]]
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        select = self.interface.select_victims_on_node
        # An interface may judge a screened node without a copy of it (DefaultPreemption's
        # screened_victims); None sends the node to select_victims_on_node.
        screened = getattr(self.interface, "screened_victims", None)
        for i in order:
            node = potential_nodes[i]
            if self.interface.no_victims_status(pod, node) is not None:
                continue
            outcome = None if screened is None else screened(state, pod, node, pdbs)
            if outcome is None:
                outcome = select(state.clone(), pod, node.snapshot(), pdbs)
            pods, num_pdb_violations, status = outcome
            if status.is_success and pods:
                found = Candidate(node.name, Victims(tuple(pods), num_pdb_violations))
                kept = non_violating if num_pdb_violations == 0 else violating
                if len(kept) < num_candidates:
                    kept.append(found)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
        return non_violating + violating

    def dry_run_preemption(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
    ) -> tuple[list[Candidate], dict[str, Status], list[str]]:
        """Candidates (those violating no PDB first), the statuses of the nodes that are not
        candidates, and the error messages met.

        Nodes are visited from ``offset`` round the list, each over its own copy of the cycle
        state and of its NodeInfo. Each kind of candidate is kept up to ``num_candidates``; the
        search stops once a PDB-respecting candidate is among at least ``num_candidates``.
        Upstream: Evaluator.DryRunPreemption (preemption.go, v1.35)
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        node_statuses: dict[str, Status] = {}
        errors: list[str] = []
        n = len(potential_nodes)
        for i in range(n):
            node = potential_nodes[(offset + i) % n]
            nothing = self.interface.no_victims_status(pod, node)
            if nothing is not None:
                node_statuses[node.name] = nothing
                continue
            node_copy = node.snapshot()
            state_copy = state.clone()
            pods, num_pdb_violations, status = self.interface.select_victims_on_node(
                state_copy, pod, node_copy, pdbs
            )
            if status.is_success and pods:
                found = Candidate(node_copy.name, Victims(tuple(pods), num_pdb_violations))
                kept = non_violating if num_pdb_violations == 0 else violating
                if len(kept) < num_candidates:
                    kept.append(found)
                if non_violating and len(non_violating) + len(violating) >= num_candidates:
                    break
                continue
            if status.is_success:
                status = as_status(
                    f"expected at least one victim pod on node {go_quote(node_copy.name)}"
                )
            if status.code is Code.Error:
                errors.append(status.message)
            node_statuses[node_copy.name] = status
        return non_violating + violating, node_statuses, errors

    def select_candidate(self, candidates: Sequence[Candidate]) -> Candidate | None:
        """Upstream: Evaluator.SelectCandidate (preemption.go, v1.35)."""
        if not candidates:
            return None
        if isinstance(candidates, RankedCandidates):
            return candidates.best
        if len(candidates) == 1:
            return candidates[0]
        victims_map = {c.name: c.victims for c in candidates}
        score_funcs = self.interface.ordered_score_funcs(victims_map)
        name = pick_one_node_for_preemption(victims_map, score_funcs)
        victims = victims_map.get(name)
        if victims is not None:
            return Candidate(name, victims)
        return candidates[0]  # unreachable: upstream reports it and takes the first

    def prepare_candidate(self, candidate: Candidate, pod: Pod) -> Status:
        """Evict the victims, then clear the nominations of lower-priority pods nominated to
        the node (they may no longer fit there).

        Upstream skips the API call for a victim already being deleted; topospread's cluster
        has no deletion in progress, so every victim is evicted.
        Upstream: Evaluator.prepareCandidate (preemption.go, v1.35)
        """
        client = self.handle.client
        if client is None:
            return SUCCESS
        for victim in candidate.victims.pods:
            client.delete_pod(victim, pod, candidate.name)
        for nominated in self.lower_priority_nominated_pods(pod, candidate.name):
            client.clear_nominated_node_name(nominated)
        return SUCCESS

    def lower_priority_nominated_pods(self, pod: Pod, node_name: str) -> list[Pod]:
        """Upstream: getLowerPriorityNominatedPods (preemption.go, v1.35)."""
        priority = pod_priority(pod)
        return [
            p for p in self.handle.nominated_pods_for_node(node_name) if pod_priority(p) < priority
        ]


__all__ = [
    "ERR_NO_CANDIDATE",
    "ERR_NO_NODES",
    "ERR_PREEMPTION_NOT_HELPFUL",
    "Candidate",
    "Evaluator",
    "PreemptionInterface",
    "RankedCandidates",
    "ScoreFunc",
    "Victims",
    "aggregate_message",
    "earliest_pod_start_time",
    "importance_order",
    "more_important_pod",
    "nodes_where_preemption_might_help",
    "parse_rfc3339_nanos",
    "pick_one_node_for_preemption",
    "pod_start_time",
]
