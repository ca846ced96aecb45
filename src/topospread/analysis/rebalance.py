"""``rebalance``: the fewest evictions that bring violated spread constraints back within
maxSkew, each plan proven by replaying it — evictions through the eviction subresource
(budgets honoured), the owning controllers recreating the pods, the exact scheduler placing
them — on a copy of the settled cluster.

Spreading is only enforced when a pod is scheduled: scale-downs, node losses and rollouts
leave workloads skewed. The targets are the constraints the report finds violated now,
counted exactly as PodTopologySpread counts (eligible domains under the node inclusion
policies, minDomains, matchLabelKeys): DoNotSchedule ones, and ScheduleAnyway ones with
``include_soft``.

Victims are the pods of a target's group in domains above the group's minimum. The default
evictor's filters leave some alone, each reported: DaemonSet pods, mirror (static) pods, pods
with local storage (unless allowed), pods without a controller, system-critical pods
(priority 2000000000 and above), pods being deleted, and pods the label selector or the
namespace filters leave out. So are pods whose bound volumes pin them to their domain (every
node their PersistentVolumes' node affinity admits has the same value of the targets'
topology keys): their replacement, on the same claim, could only land there again. Pods of
one group on one node are interchangeable, so a plan is a multiset of (node, group) choices;
plans are tried by size, the ones taking from the most crowded domains first, and a plan is
skipped unreplayed when even the best landing of its replacements could not bring a target
within maxSkew. A plan is accepted when, replayed eviction by eviction (each followed by the
controllers and the scheduler settling):

- every targeted constraint ends within maxSkew;
- every replacement binds, and in a different domain from the pod it replaces (for each
  targeted topology key of the pod's group);
- no pod that was bound moved or went Pending, and no constraint that held is violated;
- no budget refused an eviction.

The plan found first is the smallest unless the search ran out of its budget of replays
before every smaller plan was tried; the report says which.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.analysis.descheduler import (
    DeschedulerOptions,
    is_static_pod,
)
from topospread.analysis.descheduler_replay import DeschedulerReport
from topospread.analysis.rebalance_replay import Target, Trial, replay_on_copy, why_landed
from topospread.analysis.reports import (
    StepReport,
    WorkloadReport,
    apply_delta,
    step_report,
)
from topospread.analysis.volume_pins import pin_text, pinned_value
from topospread.api.types import DO_NOT_SCHEDULE, Pod
from topospread.errors import ManifestError
from topospread.framework.cycle_state import CycleState
from topospread.framework.storage import StorageLister
from topospread.framework.types import NodeInfo
from topospread.labels.selector import Selector, SelectorError, parse
from topospread.simulator.checkpoint import Copies
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.decision import is_terminal
from topospread.simulator.drain import MIRROR_POD_ANNOTATION
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.timeline_steps.rebalancing import rebalance_args

# The default evictor's threshold (descheduler's utils.SystemCriticalPriority).
SYSTEM_CRITICAL_PRIORITY: Final = 2_000_000_000


@dataclass(frozen=True, slots=True)
class RebalanceOptions:
    """What may be evicted and how far the search goes."""

    include_soft: bool = False
    namespaces: tuple[str, ...] = ()
    exclude_namespaces: tuple[str, ...] = ()
    selector: Selector | None = None
    evict_local_storage: bool = False
    max_evictions: int = 6
    max_replays: int = 200
    # Plans looked at (replayed or ruled out by their counts) before the search stops.
    max_plans: int = 200_000


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A pod the evictor's filters leave alone, and why."""

    pod: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"pod": self.pod, "reason": self.reason}


@dataclass(slots=True)
class RebalanceReport:
    source: str
    seed: int
    before: StepReport
    targets: list[Target]
    exclusions: list[Exclusion]
    plan: Trial | None = None
    minimal: bool = False
    # Every plan of this many evictions or fewer was ruled out (0: none was).
    ruled_out_up_to: int = 0
    replays: int = 0
    plans_looked_at: int = 0
    why_not: dict[str, list[str]] = field(default_factory=dict)  # target name -> reasons
    # The descheduler's rounds on the same cluster, when asked for (side by side).
    descheduler: DeschedulerReport | None = None
    # Ctrl-C stopped the search (or the descheduler's rounds): the figures are those of the
    # replays completed before it, and no plan found among them.
    interrupted: bool = False

    @property
    def balanced(self) -> bool:
        """Nothing to do: no targeted constraint is past its maxSkew."""
        return not self.targets

    @property
    def no_plan(self) -> str:
        """What the search found when it found no plan."""
        if self.interrupted:
            ruled_out = (
                f"; every plan of up to {self.ruled_out_up_to} eviction(s) was ruled out"
                if self.ruled_out_up_to
                else ""
            )
            return f"interrupted before a plan was found{ruled_out}"
        if self.ruled_out_up_to:
            return f"no plan of up to {self.ruled_out_up_to} eviction(s) brings it within maxSkew"
        return "no plan brings it within maxSkew"

    @property
    def after(self) -> StepReport | None:
        return self.plan.after if self.plan is not None else None

    def to_json(self, zone_key: str | None = None) -> dict[str, Any]:
        """``zone_key``: the label the text's grids group nodes by (``--zone-key``)."""
        plan = self.plan
        doc: dict[str, Any] = {
            "source": self.source,
            "seed": self.seed,
            "balanced": self.balanced,
            "targets": [t.to_json() for t in self.targets],
            "excluded": [e.to_json() for e in self.exclusions],
            "plan": None
            if plan is None
            else {
                "evictions": [e.to_json() for e in plan.evictions],
                "minimal": self.minimal,
            },
            "ruledOutUpTo": self.ruled_out_up_to,
            "replays": self.replays,
            "plansLookedAt": self.plans_looked_at,
            "whyNot": self.why_not,
            "before": self.before.to_json(zone_key),
            "after": self.after.to_json(zone_key) if self.after is not None else None,
            "descheduler": self.descheduler.to_json() if self.descheduler is not None else None,
        }
        if self.interrupted:
            doc["interrupted"] = True
        return doc


# ------------------------------------------------------------------ targets and victims


def find_targets(workloads: Iterable[WorkloadReport], options: RebalanceOptions) -> list[Target]:
    """The constraints past maxSkew (ScheduleAnyway ones with ``include_soft``) in the
    namespaces the options keep."""
    out = []
    for w in workloads:
        for c in w.constraints:
            if not (c.violated or (options.include_soft and c.preference_not_met)):
                continue
            target = Target(w.workload, c)
            if _namespace_kept(target.namespace, options):
                out.append(target)
    return out


def _namespace_kept(namespace: str, options: RebalanceOptions) -> bool:
    if options.namespaces and namespace not in options.namespaces:
        return False
    return namespace not in options.exclude_namespaces


def exclusion_reason(pod: Pod, options: RebalanceOptions) -> str | None:
    """Why the evictor leaves the pod alone (None: it may be evicted).

    Upstream: the descheduler's DefaultEvictor filters (pkg/framework/plugins/defaultevictor)
    """
    meta = pod.metadata
    ref = get_controller_of(meta)
    if meta.deletion_timestamp is not None or is_terminal(pod):
        return "being deleted or finished"
    if ref is not None and ref.kind == "DaemonSet":
        return "a DaemonSet pod"
    if MIRROR_POD_ANNOTATION in meta.annotations or is_static_pod(pod):
        return "a mirror or static pod"
    if ref is None:
        return "no controller would recreate it"
    if (pod.spec.priority or 0) >= SYSTEM_CRITICAL_PRIORITY:
        return f"system-critical priority ({pod.spec.priority})"
    if not options.evict_local_storage and any(
        v.empty_dir is not None or v.host_path is not None for v in pod.spec.volumes
    ):
        return "local storage (emptyDir or hostPath; --evict-local-storage allows it)"
    if options.selector is not None and not options.selector.matches(meta.labels):
        return "not selected by --selector"
    return None


@dataclass(slots=True)
class _Class:
    """Pods of one group on one node: evicting either is the same plan."""

    node: str
    group: int  # index into the groups
    pods: list[Pod]
    score: tuple[int, ...] = ()


# ------------------------------------------------------------------ the plan


def plan_rebalance(
    sim: Simulation, options: RebalanceOptions | None = None, *, source: str = ""
) -> RebalanceReport:
    """Find and prove the smallest plan on copies of ``sim`` (left as it is).

    Ctrl-C (``KeyboardInterrupt``) during the search ends it with the replays completed so far
    (``interrupted``; the replay it cut is not counted)."""
    options = options or RebalanceOptions()
    before = step_report(sim, 0, "before", "start", [], Settled(0, True))
    targets = find_targets(before.workloads, options)
    report = RebalanceReport(source or sim.scenario.source, sim.seed, before, targets, [])
    if not targets:
        return report
    nodes = {info.name: info for info in sim.cluster.list()}
    classes = _victims(targets, nodes, options, report, sim.cluster.storage())
    if not classes:
        for t in targets:
            report.why_not[t.name] = [_no_victims_text(t)]
        return report
    impossible = False
    lower = 1
    for t in targets:
        moves = ideal_moves(t)
        if moves is None:
            report.why_not[t.name] = [_min_domains_text(t)]
            impossible = True
        else:
            lower = max(lower, moves)
    if impossible:
        return report
    failures: list[tuple[Trial, list[Pod]]] = []
    report.ruled_out_up_to = lower - 1
    replays = report.replays
    try:
        if _search(report, options, classes, targets, nodes, before, Copies(sim), lower, failures):
            return report
    except KeyboardInterrupt:
        report.interrupted = True
        if report.plan is None:  # the replay cut mid-way is not counted
            report.replays = replays + len(failures)
        return report
    for t in targets:
        report.why_not[t.name] = _why_not(sim, t, failures)
    return report


def _search(
    report: RebalanceReport,
    options: RebalanceOptions,
    classes: list[_Class],
    targets: list[Target],
    nodes: dict[str, NodeInfo],
    before: StepReport,
    copies: Copies[Simulation],
    lower: int,
    failures: list[tuple[Trial, list[Pod]]],
) -> bool:
    """Replay plans, fewest evictions first, until one balances (set on ``report``: True) or
    the budgets or the sizes run out; each failed plan is added to ``failures``."""
    slots = [
        i for i, c in enumerate(classes) for _ in range(min(len(c.pods), options.max_evictions))
    ]
    members = [{p.key for p in t.spread.pods} for t in targets]
    for k in range(lower, options.max_evictions + 1):
        seen: set[tuple[int, ...]] = set()
        complete = True
        for combo in itertools.combinations(slots, k):
            if combo in seen:
                continue
            seen.add(combo)
            if report.plans_looked_at >= options.max_plans or report.replays >= options.max_replays:
                complete = False
                break
            report.plans_looked_at += 1
            victims = _victims_of(combo, classes)
            if not _may_balance(targets, members, victims, nodes):
                continue
            report.replays += 1
            trial = copies.run(
                functools.partial(replay_on_copy, victims=victims, targets=targets, before=before)
            )
            if trial.delta is not None:
                trial.after, trial.delta = apply_delta(before, trial.delta), None
            if trial.ok:
                trial.evictions = why_landed(trial.evictions, targets, members)
                report.plan = trial
                report.minimal = report.ruled_out_up_to == k - 1
                return True
            failures.append((trial, victims))
        if not complete:
            break
        report.ruled_out_up_to = k
    return False


def _victims(
    targets: Sequence[Target],
    nodes: dict[str, NodeInfo],
    options: RebalanceOptions,
    report: RebalanceReport,
    storage: StorageLister,
) -> list[_Class]:
    """The classes of pods that may be evicted (per group of pods that targets share: a
    group's constraints), best first: in the most crowded domains of every target of their
    group, then on the nodes holding most of them."""
    by_pods: dict[int, list[Target]] = {}
    for t in targets:
        by_pods.setdefault(id(t.spread.pods), []).append(t)
    groups = list(by_pods.values())
    excluded: dict[str, str] = {}
    classes: list[_Class] = []
    for g, members in enumerate(groups):
        per_node: dict[str, list[Pod]] = {}
        for pod in members[0].spread.pods:
            node = pod.spec.node_name
            if not node or node not in nodes or is_terminal(pod):
                continue
            above = False
            for t in members:
                value = nodes[node].node.metadata.labels.get(t.spread.view.topology_key)
                gmin = t.spread.view.global_min or 0
                if value is not None and t.spread.view.counts.get(value, 0) > gmin:
                    above = True
            if not above:
                continue
            reason = exclusion_reason(pod, options) or _pinned_reason(pod, members, nodes, storage)
            if reason is not None:
                excluded[pod.key] = reason
                continue
            per_node.setdefault(node, []).append(pod)
        for node, pods in per_node.items():
            score = []
            for t in members:
                value = nodes[node].node.metadata.labels.get(t.spread.view.topology_key, "")
                score.append(t.spread.view.counts.get(value, 0))
            pods.sort(key=lambda p: p.key)
            classes.append(_Class(node, g, pods, (sum(score), len(pods))))
    classes.sort(key=lambda c: (-c.score[0], -c.score[1], c.node, c.group))
    report.exclusions = [Exclusion(pod, reason) for pod, reason in sorted(excluded.items())]
    return classes


def _pinned_reason(
    pod: Pod, members: Sequence[Target], nodes: dict[str, NodeInfo], storage: StorageLister
) -> str | None:
    """Why evicting the pod cannot help its targets: its bound volumes pin it to the domain
    it is in for every target's topology key (None: it may move)."""
    if not pod.spec.volumes:
        return None
    all_nodes = [info.node for info in nodes.values()]
    pins = []
    for t in members:
        key = t.spread.view.topology_key
        value = pinned_value(pod, storage, all_nodes, key)
        if value is None:
            return None
        pins.append((key, value))
    return pin_text(pod, storage, *pins[0]) if pins else None


def _victims_of(combo: tuple[int, ...], classes: Sequence[_Class]) -> list[Pod]:
    taken: dict[int, int] = {}
    out = []
    for i in combo:
        n = taken.get(i, 0)
        out.append(classes[i].pods[n])
        taken[i] = n + 1
    return out


def ideal_moves(t: Target) -> int | None:
    """The fewest pods moved that could bring the target within maxSkew if each could land
    in any eligible domain (a lower bound on any plan); None when no moves can: fewer
    eligible domains than minDomains hold the minimum at 0, and the pods do not fit
    maxSkew to a domain."""
    v = t.spread.view
    counts = sorted(v.counts.values())
    if not counts:
        return None
    if len(counts) < v.min_domains:
        # The global minimum stays 0: every domain must hold maxSkew pods or fewer.
        if sum(counts) > v.max_skew * len(counts):
            return None
        return sum(max(0, c - v.max_skew) for c in counts)
    moves = 0
    while counts[-1] - counts[0] > v.max_skew:
        counts[-1] -= 1
        counts[0] += 1
        counts.sort()
        moves += 1
    return moves


def _may_balance(
    targets: Sequence[Target],
    members: Sequence[set[str]],
    victims: Sequence[Pod],
    nodes: dict[str, NodeInfo],
) -> bool:
    """Whether every target could end within maxSkew (a necessary condition: a plan that
    fails it is ruled out unreplayed). A target counts only the victims its selector matches
    (the plan check forbids moving any other pod): with none it stays as it is. When they are
    all of its own group and it is DoNotSchedule, their replacements land on nodes eligible
    for it (its own pods' scheduling enforces its hard keys and node inclusion policies), at
    best in its emptiest domains."""
    for t, own in zip(targets, members, strict=True):
        c = t.spread
        v = c.view
        selector = c.selector
        if selector is None:
            continue
        namespace = t.namespace
        matched = [
            p
            for p in victims
            if p.metadata.namespace == namespace and selector.matches(p.metadata.labels)
        ]
        if not matched:
            return False  # it stays past its maxSkew
        if v.when_unsatisfiable != DO_NOT_SCHEDULE or any(p.key not in own for p in matched):
            continue
        counts = dict(v.counts)
        for pod in matched:
            value = nodes[pod.spec.node_name].node.metadata.labels.get(v.topology_key)
            if value in counts:
                counts[value] -= 1
        values = sorted(counts.values())
        if not values:
            continue
        for _ in matched:
            values[0] += 1
            values.sort()
        gmin = 0 if len(values) < v.min_domains else values[0]
        if values[-1] - gmin > v.max_skew:
            return False
    return True


def descheduler_options(options: RebalanceOptions) -> DeschedulerOptions:
    """The descheduler's plugin and evictor set as the rebalance options say (the rest at
    their defaults)."""
    return DeschedulerOptions(
        include_soft_constraints=options.include_soft,
        evict_local_storage_pods=options.evict_local_storage,
        namespaces=options.namespaces,
        exclude_namespaces=options.exclude_namespaces,
        label_selector=options.selector,
    )


# ------------------------------------------------------------------ the timeline step


def step_options(args: Mapping[str, Any] | None, where: str) -> RebalanceOptions:
    """A ``rebalance`` step's options (shape checked by the timeline's parser)."""
    a = rebalance_args(args, where)
    selector = None
    if "selector" in a:
        try:
            selector = parse(a["selector"])
        except SelectorError as err:
            raise ManifestError(f"{where}: selector: {err}") from err
    defaults = RebalanceOptions()
    return RebalanceOptions(
        include_soft=a.get("includeSoft", False),
        namespaces=tuple(a.get("namespaces", ())),
        exclude_namespaces=tuple(a.get("excludeNamespaces", ())),
        selector=selector,
        evict_local_storage=a.get("evictLocalStorage", False),
        max_evictions=a.get("maxEvictions", defaults.max_evictions),
        max_replays=a.get("maxReplays", defaults.max_replays),
    )


def carry_out(sim: Simulation, report: RebalanceReport, where: str) -> list[str]:
    """Make the plan's evictions on ``sim`` itself, in order, each followed by the cluster
    settling (as its replay did, so the replacements land where the plan says); the step's
    report lines."""
    if report.balanced:
        return ["rebalance: every constraint is within its maxSkew; nothing to evict"]
    if report.plan is None:
        lines = [f"rebalance: {report.no_plan}"]
        for name, reasons in report.why_not.items():
            lines += [f"  {name}: {r}" for r in reasons]
        return lines
    lines = []
    for e in report.plan.evictions:
        pod = sim.pods[e.pod]
        refusal = sim.evictions().evict(pod)
        if refusal is not None:  # the replay granted it: the copy and sim differ
            raise AssertionError(f"{where}: the plan's eviction of {e.pod} was refused")
        sim.delete_pod(pod)
        sim.settle_within_step(where)
        lines.append(
            f"rebalance: evicted {e.pod} from {e.node} ({', '.join(e.domains.values())}); "
            f"its replacement {e.replacement} landed on {e.replacement_node} "
            f"({', '.join(e.replacement_domains.values())})"
        )
    return lines


# ------------------------------------------------------------------ why no plan


def _no_victims_text(t: Target) -> str:
    return (
        f"no pod in the crowded domains may be evicted (see the excluded pods); "
        f"counts {_counts_text(t)}"
    )


def _min_domains_text(t: Target) -> str:
    v = t.spread.view
    return (
        f"only {len(v.counts)} eligible domain(s) for minDomains {v.min_domains}: the global "
        f"minimum stays 0, so no domain may hold more than maxSkew {v.max_skew} pods, and "
        f"{sum(v.counts.values())} pods do not fit; add eligible domains (nodes with "
        f"{v.topology_key} the pods may run on) or lower minDomains"
    )


def _counts_text(t: Target) -> str:
    return ", ".join(f"{k} {n}" for k, n in t.spread.view.counts.items())


def _why_not(sim: Simulation, t: Target, failures: Sequence[tuple[Trial, list[Pod]]]) -> list[str]:
    """In words an operator acts on: where the target's pods could not go and why (the
    scheduler's filters on the nodes of its emptiest domains), and what the replays found."""
    out = []
    v = t.spread.view
    if v.counts:
        low = min(v.counts.values())
        emptiest = sorted(d for d, n in v.counts.items() if n == low)
        out += _filter_reasons(sim, t, emptiest)
    outcomes: dict[str, None] = {}
    for trial, _ in failures:
        if trial.failure is not None:
            outcomes.setdefault(trial.failure)
    if outcomes:
        shown = list(outcomes)[:3]
        more = len(outcomes) - len(shown)
        out.append(
            "the replayed plans failed: "
            + "; ".join(shown)
            + (f"; and {more} more" if more else "")
        )
    elif not failures:
        out.append("no plan within the search's limits could bring it within maxSkew")
    return out


def _filter_reasons(sim: Simulation, t: Target, domains: Sequence[str]) -> list[str]:
    pods = [p for p in t.spread.pods if not is_terminal(p)]
    if not pods:
        return []
    probe = msgspec.structs.replace(
        pods[0], spec=msgspec.structs.replace(pods[0].spec, node_name="")
    )
    fwk = sim.scheduler.framework_for(probe)
    if fwk is None:
        return []
    infos = sim.cluster.list()
    state = CycleState()
    fwk.run_pre_filter_plugins(state, probe, infos)
    out = []
    key = t.spread.view.topology_key
    for domain in domains:
        in_domain = [i for i in infos if i.node.metadata.labels.get(key) == domain]
        reasons: dict[str, int] = {}
        fits = 0
        for info in in_domain:
            status = fwk.run_filter_plugins(state, probe, info)
            if status.is_success:
                fits += 1
            else:
                reasons[status.message] = reasons.get(status.message, 0) + 1
        if fits:
            out.append(f"{key}={domain}: {fits} of {len(in_domain)} node(s) would take a pod")
        elif in_domain:
            said = ", ".join(f"{n} {m}" for m, n in sorted(reasons.items()))
            taints = sorted(
                {
                    f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}"
                    for i in in_domain
                    for t in i.node.spec.taints
                }
            )
            there = f" (taints there: {', '.join(taints)})" if taints else ""
            out.append(f"{key}={domain} takes none of its pods: {said}{there}")
    return out


__all__ = [
    "SYSTEM_CRITICAL_PRIORITY",
    "Exclusion",
    "RebalanceOptions",
    "RebalanceReport",
    "carry_out",
    "descheduler_options",
    "exclusion_reason",
    "find_targets",
    "ideal_moves",
    "plan_rebalance",
    "step_options",
]
