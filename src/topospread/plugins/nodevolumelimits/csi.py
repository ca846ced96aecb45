"""NodeVolumeLimits: the CSI volumes attached to a node must stay within its drivers' limits.

Upstream: pkg/scheduler/framework/plugins/nodevolumelimits/csi.go (CSILimits, registered as
NodeVolumeLimits), v1.35. A volume counts once per node however many pods use it (keyed by
driver and volume handle); a claim not bound yet counts under its StorageClass's driver with a
handle made from the claim's name (upstream prefixes it with a random string, here a fixed one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.api.resource import parse_quantity
from topospread.api.storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolumeClaim
from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.storage import StorageLister
from topospread.framework.types import NodeInfo
from topospread.plugins.helper.storage import claim_name_of, ephemeral_volume_is_for_pod, pvc_class
from topospread.plugins.nodevolumelimits.translation import (
    ATTACHABLE_VOLUMES_PREFIX,
    CSI_DRIVER_OF,
    csi_attach_limit_key,
    inline_plugin_name,
    inline_volume_handle,
    is_csi_migration_on,
    pv_plugin_name,
    pv_volume_handle,
)

NAME: Final = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED: Final = "node(s) exceed max volume count"
# Upstream draws a random 32-character prefix per scheduler; any fixed one keeps the counts.
RANDOM_VOLUME_ID_PREFIX: Final = "topospread-unbound"


class PVCNotFoundError(LookupError):
    """The new pod's claim does not exist (upstream: an IsNotFound error)."""


class CSILimits:
    """Upstream: CSILimits (csi.go)."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def _storage(self) -> StorageLister:
        return self._handle.object_lister().storage()

    def storage(self) -> StorageLister:
        """The cluster's storage lister (the fast path's kernel reads CSINodes from it)."""
        return self._storage()

    def new_volumes(
        self, state: CycleState, pod: Pod, csi_node: CSINode | None
    ) -> dict[str, str] | Status:
        """The pod's own attachable volumes on a node with ``csi_node`` (unique name -> limit
        key), or the status their lookup fails with; NOTE: callers must not change the dict."""
        return self._new_volumes(state, self._storage(), pod, csi_node)

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Skip unless the pod has a claim, a generic ephemeral volume or a migratable inline
        volume. Upstream: PreFilter (csi.go)."""
        for v in pod.spec.volumes:
            if v.persistent_volume_claim is not None or v.ephemeral is not None:
                return None, SUCCESS
            if inline_plugin_name(v) is not None:
                return None, SUCCESS
        return None, SKIP

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: Filter (csi.go)."""
        if not pod.spec.volumes:
            return SUCCESS
        storage = self._storage()
        csi_node = storage.csi_node(node_info.name)
        found = self._new_volumes(state, storage, pod, csi_node)
        if isinstance(found, Status):
            return found
        new_volumes = dict(found)  # a copy: the attached volumes are taken out of it below
        if not new_volumes:
            return SUCCESS
        limits = _kept_volume_limits(node_info, csi_node)
        if not limits:
            return SUCCESS
        if _within_limits_at_most(node_info, new_volumes, limits):
            return SUCCESS
        attached: dict[str, str] = {}
        for existing in node_info.pods:
            try:
                self.filter_attachable_volumes(storage, existing, csi_node, False, attached)
            except ValueError as e:
                return as_status(e)
        attached_count: dict[str, int] = {}
        for unique_name, key in attached.items():
            new_volumes.pop(unique_name, None)  # one volume used by several pods counts once
            attached_count[key] = attached_count.get(key, 0) + 1
        new_count: dict[str, int] = {}
        for key in new_volumes.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return new_status(Code.Unschedulable, ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
        return SUCCESS

    def _new_volumes(
        self, state: CycleState, storage: StorageLister, pod: Pod, csi_node: CSINode | None
    ) -> dict[str, str] | Status:
        """The pod's own attachable volumes (unique name -> limit key), or the status their
        lookup fails with. NOTE: they read the node only through its CSINode's
        migrated-plugins annotation, and the storage does not change during an attempt: kept
        in the cycle state per annotation value."""
        try:
            memo = state.read(_NEW_VOLUMES_KEY)
        except StateNotFoundError:
            memo = _NewVolumes()
            state.write(_NEW_VOLUMES_KEY, memo)
        migrated = csi_node.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "") if csi_node else None
        found = memo.by_migrated.get(migrated)
        if found is None:
            new_volumes: dict[str, str] = {}
            try:
                self.filter_attachable_volumes(storage, pod, csi_node, True, new_volumes)
                found = new_volumes
            except PVCNotFoundError as e:
                found = new_status(Code.UnschedulableAndUnresolvable, str(e))
            except ValueError as e:
                found = as_status(e)
            memo.by_migrated[migrated] = found
        return found

    def filter_attachable_volumes(
        self,
        storage: StorageLister,
        pod: Pod,
        csi_node: CSINode | None,
        new_pod: bool,
        result: dict[str, str],
    ) -> None:
        """Add the pod's CSI volumes to ``result`` (unique name -> limit key).

        Upstream: filterAttachableVolumes (csi.go)
        """
        for volume in pod.spec.volumes:
            claim = claim_name_of(pod, volume)
            if claim is None:
                self._inline(volume, csi_node, result)
                continue
            name, ephemeral = claim
            if not name:
                raise ValueError("PersistentVolumeClaim had no name")
            pvc = storage.persistent_volume_claim(pod.metadata.namespace, name)
            if pvc is None:
                if new_pod:
                    raise PVCNotFoundError(
                        f"looking up PVC {pod.metadata.namespace}/{name}: "
                        f'persistentvolumeclaim "{name}" not found'
                    )
                continue
            if ephemeral:
                err = ephemeral_volume_is_for_pod(pod, pvc)
                if err is not None:
                    raise ValueError(err)
            driver, handle = self._csi_driver_info(storage, csi_node, pvc)
            if not driver or not handle:
                continue
            result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    def _inline(self, volume: Any, csi_node: CSINode | None, result: dict[str, str]) -> None:
        """Upstream: checkAttachableInlineVolume (csi.go)."""
        if csi_node is None:
            return  # migration is on for no plugin without a CSINode (``is_csi_migration_on``)
        plugin = inline_plugin_name(volume)
        if plugin is None or not is_csi_migration_on(csi_node, plugin):
            return
        handle = inline_volume_handle(volume)
        if handle is None:
            return
        driver = CSI_DRIVER_OF[plugin]
        result[f"{driver}/{handle}"] = csi_attach_limit_key(driver)

    def _csi_driver_info(
        self, storage: StorageLister, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """Upstream: getCSIDriverInfo (csi.go)."""
        if not pvc.spec.volume_name:
            return self._csi_driver_info_from_sc(storage, csi_node, pvc)
        pv = storage.persistent_volume(pvc.spec.volume_name)
        if pv is None:
            return self._csi_driver_info_from_sc(storage, csi_node, pvc)
        if pv.spec.csi is not None:
            return pv.spec.csi.driver, pv.spec.csi.volume_handle
        plugin = pv_plugin_name(pv)
        if plugin is None or not is_csi_migration_on(csi_node, plugin):
            return "", ""
        return CSI_DRIVER_OF[plugin], pv_volume_handle(pv) or ""

    def _csi_driver_info_from_sc(
        self, storage: StorageLister, csi_node: CSINode | None, pvc: PersistentVolumeClaim
    ) -> tuple[str, str]:
        """Upstream: getCSIDriverInfoFromSC (csi.go)."""
        sc_name = pvc_class(pvc)
        if not sc_name:
            return "", ""
        cls = storage.storage_class(sc_name)
        if cls is None:
            return "", ""
        handle = f"{RANDOM_VOLUME_ID_PREFIX}-{pvc.metadata.namespace}/{pvc.metadata.name}"
        provisioner = cls.provisioner
        if provisioner in CSI_DRIVER_OF:
            if not is_csi_migration_on(csi_node, provisioner):
                return "", ""
            return CSI_DRIVER_OF[provisioner], handle
        return provisioner, handle


_ATTACHABLE_KEY: Final = NAME + ".attachable"
_LIMITS_KEY: Final = NAME + ".limits"


@dataclass(slots=True)
class _NewVolumes:
    """The pod's own attachable volumes per CSINode migrated-plugins annotation ("": none;
    None: no CSINode), for one attempt."""

    by_migrated: dict[str | None, dict[str, str] | Status] = field(default_factory=dict)

    def clone(self) -> _NewVolumes:
        return self  # the same pod and storage: shared by preemption's copies


_NEW_VOLUMES_KEY: Final = StateKey[_NewVolumes](NAME + ".newVolumes")


def _kept_volume_limits(node_info: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
    """``volume_limits``, kept in the NodeInfo's cache (cleared when the node changes) while
    its CSINode stays the same object. NOTE: callers must not change the dict."""
    kept = node_info.cache.get(_LIMITS_KEY)
    if kept is None or kept[0] is not csi_node:
        kept = node_info.cache[_LIMITS_KEY] = (csi_node, volume_limits(node_info, csi_node))
    limits: dict[str, int] = kept[1]
    return limits


def _within_limits_at_most(
    node_info: NodeInfo, new_volumes: Mapping[str, str], limits: Mapping[str, int]
) -> bool:
    """Whether the pod fits under every limit even if each volume of the node's pods that
    could count (a claim, a generic ephemeral volume, a migratable inline volume) counted
    against each of its keys, and whether the node's pods hold no volume whose lookup can
    fail (an ephemeral volume, a claim without a name): then Filter passes whatever the
    storage says. NOTE: exact, not a heuristic — the volumes attached per key are at most
    those counted, and the pod's new ones at most its own; the count is kept in the
    NodeInfo's cache, which every change to its pods clears.
    """
    found = node_info.cache.get(_ATTACHABLE_KEY)
    if found is None:
        count, risky = 0, 0
        for existing in node_info.pods:
            c, r = attachable_at_most(existing)
            count, risky = count + c, risky + r
        found = node_info.cache[_ATTACHABLE_KEY] = (count, risky > 0)
    count, has_risky = found
    if has_risky:
        return False
    per_key: dict[str, int] = {}
    for key in new_volumes.values():
        per_key[key] = per_key.get(key, 0) + 1
    return all(key not in limits or count + n <= limits[key] for key, n in per_key.items())


def attachable_at_most(pod: Pod) -> tuple[int, int]:
    """How many of the pod's volumes could count against a node's limits (a claim, a generic
    ephemeral volume, a migratable inline volume), and how many have a lookup that can fail
    (an ephemeral volume, a claim without a name): ``_within_limits_at_most`` sums them over a
    node's pods, the fast path's node table per node (``kernels/volumes.py``)."""
    count = risky = 0
    for v in pod.spec.volumes:
        claim = v.persistent_volume_claim
        if v.ephemeral is not None or (claim is not None and not claim.claim_name):
            risky += 1
        elif claim is not None or inline_plugin_name(v) is not None:
            count += 1
    return count, risky


def volume_limits(node_info: NodeInfo, csi_node: CSINode | None) -> dict[str, int]:
    """The node's attachable-volume limits: its allocatable ``attachable-volumes-*`` resources,
    overridden by its CSINode drivers' allocatable counts.

    Upstream: getVolumeLimits (csi.go) and volumeLimits (utils.go)
    """
    limits: dict[str, int] = {}
    for name, value in node_info.node.status.allocatable.items():
        if name.startswith(ATTACHABLE_VOLUMES_PREFIX):
            limits[name] = parse_quantity(value).value()
    if csi_node is not None:
        for driver in csi_node.spec.drivers:
            if driver.allocatable is not None and driver.allocatable.count is not None:
                limits[csi_attach_limit_key(driver.name)] = driver.allocatable.count
    return limits


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> CSILimits:
    """NodeVolumeLimits takes no args. Upstream: NewCSI (csi.go)."""
    return CSILimits(handle)
