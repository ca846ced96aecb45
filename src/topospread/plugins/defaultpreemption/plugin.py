"""DefaultPreemption: the PostFilter that evicts lower-priority pods to make room for a pod.

Its args bound how many candidate nodes the dry run looks for: ``minCandidateNodesPercentage``
of the nodes where preemption might help (default 10), at least ``minCandidateNodesAbsolute``
(default 100), at most all of them. On one node it removes every pod of lower priority, checks
that the pod then fits, and gives pods back, most important first (PDB-violating ones before
the others), as long as the pod still fits. Its PostFilter message is the Evaluator's, prefixed
with ``preemption: ``.

Its args live in ``args.py``, the budgets' arithmetic in ``budgets.py``.
Upstream: pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go (v1.35)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Final, Protocol

from topospread.api.types import Pod, PodDisruptionBudget
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.handle import FrameworkHandle
from topospread.framework.interface import Handle, PostFilterResult
from topospread.framework.nominator import ge_nominated_pods, pod_key, pod_priority
from topospread.framework.preemption import (
    Evaluator,
    RankedCandidates,
    ScoreFunc,
    Victims,
    importance_order,
)
from topospread.framework.runtime import Framework
from topospread.framework.status import SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins import NODE_ONLY_FILTERS
from topospread.plugins.defaultpreemption.args import (
    DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE,
    DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE,
    DefaultPreemptionArgs,
    decode_default_preemption_args,
    resolve_default_preemption_args,
    set_defaults_default_preemption_args,
    validate_default_preemption_args,
)
from topospread.plugins.defaultpreemption.budgets import (
    counts_against,
    filter_pods_with_pdb_violation,
    pdb_selectors,
    pod_terminating_by_preemption,
)
from topospread.plugins.noderesources.fit import NAME as FIT
from topospread.plugins.noderesources.fit import PRE_FILTER_STATE_KEY as FIT_PRE_FILTER_STATE_KEY
from topospread.plugins.noderesources.fit import Fit
from topospread.plugins.noderesources.fit import PreFilterState as FitPreFilterState
from topospread.plugins.noderesources.resource_helpers import (
    NodeResources,
    Resource,
    calculate_resource,
    node_resources,
)

NAME: Final = "DefaultPreemption"

PREEMPT_NEVER: Final = "Never"
MSG_PREFIX: Final = "preemption: "
ERR_NO_VICTIMS: Final = "No preemption victims found for incoming pod"
ERR_PREEMPTION_POLICY_NEVER: Final = "not eligible due to preemptionPolicy=Never."
ERR_TERMINATING_ON_NOMINATED_NODE: Final = (
    "not eligible due to a terminating pod on the nominated node."
)
ERR_NO_FRAMEWORK: Final = "DefaultPreemption needs the framework's handle to dry-run filters"


# ---------------------------------------------------------------------------------------------
# The plugin


class VictimsKernel(Protocol):
    """Preemption's dry run over many nodes at once where NodeResourcesFit alone decides
    (topospread's simulator supplies one over its node table)."""

    def candidates(
        self,
        pod: Pod,
        need: Resource,
        features: Features,
        nodes: Sequence[NodeInfo],
        order: Sequence[int],
        num_candidates: int,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> RankedCandidates | None:
        """``Evaluator.dry_run_screened``'s candidates over ``nodes[i] for i in order`` (the
        visiting order of the nodes passing the screen), ranked; None where it cannot tell."""
        ...


class DefaultPreemption:
    """PostFilter (and a PreEnqueue that never gates: preemption completes at once here).

    ``args`` must be defaulted and valid. The handle must be the framework's (a
    ``FrameworkHandle``) for PostFilter to dry-run filters; it is looked up when PostFilter runs.
    Upstream: DefaultPreemption and New (default_preemption.go, v1.35)
    """

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle, features: Features) -> None:
        self.args = args
        self.handle = handle
        self.features = features
        # Give victims back by NodeResourcesFit's arithmetic where that is the only filter
        # the victims can sway (``_fit_alone``); off, every step runs the filters (the
        # reference path, which tests/test_fastpath.py compares it with).
        self.reprieve_by_fit = True
        self._fit_alone_memo: dict[tuple[int, frozenset[str]], Fit | None] = {}
        # Set by the simulator when its fast path covers this profile (vectorised_candidates).
        self.victims_kernel: VictimsKernel | None = None

    @property
    def name(self) -> str:
        return NAME

    def _framework(self) -> tuple[FrameworkHandle, Framework] | None:
        handle = self.handle
        if isinstance(handle, FrameworkHandle) and handle.framework is not None:
            return handle, handle.framework
        return None

    # -- extension points ---------------------------------------------------------------------

    def pre_enqueue(self, pod: Pod) -> Status:
        """Never gates: upstream gates a pod while its asynchronous preemption runs; here
        preemption is finished when PostFilter returns.

        Upstream: DefaultPreemption.PreEnqueue (default_preemption.go, v1.35)
        """
        return SUCCESS

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Upstream: DefaultPreemption.PostFilter (default_preemption.go, v1.35)."""
        found = self._framework()
        if found is None:
            return None, as_status(ERR_NO_FRAMEWORK)
        handle, _ = found
        evaluator = Evaluator(NAME, handle, self)
        result, status = evaluator.preempt(state, pod, filtered_node_status)
        msg = status.message
        if not msg:
            return result, status
        if status.code is Code.Error:
            return result, as_status(MSG_PREFIX + msg)
        return result, new_status(status.code, MSG_PREFIX + msg)

    # -- preemption.Interface -----------------------------------------------------------------

    def calculate_num_candidates(self, num_nodes: int) -> int:
        """``num_nodes * percentage / 100``, at least the absolute minimum, at most num_nodes.

        Upstream: DefaultPreemption.calculateNumCandidates (default_preemption.go, v1.35)
        """
        n = num_nodes * self.args.percentage // 100
        n = max(n, self.args.absolute)
        return min(n, num_nodes)

    def get_offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]:
        """A random offset from the scheduler's seeded source, and the number of candidates.

        Upstream: DefaultPreemption.GetOffsetAndNumCandidates (default_preemption.go, v1.35)
        """
        found = self._framework()
        rng = found[0].rng if found is not None else None
        offset = rng.randrange(num_nodes) if rng is not None and num_nodes > 0 else 0
        return offset, self.calculate_num_candidates(num_nodes)

    def ordered_score_funcs(self, nodes_to_victims: Mapping[str, Victims]) -> list[ScoreFunc]:
        """None of its own: pickOneNodeForPreemption's defaults apply.

        Upstream: DefaultPreemption.OrderedScoreFuncs (default_preemption.go, v1.35)
        """
        return []

    def is_preemption_allowed(self, node_info: NodeInfo, victim: Pod, preemptor: Pod) -> bool:
        """A victim must have a lower priority than the preemptor (upstream's IsEligiblePod
        hook, which could narrow this, allows every pod by default).

        Upstream: DefaultPreemption.isPreemptionAllowed (default_preemption.go, v1.35)
        """
        return pod_priority(victim) < pod_priority(preemptor)

    def pod_eligible_to_preempt_others(
        self, pod: Pod, nominated_node_status: Status
    ) -> tuple[bool, str]:
        """Not with preemptionPolicy Never; not while a victim of its earlier preemption is
        still terminating on its nominated node (unless that node now rejects the pod as
        UnschedulableAndUnresolvable, in which case it may preempt elsewhere).

        Upstream: DefaultPreemption.PodEligibleToPreemptOthers (default_preemption.go, v1.35)
        """
        if pod.spec.preemption_policy == PREEMPT_NEVER:
            return False, ERR_PREEMPTION_POLICY_NEVER
        nominated = pod.status.nominated_node_name
        if nominated:
            if nominated_node_status.code is Code.UnschedulableAndUnresolvable:
                return True, ""
            info = self.handle.snapshot_shared_lister().node_infos().get(nominated)
            if info is not None:
                for p in info.pods:
                    if self.is_preemption_allowed(info, p, pod) and pod_terminating_by_preemption(
                        p
                    ):
                        return False, ERR_TERMINATING_ON_NOMINATED_NODE
        return True, ""

    def no_victims_status(self, pod: Pod, node_info: NodeInfo) -> Status | None:
        """UnschedulableAndUnresolvable when every pod of the node has at least the pod's
        priority (the node's lowest priority is remembered until the node changes)."""
        lowest = node_info.cache.get(_LOWEST_PRIORITY_KEY)
        if lowest is None:
            lowest = min((pod_priority(p) for p in node_info.pods), default=None)
            node_info.cache[_LOWEST_PRIORITY_KEY] = lowest = (lowest,)
        if lowest[0] is None or lowest[0] >= pod_priority(pod):
            return _NO_VICTIMS
        return None

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status]:
        """The fewest pods to evict from this node (a copy) for the pod to fit, most important
        first, and how many of them violate a PDB.

        Every lower-priority pod is removed (through the PreFilter extensions too); if the pod
        still does not fit, the node's filter status is returned. Then the removed pods come
        back one by one, most important first, PDB-violating ones before the others, and stay
        when the pod still fits with them.
        Upstream: DefaultPreemption.SelectVictimsOnNode (default_preemption.go, v1.35)
        """
        found = self._framework()
        if found is None:
            return [], 0, as_status(ERR_NO_FRAMEWORK)
        _, fwk = found

        def remove(victim: Pod) -> Status:
            node_info.remove_pod(victim)
            return fwk.run_pre_filter_extension_remove_pod(state, pod, victim, node_info)

        def add(victim: Pod) -> Status:
            node_info.add_pod(victim)
            return fwk.run_pre_filter_extension_add_pod(state, pod, victim, node_info)

        potential = [p for p in node_info.pods if self.is_preemption_allowed(node_info, p, pod)]
        fit = self._fit_alone(fwk, state) if potential and self.reprieve_by_fit else None
        if fit is not None:
            return self._select_victims_by_fit(fwk, fit, state, pod, node_info, potential, pdbs)
        for victim in potential:
            status = remove(victim)
            if not status.is_success:
                return [], 0, _as_error(status)
        if not potential:
            return [], 0, new_status(Code.UnschedulableAndUnresolvable, ERR_NO_VICTIMS)

        # Affinity of the pod to the victims is deliberately not considered (upstream, for
        # performance): if the pod does not fit with all of them gone, the node is no candidate.
        status = fwk.run_filter_plugins_with_nominated_pods(state, pod, node_info)
        if not status.is_success:
            return [], 0, status

        potential = importance_order(potential)
        violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
        victims: list[Pod] = []

        def reprieve(candidate: Pod) -> Status | bool:
            status = add(candidate)
            if not status.is_success:
                return status
            fits = fwk.run_filter_plugins_with_nominated_pods(state, pod, node_info).is_success
            if not fits:
                status = remove(candidate)
                if not status.is_success:
                    return status
                victims.append(candidate)
            return fits

        num_violating = 0
        for candidate in violating:
            outcome = reprieve(candidate)
            if isinstance(outcome, Status):
                return [], 0, _as_error(outcome)
            if not outcome:
                num_violating += 1
        for candidate in non_violating:
            outcome = reprieve(candidate)
            if isinstance(outcome, Status):
                return [], 0, _as_error(outcome)

        if violating and non_violating:
            # Keep the victims most important first across both groups.
            _most_important_first(victims, potential)
        return victims, num_violating, SUCCESS

    def screened_victims(
        self,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status] | None:
        """``select_victims_on_node`` for a node that passed the fast path's screen (its
        node-only filters pass, and NodeResourcesFit with every lower-priority pod gone and
        the nominated pods in), where only NodeResourcesFit can change the verdict
        (``_fit_alone``); None where that does not hold. Reads ``node_info`` without changing
        it, and keeps the outcome in its cache for the next pod of the same priority and
        request while the node's pods stay (no PDB, no nominated pod of the pod's priority or
        more on the node: then nothing else can change it).

        NOTE: relies on the screen: the filters are not run again here.
        """
        found = self._framework()
        if found is None or not self.reprieve_by_fit:
            return None
        _, fwk = found
        fit = self._fit_alone(fwk, state)
        if fit is None:
            return None
        request = state.read(FIT_PRE_FILTER_STATE_KEY)
        need = request.resource
        priority = pod_priority(pod)
        nominated = list(ge_nominated_pods(fwk.handle.nominated_pods_for_node(node_info.name), pod))
        memo: dict[Any, tuple[list[Pod], int, Status]] | None = None
        key: Any = None
        if not pdbs and not nominated and not need.scalar_resources:
            memo = node_info.cache.setdefault(_SCREENED_KEY, {})
            key = (id(fit), priority, need.milli_cpu, need.memory, need.ephemeral_storage)
            hit = memo.get(key)
            if hit is not None:
                return hit
        totals = node_resources(node_info, fit.features)
        requested, count = Resource(), 0
        potential: list[Pod] = []
        for p in node_info.pods:
            if pod_priority(p) < priority:
                potential.append(p)
            else:
                requested.add_resource(calculate_resource(p, fit.features).resource)
                count += 1
        if not potential:
            return None  # the screen admits no such node; the reference says why
        for p in nominated:
            requested.add_resource(calculate_resource(p, fit.features).resource)
            count += 1
        remaining = NodeResources(totals.allocatable, requested, totals.non_zero_requested, count)
        victims, num_violating = _reprieve_by_fit(fit, request, remaining, potential, pdbs)
        outcome = (victims, num_violating, SUCCESS)
        if memo is not None:
            memo[key] = outcome
        return outcome

    def vectorised_candidates(
        self,
        state: CycleState,
        pod: Pod,
        potential_nodes: Sequence[NodeInfo],
        pdbs: Sequence[PodDisruptionBudget],
        offset: int,
        num_candidates: int,
        screen: Sequence[int],
    ) -> RankedCandidates | None:
        """``Evaluator.dry_run_screened``'s candidates, ranked, from ``victims_kernel``: where
        only NodeResourcesFit can change the verdict (``_fit_alone``), for a request of cpu,
        memory and ephemeral storage alone; None elsewhere (the caller dry-runs node by node).

        NOTE: relies on the screen, as ``screened_victims`` does, and on this plugin's score
        functions being pickOneNodeForPreemption's defaults (``ordered_score_funcs``).
        """
        kernel = self.victims_kernel
        found = self._framework()
        if kernel is None or found is None or not self.reprieve_by_fit or not screen:
            return None
        fit = self._fit_alone(found[1], state)
        if fit is None:
            return None
        need = state.read(FIT_PRE_FILTER_STATE_KEY).resource
        if need.scalar_resources:
            return None
        split = bisect.bisect_left(screen, offset)
        order = [*screen[split:], *screen[:split]]
        return kernel.candidates(
            pod, need, fit.features, potential_nodes, order, num_candidates, pdbs
        )

    def _fit_alone(self, fwk: Framework, state: CycleState) -> Fit | None:
        """NodeResourcesFit, when it is the only filter of this cycle whose verdict depends on
        the pods of a node: every other filter that runs reads only the pod and the node (the
        rest skipped at PreFilter), and no PreFilter extension would see pods come and go.
        None otherwise."""
        key = (id(fwk), frozenset(state.skip_filter_plugins))
        if key not in self._fit_alone_memo:
            self._fit_alone_memo[key] = self._find_fit_alone(fwk, state.skip_filter_plugins)
        fit = self._fit_alone_memo[key]
        return fit if fit is not None and state.has(FIT_PRE_FILTER_STATE_KEY) else None

    @staticmethod
    def _find_fit_alone(fwk: Framework, skip: Collection[str]) -> Fit | None:
        fit: Fit | None = None
        for pl in fwk.filter_plugins:
            if pl.name in skip or pl.name in NODE_ONLY_FILTERS:
                continue
            if pl.name != FIT or not isinstance(pl, Fit):
                return None
            fit = pl
        for pre in fwk.pre_filter_plugins:
            if pre.name not in skip and pre.pre_filter_extensions() is not None:
                return None
        return fit

    def _select_victims_by_fit(
        self,
        fwk: Framework,
        fit: Fit,
        state: CycleState,
        pod: Pod,
        node_info: NodeInfo,
        potential: list[Pod],
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[Pod], int, Status]:
        """``select_victims_on_node`` where only NodeResourcesFit can change its verdict: the
        filters run once with every potential victim gone; then each pod given back is judged
        by Fit's arithmetic on the node's running totals, the node's nominated pods of at least
        the pod's priority counted in — the verdict the filters would give (the others passed
        and cannot change; with fewer pods, the pass without the nominated pods fits too)."""
        for victim in potential:
            node_info.remove_pod(victim)
        request = state.read(FIT_PRE_FILTER_STATE_KEY)
        totals = node_resources(node_info, fit.features)
        requested, count = totals.requested.clone(), totals.pod_count
        for p in ge_nominated_pods(fwk.handle.nominated_pods_for_node(node_info.name), pod):
            requested.add_resource(calculate_resource(p, fit.features).resource)
            count += 1
        # RunFilterPluginsWithNominatedPods with every potential victim gone: the filters in
        # order, Fit over the totals with the nominated pods in (if that passes, the pass
        # without them passes too).
        for pl in fwk.filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue
            if pl is fit:
                with_nominated = NodeResources(
                    totals.allocatable, requested, totals.non_zero_requested, count
                )
                status = fit.filter_totals(request, with_nominated).with_plugin(pl.name)
            else:
                status = fwk.run_filter_plugin(pl, state, pod, node_info)
            if not status.is_success:
                return [], 0, status
        remaining = NodeResources(totals.allocatable, requested, totals.non_zero_requested, count)
        victims, num_violating = _reprieve_by_fit(fit, request, remaining, potential, pdbs)
        return victims, num_violating, SUCCESS


def _reprieve_by_fit(
    fit: Fit,
    request: FitPreFilterState,
    remaining: NodeResources,
    potential: list[Pod],
    pdbs: Sequence[PodDisruptionBudget],
) -> tuple[list[Pod], int]:
    """SelectVictimsOnNode's reprieve, judged by Fit alone on ``remaining`` (the node with
    every potential victim removed): PDB-violating victims first, then the others, each in
    importance order, given back while the pod still fits; the victims and how many of them
    violate a budget.

    Upstream: SelectVictimsOnNode's reprievePod loop (default_preemption.go, v1.35)
    """
    potential = importance_order(potential)
    violating, non_violating = filter_pods_with_pdb_violation(potential, pdbs)
    fits_back = _fit_reprieve(fit, request, remaining)
    victims: list[Pod] = []
    num_violating = 0
    for group, violates in ((violating, 1), (non_violating, 0)):
        for candidate in group:
            if not fits_back(calculate_resource(candidate, fit.features).resource):
                victims.append(candidate)
                num_violating += violates
    if violating and non_violating:
        _most_important_first(victims, potential)
    return victims, num_violating


def _fit_reprieve(
    fit: Fit, request: FitPreFilterState, totals: NodeResources
) -> Callable[[Resource], bool]:
    """A judge of pods given back one by one to a node with these totals: whether the pod
    still fits with the next one back (which then stays), by Fit's own test."""
    need = request.resource
    if need.scalar_resources:
        requested, count = totals.requested.clone(), totals.pod_count

        def general(back: Resource) -> bool:
            nonlocal requested, count
            trial = requested.clone()
            trial.add_resource(back)
            after = NodeResources(totals.allocatable, trial, totals.non_zero_requested, count + 1)
            if not fit.filter_totals(request, after).is_success:
                return False
            requested, count = trial, count + 1
            return True

        return general
    # Fit's test spelled out for a request of cpu, memory and ephemeral storage alone
    # (fitsRequest: a pod more must be allowed; a zero request is never short).
    alloc, used = totals.allocatable, totals.requested
    pods_room = alloc.allowed_pod_number - totals.pod_count
    cpu_room = alloc.milli_cpu - used.milli_cpu
    mem_room = alloc.memory - used.memory
    eph_room = alloc.ephemeral_storage - used.ephemeral_storage

    def lean(back: Resource) -> bool:
        nonlocal pods_room, cpu_room, mem_room, eph_room
        cpu = cpu_room - back.milli_cpu
        mem = mem_room - back.memory
        eph = eph_room - back.ephemeral_storage
        if (
            pods_room - 1 >= 1
            and (need.milli_cpu == 0 or need.milli_cpu <= cpu)
            and (need.memory == 0 or need.memory <= mem)
            and (need.ephemeral_storage == 0 or need.ephemeral_storage <= eph)
        ):
            pods_room, cpu_room, mem_room, eph_room = pods_room - 1, cpu, mem, eph
            return True
        return False

    return lean


def _most_important_first(victims: list[Pod], ranked: Sequence[Pod]) -> None:
    """Sort victims in place as ``ranked`` (most important first) orders them: the
    PDB-violating ones were collected before the others."""
    rank = {pod_key(p): i for i, p in enumerate(ranked)}
    victims.sort(key=lambda p: rank[pod_key(p)])


_LOWEST_PRIORITY_KEY: Final = "defaultpreemption.lowest-priority"
_SCREENED_KEY: Final = "defaultpreemption.screened"
_NO_VICTIMS: Final = new_status(Code.UnschedulableAndUnresolvable, ERR_NO_VICTIMS)


def _as_error(status: Status) -> Status:
    return status if status.code is Code.Error else as_status(status.message)


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> DefaultPreemption:
    """The plugin from a profile's raw pluginConfig args (defaulted, then validated).

    Upstream: New (default_preemption.go, v1.35)
    """
    return DefaultPreemption(resolve_default_preemption_args(args), handle, features)


__all__ = [
    "DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE",
    "DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE",
    "ERR_NO_VICTIMS",
    "ERR_PREEMPTION_POLICY_NEVER",
    "ERR_TERMINATING_ON_NOMINATED_NODE",
    "MSG_PREFIX",
    "NAME",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "VictimsKernel",
    "counts_against",
    "decode_default_preemption_args",
    "filter_pods_with_pdb_violation",
    "new",
    "pdb_selectors",
    "pod_terminating_by_preemption",
    "resolve_default_preemption_args",
    "set_defaults_default_preemption_args",
    "validate_default_preemption_args",
]
