"""Scheduling inputs: a scenario document, or manifests as ``kubectl get -o yaml`` prints them.

A scenario is a mapping ``{nodes, pods, queue, objects, config}``: Node manifests, bound pods
(``spec.nodeName`` set), the pods to schedule in queue order, owner and lookup objects
(Services, ReplicaSets, StatefulSets, ReplicationControllers, Namespaces, PriorityClasses) and an
optional KubeSchedulerConfiguration. Plain manifest files, and a live cluster read through
``cluster.live``, are split by kind the same way: bound pods are existing, unbound ones are
queued in file (or list) order. Pods in a terminal phase (Succeeded, Failed) are kept, as kubectl
shows them, but kube-scheduler never sees them: they are not in ``Scenario.cluster()`` and, if
unbound, are reported as not scheduled.

Every pod is admitted as the API server admits it: matchLabelKeys merged into selectors,
priority resolved from its PriorityClass; then validated with the API server's messages. An
invalid object stops the run with one message naming the file, the object and the field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec

from topospread.api.admission import prepare_for_create
from topospread.api.defaults import default_node, default_pod
from topospread.api.loader import (
    Object,
    UnknownObject,
    decode_manifests,
    decode_object,
    load_manifests,
    read_yaml_documents,
)
from topospread.api.object_validation import describe_object, validate_object
from topospread.api.quick_validation import images_trimmed, pod_fields_valid
from topospread.api.storage import STORAGE_KINDS, StorageObject
from topospread.api.types import (
    Affinity,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PodSpec,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.api.validation import (
    PodSpecErrors,
    pod_spec_errors,
    validate_node,
    validate_pod,
)
from topospread.cluster.live import read_cluster
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.state import ClusterState
from topospread.cluster.storage import StorageState
from topospread.errors import ManifestError, ValidationError
from topospread.framework.config import SchedulerConfig, decode_config, default_config
from topospread.plugins.noderesources.resource_helpers import same_resources_as
from topospread.simulator.controllers.claims import admit_claim, ephemeral_claims
from topospread.simulator.controllers.kinds import LeftOut, makes_pods
from topospread.simulator.decision import is_terminal
from topospread.simulator.eviction import validate_pdb

_SCENARIO_ORDER: Final = ("nodes", "pods", "queue", "objects", "config")
_SCENARIO_KEYS: Final = frozenset(_SCENARIO_ORDER)

# Built-in PriorityClasses every cluster has (pkg/apis/scheduling: SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES: Final[Mapping[str, int]] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}

Owner = (
    Service
    | ReplicationController
    | ReplicaSet
    | StatefulSet
    | Namespace
    | PriorityClass
    | PodDisruptionBudget
    | StorageObject
)
_OWNER_TYPES: Final = (
    Service,
    ReplicationController,
    ReplicaSet,
    StatefulSet,
    Namespace,
    PriorityClass,
    PodDisruptionBudget,
    *STORAGE_KINDS,
)


@dataclass(slots=True)
class Scenario:
    """Validated inputs for one scheduling run."""

    nodes: list[Node]
    pods: list[Pod]
    queue: list[Pod]
    objects: list[Owner]
    config: SchedulerConfig
    warnings: list[str] = field(default_factory=list)
    # Bound pods, each with a pod admission found of its template (or itself): their resources
    # are equal, which spares the scheduler's start a look at each (``cluster()``).
    resource_pairs: list[tuple[Pod, Pod]] = field(default_factory=list)

    @property
    def terminal_pods(self) -> list[Pod]:
        """Bound pods that have finished (Succeeded, Failed): kept, but not in the cluster."""
        return [p for p in self.pods if is_terminal(p)]

    def cluster(self) -> ClusterState:
        """A fresh ClusterState holding the nodes and the bound pods kube-scheduler sees: those
        not in a terminal phase (``terminal_pods`` are the others)."""
        store = ObjectStore(
            services=[o for o in self.objects if isinstance(o, Service)],
            replication_controllers=[
                o for o in self.objects if isinstance(o, ReplicationController)
            ],
            replica_sets=[o for o in self.objects if isinstance(o, ReplicaSet)],
            stateful_sets=[o for o in self.objects if isinstance(o, StatefulSet)],
            namespaces=[o for o in self.objects if isinstance(o, Namespace)],
        )
        same_resources_as(self.resource_pairs)
        storage = StorageState(o for o in self.objects if isinstance(o, STORAGE_KINDS))
        for pod in self.queue:  # the ephemeral volume controller, for the pods to schedule
            for claim in ephemeral_claims(pod):
                if claim.key not in storage.pvcs:
                    storage.add(admit_claim(claim, storage.classes.values()))
        return ClusterState(
            self.nodes,
            [p for p in self.pods if not is_terminal(p)],
            store,
            [o for o in self.objects if isinstance(o, PriorityClass)],
            storage,
        )


@dataclass(slots=True)
class ScenarioBuilder:
    """Collects objects from several sources, then checks them together."""

    nodes: list[tuple[str, Node]] = field(default_factory=list)
    pods: list[tuple[str, Pod]] = field(default_factory=list)
    queue: list[tuple[str, Pod]] = field(default_factory=list)
    objects: list[tuple[str, Owner]] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)
    # Objects that make pods no controller here expands (by ``Kind (apiVersion)``).
    pod_makers: Counter[str] = field(default_factory=Counter)

    def add(self, obj: Any, where: str, *, queue: bool | None = None) -> None:
        if isinstance(obj, Node):
            self.nodes.append((where, obj))
        elif isinstance(obj, Pod):
            bound = bool(obj.spec.node_name)
            if queue is True and bound:
                raise ManifestError(
                    f"{where}: spec.nodeName: Forbidden: a queued pod must not be bound "
                    f'(it names node "{obj.spec.node_name}"); list bound pods under pods'
                )
            if queue is False and not bound:
                raise ManifestError(
                    f"{where}: spec.nodeName: Required value: pods under pods are bound pods; "
                    "list pods to schedule under queue"
                )
            (self.pods if bound else self.queue).append((where, obj))
        elif isinstance(obj, _OWNER_TYPES):
            errors = validate_object(obj)
            if errors:
                raise ValidationError(f"{where} ({describe_object(obj)}): {errors[0]}")
            if isinstance(obj, PodDisruptionBudget):
                validate_pdb(obj, where)
            self.objects.append((where, obj))
        elif isinstance(obj, UnknownObject) and makes_pods(obj):
            self.pod_makers[f"{obj.kind} ({obj.api_version})"] += 1
        elif isinstance(obj, UnknownObject):
            self.ignored[obj.kind] += 1
        else:
            # A workload in a cluster dump (--nodes, --cluster) is not expanded: its pods are
            # in the dump already, bound, so it is left out like any object no one reads; but
            # not an invalid one, which kubectl apply would not have let through.
            errors = validate_object(obj)
            if errors:
                raise ValidationError(f"{where} ({describe_object(obj)}): {errors[0]}")
            self.ignored[_kind(obj)] += 1

    def build(self, config: SchedulerConfig) -> Scenario:
        warnings = LeftOut(self.ignored, self.pod_makers).notes()
        nodes = self._check_nodes()
        priorities = priority_classes(o for _, o in self.objects if isinstance(o, PriorityClass))
        memo = AdmissionMemo(priorities)
        seen: dict[tuple[str, str], str] = {}
        pods, pairs = _admit_all(self.pods, memo, seen, nodes)
        queue, _ = _admit_all(self.queue, memo, seen, None)
        return Scenario(
            nodes=list(nodes.values()),
            pods=pods,
            queue=queue,
            objects=[o for _, o in self.objects],
            config=config,
            warnings=warnings,
            resource_pairs=pairs,
        )

    def _check_nodes(self) -> dict[str, Node]:
        nodes: dict[str, Node] = {}
        for where, raw in self.nodes:
            node = admit_node(raw, where, nodes)
            nodes[node.metadata.name] = node
        return nodes


def _admit_all(
    located: Iterable[tuple[str, Pod]],
    memo: AdmissionMemo,
    seen: dict[tuple[str, str], str],
    nodes_by_name: Mapping[str, Node] | None,
) -> tuple[list[Pod], list[tuple[Pod, Pod]]]:
    """Each pod admitted, in order, and each with a pod whose resources it shares (the first
    of its template, or itself); the first invalid one, or the first repeat of a namespace and
    name (``seen`` holds those admitted before, with where each was read), or (when
    ``nodes_by_name`` is given) the first bound to no such node, stops it with a
    ValidationError."""
    out: list[Pod] = []
    pairs: list[tuple[Pod, Pod]] = []
    admit_valid_like = memo.admit_valid_like
    for where, pod in located:
        found = admit_valid_like(pod)
        if found is None:  # the first of its template, or invalid: find what is wrong
            admitted = like = admit_pod(pod, memo.priorities, _pod_label(where, pod), memo=memo)
        else:
            admitted, like = found
        meta = admitted.metadata
        # A valid namespace and name hold no "/": the pair is as unique as "namespace/name".
        key = (meta.namespace, meta.name)
        if key in seen:
            raise ValidationError(
                f'{_pod_label(where, pod)}: metadata.name: Duplicate value: "{meta.name}" '
                f"(also at {seen[key]})"
            )
        seen[key] = where
        if nodes_by_name is not None and admitted.spec.node_name not in nodes_by_name:
            raise ValidationError(
                f"{_pod_label(where, pod)}: spec.nodeName: Not found: "
                f'"{admitted.spec.node_name}": no such node'
            )
        out.append(admitted)
        pairs.append((admitted, like))
    return out, pairs


def _pod_label(where: str, pod: Pod) -> str:
    """How errors name the pod: where it was read, its namespace and name."""
    return f"{where} (Pod {pod.metadata.namespace}/{pod.metadata.name})"


def admit_node(raw: Node, where: str, existing: Container[str] = ()) -> Node:
    """The node as the API server stores it: defaulted and validated, its name not among
    ``existing``; a ValidationError naming ``where``, the node and the field otherwise."""
    node = default_node(raw)
    name = node.metadata.name
    label = f"{where} (Node {name})"
    errors = validate_node(node)
    if errors:
        raise ValidationError(f"{label}: {errors[0]}")
    if name in existing:
        raise ValidationError(f'{label}: metadata.name: Duplicate value: "{name}"')
    return node


def admit_pod(
    pod: Pod,
    priorities: Mapping[str, PriorityClass | int],
    label: str,
    *,
    template: str = "",
    memo: AdmissionMemo | None = None,
) -> Pod:
    """The pod as the API server stores it on create: defaulted, matchLabelKeys merged into its
    selectors, priority resolved; a ValidationError prefixed with ``label`` if it is invalid.

    A pod made from a workload's template names the field where the workload keeps it
    (``template``, e.g. ``spec.template``), as the API server validates the template there.
    ``memo`` (made for these very ``priorities``) keeps what admission made of each template,
    so that the pods made from one are admitted once.
    """
    if memo is not None and memo.priorities is not priorities:
        memo = None
    key = memo.key(pod) if memo is not None else b""
    kept = memo.admitted.get(key) if memo is not None else None
    spec_errors: PodSpecErrors
    if kept is None:
        admitted = prepare_for_create(default_pod(pod))
        admitted = _admit_priority(admitted, priorities, label)
        spec_errors = pod_spec_errors(admitted)
        if memo is not None:
            memo.admitted[key] = _Admitted(
                admitted is not pod,
                admitted.spec,
                admitted,
                spec_errors,
                not any(spec_errors)
                and images_trimmed(admitted.spec.containers)
                and images_trimmed(admitted.spec.init_containers),
            )
        pod = admitted
    else:
        pod = kept.apply(pod)
        spec_errors = kept.spec_errors
    errors = validate_pod(pod, spec_errors=spec_errors, from_template=bool(template))
    if errors:
        first = str(errors[0])
        raise ValidationError(f"{label}: {template + '.' if template else ''}{first}")
    return pod


@dataclass(frozen=True, slots=True)
class _Admitted:
    """What admission made of one template: whether it changed the pod, the spec fields it
    sets, the template's first pod as admitted, the errors of the pod's labels, annotations
    and spec (``pod_spec_errors``), and whether it is valid for a pod."""

    changed: bool
    spec: PodSpec
    # The template's first pod as admitted: its resources are those of every pod of the
    # template (the key holds them; apply sets them).
    first: Pod
    spec_errors: PodSpecErrors
    # No errors in spec_errors, and the images (in the key too) are trimmed, as a pod's must be.
    valid: bool

    def apply(self, pod: Pod) -> Pod:
        """``pod``, of this template, as admission makes it: the fields admission sets taken
        from the template's first pod (shared: they are frozen, and never changed in place).

        NOTE: the pod's inter-pod (anti)affinity is the first pod's objects too, merged or not:
        the memo key holds them, so they are equal; shared, they let the caches of parsed terms
        (``PodTermsCache``) find the pods of one template by identity, not by an encoding.
        """
        spec = self.spec
        affinity = self._shared_affinity(pod.spec.affinity)
        if not self.changed:
            if affinity is pod.spec.affinity:
                return pod
            return msgspec.structs.replace(
                pod, spec=msgspec.structs.replace(pod.spec, affinity=affinity)
            )
        return msgspec.structs.replace(
            pod,
            spec=msgspec.structs.replace(
                pod.spec,
                containers=spec.containers,
                init_containers=spec.init_containers,
                resources=spec.resources,
                affinity=affinity,
                topology_spread_constraints=spec.topology_spread_constraints,
                priority=spec.priority,
                preemption_policy=spec.preemption_policy,
            ),
        )

    def _shared_affinity(self, affinity: Affinity | None) -> Affinity | None:
        """The pod's affinity with the first pod's pod (anti)affinity (the same object where
        neither has a node affinity); as it is where it has no pod (anti)affinity."""
        first = self.spec.affinity
        if (
            affinity is None
            or first is None
            or affinity is first
            or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None)
        ):
            return affinity
        if affinity.node_affinity is None and first.node_affinity is None:
            return first
        # The merges change pod (anti)affinity only: the pod keeps its node affinity.
        return msgspec.structs.replace(
            affinity,
            pod_affinity=first.pod_affinity,
            pod_anti_affinity=first.pod_anti_affinity,
        )


class AdmissionMemo:
    """Admission's work per pod template, for one set of PriorityClasses: the pods a
    controller makes from one template differ in their names, their nodes and their volumes
    (each its own ``kube-api-access-…``), which admission copies as they are.

    NOTE: exact because the key holds every field that defaulting (containers, init
    containers, pod-level resources), the selector merges (labels, pod affinity and
    anti-affinity, topology spread constraints), the Priority plugin (priority,
    priorityClassName, preemptionPolicy, and the classes, fixed per memo) and
    ``pod_spec_errors`` read (those, and annotations, restartPolicy, node selector,
    tolerations, scheduling gates, overhead: tests/test_admission.py varies each); and
    ``_Admitted.apply`` sets exactly the fields those steps change. Name, generateName,
    namespace, node affinity (a DaemonSet's pods each name their node there) and nodeName,
    which the rest of the validation reads, are checked for each pod.
    """

    __slots__ = ("admitted", "priorities")

    def __init__(self, priorities: Mapping[str, PriorityClass | int]) -> None:
        self.priorities = priorities
        self.admitted: dict[bytes, _Admitted] = {}

    def admit_valid(self, pod: Pod) -> Pod | None:
        """``admit_pod(pod, self.priorities, ..., memo=self)`` when the pod's template is known
        and valid (``_Admitted.valid``) and so are the pod's own fields (``pod_fields_valid``);
        None otherwise, for ``admit_pod`` to admit it, or to find what is wrong with it."""
        found = self.admit_valid_like(pod)
        return None if found is None else found[0]

    def admit_valid_like(self, pod: Pod) -> tuple[Pod, Pod] | None:
        """``admit_valid``, with the template's first pod (as admitted), whose resources the
        pod shares."""
        kept = self.admitted.get(self.key(pod))
        if kept is None or not kept.valid:
            return None
        admitted = kept.apply(pod)
        return (admitted, kept.first) if pod_fields_valid(admitted) else None

    @staticmethod
    def key(pod: Pod) -> bytes:
        meta, spec = pod.metadata, pod.spec
        affinity = spec.affinity
        return _MEMO_KEY.encode(
            (
                meta.labels,
                meta.annotations,
                spec.containers,
                spec.init_containers,
                spec.restart_policy,
                spec.resources,
                None if affinity is None else (affinity.pod_affinity, affinity.pod_anti_affinity),
                spec.topology_spread_constraints,
                spec.node_selector,
                spec.tolerations,
                spec.scheduling_gates,
                spec.overhead,
                spec.priority,
                spec.priority_class_name,
                spec.preemption_policy,
            )
        )


_MEMO_KEY: Final = msgspec.msgpack.Encoder()


def priority_classes(classes: Iterable[PriorityClass]) -> dict[str, PriorityClass | int]:
    """PriorityClasses by name, the system classes included (values for those)."""
    out: dict[str, PriorityClass | int] = dict(SYSTEM_PRIORITY_CLASSES)
    for pc in classes:
        out[pc.metadata.name] = pc
    return out


def _admit_priority(pod: Pod, classes: Mapping[str, PriorityClass | int], label: str) -> Pod:
    """Set spec.priority from the pod's PriorityClass, or from the global default class.

    Upstream: the Priority admission plugin (plugin/pkg/admission/priority, v1.35)
    """
    if pod.spec.priority is not None:
        return pod  # read back from a cluster: already resolved
    name = pod.spec.priority_class_name
    value: int
    policy: str | None = None
    if name:
        pc = classes.get(name)
        if pc is None:
            raise ValidationError(
                f'{label}: pods "{pod.metadata.name}" is forbidden: '
                f"no PriorityClass with name {name} was found"
            )
        value = pc if isinstance(pc, int) else pc.value
        policy = None if isinstance(pc, int) else pc.preemption_policy
    else:
        defaults = [
            c for c in classes.values() if isinstance(c, PriorityClass) and c.global_default
        ]
        value = defaults[0].value if defaults else 0
        policy = defaults[0].preemption_policy if defaults else None
    spec = msgspec.structs.replace(pod.spec, priority=value)
    if spec.preemption_policy is None:
        spec = msgspec.structs.replace(spec, preemption_policy=policy or "PreemptLowerPriority")
    return msgspec.structs.replace(pod, spec=spec)


def list_of(
    doc: Mapping[str, Any], key: str, source: str, what: str = "manifests"
) -> Sequence[Any]:
    """The list under ``key`` of a scenario document ([] when absent)."""
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ManifestError(f"{source}: {key}: expected a list of {what}")
    return value


def load_scenario(
    path: Path,
    *,
    extensions: Mapping[str, Callable[[Any, str, ScenarioBuilder], None]] | None = None,
) -> Scenario:
    """Read a scenario document (YAML or JSON).

    ``extensions`` lets a command accept more keys than ``schedule`` reads: each is called with
    the key's raw value, its location for error messages, and the builder (to add objects and
    queued pods, which are then admitted and validated with the rest).
    """
    extra = dict(extensions or {})
    allowed = _SCENARIO_KEYS | set(extra)
    names = ", ".join([*_SCENARIO_ORDER, *sorted(extra)])
    docs = read_yaml_documents(path)
    if len(docs) != 1 or not isinstance(docs[0], Mapping):
        raise ManifestError(f"{path}: a scenario is one mapping with keys {names}")
    doc = docs[0]
    unknown = sorted(set(doc) - allowed)
    if unknown:
        raise ManifestError(f"{path}: unknown key {unknown[0]!r}; a scenario has {names}")
    b = ScenarioBuilder()
    for i, raw in enumerate(list_of(doc, "nodes", str(path))):
        b.add(decode_object(raw, Node, f"{path}: nodes[{i}]"), f"{path}: nodes[{i}]")
    for key, queue in (("pods", False), ("queue", True)):
        for i, raw in enumerate(list_of(doc, key, str(path))):
            where = f"{path}: {key}[{i}]"
            b.add(decode_object(raw, Pod, where), where, queue=queue)
    for i, raw in enumerate(list_of(doc, "objects", str(path))):
        where = f"{path}: objects[{i}]"
        for obj in decode_manifests(raw, where):
            b.add(obj, where)
    for key, extend in sorted(extra.items()):
        if doc.get(key) is not None:
            extend(doc[key], f"{path}: {key}", b)
    raw_config = doc.get("config")
    config = decode_config(raw_config, f"{path}: config") if raw_config else default_config()
    return b.build(config)


def build_scenario(objects: Iterable[tuple[str, Object]], config: SchedulerConfig) -> Scenario:
    """A scenario from decoded objects, each with where it came from (which prefixes its errors).

    Bound pods are existing, unbound ones are queued in the order given; nodes, owners and lookup
    objects are collected; every pod is admitted and validated as ``load_scenario`` does.
    """
    b = ScenarioBuilder()
    bound, queued = b.pods, b.queue
    for where, obj in objects:
        if type(obj) is Pod:  # what add does with a pod: bound ones exist, others are queued
            (bound if obj.spec.node_name else queued).append((where, obj))
        else:
            b.add(obj, where)
    return b.build(config)


def load_manifest_files(files: Sequence[Path], config_file: Path | None = None) -> Scenario:
    """Nodes, pods and objects from manifest files; unbound pods are queued in file order."""
    return build_scenario(
        (
            (f"{path}: object {i + 1}", obj)
            for path in files
            for i, obj in enumerate(load_manifests(path))
        ),
        _config_or_default(config_file),
    )


def load_live_scenario(
    kubeconfig: str | None, context: str | None, config_file: Path | None = None
) -> Scenario:
    """Nodes, pods and objects read from a live cluster, read-only, as from ``kubectl get``
    files: bound pods are existing, unbound ones are queued in the API server's list order.

    ``kubeconfig``/``context`` None: the default kubeconfig and its current context. Needs the
    ``live`` extra; without it, a ``ClusterAccessError`` says how to install it.
    """
    live = read_cluster(kubeconfig, context)
    scenario = build_scenario(
        ((live.source, obj) for obj in live.objects), _config_or_default(config_file)
    )
    scenario.warnings[:0] = live.warnings
    return scenario


def _config_or_default(config_file: Path | None) -> SchedulerConfig:
    return load_config(config_file) if config_file is not None else default_config()


def load_config(path: Path) -> SchedulerConfig:
    docs = read_yaml_documents(path)
    if len(docs) != 1:
        raise ManifestError(f"{path}: expected one KubeSchedulerConfiguration document")
    return decode_config(docs[0], str(path))


def _kind(obj: Any) -> str:
    return str(getattr(obj, "kind", type(obj).__name__))
