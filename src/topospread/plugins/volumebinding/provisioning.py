"""Whether the claims left to provision can be provisioned for a node: their class has a
provisioner, its allowed topologies admit the node, and (for CSI drivers that publish storage
capacity) some capacity the node can reach is large enough.

Upstream: checkVolumeProvisions, hasEnoughCapacity, capacitySufficient, nodeHasAccess
(binder.go, v1.35)
"""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.resource import parse_quantity
from topospread.api.storage import (
    NOT_SUPPORTED_PROVISIONER,
    CSIStorageCapacity,
    PersistentVolumeClaim,
    StorageClass,
)
from topospread.api.types import Node
from topospread.framework.storage import StorageLister
from topospread.labels.selector import SelectorError, label_selector_as_selector
from topospread.plugins.helper.storage import (
    match_topology_selector_terms,
    pvc_class,
    storage_request,
)
from topospread.plugins.volumebinding.pod_volumes import BinderError


def check_volume_provisions(
    storage: StorageLister, claims: Sequence[PersistentVolumeClaim], node: Node
) -> tuple[bool, bool, list[PersistentVolumeClaim]]:
    """(provisioning possible, enough storage, claims to provision).

    Upstream: checkVolumeProvisions (binder.go)
    """
    provisions: list[PersistentVolumeClaim] = []
    for pvc in claims:
        name = pvc_class(pvc)
        if not name:
            raise BinderError(f'no class for claim "{pvc.key}"')
        cls = storage.storage_class(name)
        if cls is None:
            raise BinderError(f'failed to find storage class "{name}"')
        if not cls.provisioner or cls.provisioner == NOT_SUPPORTED_PROVISIONER:
            return False, True, []
        if not match_topology_selector_terms(cls.allowed_topologies, node.metadata.labels):
            return False, True, []
        if not has_enough_capacity(storage, pvc, cls, node):
            return True, False, []
        provisions.append(pvc)
    return True, True, provisions


def has_enough_capacity(
    storage: StorageLister, pvc: PersistentVolumeClaim, cls: StorageClass, node: Node
) -> bool:
    """Upstream: hasEnoughCapacity (binder.go): only for CSI drivers with storageCapacity."""
    if "storage" not in pvc.spec.resources.requests:
        return True
    driver = storage.csi_driver(cls.provisioner)
    if driver is None or not driver.spec.storage_capacity:
        return True
    size = storage_request(pvc).value()
    for capacity in storage.csi_storage_capacities():
        if (
            capacity.storage_class_name == cls.metadata.name
            and capacity_sufficient(capacity, size)
            and node_has_access(node, capacity)
        ):
            return True
    return False


def capacity_sufficient(capacity: CSIStorageCapacity, size: int) -> bool:
    """Upstream: capacitySufficient / volumeLimit (binder.go): maximumVolumeSize first."""
    limit = (
        capacity.maximum_volume_size
        if capacity.maximum_volume_size is not None
        else capacity.capacity
    )
    return limit is not None and parse_quantity(limit).value() >= size


def node_has_access(node: Node, capacity: CSIStorageCapacity) -> bool:
    """Upstream: nodeHasAccess (binder.go): a nil topology is available nowhere."""
    if capacity.node_topology is None:
        return False
    try:
        selector = label_selector_as_selector(capacity.node_topology)
    except SelectorError:
        return False
    return selector.matches(node.metadata.labels)
