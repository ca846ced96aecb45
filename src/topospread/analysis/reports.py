"""What a report says of the cluster at one point: where every pod is, why the others wait,
and how each workload's topology spread constraints stand (``simulate`` reports after every
step, ``sweep`` per failure, ``rebalance`` before and after its plan).

Spread is counted as the scheduler counts it. A workload's pods are grouped by their
constraints as stored (after the API server merged ``matchLabelKeys``, so each revision of a
Deployment that lists ``pod-template-hash`` is its own group); for one pod of each group,
PodTopologySpread's PreFilter counting gives the matching pods per eligible domain (node
inclusion policies applied) and the global minimum (0 while fewer than ``minDomains`` domains
are eligible). The constraint's skew is the largest count minus that minimum; a placement
violates the constraint when the skew exceeds ``maxSkew`` — which the scheduler never causes
for DoNotSchedule constraints, but scale-downs, evictions and node changes do. A
ScheduleAnyway constraint is counted as if it were DoNotSchedule, on its own; its skew past
``maxSkew`` is a preference not met, which the scheduler allows, not a violation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from topospread.analysis.explain import DomainView, hard_constraint_view
from topospread.analysis.report_index import ORPHANS, Bucket, ReportIndex
from topospread.api.types import DO_NOT_SCHEDULE, LABEL_TOPOLOGY_ZONE, Node, Pod
from topospread.api.zones import zone_key_for
from topospread.cluster.index import ClusterIndex
from topospread.labels.selector import Selector
from topospread.plugins.podtopologyspread.common import NAME as POD_TOPOLOGY_SPREAD
from topospread.plugins.podtopologyspread.filtering import (
    Filtering,
    PreFilterState,
    state_from_counts,
)
from topospread.simulator.autoscaling import NodeChange
from topospread.simulator.clock import seconds
from topospread.simulator.decision import is_terminal
from topospread.simulator.drain import DrainResult
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.stores import WorkloadKey, describe_workload, iter_controller_refs


@dataclass(slots=True)
class ConstraintSpread:
    """One topology spread constraint of one group of a workload's pods: ``view`` as explain
    shows a constraint, the revisions (ReplicaSets, controller revisions) of the group, and
    the skew (largest count minus the global minimum; None without eligible domains)."""

    view: DomainView
    revisions: list[str]
    skew: int | None
    # The group's pods (what rebalance evicts from) and the constraint's selector as
    # compiled (matchLabelKeys merged); not part of the JSON.
    pods: list[Pod] = field(default_factory=list)
    selector: Selector | None = None

    @property
    def exceeded(self) -> bool:
        """The skew is past maxSkew (for either kind of constraint)."""
        return self.skew is not None and self.skew > self.view.max_skew

    @property
    def violated(self) -> bool:
        """A DoNotSchedule constraint past its maxSkew: a requirement the placement breaks."""
        return self.exceeded and self.view.when_unsatisfiable == DO_NOT_SCHEDULE

    @property
    def preference_not_met(self) -> bool:
        """A ScheduleAnyway constraint past its maxSkew: the scheduler may leave it so."""
        return self.exceeded and self.view.when_unsatisfiable != DO_NOT_SCHEDULE

    def to_json(self) -> dict[str, Any]:
        v = self.view
        return {
            "index": v.index,
            "topologyKey": v.topology_key,
            "whenUnsatisfiable": v.when_unsatisfiable,
            "maxSkew": v.max_skew,
            "minDomains": v.min_domains,
            "selector": v.selector,
            "revisions": self.revisions,
            "counts": v.counts,
            "globalMin": v.global_min,
            "skew": self.skew,
            "exceeded": self.exceeded,
            "violated": self.violated,
        }


@dataclass(slots=True)
class WorkloadReport:
    workload: str
    desired: int | None
    running: int
    pending: int
    constraints: list[ConstraintSpread]
    pods: list[str] = field(default_factory=list)  # its pods not finished, by key

    def to_json(self) -> dict[str, Any]:
        return {
            "workload": self.workload,
            "desired": self.desired,
            "running": self.running,
            "pending": self.pending,
            "constraints": [c.to_json() for c in self.constraints],
            "pods": self.pods,
        }


class _Exceeding:
    """The lines of a report's constraints past their maxSkew (``exceeding``)."""

    __slots__ = ()
    workloads: list[WorkloadReport]

    @property
    def violations(self) -> list[str]:
        """DoNotSchedule constraints the placement breaks, one line each."""
        return exceeding(self.workloads, hard=True)

    @property
    def preferences_not_met(self) -> list[str]:
        """ScheduleAnyway constraints past their maxSkew, one line each."""
        return exceeding(self.workloads, hard=False)


@dataclass(slots=True)
class StepReport(_Exceeding):
    """The cluster after one step has settled."""

    index: int  # 0: the initial state; step i of the timeline is index i + 1
    name: str
    action: str
    events: list[str]
    settled: Settled
    bound: dict[str, str]
    pending: dict[str, str]
    workloads: list[WorkloadReport]
    topology: list[tuple[Node, list[Pod]]] = field(default_factory=list)
    # A drain step's nodes: what was evicted and the pods a budget or kubectl kept there.
    drains: list[DrainResult] = field(default_factory=list)
    # The simulated clock after the step (nanoseconds since the timeline's start).
    time: int = 0
    # With an autoscaler: what it did during the step, and nodes per group after it.
    autoscaler: list[NodeChange] = field(default_factory=list)
    node_groups: dict[str, int] | None = None

    @property
    def running(self) -> int:
        """How many pods are bound and not finished."""
        return len(self.bound)

    @property
    def blocked(self) -> list[str]:
        """The pods a drain in this step could not evict (they are still on their nodes)."""
        return [b.pod for d in self.drains for b in d.blocked]

    def to_json(self, zone_key: str | None = None) -> dict[str, Any]:
        """The step; each node's ``zone`` is the label the text's grid groups by
        (``zone_key``, else the well-known zone key, else ``zone``)."""
        key = zone_key_for([node for node, _ in self.topology], zone_key)
        return {
            "index": self.index,
            "name": self.name,
            "action": self.action,
            "time": seconds(self.time),
            "events": self.events,
            "rounds": self.settled.rounds,
            "settled": self.settled.settled,
            "created": self.settled.created,
            "deleted": self.settled.deleted,
            "preempted": self.settled.preempted,
            "evicted": self.settled.evicted,
            "placed": self.settled.placed,
            "bound": self.bound,
            "pending": pending_json(self.pending),
            "workloads": [w.to_json() for w in self.workloads],
            "violations": self.violations,
            "preferencesNotMet": self.preferences_not_met,
            "drains": [d.to_json() for d in self.drains],
            "nodes": [node_json(node, key) for node, _ in self.topology],
        } | self._autoscaler_json()

    def _autoscaler_json(self) -> dict[str, Any]:
        if self.node_groups is None:
            return {}
        return {
            "autoscaler": [c.to_json() for c in self.autoscaler],
            "nodeGroups": self.node_groups,
        }


def exceeding(workloads: Sequence[WorkloadReport], *, hard: bool) -> list[str]:
    """The constraints past their maxSkew, one line each: DoNotSchedule ones (``hard``, the
    violations) or ScheduleAnyway ones (the preferences not met)."""
    return [
        f"{w.workload}: topologySpreadConstraints[{c.view.index}] ({c.view.topology_key}"
        f"{', ' + ', '.join(c.revisions) if len(c.revisions) == 1 else ''}): "
        f"skew {c.skew} > maxSkew {c.view.max_skew}"
        for w in workloads
        for c in w.constraints
        if (c.violated if hard else c.preference_not_met)
    ]


@dataclass(slots=True)
class Summary(_Exceeding):
    """A report's counts without its pods: how many pods run, which wait and why, and each
    workload's counts and constraints (``summarize``)."""

    running: int
    pending: dict[str, str]
    workloads: list[WorkloadReport]


def summarize(sim: Simulation) -> Summary:
    """What ``step_report`` says of the pods' counts, Pending pods and workloads (the same
    numbers, messages and constraints), at the cost of what changed since the last report
    rather than of every pod: a sweep reads one twice per failure."""
    workloads = workload_reports(sim, pods=False)
    index = ReportIndex.of(sim)
    running = sum(b.running for b in index.buckets.values())
    waiting = sorted(k for b in index.buckets.values() for k in b.pending)
    pending = {k: sim.pending_message(sim.pods[k]) for k in waiting}
    return Summary(running, pending, workloads)


def node_json(node: Node, zone_key: str = LABEL_TOPOLOGY_ZONE) -> dict[str, Any]:
    """A node as every report gives it (its pods are in the report's ``bound``): its name, its
    zone (the ``zone_key`` label, "" without it) and its state."""
    return {
        "name": node.metadata.name,
        "zone": node.metadata.labels.get(zone_key, ""),
        "unschedulable": node.spec.unschedulable,
        "taints": [
            f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.spec.taints
        ],
    }


def pending_json(pending: Mapping[str, str]) -> list[dict[str, str]]:
    """Pending pods as every report gives them: ``[{"pod": key, "message": why}]``, in order."""
    return [{"pod": k, "message": m} for k, m in pending.items()]


@dataclass(slots=True)
class ReportDelta:
    """A report as its changes from an earlier report of the same cluster: what crosses a
    process boundary instead of the whole report when little moved (rebalance's replays in
    forked children). Made with ``diff_report`` where both reports' objects are shared (the
    child of the process holding the earlier one); ``apply_delta`` rebuilds the report."""

    report: StepReport  # bound, topology and the groups' pods left empty
    bound: dict[str, str | None]  # the changed entries (None: no longer bound)
    nodes: list[tuple[int, Node, list[str]]]  # changed nodes: position, node, its pods' keys
    new_pods: list[Pod]  # pods the earlier report's topology does not hold


def diff_report(after: StepReport, base: StepReport) -> ReportDelta:
    """``after`` as its changes from ``base`` (same node order: nodes neither added nor
    removed)."""
    if len(after.topology) != len(base.topology):
        raise ValueError("the reports' nodes differ")
    bound: dict[str, str | None] = {k: v for k, v in after.bound.items() if base.bound.get(k) != v}
    bound.update({k: None for k in base.bound.keys() - after.bound.keys()})
    known = {id(p) for _, pods in base.topology for p in pods}
    nodes = []
    new_pods = []
    for i, ((node, pods), (old_node, old_pods)) in enumerate(
        zip(after.topology, base.topology, strict=True)
    ):
        if (
            node is old_node
            and len(pods) == len(old_pods)
            and all(a is b for a, b in zip(pods, old_pods, strict=True))
        ):
            continue
        nodes.append((i, node, [p.key for p in pods]))
        new_pods += [p for p in pods if id(p) not in known]
    for w in after.workloads:
        for c in w.constraints:
            c.pods = []
    shell = dataclasses.replace(after, bound={}, topology=[])
    return ReportDelta(shell, bound, nodes, new_pods)


def apply_delta(base: StepReport, delta: ReportDelta) -> StepReport:
    """The report ``diff_report`` made ``delta`` of, from ``base``."""
    bound = dict(base.bound)
    for k, v in delta.bound.items():
        if v is None:
            bound.pop(k, None)
        else:
            bound[k] = v
    bound = dict(sorted(bound.items()))
    by_key = {p.key: p for _, pods in base.topology for p in pods}
    by_key.update({p.key: p for p in delta.new_pods})
    topology = list(base.topology)
    for i, node, keys in delta.nodes:
        topology[i] = (node, [by_key[k] for k in keys])
    return dataclasses.replace(delta.report, bound=bound, topology=topology)


def step_report(
    sim: Simulation,
    index: int,
    name: str,
    action: str,
    events: list[str],
    settled: Settled,
    drains: list[DrainResult] | None = None,
) -> StepReport:
    live = [(k, p) for k, p in sim.sorted_pods() if not is_terminal(p)]
    bound = {k: p.spec.node_name for k, p in live if p.spec.node_name}
    pending = {k: sim.pending_message(p) for k, p in live if not p.spec.node_name}
    if not settled.settled:
        events = [
            *events,
            f"did not settle: controllers or the scheduler still acted after "
            f"{settled.rounds} rounds; the report shows the state at that point",
        ]
    topology = [(info.node, list(info.pods)) for info in sim.cluster.list()]
    return StepReport(
        index,
        name,
        action,
        events,
        settled,
        bound,
        pending,
        workload_reports(sim),
        topology,
        list(drains or ()),
        sim.now,
        sim.autoscaler.take_changes() if sim.autoscaler is not None else [],
        sim.autoscaler.group_sizes(sim) if sim.autoscaler is not None else None,
    )


def workload_reports(sim: Simulation, *, pods: bool = True) -> list[WorkloadReport]:
    """Every workload (and the pods of no workload, by namespace) with its constraints'
    spread. ``pods=False`` leaves out each workload's and each group's pods (a sweep's phases
    read the counts alone): the report then costs what changed since the last one, not a walk
    over every pod."""
    index = ReportIndex.of(sim)
    # Each workload's pods, by the buckets of the pods' index by controller reference.
    buckets_of: dict[WorkloadKey, list[Bucket]] = {}
    bare: dict[str, list[Bucket]] = {}
    for bucket_key, bucket in index.buckets.items():
        if not bucket.keys:
            continue
        if bucket_key[0] == ORPHANS:
            bare.setdefault(bucket_key[1], []).append(bucket)
            continue
        _, namespace, kind, name = bucket_key
        owner = sim.owner_of_reference(namespace, kind, name)
        if owner is not None:
            buckets_of.setdefault(owner, []).append(bucket)
        else:  # its controller is not in the scenario
            bare.setdefault(namespace, []).append(bucket)
    out = []
    for workload, obj in iter_controller_refs(sim.workloads):
        replicas = getattr(obj.spec, "replicas", None)
        if obj.kind in ("Deployment", "ReplicaSet", "StatefulSet") and replicas is None:
            replicas = 1
        members = buckets_of.get(workload, [])
        name = describe_workload(workload)
        out.append(_workload(sim, name, replicas, members, pods=pods))
    for namespace, orphans in sorted(bare.items()):
        name = f"pods of no workload in {namespace}"
        out.append(_workload(sim, name, None, orphans, pods=pods))
    return out


def _workload(
    sim: Simulation,
    name: str,
    desired: int | None,
    buckets: list[Bucket],
    *,
    pods: bool,
) -> WorkloadReport:
    running = sum(b.running for b in buckets)
    pending = sum(len(b.pending) for b in buckets)
    # The groups by constraints, in the order of their first pods by key.
    merged: dict[bytes, tuple[list[set[str]], set[str]]] = {}
    for bucket in buckets:
        for encoded, group in bucket.groups.items():
            keys, revisions = merged.setdefault(encoded, ([], set()))
            keys.append(group.keys)
            revisions.update(group.revisions)
    firsts = sorted((min(min(k) for k in keys), encoded) for encoded, (keys, _) in merged.items())
    constraints: list[ConstraintSpread] = []
    for first, encoded in firsts:
        pod = sim.pods[first]
        if pod.spec.topology_spread_constraints:
            spreads = _spread(sim, pod, sorted(merged[encoded][1]))
            if spreads and pods:
                group_keys = sorted(set().union(*merged[encoded][0]))
                group_pods = [sim.pods[k] for k in group_keys]
                for c in spreads:
                    c.pods = group_pods
            constraints += spreads
    constraints.sort(key=lambda c: (c.view.index, c.revisions))
    live: list[str] = []
    if pods:
        members = sorted(set().union(*(b.keys for b in buckets)))
        live = [k for k in members if not is_terminal(sim.pods[k])]
    return WorkloadReport(name, desired, running, pending, constraints, live)


def _indexed_state(plugin: Filtering, pod: Pod, index: ClusterIndex) -> PreFilterState:
    """calPreFilterState's state from the cluster index: the pod's hard constraints' matching
    pods per eligible domain, read off the index's kept counters over the rows the index keeps
    eligible per pod shape (what the plugin's ``domain_reader`` reads of the pod). The
    reference, the plugin's own loop over every pod of every node, runs when the simulation's
    fast paths are off; the fast-versus-reference replays compare the two."""
    constraints, read = plugin.domain_reader(pod)
    if not constraints:
        return PreFilterState()
    spec = pod.spec
    shape = msgspec.json.encode(
        (
            pod.metadata.namespace,
            spec.node_selector,
            spec.affinity,
            spec.tolerations,
            spec.topology_spread_constraints,
        )
    )
    tallies = index.eligible_domain_counts(
        shape, pod.metadata.namespace, [(c.selector, c.topology_key) for c in constraints], read
    )
    return state_from_counts(constraints, tallies)


def _spread(sim: Simulation, pod: Pod, revisions: list[str]) -> list[ConstraintSpread]:
    """Count a group's constraints as PreFilter counts them for one of its pods (``pod``;
    ``revisions``: the group's)."""
    pod = msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=""))
    fwk = sim.scheduler.framework_for(pod)
    if fwk is None:
        return []
    plugin = next((p for p in fwk.pre_filter_plugins if p.name == POD_TOPOLOGY_SPREAD), None)
    if not isinstance(plugin, Filtering):
        return []
    nodes = sim.cluster.list()
    out = []
    spec_constraints = pod.spec.topology_spread_constraints
    hard = [i for i, c in enumerate(spec_constraints) if c.when_unsatisfiable == DO_NOT_SCHEDULE]
    index = sim.cluster.index() if sim.fast else None

    def pre_filter_state(probe: Pod) -> PreFilterState:
        if index is None:
            return plugin.cal_pre_filter_state(probe, nodes)
        return _indexed_state(plugin, probe, index)

    state = pre_filter_state(pod)
    for j, _ in enumerate(state.constraints):
        out.append(_view(state, j, hard[j], pod, DO_NOT_SCHEDULE, revisions))
    for i, c in enumerate(spec_constraints):
        if c.when_unsatisfiable == DO_NOT_SCHEDULE:
            continue
        alone = msgspec.structs.replace(c, when_unsatisfiable=DO_NOT_SCHEDULE)
        probe = msgspec.structs.replace(
            pod, spec=msgspec.structs.replace(pod.spec, topology_spread_constraints=[alone])
        )
        soft = pre_filter_state(probe)
        out.append(_view(soft, 0, i, pod, c.when_unsatisfiable, revisions))
    return out


def _view(
    state: PreFilterState, j: int, index: int, pod: Pod, when: str, revisions: list[str]
) -> ConstraintSpread:
    view = hard_constraint_view(state, j, index, pod, ())
    view.when_unsatisfiable = when
    if not view.counts:
        view.global_min = None
    skew = max(view.counts.values()) - view.global_min if view.global_min is not None else None
    return ConstraintSpread(view, revisions, skew, selector=state.constraints[j].selector)
