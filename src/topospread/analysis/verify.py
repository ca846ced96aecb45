"""``verify``: check that spreading holds in every order in which the pods can be scheduled.

A verify scenario is a ``schedule`` scenario plus ``workloads`` (StatefulSets, ReplicaSets,
Deployments, Jobs, expanded to their pods by the controllers in simulator/controllers) and
``invariants`` (``maxPerDomain``, ``distinct``). The search is a breadth-first walk over
cluster states: in each state every pending pod that exists (an OrderedReady StatefulSet creates
ordinal n+1 only once ordinal n is bound) goes through the real scheduling cycle (every Filter
and Score plugin of its profile), and each node it could land on is a successor: the nodes with
the best total score, among which kube-scheduler picks at random, or with ``any_feasible``
every feasible node. Every reachable state is checked against the invariants, and a state where
pods remain but none can be placed is a deadlock. Breadth first, the first failure found is a
shortest counterexample.

States equal up to symmetry are merged: pods that differ only in identity (names, labels no
selector reads) are one pod class and a node's content is a multiset of classes; nodes that
differ only in hostname-like labels (a distinct value per node, never read by value) are
interchangeable within their zone; zones with the same nodes (and the same standing in every
node selector) are interchangeable; and workloads alike but for the value of one pod label
that nothing else names (shard "0" and "1") are interchangeable. A canonical key is the state
with its workloads, zones and nodes put in a standard order; any symmetric image would be
sound, the standard order only decides how much is merged. tests/test_verify.py checks the
verdicts against the unreduced search on random clusters. When the state budget runs out, the
search says how deep it checked every order, then samples complete orders at random (seeded):
not a proof.

Assumptions, reported with every result: every node is evaluated (percentageOfNodesToScore as
100%; clusters under 100 nodes are evaluated whole anyway); pods are not preempted; every
order of the pending pods is possible (the queue's priority order and retries only pick among
them).
"""

from __future__ import annotations

import bisect
import random
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import msgspec

from topospread.api.loader import decode_manifests
from topospread.api.types import (
    LABEL_TOPOLOGY_ZONE,
    Deployment,
    Job,
    LabelSelector,
    Node,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
    TopologySpreadConstraint,
)
from topospread.cluster.state import ClusterState
from topospread.errors import ManifestError, TopospreadError, ValidationError
from topospread.framework.config import DEFAULT_SCHEDULER_NAME
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.framework.schedule_one import SchedulingError, fit_error_message
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector
from topospread.simulator.controllers import (
    DeploymentStep,
    PodActions,
    step_deployment,
    sync_job,
    sync_replica_set,
    sync_stateful_set,
)
from topospread.simulator.scenario import Scenario, ScenarioBuilder, load_scenario
from topospread.simulator.scheduler import Scheduler

# About half a minute of search for a dozen pods with anti-affinity on a 2-core machine.
DEFAULT_MAX_STATES: Final = 50_000
DEFAULT_SAMPLES: Final = 200
MAX_PER_DOMAIN: Final = "maxPerDomain"
DISTINCT: Final = "distinct"
# Progress is reported every this many expanded states (or sampled orders).
PROGRESS_EVERY: Final = 256
# A controller that keeps creating pods after this many syncs is not converging.
_MAX_SYNCS: Final = 10_000
# Where workload pods are bound while their controller is synced to completion (never shown).
_EXPANDING_NODE: Final = "topospread-verify-expanding"

ASSUMPTIONS: Final = (
    "every node is evaluated (percentageOfNodesToScore taken as 100%; "
    "clusters under 100 nodes are evaluated whole anyway)",
    "no preemption: a pod that fits nowhere waits",
    "any pending pod may be scheduled next (priority order and retries pick among them)",
)

Workload = StatefulSet | ReplicaSet | Deployment | Job
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
        name = item.get("name") or f"invariants[{i}]"
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


def _bound_to(pod: Pod, node: str) -> Pod:
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, node_name=node))


def _sync(
    workload: Workload, pods: list[Pod], rss: list[ReplicaSet], rng: random.Random
) -> PodActions | DeploymentStep:
    if isinstance(workload, StatefulSet):
        return sync_stateful_set(workload, pods, rng=rng)
    if isinstance(workload, ReplicaSet):
        return sync_replica_set(workload, pods, rng=rng)
    if isinstance(workload, Job):
        return sync_job(workload, pods, rng=rng)
    return step_deployment(workload, rss, pods, rng=rng)


def expand_workload(
    workload: Workload, rng: random.Random
) -> tuple[list[tuple[Pod, tuple[str, ...]]], list[ReplicaSet]]:
    """The pods the workload's controller creates, each with the pods it waits for, and (for a
    Deployment) its ReplicaSets.

    The controller is synced until it creates nothing more. Each batch it creates is first
    offered with the previous batch still unbound: if the controller creates the next batch
    anyway, that batch waits for nothing more than the previous one did; otherwise (an
    OrderedReady StatefulSet) it is created once the previous batch is bound and running,
    and waits for it.
    """
    created: list[tuple[Pod, tuple[str, ...]]] = []
    rss: list[ReplicaSet] = []
    earlier: list[Pod] = []  # bound (running and ready, as the controllers read it)
    last: list[Pod] = []  # the latest batch, unbound
    last_waits: tuple[str, ...] = ()
    for _ in range(_MAX_SYNCS):
        result = _sync(workload, [*earlier, *last], rss, rng)
        waits = last_waits
        actions: PodActions = result.pods if not isinstance(result, PodActions) else result
        if not actions.create and last:
            result = _sync(
                workload, [*earlier, *(_bound_to(p, _EXPANDING_NODE) for p in last)], rss, rng
            )
            actions = result.pods if not isinstance(result, PodActions) else result
            waits = tuple(pod_key(p) for p in last)
        if not isinstance(result, PodActions):
            rss = list(result.sync.replica_sets)
        if not actions.create:
            if not isinstance(result, PodActions) and result.sync.created:
                continue  # a Deployment made its ReplicaSet; its pods come with the next sync
            return created, rss
        earlier += [_bound_to(p, _EXPANDING_NODE) for p in last]
        last = list(actions.create)
        last_waits = waits
        created += [(p, waits) for p in last]
    raise ValidationError(
        f"{workload.kind} {workload.metadata.namespace}/{workload.metadata.name}: "
        f"its controller still creates pods after {_MAX_SYNCS} syncs"
    )


def load_verify_scenario(path: Path) -> VerifyScenario:
    """Read a verify scenario: the ``schedule`` keys plus ``workloads`` and ``invariants``."""
    waits_for: dict[str, tuple[str, ...]] = {}
    origin: dict[str, str] = {}
    workloads: dict[str, Workload] = {}
    invariants: list[Invariant] = []

    def add_workloads(raw: Any, where: str, builder: ScenarioBuilder) -> None:
        if not isinstance(raw, list):
            raise ManifestError(f"{where}: expected a list of StatefulSets, ReplicaSets, ...")
        for i, item in enumerate(raw):
            at = f"{where}[{i}]"
            for obj in decode_manifests(item, at):
                if not isinstance(obj, StatefulSet | ReplicaSet | Deployment | Job):
                    kind = getattr(obj, "kind", type(obj).__name__)
                    raise ManifestError(
                        f"{at}: kind {kind}: workloads are StatefulSets, ReplicaSets, "
                        "Deployments and Jobs"
                    )
                name = f"{obj.kind} {obj.metadata.namespace}/{obj.metadata.name}"
                workloads[name] = obj
                try:
                    pods, rss = expand_workload(obj, random.Random(i))
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
        path, extensions={"workloads": add_workloads, "invariants": add_invariants}
    )
    profiles = {p.scheduler_name for p in scenario.config.profiles}
    for pod in scenario.queue:
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


# ---------------------------------------------------------------------------------------------
# Symmetry: pod classes, node shapes, zones


def _selector_keys(selector: LabelSelector | None, out: set[str]) -> None:
    if selector is not None:
        out.update(selector.match_labels)
        out.update(r.key for r in selector.match_expressions)


def _read_label_keys(sc: VerifyScenario) -> set[str]:
    """Every pod label key some selector reads: pods' spread constraints and (anti-)affinity
    terms, owners' and Services' selectors, the invariants."""
    keys: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, LabelSelector):
            _selector_keys(value, keys)
        elif isinstance(value, PodAffinityTerm | TopologySpreadConstraint):
            keys.update(value.match_label_keys)
            if isinstance(value, PodAffinityTerm):
                keys.update(value.mismatch_label_keys)
            _selector_keys(value.label_selector, keys)
            if isinstance(value, PodAffinityTerm):
                _selector_keys(value.namespace_selector, keys)
        elif isinstance(value, msgspec.Struct):
            for name in value.__struct_fields__:
                walk(getattr(value, name))
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    for pod in (*sc.scenario.pods, *sc.scenario.queue):
        walk(pod.spec)
    for obj in sc.scenario.objects:
        if isinstance(obj, Service | ReplicationController):
            keys.update(obj.spec.selector or {})
        else:
            walk(obj)
    for inv in sc.invariants:
        for req in inv.selector.requirements or ():
            keys.add(req.key)
        if inv.group_by:
            keys.add(inv.group_by)
    return keys


def _pod_shape(pod: Pod, read: set[str]) -> bytes:
    """The pod as the scheduler and the invariants see it: no name, uid or hostname, and only
    the labels some selector reads."""
    meta = ObjectMeta(
        namespace=pod.metadata.namespace,
        labels={k: v for k, v in pod.metadata.labels.items() if k in read},
        annotations=pod.metadata.annotations,
        owner_references=pod.metadata.owner_references,
        deletion_timestamp=pod.metadata.deletion_timestamp,
    )
    spec = msgspec.structs.replace(pod.spec, hostname="", node_name="")
    return msgspec.json.encode(
        msgspec.structs.replace(pod, metadata=meta, spec=spec), order="sorted"
    )


@dataclass(slots=True)
class _NodeReads:
    """How pods read node labels by value (node selectors and node affinity terms)."""

    # Per key: the value sets a selector tests membership in; None where the value itself is
    # read (Gt, Lt compare numbers).
    reads: dict[str, list[frozenset[str] | None]] = field(default_factory=dict)
    names_read: bool = False  # a matchFields term reads node names

    def add_pod(self, pod: Pod) -> None:
        for key, value in pod.spec.node_selector.items():
            self.reads.setdefault(key, []).append(frozenset({value}))
        affinity = pod.spec.affinity
        na = affinity.node_affinity if affinity is not None else None
        if na is None:
            return
        terms = [p.preference for p in na.preferred_during_scheduling_ignored_during_execution]
        required = na.required_during_scheduling_ignored_during_execution
        if required is not None:
            terms += required.node_selector_terms
        for term in terms:
            if term.match_fields:
                self.names_read = True
            for req in term.match_expressions:
                if req.operator in ("In", "NotIn"):
                    self.reads.setdefault(req.key, []).append(frozenset(req.values))
                elif req.operator in ("Gt", "Lt"):
                    self.reads.setdefault(req.key, []).append(None)

    def signature(self, key: str, value: str | None) -> tuple[object, ...]:
        return (
            value is None,
            *(value if vs is None else value in vs for vs in self.reads.get(key, ())),
        )


@dataclass(slots=True)
class Symmetry:
    """Pod classes, node shapes, zones and workloads: what the canonical form of a state
    merges.

    ``node_shape[i]``: nodes with equal shapes are interchangeable within a zone;
    ``zone_groups``: the node indexes of each zone, grouped so that zones in one group are
    interchangeable; ``orbits``: groups of interchangeable workloads.
    """

    pod_class: dict[str, int]
    node_shape: list[int]
    zone_groups: list[list[list[int]]]
    zone_key: str | None
    identity_keys: list[str]
    pod_classes: int
    # Interchangeable workloads: per orbit, per workload, its pod classes in pod order.
    orbits: list[list[tuple[int, ...]]] = field(default_factory=list)

    @staticmethod
    def distinct_nodes(
        pod_class: dict[str, int],
        pod_classes: int,
        nodes: int,
        orbits: list[list[tuple[int, ...]]] | None = None,
    ) -> Symmetry:
        """Pod classes as given, every node on its own (when pods read node names)."""
        return Symmetry(
            pod_class,
            list(range(nodes)),
            [[[i]] for i in range(nodes)],
            None,
            [],
            pod_classes,
            orbits or [],
        )

    @staticmethod
    def none(pod_keys: Sequence[str], nodes: int) -> Symmetry:
        """No merging at all: every pod and every node is its own class (the reference)."""
        return Symmetry.distinct_nodes({k: i for i, k in enumerate(pod_keys)}, len(pod_keys), nodes)

    def describe(self) -> str:
        shapes = len(set(self.node_shape))
        zones = sum(len(g) for g in self.zone_groups)
        parts = [plural(self.pod_classes, "pod class"), plural(shapes, "node shape")]
        if self.orbits:
            sizes = "+".join(str(len(o)) for o in self.orbits)
            parts.append(f"{sizes} interchangeable workloads")
        if self.zone_key:
            groups = plural(len(self.zone_groups), "group")
            parts.append(f"{plural(zones, 'zone')} ({self.zone_key}) in {groups}")
        return ", ".join(parts)


def find_symmetry(sc: VerifyScenario) -> Symmetry:
    """Classes of interchangeable pods, nodes and zones (see the module docstring)."""
    read = _read_label_keys(sc)
    classes: dict[tuple[Any, ...], int] = {}
    pod_class: dict[str, int] = {}
    queue_keys = {pod_key(p) for p in sc.scenario.queue}
    for pod in (*sc.scenario.pods, *sc.scenario.queue):
        key = pod_key(pod)
        # Pods of one class must also be created under the same condition and count alike.
        identity = (
            _pod_shape(pod, read),
            key in queue_keys,
            sc.origin.get(key, ""),
            sc.waits_for.get(key, ()),
        )
        pod_class[key] = classes.setdefault(identity, len(classes))
    orbits = _workload_orbits(sc, pod_class, read)

    nodes = sc.scenario.nodes
    node_reads = _NodeReads()
    for pod in (*sc.scenario.pods, *sc.scenario.queue):
        node_reads.add_pod(pod)
    if node_reads.names_read:
        return Symmetry.distinct_nodes(pod_class, len(classes), len(nodes), orbits)
    label_keys = sorted({k for n in nodes for k in n.metadata.labels})
    identity_keys = []
    for key in label_keys:
        values = [n.metadata.labels.get(key) for n in nodes]
        if None not in values and len(set(values)) == len(values) and key not in node_reads.reads:
            identity_keys.append(key)
    zone_key = _zone_key(nodes, label_keys, identity_keys)
    dropped = {*identity_keys, *([zone_key] if zone_key else [])}
    shapes: dict[bytes, int] = {}
    node_shape = []
    for node in nodes:
        meta = ObjectMeta(
            labels={k: v for k, v in node.metadata.labels.items() if k not in dropped},
            annotations=node.metadata.annotations,
        )
        shape = msgspec.json.encode(msgspec.structs.replace(node, metadata=meta), order="sorted")
        node_shape.append(shapes.setdefault(shape, len(shapes)))
    zones: dict[str | None, list[int]] = {}
    for i, node in enumerate(nodes):
        zones.setdefault(node.metadata.labels.get(zone_key) if zone_key else None, []).append(i)
    groups: dict[tuple[Any, ...], list[list[int]]] = {}
    for value, members in sorted(zones.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
        sig = (
            node_reads.signature(zone_key, value) if zone_key else (),
            tuple(sorted(node_shape[i] for i in members)),
        )
        groups.setdefault(sig, []).append(members)
    return Symmetry(
        pod_class,
        node_shape,
        list(groups.values()),
        zone_key,
        identity_keys,
        len(classes),
        orbits,
    )


# Workload symmetry: two workloads are interchangeable when one becomes the other by renaming
# it and exchanging the two values of one pod label (shard "0" and "1"), and nothing else in the
# scenario names either value. Exchanging them then maps the scenario onto itself: pod i of one
# workload plays pod i of the other.


def _swap_label_values(value: Any, key: str, swap: Mapping[str, str]) -> Any:
    """``value`` with pod label ``key``'s values exchanged as ``swap`` says, in labels and
    label selectors (node selectors read node labels and are left alone)."""
    if isinstance(value, LabelSelector):
        labels = {k: swap.get(v, v) if k == key else v for k, v in value.match_labels.items()}
        exprs = [
            msgspec.structs.replace(r, values=[swap.get(v, v) for v in r.values])
            if r.key == key
            else r
            for r in value.match_expressions
        ]
        return msgspec.structs.replace(value, match_labels=labels, match_expressions=exprs)
    if isinstance(value, ObjectMeta):
        labels = {k: swap.get(v, v) if k == key else v for k, v in value.labels.items()}
        return msgspec.structs.replace(value, labels=labels)
    if isinstance(value, msgspec.Struct):
        changes = {}
        for name in value.__struct_fields__:
            old = getattr(value, name)
            new = _swap_label_values(old, key, swap)
            if new is not old:
                changes[name] = new
        return msgspec.structs.replace(value, **changes) if changes else value
    if isinstance(value, list):
        items = [_swap_label_values(v, key, swap) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _anonymous_shape(pod: Pod, read: set[str]) -> bytes:
    """The pod's shape with its owners named by kind only."""
    owners = [msgspec.structs.replace(o, name="", uid="") for o in pod.metadata.owner_references]
    meta = msgspec.structs.replace(pod.metadata, owner_references=owners)
    return _pod_shape(msgspec.structs.replace(pod, metadata=meta), read)


def _mentions(value: Any, out: dict[str, set[str]]) -> None:
    """Collect the pod label values ``value`` names, per key: its labels and selectors."""
    if isinstance(value, LabelSelector):
        for k, v in value.match_labels.items():
            out.setdefault(k, set()).add(v)
        for r in value.match_expressions:
            out.setdefault(r.key, set()).update(r.values)
    elif isinstance(value, ObjectMeta):
        for k, v in value.labels.items():
            out.setdefault(k, set()).add(v)
    elif isinstance(value, Service | ReplicationController):
        for k, v in (value.spec.selector or {}).items():
            out.setdefault(k, set()).add(v)
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            _mentions(getattr(value, name), out)
    elif isinstance(value, list):
        for item in value:
            _mentions(item, out)


def _workload_orbits(
    sc: VerifyScenario, pod_class: Mapping[str, int], read: set[str]
) -> list[list[tuple[int, ...]]]:
    """Groups of interchangeable workloads (Deployments, whose ReplicaSets carry hashes, are
    left out), each workload given as its pods' classes in pod order."""
    pods_of: dict[str, list[str]] = {}
    by_key = {pod_key(p): p for p in sc.scenario.queue}
    for pod in sc.scenario.queue:
        name = sc.origin.get(pod_key(pod))
        if name is not None:
            pods_of.setdefault(name, []).append(pod_key(pod))
    names = [n for n, w in sc.workloads.items() if not isinstance(w, Deployment) and n in pods_of]
    own: dict[str, dict[str, set[str]]] = {}
    for name in names:
        own[name] = {}
        _mentions(sc.workloads[name], own[name])
    others: dict[str, set[str]] = {}
    for pod in (*sc.scenario.pods, *sc.scenario.queue):
        if sc.origin.get(pod_key(pod)) not in own:
            _mentions(pod, others)
    workload_ids = {(w.kind, w.metadata.namespace, w.metadata.name) for w in sc.workloads.values()}
    for obj in sc.scenario.objects:
        if (obj.kind, obj.metadata.namespace, obj.metadata.name) not in workload_ids:
            _mentions(obj, others)
    for inv in sc.invariants:
        for req in inv.selector.requirements or ():
            others.setdefault(req.key, set()).update(req.values)

    def interchangeable(a: str, b: str) -> bool:
        wa, wb = sc.workloads[a], sc.workloads[b]
        if type(wa) is not type(wb) or len(pods_of[a]) != len(pods_of[b]):
            return False
        la, lb = wa.spec.template.metadata.labels, wb.spec.template.metadata.labels
        differ = [k for k in sorted({*la, *lb}) if la.get(k) != lb.get(k)]
        renamed = msgspec.structs.replace(
            wa,
            metadata=msgspec.structs.replace(
                wa.metadata, name=wb.metadata.name, uid=wb.metadata.uid
            ),
        )
        if not differ:
            return bool(renamed == wb) and same_pods(a, b, "", {})
        if len(differ) != 1 or differ[0] not in la or differ[0] not in lb:
            return False
        key = differ[0]
        va, vb = la[key], lb[key]
        named = set(others.get(key, set()))
        for n in names:
            if n not in (a, b):
                named |= own[n].get(key, set())
        if va in named or vb in named:
            return False
        swap = {va: vb, vb: va}
        return bool(_swap_label_values(renamed, key, swap) == wb) and same_pods(a, b, key, swap)

    def same_pods(a: str, b: str, key: str, swap: Mapping[str, str]) -> bool:
        # The admitted pods too (labels the controllers add, selectors admission merged):
        # pod i of one, exchanged, is pod i of the other but for its name and owner.
        for ka, kb in zip(pods_of[a], pods_of[b], strict=True):
            pa = _swap_label_values(by_key[ka], key, swap) if key else by_key[ka]
            if _anonymous_shape(pa, read) != _anonymous_shape(by_key[kb], read):
                return False
        return True

    def roles(name: str) -> tuple[int, ...]:
        return tuple(pod_class[k] for k in pods_of[name])

    def shape(name: str) -> tuple[int, ...]:
        # Which pods share a class: must match for the workloads' classes to correspond.
        first: dict[int, int] = {}
        return tuple(first.setdefault(c, i) for i, c in enumerate(roles(name)))

    orbits: list[list[str]] = []
    for name in names:
        for orbit in orbits:
            if shape(orbit[0]) == shape(name) and interchangeable(orbit[0], name):
                orbit.append(name)
                break
        else:
            orbits.append([name])
    return [[tuple(dict.fromkeys(roles(n))) for n in orbit] for orbit in orbits if len(orbit) > 1]


def _zone_key(nodes: Sequence[Node], keys: Sequence[str], identity: Sequence[str]) -> str | None:
    """The label whose values are permuted: the well-known zone label, else the non-identity
    label with the most values."""
    candidates = [k for k in keys if k not in identity]
    if not candidates:
        return None
    if LABEL_TOPOLOGY_ZONE in candidates:
        return LABEL_TOPOLOGY_ZONE
    return max(candidates, key=lambda k: (len({n.metadata.labels.get(k) for n in nodes}), k))


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True, slots=True)
class VerifyProgress:
    """Where the search is: ``phase`` is "search" or "sample"."""

    phase: str
    states: int
    depth: int
    frontier: int
    samples: int = 0


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One binding of a counterexample: the pod, its node, and the nodes it could have had."""

    pod: str
    node: str
    choices: tuple[str, ...]
    feasible: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "node": self.node,
            "choices": list(self.choices),
            "feasible": list(self.feasible),
        }


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A reachable state that breaks a property, and the steps that reach it."""

    kind: Literal["deadlock", "invariant"]
    message: str
    steps: tuple[TraceStep, ...]
    # The cluster at the failing step: every node (scenario order) with its pods.
    cluster: tuple[tuple[Node, tuple[Pod, ...]], ...]
    # Pods not bound there, with why (FailedScheduling message, or what they wait for).
    pending: tuple[tuple[str, str], ...]
    invariant: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "invariant": self.invariant,
            "message": self.message,
            "steps": [s.to_json() for s in self.steps],
            "cluster": {n.metadata.name: [pod_key(p) for p in pods] for n, pods in self.cluster},
            "pending": dict(self.pending),
        }


@dataclass(slots=True)
class VerifyResult:
    """The verdict: ``proved`` (every order explored, nothing found), a counterexample, or a
    bounded run (``exhaustive`` false) that found nothing, which is not a proof."""

    source: str
    pods: int
    nodes: int
    any_feasible: bool
    exhaustive: bool
    states: int
    transitions: int
    depth: int
    orders: int | None = None
    samples: int = 0
    seed: int = 0
    max_states: int = DEFAULT_MAX_STATES
    counterexample: Counterexample | None = None
    invariants: list[str] = field(default_factory=list)
    reduction: str = ""
    assumptions: tuple[str, ...] = ASSUMPTIONS

    @property
    def ok(self) -> bool:
        return self.counterexample is None

    @property
    def proved(self) -> bool:
        return self.ok and self.exhaustive

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.source,
            "verdict": "proved"
            if self.proved
            else ("counterexample" if not self.ok else "bounded"),
            "ok": self.ok,
            "proved": self.proved,
            "mode": "any-feasible" if self.any_feasible else "best-score",
            "pods": self.pods,
            "nodes": self.nodes,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "orders": self.orders,
            "samples": self.samples,
            "seed": self.seed,
            "maxStates": self.max_states,
            "invariants": self.invariants,
            "reduction": self.reduction,
            "assumptions": list(self.assumptions),
            "counterexample": (
                self.counterexample.to_json() if self.counterexample is not None else None
            ),
        }


# ---------------------------------------------------------------------------------------------
# The search


# A state: per node (scenario order), the sorted pod classes on it; per class, how many of its
# pods are bound. Pods of a class are bound in member order, so the counts name the pods.
Contents = tuple[tuple[int, ...], ...]
State = tuple[Contents, tuple[int, ...]]


@dataclass(frozen=True, slots=True)
class _Options:
    feasible: tuple[int, ...]
    choices: tuple[int, ...]
    message: str


class _Explorer:
    """One cluster, moved from state to state, and the scheduling cycle run in it."""

    def __init__(
        self,
        sc: VerifyScenario,
        symmetry: Symmetry,
        *,
        any_feasible: bool,
        registry: Registry | None,
        features: Features,
    ) -> None:
        if registry is None:
            from topospread.plugins.registry import IN_TREE

            registry = IN_TREE
        self.sc = sc
        self.sym = symmetry
        self.any_feasible = any_feasible
        scenario = sc.scenario
        self.cluster: ClusterState = scenario.cluster()
        self.scheduler = Scheduler(
            self.cluster,
            scenario.config,
            registry,
            features,
            percentage_of_nodes_to_score=100,
            pod_disruption_budgets=[
                o for o in scenario.objects if isinstance(o, PodDisruptionBudget)
            ],
            fast=False,
            detail=False,
        )
        self.nodes = list(scenario.nodes)
        self.node_index = {n.metadata.name: i for i, n in enumerate(self.nodes)}
        k = symmetry.pod_classes
        self.members: list[list[Pod]] = [[] for _ in range(k)]
        for pod in scenario.queue:
            self.members[symmetry.pod_class[pod_key(pod)]].append(pod)
        position = {
            pod_key(p): (c, j) for c, ms in enumerate(self.members) for j, p in enumerate(ms)
        }
        # A class may be scheduled once these classes have at least these many pods bound.
        self.requires: list[tuple[tuple[int, int], ...]] = []
        for c in range(k):
            need: dict[int, int] = {}
            for key in sc.waits_for.get(pod_key(self.members[c][0]), ()) if self.members[c] else ():
                d, j = position[key]
                need[d] = max(need.get(d, 0), j + 1)
            self.requires.append(tuple(sorted(need.items())))
        contents: list[list[int]] = [[] for _ in self.nodes]
        for pod in scenario.pods:
            contents[self.node_index[pod.spec.node_name]].append(symmetry.pod_class[pod_key(pod)])
        self.initial: State = (
            tuple(tuple(sorted(c)) for c in contents),
            tuple(0 for _ in range(k)),
        )
        self.total = len(scenario.queue)
        # A class's id blind to which workload of its orbit it belongs to.
        self._blind: list[tuple[int, ...]] = [(0, c) for c in range(k)]
        for o, orbit in enumerate(symmetry.orbits):
            for roles in orbit:
                for r, c in enumerate(roles):
                    self._blind[c] = (1, o, r)
        self._zones = [zone for group in symmetry.zone_groups for zone in group]
        self._zone_group = [0] * len(self.nodes)
        for g, group in enumerate(symmetry.zone_groups):
            for zone in group:
                for i in zone:
                    self._zone_group[i] = g
        self._placed: dict[str, tuple[Pod, int]] = {}
        self._bound_copies: dict[tuple[str, int], Pod] = {}

    # -- moving the cluster

    def goto(self, state: State) -> None:
        """Bind and unbind queued pods so that the cluster holds ``state``."""
        contents, _ = state
        taken = [0] * len(self.members)
        want: dict[str, int] = {}
        for i, classes in enumerate(contents):
            for c in classes:
                members = self.members[c]
                if members:
                    want[pod_key(members[taken[c]])] = i
                    taken[c] += 1
        for key, (bound, i) in list(self._placed.items()):
            if want.get(key) != i:
                self.cluster.unbind(bound)
                del self._placed[key]
        for key, i in want.items():
            if key not in self._placed:
                pod = self._pod(key, i)
                self.cluster.bind(pod, self.nodes[i].metadata.name)
                self._placed[key] = (pod, i)

    def _pod(self, key: str, i: int) -> Pod:
        bound = self._bound_copies.get((key, i))
        if bound is None:
            c = self.sym.pod_class[key]
            pod = next(p for p in self.members[c] if pod_key(p) == key)
            bound = self._bound_copies[key, i] = _bound_to(pod, self.nodes[i].metadata.name)
        return bound

    # -- what can happen in a state

    def remaining(self, state: State) -> int:
        return self.total - sum(state[1])

    def pending(self, state: State) -> Iterator[tuple[int, Pod, bool]]:
        """Each class with pods left: its next pod, and whether its controller created it."""
        counts = state[1]
        for c, members in enumerate(self.members):
            if counts[c] < len(members):
                created = all(counts[d] >= n for d, n in self.requires[c])
                yield c, members[counts[c]], created

    def options(self, pod: Pod) -> _Options:
        """The scheduling cycle for ``pod`` in the current cluster: feasible nodes, and the
        ones the scheduler may choose (best total score, or every feasible one)."""
        fwk = self.scheduler.framework_for(pod)
        assert fwk is not None  # checked when loading
        algorithm = self.scheduler.algorithm
        state = CycleState()
        nodes = self.cluster.list()
        try:
            feasible, diagnosis = algorithm.find_nodes_that_fit_pod(fwk, state, pod, nodes)
            if not feasible:
                return _Options((), (), fit_error_message(len(nodes), diagnosis))
            names = [info.name for info in feasible]
            best = names
            if len(feasible) > 1 and not self.any_feasible:
                scores = algorithm.prioritize_nodes(fwk, state, pod, feasible)
                top = max(s.total_score for s in scores)
                best = [s.name for s in scores if s.total_score == top]
        except SchedulingError as err:
            return _Options((), (), err.status.message)
        index = self.node_index
        return _Options(
            tuple(sorted(index[n] for n in names)), tuple(sorted(index[n] for n in best)), ""
        )

    def violation(self) -> tuple[Invariant, str] | None:
        if not self.sc.invariants:
            return None
        placed = [(p, info.node) for info in self.cluster.list() for p in info.pods]
        for inv in self.sc.invariants:
            message = inv.violation(placed)
            if message is not None:
                return inv, message
        return None

    # -- states

    def successor(self, state: State, c: int, i: int) -> State:
        contents, counts = state
        on_node = list(contents[i])
        bisect.insort(on_node, c)
        new_contents = (*contents[:i], tuple(on_node), *contents[i + 1 :])
        new_counts = (*counts[:c], counts[c] + 1, *counts[c + 1 :])
        return new_contents, new_counts

    def canonical(self, state: State) -> Any:
        """A key equal for states that are images of each other under the symmetries: the
        state with its interchangeable workloads put in a standard order, then its zones and
        nodes sorted. Any image would be sound; the standard order only merges more."""
        contents, counts = self._order_workloads(state) if self.sym.orbits else state
        shape = self.sym.node_shape
        return (
            counts,
            tuple(
                tuple(
                    sorted(tuple(sorted((shape[i], contents[i]) for i in zone)) for zone in group)
                )
                for group in self.sym.zone_groups
            ),
        )

    def _order_workloads(self, state: State) -> State:
        """The image of ``state`` in which the workloads of each orbit come in the order of a
        description of their placement that no symmetry changes (ties keep their order)."""
        contents, counts = state
        blind = self._blind
        node_desc = []
        for zone_members in self._zones:
            zone_content = tuple(sorted(blind[c] for i in zone_members for c in contents[i]))
            for i in zone_members:
                node_desc.append(
                    (
                        i,
                        (
                            self._zone_group[i],
                            self.sym.node_shape[i],
                            zone_content,
                            tuple(sorted(blind[c] for c in contents[i])),
                        ),
                    )
                )
        desc_of = dict(node_desc)
        where: dict[int, list[Any]] = {}
        for i, classes in enumerate(contents):
            for c in classes:
                where.setdefault(c, []).append(desc_of[i])
        relabel = list(range(len(counts)))
        for orbit in self.sym.orbits:
            keyed = sorted(
                (tuple((counts[c], sorted(where.get(c, ()))) for c in roles), n)
                for n, roles in enumerate(orbit)
            )
            for target, (_, source) in enumerate(keyed):
                for c_from, c_to in zip(orbit[source], orbit[target], strict=True):
                    relabel[c_from] = c_to
        new_contents = tuple(tuple(sorted(relabel[c] for c in classes)) for classes in contents)
        new_counts = [0] * len(counts)
        for c, n in enumerate(counts):
            new_counts[relabel[c]] = n
        return new_contents, tuple(new_counts)

    def transitions(
        self, state: State, skip: set[int] | frozenset[int] = frozenset()
    ) -> tuple[list[tuple[int, int]], list[tuple[str, str]]]:
        """Every (class, node) the scheduler may bind next, but for the ``skip`` classes; and,
        for the pods that cannot move, why (their FailedScheduling message, or what they wait
        for)."""
        self.goto(state)
        out: list[tuple[int, int]] = []
        stuck: list[tuple[str, str]] = []
        for c, pod, created in self.pending(state):
            if not created or c in skip:
                continue
            opts = self.options(pod)
            out += [(c, i) for i in opts.choices]
            if not opts.choices:
                stuck.append((pod_key(pod), opts.message))
        return out, stuck

    def idle_twins(self, state: State) -> tuple[set[int], dict[int, int]]:
        """Classes whose moves mirror another's: of the interchangeable workloads with no pod
        bound yet, only the first needs exploring, and its moves stand for all of them.

        NOTE: exchanging two workloads of an orbit that have no pod bound leaves ``state``
        as it is, so it maps the second's moves onto the first's, successor for successor.
        Returns the classes to skip, and per class kept the number of workloads it stands for.
        """
        counts = state[1]
        skip: set[int] = set()
        weight: dict[int, int] = {}
        for orbit in self.sym.orbits:
            idle = [roles for roles in orbit if not any(counts[c] for c in roles)]
            if len(idle) > 1:
                for roles in idle[1:]:
                    skip.update(roles)
                for c in idle[0]:
                    weight[c] = len(idle)
        return skip, weight

    def waiting(self, state: State) -> list[tuple[str, str]]:
        """Pods not yet created in ``state``, with the pods they wait for."""
        out = []
        for c, _, created in self.pending(state):
            if created:
                continue
            for j in range(state[1][c], len(self.members[c])):
                p = self.members[c][j]
                waits = ", ".join(self.sc.waits_for.get(pod_key(p), ()))
                who = self.sc.origin.get(pod_key(p), "its controller")
                out.append((pod_key(p), f"not created yet: {who} waits for {waits} to be bound"))
        return out

    # -- counterexamples

    def replay(
        self, path: Sequence[tuple[int, int]], kind: Literal["deadlock", "invariant"]
    ) -> Counterexample:
        """The steps of ``path`` with the choices each had, and the failing state."""
        state = self.initial
        steps = []
        for c, i in path:
            self.goto(state)
            pod = self.members[c][state[1][c]]
            opts = self.options(pod)
            names = [n.metadata.name for n in self.nodes]
            steps.append(
                TraceStep(
                    pod_key(pod),
                    names[i],
                    tuple(names[j] for j in opts.choices),
                    tuple(names[j] for j in opts.feasible),
                )
            )
            state = self.successor(state, c, i)
        moves, stuck = self.transitions(state)
        pending = [*stuck, *self.waiting(state)]
        invariant = None
        if kind == "deadlock":
            left = self.remaining(state)
            message = (
                f"deadlock after {plural(len(path), 'binding')}: {plural(left, 'pod')} left "
                "and none can be placed"
            )
        else:
            found = self.violation()
            assert found is not None
            invariant = found[0].name
            message = f"invariant {found[0].name} ({found[0].describe()}) broken: {found[1]}"
            # Pods that could still move are pending too, with where they may go.
            names = [n.metadata.name for n in self.nodes]
            for c, pod, created in self.pending(state):
                if created and any(m[0] == c for m in moves):
                    where = ", ".join(names[i] for m, i in moves if m == c)
                    pending.append((pod_key(pod), f"may be placed on {where}"))
        cluster = tuple((n, tuple(self.cluster.infos[n.metadata.name].pods)) for n in self.nodes)
        return Counterexample(
            kind, message, tuple(steps), cluster, tuple(sorted(pending)), invariant
        )


def verify(
    scenario: VerifyScenario,
    *,
    any_feasible: bool = False,
    max_states: int = DEFAULT_MAX_STATES,
    seed: int = 0,
    progress: Callable[[VerifyProgress], None] | None = None,
    samples: int = DEFAULT_SAMPLES,
    symmetry: bool = True,
    registry: Registry | None = None,
    features: Features = DEFAULT_FEATURES,
) -> VerifyResult:
    """Explore every scheduling order (breadth first, states merged by symmetry) and report a
    proof, the shortest counterexample, or, past ``max_states``, a bounded check followed by
    ``samples`` random complete orders drawn from ``seed``. ``symmetry=False`` merges only
    identical states (the reference the reduction is tested against)."""
    sc = scenario
    keys = [pod_key(p) for p in (*sc.scenario.pods, *sc.scenario.queue)]
    sym = find_symmetry(sc) if symmetry else Symmetry.none(keys, len(sc.scenario.nodes))
    ex = _Explorer(sc, sym, any_feasible=any_feasible, registry=registry, features=features)
    result = VerifyResult(
        source=sc.source,
        pods=ex.total,
        nodes=len(ex.nodes),
        any_feasible=any_feasible,
        exhaustive=False,
        states=0,
        transitions=0,
        depth=0,
        max_states=max_states,
        seed=seed,
        invariants=[f"{inv.name}: {inv.describe()}" for inv in sc.invariants],
        reduction=sym.describe() if symmetry else "none",
    )

    # Breadth first over canonical states; each keeps the first state that reached it.
    index: dict[Any, int] = {ex.canonical(ex.initial): 0}
    states: list[State] = [ex.initial]
    parent: list[tuple[int, int, int]] = [(-1, -1, -1)]
    depth: list[int] = [0]
    successors: list[list[tuple[int, int]]] = []
    queue: deque[int] = deque([0])
    expanded = 0
    while queue:
        if len(states) > max_states:
            break
        sid = queue.popleft()
        state = states[sid]
        ex.goto(state)
        broken = ex.violation()
        if broken is not None:
            result.counterexample = ex.replay(_path(parent, sid), "invariant")
            break
        skip, weight = ex.idle_twins(state)
        moves, _ = ex.transitions(state, skip)
        if not moves and ex.remaining(state):
            result.counterexample = ex.replay(_path(parent, sid), "deadlock")
            break
        children = []
        for c, i in moves:
            nxt = ex.successor(state, c, i)
            key = ex.canonical(nxt)
            child = index.get(key)
            if child is None:
                child = index[key] = len(states)
                states.append(nxt)
                parent.append((sid, c, i))
                depth.append(depth[sid] + 1)
                queue.append(child)
            # Each pending pod of the class, in each idle twin workload, makes its own order.
            children.append((child, (len(ex.members[c]) - state[1][c]) * weight.get(c, 1)))
        successors.append(children)
        result.transitions += len(children)
        expanded += 1
        if progress is not None and expanded % PROGRESS_EVERY == 0:
            progress(VerifyProgress("search", len(states), depth[sid], len(queue)))
    result.states = len(states)
    if not queue and result.counterexample is None:
        result.exhaustive = True
        result.depth = max(depth)
        result.orders = _count_orders(successors)
        return result
    if result.counterexample is not None:
        # Breadth first: every state with fewer bindings than the counterexample was checked.
        result.depth = max(len(result.counterexample.steps) - 1, 0)
        return result
    # Every state fewer bindings deep than the first unexpanded one has been checked.
    result.depth = max(depth[queue[0]] - 1, 0)
    result.samples, result.counterexample = _sample(ex, samples, seed, progress)
    return result


def _path(parent: Sequence[tuple[int, int, int]], sid: int) -> list[tuple[int, int]]:
    out = []
    while parent[sid][0] >= 0:
        p, c, i = parent[sid]
        out.append((c, i))
        sid = p
    return out[::-1]


def _count_orders(successors: Sequence[Sequence[tuple[int, int]]]) -> int:
    """Complete scheduling orders: paths from the first state to a final one, a path being a
    sequence of pod-to-node bindings. ``successors`` holds (child, how many pods of the bound
    class were pending: each could have been the one). Every binding adds a pod, so children
    come after their parents."""
    orders = [0] * len(successors)
    for sid in range(len(successors) - 1, -1, -1):
        children = successors[sid]
        orders[sid] = sum(orders[c] * n for c, n in children) if children else 1
    return orders[0] if orders else 0


def _sample(
    ex: _Explorer,
    samples: int,
    seed: int,
    progress: Callable[[VerifyProgress], None] | None,
) -> tuple[int, Counterexample | None]:
    """Random complete orders: at each step a random pod that can move, then a random one of
    its nodes. Returns how many were run and the first counterexample met.

    NOTE: trying the created pods in a random order and taking the first that has a node
    draws uniformly among the pods that can move, with one scheduling cycle per step in the
    common case instead of one per pending pod."""
    rng = random.Random(seed)
    for n in range(samples):
        state = ex.initial
        path: list[tuple[int, int]] = []
        while True:
            ex.goto(state)
            if ex.violation() is not None:
                return n + 1, ex.replay(path, "invariant")
            candidates = [(c, pod) for c, pod, created in ex.pending(state) if created]
            rng.shuffle(candidates)
            move = None
            for c, pod in candidates:
                choices = ex.options(pod).choices
                if choices:
                    move = (c, rng.choice(choices))
                    break
            if move is None:
                if ex.remaining(state):
                    return n + 1, ex.replay(path, "deadlock")
                break
            path.append(move)
            state = ex.successor(state, *move)
        if progress is not None and (n + 1) % 16 == 0:
            progress(VerifyProgress("sample", 0, len(path), 0, n + 1))
    return samples, None
