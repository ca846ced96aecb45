"""``check``'s findings about a StatefulSet's storage: the class each of its
``volumeClaimTemplates`` gets (named, or the default one the API server gives a claim naming
none) and whether that class lets the scheduler choose the zone (WaitForFirstConsumer) or binds
the volume first (Immediate), wherever the pods are then spread."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from topospread.api.storage import VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER, StorageClass
from topospread.api.types import StatefulSet
from topospread.cluster.pvcontroller import default_class
from topospread.simulator.controllers.claims import claim_templates

STORAGE_CLASS_RULE = "storage-class"
IMMEDIATE_RULE = "immediate-binding"


def storage_findings(
    manifests: Sequence[tuple[str, Any]], cluster: Sequence[tuple[str, Any]]
) -> list[tuple[str, str, str, str]]:
    """``(rule, object, where, message)`` warnings for the StatefulSets of ``manifests``
    whose claims get no StorageClass, a StorageClass nobody gives, or an Immediate one."""
    classes = {o.metadata.name: o for _, o in [*cluster, *manifests] if isinstance(o, StorageClass)}
    default = default_class(classes.values())
    out = []
    for where, obj in manifests:
        if not isinstance(obj, StatefulSet):
            continue
        name = f"StatefulSet {obj.metadata.namespace or 'default'}/{obj.metadata.name}"
        for i, template in enumerate(claim_templates(obj)):
            field = f"volumeClaimTemplates[{i}] ({template.metadata.name})"
            wanted = template.spec.storage_class_name
            if wanted is None and default is None:
                out.append(
                    (
                        STORAGE_CLASS_RULE,
                        name,
                        where,
                        f"{field}: names no storageClassName and no default StorageClass is "
                        "given, so its claims bind only to PVs without a class (give the "
                        "cluster's default StorageClass, volumeBindingMode: "
                        "WaitForFirstConsumer for zonal disks)",
                    )
                )
                continue
            cls_name = default if wanted is None else wanted
            if not cls_name:
                continue  # "": static PVs without a class, as asked
            cls = classes.get(cls_name)
            if cls is None:
                out.append(
                    (
                        STORAGE_CLASS_RULE,
                        name,
                        where,
                        f'{field}: StorageClass "{cls_name}" is not given, so its claims stay '
                        "unbound on the generated cluster (give the StorageClass)",
                    )
                )
            elif cls.volume_binding_mode != VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
                out.append(
                    (
                        IMMEDIATE_RULE,
                        name,
                        where,
                        f'{field}: StorageClass "{cls_name}" binds Immediate: each volume\'s '
                        "zone is chosen before the pod is scheduled, whatever its spread "
                        "constraints say (volumeBindingMode: WaitForFirstConsumer lets the "
                        "scheduler choose)",
                    )
                )
    return out
