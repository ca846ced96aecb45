"""A PersistentVolumeClaim's spec, and the claim template a generic ephemeral volume carries
(``volumes[].ephemeral.volumeClaimTemplate``), which the ephemeral volume controller turns into
a claim. Below ``volumes`` (a pod's volume holds the template) and ``storage`` (the claim kind
re-exports the spec).
"""

from __future__ import annotations

from typing import Any

from topospread.api.base import _Obj
from topospread.api.meta_types import LabelSelector

Quantities = dict[str, str | int | float]


class VolumeResourceRequirements(_Obj, frozen=True):
    requests: Quantities = {}
    limits: Quantities = {}


class TypedLocalObjectReference(_Obj, frozen=True):
    api_group: str | None = None
    kind: str = ""
    name: str = ""


class TypedObjectReference(_Obj, frozen=True):
    """A claim's ``dataSourceRef``: a populator's object, possibly in another namespace (the
    CrossNamespaceVolumeDataSource gate, off by default). ``None`` is Go's nil pointer (absent
    or null), which differs from ``""`` where upstream compares pointers."""

    api_group: str | None = None
    kind: str = ""
    name: str = ""
    namespace: str | None = None


class PersistentVolumeClaimSpec(_Obj, frozen=True):
    access_modes: list[str] = []
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements = VolumeResourceRequirements()
    volume_name: str = ""
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: TypedLocalObjectReference | None = None
    data_source_ref: TypedObjectReference | None = None
    volume_attributes_class_name: str | None = None


class ClaimTemplateMeta(_Obj, frozen=True):
    """A claim template's metadata: every field of meta/v1 ObjectMeta, so that validation can
    refuse the ones a template may not set (only labels and annotations are copied to the
    claim). A field that Go would find set when given at all (a pointer, a list, a map) is
    None until given; null leaves it unset, as the API server's decoder does."""

    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    self_link: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    # Kept as the manifest's text: "" (or null) is the zero time.
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[Any] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[Any] | None = None


class PersistentVolumeClaimTemplate(_Obj, frozen=True):
    # None (absent or null): the zero value, as for a non-pointer Go field.
    metadata: ClaimTemplateMeta | None = None
    spec: PersistentVolumeClaimSpec | None = None


class EphemeralVolumeSource(_Obj, frozen=True):
    """A generic ephemeral volume: the claim created for it (``<pod>-<volume>``) from the
    template, owned by the pod."""

    volume_claim_template: PersistentVolumeClaimTemplate | None = None
