"""What the API server refuses in a pod's seccomp and AppArmor profiles on create: the profile
fields themselves (pod-level and each container's), and the deprecated annotations against those
fields, which must agree where both are given.

A pod and a pod template are compared differently. For a pod, the pod strategy's
PrepareForCreate first copies each container's AppArmor annotation into that container's empty
``appArmorProfile`` (when the annotation names a valid profile other than the pod-level one), so
an annotation disagreeing only with the pod-level field is taken over, not refused. A template
(a Deployment's, a Job's...) is validated as written, without that copy: there the same
disagreement is refused. Seccomp annotations are no longer copied (since v1.27): both compare
them with the fields as given. Windows pods skip the AppArmor copy and comparison.

Upstream: validateSeccompProfileField, validateSeccompProfileType, ValidateAppArmorProfileField,
validateSeccompAnnotationsAndFields, validateSeccompAnnotationsAndFieldsMatch,
validateAppArmorAnnotationsAndFieldsMatchOnCreate (pkg/apis/core/validation/validation.go);
applyAppArmorVersionSkew (pkg/registry/core/pod/strategy.go); ApparmorFieldForAnnotation
(pkg/api/pod/util.go); v1.35.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Final

from topospread.api.annotation_validation import (
    APPARMOR_CONTAINER_PREFIX,
    SECCOMP_CONTAINER_PREFIX,
    SECCOMP_POD,
)
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from topospread.api.security_types import (
    OS_WINDOWS,
    PROFILE_LOCALHOST,
    PROFILE_RUNTIME_DEFAULT,
    PROFILE_TYPES,
    PROFILE_UNCONFINED,
    AppArmorProfile,
    PodSecurityContext,
    SeccompProfile,
    SecurityContext,
)
from topospread.api.types import PodSpec
from topospread.api.volume_source_validation import validate_local_descending_path

LOCALHOST_PREFIX: Final = "localhost/"
RUNTIME_DEFAULT: Final = "runtime/default"
DOCKER_DEFAULT: Final = "docker/default"
UNCONFINED: Final = "unconfined"

SECCOMP_TYPE_MISMATCH: Final = "seccomp type in annotation and field must match"
SECCOMP_PROFILE_MISMATCH: Final = "seccomp profile in annotation and field must match"
APPARMOR_TYPE_MISMATCH: Final = "apparmor type in annotation and field must match"
APPARMOR_PROFILE_MISMATCH: Final = "apparmor profile in annotation and field must match"

# PATH_MAX - 1: the longest AppArmor localhost profile name.
_MAX_LOCALHOST_PROFILE: Final = 4095
# strings.TrimSpace's white space (unicode.IsSpace).
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def seccomp_profile_errors(profile: SeccompProfile | None, path: Path) -> list[FieldError]:
    """A ``seccompProfile`` field (pod-level or a container's).

    Upstream: validateSeccompProfileField, validateSeccompProfileType (core validation.go,
    v1.35)
    """
    if profile is None:
        return []
    errs: list[FieldError] = []
    kind = profile.type
    if not kind:
        errs.append(required(path.child("type"), "type is required when seccompProfile is set"))
    elif kind not in PROFILE_TYPES:
        errs.append(not_supported(path.child("type"), GoJSON(kind), PROFILE_TYPES))
    local = profile.localhost_profile
    local_path = path.child("localhostProfile")
    if kind == PROFILE_LOCALHOST:
        if local is None:
            errs.append(required(local_path, "must be set when seccomp type is Localhost"))
        else:
            errs += validate_local_descending_path(local, local_path)
    elif local is not None:
        # The whole internal struct, printed by encoding/json (no JSON tags: Go's names).
        value = GoJSON({"Type": kind, "LocalhostProfile": local})
        errs.append(invalid(local_path, value, "can only be set when seccomp type is Localhost"))
    return errs


def app_armor_profile_errors(profile: AppArmorProfile | None, path: Path) -> list[FieldError]:
    """An ``appArmorProfile`` field (pod-level or a container's).

    Upstream: ValidateAppArmorProfileField (core validation.go, v1.35)
    """
    if profile is None:
        return []
    kind = profile.type
    local = profile.localhost_profile
    local_path = path.child("localhostProfile")
    if kind == PROFILE_LOCALHOST:
        needed = "must be set when AppArmor type is Localhost"
        if local is None:
            return [required(local_path, needed)]
        errs: list[FieldError] = []
        trimmed = local.strip(_GO_SPACE)
        if trimmed != local:
            errs.append(invalid(local_path, local, "must not be padded with whitespace"))
        elif not trimmed:
            errs.append(required(local_path, needed))
        if len(local.encode()) > _MAX_LOCALHOST_PROFILE:
            errs.append(too_long(local_path, _MAX_LOCALHOST_PROFILE))
        return errs
    if kind in (PROFILE_RUNTIME_DEFAULT, PROFILE_UNCONFINED):
        if local is None:
            return []
        detail = "can only be set when AppArmor type is Localhost"
        return [invalid(local_path, GoJSON(local), detail)]
    if not kind:
        return [required(path.child("type"), "type is required when appArmorProfile is set")]
    return [not_supported(path.child("type"), GoJSON(kind), PROFILE_TYPES)]


def pod_security_context_errors(context: PodSecurityContext | None, path: Path) -> list[FieldError]:
    """The pod-level profiles, seccomp first (the other fields are not read).

    Upstream: validatePodSpecSecurityContext (core validation.go, v1.35), its profiles
    """
    return _profiles_errors(context, path)


def container_security_context_errors(
    context: SecurityContext | None, path: Path
) -> list[FieldError]:
    """A container's profiles, seccomp first (the other fields are not read).

    Upstream: ValidateSecurityContext (core validation.go, v1.35), its profiles
    """
    return _profiles_errors(context, path)


def _profiles_errors(
    context: PodSecurityContext | SecurityContext | None, path: Path
) -> list[FieldError]:
    """A pod's or a container's seccomp profile's errors, then its AppArmor profile's."""
    if context is None:
        return []
    return seccomp_profile_errors(
        context.seccomp_profile, path.child("seccompProfile")
    ) + app_armor_profile_errors(context.app_armor_profile, path.child("appArmorProfile"))


def _containers(
    spec: PodSpec, spec_path: Path
) -> Iterator[tuple[str, SecurityContext | None, Path]]:
    """Each container's name, security context and path: init containers, containers, then
    ephemeral containers.

    Upstream: VisitContainersWithPath (pkg/apis/core/pods/helpers.go, v1.35)
    """
    for field, containers in (
        ("initContainers", spec.init_containers),
        ("containers", spec.containers),
    ):
        for i, container in enumerate(containers):
            yield container.name, container.security_context, spec_path.child(field).index(i)
    for i, ephemeral in enumerate(spec.ephemeral_containers):
        path = spec_path.child("ephemeralContainers").index(i)
        yield ephemeral.name, ephemeral.security_context, path


def seccomp_match_errors(
    annotations: Mapping[str, str], spec: PodSpec, spec_path: Path
) -> list[FieldError]:
    """Where a seccomp annotation and the field it stands for are both given, they must
    agree: the pod's annotation with the pod-level field, each container's with that
    container's own field.

    Upstream: validateSeccompAnnotationsAndFields (core validation.go, v1.35)
    """
    errs: list[FieldError] = []
    context = spec.security_context
    if context is not None and context.seccomp_profile is not None:
        annotation = annotations.get(SECCOMP_POD)
        if annotation is not None:
            path = spec_path.child("securityContext", "seccompProfile")
            errs += _seccomp_match(annotation, context.seccomp_profile, path)
    for name, own, path in _containers(spec, spec_path):
        if own is None or own.seccomp_profile is None:
            continue
        annotation = annotations.get(SECCOMP_CONTAINER_PREFIX + name)
        if annotation is not None:
            at = path.child("securityContext", "seccompProfile")
            errs += _seccomp_match(annotation, own.seccomp_profile, at)
    return errs


def _seccomp_match(annotation: str, profile: SeccompProfile, path: Path) -> list[FieldError]:
    """Upstream: validateSeccompAnnotationsAndFieldsMatch (core validation.go, v1.35)"""
    kind = profile.type
    if kind == PROFILE_UNCONFINED:
        agree = annotation == UNCONFINED
    elif kind == PROFILE_RUNTIME_DEFAULT:
        agree = annotation in (RUNTIME_DEFAULT, DOCKER_DEFAULT)
    elif kind == PROFILE_LOCALHOST:
        if not annotation.startswith(LOCALHOST_PREFIX):
            agree = False
        elif annotation.removeprefix(LOCALHOST_PREFIX) != profile.localhost_profile:
            return [forbidden(path.child("localhostProfile"), SECCOMP_PROFILE_MISMATCH)]
        else:
            agree = True
    else:
        agree = True  # a bad type: the field's own check refuses it
    return [] if agree else [forbidden(path.child("type"), SECCOMP_TYPE_MISMATCH)]


def app_armor_field_for_annotation(annotation: str) -> AppArmorProfile | None:
    """The profile field an AppArmor annotation stands for; None for an unknown value or an
    empty localhost profile.

    Upstream: ApparmorFieldForAnnotation (pkg/api/pod/util.go, v1.35)
    """
    if annotation == UNCONFINED:
        return AppArmorProfile(type=PROFILE_UNCONFINED)
    if annotation == RUNTIME_DEFAULT:
        return AppArmorProfile(type=PROFILE_RUNTIME_DEFAULT)
    if annotation.startswith(LOCALHOST_PREFIX) and annotation != LOCALHOST_PREFIX:
        local = annotation.removeprefix(LOCALHOST_PREFIX)
        return AppArmorProfile(type=PROFILE_LOCALHOST, localhost_profile=local)
    return None


_ANYWHERE: Final = Path.root("")


def app_armor_match_errors(
    annotations: Mapping[str, str], spec: PodSpec, spec_path: Path, *, copy_annotations: bool
) -> list[FieldError]:
    """Each container's AppArmor annotation must agree with the profile that applies to it:
    its own field, else the pod-level one. ``copy_annotations`` (a pod, not a template): first
    copy each annotation into its container's empty field, as PrepareForCreate does, when it
    names a valid profile other than the pod-level one. Nothing for a Windows pod.

    Upstream: validateAppArmorAnnotationsAndFieldsMatchOnCreate (core validation.go),
    applyAppArmorVersionSkew (pkg/registry/core/pod/strategy.go), v1.35
    """
    if spec.os is not None and spec.os.name == OS_WINDOWS:
        return []
    context = spec.security_context
    pod_profile = None if context is None else context.app_armor_profile
    errs: list[FieldError] = []
    for name, own_context, path in _containers(spec, spec_path):
        annotation = annotations.get(APPARMOR_CONTAINER_PREFIX + name)
        if annotation is None:
            continue
        profile = None if own_context is None else own_context.app_armor_profile
        if profile is None and copy_annotations:
            copied = app_armor_field_for_annotation(annotation)
            if (
                copied is not None
                and not app_armor_profile_errors(copied, _ANYWHERE)
                and copied != pod_profile
            ):
                profile = copied
        if profile is None:
            profile = pod_profile
        if profile is None:
            continue
        errs += _app_armor_match(
            annotation, profile, path.child("securityContext", "appArmorProfile")
        )
    return errs


# The annotation each named AppArmor profile type must be given as.
_APPARMOR_NAMED: Final = {PROFILE_UNCONFINED: UNCONFINED, PROFILE_RUNTIME_DEFAULT: RUNTIME_DEFAULT}


def _app_armor_match(annotation: str, profile: AppArmorProfile, path: Path) -> list[FieldError]:
    """Upstream: validateAppArmorAnnotationsAndFieldsMatchOnCreate's comparison (core
    validation.go, v1.35)"""
    kind = profile.type
    if kind == PROFILE_LOCALHOST:
        if not annotation.startswith(LOCALHOST_PREFIX):
            return [forbidden(path.child("type"), APPARMOR_TYPE_MISMATCH)]
        if annotation.removeprefix(LOCALHOST_PREFIX) != profile.localhost_profile:
            return [forbidden(path.child("localhostProfile"), APPARMOR_PROFILE_MISMATCH)]
        return []
    # A bad type: the field's own check refuses it.
    if _APPARMOR_NAMED.get(kind, annotation) != annotation:
        return [forbidden(path.child("type"), APPARMOR_TYPE_MISMATCH)]
    return []


_OS_NAMES: Final = ("linux", OS_WINDOWS)
_NOT_FOR_WINDOWS: Final = "cannot be set for a windows pod"


def os_errors(spec: PodSpec, spec_path: Path) -> list[FieldError]:
    """``spec.os``: a name, ``linux`` or ``windows``; a Windows pod may set no seccomp or
    AppArmor profile, pod-level or a container's (the other fields a Windows pod may not set
    are not read).

    Upstream: validateOS, validateWindows (core validation.go, v1.35), its profiles
    """
    os = spec.os
    if os is None:
        return []
    path = spec_path.child("os")
    if not os.name:
        return [required(path.child("name"), "cannot be empty")]
    if os.name not in _OS_NAMES:
        return [not_supported(path, GoJSON(os.name), _OS_NAMES)]
    if os.name != OS_WINDOWS:
        return []
    errs: list[FieldError] = []
    context = spec.security_context
    if context is not None:
        at = spec_path.child("securityContext")
        if context.app_armor_profile is not None:
            errs.append(forbidden(at.child("appArmorProfile"), _NOT_FOR_WINDOWS))
        if context.seccomp_profile is not None:
            errs.append(forbidden(at.child("seccompProfile"), _NOT_FOR_WINDOWS))
    for _, own, container_path in _containers(spec, spec_path):
        if own is None:
            continue
        at = container_path.child("securityContext")
        if own.app_armor_profile is not None:
            errs.append(forbidden(at.child("appArmorProfile"), _NOT_FOR_WINDOWS))
        if own.seccomp_profile is not None:
            errs.append(forbidden(at.child("seccompProfile"), _NOT_FOR_WINDOWS))
    return errs
