"""``explain``: why one pod lands where it does, or why it stays Pending.

The pod is explained against the cluster exactly as it stood at the pod's last scheduling
attempt in the run (pods scheduled before it are bound, later ones are not). Every node is
evaluated (no sampling), with every Filter plugin's verdict, not only the first failure, and
every Score plugin's weighted score. For each topology spread constraint the report gives the
eligible domains, their matching pods, the global minimum and the skew each node would produce.
For a Pending pod it searches for the smallest single changes that would let it schedule —
a larger maxSkew, ScheduleAnyway, another node in a domain, a toleration, an uncordoned node,
dropped node affinity — and keeps only those a re-run of the scheduling cycle confirms.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.analysis.volume_pins import bound_volumes
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    Node,
    Pod,
    Toleration,
)
from topospread.cluster.state import ClusterState
from topospread.cluster.storage import StorageState
from topospread.errors import ManifestError
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.handle import FrameworkHandle
from topospread.framework.interface import QueuedPodInfo
from topospread.framework.runtime import Framework, Registry
from topospread.framework.schedule_one import FitError, SchedulingAlgorithm, SchedulingError
from topospread.framework.status import Code
from topospread.framework.types import NodeInfo
from topospread.plugins.helper.storage import check_node_affinity
from topospread.plugins.podtopologyspread.filtering import PRE_FILTER_STATE_KEY, PreFilterState
from topospread.plugins.podtopologyspread.scoring import PRE_SCORE_STATE_KEY
from topospread.simulator.run import NOT_ATTEMPTED
from topospread.simulator.scenario import Scenario
from topospread.simulator.scheduler import Decision, Scheduler

MAX_SKEW_SEARCH: Final = 20


@dataclass(slots=True)
class NodeVerdict:
    """One node: each Filter plugin's result (``Skip`` when PreFilter skipped it) and scores."""

    node: str
    filters: dict[str, str] = field(default_factory=dict)
    feasible: bool = True
    scores: dict[str, int] = field(default_factory=dict)
    total: int | None = None


@dataclass(slots=True)
class DomainView:
    """A topology spread constraint as PreFilter (hard) or PreScore (soft) counted it."""

    index: int
    topology_key: str
    when_unsatisfiable: str
    max_skew: int
    min_domains: int
    selector: str
    counts: dict[str, int]
    global_min: int | None
    self_match: bool
    skew_by_node: dict[str, int | None] = field(default_factory=dict)


@dataclass(slots=True)
class Suggestion:
    """A single change that a re-run of the cycle confirms makes the pod schedulable."""

    change: str
    lands_on: str


@dataclass(slots=True)
class Explanation:
    pod: Pod
    node: str | None
    message: str | None
    # Every attempt of the pod in the run, in order, as ``schedule -o json`` records each
    # (``Decision.attempt_json``): a preemptor's failed attempt with its nominated node and
    # victims, then the attempt that binds. The nodes below are those of the last one.
    attempts: list[dict[str, Any]]
    pre_filter: dict[str, str]
    nodes: list[NodeVerdict]
    constraints: list[DomainView]
    suggestions: list[Suggestion]
    # Ctrl-C stopped the run: this is the pod's last attempt before it, if it had one.
    interrupted: bool = False

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "pod": f"{self.pod.metadata.namespace}/{self.pod.metadata.name}",
            "node": self.node,
            "message": self.message,
            "attempts": self.attempts,
            "preFilter": self.pre_filter,
            "nodes": [
                {
                    "node": v.node,
                    "feasible": v.feasible,
                    "filters": v.filters,
                    "scores": v.scores,
                    "total": v.total,
                }
                for v in self.nodes
            ],
            "constraints": [
                {
                    "index": c.index,
                    "topologyKey": c.topology_key,
                    "whenUnsatisfiable": c.when_unsatisfiable,
                    "maxSkew": c.max_skew,
                    "minDomains": c.min_domains,
                    "selector": c.selector,
                    "counts": c.counts,
                    "globalMin": c.global_min,
                    "selfMatch": c.self_match,
                    "skewByNode": c.skew_by_node,
                }
                for c in self.constraints
            ],
            "suggestions": [{"change": s.change, "landsOn": s.lands_on} for s in self.suggestions],
        }
        if self.interrupted:
            doc["interrupted"] = True
        return doc


class _Recorder(Scheduler):
    """A Scheduler that remembers the cluster as it stood before each attempt of one pod."""

    target: str = ""
    captured: list[tuple[list[Node], list[Pod], StorageState]]

    def schedule_one(self, info: QueuedPodInfo) -> Decision:
        pod = info.pod
        if f"{pod.metadata.namespace}/{pod.metadata.name}" == self.target:
            infos = self.cluster.list()
            nodes = [i.node for i in infos]
            pods = [p for i in infos for p in i.pods]
            self.captured.append((nodes, pods, self.cluster.storage_state.copy()))
        return super().schedule_one(info)


def find_pod(scenario: Scenario, name: str) -> Pod:
    """The queued pod named ``namespace/name`` or ``name`` (unique across namespaces)."""
    matches = [
        p
        for p in scenario.queue
        if f"{p.metadata.namespace}/{p.metadata.name}" == name or p.metadata.name == name
    ]
    if not matches:
        known = ", ".join(f"{p.metadata.namespace}/{p.metadata.name}" for p in scenario.queue[:10])
        # A list cut short says by how many.
        more = f" and {len(scenario.queue) - 10} more" if len(scenario.queue) > 10 else ""
        raise ManifestError(
            f"--pod {name}: no such pod in the queue (queued: {known or 'none'}{more})"
        )
    if len(matches) > 1:
        raise ManifestError(f"--pod {name}: ambiguous; use namespace/name")
    return matches[0]


def explain(
    scenario: Scenario,
    pod_name: str,
    *,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
    seed: int = 0,
    suggest: bool = True,
    stop: Callable[[], bool] | None = None,
) -> Explanation:
    """Run the scenario, then explain the named pod's last attempt node by node.

    Ctrl-C (``KeyboardInterrupt``, or ``stop()`` true between two attempts) ends the run
    early: the explanation is of the pod's last attempt made before it (``interrupted``), or
    says it was not attempted."""
    if registry is None:
        from topospread.plugins.registry import IN_TREE

        registry = IN_TREE
    target = find_pod(scenario, pod_name)
    key = f"{target.metadata.namespace}/{target.metadata.name}"
    recorder = _Recorder(scenario.cluster(), scenario.config, registry, features, seed=seed)
    recorder.target = key
    recorder.captured = []
    for pod in scenario.queue:
        recorder.add(pod)
    decided: list[Decision] = []
    try:
        recorder.run(decisions=decided, stop=stop)
        interrupted = stop is not None and stop() and len(recorder.active) > 0
    except KeyboardInterrupt:
        interrupted = True
    attempts = [d.attempt_json() for d in decided if d.key == key]
    # An attempt cut mid-way captured its cluster but decided nothing: not explained.
    del recorder.captured[len(attempts) :]
    decision = recorder.last.get(key)
    if not recorder.captured:
        why = recorder.pending().get(key)
        message = (
            why[1]
            if isinstance(why, tuple)
            else NOT_ATTEMPTED
            if interrupted
            else "never attempted"
        )
        return Explanation(target, None, message, attempts, {}, [], [], [], interrupted)
    nodes, pods, storage = recorder.captured[-1]
    cluster = ClusterState(nodes, pods, recorder.cluster.objects, storage=storage)
    fwk = _framework(scenario, cluster, registry, features, target)
    explanation = _evaluate(fwk, cluster, target)
    explanation.node = decision.node if decision is not None else None
    explanation.message = decision.message if decision is not None else None
    explanation.attempts = attempts
    explanation.interrupted = interrupted
    if suggest and explanation.node is None:
        explanation.suggestions = _suggestions(scenario, cluster, target, registry, features)
    return explanation


def _framework(
    scenario: Scenario, cluster: ClusterState, registry: Registry, features: Features, pod: Pod
) -> Framework:
    profile = scenario.config.profile(pod.spec.scheduler_name or "default-scheduler")
    if profile is None:
        profile = scenario.config.profiles[0]
    return Framework(profile, registry, FrameworkHandle(cluster, cluster, features), features)


def _evaluate(fwk: Framework, cluster: ClusterState, pod: Pod) -> Explanation:
    infos = cluster.list()
    state = CycleState()
    pre_filter: dict[str, str] = {}
    for pre in fwk.pre_filter_plugins:
        _, status = pre.pre_filter(state, pod, infos)
        pre_filter[pre.name] = _describe(status.code, status.message)
    state.skip_filter_plugins = {name for name, verdict in pre_filter.items() if verdict == "Skip"}
    rejected_at_pre_filter = any(
        v.startswith(("Unschedulable", "Error")) for v in pre_filter.values()
    )
    verdicts = []
    feasible = []
    for info in infos:
        v = NodeVerdict(info.name)
        for pl in fwk.filter_plugins:
            if pl.name in state.skip_filter_plugins:
                v.filters[pl.name] = "Skip"
                continue
            if rejected_at_pre_filter:
                v.filters[pl.name] = "not run (PreFilter rejected the pod)"
                continue
            status = pl.filter(state, pod, info)
            v.filters[pl.name] = _describe(status.code, status.message)
            if not status.is_success:
                v.feasible = False
        if rejected_at_pre_filter:
            v.feasible = False
        if v.feasible:
            feasible.append(info)
        verdicts.append(v)
    if feasible:
        status = fwk.run_pre_score_plugins(state, pod, feasible)
        if status.is_success:
            scores, status = fwk.run_score_plugins(state, pod, feasible)
            by_name = {v.node: v for v in verdicts}
            for s in scores:
                by_name[s.name].scores = {ps.name: ps.score for ps in s.scores}
                by_name[s.name].total = s.total_score
    return Explanation(
        pod=pod,
        node=None,
        message=None,
        attempts=[],
        pre_filter=pre_filter,
        nodes=verdicts,
        constraints=_constraint_views(state, pod, cluster),
        suggestions=[],
    )


def _describe(code: Code, message: str) -> str:
    return code.name if not message else f"{code.name}: {message}"


def hard_constraint_view(
    state: PreFilterState, i: int, index: int, pod: Pod, nodes: Sequence[NodeInfo]
) -> DomainView:
    """Hard constraint ``i`` as PreFilter counted it for ``pod``: matching pods per eligible
    domain, the global minimum, and the skew placing the pod on each of ``nodes`` would give.
    ``index`` is the constraint's position in the pod's spec."""
    c = state.constraints[i]
    counts = dict(sorted(state.tp_value_to_match_num[i].items()))
    gmin = state.min_match_num(i, c.min_domains)
    self_match = c.selector.matches(pod.metadata.labels)
    skews: dict[str, int | None] = {}
    for info in nodes:
        value = info.node.metadata.labels.get(c.topology_key)
        skews[info.name] = None if value is None else counts.get(value, 0) + int(self_match) - gmin
    return DomainView(
        index=index,
        topology_key=c.topology_key,
        when_unsatisfiable=DO_NOT_SCHEDULE,
        max_skew=c.max_skew,
        min_domains=c.min_domains,
        selector=str(c.selector) or "<everything>",
        counts=counts,
        global_min=gmin,
        self_match=self_match,
        skew_by_node=skews,
    )


def _constraint_views(state: CycleState, pod: Pod, cluster: ClusterState) -> list[DomainView]:
    views: list[DomainView] = []
    spec_constraints = pod.spec.topology_spread_constraints
    try:
        hard = state.read(PRE_FILTER_STATE_KEY)
    except KeyError:
        hard = None
    if hard is not None:
        hard_indexes = [
            i for i, c in enumerate(spec_constraints) if c.when_unsatisfiable == DO_NOT_SCHEDULE
        ]
        for i in range(len(hard.constraints)):
            index = hard_indexes[i] if i < len(hard_indexes) else i
            views.append(hard_constraint_view(hard, i, index, pod, cluster.list()))
    try:
        soft = state.read(PRE_SCORE_STATE_KEY)
    except KeyError:
        soft = None
    if soft is not None:
        soft_indexes = [
            i for i, c in enumerate(spec_constraints) if c.when_unsatisfiable == SCHEDULE_ANYWAY
        ]
        for i, c in enumerate(soft.constraints):
            views.append(
                DomainView(
                    index=soft_indexes[i] if i < len(soft_indexes) else i,
                    topology_key=c.topology_key,
                    when_unsatisfiable=SCHEDULE_ANYWAY,
                    max_skew=c.max_skew,
                    min_domains=c.min_domains,
                    selector=str(c.selector) or "<everything>",
                    counts=dict(sorted(soft.topology_value_to_pod_counts[i].items())),
                    global_min=None,
                    self_match=c.selector.matches(pod.metadata.labels),
                )
            )
    return views


# ------------------------------------------------------------------------------- suggestions

Change = Callable[[ClusterState, Pod], tuple[ClusterState, Pod]]


def _try(
    scenario: Scenario,
    cluster: ClusterState,
    pod: Pod,
    registry: Registry,
    features: Features,
    change: Change,
) -> str | None:
    """The node the pod would land on after the change, or None if it still does not fit."""
    changed_cluster, changed_pod = change(_copy(cluster), pod)
    fwk = _framework(scenario, changed_cluster, registry, features, changed_pod)
    algorithm = SchedulingAlgorithm(100, rng=random.Random(0), tie_break="name")
    try:
        result = algorithm.schedule_pod(fwk, CycleState(), changed_pod, changed_cluster.list())
    except (FitError, SchedulingError):
        return None
    except Exception:
        return None
    return result.suggested_host


def _copy(cluster: ClusterState) -> ClusterState:
    infos = cluster.list()
    return ClusterState(
        [i.node for i in infos],
        [p for i in infos for p in i.pods],
        cluster.objects,
        cluster.priority_classes.values(),
        cluster.storage_state.copy(),
    )


def _with_constraint(pod: Pod, index: int, **changes: Any) -> Pod:
    constraints = list(pod.spec.topology_spread_constraints)
    constraints[index] = msgspec.structs.replace(constraints[index], **changes)
    return msgspec.structs.replace(
        pod, spec=msgspec.structs.replace(pod.spec, topology_spread_constraints=constraints)
    )


def _suggestions(
    scenario: Scenario,
    cluster: ClusterState,
    pod: Pod,
    registry: Registry,
    features: Features,
) -> list[Suggestion]:
    found: list[Suggestion] = []

    def attempt(text: str, change: Change) -> bool:
        node = _try(scenario, cluster, pod, registry, features, change)
        if node is not None:
            found.append(Suggestion(text, node))
            return True
        return False

    for i, c in enumerate(pod.spec.topology_spread_constraints):
        if c.when_unsatisfiable != DO_NOT_SCHEDULE:
            continue
        for skew in range(c.max_skew + 1, c.max_skew + MAX_SKEW_SEARCH + 1):
            if attempt(
                f"raise topologySpreadConstraints[{i}].maxSkew ({c.topology_key}) "
                f"from {c.max_skew} to {skew}",
                _constraint_change(i, max_skew=skew),
            ):
                break
        attempt(
            f"set topologySpreadConstraints[{i}].whenUnsatisfiable ({c.topology_key}) "
            "to ScheduleAnyway",
            _constraint_change(i, when_unsatisfiable=SCHEDULE_ANYWAY),
        )
        if c.min_domains is not None:
            attempt(
                f"drop topologySpreadConstraints[{i}].minDomains ({c.min_domains})",
                _constraint_change(i, min_domains=None),
            )
    _volume_suggestion(cluster, pod, attempt)
    # Another node like an existing one: one per distinct label set (a domain's template).
    seen_labels: set[tuple[tuple[str, str], ...]] = set()
    for info in cluster.list():
        labels = tuple(sorted(info.node.metadata.labels.items()))
        if labels in seen_labels:
            continue
        seen_labels.add(labels)
        attempt(
            f"add a node like {info.name} ({_domain_text(info.node, pod)})",
            _cluster_change(_add_clone, info.node),
        )
    for info in cluster.list():
        node = info.node
        if node.spec.unschedulable:
            attempt(
                f"uncordon {node.metadata.name}",
                _cluster_change(_uncordon, node),
            )
    tolerated: set[tuple[str, str, str]] = set()
    for info in cluster.list():
        for taint in info.node.spec.taints:
            if taint.effect not in ("NoSchedule", "NoExecute"):
                continue
            sig = (taint.key, taint.value, taint.effect)
            if sig in tolerated:
                continue
            tolerated.add(sig)
            toleration = Toleration(
                key=taint.key, operator="Equal", value=taint.value, effect=taint.effect
            )
            attempt(
                f"tolerate the taint {taint.key}={taint.value}:{taint.effect}",
                _pod_change(_tolerate, toleration),
            )
    if pod.spec.node_selector or (
        pod.spec.affinity is not None and pod.spec.affinity.node_affinity is not None
    ):
        attempt("drop the pod's nodeSelector and required node affinity", _drop_node_affinity)
    return found


def _volume_suggestion(
    cluster: ClusterState, pod: Pod, attempt: Callable[[str, Change], bool]
) -> None:
    """When no node is where the pod's bound volumes are (a zone lost, a PV in a zone without
    nodes): name where they are, and try a node there (a copy of the first node, relabelled
    with the values the volumes' node affinity asks for)."""
    storage = cluster.storage()
    pvs = [
        pv
        for pv in bound_volumes(pod, storage)
        if pv.spec.node_affinity is not None and pv.spec.node_affinity.required is not None
    ]
    infos = cluster.list()
    if not pvs or not infos:
        return
    if any(all(check_node_affinity(pv, i.node.metadata.labels) for pv in pvs) for i in infos):
        return  # some node is where the volumes are: something else keeps the pod off it
    wanted: dict[str, str] = {}
    for pv in pvs:
        assert pv.spec.node_affinity is not None and pv.spec.node_affinity.required is not None
        terms = pv.spec.node_affinity.required.node_selector_terms
        for e in terms[0].match_expressions if terms else []:
            if e.operator == "In" and e.values:
                wanted.setdefault(e.key, e.values[0])
    if not wanted:
        return
    names = ", ".join(pv.metadata.name for pv in pvs)
    where = ", ".join(f"{k}={v}" for k, v in sorted(wanted.items()))
    template = infos[0].node
    attempt(
        f"the pod's volume ({names}) is in {where}: add a node there like {template.metadata.name}",
        _cluster_change(functools.partial(_add_clone, labels=wanted), template),
    )


def _constraint_change(index: int, **changes: Any) -> Change:
    def change(cluster: ClusterState, pod: Pod) -> tuple[ClusterState, Pod]:
        return cluster, _with_constraint(pod, index, **changes)

    return change


def _cluster_change(fn: Callable[[ClusterState, Node], ClusterState], node: Node) -> Change:
    def change(cluster: ClusterState, pod: Pod) -> tuple[ClusterState, Pod]:
        return fn(cluster, node), pod

    return change


def _pod_change(fn: Callable[[Pod, Toleration], Pod], toleration: Toleration) -> Change:
    def change(cluster: ClusterState, pod: Pod) -> tuple[ClusterState, Pod]:
        return cluster, fn(pod, toleration)

    return change


def _domain_text(node: Node, pod: Pod) -> str:
    keys = [c.topology_key for c in pod.spec.topology_spread_constraints]
    parts = [f"{k}={node.metadata.labels[k]}" for k in keys if k in node.metadata.labels]
    return ", ".join(dict.fromkeys(parts)) or "same labels"


def _add_clone(
    cluster: ClusterState, node: Node, labels: Mapping[str, str] | None = None
) -> ClusterState:
    existing = {i.name for i in cluster.list()}
    n = 1
    while f"{node.metadata.name}-new-{n}" in existing:
        n += 1
    name = f"{node.metadata.name}-new-{n}"
    labels = {**node.metadata.labels, **(labels or {})}
    if labels.get("kubernetes.io/hostname") == node.metadata.name:
        labels["kubernetes.io/hostname"] = name
    for key, value in list(labels.items()):
        if value == node.metadata.name:
            labels[key] = name
    clone = msgspec.structs.replace(
        node,
        metadata=msgspec.structs.replace(node.metadata, name=name, labels=labels),
        spec=msgspec.structs.replace(node.spec, unschedulable=False),
    )
    cluster.add_node(clone)
    return cluster


def _uncordon(cluster: ClusterState, node: Node) -> ClusterState:
    cluster.update_node(
        msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, unschedulable=False))
    )
    return cluster


def _tolerate(pod: Pod, toleration: Toleration) -> Pod:
    spec = msgspec.structs.replace(pod.spec, tolerations=[*pod.spec.tolerations, toleration])
    return msgspec.structs.replace(pod, spec=spec)


def _drop_node_affinity(cluster: ClusterState, pod: Pod) -> tuple[ClusterState, Pod]:
    affinity = pod.spec.affinity
    if affinity is not None:
        affinity = msgspec.structs.replace(affinity, node_affinity=None)
    spec = msgspec.structs.replace(pod.spec, node_selector={}, affinity=affinity)
    return cluster, msgspec.structs.replace(pod, spec=spec)
