"""The cluster's storage: PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities, with the lookups the volume plugins make and the volume binder's assume
cache (Reserve assumes a PV bound to a claim, or a claim's selected node; Unreserve restores;
PreBind writes them to the "API").

Upstream: the informers' listers, and the PV and PVC assume caches of the volume binder
(pkg/scheduler/framework/plugins/volumebinding/assume_cache.go, v1.35). The PV controller is
not modelled as a controller: when BindPodVolumes writes a PV's claimRef, the claim is bound to
it at once (what the controller does next, and what upstream's PreBind waits for); a claim to
provision only gets the selected-node annotation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import msgspec

from topospread.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    CLAIM_BOUND,
    NOT_SUPPORTED_PROVISIONER,
    RESOURCE_STORAGE,
    VOLUME_BOUND,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
    StorageClass,
    StorageObject,
    VolumeNodeAffinity,
)
from topospread.api.types import (
    LABEL_TOPOLOGY_ZONE,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
)
from topospread.api.volumes import CSIPersistentVolumeSource
from topospread.plugins.helper.storage import pv_class


class StorageState:
    """Storage objects by name (claims by ``namespace/name``), and the assumed versions.

    Mutable: a simulation snapshot (pickle) carries it with the cluster state.
    """

    __slots__ = (
        "_assumed_pvcs",
        "_assumed_pvs",
        "capacities",
        "classes",
        "csi_drivers",
        "csi_nodes",
        "node_of",
        "pvcs",
        "pvs",
    )

    def __init__(self, objects: Iterable[StorageObject] = ()) -> None:
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: list[CSIStorageCapacity] = []
        self._assumed_pvs: dict[str, PersistentVolume] = {}
        self._assumed_pvcs: dict[str, PersistentVolumeClaim] = {}
        # The cluster's node lookup, for the provisioner model (None: nothing is provisioned).
        self.node_of: Callable[[str], Node | None] | None = None
        for obj in objects:
            self.add(obj)

    def add(self, obj: StorageObject) -> None:
        """Add or replace an object (an informer's add or update event)."""
        name = obj.metadata.name
        if isinstance(obj, PersistentVolume):
            self.pvs[name] = obj
            self._assumed_pvs.pop(name, None)
        elif isinstance(obj, PersistentVolumeClaim):
            self.pvcs[obj.key] = obj
            self._assumed_pvcs.pop(obj.key, None)
        elif isinstance(obj, StorageClass):
            self.classes[name] = obj
        elif isinstance(obj, CSINode):
            self.csi_nodes[name] = obj
        elif isinstance(obj, CSIDriver):
            self.csi_drivers[name] = obj
        else:
            self.capacities.append(obj)

    def copy(self) -> StorageState:
        """An independent copy (the objects are frozen and shared)."""
        out = StorageState()
        out.pvs, out.pvcs = dict(self.pvs), dict(self.pvcs)
        out.classes, out.csi_nodes = dict(self.classes), dict(self.csi_nodes)
        out.csi_drivers, out.capacities = dict(self.csi_drivers), list(self.capacities)
        out._assumed_pvs, out._assumed_pvcs = dict(self._assumed_pvs), dict(self._assumed_pvcs)
        return out

    def __bool__(self) -> bool:
        return bool(self.pvs or self.pvcs or self.classes or self.csi_nodes or self.capacities)

    # Informer listers
    def persistent_volume_claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get(f"{namespace}/{name}")

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        return self.pvs.get(name)

    def storage_class(self, name: str) -> StorageClass | None:
        return self.classes.get(name)

    def csi_node(self, name: str) -> CSINode | None:
        return self.csi_nodes.get(name)

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self.csi_drivers.get(name)

    def csi_storage_capacities(self) -> Sequence[CSIStorageCapacity]:
        return self.capacities

    # The assume cache
    def assumed_pvc(self, key: str) -> PersistentVolumeClaim | None:
        found = self._assumed_pvcs.get(key)
        return found if found is not None else self.pvcs.get(key)

    def assumed_pv(self, name: str) -> PersistentVolume | None:
        found = self._assumed_pvs.get(name)
        return found if found is not None else self.pvs.get(name)

    def assumed_pvs_of_class(self, class_name: str) -> Sequence[PersistentVolume]:
        """Upstream: PVAssumeCache.ListPVs (by the storage class index), in name order."""
        out = []
        for name in sorted(self.pvs):
            pv = self.assumed_pv(name)
            if pv is not None and pv_class(pv) == class_name:
                out.append(pv)
        return out

    def assume_pv(self, pv: PersistentVolume) -> None:
        if pv.metadata.name not in self.pvs:
            raise KeyError(f'PersistentVolume "{pv.metadata.name}" not found')
        self._assumed_pvs[pv.metadata.name] = pv

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.key not in self.pvcs:
            raise KeyError(f'PersistentVolumeClaim "{pvc.key}" not found')
        self._assumed_pvcs[pvc.key] = pvc

    def restore_pv(self, name: str) -> None:
        self._assumed_pvs.pop(name, None)

    def restore_pvc(self, key: str) -> None:
        self._assumed_pvcs.pop(key, None)

    # API writes
    def update_pv(self, pv: PersistentVolume) -> None:
        self.add(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.add(pvc)
        self._provision(pvc)

    def delete_pvc(self, key: str) -> None:
        """Delete a claim; the PV controller then deletes its volume (reclaim policy Delete) or
        releases it (Retain: no claim can take it until an administrator frees it)."""
        pvc = self.pvcs.pop(key, None)
        self._assumed_pvcs.pop(key, None)
        if pvc is None or not pvc.spec.volume_name:
            return
        pv = self.pvs.get(pvc.spec.volume_name)
        if pv is None:
            return
        if pv.spec.persistent_volume_reclaim_policy == "Delete":
            del self.pvs[pv.metadata.name]
            self._assumed_pvs.pop(pv.metadata.name, None)
        else:
            self.add(
                msgspec.structs.replace(
                    pv, status=msgspec.structs.replace(pv.status, phase="Released")
                )
            )

    def _provision(self, pvc: PersistentVolumeClaim) -> None:
        """The provisioner and PV controller's answer to a claim given a selected node."""
        node_name = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
        if node_name is None or pvc.spec.volume_name or self.node_of is None:
            return
        node = self.node_of(node_name)
        cls = self.classes.get(pvc.spec.storage_class_name or "")
        if node is None or cls is None or cls.provisioner in ("", NOT_SUPPORTED_PROVISIONER):
            return
        name = f"pvc-{pvc.metadata.uid or pvc.key.replace('/', '-')}"
        ref = ObjectReference(
            kind="PersistentVolumeClaim",
            namespace=pvc.metadata.namespace,
            name=pvc.metadata.name,
            uid=pvc.metadata.uid,
            api_version="v1",
        )
        size = pvc.spec.resources.requests.get(RESOURCE_STORAGE)
        affinity = self._topology(node, cls.provisioner)
        spec = PersistentVolumeSpec(
            capacity={RESOURCE_STORAGE: size} if size is not None else {},
            access_modes=list(pvc.spec.access_modes),
            claim_ref=ref,
            storage_class_name=cls.metadata.name,
            node_affinity=affinity,
            volume_mode=pvc.spec.volume_mode,
            persistent_volume_reclaim_policy=cls.reclaim_policy or "Delete",
            csi=CSIPersistentVolumeSource(driver=cls.provisioner, volume_handle=name),
        )
        pv = PersistentVolume(
            metadata=ObjectMeta(name=name),
            spec=spec,
            status=msgspec.structs.replace(PersistentVolume().status, phase=VOLUME_BOUND),
        )
        self.add(pv)
        annotations = {**pvc.metadata.annotations, ANN_BIND_COMPLETED: "yes"}
        self.add(
            msgspec.structs.replace(
                pvc,
                metadata=msgspec.structs.replace(pvc.metadata, annotations=annotations),
                spec=msgspec.structs.replace(pvc.spec, volume_name=name),
                status=msgspec.structs.replace(pvc.status, phase=CLAIM_BOUND),
            )
        )

    def _topology(self, node: Node, driver: str) -> VolumeNodeAffinity | None:
        labels = node.metadata.labels
        csi_node = self.csi_nodes.get(node.metadata.name)
        keys: list[str] = []
        if csi_node is not None:
            for d in csi_node.spec.drivers:
                if d.name == driver:
                    keys = [k for k in d.topology_keys if k in labels]
        elif LABEL_TOPOLOGY_ZONE in labels:
            keys = [LABEL_TOPOLOGY_ZONE]
        if not keys:
            return None
        exprs = [NodeSelectorRequirement(key=k, operator="In", values=[labels[k]]) for k in keys]
        term = NodeSelectorTerm(match_expressions=exprs)
        return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=[term]))
