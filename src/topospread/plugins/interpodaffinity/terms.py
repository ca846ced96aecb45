"""Pod (anti-)affinity terms as the scheduler parses them, and how a term matches a pod.

Upstream keeps this in the framework's PodInfo (pkg/scheduler/framework/types.go); only
InterPodAffinity reads it, so it lives beside the plugin here. The rules that decide outcomes:

- ``labelSelector``: nil selects no pod, ``{}`` selects every pod (in the term's namespaces);
- namespaces: with neither ``namespaces`` nor ``namespaceSelector`` the term covers the owning
  pod's own namespace; otherwise the listed names plus every namespace whose labels the
  ``namespaceSelector`` matches, where ``namespaceSelector: {}`` matches all namespaces and a nil
  one none;
- ``matchLabelKeys``/``mismatchLabelKeys`` are not read: since v1.29 the API server merges them
  into ``labelSelector`` when the pod is created (see :mod:`.match_label_keys`);
- a selector that does not parse drops every term of its kind (required affinity, required
  anti-affinity, preferred affinity, preferred anti-affinity) and is reported as a parse error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import msgspec

from topospread.api.types import (
    Affinity,
    Namespace,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    WeightedPodAffinityTerm,
)
from topospread.labels.selector import Selector, SelectorError, label_selector_as_selector

NamespaceLabels = Callable[[str], Mapping[str, str]]
"""The labels of a namespace by name (a namespace that is not listed has none)."""

_NO_LABELS: Final[Mapping[str, str]] = {}
_CONTENT_ENCODER: Final = msgspec.json.Encoder()


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A parsed PodAffinityTerm.

    Upstream: AffinityTerm (pkg/scheduler/framework/types.go, v1.35)
    """

    namespaces: frozenset[str]
    selector: Selector
    topology_key: str
    namespace_selector: Selector

    def matches(self, pod: Pod, namespace_labels: NamespaceLabels) -> bool:
        """Whether ``pod`` lies in the term's namespaces and carries labels its selector matches.

        ``namespace_labels`` is consulted only for a non-trivial ``namespaceSelector``.
        Upstream: AffinityTerm.Matches (pkg/scheduler/framework/types.go, v1.35); for the
        incoming pod's own terms upstream first unrolls the namespaceSelector into the names of
        the listed namespaces it matches (mergeAffinityTermNamespacesIfNotEmpty, plugin.go);
        looking the pod's namespace up instead gives the same answer for every listed
        namespace and treats an unlisted one as a namespace without labels.
        """
        meta = pod.metadata
        if meta.namespace in self.namespaces or self._selects_namespace(
            meta.namespace, namespace_labels
        ):
            return self.selector.matches(meta.labels)
        return False

    def _selects_namespace(self, namespace: str, namespace_labels: NamespaceLabels) -> bool:
        selector = self.namespace_selector
        if selector.is_nothing:
            return False
        if selector.empty:
            return True
        return selector.matches(namespace_labels(namespace))


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    """Upstream: WeightedAffinityTerm (pkg/scheduler/framework/types.go, v1.35)."""

    term: AffinityTerm
    weight: int


@dataclass(frozen=True, slots=True)
class PodAffinityTerms:
    """The four kinds of inter-pod affinity terms of one pod, parsed.

    ``parse_error`` is the aggregated text upstream's NewPodInfo returns ("" when every
    selector parsed); the kinds it names carry no terms.
    Upstream: the affinity fields of PodInfo (pkg/scheduler/framework/types.go, v1.35)
    """

    required_affinity_terms: tuple[AffinityTerm, ...] = ()
    required_anti_affinity_terms: tuple[AffinityTerm, ...] = ()
    preferred_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
    preferred_anti_affinity_terms: tuple[WeightedAffinityTerm, ...] = ()
    parse_error: str = ""


NO_TERMS: Final = PodAffinityTerms()


def namespaces_from_pod_affinity_term(pod: Pod, term: PodAffinityTerm) -> frozenset[str]:
    """The listed namespaces, or the pod's own when neither namespaces nor a selector is set.

    Upstream: getNamespacesFromPodAffinityTerm (pkg/scheduler/framework/types.go, v1.35)
    """
    if not term.namespaces and term.namespace_selector is None:
        return frozenset((pod.metadata.namespace,))
    return frozenset(term.namespaces)


def new_affinity_term(pod: Pod, term: PodAffinityTerm) -> AffinityTerm:
    """Parse one term; raises SelectorError when a selector does not parse.

    Upstream: newAffinityTerm (pkg/scheduler/framework/types.go, v1.35)
    """
    selector = label_selector_as_selector(term.label_selector)
    namespaces = namespaces_from_pod_affinity_term(pod, term)
    namespace_selector = label_selector_as_selector(term.namespace_selector)
    return AffinityTerm(
        namespaces=namespaces,
        selector=selector,
        topology_key=term.topology_key,
        namespace_selector=namespace_selector,
    )


def get_affinity_terms(pod: Pod, terms: Sequence[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
    """Upstream: GetAffinityTerms (pkg/scheduler/framework/types.go, v1.35)."""
    return tuple(new_affinity_term(pod, t) for t in terms)


def get_weighted_affinity_terms(
    pod: Pod, terms: Sequence[WeightedPodAffinityTerm]
) -> tuple[WeightedAffinityTerm, ...]:
    """Upstream: getWeightedAffinityTerms (pkg/scheduler/framework/types.go, v1.35)."""
    return tuple(
        WeightedAffinityTerm(new_affinity_term(pod, t.pod_affinity_term), t.weight) for t in terms
    )


def _aggregate(messages: Sequence[str]) -> str:
    """apimachinery's aggregate error text: one message, or ``[a, b]`` without repeats."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"


def parse_pod_affinity_terms(pod: Pod) -> PodAffinityTerms:
    """Parse every inter-pod affinity term of the pod, collecting parse errors per kind.

    Upstream: PodInfo.Update / NewPodInfo (pkg/scheduler/framework/types.go, v1.35)
    """
    affinity: Affinity | None = pod.spec.affinity
    if affinity is None or (affinity.pod_affinity is None and affinity.pod_anti_affinity is None):
        return NO_TERMS
    pa = affinity.pod_affinity
    paa = affinity.pod_anti_affinity
    errors: list[str] = []

    def required(kind: str, terms: Sequence[PodAffinityTerm]) -> tuple[AffinityTerm, ...]:
        try:
            return get_affinity_terms(pod, terms)
        except SelectorError as err:
            errors.append(f"{kind}: {err}")
            return ()

    def preferred(
        kind: str, terms: Sequence[WeightedPodAffinityTerm]
    ) -> tuple[WeightedAffinityTerm, ...]:
        try:
            return get_weighted_affinity_terms(pod, terms)
        except SelectorError as err:
            errors.append(f"{kind}: {err}")
            return ()

    required_affinity = required(
        "requiredAffinityTerms",
        pa.required_during_scheduling_ignored_during_execution if pa else [],
    )
    required_anti_affinity = required(
        "requiredAntiAffinityTerms",
        paa.required_during_scheduling_ignored_during_execution if paa else [],
    )
    preferred_affinity = preferred(
        "preferredAffinityTerms",
        pa.preferred_during_scheduling_ignored_during_execution if pa else [],
    )
    preferred_anti_affinity = preferred(
        "preferredAntiAffinityTerms",
        paa.preferred_during_scheduling_ignored_during_execution if paa else [],
    )
    return PodAffinityTerms(
        required_affinity_terms=required_affinity,
        required_anti_affinity_terms=required_anti_affinity,
        preferred_affinity_terms=preferred_affinity,
        preferred_anti_affinity_terms=preferred_anti_affinity,
        parse_error=_aggregate(errors) if errors else "",
    )


def has_pod_affinity(pod: Pod) -> bool:
    """A pod with a podAffinity or podAntiAffinity stanza (NodeInfo.PodsWithAffinity).

    Upstream: podWithAffinity (pkg/scheduler/framework/types.go, v1.35)
    """
    affinity = pod.spec.affinity
    return affinity is not None and (
        affinity.pod_affinity is not None or affinity.pod_anti_affinity is not None
    )


_ByObjects = tuple[PodAffinity | None, PodAntiAffinity | None, PodAffinityTerms]
_Objects = tuple[PodAffinity | None, PodAntiAffinity | None]

# NOTE: pods known to have podAffinity and podAntiAffinity equal to another pod's (admission's
# pods of one template keep their own objects where the selector merges changed nothing, equal
# to the first pod's: AdmissionMemo's key holds them), by the identity of their Affinity, each
# with the other pod's Affinity: the caches of parsed terms key them by its two objects, as if
# they were shared. An entry keeps both alive, so their ids cannot be reused.
TERMS_AS: Final[dict[int, tuple[Affinity, Affinity]]] = {}
_TERMS_AS_LIMIT: Final = 1 << 18


def same_pod_terms_as(pairs: Sequence[tuple[Pod, Pod]]) -> None:
    """Note that in each pair the first pod's podAffinity and podAntiAffinity are equal to the
    second's (what parsing reads beside the namespace): the caches of parsed terms then find
    the first pod's by the second's objects."""
    if len(TERMS_AS) + len(pairs) > _TERMS_AS_LIMIT:
        TERMS_AS.clear()
    terms_as = TERMS_AS
    for pod, like in pairs:
        mine = pod.spec.affinity
        if mine is not None:
            its = like.spec.affinity
            if its is not None and its is not mine:
                terms_as[id(mine)] = (mine, its)


def terms_objects(affinity: Affinity) -> _Objects:
    """The objects the caches of parsed terms key this affinity's podAffinity and
    podAntiAffinity by: another pod's equal ones, when ``same_pod_terms_as`` was told of
    them; else its own."""
    found = TERMS_AS.get(id(affinity))
    if found is not None and found[0] is affinity:
        affinity = found[1]
    return affinity.pod_affinity, affinity.pod_anti_affinity


class PodTermsCache:
    """Parsed terms of the cluster's pods, so that each pod is parsed once, not every cycle.

    NOTE: entries are keyed by ``id(pod)`` and keep the pod itself, so an id is never reused
    while its entry lives; a hit is confirmed by identity. Behind them, parsed terms are kept by
    what parsing reads (the pod's namespace, podAffinity and podAntiAffinity): first by the
    identity of those two objects (kept in the entry, confirmed as above; the pods of one
    template share them, or are known to have equal ones: ``terms_objects``), then by their
    content, so the pods of one template are
    parsed once. Pods are immutable, so the parsed terms stay valid. Each map is dropped whole
    when it grows past ``max_entries``.
    Upstream keeps the same data on each PodInfo in the scheduler cache.
    """

    __slots__ = ("_by_content", "_by_objects", "_entries", "_max_entries")

    def __init__(self, max_entries: int = 1 << 17) -> None:
        self._entries: dict[int, tuple[Pod, PodAffinityTerms]] = {}
        self._by_objects: dict[tuple[str, int, int], _ByObjects] = {}
        self._by_content: dict[bytes, PodAffinityTerms] = {}
        self._max_entries = max_entries

    def get(self, pod: Pod) -> PodAffinityTerms:
        affinity = pod.spec.affinity
        if affinity is None:
            return NO_TERMS
        pa, paa = affinity.pod_affinity, affinity.pod_anti_affinity
        if pa is None and paa is None:
            return NO_TERMS
        entry = self._entries.get(id(pod))
        if entry is not None and entry[0] is pod:
            return entry[1]
        namespace = pod.metadata.namespace
        by_objects = self._by_objects
        key_pa, key_paa = terms_objects(affinity)
        objects_key = (namespace, id(key_pa), id(key_paa))
        kept = by_objects.get(objects_key)
        if kept is not None and kept[0] is key_pa and kept[1] is key_paa:
            terms = kept[2]
        else:
            content = _CONTENT_ENCODER.encode((namespace, pa, paa))
            found = self._by_content.get(content)
            if found is None:
                found = parse_pod_affinity_terms(pod)
                if len(self._by_content) >= self._max_entries:
                    self._by_content.clear()
                self._by_content[content] = found
            terms = found
            if len(by_objects) >= self._max_entries:
                by_objects.clear()
            by_objects[objects_key] = (key_pa, key_paa, terms)
        if len(self._entries) >= self._max_entries:
            self._entries.clear()
        self._entries[id(pod)] = (pod, terms)
        return terms


def namespace_labels_getter(lookup: Callable[[str], Namespace | None]) -> NamespaceLabels:
    """Wrap ``ObjectLister.namespace`` into a labels lookup (an unlisted namespace: no labels).

    Upstream: GetNamespaceLabelsSnapshot (plugin.go, v1.35), which likewise assumes an empty
    label set when the namespace cannot be read.
    """

    return _NamespaceLabelsOf(lookup)


@dataclass(frozen=True, slots=True)
class _NamespaceLabelsOf:
    """namespace_labels_getter's lookup (a class, not a closure: snapshots pickle it)."""

    lookup: Callable[[str], Namespace | None]

    def __call__(self, name: str) -> Mapping[str, str]:
        ns = self.lookup(name)
        return _NO_LABELS if ns is None else ns.metadata.labels
