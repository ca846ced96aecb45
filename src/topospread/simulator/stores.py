"""The simulation's stores of pods and workloads, as the controllers' informers hold them.

``PodStore`` keeps every pod (bound or not) by key, counts every change (``version``) so that
views of them (the pods of a namespace, sorted) are rebuilt only after one, and indexes them by
controller and by label, so that a Deployment's sync reads its own pods, not every pod, and
journals every key stored or removed, so that a ReplicaSet's claim kept from its last sync
reads only the pods changed since (simulator/controllers/claim_index.py).
``WorkloadStore`` keeps the workloads by key and counts their changes per namespace, which is
what lets a quiet controller skip its sync (simulator/controller_manager.py). Both keep their
indexes through pickling (simulator/checkpoint.py's ``IndexedDict``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import Any, Final, TypeAlias

from topospread.api.types import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    LabelSelector,
    Pod,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
)
from topospread.errors import ManifestError
from topospread.simulator.checkpoint import IndexedDict, restore_dict_subclass
from topospread.simulator.controllers.common import get_controller_of

Workload: TypeAlias = (
    Deployment | ReplicaSet | ReplicationController | StatefulSet | DaemonSet | CronJob | Job
)
WORKLOAD_TYPES: Final = (
    Deployment,
    ReplicaSet,
    ReplicationController,
    StatefulSet,
    DaemonSet,
    CronJob,
    Job,
)
WorkloadKey: TypeAlias = tuple[str, str, str]  # (kind, namespace, name)

_NONE: Final[frozenset[str]] = frozenset()
# The PodStore's journal keeps at least this many changes beyond four per pod stored.
_JOURNAL_SLACK: Final = 4096

KIND_NAMES: Final[Mapping[str, str]] = {
    "deployment": "Deployment",
    "deployments": "Deployment",
    "deploy": "Deployment",
    "replicaset": "ReplicaSet",
    "replicasets": "ReplicaSet",
    "rs": "ReplicaSet",
    "statefulset": "StatefulSet",
    "statefulsets": "StatefulSet",
    "sts": "StatefulSet",
    "daemonset": "DaemonSet",
    "daemonsets": "DaemonSet",
    "ds": "DaemonSet",
    "replicationcontroller": "ReplicationController",
    "replicationcontrollers": "ReplicationController",
    "rc": "ReplicationController",
    "job": "Job",
    "jobs": "Job",
    "cronjob": "CronJob",
    "cronjobs": "CronJob",
    "cj": "CronJob",
}
# Controllers sync in this order in every round (then each kind's objects by namespace/name);
# a CronJob before the Jobs it creates.
KIND_ORDER: Final = (
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "StatefulSet",
    "DaemonSet",
    "CronJob",
    "Job",
)


def parse_workload_ref(ref: Any, where: str) -> WorkloadKey:
    """A step's ``workload``: ``[namespace/]kind/name``, kind as kubectl spells it (its
    singular, plural or short name); a ManifestError naming ``where`` for any other value."""
    if not isinstance(ref, str):
        raise ManifestError(f"{where}: workload: expected [namespace/]kind/name")
    parts = ref.split("/")
    if len(parts) == 2:
        parts = ["default", *parts]
    if len(parts) != 3 or not all(parts):
        raise ManifestError(
            f'{where}: workload: Invalid value: "{ref}": expected [namespace/]kind/name, '
            "e.g. deployment/web"
        )
    namespace, kind_name, name = parts
    kind = KIND_NAMES.get(kind_name.lower())
    if kind is None:
        raise ManifestError(
            f'{where}: workload: Invalid value: "{ref}": unknown kind "{kind_name}" '
            "(deployment, replicaset, replicationcontroller, statefulset, daemonset, "
            "cronjob, job)"
        )
    return kind, namespace, name


def workload_key(obj: Workload) -> WorkloadKey:
    return (obj.kind, obj.metadata.namespace, obj.metadata.name)


def describe_workload(key: WorkloadKey) -> str:
    """``deployment default/web``, as reports name a workload."""
    return f"{key[0].lower()} {key[1]}/{key[2]}"


def parent_reported(obj: Workload, parent_kind: str) -> bool:
    """Whether reports name the object's controller for its pods: a Deployment for its
    ReplicaSets, a CronJob for its Jobs."""
    return (isinstance(obj, ReplicaSet) and parent_kind == "Deployment") or (
        isinstance(obj, Job) and parent_kind == "CronJob"
    )


class PodStore(IndexedDict[str, Pod]):
    """The simulation's pods by key, counting every change (``version``) so that views of
    them (the pods of a namespace, sorted) are rebuilt only after one, indexed by controller
    and by label so that a Deployment's sync reads its own pods, not every pod, and journalled
    (``changed_since``) so that a claim kept between syncs reads only the pods changed."""

    def __init__(self) -> None:
        super().__init__()
        self.version = 0
        # (namespace, kind, name) and uid of the controller -> pod keys; orphans by namespace;
        # (namespace, label key, label value) -> pod keys.
        self.by_owner: dict[tuple[str, str, str], set[str]] = {}
        self.by_owner_uid: dict[str, set[str]] = {}
        self.orphans: dict[str, set[str]] = {}
        self.by_label: dict[tuple[str, str, str], set[str]] = {}
        # Every pod stored or removed (before and after) since the last take_changed().
        self.changed: list[Pod] = []
        # The keys stored or removed since the last take_touched() (the reports' index).
        self.touched: set[str] = set()
        # Every key stored or removed, in order (a key once per change), from the absolute
        # position ``_journal_base`` on: what the fast path's claims (controllers/
        # claim_index.py) read to bring themselves up to date (``changed_since``).
        self._journal: list[str] = []
        self._journal_base = 0
        # Views rebuilt once per change (``version``): every pod in key order, and by namespace.
        self._sorted: tuple[int, list[tuple[str, Pod]]] = (-1, [])
        self._by_namespace: tuple[int, dict[str, list[Pod]]] = (-1, {})

    def sorted_items(self) -> list[tuple[str, Pod]]:
        """Every pod by key, in key order; sorted once per change of the pods, not per call
        (the list is shared: do not modify it)."""
        version, ordered = self._sorted
        if version != self.version:
            ordered = [(k, self[k]) for k in sorted(self)]
            self._sorted = (self.version, ordered)
        return ordered

    def in_namespace(self, namespace: str) -> list[Pod]:
        """The namespace's pods by key; grouped once per change of the pods, not per call."""
        version, groups = self._by_namespace
        if version != self.version:
            groups = {}
            for _, p in self.sorted_items():
                groups.setdefault(p.metadata.namespace, []).append(p)
            self._by_namespace = (self.version, groups)
        return list(groups.get(namespace, ()))

    def take_changed(self) -> list[Pod]:
        changed, self.changed = self.changed, []
        return changed

    def take_touched(self) -> set[str]:
        touched, self.touched = self.touched, set()
        return touched

    def journal_position(self) -> int:
        """How many changes (a key stored or removed) the store has seen: a position in its
        journal, to pass to ``changed_since`` later."""
        return self._journal_base + len(self._journal)

    def changed_since(self, position: int) -> list[str] | None:
        """The keys stored or removed since ``journal_position()`` returned ``position``, in
        order and with repeats; None when the journal no longer reaches back that far (the
        reader then starts afresh from the indexes)."""
        start = position - self._journal_base
        if start < 0:
            return None
        return self._journal[start:]

    def _log(self, key: str) -> None:
        journal = self._journal
        journal.append(key)
        if len(journal) > 4 * len(self) + _JOURNAL_SLACK:
            # NOTE: readers that fell behind the entries dropped read the indexes afresh;
            # dropping the older half keeps what readers synced lately still need.
            half = len(journal) // 2
            del journal[:half]
            self._journal_base += half

    def __reduce__(self) -> tuple[Any, ...]:
        # A snapshot carries no journal: a reader restored with it behind the journal's end
        # starts afresh (``changed_since`` is None), one that was at the end stays there.
        state = dict(self.__dict__)
        state["_journal"] = []
        state["_journal_base"] = self.journal_position()
        return (restore_dict_subclass, (type(self), dict(self), state))

    def _index(self, key: str, pod: Pod, add: bool) -> None:
        meta = pod.metadata
        ns = meta.namespace
        buckets: list[tuple[dict[Any, set[str]], Any]] = [
            (self.by_label, (ns, k, v)) for k, v in meta.labels.items()
        ]
        ref = get_controller_of(meta)
        if ref is None:
            buckets.append((self.orphans, ns))
        else:
            buckets.append((self.by_owner, (ns, ref.kind, ref.name)))
            if ref.uid:
                buckets.append((self.by_owner_uid, ref.uid))
        for index, bucket in buckets:
            if add:
                index.setdefault(bucket, set()).add(key)
            else:
                keys = index.get(bucket)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[bucket]

    def __setitem__(self, key: str, pod: Pod) -> None:
        self.version += 1
        self.touched.add(key)
        self._log(key)
        old = self.get(key)
        if old is not None:
            self._index(key, old, False)
            self.changed.append(old)
        super().__setitem__(key, pod)
        self._index(key, pod, True)
        self.changed.append(pod)

    def __delitem__(self, key: str) -> None:
        self.version += 1
        self.touched.add(key)
        self._log(key)
        old = self[key]
        self._index(key, old, False)
        self.changed.append(old)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        if key in self:
            pod = self[key]
            del self[key]
            return pod
        return super().pop(key, *default)

    def clear(self) -> None:
        self.version += 1
        self.changed += self.values()
        self.touched.update(self.keys())
        for key in self:
            self._log(key)
        super().clear()
        for index in (self.by_owner, self.by_owner_uid, self.orphans, self.by_label):
            index.clear()

    def claimable(self, namespace: str, owner: Any) -> tuple[AbstractSet[str], ...]:
        """The index's own sets (not copies: not to be modified) of the keys of the pods a
        claim by ``owner`` may take: those whose controller reference names it by kind and
        name, by UID (of any namespace), and the namespace's orphans."""
        uid = owner.metadata.uid
        return (
            self.by_owner.get((namespace, owner.kind, owner.metadata.name), _NONE),
            self.by_owner_uid.get(uid, _NONE) if uid else _NONE,
            self.orphans.get(namespace, _NONE),
        )

    def owned_by(self, namespace: str, owner: Any) -> set[str]:
        """Keys of the pods whose controller reference names ``owner`` (by kind and name, or
        by UID): a superset of those ``is_controlled_by`` accepts."""
        keys = set(self.by_owner.get((namespace, owner.kind, owner.metadata.name), ()))
        if owner.metadata.uid:
            keys |= self.by_owner_uid.get(owner.metadata.uid, set())
        return keys

    def selectable_by(self, namespace: str, selector: LabelSelector | None) -> set[str] | None:
        """Keys of a superset of the namespace's pods the selector matches: those carrying the
        rarest of its ``matchLabels`` (or of one ``In`` expression's values); None when it
        names no such label (then any pod may match)."""
        if selector is None:
            return None
        options: list[set[str]] = [
            self.by_label.get((namespace, k, v), set()) for k, v in selector.match_labels.items()
        ]
        for e in selector.match_expressions:
            if e.operator == "In":
                union: set[str] = set()
                for v in e.values:
                    union |= self.by_label.get((namespace, e.key, v), set())
                options.append(union)
        if not options:
            return None
        rarest = options[0]
        for keys in options[1:]:
            if len(keys) < len(rarest):
                rarest = keys
        return set(rarest)


class WorkloadStore(IndexedDict[WorkloadKey, Workload]):
    """The workloads by key, counting every change per namespace (``versions``): a
    controller's sync reads the workloads of its own namespace (a Deployment, its
    ReplicaSets), so a sync that did nothing need not run again until one changes."""

    def __init__(self) -> None:
        super().__init__()
        self.versions: dict[str, int] = {}

    def _bump(self, key: WorkloadKey) -> None:
        self.versions[key[1]] = self.versions.get(key[1], 0) + 1

    def __setitem__(self, key: WorkloadKey, obj: Workload) -> None:
        self._bump(key)
        super().__setitem__(key, obj)

    def __delitem__(self, key: WorkloadKey) -> None:
        self._bump(key)
        super().__delitem__(key)

    def pop(self, key: WorkloadKey, *default: Any) -> Any:
        if key in self:
            self._bump(key)
        return super().pop(key, *default)

    def clear(self) -> None:
        for key in self:
            self._bump(key)
        super().clear()


def iter_controller_refs(
    workloads: Mapping[WorkloadKey, Workload],
) -> Iterable[tuple[WorkloadKey, Workload]]:
    """Workloads in report order: kind, namespace, name; a Deployment's ReplicaSets and a
    CronJob's Jobs left out (their pods are reported under the Deployment, the CronJob)."""
    order = {kind: i for i, kind in enumerate(KIND_ORDER)}
    for key in sorted(workloads, key=lambda k: (order[k[0]], k[1], k[2])):
        obj = workloads[key]
        ref = get_controller_of(obj.metadata)
        if ref is not None and parent_reported(obj, ref.kind):
            continue
        yield key, obj


__all__ = [
    "KIND_NAMES",
    "KIND_ORDER",
    "WORKLOAD_TYPES",
    "PodStore",
    "Workload",
    "WorkloadKey",
    "WorkloadStore",
    "describe_workload",
    "iter_controller_refs",
    "parent_reported",
    "parse_workload_ref",
    "workload_key",
]
