"""PreFilter and Filter: hard (DoNotSchedule) constraints."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from topospread.api.types import DO_NOT_SCHEDULE, Node, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.interface import PreFilterExtensions, PreFilterResult
from topospread.framework.status import (
    SKIP,
    SUCCESS,
    Code,
    Status,
    as_status,
    new_status,
)
from topospread.framework.types import NodeInfo
from topospread.labels.selector import SelectorError
from topospread.nodeaffinity import RequiredNodeAffinity, get_required_node_affinity
from topospread.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    NAME,
    InternalConstraint,
    PluginBase,
    count_pods_match_selector,
    node_labels_match_spread_constraints,
)

# Go's math.MaxInt32: the "no domain seen yet" sentinel of a critical path.
MAX_INT32: Final = 2**31 - 1


@dataclass(slots=True)
class CriticalPath:
    topology_value: str = ""
    match_num: int = MAX_INT32


@dataclass(slots=True)
class CriticalPaths:
    """The two domains with the fewest matching pods; ``paths[0]`` always holds the minimum.

    ``paths[1]`` is at least ``paths[0]`` but not always the second minimum: after preemption's
    add/remove updates only these two entries are maintained (upstream's documented CAVEAT).
    Upstream: criticalPaths (filtering.go, v1.35)
    """

    paths: list[CriticalPath] = field(default_factory=lambda: [CriticalPath(), CriticalPath()])

    def update(self, tp_value: str, num: int) -> None:
        """Upstream: criticalPaths.update (filtering.go, v1.35)."""
        p = self.paths
        if tp_value == p[0].topology_value:
            i = 0
        elif tp_value == p[1].topology_value:
            i = 1
        else:
            i = -1
        if i >= 0:
            p[i].match_num = num
            if p[0].match_num > p[1].match_num:
                p[0], p[1] = p[1], p[0]
        elif num < p[0].match_num:
            p[1] = CriticalPath(p[0].topology_value, p[0].match_num)
            p[0] = CriticalPath(tp_value, num)
        elif num < p[1].match_num:
            p[1] = CriticalPath(tp_value, num)

    def copy(self) -> CriticalPaths:
        return CriticalPaths([CriticalPath(p.topology_value, p.match_num) for p in self.paths])


@dataclass(slots=True)
class PreFilterState:
    """What PreFilter counted for the hard constraints, read by Filter.

    ``tp_value_to_match_num[i]`` maps each eligible domain of constraint ``i`` to its matching
    pods; its length is the number of eligible domains that minDomains is compared with.
    Upstream: preFilterState (filtering.go, v1.35)
    """

    constraints: list[InternalConstraint] = field(default_factory=list)
    critical_paths: list[CriticalPaths] = field(default_factory=list)
    tp_value_to_match_num: list[dict[str, int]] = field(default_factory=list)

    def min_match_num(self, constraint_id: int, min_domains: int) -> int:
        """The global minimum, taken as 0 while fewer than minDomains domains are eligible.

        Upstream: preFilterState.minMatchNum (filtering.go, v1.35)
        """
        if len(self.tp_value_to_match_num[constraint_id]) < min_domains:
            return 0
        return self.critical_paths[constraint_id].paths[0].match_num

    def clone(self) -> PreFilterState:
        # Constraints are shared: nothing changes them after PreFilter.
        return PreFilterState(
            constraints=self.constraints,
            critical_paths=[p.copy() for p in self.critical_paths],
            tp_value_to_match_num=[dict(m) for m in self.tp_value_to_match_num],
        )


PRE_FILTER_STATE_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilter" + NAME)


def state_from_counts(
    constraints: list[InternalConstraint], tallies: list[dict[str, int]]
) -> PreFilterState:
    """The PreFilter state of matching pods per eligible domain (``tallies[i]`` for
    constraint i; every eligible domain present, 0 where no pod matches): the counts, and
    the critical paths found from them.

    Upstream: the end of calPreFilterState (filtering.go, v1.35)
    """
    state = PreFilterState(
        constraints=constraints,
        critical_paths=[CriticalPaths() for _ in constraints],
        tp_value_to_match_num=tallies,
    )
    for i, counts in enumerate(tallies):
        paths = state.critical_paths[i]
        for value, num in counts.items():
            paths.update(value, num)
    return state


class Filtering(PluginBase):
    """PreFilter, its add/remove extensions, and Filter of PodTopologySpread."""

    def cal_pre_filter_state(self, pod: Pod, all_nodes: Sequence[NodeInfo]) -> PreFilterState:
        """Count matching pods per eligible domain for each hard constraint.

        A node is eligible for a constraint when it carries every hard constraint's topology
        key and passes the constraint's node inclusion policies.
        Upstream: calPreFilterState (filtering.go, v1.35)
        """
        constraints, domains_of = self.domain_reader(pod)
        if not constraints:
            return PreFilterState()
        namespace = pod.metadata.namespace
        tallies: list[dict[str, int]] = [{} for _ in constraints]
        for info in all_nodes:
            for i, value in enumerate(domains_of(info.node)):
                if value is None:
                    continue
                matched = count_pods_match_selector(info.pods, constraints[i].selector, namespace)
                tallies[i][value] = tallies[i].get(value, 0) + matched
        return state_from_counts(constraints, tallies)

    def domain_reader(
        self, pod: Pod
    ) -> tuple[list[InternalConstraint], Callable[[Node], tuple[str | None, ...]]]:
        """The pod's hard constraints, and for a node its domain under each of them (None
        where the node is not eligible): what calPreFilterState reads of a node besides its
        pods. Reports keep its answers per unchanged node (analysis/reports.py)."""
        constraints = self.get_constraints(pod, DO_NOT_SCHEDULE)
        reader = functools.partial(
            self._node_domains,
            pod,
            constraints=constraints,
            required=get_required_node_affinity(pod),
            inclusion=self.features.enable_node_inclusion_policy_in_pod_topology_spread,
            comparison=self.features.enable_taint_toleration_comparison_operators,
        )
        return constraints, reader

    def _node_domains(
        self,
        pod: Pod,
        node: Node,
        *,
        constraints: Sequence[InternalConstraint],
        required: RequiredNodeAffinity,
        inclusion: bool,
        comparison: bool,
    ) -> tuple[str | None, ...]:
        """The node's domain for each constraint, None where it is not eligible."""
        none = (None,) * len(constraints)
        if not inclusion and not required.match(node):
            return none
        labels = node.metadata.labels
        if not node_labels_match_spread_constraints(labels, constraints):
            return none
        return tuple(
            None
            if inclusion
            and not c.match_node_inclusion_policies(
                pod, node, required, enable_comparison_operators=comparison
            )
            else labels[c.topology_key]
            for c in constraints
        )

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Upstream: PreFilter (filtering.go, v1.35)."""
        try:
            s = self.cal_pre_filter_state(pod, nodes)
        except SelectorError as err:
            return None, as_status(f"get constraints from pod: {_constraint_error(pod, err)}")
        if not s.constraints:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: AddPod (filtering.go, v1.35)."""
        return self._update_with_pod(state, pod_to_add, pod_to_schedule, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Upstream: RemovePod (filtering.go, v1.35)."""
        return self._update_with_pod(state, pod_to_remove, pod_to_schedule, node_info, -1)

    def _update_with_pod(
        self, state: CycleState, updated: Pod, preemptor: Pod, node_info: NodeInfo, delta: int
    ) -> Status:
        """Upstream: updateWithPod (filtering.go, v1.35)."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError as err:
            return as_status(f'reading "{err.args[0]}" from cycleState: not found')
        node = node_info.node
        if updated.metadata.namespace != preemptor.metadata.namespace:
            return SUCCESS
        if not node_labels_match_spread_constraints(node.metadata.labels, s.constraints):
            return SUCCESS
        required = get_required_node_affinity(preemptor)
        inclusion = self.features.enable_node_inclusion_policy_in_pod_topology_spread
        if not inclusion and not required.match(node):
            return SUCCESS
        for i, c in enumerate(s.constraints):
            if not c.selector.matches(updated.metadata.labels):
                continue
            if inclusion and not c.match_node_inclusion_policies(
                preemptor,
                node,
                required,
                enable_comparison_operators=self.features.enable_taint_toleration_comparison_operators,
            ):
                continue
            value = node.metadata.labels[c.topology_key]
            counts = s.tp_value_to_match_num[i]
            counts[value] = counts.get(value, 0) + delta
            s.critical_paths[i].update(value, counts[value])
        return SUCCESS

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Reject a node where placing the pod would push a domain's skew past maxSkew.

        skew = matching pods in the node's domain + (1 if the pod matches itself) - global min.
        Upstream: Filter (filtering.go, v1.35)
        """
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError as err:
            return as_status(f'reading "{err.args[0]}" from cycleState: not found')
        if not s.constraints:
            return SUCCESS
        labels = node_info.node.metadata.labels
        pod_labels = pod.metadata.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return new_status(
                    Code.UnschedulableAndUnresolvable, ERR_REASON_NODE_LABEL_NOT_MATCH
                )
            min_match = s.min_match_num(i, c.min_domains)
            self_match = 1 if c.selector.matches(pod_labels) else 0
            match_num = s.tp_value_to_match_num[i].get(value, 0)
            if match_num + self_match - min_match > c.max_skew:
                return new_status(Code.Unschedulable, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return SUCCESS


def _constraint_error(pod: Pod, err: SelectorError) -> str:
    prefix = (
        "obtaining pod's hard topology spread constraints"
        if pod.spec.topology_spread_constraints
        else "setting default hard topology spread constraints"
    )
    return f"{prefix}: {err}"
