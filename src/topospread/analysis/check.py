"""``check``: chart output (what ``helm template`` or ``kustomize build`` prints) against a
cluster shape, as a CI gate: every pod of every workload schedules, every DoNotSchedule
constraint holds — now and, with ``survive``, after every zone or node loss — with warnings
for ScheduleAnyway preferences not met and for the mistakes a linter can name.

The workloads are placed by the one Simulation (controllers and the exact scheduler) on the
given nodes, a live cluster, or a generated shape; a zone or node loss is replayed by the
sweep (analysis/sweep.py). Every built-in kind that makes pods is placed (bare Pods,
ReplicationControllers, ReplicaSets, Deployments, StatefulSets, DaemonSets, Jobs, and a
CronJob's next Job). Objects the scheduler does not need (ConfigMaps, Services without
selectors, CRDs, custom resources) are read and left out, each kind counted once in one note;
an object that would make pods but is not modelled (a Deployment in an apiVersion Kubernetes no
longer serves, a custom resource with a pod template) is a finding, never left out silently.

Helm hooks (analysis/check_hooks.py) are placed as ``helm install`` runs them: the pre-install
hooks one at a time on the cluster before the release's objects, each Job or Pod hook's pods
bound and then Succeeded; the release's objects; then the post-install hooks beside them. A
hook an install does not run (a chart test, an upgrade's) is left out and said so.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.analysis.check_autoscaler import reasons_text, verdict_line, with_hooks
from topospread.analysis.check_hooks import (
    HELM_TIMEOUT,
    POST_INSTALL,
    PRE_INSTALL,
    Hook,
    HookRun,
    Release,
    long_running,
    run_hooks,
    split_release,
    unknown_hook_findings,
)
from topospread.analysis.check_storage import storage_findings
from topospread.analysis.reports import StepReport, node_json, pending_json, step_report
from topospread.analysis.simulate import settle_timeline
from topospread.analysis.sweep import SweepOptions, sweep
from topospread.analysis.sweep_autoscaler import DEFAULT_RECOVERY_LIMIT, Recovery, recover
from topospread.api.loader import UnknownObject
from topospread.api.types import (
    DO_NOT_SCHEDULE,
    LABEL_ARCH_STABLE,
    LABEL_HOSTNAME,
    LABEL_INSTANCE_TYPE_STABLE,
    LABEL_OS_STABLE,
    LABEL_TOPOLOGY_REGION,
    CronJob,
    Deployment,
    Node,
    PodTemplateSpec,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    TopologySpreadConstraint,
)
from topospread.api.zones import zone_key_for
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.limits import DEFAULT_LIMITS, Limits
from topospread.simulator.api_server import as_created
from topospread.simulator.autoscaler_spec import AutoscalerSpec
from topospread.simulator.controllers.kinds import LeftOut, makes_pods, unmodelled_reason
from topospread.simulator.node_groups import NodeGroup as ScenarioGroup
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.sizes import check_timeline
from topospread.simulator.stores import describe_workload
from topospread.simulator.timeline_format import TimelineScenario, parse_timeline, with_cluster

POD_TEMPLATE_HASH: Final = "pod-template-hash"
# ``check --autoscaler``: the section's file, and how to parse it given the node groups.
AutoscalerSection = tuple[str, Callable[[Mapping[str, ScenarioGroup]], AutoscalerSpec]]
SURVIVE: Final = ("zone", "node")
# A generated zone is the region's name and a letter, as clouds name them (region-1a).
_ZONE_LETTERS: Final = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class Shape:
    """A generated cluster: ``zones`` zones (at most 26) of ``nodes_per_zone`` nodes, each
    with this much CPU, memory, ephemeral storage and room for ``pods`` pods (capacity and
    allocatable alike), labelled as the kubelet and a cloud provider label a real node:
    hostname, zone ``<region><letter>``, region, os, arch and instance type (by default
    ``<cpu>cpu-<memory>``)."""

    zones: int = 3
    nodes_per_zone: int = 2
    cpu: str = "8"
    memory: str = "32Gi"
    pods: int = 110
    region: str = "region-1"
    ephemeral_storage: str = "100Gi"
    os: str = "linux"
    arch: str = "amd64"
    instance_type: str = ""

    def node_groups(self) -> list[dict[str, Any]]:
        resources = {
            "cpu": self.cpu,
            "memory": self.memory,
            "ephemeral-storage": self.ephemeral_storage,
            "pods": str(self.pods),
        }
        return [
            {
                "name": "node",
                "zones": [f"{self.region}{_ZONE_LETTERS[i]}" for i in range(self.zones)],
                "perZone": self.nodes_per_zone,
                "template": {
                    "metadata": {
                        "labels": {
                            LABEL_TOPOLOGY_REGION: self.region,
                            LABEL_OS_STABLE: self.os,
                            LABEL_ARCH_STABLE: self.arch,
                            LABEL_INSTANCE_TYPE_STABLE: self.instance_type
                            or f"{self.cpu}cpu-{self.memory}",
                        }
                    },
                    "status": {"capacity": resources, "allocatable": dict(resources)},
                },
            }
        ]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the check found: ``level`` error (the check fails) or warning; ``rule``
    names the kind of finding; ``obj`` the object it is about and ``where`` the file and
    document it came from."""

    level: str
    rule: str
    obj: str
    where: str
    message: str

    @property
    def file(self) -> str:
        """The file the object came from ("" for standard input or a live cluster)."""
        head = self.where.split(": ", 1)[0]
        return "" if head in ("", "-", "<stdin>") else head

    def to_json(self) -> dict[str, str]:
        return {
            "level": self.level,
            "rule": self.rule,
            "object": self.obj,
            "where": self.where,
            "message": self.message,
        }


@dataclass(slots=True)
class CheckReport:
    source: str
    nodes: int
    workloads: int
    findings: list[Finding] = field(default_factory=list)
    ignored: dict[str, int] = field(default_factory=dict)  # kind -> objects
    # Pod-making objects not modelled: "Kind (apiVersion)" -> objects (each also a finding).
    unmodelled: dict[str, int] = field(default_factory=dict)
    survived: list[str] = field(default_factory=list)  # the failures replayed
    placed: StepReport | None = None
    # With --autoscaler: what it made of the placement (nodes it added, whether all fit).
    autoscaler: Recovery | None = None
    # Helm hooks helm install does not run (tests, other events' or unknown ones): left out.
    hooks_not_run: list[Hook] = field(default_factory=list)
    # The hooks helm install runs, in order, each with its event (pre- or post-install).
    hooks_run: list[tuple[str, Hook]] = field(default_factory=list)
    # Ctrl-C stopped the --survive losses: ``survived`` are those checked, of ``losses``.
    interrupted: bool = False
    losses: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warning"]

    @property
    def passed(self) -> bool:
        """No error, and every check made (an interrupted check passes nothing)."""
        return not self.errors and not self.interrupted

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "passed": self.passed,
            "nodeCount": self.nodes,
            "workloads": self.workloads,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "findings": [f.to_json() for f in self.findings],
            "ignoredKinds": self.ignored,
            "unmodelledKinds": self.unmodelled,
            "hooksRun": [h.to_json() | {"hook": e, "weight": h.weight} for e, h in self.hooks_run],
            "hooksNotRun": [h.to_json() for h in self.hooks_not_run],
            "survived": self.survived,
            # The cluster as the generated or given nodes leave it, in every report's shapes.
            "bound": self.placed.bound if self.placed is not None else {},
            "pending": pending_json(self.placed.pending) if self.placed is not None else [],
            "nodes": _nodes_json(self.placed),
        } | (
            ({"autoscaler": self.autoscaler.to_json()} if self.autoscaler is not None else {})
            | ({"interrupted": True, "losses": self.losses} if self.interrupted else {})
        )


Template = tuple[str, str, PodTemplateSpec, int | None]  # object, where, template, replicas


def _nodes_json(placed: StepReport | None) -> list[dict[str, Any]]:
    """The placement's nodes, each zone by the label its text grid groups by."""
    if placed is None:
        return []
    key = zone_key_for([node for node, _ in placed.topology])
    return [node_json(node, key) for node, _ in placed.topology]


def _templates(objects: Iterable[tuple[str, Any]]) -> list[Template]:
    """Each workload's pod template (a CronJob's: its Jobs'), and its replicas when it has
    them."""
    out: list[Template] = []
    for where, obj in objects:
        spec = getattr(obj, "spec", None)
        template = getattr(spec, "template", None)
        if isinstance(obj, CronJob):
            template = obj.spec.job_template.spec.template
        if isinstance(template, PodTemplateSpec):
            name = f"{obj.kind} {obj.metadata.namespace or 'default'}/{obj.metadata.name}"
            replicas = getattr(spec, "replicas", None)
            scaled = Deployment | ReplicaSet | ReplicationController | StatefulSet
            if isinstance(obj, scaled) and replicas is None:
                replicas = 1
            out.append((name, where, template, replicas))
    return out


def unmodelled(objects: Sequence[tuple[str, Any]]) -> list[Finding]:
    """Objects that would make pods the simulator cannot make: an error for a pod-making
    kind in an apiVersion the API server does not serve, a warning for a custom resource
    with a pod template."""
    out = []
    for where, obj in objects:
        if isinstance(obj, UnknownObject) and makes_pods(obj):
            # Built-in groups have no dot (apps, extensions, the core group ""); CRDs' do.
            builtin = "." not in obj.api_version.rpartition("/")[0]
            out.append(
                Finding(
                    "error" if builtin else "warning",
                    "not-modelled",
                    f"{obj.kind} {obj.namespace or 'default'}/{obj.name}",
                    where,
                    unmodelled_reason(obj),
                )
            )
    return out


def rejected(objects: Sequence[tuple[str, Any]]) -> list[Finding]:
    """Spread constraints the API server rejects in a workload's template (before anything can
    be placed): minDomains without DoNotSchedule."""
    out = []
    for name, where, template, _ in _templates(objects):
        for i, c in enumerate(template.spec.topology_spread_constraints):
            if c.min_domains is not None and c.when_unsatisfiable != DO_NOT_SCHEDULE:
                out.append(
                    Finding(
                        "error",
                        "min-domains-schedule-anyway",
                        name,
                        where,
                        f"topologySpreadConstraints[{i}].minDomains: Invalid value: "
                        f"{c.min_domains}: can only use minDomains if "
                        f"whenUnsatisfiable={DO_NOT_SCHEDULE} (the API server rejects it)",
                    )
                )
    return out


def lint(
    objects: Sequence[tuple[str, Any]],
    nodes: Sequence[Node],
    pending: Mapping[str, int] | None = None,
) -> list[Finding]:
    """The mistakes a linter can name in the workloads' spread constraints, before anything
    is placed: a selector that matches none of its own pods (or no labelSelector at all), a
    topology key no node carries, a maxSkew so large it never restricts, minDomains the
    nodes' domains cannot reach, and a Deployment counting its revisions together (no
    matchLabelKeys: [pod-template-hash]). ``pending``: the Pending pods a run left per
    workload (named as findings name it), which the minDomains warning quotes."""
    out: list[Finding] = []
    deployments = {
        f"Deployment {o.metadata.namespace or 'default'}/{o.metadata.name}"
        for _, o in objects
        if isinstance(o, Deployment)
    }
    for name, where, template, replicas in _templates(objects):
        for i, c in enumerate(template.spec.topology_spread_constraints):
            found = _constraint_mistakes(
                c,
                template.metadata.labels,
                nodes,
                replicas,
                deployment=name in deployments,
                pending=None if pending is None else pending.get(name, 0),
            )
            out += [
                Finding("warning", rule, name, where, f"topologySpreadConstraints[{i}]: {text}")
                for rule, text in found
            ]
    return out


def _constraint_mistakes(
    c: TopologySpreadConstraint,
    labels: Mapping[str, str],
    nodes: Sequence[Node],
    replicas: int | None,
    *,
    deployment: bool,
    pending: int | None = None,
) -> list[tuple[str, str]]:
    """One constraint's mistakes: (rule, what to say). ``pending``: the workload's pods a
    run left Pending, when there was a run."""
    try:
        selector = label_selector_as_selector(c.label_selector)
    except SelectorError:
        return []  # the API server's validation names it when the pods are admitted
    out = []
    counts_itself = c.label_selector is not None and selector.matches(labels)
    own = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    if c.label_selector is None:
        # The scheduler reads an absent selector as labels.Nothing(): no pod is counted.
        out.append(
            (
                "selector-matches-nothing",
                "no labelSelector: the constraint counts no pods (its own included) and never "
                "restricts",
            )
        )
    elif not counts_itself:
        out.append(
            (
                "selector-matches-nothing",
                f"labelSelector {selector or '{}'} matches none of its own pods (labels {own}): "
                "the constraint counts other pods, or none",
            )
        )
    values = {
        n.metadata.labels[c.topology_key] for n in nodes if c.topology_key in n.metadata.labels
    }
    hard = c.when_unsatisfiable == DO_NOT_SCHEDULE
    if nodes and not values:
        effect = "hard: every pod stays Pending" if hard else "soft: it is ignored"
        out.append(
            ("unknown-topology-key", f"topologyKey {c.topology_key} is on no node ({effect})")
        )
    if replicas is not None and c.max_skew >= replicas and c.topology_key != LABEL_HOSTNAME:
        out.append(
            (
                "max-skew-never-restricts",
                f"maxSkew {c.max_skew} ≥ {replicas} replicas: all of them may share one domain",
            )
        )
    room = c.max_skew * len(values)
    short = c.min_domains is not None and hard and values and len(values) < c.min_domains
    # The room is the workload's own pods' only when the constraint counts them; pods of other
    # workloads it counts take room too, so this is what it allows at best.
    if short and counts_itself and replicas is not None and replicas > room:
        if pending is None:
            seen = ""
        elif pending:
            seen = f"; {pending} of {replicas} stay Pending in this run"
        else:
            seen = "; none stays Pending in this run"
        out.append(
            (
                "min-domains-unreachable",
                f"minDomains {c.min_domains} with {len(values)} {c.topology_key} domain(s): "
                f"the global minimum stays 0, so at most maxSkew {c.max_skew} matching pods "
                f"per domain: room for {room} of {replicas} replicas{seen}",
            )
        )
    if deployment and POD_TEMPLATE_HASH not in c.match_label_keys:
        out.append(
            (
                "rollout-skew",
                "without matchLabelKeys: [pod-template-hash] a rollout counts the old and new "
                "ReplicaSets' pods together, and the new revision can end up skewed",
            )
        )
    return out


def check(
    objects: Sequence[tuple[str, Any]],
    *,
    source: str,
    cluster: Sequence[tuple[str, Any]] = (),
    shape: Shape | None = None,
    survive: Sequence[str] = (),
    seed: int = 0,
    autoscaler: AutoscalerSection | None = None,
    recovery_limit: int = DEFAULT_RECOVERY_LIMIT,
    helm_timeout: int = HELM_TIMEOUT,
    limits: Limits = DEFAULT_LIMITS,
) -> CheckReport:
    """Check the manifests ``objects`` on the nodes (and any pods) of ``cluster``, or on a
    generated ``shape`` (its node group is ``node``); ``survive``: also every single zone
    (node) loss. ``autoscaler``: the section's file and its parser (given the node groups):
    it then acts for up to ``recovery_limit`` on what the placement leaves Pending, and after
    every loss. ``helm_timeout``: helm install's ``--timeout``, how long it waits for each Job
    or Pod hook (and lets an autoscaler act for one). Manifests and a shape asking for more
    nodes or pods than ``limits`` are refused before anything is built (a ``SizeError``)."""
    # helm install creates them: what the API server keeps of a create (not a pod's status).
    release = split_release((where, as_created(obj)) for where, obj in objects)
    installed = release.installed()
    modelled = [(w, o) for w, o in installed if not isinstance(o, UnknownObject)]
    left_out = LeftOut().extend(o for _, o in installed if isinstance(o, UnknownObject))
    if shape is not None:  # named by its options, before the manifests are counted with it
        limits.budget().add_nodes(
            shape.zones * shape.nodes_per_zone,
            "check",
            f"--zones {shape.zones} x --nodes-per-zone {shape.nodes_per_zone}",
        )
    doc: dict[str, Any] = {"nodeGroups": shape.node_groups()} if shape is not None else {}
    base = parse_timeline(doc, source)
    if autoscaler is not None:
        base.autoscaler = autoscaler[1](base.groups)
    check_timeline(with_cluster(base, [*cluster, *modelled]), limits)
    report = CheckReport(
        source,
        0,
        len(_templates(modelled)),
        ignored=dict(sorted(left_out.kinds.items())),
        unmodelled=dict(sorted(left_out.pod_makers.items())),
        hooks_not_run=release.not_run,
    )
    not_modelled = unmodelled(installed)
    report.findings = rejected(modelled) + not_modelled
    if report.errors:
        return report  # objects the API server rejects: nothing to place
    sim, hooks_ran = _install(base, cluster, release, seed, recovery_limit, helm_timeout)
    if sim.autoscaler is not None:
        report.autoscaler, _ = recover(sim, recovery_limit, source)
    post = run_hooks(
        sim,
        release.at(POST_INSTALL),
        POST_INSTALL,
        hooks_ran.existing,
        autoscaler_limit=min(helm_timeout, recovery_limit),
        timeout=helm_timeout,
    )
    hooks_ran.findings += post.findings
    report.hooks_run = hooks_ran.ran + post.ran
    if sim.autoscaler is not None and report.autoscaler is not None:
        report.autoscaler = with_hooks(
            report.autoscaler,
            sim.autoscaler.take_changes(),
            sim.autoscaler.group_sizes(sim),
            hooks_ran.autoscaled_pods + post.autoscaled_pods,
            hooks_ran.autoscaled_time + post.autoscaled_time,
        )
    nodes = [info.node for info in sim.cluster.list()]
    report.nodes = len(nodes)
    placed = step_report(sim, 0, "placed", "start", [], Settled(0, True))
    report.placed = placed
    stuck: dict[tuple[str, str, str], list[str]] = {}  # (workload, where, why) -> pods
    pending: dict[str, int] = {}  # workload -> its Pending pods
    for pod, message in placed.pending.items():
        owner = sim.owner_of(sim.pods[pod])
        name, where = (
            _workload_where(describe_workload(owner), modelled) if owner else (f"Pod {pod}", "")
        )
        stuck.setdefault((name, where, message), []).append(pod)
        pending[name] = pending.get(name, 0) + 1
    report.findings = not_modelled + lint(modelled, nodes, pending)
    report.findings += [
        Finding("warning", rule, name, where, message)
        for rule, name, where, message in storage_findings(modelled, cluster)
    ]
    scaled = report.autoscaler
    stay = f"stay Pending even with {scaled.autoscaler}" if scaled is not None else "stay Pending"
    for (name, where, message), pods in stuck.items():
        shown = ", ".join(pods[:3]) + (f", and {len(pods) - 3} more" if len(pods) > 3 else "")
        report.findings.append(
            Finding(
                "error", "pending", name, where, f"{len(pods)} pod(s) {stay} ({shown}): {message}"
            )
        )
    if scaled is not None and autoscaler is not None and not scaled.recovered:
        report.findings.append(
            Finding(
                "error",
                "autoscaler",
                scaled.autoscaler,
                f"{autoscaler[0]}: autoscaler",
                f"{verdict_line(scaled)}: {reasons_text(scaled)}",
            )
        )
    for w in placed.workloads:
        name, where = _workload_where(w.workload, modelled)
        for c in w.constraints:
            line = (
                f"topologySpreadConstraints[{c.view.index}] ({c.view.topology_key}): skew "
                f"{c.skew} > maxSkew {c.view.max_skew}"
            )
            if c.violated:
                report.findings.append(Finding("error", "violation", name, where, line))
            elif c.preference_not_met:
                report.findings.append(
                    Finding("warning", "preference", name, where, line + " (ScheduleAnyway)")
                )
    # The survive checks concern what runs on once the install is done: the release's
    # objects and the hooks that are not run to completion.
    stays = long_running(release, post.existing.values())
    scenario = with_cluster(base, [*cluster, *_modelled(stays)])
    for kind in survive:
        report.findings += _survive(scenario, kind, seed, modelled, report, recovery_limit)
        if report.interrupted:
            break
    report.findings = [_named_hook(f, release) for f in report.findings]
    report.findings[len(not_modelled) : len(not_modelled)] = [
        Finding(*f) for f in unknown_hook_findings(release) + hooks_ran.findings
    ]
    return report


def _modelled(objects: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    return [(w, o) for w, o in objects if not isinstance(o, UnknownObject)]


def _install(
    base: TimelineScenario,
    cluster: Sequence[tuple[str, Any]],
    release: Release,
    seed: int,
    recovery_limit: int,
    helm_timeout: int,
) -> tuple[Simulation, HookRun]:
    """``helm install`` up to its post-install hooks: the pre-install hooks run one at a time
    on the cluster, then the release's objects are created and settle. Without pre-install
    hooks the release's objects load with the cluster, as ``simulate`` loads a scenario."""
    pre = release.at(PRE_INSTALL)
    if not pre:
        sim = settle_timeline(with_cluster(base, [*cluster, *_modelled(release.objects)]), seed)
        return sim, HookRun()
    sim = settle_timeline(with_cluster(base, cluster), seed)
    ran = run_hooks(
        sim,
        pre,
        PRE_INSTALL,
        {},
        autoscaler_limit=min(helm_timeout, recovery_limit),
        timeout=helm_timeout,
    )
    for where, obj in _modelled(release.objects):
        sim.apply(obj, where)
    sim.settle(base.source)
    return sim, ran


def _named_hook(finding: Finding, release: Release) -> Finding:
    """A finding about a hook's object says which hook it is."""
    hook = release.hook_of(finding.where) if finding.where else None
    if hook is None:
        return finding
    return dataclasses.replace(finding, message=f"{hook.label()}: {finding.message}")


def _workload_where(report_name: str, objects: Sequence[tuple[str, Any]]) -> tuple[str, str]:
    """A report's workload name ("deployment default/web") as a finding names it, and where
    the object came from."""
    kind, _, key = report_name.partition(" ")
    for where, obj in objects:
        meta = getattr(obj, "metadata", None)
        if meta is None or getattr(obj, "kind", "").lower() != kind:
            continue
        if f"{meta.namespace or 'default'}/{meta.name}" == key:
            return f"{obj.kind} {key}", where
    return report_name, ""


def _survive(
    scenario: TimelineScenario,
    kind: str,
    seed: int,
    objects: Sequence[tuple[str, Any]],
    report: CheckReport,
    recovery_limit: int = DEFAULT_RECOVERY_LIMIT,
) -> list[Finding]:
    """Every single zone (node) loss replayed by the sweep: what it leaves Pending or
    violated that the placement did not (with an autoscaler: after it acted)."""
    base = dataclasses.replace(scenario, steps=[])
    swept = sweep(
        base,
        zones=kind == "zone",
        nodes=kind == "node",
        seeds=[seed],
        options=SweepOptions(source=scenario.source, recovery_limit=recovery_limit),
    )
    report.losses += swept.planned
    # Ctrl-C: the sweep gives back the losses it completed, and they are reported.
    report.interrupted = swept.interrupted
    out = []
    for outcome in swept.outcomes:
        failure = outcome.failure.name
        report.survived.append(failure)
        lost = f"after losing {failure.removeprefix(kind + ' ')}: "
        broken: list[tuple[str, str]] = []  # (workload as reports name it, what broke)
        scaled = outcome.run.autoscaler
        stay = "stay Pending"
        if scaled is not None and not scaled.recovered:
            stay += f" even with {scaled.autoscaler} ({reasons_text(scaled, 1)})"
        if outcome.new_pending:
            broken += [
                (workload, f"{w.pending} pod(s) {stay}")
                for workload, w in sorted(outcome.run.during.workloads.items())
                if w.pending
            ]
        for violated in outcome.new_violations:
            workload, _, constraint = violated.partition(" [")
            broken.append((workload, f"topologySpreadConstraints[{constraint} violated"))
        for workload, what in broken:
            name, where = _workload_where(workload, objects)
            out.append(Finding("error", f"survive-{kind}", name, where, lost + what))
    return out


__all__ = [
    "SURVIVE",
    "AutoscalerSection",
    "CheckReport",
    "Finding",
    "Shape",
    "check",
    "lint",
    "rejected",
    "unmodelled",
]
