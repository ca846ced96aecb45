"""ValidatePodCreate's and ValidatePodTemplateSpec's own checks after the spec's (ephemeral
containers refused; the seccomp and AppArmor annotations against their fields), and the
ephemeral containers' own checks within the spec's: separate from ``validation.py``, which
calls them, for size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from topospread.api.annotation_validation import (
    APPARMOR_CONTAINER_PREFIX,
    SECCOMP_CONTAINER_PREFIX,
    SECCOMP_POD,
)
from topospread.api.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    invalid,
    not_found,
    required,
)
from topospread.api.quick_validation import GO_SPACE
from topospread.api.security_validation import (
    app_armor_match_errors,
    container_security_context_errors,
    seccomp_match_errors,
)
from topospread.api.types import PodSpec
from topospread.util.validation import is_dns1123_label


def create_only_errors(
    annotations: Mapping[str, str], spec: PodSpec
) -> tuple[list[FieldError], list[FieldError]]:
    """ValidatePodCreate's checks after validatePodMetadataAndSpec (but the two that read
    nodeName), and ValidatePodTemplateSpec's after ValidatePodSpec, of the (prepared) spec:
    ephemeral containers are refused in a template, and the seccomp and AppArmor
    annotations must agree with their fields (a pod's AppArmor annotations copied first into
    its containers' empty fields, as PrepareForCreate copies them; a template's compared as
    written). Quick for a spec without profiles and annotations to compare.

    Upstream: ValidatePodCreate, ValidatePodTemplateSpec (core validation.go, v1.35)
    """
    spec_path = Path.root("spec")
    # NOTE: a pod's own refusal of ephemeral containers reads nodeName, so it is made per pod
    # (``validation.validate_pod``), not here.
    on_create: list[FieldError] = []
    in_template: list[FieldError] = []
    if spec.ephemeral_containers:
        path = spec_path.child("ephemeralContainers")
        in_template = [forbidden(path, "ephemeral containers not allowed in pod template")]
    if not annotations or not any(key.startswith(_PROFILE_ANNOTATIONS) for key in annotations):
        return on_create, in_template
    seccomp = seccomp_match_errors(annotations, spec, spec_path)
    on_create = [
        *on_create,
        *seccomp,
        *app_armor_match_errors(annotations, spec, spec_path, copy_annotations=True),
    ]
    in_template = [
        *seccomp,
        *app_armor_match_errors(annotations, spec, spec_path, copy_annotations=False),
        *in_template,
    ]
    return on_create, in_template


# The annotations create_only_errors compares: the pod's seccomp annotation, and the
# containers' seccomp and AppArmor annotations.
_PROFILE_ANNOTATIONS: Final = (SECCOMP_POD, SECCOMP_CONTAINER_PREFIX, APPARMOR_CONTAINER_PREFIX)


def name_and_image_errors(name: str, image: str, at: Path) -> list[FieldError]:
    """A container's (or an ephemeral container's) name, a DNS label, and its image, both
    required (the image's whitespace is checked apart, for a pod only)."""
    if not name:
        errs = [required(at.child("name"))]
    else:
        errs = [invalid(at.child("name"), name, m) for m in is_dns1123_label(name)]
    if not image:
        errs.append(required(at.child("image")))
    return errs


def ephemeral_container_errors(spec: PodSpec, path: Path) -> list[FieldError]:
    """Ephemeral containers (refused on create whatever they hold, by ValidatePodCreate's own
    check, after these): each one's name, image and profiles as any container's, its image
    not padded (for a template too), its name unique among all containers, the container it
    targets one of the pod's. Not checked: the fields an ephemeral container may not set
    (ports, probes, resources...), which are not read.

    Upstream: validateEphemeralContainers (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    others = {c.name for group in (spec.containers, spec.init_containers) for c in group}
    names = set(others)
    for i, container in enumerate(spec.ephemeral_containers):
        at = path.index(i)
        name = container.name
        errs += name_and_image_errors(name, container.image, at)
        errs += container_security_context_errors(
            container.security_context, at.child("securityContext")
        )
        if container.image != container.image.strip(GO_SPACE):
            errs.append(invalid(at.child("image"), container.image, PADDED_IMAGE))
        if name in names:
            errs.append(duplicate(at.child("name"), name))
        names.add(name)
        target = container.target_container_name
        if target and target not in others:
            errs.append(not_found(at.child("targetContainerName"), target))
    return errs


PADDED_IMAGE: Final = "must not have leading or trailing whitespace"
