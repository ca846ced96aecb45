"""The verify scenario: a ``schedule`` scenario plus ``workloads`` (StatefulSets, ReplicaSets,
Deployments, Jobs, expanded to their pods by the controllers in simulator/controllers, with
what each pod waits for before its controller creates it) and ``invariants`` (``maxPerDomain``,
``distinct``): the properties every reachable state must have.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import msgspec

from topospread.api.apps_validation import Workload as AnyWorkload
from topospread.api.apps_validation import template_error, template_path
from topospread.api.defaults import default_pod
from topospread.api.loader import decode_manifest
from topospread.api.object_validation import validate_object
from topospread.api.storage import PersistentVolumeClaim, StorageClass
from topospread.api.strict import type_error, unknown_fields
from topospread.api.types import (
    CronJob,
    Deployment,
    Job,
    LabelSelector,
    Node,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from topospread.api.validation import validate_pod
from topospread.errors import ManifestError, TopospreadError, ValidationError
from topospread.framework.config import DEFAULT_SCHEDULER_NAME
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.limits import DEFAULT_LIMITS, Limits
from topospread.simulator.controllers import (
    DeploymentStep,
    PodActions,
    step_deployment,
    sync_job,
    sync_replica_set,
    sync_stateful_set,
)
from topospread.simulator.controllers.claims import (
    admit_claim,
    get_persistent_volume_claims,
)
from topospread.simulator.controllers.common import get_pod_from_template, retry_generate_name
from topospread.simulator.controllers.cronjob import sync_cron_job
from topospread.simulator.controllers.replicationcontroller import sync_replication_controller
from topospread.simulator.controllers.statefulset import get_ordinal
from topospread.simulator.decision import is_terminal
from topospread.simulator.scenario import Scenario, ScenarioBuilder, load_scenario

MAX_PER_DOMAIN: Final = "maxPerDomain"
DISTINCT: Final = "distinct"
# A controller that keeps creating pods after this many syncs is not converging.
_MAX_SYNCS: Final = 10_000
# Where workload pods are bound while their controller is synced to completion (never shown).
_EXPANDING_NODE: Final = "topospread-verify-expanding"

Workload = StatefulSet | ReplicaSet | Deployment | Job
# What ``schedule`` expands besides: a ReplicationController (a CronJob becomes its Job first).
Expandable = Workload | ReplicationController
InvariantKind = Literal["maxPerDomain", "distinct"]


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    return f"{n} {word}es" if word.endswith(("s", "x", "ch", "sh")) else f"{n} {word}s"


def pod_key(pod: Pod) -> str:
    return f"{pod.metadata.namespace}/{pod.metadata.name}"


# ---------------------------------------------------------------------------------------------
# Invariants


@dataclass(frozen=True, slots=True)
class Invariant:
    """A property every reachable state must have (one of the two kinds)."""

    name: str
    kind: InvariantKind
    selector: Selector
    topology_key: str
    max: int = 0
    group_by: str = ""

    def describe(self) -> str:
        sel = str(self.selector) or "(every pod)"
        if self.kind == MAX_PER_DOMAIN:
            return f"at most {plural(self.max, 'pod')} matching {sel} per {self.topology_key}"
        return (
            f"pods matching {sel} with the same {self.group_by} never share a {self.topology_key}"
        )

    def violation(self, placed: Iterable[tuple[Pod, Node]]) -> str | None:
        """Why the placement breaks the invariant, or None. Nodes without the key are in no
        domain; pods without the ``groupBy`` label are in no group."""
        per_domain: dict[str, list[Pod]] = {}
        for pod, node in placed:
            domain = node.metadata.labels.get(self.topology_key)
            if domain is not None and self.selector.matches(pod.metadata.labels):
                per_domain.setdefault(domain, []).append(pod)
        for domain, pods in sorted(per_domain.items()):
            if self.kind == MAX_PER_DOMAIN:
                if len(pods) > self.max:
                    names = ", ".join(sorted(pod_key(p) for p in pods))
                    return (
                        f"{self.topology_key}={domain} holds {plural(len(pods), 'matching pod')} "
                        f"(at most {self.max}): {names}"
                    )
                continue
            groups: dict[str, list[str]] = {}
            for pod in pods:
                value = pod.metadata.labels.get(self.group_by)
                if value is not None:
                    groups.setdefault(value, []).append(pod_key(pod))
            for value, keys in sorted(groups.items()):
                if len(keys) > 1:
                    return (
                        f"{self.topology_key}={domain} holds {len(keys)} pods with "
                        f"{self.group_by}={value}: {', '.join(sorted(keys))}"
                    )
        return None


def parse_invariants(raw: Any, where: str) -> list[Invariant]:
    """The ``invariants`` list; each item is exactly one of maxPerDomain or distinct."""
    if not isinstance(raw, list):
        raise ManifestError(f"{where}: expected a list of invariants (maxPerDomain or distinct)")
    out = []
    for i, item in enumerate(raw):
        at = f"{where}[{i}]"
        if not isinstance(item, Mapping):
            raise ManifestError(f"{at}: expected a mapping with maxPerDomain or distinct")
        kinds = [k for k in (MAX_PER_DOMAIN, DISTINCT) if k in item]
        unknown = sorted(set(item) - {MAX_PER_DOMAIN, DISTINCT, "name"})
        if unknown:
            raise ManifestError(
                f"{at}: unknown key {unknown[0]!r}; an invariant has name and exactly one of "
                "maxPerDomain, distinct"
            )
        if len(kinds) != 1:
            raise ManifestError(f"{at}: give exactly one of maxPerDomain, distinct")
        kind: InvariantKind = MAX_PER_DOMAIN if kinds[0] == MAX_PER_DOMAIN else DISTINCT
        body = item[kind]
        at = f"{at}.{kind}"
        if not isinstance(body, Mapping):
            raise ManifestError(f"{at}: expected a mapping")
        needed = ("selector", "topologyKey", "max" if kind == MAX_PER_DOMAIN else "groupBy")
        extra = sorted(set(body) - set(needed))
        if extra:
            raise ManifestError(f"{at}: unknown field {extra[0]!r}; expected {', '.join(needed)}")
        for key in needed:
            if key not in body:
                raise ManifestError(f"{at}.{key}: Required value")
        # Decoded strictly, as a workload's selector is: a misspelled matchLabels was dropped,
        # leaving a selector that matches every pod.
        said = type_error(body["selector"], "V1LabelSelector")
        if said is not None:
            raise ManifestError(f"{at}.selector: {said}")
        unknown = unknown_fields(body["selector"], "V1LabelSelector")
        if unknown:
            raise ManifestError(
                f"{at}.selector: strict decoding error: "
                + ", ".join(f'unknown field "{u}"' for u in unknown)
            )
        try:
            selector = msgspec.convert(body["selector"], LabelSelector)
            compiled = label_selector_as_selector(selector)
        except (msgspec.ValidationError, SelectorError) as err:
            raise ValidationError(f"{at}.selector: Invalid value: {err}") from err
        topology_key = body["topologyKey"]
        if not isinstance(topology_key, str) or not topology_key:
            raise ValidationError(f"{at}.topologyKey: Invalid value: must be a non-empty string")
        maximum, group_by = 0, ""
        if kind == MAX_PER_DOMAIN:
            maximum = body["max"]
            if not isinstance(maximum, int) or isinstance(maximum, bool) or maximum < 0:
                raise ValidationError(
                    f"{at}.max: Invalid value: {maximum!r}: must be an integer >= 0"
                )
        else:
            group_by = body["groupBy"]
            if not isinstance(group_by, str) or not group_by:
                raise ValidationError(f"{at}.groupBy: Invalid value: must be a label key")
        name = item.get("name")
        name = f"invariants[{i}]" if name is None or name == "" else name
        if not isinstance(name, str):
            raise ManifestError(f"{where}[{i}].name: expected a string")
        out.append(Invariant(name, kind, compiled, topology_key, maximum, group_by))
    return out


# ---------------------------------------------------------------------------------------------
# The scenario


@dataclass(slots=True)
class VerifyScenario:
    """A scenario to verify: nodes, bound pods, the pods to place (queue and workload pods),
    what each pod waits for before its controller creates it, and the invariants."""

    source: str
    scenario: Scenario
    invariants: list[Invariant]
    # Pod key -> keys of the pods that must be bound before the controller creates it.
    waits_for: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Pod key -> its workload, e.g. "StatefulSet default/redis-0".
    origin: dict[str, str] = field(default_factory=dict)
    # Workload name (as in ``origin``) -> the workload, in file order.
    workloads: dict[str, Workload] = field(default_factory=dict)


def bound_to(pod: Pod, node: str) -> Pod:
    """The pod with ``spec.nodeName`` set."""
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def _sync(
    workload: Expandable, pods: list[Pod], rss: list[ReplicaSet], rng: random.Random
) -> PodActions | DeploymentStep:
    if isinstance(workload, StatefulSet):
        return sync_stateful_set(workload, pods, rng=rng)
    if isinstance(workload, ReplicaSet):
        return sync_replica_set(workload, pods, rng=rng)
    if isinstance(workload, ReplicationController):
        return sync_replication_controller(workload, pods, rng=rng)
    if isinstance(workload, Job):
        return sync_job(workload, pods, rng=rng)
    return step_deployment(workload, rss, pods, rng=rng)


def expand_workload(
    workload: Expandable,
    rng: random.Random,
    existing: Sequence[Pod] = (),
    taken: Iterable[str] = (),
) -> tuple[list[tuple[Pod, tuple[str, ...]]], list[ReplicaSet]]:
    """The pods the workload's controller creates, each with the pods it waits for, and (for a
    Deployment) its ReplicaSets. ``existing``: the bound pods of its namespace, which the
    controller claims as running (a StatefulSet whose ordinal 0 runs creates ordinal 1 next).
    ``taken``: the names of the namespace's other pods (other workloads' pods, not claimed);
    a created pod's name is free among them and ``existing``, as the API server makes it.

    The controller is synced until it creates nothing more. Each batch it creates is first
    offered with the previous batch still unbound: if the controller creates the next batch
    anyway, that batch waits for nothing more than the previous one did; otherwise (an
    OrderedReady StatefulSet) it is created once the previous batch is bound and running,
    and waits for it.
    """
    created: list[tuple[Pod, tuple[str, ...]]] = []
    names = {p.metadata.name for p in existing} | set(taken)
    rss: list[ReplicaSet] = []
    earlier: list[Pod] = list(existing)  # bound (running and ready, as controllers read it)
    last: list[Pod] = []  # the latest batch, unbound
    last_waits: tuple[str, ...] = ()
    for _ in range(_MAX_SYNCS):
        result = _sync(workload, [*earlier, *last], rss, rng)
        waits = last_waits
        actions: PodActions = result.pods if not isinstance(result, PodActions) else result
        if not actions.create and last:
            result = _sync(
                workload, [*earlier, *(bound_to(p, _EXPANDING_NODE) for p in last)], rss, rng
            )
            actions = result.pods if not isinstance(result, PodActions) else result
            waits = tuple(pod_key(p) for p in last)
        if not isinstance(result, PodActions):
            rss = list(result.sync.replica_sets)
        if not actions.create:
            if not isinstance(result, PodActions) and result.sync.created:
                continue  # a Deployment made its ReplicaSet; its pods come with the next sync
            return created, rss
        earlier += [bound_to(p, _EXPANDING_NODE) for p in last]
        last = _stored(
            actions.create, generated=not isinstance(workload, StatefulSet), rng=rng, names=names
        )
        last_waits = waits
        created += [(p, waits) for p in last]
    raise ValidationError(
        f"{workload.kind} {workload.metadata.namespace}/{workload.metadata.name}: "
        f"its controller still creates pods after {_MAX_SYNCS} syncs"
    )


def _stored(
    pods: Iterable[Pod], *, generated: bool, rng: random.Random, names: set[str]
) -> list[Pod]:
    """The created pods as the API server stores them, ``names`` (the namespace's pods'
    names) growing with each: a generated name already taken drawn again
    (``retry_generate_name``); a pod whose given name, or every drawn name, is taken is not
    created."""
    stored: list[Pod] = []
    for pod in pods:
        kept = retry_generate_name(pod, rng, names.__contains__) if generated else pod
        if kept.metadata.name in names:
            continue
        names.add(kept.metadata.name)
        stored.append(kept)
    return stored


def expand_workload_pods(
    items: Sequence[tuple[str, Any]], expandable: Sequence[bool]
) -> list[tuple[str, Any]]:
    """The decoded objects (each with where it came from), every expandable workload
    (StatefulSet, ReplicaSet, ReplicationController, Deployment, Job, CronJob) replaced by the
    pods its controller creates, unbound (and a Deployment by its ReplicaSets, a CronJob by
    its next run's Job at the Unix epoch; StatefulSets, ReplicaSets and ReplicationControllers
    stay, as the owners default spreading reads): what ``schedule`` queues for workloads given
    as pods.
    The pods of the workload's namespace among ``items``, bound or not, are the controller's
    to claim (a ReplicaSet with its pods listed creates no more)."""
    if not any(expandable):
        return list(items)  # nothing to expand (a cluster dump): the objects as they are
    pods_by_namespace: dict[str, list[Pod]] = {}
    for _, obj in items:
        if isinstance(obj, Pod):
            pods_by_namespace.setdefault(_namespace(obj), []).append(obj)
    created_names: dict[str, set[str]] = {}  # by namespace: pods the workloads before made
    out: list[tuple[str, Any]] = []
    expandable_types = (StatefulSet, ReplicaSet, ReplicationController, Deployment, Job, CronJob)
    for i, ((where, obj), expand) in enumerate(zip(items, expandable, strict=True)):
        if not expand or not isinstance(obj, expandable_types):
            out.append((where, obj))
            continue
        if isinstance(obj, StatefulSet | ReplicaSet | ReplicationController):
            out.append((where, obj))  # owners default spreading reads
        name = f"{obj.kind} {obj.metadata.namespace or 'default'}/{obj.metadata.name}"
        errors = validate_object(obj)
        if errors:
            raise ValidationError(f"{where} ({name}): {errors[0]}")
        _check_pod_template(obj, f"{where} ({name})")
        if isinstance(obj, CronJob):
            try:
                jobs = sync_cron_job(_in_namespace(obj), [], now=0)
            except TopospreadError as err:
                raise type(err)(f"{where} ({name}): {err}") from err
            if not jobs:  # suspended
                continue
            obj = jobs[0]
        namespace = obj.metadata.namespace or "default"
        existing = pods_by_namespace.get(namespace, [])
        made = created_names.setdefault(namespace, set())
        try:
            pods, rss = expand_workload(obj, random.Random(i), existing, made)
        except TopospreadError as err:
            raise type(err)(f"{where} ({name}): {err}") from err
        made.update(p.metadata.name for p, _ in pods)
        out += [(f"{where} ({name}, pod {p.metadata.name})", p) for p, _ in pods]
        if isinstance(obj, StatefulSet):
            out += _claims_of(obj, [p for p, _ in pods], items, out, where)
        out += [(f"{where} ({name})", rs) for rs in rss]
    return out


def _check_pod_template(obj: AnyWorkload, label: str) -> None:
    """The workload's pod template validated where the API server validates it, inside the
    workload (``spec.template.spec...``), before any pod is made from it; PriorityClass names
    are resolved later, pod by pod, when the other objects are known."""
    template = (
        obj.spec.job_template.spec.template if isinstance(obj, CronJob) else obj.spec.template
    )
    if template is None:
        return
    probe = get_pod_from_template(template, obj.metadata.name, None)
    meta = msgspec.structs.replace(
        probe.metadata,
        name=f"{obj.metadata.name}-0",
        namespace=obj.metadata.namespace or "default",
    )
    errors = validate_pod(
        default_pod(msgspec.structs.replace(probe, metadata=meta)), from_template=True
    )
    if errors:
        raise ValidationError(f"{label}: {template_error(template_path(obj), errors[0])}")


def _claims_of(
    sts: StatefulSet,
    pods: Sequence[Pod],
    items: Sequence[tuple[str, Any]],
    out: Sequence[tuple[str, Any]],
    where: str = "",
) -> list[tuple[str, Any]]:
    """The claims the StatefulSet controller creates for its pods' ordinals, those not given
    already, each with the default StorageClass when it names none; each labelled, for the
    errors admission finds in it, with ``where`` the StatefulSet came from."""
    namespace = sts.metadata.namespace or "default"
    sts = msgspec.structs.replace(
        sts, metadata=msgspec.structs.replace(sts.metadata, namespace=namespace)
    )
    given = {
        f"{o.metadata.namespace or 'default'}/{o.metadata.name}"
        for _, o in (*items, *out)
        if isinstance(o, PersistentVolumeClaim)
    }
    classes = [o for _, o in items if isinstance(o, StorageClass)]
    claims = []
    for pod in pods:
        for claim in get_persistent_volume_claims(sts, get_ordinal(pod)):
            if claim.key not in given:
                given.add(claim.key)
                label = f"StatefulSet {namespace}/{sts.metadata.name}, claim {claim.metadata.name}"
                label = f"{where} ({label})" if where else label
                claims.append((label, admit_claim(claim, classes)))
    return claims


def _in_namespace(obj: CronJob) -> CronJob:
    if obj.metadata.namespace:
        return obj
    return msgspec.structs.replace(
        obj, metadata=msgspec.structs.replace(obj.metadata, namespace="default")
    )


def _namespace(pod: Pod) -> str:
    # Bound pods are read but not yet admitted: an empty namespace is still "default".
    return pod.metadata.namespace or "default"


def load_verify_scenario(path: Path, limits: Limits = DEFAULT_LIMITS) -> VerifyScenario:
    """Read a verify scenario: the ``schedule`` keys plus ``workloads`` and ``invariants``;
    workloads asking for more pods than ``limits`` are refused before their pods are made."""
    budget = limits.budget()
    waits_for: dict[str, tuple[str, ...]] = {}
    origin: dict[str, str] = {}
    workloads: dict[str, Workload] = {}
    invariants: list[Invariant] = []

    def add_workloads(raw: Any, where: str, builder: ScenarioBuilder) -> None:
        if not isinstance(raw, list):
            raise ManifestError(
                f"{where}: expected a list of workloads (StatefulSets, ReplicaSets, Deployments, "
                "Jobs)"
            )
        for i, item in enumerate(raw):
            at = f"{where}[{i}]"
            for obj in decode_manifest(item, at):
                if not isinstance(obj, StatefulSet | ReplicaSet | Deployment | Job):
                    kind = getattr(obj, "kind", type(obj).__name__)
                    raise ManifestError(
                        f"{at}: kind {kind}: workloads are StatefulSets, ReplicaSets, "
                        "Deployments and Jobs"
                    )
                name = f"{obj.kind} {obj.metadata.namespace}/{obj.metadata.name}"
                errors = validate_object(obj)
                if errors:
                    raise ValidationError(f"{at} ({name}): {errors[0]}")
                _check_pod_template(obj, f"{at} ({name})")
                budget.add_object(obj, at)
                workloads[name] = obj
                try:
                    namespace = obj.metadata.namespace
                    bound = [p for _, p in builder.pods if _namespace(p) == namespace]
                    queued = [
                        p.metadata.name for _, p in builder.queue if _namespace(p) == namespace
                    ]
                    pods, rss = expand_workload(obj, random.Random(i), bound, queued)
                except TopospreadError as err:
                    raise type(err)(f"{at} ({name}): {err}") from err
                for pod, waits in pods:
                    key = pod_key(pod)
                    builder.add(pod, f"{at} ({name}, pod {pod.metadata.name})", queue=True)
                    waits_for[key] = waits
                    origin[key] = name
                # Owners the default spreading constraints read.
                if isinstance(obj, StatefulSet | ReplicaSet):
                    builder.add(obj, at)
                for rs in rss:
                    builder.add(rs, at)

    def add_invariants(raw: Any, where: str, builder: ScenarioBuilder) -> None:
        invariants.extend(parse_invariants(raw, where))

    scenario = load_scenario(
        path,
        extensions={"workloads": add_workloads, "invariants": add_invariants},
        manifests_hint=(
            ": a verify scenario lists its objects under those keys (Nodes under nodes, "
            "Deployments and StatefulSets under workloads)"
        ),
    )
    # The StatefulSet controller's claims, created before its pods (with the scenario's default
    # StorageClass, whichever key came first in the file).
    for name, workload in workloads.items():
        if isinstance(workload, StatefulSet):
            ordinals = [p for p in scenario.queue if origin.get(pod_key(p)) == name]
            given = [("", o) for o in scenario.objects]
            scenario.objects.extend(o for _, o in _claims_of(workload, ordinals, given, []))
    profiles = {p.scheduler_name for p in scenario.config.profiles}
    for pod in scenario.queue:
        if is_terminal(pod):
            raise ValidationError(
                f"{path}: pod {pod_key(pod)}: status.phase: verify places pods that have not "
                f"finished (a {pod.status.phase} pod is never scheduled)"
            )
        if pod.spec.scheduling_gates:
            raise ValidationError(
                f"{path}: pod {pod_key(pod)}: spec.schedulingGates: verify places pods without "
                "scheduling gates (a gated pod is never scheduled)"
            )
        name = pod.spec.scheduler_name or DEFAULT_SCHEDULER_NAME
        if name not in profiles:
            raise ValidationError(
                f'{path}: pod {pod_key(pod)}: spec.schedulerName: no profile has schedulerName "'
                f"{name}\"; verify explores the scenario's own scheduler"
            )
    return VerifyScenario(str(path), scenario, invariants, waits_for, origin, workloads)
