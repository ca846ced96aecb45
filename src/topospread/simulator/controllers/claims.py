"""Claims that controllers create for pods. A StatefulSet's volumeClaimTemplates: the claim
each ordinal gets (``<template>-<statefulset>-<ordinal>``), the pod volumes that use them,
and the default StorageClass the API server gives a claim that names none; and a pod's
generic ephemeral volumes, whose claims the ephemeral volume controller creates.

Upstream: getPersistentVolumeClaims, getPersistentVolumeClaimName, updateStorage
(pkg/controller/statefulset/stateful_set_utils.go) and the DefaultStorageClass admission
plugin (plugin/pkg/admission/storage/storageclass/setdefault), v1.35. The retention policy
is carried out by owner references on the claims (``claim_retention.py``), which the garbage
collector acts on (simulator/garbage_collector.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from topospread.api.claim_spec import (
    ClaimTemplateMeta,
    PersistentVolumeClaimSpec,
    PersistentVolumeClaimTemplate,
)
from topospread.api.claim_validation import prepare_claim
from topospread.api.storage import PersistentVolumeClaim, StorageClass, volume_claim_templates
from topospread.api.types import (
    ObjectMeta,
    OwnerReference,
    PersistentVolumeClaimVolumeSource,
    Pod,
    StatefulSet,
    Volume,
)
from topospread.cluster.pvcontroller import default_class


def claim_templates(sts: StatefulSet) -> list[PersistentVolumeClaim]:
    """The set's volumeClaimTemplates as claims (``volume_claim_templates``, api/storage.py:
    validation reads them too)."""
    return volume_claim_templates(sts)


def get_persistent_volume_claims(sts: StatefulSet, ordinal: int) -> list[PersistentVolumeClaim]:
    """The claims of one ordinal, in template order: named after the template, the set and the
    ordinal, in the set's namespace, labelled with the set's selector's matchLabels.

    Upstream: getPersistentVolumeClaims (stateful_set_utils.go)
    """
    selector = sts.spec.selector.match_labels if sts.spec.selector is not None else {}
    out = []
    for template in claim_templates(sts):
        labels = {**template.metadata.labels, **selector}
        meta = msgspec.structs.replace(
            template.metadata,
            name=f"{template.metadata.name}-{sts.metadata.name}-{ordinal}",
            namespace=sts.metadata.namespace,
            labels=labels,
        )
        out.append(msgspec.structs.replace(template, metadata=meta))
    return out


def deletes_claims_when_deleted(sts: StatefulSet) -> bool:
    """Upstream: the StatefulSetAutoDeletePVC policy (GA in 1.32), whenDeleted: Delete."""
    policy = sts.spec.persistent_volume_claim_retention_policy or {}
    return policy.get("whenDeleted") == "Delete"


def update_storage(sts: StatefulSet, pod: Pod, ordinal: int) -> Pod:
    """The pod with a volume per claim template (named as the template, using the ordinal's
    claim) first, then its other volumes; a template volume the pod declared is replaced.

    Upstream: updateStorage (stateful_set_utils.go)
    """
    templates = claim_templates(sts)
    if not templates:
        return pod
    claims = get_persistent_volume_claims(sts, ordinal)
    names = {t.metadata.name for t in templates}
    volumes = [
        Volume(
            name=t.metadata.name,
            persistent_volume_claim=PersistentVolumeClaimVolumeSource(claim_name=c.metadata.name),
        )
        for t, c in zip(templates, claims, strict=True)
    ]
    volumes += [v for v in pod.spec.volumes if v.name not in names]
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, volumes=volumes))


def ephemeral_claims(pod: Pod) -> list[PersistentVolumeClaim]:
    """The claims of the pod's generic ephemeral volumes, as the ephemeral volume controller
    creates them: ``<pod>-<volume>`` from the volume's claim template, in the pod's namespace,
    controlled by the pod.

    Upstream: pkg/controller/volume/ephemeral (controller.go handleVolume), v1.35
    """
    out = []
    owner = OwnerReference(
        api_version="v1",
        kind="Pod",
        name=pod.metadata.name,
        uid=pod.metadata.uid,
        controller=True,
        block_owner_deletion=True,
    )
    for volume in pod.spec.volumes:
        if volume.ephemeral is None:
            continue
        template = volume.ephemeral.volume_claim_template or _EMPTY_TEMPLATE
        meta = template.metadata or _EMPTY_TEMPLATE_META
        # Only the template's labels and annotations are copied (validation refuses any other
        # metadata); the claim's spec is the template's.
        claim = PersistentVolumeClaim(
            metadata=ObjectMeta(
                name=f"{pod.metadata.name}-{volume.name}",
                namespace=pod.metadata.namespace,
                labels=dict(meta.labels),
                annotations=dict(meta.annotations),
                owner_references=[owner],
            ),
            spec=template.spec or _EMPTY_SPEC,
        )
        out.append(claim)
    return out


_EMPTY_TEMPLATE: Final = PersistentVolumeClaimTemplate()
_EMPTY_TEMPLATE_META: Final = ClaimTemplateMeta()
_EMPTY_SPEC: Final = PersistentVolumeClaimSpec()


def admit_claim(
    pvc: PersistentVolumeClaim, classes: Iterable[StorageClass]
) -> PersistentVolumeClaim:
    """A claim naming no class gets the default one, as the DefaultStorageClass admission
    plugin sets it (an explicit ``""`` is kept: it asks for no class); its data sources are
    kept as the API server keeps them on create (``prepare_claim``)."""
    pvc = prepare_claim(pvc)
    if pvc.spec.storage_class_name is not None:
        return pvc
    name = default_class(classes)
    if name is None:
        return pvc
    return msgspec.structs.replace(
        pvc, spec=msgspec.structs.replace(pvc.spec, storage_class_name=name)
    )
