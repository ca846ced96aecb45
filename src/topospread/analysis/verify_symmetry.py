"""The symmetries of a verify scenario, which let the search merge states that are images of
each other.

Pods that differ only in identity (names, labels no selector reads) are one pod class, and a
node's content is a multiset of classes; nodes that differ only in hostname-like labels (a
distinct value per node, never read by value) are interchangeable within their zone; zones with
the same nodes (and the same standing in every node selector) are interchangeable; and
workloads alike but for the value of one pod label that nothing else names (shard "0" and "1")
are interchangeable. Soundness matters more than reduction: whatever cannot be shown
interchangeable stays apart. tests/test_verify.py checks the verdicts against the unreduced
search on random clusters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from topospread.analysis.verify_scenario import VerifyScenario, plural, pod_key
from topospread.api.types import (
    LABEL_TOPOLOGY_ZONE,
    Deployment,
    LabelSelector,
    Node,
    ObjectMeta,
    Pod,
    PodAffinityTerm,
    ReplicationController,
    Service,
    TopologySpreadConstraint,
)
from topospread.plugins.helper.storage import claim_name_of

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
    if node_reads.names_read or _reads_volumes(sc):
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


def _reads_volumes(sc: VerifyScenario) -> bool:
    """Some pod has a claim: its PV's node affinity (or the StorageClass's allowedTopologies)
    reads node labels that no pod spec shows, so nodes and zones are not interchangeable."""
    pods = (*sc.scenario.pods, *sc.scenario.queue)
    return any(claim_name_of(p, v) is not None for p in pods for v in p.spec.volumes)


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
