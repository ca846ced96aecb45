"""Pods and nodes admitted as the API server admits them on create: defaulted, matchLabelKeys
merged into selectors, priority resolved from its PriorityClass, then validated with the API
server's messages; and ``AdmissionMemo``, which admits the pods of one template once.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

import msgspec

from topospread.api.admission import prepare_for_create
from topospread.api.admission_hints import AdmissionHints, admission_key
from topospread.api.apps_validation import template_error
from topospread.api.defaults import default_node, default_pod
from topospread.api.quick_validation import images_trimmed, pod_fields_valid
from topospread.api.types import Affinity, Node, Pod, PodSpec, PriorityClass
from topospread.api.validation import (
    PodSpecErrors,
    pod_spec_errors,
    validate_node,
    validate_pod,
)
from topospread.errors import ValidationError

# Built-in PriorityClasses every cluster has (pkg/apis/scheduling: SystemPriorityClasses).
SYSTEM_PRIORITY_CLASSES: Final[Mapping[str, int]] = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}


def admit_all(
    located: Iterable[tuple[str, Pod]],
    memo: AdmissionMemo,
    seen: dict[tuple[str, str], str],
    nodes_by_name: Mapping[str, Node] | None,
    hints: AdmissionHints | None = None,
) -> tuple[list[Pod], list[tuple[Pod, Pod]]]:
    """Each pod admitted, in order, and each with a pod whose resources it shares (the first
    of its template, or itself); the first invalid one, or the first repeat of a namespace and
    name (``seen`` holds those admitted before, with where each was read), or (when
    ``nodes_by_name`` is given) the first bound to no such node, stops it with a
    ValidationError. ``hints`` (those the read found) spare the work of finding each pod's
    template and checking its fields again."""
    out: list[Pod] = []
    pairs: list[tuple[Pod, Pod]] = []
    admit_valid_like = memo.admit_valid_like
    hint_of = hints.get if hints else _no_hint
    for where, pod in located:
        found = admit_valid_like(pod, hint_of(pod))
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


def _no_hint(_pod: Pod) -> None:
    return None


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
                _pod_terms(admitted) != _pod_terms(pod),
                admitted.spec,
                admitted,
                spec_errors,
                # A template's own errors (the last) are not a pod's.
                not any(spec_errors[:5])
                and images_trimmed(admitted.spec.containers)
                and images_trimmed(admitted.spec.init_containers),
            )
        pod = admitted
    else:
        pod = kept.apply(pod)
        spec_errors = kept.spec_errors
    errors = validate_pod(pod, spec_errors=spec_errors, from_template=bool(template))
    if errors:
        first = template_error(template, errors[0]) if template else str(errors[0])
        raise ValidationError(f"{label}: {first}")
    return pod


@dataclass(frozen=True, slots=True)
class _Admitted:
    """What admission made of one template: whether it changed the pod, and its pod
    (anti)affinity (the selector merges), the spec fields it sets, the template's first pod
    as admitted, the errors of the pod's labels, annotations and spec (``pod_spec_errors``),
    and whether it is valid for a pod."""

    changed: bool
    merged: bool
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

        NOTE: where the merges changed the template's pod (anti)affinity, the pod is given the
        first pod's merged objects (shared, as its other fields); where they did not, it keeps
        its own, equal to the first pod's (the memo key holds them): a bound pod of a cluster
        dump is then the very object read, and nothing of it is made again or freed. The
        caches of parsed terms find the pods of one template alike either way: by the shared
        objects, or as ``same_pod_terms_as`` tells them (``Scenario.cluster``).
        """
        spec = self.spec
        affinity = self._shared_affinity(pod.spec.affinity) if self.merged else pod.spec.affinity
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


def _pod_terms(pod: Pod) -> tuple[int, int]:
    """The identity of the pod's podAffinity and podAntiAffinity objects."""
    affinity = pod.spec.affinity
    if affinity is None:
        return id(None), id(None)
    return id(affinity.pod_affinity), id(affinity.pod_anti_affinity)


class AdmissionMemo:
    """Admission's work per pod template, for one set of PriorityClasses: the pods a
    controller makes from one template differ in their names, their nodes and their volumes
    (each its own ``kube-api-access-…``), which admission copies as they are.

    NOTE: exact because the key holds every field that defaulting (containers, init
    containers, pod-level resources), the selector merges (labels, pod affinity and
    anti-affinity, topology spread constraints), the Priority plugin (priority,
    priorityClassName, preemptionPolicy, and the classes, fixed per memo) and
    ``pod_spec_errors`` read (those, and annotations, restartPolicy, node selector,
    tolerations, scheduling gates, overhead, the pod's and the containers' security
    contexts, os, ephemeral containers, hostNetwork, which defaulting reads too:
    tests/test_admission.py varies each); and
    ``_Admitted.apply`` sets exactly the fields those steps change. Name, generateName,
    namespace, node affinity (a DaemonSet's pods each name their node there), nodeName,
    hostname and subdomain (a StatefulSet names each pod's hostname after it), which the rest
    of the validation reads, are checked for each pod.
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

    def admit_valid_like(
        self, pod: Pod, hint: tuple[bytes, bool] | None = None
    ) -> tuple[Pod, Pod] | None:
        """``admit_valid``, with the template's first pod (as admitted), whose resources the
        pod shares. ``hint``, the pod's admission hint (``AdmissionHints.get``), stands for
        its key and ``pod_fields_valid(pod)``.

        NOTE: the pod's own fields are checked as read, not as admitted: ``apply`` sets none of
        those ``pod_fields_valid`` reads (metadata, volumes, node affinity, nodeName,
        scheduling gates, hostname, subdomain), so they are the admitted pod's.
        """
        key, fields_valid = (self.key(pod), None) if hint is None else hint
        kept = self.admitted.get(key)
        if kept is None or not kept.valid:
            return None
        if fields_valid is None:
            fields_valid = pod_fields_valid(pod)
        return (kept.apply(pod), kept.first) if fields_valid else None

    # The key of a pod's template (``admission_key``).
    key: Final = staticmethod(admission_key)


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
