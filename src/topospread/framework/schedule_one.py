"""One scheduling attempt: find the feasible nodes, score them, pick a host; or explain why not.

Upstream: pkg/scheduler/schedule_one.go (v1.35) — schedulePod, findNodesThatFitPod,
findNodesThatPassFilters, numFeasibleNodesToFind, prioritizeNodes, selectHost — and FitError
(pkg/scheduler/framework/types.go). Upstream filters nodes in parallel and stops once enough
feasible nodes are found; topospread visits them in the same order one by one, which is the
outcome upstream's parallel search approximates, and makes every run reproducible.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.runtime import Framework, NodePluginScores
from topospread.framework.status import Code, Status, new_status
from topospread.framework.types import NodeInfo

MIN_FEASIBLE_NODES_TO_FIND: Final = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: Final = 5
NO_NODE_AVAILABLE_MSG: Final = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE: Final = "no nodes available to schedule pods"

TieBreak = Literal["random", "name"]


@dataclass(slots=True)
class Diagnosis:
    """Why nodes were rejected (Upstream: framework.Diagnosis with its NodeToStatus).

    Nodes absent from ``node_to_status`` carry ``absent_status`` (for instance all nodes a
    PreFilterResult excluded, or every node when PreFilter rejected the pod).
    """

    node_to_status: dict[str, Status] = field(default_factory=dict)
    absent_status: Status = field(
        default_factory=lambda: new_status(Code.UnschedulableAndUnresolvable)
    )
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""

    def add_plugin_status(self, status: Status) -> None:
        """Upstream: Diagnosis.AddPluginStatus (framework/types.go, v1.35)."""
        if not status.plugin:
            return
        if status.is_rejected:
            self.unschedulable_plugins.add(status.plugin)
        if status.code is Code.Pending:
            self.pending_plugins.add(status.plugin)

    def status_of(self, node_name: str) -> Status:
        return self.node_to_status.get(node_name, self.absent_status)


class FitError(Exception):
    """No node fits the pod; ``str()`` is the FailedScheduling event's message."""

    def __init__(self, pod: Pod, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        return fit_error_message(self.num_all_nodes, self.diagnosis)


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    """``0/N nodes are available: <sorted reason histogram>.`` then the PostFilter message,
    appended as it is (DefaultPreemption's ends with its own period).

    Upstream: FitError.Error (pkg/scheduler/framework/types.go, v1.35)
    """
    msg = NO_NODE_AVAILABLE_MSG.format(num_all_nodes) + ":"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        reasons: Counter[str] = Counter()
        by_node = diagnosis.node_to_status
        uniform = getattr(by_node, "status", None)  # preemption's UniformStatuses
        counted = getattr(by_node, "status_counts", None)  # the fast path's status vector
        if isinstance(uniform, Status):
            for reason in uniform.reasons:
                reasons[reason] += len(by_node)
        elif counted is not None:
            for status, n in counted():
                for reason in status.reasons:
                    reasons[reason] += n
        else:
            # Nodes share status objects: count each distinct one, then its reasons.
            statuses = by_node.values()
            distinct = dict(zip(map(id, statuses), statuses, strict=True))
            for key, n in Counter(map(id, statuses)).items():
                for reason in distinct[key].reasons:
                    reasons[reason] += n
        absent = num_all_nodes - len(diagnosis.node_to_status)
        if absent > 0:
            for reason in diagnosis.absent_status.reasons:
                reasons[reason] += absent
        # Go sorts the "<count> <reason>" strings bytewise.
        histogram = sorted(f"{n} {reason}" for reason, n in reasons.items())
        if histogram:
            msg += f" {', '.join(histogram)}."
    if diagnosis.post_filter_msg:
        msg += f" {diagnosis.post_filter_msg}"
    return msg


@dataclass(slots=True)
class ScheduleResult:
    """Upstream: ScheduleResult (schedule_one.go), plus what reports need."""

    suggested_host: str
    evaluated_nodes: int
    feasible_nodes: int
    feasible: list[str] = field(default_factory=list)
    scores: list[NodePluginScores] = field(default_factory=list)
    diagnosis: Diagnosis = field(default_factory=Diagnosis)


class NoNodesAvailableError(Exception):
    """The cluster has no nodes at all."""

    def __str__(self) -> str:
        return ERR_NO_NODES_AVAILABLE


class SchedulingError(Exception):
    """A plugin returned an Error status: the attempt failed for a reason other than fit."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message)
        self.status = status


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """How many feasible nodes to look for before scoring; 0% means adaptive.

    Upstream: numFeasibleNodesToFind (schedule_one.go, v1.35)
    """
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


class SchedulingAlgorithm:
    """Finds a node for one pod at a time, remembering where the last search stopped.

    ``percentage_of_nodes_to_score`` is the global setting; a profile's own value (or the
    override given here) wins. ``rng`` breaks ties among the best nodes when ``tie_break`` is
    "random" (upstream draws at random too); "name" picks the smallest node name.
    """

    def __init__(
        self,
        percentage_of_nodes_to_score: int = 0,
        *,
        rng: random.Random | None = None,
        tie_break: TieBreak = "random",
        percentage_override: int | None = None,
    ) -> None:
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.percentage_override = percentage_override
        self.rng = rng if rng is not None else random.Random(0)
        self.tie_break = tie_break
        self.next_start_node_index = 0

    def percentage_for(self, fwk: Framework) -> int:
        if self.percentage_override is not None:
            return self.percentage_override
        if fwk.profile.percentage_of_nodes_to_score is not None:
            return fwk.profile.percentage_of_nodes_to_score
        return self.percentage_of_nodes_to_score

    def schedule_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, all_nodes: Sequence[NodeInfo]
    ) -> ScheduleResult:
        """Raises FitError, NoNodesAvailableError or SchedulingError when no host is chosen.

        Upstream: schedulePod (schedule_one.go, v1.35)
        """
        if not all_nodes:
            raise NoNodesAvailableError()
        feasible, diagnosis = self.find_nodes_that_fit_pod(fwk, state, pod, all_nodes)
        if not feasible:
            raise FitError(pod, len(all_nodes), diagnosis)
        names = [info.name for info in feasible]
        if len(feasible) == 1:
            return ScheduleResult(
                suggested_host=feasible[0].name,
                evaluated_nodes=1 + len(diagnosis.node_to_status),
                feasible_nodes=1,
                feasible=names,
                diagnosis=diagnosis,
            )
        scores = self.prioritize_nodes(fwk, state, pod, feasible)
        host = self.select_host(scores)
        return ScheduleResult(
            suggested_host=host,
            evaluated_nodes=len(feasible) + len(diagnosis.node_to_status),
            feasible_nodes=len(feasible),
            feasible=names,
            scores=scores,
            diagnosis=diagnosis,
        )

    def find_nodes_that_fit_pod(
        self, fwk: Framework, state: CycleState, pod: Pod, all_nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], Diagnosis]:
        """Upstream: findNodesThatFitPod (schedule_one.go, v1.35)."""
        diagnosis = Diagnosis()
        pre_result, status, plugins = fwk.run_pre_filter_plugins(state, pod, all_nodes)
        diagnosis.unschedulable_plugins = set(plugins)
        if not status.is_success:
            if not status.is_rejected:
                raise SchedulingError(status)
            # Every node gets the PreFilter status, so that preemption sees it.
            diagnosis.absent_status = status
            diagnosis.pre_filter_msg = status.message
            diagnosis.add_plugin_status(status)
            return [], diagnosis
        # A nominated node was likely made room for by preemption in an earlier cycle: it is
        # probably the only node that fits, so it is tried alone first.
        if pod.status.nominated_node_name:
            feasible = self.evaluate_nominated_node(fwk, state, pod, diagnosis, all_nodes)
            if feasible:
                return feasible, diagnosis
        nodes: Sequence[NodeInfo] = all_nodes
        if pre_result is not None and pre_result.node_names is not None:
            # Upstream walks a Go set here (random order); node order keeps runs reproducible.
            nodes = [info for info in all_nodes if info.name in pre_result.node_names]
            diagnosis.absent_status = new_status(
                Code.UnschedulableAndUnresolvable,
                f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(plugins))}]",
            )
        feasible = self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, nodes)
        processed = len(feasible) + len(diagnosis.node_to_status)
        self.next_start_node_index = (self.next_start_node_index + processed) % len(all_nodes)
        return feasible, diagnosis

    def evaluate_nominated_node(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        all_nodes: Sequence[NodeInfo],
    ) -> list[NodeInfo]:
        """Filter the pod's nominated node alone; an unknown node is no candidate.

        Its status, when it fails, stays in the diagnosis until the full search sets it again;
        an unknown node or an Error status only sends the search on to every node.
        Upstream: evaluateNominatedNode (schedule_one.go, v1.35)
        """
        name = pod.status.nominated_node_name
        node = next((info for info in all_nodes if info.name == name), None)
        if node is None:
            return []  # upstream logs the lookup error and searches every node
        try:
            return self.find_nodes_that_pass_filters(fwk, state, pod, diagnosis, [node])
        except SchedulingError:
            return []  # an error on the nominated node is logged upstream, not fatal

    def find_nodes_that_pass_filters(
        self,
        fwk: Framework,
        state: CycleState,
        pod: Pod,
        diagnosis: Diagnosis,
        nodes: Sequence[NodeInfo],
    ) -> list[NodeInfo]:
        """Visit nodes from the rotating start index until enough feasible ones are found.

        Upstream: findNodesThatPassFilters (schedule_one.go, v1.35)
        """
        num_all = len(nodes)
        if num_all == 0:
            return []
        to_find = num_feasible_nodes_to_find(self.percentage_for(fwk), num_all)
        start = self.next_start_node_index
        feasible: list[NodeInfo] = []
        if not fwk.filter_plugins:
            return [nodes[(start + i) % num_all] for i in range(to_find)]
        for i in range(num_all):
            info = nodes[(start + i) % num_all]
            status = fwk.run_filter_plugins_with_nominated_pods(state, pod, info)
            if status.code is Code.Error:
                raise SchedulingError(status)
            if status.is_success:
                feasible.append(info)
                if len(feasible) >= to_find:
                    break
            else:
                diagnosis.node_to_status[info.name] = status
                diagnosis.add_plugin_status(status)
        return feasible

    def prioritize_nodes(
        self, fwk: Framework, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> list[NodePluginScores]:
        """Upstream: prioritizeNodes (schedule_one.go, v1.35)."""
        if not fwk.score_plugins:
            return [NodePluginScores(info.name, [], 1) for info in nodes]
        status = fwk.run_pre_score_plugins(state, pod, nodes)
        if not status.is_success:
            raise SchedulingError(status)
        scores, status = fwk.run_score_plugins(state, pod, nodes)
        if not status.is_success:
            raise SchedulingError(status)
        return scores

    def select_host(self, scores: Sequence[NodePluginScores]) -> str:
        """A node with the highest total: uniformly at random (seeded), or the smallest name.

        Upstream: selectHost (schedule_one.go, v1.35) samples uniformly among the best too.
        """
        best = max(s.total_score for s in scores)
        return self.choose([s.name for s in scores if s.total_score == best])

    def choose(self, top: Sequence[str]) -> str:
        """One of the nodes with the best total, given in the order they were scored.

        ``top`` may be lazy: only its length and the chosen element are read (all of it only
        for ``--tie-break name``).
        """
        if self.tie_break == "name":
            return min(top)
        return top[self.rng.randrange(len(top))] if len(top) > 1 else top[0]


def statuses_by_node(
    diagnosis: Diagnosis,
    node_names: Sequence[str],
    *,
    unschedulable: Sequence[int] | None = None,
    victimless: bool = False,
    screen: Sequence[int] | None = None,
) -> NodeStatuses:
    """Every node's status after a failed attempt (absent nodes get the default status): a
    view over the diagnosis, in node order, built without a pass over the nodes.

    A caller that knows more may say so: ``unschedulable``, the positions (in node order) of
    the nodes whose status is Unschedulable; ``victimless``, that none of those holds a pod
    of lower priority than the pod (so preemption's dry run can find no victim on any);
    ``screen``, the indices into ``unschedulable`` of the only nodes the dry run could make
    candidates (a necessary condition: the others certainly are not).
    """
    return NodeStatuses(diagnosis, node_names, unschedulable, victimless, screen)


class NodeStatuses(Mapping[str, Status]):
    """Upstream: NodeToStatus (framework/types.go, v1.35) over a list of nodes."""

    __slots__ = ("_diagnosis", "_known", "_names", "screen", "unschedulable", "victimless")

    def __init__(
        self,
        diagnosis: Diagnosis,
        names: Sequence[str],
        unschedulable: Sequence[int] | None = None,
        victimless: bool = False,
        screen: Sequence[int] | None = None,
    ) -> None:
        self._diagnosis = diagnosis
        self._names = names
        self._known: set[str] | None = None
        self.unschedulable = unschedulable
        self.victimless = victimless and unschedulable is not None
        self.screen = screen if unschedulable is not None else None

    def __getitem__(self, name: str) -> Status:
        if name in self._diagnosis.node_to_status:
            return self._diagnosis.node_to_status[name]
        if not name:  # no node is nameless (a pod's empty nominatedNodeName, say)
            raise KeyError(name)
        if self._known is None:
            self._known = set(self._names)
        if name in self._known:
            return self._diagnosis.absent_status
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        found = self._diagnosis.node_to_status.get(name)
        if found is not None:
            return found
        try:
            return self[name]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)
