"""The cluster's storage: PersistentVolumes, claims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities, with the lookups the volume plugins make and the volume binder's assume
cache (Reserve assumes a PV bound to a claim, or a claim's selected node; Unreserve restores;
PreBind writes them to the "API").

Upstream: the informers' listers, and the PV and PVC assume caches of the volume binder
(pkg/scheduler/framework/plugins/volumebinding/assume_cache.go, v1.35). The PV controller and
the provisioner act at once (``pvcontroller.py``): once the state belongs to a cluster, a
claim, volume or class written to it makes the controller bind pre-bound and Immediate claims
(``sync_claims``); a claim given the selected-node annotation by PreBind is provisioned in
that node's topology and bound, which is what upstream's PreBind waits for.
"""

from __future__ import annotations

import bisect
import heapq
import uuid
from collections.abc import Callable, Iterable, Sequence

import msgspec

from topospread.api.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    ANN_STORAGE_CLASS,
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    StorageObject,
)
from topospread.api.types import Node
from topospread.cluster.pvcontroller import (
    bind_claim,
    bind_volume,
    can_provision,
    check_volume_satisfy_claim,
    default_class,
    find_best_match_for_claim,
    immediate_segments,
    is_delay_binding,
    node_segment,
    preferred_segment,
    provisioned_volume,
    segment_affinity,
)
from topospread.cluster.volume_sync import sync_volume
from topospread.plugins.helper.storage import is_volume_bound_to_claim, pv_class, pvc_class

# The namespace of the uids ``create_claim`` derives.
_CLAIM_UIDS = uuid.UUID("5f0d9c1e-7a43-4b8e-9d2a-3c6b1e8f4a70")
# A PV's class and the (namespace, name) of the claim it refers to (None: no reference).
_RefKey = tuple[str, tuple[str, str] | None]


def _ref_key(pv: PersistentVolume) -> _RefKey:
    ref = pv.spec.claim_ref
    return pv_class(pv), (None if ref is None else (ref.namespace, ref.name))


def _remove(names: list[str], name: str) -> None:
    del names[bisect.bisect_left(names, name)]


class StorageState:
    """Storage objects by name (claims by ``namespace/name``), and the assumed versions.

    Mutable: a simulation snapshot (pickle) carries it with the cluster state.
    """

    __slots__ = (
        "_assumed_pvcs",
        "_assumed_pvs",
        "_awaiting_topology",
        "_class_names",
        "_class_of",
        "_pv_names",
        "_ref_names",
        "capacities",
        "claims_created",
        "claims_deleted",
        "classes",
        "csi_drivers",
        "csi_node_generation",
        "csi_nodes",
        "informers_synced",
        "list_nodes",
        "node_of",
        "pvcs",
        "pvs",
    )

    def __init__(self, objects: Iterable[StorageObject] = ()) -> None:
        self.pvs: dict[str, PersistentVolume] = {}
        self.pvcs: dict[str, PersistentVolumeClaim] = {}
        self.classes: dict[str, StorageClass] = {}
        self.csi_nodes: dict[str, CSINode] = {}
        # Counts the CSINodes put: a reader that keeps values per CSINode keeps them while it
        # stays the same.
        self.csi_node_generation = 0
        self.csi_drivers: dict[str, CSIDriver] = {}
        self.capacities: list[CSIStorageCapacity] = []
        # How many claims ``create_claim`` gave a uid, which the next uid is derived from.
        self.claims_created = 0
        # How many claims were deleted: what a StatefulSet waiting for a claim to go reads.
        self.claims_deleted = 0
        # The Immediate claims the provisioner found no topology for yet (no node labelled
        # with the driver's keys): retried when nodes or CSINodes come (``retry_provisioning``).
        self._awaiting_topology: set[str] = set()
        self._assumed_pvs: dict[str, PersistentVolume] = {}
        self._assumed_pvcs: dict[str, PersistentVolumeClaim] = {}
        # The PVs' names sorted (None: to sort again), dropped when a PV comes or goes.
        self._pv_names: list[str] | None = None
        # Per storage class, the names of the PVs of that class as the assume cache sees them,
        # sorted, and each PV's class there: kept PV by PV as PVs come, go, are assumed or
        # restored (None: built on first use).
        self._class_names: dict[str, list[str]] | None = None
        self._ref_names: dict[_RefKey, list[str]] | None = None
        self._class_of: dict[str, _RefKey] = {}
        # The cluster's node lookup, for the provisioner model (None: nothing is provisioned).
        self.node_of: Callable[[str], Node | None] | None = None
        self.list_nodes: Callable[[], Iterable[Node]] | None = None
        # False while a simulation loads its objects one by one: the PV controller starts
        # once its informers hold them all (a volume is not released for a claim yet to come).
        self.informers_synced = True
        for obj in objects:
            self.add(obj)

    def add(self, obj: StorageObject) -> None:
        """Add or replace an object (an informer's add or update event); once the state
        belongs to a cluster, the PV controller then syncs the claims it binds."""
        self._put(obj)
        if self.node_of is None:
            return
        if isinstance(obj, PersistentVolumeClaim):
            # NOTE: a new claim can only change its own binding; a PV or class, any claim's.
            self._sync_if_unbound(self.pvcs[obj.key])
        elif isinstance(obj, PersistentVolume | StorageClass):
            self.sync_claims()
        elif isinstance(obj, CSINode):
            self.retry_provisioning()

    def create_claim(self, pvc: PersistentVolumeClaim) -> None:
        """A controller's create of a claim (a StatefulSet's, the ephemeral volume
        controller's): the API server gives it a uid, so that a claim made anew under a deleted
        one's name is another claim, which a volume still referring to the old one does not
        take (``is_volume_bound_to_claim``) and whose provisioned volume is ``pvc-<uid>``; then
        as ``add``.

        NOTE: the uid is derived from a count of the claims created, not drawn from the
        simulation's random source, so that a claim takes no draw from the names of the pods
        created after it.
        """
        if not pvc.metadata.uid:
            self.claims_created += 1
            uid = uuid.uuid5(_CLAIM_UIDS, f"{self.claims_created}/{pvc.key}")
            pvc = msgspec.structs.replace(
                pvc, metadata=msgspec.structs.replace(pvc.metadata, uid=str(uid))
            )
        self.add(pvc)

    def _put(self, obj: StorageObject) -> None:
        name = obj.metadata.name
        if isinstance(obj, PersistentVolume):
            if name not in self.pvs:
                self._pv_names = None
            self.pvs[name] = obj
            self._assumed_pvs.pop(name, None)
            self._reclass(name)
        elif isinstance(obj, PersistentVolumeClaim):
            self.pvcs[obj.key] = obj
            self._assumed_pvcs.pop(obj.key, None)
        elif isinstance(obj, StorageClass):
            self.classes[name] = obj
        elif isinstance(obj, CSINode):
            self.csi_nodes[name] = obj
            self.csi_node_generation += 1
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
        out._class_names = out._ref_names = None
        out.claims_created = self.claims_created
        out.claims_deleted = self.claims_deleted
        out.informers_synced = self.informers_synced
        out._awaiting_topology = set(self._awaiting_topology)
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
        by_class, _ = self._pv_index()
        assumed, pvs = self._assumed_pvs, self.pvs
        return [assumed.get(name) or pvs[name] for name in by_class.get(class_name, ())]

    def assumed_pvs_for_claims(
        self, class_name: str, claims: Sequence[PersistentVolumeClaim]
    ) -> Sequence[PersistentVolume]:
        """The PVs of the class, in name order, that have no claim reference or refer to one
        of ``claims`` by namespace and name: every other PV of the class is bound to another
        claim, which no check of the binder lets one of these claims take."""
        _, by_ref = self._pv_index()
        refs = dict.fromkeys((c.metadata.namespace, c.metadata.name) for c in claims)
        lists = [by_ref.get((class_name, None), [])]
        lists += [by_ref.get((class_name, ref), []) for ref in refs]
        names = lists[0] if len(lists) == 1 else list(heapq.merge(*lists))
        assumed, pvs = self._assumed_pvs, self.pvs
        return [assumed.get(name) or pvs[name] for name in names]

    def _pv_index(self) -> tuple[dict[str, list[str]], dict[_RefKey, list[str]]]:
        """The PVs' names per class and per (class, claim reference), sorted, as the assume
        cache sees them: built on first use, then kept PV by PV (``_reclass``)."""
        if self._class_names is None or self._ref_names is None:
            self._class_names, self._ref_names, self._class_of = {}, {}, {}
            names = self._pv_names
            if names is None:
                names = self._pv_names = sorted(self.pvs)
            for name in names:
                key = _ref_key(self.assumed_pv(name) or self.pvs[name])
                self._class_of[name] = key
                self._class_names.setdefault(key[0], []).append(name)
                self._ref_names.setdefault(key, []).append(name)
        return self._class_names, self._ref_names

    def _reclass(self, name: str) -> None:
        """Keep ``_pv_index`` as the PV ``name`` came, went or changed."""
        by_class, by_ref = self._class_names, self._ref_names
        if by_class is None or by_ref is None:
            return
        old = self._class_of.pop(name, None)
        pv = self.assumed_pv(name)
        new = _ref_key(pv) if pv is not None else None
        if new is not None:
            self._class_of[name] = new
        if old == new:
            return
        if old is not None:
            if old[0] != (new[0] if new is not None else None):
                _remove(by_class[old[0]], name)
            _remove(by_ref[old], name)
        if new is not None:
            if old is None or old[0] != new[0]:
                bisect.insort(by_class.setdefault(new[0], []), name)
            bisect.insort(by_ref.setdefault(new, []), name)

    def assume_pv(self, pv: PersistentVolume) -> None:
        if pv.metadata.name not in self.pvs:
            raise KeyError(f'PersistentVolume "{pv.metadata.name}" not found')
        self._assumed_pvs[pv.metadata.name] = pv
        self._reclass(pv.metadata.name)

    def assume_pvc(self, pvc: PersistentVolumeClaim) -> None:
        if pvc.key not in self.pvcs:
            raise KeyError(f'PersistentVolumeClaim "{pvc.key}" not found')
        self._assumed_pvcs[pvc.key] = pvc

    def restore_pv(self, name: str) -> None:
        if self._assumed_pvs.pop(name, None) is not None:
            self._reclass(name)

    def restore_pvc(self, key: str) -> None:
        self._assumed_pvcs.pop(key, None)

    # API writes
    def update_pv(self, pv: PersistentVolume) -> None:
        self._put(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self._put(pvc)
        self._provision(pvc)

    def delete_pvc(self, key: str) -> None:
        """Delete a claim; the PV controller then syncs the volume bound to it, which it
        releases and reclaims (``volume_sync.py``: reclaim policy Delete deletes it, Retain
        leaves it Released, referring to the claim, until an administrator frees it)."""
        pvc = self.pvcs.pop(key, None)
        self._assumed_pvcs.pop(key, None)
        self._awaiting_topology.discard(key)
        if pvc is not None:
            self.claims_deleted += 1
        if pvc is None or not pvc.spec.volume_name:
            return
        pv = self.pvs.get(pvc.spec.volume_name)
        if pv is not None:
            self._sync_volume(pv)

    def _sync_volume(self, pv: PersistentVolume) -> None:
        """Upstream: syncVolume (pv_controller.go, v1.35), as ``sync_volume`` decides it."""
        ref = pv.spec.claim_ref
        claim = None if ref is None else self.pvcs.get(f"{ref.namespace}/{ref.name}")
        synced = sync_volume(pv, claim)
        if synced is None:
            name = pv.metadata.name
            del self.pvs[name]
            self._pv_names = None
            self._assumed_pvs.pop(name, None)
            self._reclass(name)
        elif synced is not pv:
            self._put(synced)

    def _provision(self, pvc: PersistentVolumeClaim) -> None:
        """The provisioner and PV controller's answer to a claim given a selected node."""
        node_name = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
        if node_name is None or pvc.spec.volume_name or self.node_of is None:
            return
        node = self.node_of(node_name)
        cls = self.classes.get(pvc_class(pvc))
        if node is None or cls is None or not can_provision(cls):
            return
        segment = node_segment(node, cls.provisioner, self.csi_nodes.get(node_name))
        self._bind_provisioned(pvc, provisioned_volume(pvc, cls, segment_affinity(segment)))

    def _bind_provisioned(self, pvc: PersistentVolumeClaim, pv: PersistentVolume) -> None:
        self._put(pv)
        self._put(bind_claim(pvc, pv.metadata.name))

    # The PV controller
    def sync_claims(self) -> None:
        """The PV controller's pass over the claims it binds without the scheduler: a claim
        pre-bound to a volume, and each unbound claim whose binding is not delayed, in key
        order: the best matching static PV, else a volume provisioned now.

        Upstream: syncUnboundClaim (pkg/controller/volume/persistentvolume/pv_controller.go)
        """
        if self.node_of is None:
            return
        if self.informers_synced:
            self._sync_volumes()
        # The PVs that refer to a claim, per claim name, in this map's order: a claim whose
        # binding is delayed can only match one of those (``find_best_match_for_claim``).
        # NOTE: exact through the pass: a PV it binds keeps its claim reference's name, and a
        # PV it adds or refers to a claim anew refers to the claim synced then, whose
        # namespace and name no later claim has.
        referring: dict[str, list[str]] = {}
        for name, pv in self.pvs.items():
            if (ref := pv.spec.claim_ref) is not None:
                referring.setdefault(ref.name, []).append(name)
        for key in sorted(self.pvcs):
            self._sync_if_unbound(self.pvcs[key], referring)

    def retry_provisioning(self) -> None:
        """The provisioner's retry of the Immediate claims it found no topology for, once
        nodes or CSINodes came (upstream retries with a backoff until a segment appears)."""
        if not self._awaiting_topology or self.node_of is None:
            return
        waiting = sorted(self._awaiting_topology)
        self._awaiting_topology.clear()
        for key in waiting:
            pvc = self.pvcs.get(key)
            if pvc is not None:
                self._sync_if_unbound(pvc)

    def _sync_volumes(self) -> None:
        """The PV controller's pass over the volumes (``sync_volume``): a volume referring to
        no claim, or pre-bound to one by name, is Available whatever phase it was given
        (none, as a manifest written by hand has it: the API server's Pending; or Released,
        once an administrator dropped its claim reference); one whose claim is gone is
        Released and reclaimed; one the controller bound to a claim since bound to another
        volume is freed.

        Upstream: syncVolume (pv_controller.go, v1.35)
        """
        for pv in list(self.pvs.values()):
            self._sync_volume(pv)

    def _sync_if_unbound(
        self, pvc: PersistentVolumeClaim, referring: dict[str, list[str]] | None = None
    ) -> None:
        if pvc.spec.volume_name and ANN_BIND_COMPLETED in pvc.metadata.annotations:
            return
        if pvc.metadata.deletion_timestamp is None:
            self._sync_claim(pvc, referring)

    def _sync_claim(
        self, pvc: PersistentVolumeClaim, referring: dict[str, list[str]] | None = None
    ) -> None:
        if pvc.spec.volume_name:
            # Pre-bound by the user: bind the named volume when it already points at this
            # claim, or when it is free and satisfies the claim (else the claim stays Pending).
            pv = self.pvs.get(pvc.spec.volume_name)
            if pv is None:
                return
            if is_volume_bound_to_claim(pv, pvc) or (
                pv.spec.claim_ref is None and check_volume_satisfy_claim(pv, pvc) is None
            ):
                self._put(bind_volume(pv, pvc))
                self._put(bind_claim(pvc, pv.metadata.name))
            return
        delay = is_delay_binding(pvc, self.classes)
        volumes: Iterable[PersistentVolume] = self.pvs.values()
        if delay and referring is not None:
            volumes = [self.pvs[n] for n in referring.get(pvc.metadata.name, ()) if n in self.pvs]
        pv = find_best_match_for_claim(pvc, volumes, delay)
        if pv is not None:
            self._put(bind_volume(pv, pvc))
            self._put(bind_claim(pvc, pv.metadata.name))
            return
        if (
            pvc.spec.storage_class_name is None
            and ANN_STORAGE_CLASS not in pvc.metadata.annotations
        ):
            name = default_class(self.classes.values())
            if name is not None:
                # Upstream: assignDefaultStorageClass; the claim's update syncs it again.
                spec = msgspec.structs.replace(pvc.spec, storage_class_name=name)
                updated = msgspec.structs.replace(pvc, spec=spec)
                self._put(updated)
                self._sync_claim(updated, referring)
                return
        cls = self.classes.get(pvc_class(pvc)) if pvc_class(pvc) else None
        if delay or cls is None or not can_provision(cls):
            return
        segments = immediate_segments(cls, self._all_nodes(), self.csi_nodes)
        if segments is None:
            # "no available topology found": the provisioner retries (``retry_provisioning``).
            self._awaiting_topology.add(pvc.key)
            return
        self._awaiting_topology.discard(pvc.key)
        segment = preferred_segment(segments, pvc)
        self._bind_provisioned(pvc, provisioned_volume(pvc, cls, segment_affinity(segment)))

    def _all_nodes(self) -> list[Node]:
        return list(self.list_nodes()) if self.list_nodes is not None else []
