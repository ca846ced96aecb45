"""A PersistentVolumeClaim's spec and a claim template (a generic ephemeral volume's) as the API
server validates them on create: one check for both, which ``storage_validation`` (the claim
kind) and ``volume_source_legacy`` (a pod's ephemeral volume) share.

Upstream: ValidatePersistentVolumeClaimSpec, ValidatePersistentVolumeClaimTemplate,
ValidateTemplateObjectMeta (pkg/apis/core/validation/validation.go), v1.35.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from topospread.api.claim_spec import (
    ClaimTemplateMeta,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate,
    TypedLocalObjectReference,
    TypedObjectReference,
)
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from topospread.api.meta_validation import (
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_annotations,
    validate_label_selector,
    validate_labels,
)
from topospread.api.resource import Quantity
from topospread.api.resource_validation import parse_field_quantity
from topospread.api.storage import (
    ACCESS_MODES,
    READ_WRITE_ONCE_POD,
    RESOURCE_STORAGE,
    VOLUME_MODE_BLOCK,
    VOLUME_MODE_FILESYSTEM,
    PersistentVolumeClaim,
)
from topospread.util.validation import is_dns1123_subdomain

# The access modes and volume modes in the order upstream prints them (sets.List: sorted).
SUPPORTED_ACCESS_MODES: Final = sorted(ACCESS_MODES)
SUPPORTED_VOLUME_MODES: Final = (VOLUME_MODE_BLOCK, VOLUME_MODE_FILESYSTEM)
NOT_DEFAULT_GROUP_KIND: Final = (
    "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
)
SOURCE_WITH_NAMESPACE: Final = "may not be specified when dataSourceRef.namespace is specified"
SOURCE_NOT_REF: Final = "must match dataSourceRef"
# The two data sources a claim's ``dataSource`` has always accepted: (apiGroup, kind).
_LEGACY_SOURCES: Final = frozenset(
    (("", "PersistentVolumeClaim"), ("snapshot.storage.k8s.io", "VolumeSnapshot"))
)


def volume_mode_errors(mode: str | None, path: Path) -> list[FieldError]:
    if mode is not None and mode not in SUPPORTED_VOLUME_MODES:
        return [not_supported(path, mode, SUPPORTED_VOLUME_MODES)]
    return []


def class_name_errors(name: str | None, path: Path) -> list[FieldError]:
    """A StorageClass named by a volume or a claim: a DNS subdomain when given (upstream's
    ValidateClassName, NameIsDNSSubdomain); "" (no class) is not checked."""
    if not name:
        return []
    return [invalid(path, name, msg) for msg in name_is_dns_subdomain(name, False)]


def access_mode_errors(modes: Sequence[str], path: Path) -> list[FieldError]:
    """Each access mode the API does not support, then ReadWriteOncePod with another mode
    (a claim's and a volume's alike).

    Upstream: ValidatePersistentVolumeClaimSpec and ValidatePersistentVolumeSpec (core
    validation.go, v1.35)
    """
    errs: list[FieldError] = []
    once_pod = others = False
    for mode in modes:
        if mode not in ACCESS_MODES:
            errs.append(not_supported(path, mode, SUPPORTED_ACCESS_MODES))
        elif mode == READ_WRITE_ONCE_POD:
            once_pod = True
        else:
            others = True
    if once_pod and others:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def validate_claim_spec(spec: PersistentVolumeClaimSpec, path: Path) -> list[FieldError]:
    """A claim's spec, a PersistentVolumeClaim's or a claim template's (with the default
    feature gates: VolumeAttributesClass on). A PersistentVolumeClaim's spec is first
    prepared as the API server prepares it (``prepare_claim_spec``); a template's is not.

    Upstream: ValidatePersistentVolumeClaimSpec (core validation.go, v1.35)
    """
    modes_path = path.child("accessModes")
    errs: list[FieldError] = []
    if not spec.access_modes:
        errs.append(required(modes_path, "at least 1 access mode is required"))
    errs += validate_label_selector(spec.selector, path.child("selector"))
    errs += access_mode_errors(spec.access_modes, modes_path)
    requests = path.child("resources").key(RESOURCE_STORAGE)
    storage = spec.resources.requests.get(RESOURCE_STORAGE)
    if storage is None:
        errs.append(required(requests, ""))
    else:
        parsed = parse_field_quantity(storage, requests)
        if isinstance(parsed, FieldError):
            errs.append(parsed)
        elif parsed.cmp(Quantity()) <= 0:
            errs.append(invalid(requests, str(parsed), "must be greater than zero"))
    errs += class_name_errors(spec.storage_class_name, path.child("storageClassName"))
    errs += volume_mode_errors(spec.volume_mode, path.child("volumeMode"))
    errs += _data_sources(spec, path)
    return errs + class_name_errors(
        spec.volume_attributes_class_name, path.child("volumeAttributesClassName")
    )


def _data_sources(spec: PersistentVolumeClaimSpec, path: Path) -> list[FieldError]:
    """Each data source's fields, then the two sources' agreement: a ``dataSource`` beside a
    ``dataSourceRef`` in another namespace is refused, else both given must name the same
    object (apiGroup compared as Go's pointers: absent and "" differ). The bad value of those
    two is a field path, which Go's JSON encoder prints as ``{}``.

    Upstream: ValidatePersistentVolumeClaimSpec, isDataSourceEqualDataSourceRef (core
    validation.go, v1.35)
    """
    source, ref = spec.data_source, spec.data_source_ref
    errs: list[FieldError] = []
    if source is not None:
        errs += _reference(source, path.child("dataSource"))
    if ref is not None:
        at = path.child("dataSourceRef")
        errs += _reference(ref, at)
        if ref.namespace:
            messages = name_is_dns_label(ref.namespace, False)
            errs += [invalid(at.child("namespace"), ref.namespace, m) for m in messages]
    if ref is not None and ref.namespace:
        if source is not None:
            errs.append(invalid(path, GoJSON({}), SOURCE_WITH_NAMESPACE))
    elif source is not None and ref is not None and _key(source) != _key(ref):
        errs.append(invalid(path, GoJSON({}), SOURCE_NOT_REF))
    return errs


def _key(ref: TypedLocalObjectReference | TypedObjectReference) -> tuple[str | None, str, str]:
    return ref.api_group, ref.kind, ref.name


def _reference(
    ref: TypedLocalObjectReference | TypedObjectReference, path: Path
) -> list[FieldError]:
    """A data source's name, kind and API group (a namespace aside).

    Upstream: validateDataSource, validateDataSourceRef (core validation.go, v1.35)
    """
    errs: list[FieldError] = []
    if not ref.name:
        errs.append(required(path.child("name"), ""))
    if not ref.kind:
        errs.append(required(path.child("kind"), ""))
    group = ref.api_group or ""
    if not group and ref.kind != "PersistentVolumeClaim":
        errs.append(invalid(path, ref.kind, NOT_DEFAULT_GROUP_KIND))
    if group:
        errs += [invalid(path.child("apiGroup"), group, m) for m in is_dns1123_subdomain(group)]
    return errs


def prepare_claim_spec(spec: PersistentVolumeClaimSpec) -> PersistentVolumeClaimSpec:
    """A new PersistentVolumeClaim's spec as the API server has it before validation, with the
    default feature gates (CrossNamespaceVolumeDataSource off, AnyVolumeDataSource on): a
    ``dataSourceRef`` in another namespace dropped; without a ``dataSourceRef``, a
    ``dataSource`` other than a claim or a VolumeSnapshot dropped; then either source, when
    only one is given, copied to the other (a ref's namespace aside). So a claim's
    ``dataSource`` is also validated at ``dataSourceRef`` and the other way round.

    Upstream: persistentvolumeclaimStrategy.PrepareForCreate; DropDisabledFields,
    EnforceDataSourceBackwardsCompatibility, NormalizeDataSources
    (pkg/api/persistentvolumeclaim/util.go, v1.35)
    """
    source, ref = spec.data_source, spec.data_source_ref
    if ref is not None and ref.namespace:
        ref = None
    if (
        ref is None
        and source is not None
        and (source.api_group or "", source.kind) not in _LEGACY_SOURCES
    ):
        source = None
    if source is not None and ref is None:
        ref = TypedObjectReference(api_group=source.api_group, kind=source.kind, name=source.name)
    elif ref is not None and source is None:
        source = TypedLocalObjectReference(api_group=ref.api_group, kind=ref.kind, name=ref.name)
    if source is spec.data_source and ref is spec.data_source_ref:
        return spec
    return msgspec.structs.replace(spec, data_source=source, data_source_ref=ref)


def prepare_claim(pvc: PersistentVolumeClaim) -> PersistentVolumeClaim:
    """A new PersistentVolumeClaim as the API server stores it: its spec's data sources
    prepared (``prepare_claim_spec``); ``pvc`` itself when they are left as given.

    Upstream: persistentvolumeclaimStrategy.PrepareForCreate (pkg/registry/core/
    persistentvolumeclaim/strategy.go, v1.35)
    """
    spec = prepare_claim_spec(pvc.spec)
    return pvc if spec is pvc.spec else msgspec.structs.replace(pvc, spec=spec)


# The fields of meta/v1 ObjectMeta in Go's order, as a template's metadata may not set them
# (``labels`` and ``annotations`` are allowed): (attribute, field path child).
_TEMPLATE_META_FORBIDDEN: Final = (
    ("name", "name"),
    ("generate_name", "generateName"),
    ("namespace", "namespace"),
    ("self_link", "selfLink"),
    ("uid", "uID"),  # sic: Go's field name UID with its first letter lowered
    ("resource_version", "resourceVersion"),
    ("generation", "generation"),
    ("creation_timestamp", "creationTimestamp"),
    ("deletion_timestamp", "deletionTimestamp"),
    ("deletion_grace_period_seconds", "deletionGracePeriodSeconds"),
    ("owner_references", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managed_fields", "managedFields"),
)
# The fields Go finds set whenever they are given (pointers, and slices: ``[]`` is not nil);
# the others are set unless their zero ("", 0; a creation timestamp of "" or null).
_SET_WHEN_GIVEN: Final = frozenset(
    (
        "deletion_timestamp",
        "deletion_grace_period_seconds",
        "owner_references",
        "finalizers",
        "managed_fields",
    )
)


def validate_template_object_meta(meta: ClaimTemplateMeta, path: Path) -> list[FieldError]:
    """Annotations and labels, then each other field that is set (not its Go zero value).

    Upstream: ValidateTemplateObjectMeta, validateFieldAllowList (core validation.go, v1.35)
    """
    errs = validate_annotations(meta.annotations, path.child("annotations"))
    errs += validate_labels(meta.labels, path.child("labels"))
    for attr, child in _TEMPLATE_META_FORBIDDEN:
        value = getattr(meta, attr)
        if value is not None if attr in _SET_WHEN_GIVEN else value:
            errs.append(forbidden(path.child(child), "cannot be set"))
    return errs


def validate_claim_template(
    template: PersistentVolumeClaimTemplate, path: Path
) -> list[FieldError]:
    """A claim template (a generic ephemeral volume's), at ``path``.

    Upstream: ValidatePersistentVolumeClaimTemplate (core validation.go, v1.35)
    """
    meta = template.metadata or _EMPTY_META
    errs = validate_template_object_meta(meta, path.child("metadata"))
    return errs + validate_claim_spec(template.spec or _EMPTY_SPEC, path.child("spec"))


_EMPTY_META: Final = ClaimTemplateMeta()
_EMPTY_SPEC: Final = PersistentVolumeClaimSpec()
