"""What the volume plugins may read and write of the cluster's storage: the informers' listers
of PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities,
the binder's assume cache over PVs and claims, and the API writes BindPodVolumes makes.

The cluster layer implements it (``cluster.storage.StorageState``); plugins only see this
protocol, so they stay below the cluster in the layering.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from topospread.api.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
)


class StorageLister(Protocol):
    """Upstream: the storage listers of the SharedInformerFactory, and the volume binder's
    PV and PVC assume caches (volumebinding/assume_cache.go, v1.35)."""

    # Informer listers: the objects as the API server holds them.
    def persistent_volume_claim(
        self, namespace: str, name: str
    ) -> PersistentVolumeClaim | None: ...

    def persistent_volume(self, name: str) -> PersistentVolume | None: ...

    def storage_class(self, name: str) -> StorageClass | None: ...

    def csi_node(self, name: str) -> CSINode | None: ...

    def csi_driver(self, name: str) -> CSIDriver | None: ...

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]: ...

    # The assume cache: an assumed object hides the API's until restored or overwritten.
    def assumed_pvc(self, key: str) -> PersistentVolumeClaim | None: ...

    def assumed_pv(self, name: str) -> PersistentVolume | None: ...

    def assumed_pvs_of_class(self, class_name: str) -> Sequence[PersistentVolume]: ...

    def assumed_pvs_for_claims(
        self, class_name: str, claims: Sequence[PersistentVolumeClaim]
    ) -> Sequence[PersistentVolume]: ...

    def assume_pv(self, pv: PersistentVolume) -> None: ...

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None: ...

    def restore_pv(self, name: str) -> None: ...

    def restore_pvc(self, key: str) -> None: ...

    # API writes (BindPodVolumes), with the PV controller's response to them.
    def update_pv(self, pv: PersistentVolume) -> None: ...

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None: ...
