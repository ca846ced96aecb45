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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from topospread.api.admission_hints import AdmissionHints
from topospread.api.claim_validation import prepare_claim
from topospread.api.loader import (
    Object,
    UnknownObject,
    decode_manifest,
    decode_object,
    load_manifests,
    read_yaml_documents,
)
from topospread.api.object_validation import describe_object, validate_object
from topospread.api.storage import STORAGE_KINDS, PersistentVolumeClaim, StorageObject
from topospread.api.types import (
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from topospread.cluster.live import read_cluster
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.state import ClusterState
from topospread.cluster.storage import StorageState
from topospread.errors import ManifestError, ValidationError
from topospread.framework.config import SchedulerConfig, decode_config, default_config
from topospread.plugins.interpodaffinity.terms import same_pod_terms_as
from topospread.plugins.noderesources.resource_helpers import same_resources_as
from topospread.plugins.registry import ARGS_VALIDATORS
from topospread.simulator.controllers.claims import admit_claim, ephemeral_claims
from topospread.simulator.controllers.kinds import LeftOut, makes_pods
from topospread.simulator.decision import is_terminal
from topospread.simulator.eviction import validate_pdb
from topospread.simulator.pod_admission import (
    AdmissionMemo,
    admit_all,
    admit_node,
    priority_classes,
)

_SCENARIO_ORDER: Final = ("nodes", "pods", "queue", "objects", "config")
_SCENARIO_KEYS: Final = frozenset(_SCENARIO_ORDER)

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
    # and pod (anti)affinity are equal, which spares the scheduler's start a look at each
    # (``cluster()``); and the queued pods, each with such a pod: their pod (anti)affinity is.
    resource_pairs: list[tuple[Pod, Pod]] = field(default_factory=list)
    queue_pairs: list[tuple[Pod, Pod]] = field(default_factory=list)

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
        same_pod_terms_as(self.resource_pairs)
        same_pod_terms_as(self.queue_pairs)
        storage = StorageState(o for o in self.objects if isinstance(o, STORAGE_KINDS))
        for pod in self.queue:  # the ephemeral volume controller, for the pods to schedule
            for claim in ephemeral_claims(pod):
                if claim.key not in storage.pvcs:
                    storage.create_claim(admit_claim(claim, storage.classes.values()))
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
            if isinstance(obj, PersistentVolumeClaim):
                obj = prepare_claim(obj)
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

    def build(self, config: SchedulerConfig, hints: AdmissionHints | None = None) -> Scenario:
        """The scenario of the objects added, every pod admitted (``hints``: those the read
        found for its pods, see ``admit_all``)."""
        warnings = [*config.warnings, *LeftOut(self.ignored, self.pod_makers).notes()]
        nodes = self._check_nodes()
        priorities = priority_classes(o for _, o in self.objects if isinstance(o, PriorityClass))
        memo = AdmissionMemo(priorities)
        seen: dict[tuple[str, str], str] = {}
        pods, pairs = admit_all(self.pods, memo, seen, nodes, hints)
        queue, queue_pairs = admit_all(self.queue, memo, seen, None, hints)
        return Scenario(
            nodes=list(nodes.values()),
            pods=pods,
            queue=queue,
            objects=[o for _, o in self.objects],
            config=config,
            warnings=warnings,
            resource_pairs=pairs,
            queue_pairs=queue_pairs,
        )

    def _check_nodes(self) -> dict[str, Node]:
        nodes: dict[str, Node] = {}
        for where, raw in self.nodes:
            node = admit_node(raw, where, nodes)
            nodes[node.metadata.name] = node
        return nodes


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


def _manifest_kinds(docs: Sequence[Any]) -> str:
    """The kinds of a file's Kubernetes objects (documents with apiVersion and kind, a List's
    items too), in order and each once, at most five named; "" when it holds none."""
    seen: dict[str, None] = {}
    for doc in docs:
        if not isinstance(doc, Mapping) or "apiVersion" not in doc or "kind" not in doc:
            continue
        items = doc.get("items")
        if isinstance(items, list) and str(doc["kind"]).endswith("List"):
            for item in items:
                if isinstance(item, Mapping):
                    # A typed list's items (a PodList's) leave their kind out.
                    seen.setdefault(str(item.get("kind", str(doc["kind"])[:-4])), None)
        else:
            seen.setdefault(str(doc["kind"]), None)
    named = list(seen)
    return ", ".join(named[:5]) + (f" and {len(named) - 5} more kinds" if len(named) > 5 else "")


def load_scenario(
    path: Path,
    *,
    extensions: Mapping[str, Callable[[Any, str, ScenarioBuilder], None]] | None = None,
    manifests_hint: str = "",
) -> Scenario:
    """Read a scenario document (YAML or JSON).

    ``extensions`` lets a command accept more keys than ``schedule`` reads: each is called with
    the key's raw value, its location for error messages, and the builder (to add objects and
    queued pods, which are then admitted and validated with the rest). ``manifests_hint``: how
    the command takes Kubernetes manifests instead, said when the file holds them.
    """
    extra = dict(extensions or {})
    allowed = _SCENARIO_KEYS | set(extra)
    names = ", ".join([*_SCENARIO_ORDER, *sorted(extra)])
    docs = read_yaml_documents(path)
    kinds = _manifest_kinds(docs)
    if kinds:
        raise ManifestError(
            f"{path}: holds Kubernetes objects ({kinds}), not a scenario (one mapping with "
            f"keys {names}){manifests_hint}"
        )
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
        for obj in decode_manifest(raw, where):
            b.add(obj, where)
    for key, extend in sorted(extra.items()):
        if doc.get(key) is not None:
            extend(doc[key], f"{path}: {key}", b)
    raw_config = doc.get("config")
    config = (
        decode_config(raw_config, f"{path}: config", ARGS_VALIDATORS)
        if raw_config
        else default_config()
    )
    return b.build(config)


def build_scenario(
    objects: Iterable[tuple[str, Object]],
    config: SchedulerConfig,
    *,
    hints: AdmissionHints | None = None,
) -> Scenario:
    """A scenario from decoded objects, each with where it came from (which prefixes its errors).

    Bound pods are existing, unbound ones are queued in the order given; nodes, owners and lookup
    objects are collected; every pod is admitted and validated as ``load_scenario`` does, with
    the admission ``hints`` the read found, if any.
    """
    b = ScenarioBuilder()
    bound, queued = b.pods, b.queue
    for where, obj in objects:
        if type(obj) is Pod:  # what add does with a pod: bound ones exist, others are queued
            (bound if obj.spec.node_name else queued).append((where, obj))
        else:
            b.add(obj, where)
    return b.build(config, hints)


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
    return decode_config(docs[0], str(path), ARGS_VALIDATORS)


def _kind(obj: Any) -> str:
    return str(getattr(obj, "kind", type(obj).__name__))
