"""The annotations the API server reads as more than text on create: a node's
``scheduler.alpha.kubernetes.io/taints`` and ``scheduler.alpha.kubernetes.io/preferAvoidPods``
(JSON, decoded and checked), and a pod's (or a pod template's) mirror-pod, tolerations (JSON),
deletion-cost, seccomp and AppArmor annotations. The scheduler reads none of them (the taints
annotation is not the node's taints; the NodePreferAvoidPods plugin is gone): only the API
server's refusals are mirrored.

Checked with the v1.35 default feature gates (PodDeletionCost on: an invalid cost is refused).
Go ranges over the annotation map in random order; the seccomp and AppArmor annotations are
checked here in sorted key order.

Gone from validation long before v1.35, so not checked: the pod's
``scheduler.alpha.kubernetes.io/affinity`` annotation. Not checked here: a seccomp or AppArmor
annotation against the security context's fields (ValidatePodCreate and ValidatePodTemplateSpec
require them to agree): ``security_validation.py`` compares them.

Upstream: ValidateNodeSpecificAnnotations, ValidateTaintsInNodeAnnotations,
ValidateAvoidPodsInNodeAnnotations, validatePreferAvoidPodsEntry, ValidatePodSpecificAnnotations,
ValidateTolerationsInPodAnnotations, ValidateSeccompPodAnnotations, ValidateSeccompProfile,
ValidateAppArmorPodAnnotations, ValidateAppArmorProfileFormat
(pkg/apis/core/validation/validation.go); GetAvoidPodsFromNodeAnnotations
(component-helpers/scheduling/corev1); GetTaintsFromNodeAnnotations,
GetTolerationsFromPodAnnotations,
GetDeletionCostFromPodAnnotations (pkg/apis/core/helper/helpers.go); v1.35.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from topospread.api.field import FieldError, Path, go_quote, internal_error, invalid, required
from topospread.api.go_json import (
    BOOL,
    INT64,
    STRING,
    TIME,
    GoPointer,
    GoScalar,
    GoSlice,
    GoStruct,
    go_unmarshal,
)
from topospread.api.taint_validation import validate_taints, validate_tolerations
from topospread.api.types import Container, EphemeralContainer, PodSpec, Taint, Toleration
from topospread.api.volume_source_validation import validate_local_descending_path

TAINTS: Final = "scheduler.alpha.kubernetes.io/taints"
PREFER_AVOID_PODS: Final = "scheduler.alpha.kubernetes.io/preferAvoidPods"
MIRROR_POD: Final = "kubernetes.io/config.mirror"
TOLERATIONS: Final = "scheduler.alpha.kubernetes.io/tolerations"
POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
SECCOMP_POD: Final = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_PREFIX: Final = "container.seccomp.security.alpha.kubernetes.io/"
APPARMOR_CONTAINER_PREFIX: Final = "container.apparmor.security.beta.kubernetes.io/"

MIRROR_NEEDS_NODE: Final = "must set spec.nodeName if mirror pod annotation is set"
NOT_INT32: Final = "must be a 32bit integer"
BAD_SECCOMP: Final = "must be a valid seccomp profile"
CONTAINER_NOT_FOUND: Final = "container not found"
NOT_A_CONTROLLER: Final = "must point to a controller"
# validatePreferAvoidPodsEntry dereferences podController.controller unchecked: a podController
# without it makes the API server panic, and it answers 500 with this text.
APISERVER_PANIC: Final = (
    "the API server panics on a podController without controller (nil pointer dereference) "
    "and answers: This request caused apiserver to panic. Look in the logs for details."
)

_SECCOMP_NAMED: Final = frozenset({"runtime/default", "docker/default", "unconfined"})
_APPARMOR_NAMED: Final = frozenset({"", "runtime/default", "unconfined"})

# The Go types the two JSON annotations are decoded into (core/v1's AvoidPods; the internal
# API's []core.Toleration).
_OWNER_REFERENCE: Final = GoStruct(
    "v1.OwnerReference",
    {
        "apiVersion": STRING,
        "kind": STRING,
        "name": STRING,
        "uid": GoScalar("types.UID", "string"),
        "controller": GoPointer(BOOL),
        "blockOwnerDeletion": GoPointer(BOOL),
    },
)
_AVOID_PODS: Final = GoStruct(
    "v1.AvoidPods",
    {
        "preferAvoidPods": GoSlice(
            "[]v1.PreferAvoidPodsEntry",
            GoStruct(
                "v1.PreferAvoidPodsEntry",
                {
                    "podSignature": GoStruct(
                        "v1.PodSignature", {"podController": GoPointer(_OWNER_REFERENCE)}
                    ),
                    "evictionTime": TIME,
                    "reason": STRING,
                    "message": STRING,
                },
            ),
        )
    },
)
# The internal types' fields have no JSON tags: keys match their Go names, case aside, and
# Go's errors name them so (``Toleration.TolerationSeconds``).
_TAINT_EFFECT: Final = GoScalar("core.TaintEffect", "string")
_TOLERATIONS: Final = GoSlice(
    "[]core.Toleration",
    GoStruct(
        "core.Toleration",
        {
            "Key": STRING,
            "Operator": GoScalar("core.TolerationOperator", "string"),
            "Value": STRING,
            "Effect": _TAINT_EFFECT,
            "TolerationSeconds": GoPointer(INT64),
        },
    ),
)
_TAINTS: Final = GoSlice(
    "[]core.Taint",
    GoStruct(
        "core.Taint",
        {"Key": STRING, "Value": STRING, "Effect": _TAINT_EFFECT, "TimeAdded": GoPointer(TIME)},
    ),
)


class ApiServerPanic(Exception):
    """Validation that would make the API server panic: the request fails with a 500."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(str(error))
        self.error = error


def validate_node_annotations(annotations: Mapping[str, str], path: Path) -> list[FieldError]:
    """A node's taints and preferAvoidPods annotations, each when not empty. The taints: Go's
    decoding error of their JSON (reported at ``path``), else the taints checked as
    ``spec.taints`` is. The preferAvoidPods: Go's decoding error (at ``<path>.AvoidPods``), else
    each entry's pod signature, which must name a controller. Raises ApiServerPanic for an
    entry whose podController has no controller.

    Upstream: ValidateNodeSpecificAnnotations, ValidateTaintsInNodeAnnotations,
    ValidateAvoidPodsInNodeAnnotations, validatePreferAvoidPodsEntry (core validation.go,
    v1.35)
    """
    errs = _taints(annotations[TAINTS], path) if annotations.get(TAINTS) else []
    text = annotations.get(PREFER_AVOID_PODS, "")
    if not text:
        return errs
    avoid, said = go_unmarshal(text, _AVOID_PODS)
    if said is not None:
        return [*errs, invalid(path.child("AvoidPods"), PREFER_AVOID_PODS, said)]
    entries = (avoid or {}).get("preferAvoidPods") or []
    for i, entry in enumerate(entries):
        at = path.child(PREFER_AVOID_PODS).index(i).child("PodSignature")
        controller_ref = ((entry or {}).get("podSignature") or {}).get("podController")
        if controller_ref is None:
            errs.append(required(at))
            continue
        controller = controller_ref.get("controller")
        at = at.child("PodController", "Controller")
        if controller is None:
            raise ApiServerPanic(internal_error(at, APISERVER_PANIC))
        if not controller:
            errs.append(invalid(at, False, NOT_A_CONTROLLER))
    return errs


def node_annotations_valid(annotations: Mapping[str, str]) -> bool:
    """Whether ``validate_node_annotations`` finds nothing (and does not raise): True at once
    for a node without the annotation."""
    if not annotations.get(PREFER_AVOID_PODS) and not annotations.get(TAINTS):
        return True
    try:
        return not validate_node_annotations(annotations, Path.root("metadata"))
    except ApiServerPanic:
        return False


def mirror_pod_errors(
    annotations: Mapping[str, str], node_name: str, path: Path
) -> list[FieldError]:
    """A mirror pod (the kubelet's copy of a static pod) must name its node.

    Upstream: ValidatePodSpecificAnnotations, its first check (core validation.go, v1.35)
    """
    value = annotations.get(MIRROR_POD)
    if value is None or node_name:
        return []
    return [invalid(path.key(MIRROR_POD), value, MIRROR_NEEDS_NODE)]


def pod_annotation_errors(
    annotations: Mapping[str, str], spec: PodSpec, path: Path
) -> list[FieldError]:
    """The pod-specific annotations after the mirror-pod check (``mirror_pod_errors``): the
    tolerations annotation's JSON and tolerations, the deletion cost, the seccomp profiles and
    the AppArmor profiles with the containers they name. Quick for a pod with none of them.

    Upstream: ValidatePodSpecificAnnotations (core validation.go, v1.35), all but its first
    check
    """
    errs: list[FieldError] = []
    if annotations.get(TOLERATIONS):
        errs += _tolerations(annotations[TOLERATIONS], path)
    cost = annotations.get(POD_DELETION_COST)
    if cost is not None and not deletion_cost_valid(cost):
        errs.append(invalid(path.key(POD_DELETION_COST), cost, NOT_INT32))
    seccomp = annotations.get(SECCOMP_POD)
    if seccomp is not None:
        errs += _seccomp_profile(seccomp, path.child(SECCOMP_POD))
    profiled = [k for k in annotations if k.startswith("container.")]
    for key in sorted(profiled):
        if key.startswith(SECCOMP_CONTAINER_PREFIX):
            errs += _seccomp_profile(annotations[key], path.child(key))
    for key in sorted(profiled):
        if key.startswith(APPARMOR_CONTAINER_PREFIX):
            errs += _apparmor(key, annotations[key], spec, path)
    return errs


def deletion_cost_valid(value: str) -> bool:
    """Whether the deletion cost parses: an int32 in decimal, no sign but ``-``, no leading
    zero.

    Upstream: GetDeletionCostFromPodAnnotations, validFirstDigit (core helper, v1.35)
    """
    if not value or not (value[0] == "-" or value == "0" or "1" <= value[0] <= "9"):
        return False
    return _DECIMAL.fullmatch(value) is not None and -(2**31) <= int(value) < 2**31


_DECIMAL: Final = re.compile(r"-?[0-9]+")


def _tolerations(text: str, path: Path) -> list[FieldError]:
    """Upstream: ValidateTolerationsInPodAnnotations (core validation.go, v1.35)"""
    decoded, said = go_unmarshal(text, _TOLERATIONS)
    if said is not None:
        return [invalid(path, TOLERATIONS, said)]
    tolerations = [_toleration(item or {}) for item in decoded or []]
    if not tolerations:
        return []
    return validate_tolerations(tolerations, path.child(TOLERATIONS))


def _toleration(fields: Mapping[str, Any]) -> Toleration:
    return Toleration(
        key=fields.get("Key") or "",
        operator=fields.get("Operator") or "",
        value=fields.get("Value") or "",
        effect=fields.get("Effect") or "",
        toleration_seconds=fields.get("TolerationSeconds"),
    )


def _taints(text: str, path: Path) -> list[FieldError]:
    """Upstream: ValidateTaintsInNodeAnnotations (core validation.go, v1.35)"""
    decoded, said = go_unmarshal(text, _TAINTS)
    if said is not None:
        return [invalid(path, TAINTS, said)]
    taints = [
        Taint(
            key=(item or {}).get("Key") or "",
            value=(item or {}).get("Value") or "",
            effect=(item or {}).get("Effect") or "",
            time_added=(item or {}).get("TimeAdded"),
        )
        for item in decoded or []
    ]
    return validate_taints(taints, path.child(TAINTS)) if taints else []


def _seccomp_profile(profile: str, path: Path) -> list[FieldError]:
    """Upstream: ValidateSeccompProfile (core validation.go, v1.35)"""
    if profile in _SECCOMP_NAMED:
        return []
    if profile.startswith("localhost/"):
        return validate_local_descending_path(profile.removeprefix("localhost/"), path)
    return [invalid(path, profile, BAD_SECCOMP)]


def _apparmor(key: str, profile: str, spec: PodSpec, path: Path) -> list[FieldError]:
    """The container the key names must be one of the pod's; the profile ``runtime/default``,
    ``unconfined``, ``localhost/...`` or empty.

    Upstream: ValidateAppArmorPodAnnotations, ValidateAppArmorProfileFormat (core
    validation.go, v1.35)
    """
    errs: list[FieldError] = []
    name = key.removeprefix(APPARMOR_CONTAINER_PREFIX)
    if not _has_container(name, spec.init_containers, spec.containers, spec.ephemeral_containers):
        errs.append(invalid(path.key(key), name, CONTAINER_NOT_FOUND))
    if profile not in _APPARMOR_NAMED and not profile.startswith("localhost/"):
        detail = f"invalid AppArmor profile name: {go_quote(profile)}"
        errs.append(invalid(path.key(key), profile, detail))
    return errs


def _has_container(name: str, *groups: Sequence[Container | EphemeralContainer]) -> bool:
    return any(c.name == name for group in groups for c in group)
