"""VolumeZone: a pod's bound PersistentVolumes' zone and region labels must match the node's.

Upstream: pkg/scheduler/framework/plugins/volumezone/volume_zone.go (v1.35), with
LabelZonesToSet (cloud-provider/volume/helpers). Only claims (not generic ephemeral volumes)
are read, and only their bound PVs: an unbound claim of a WaitForFirstConsumer class is left to
VolumeBinding.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.storage import VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER
from topospread.api.types import LABEL_TOPOLOGY_REGION, LABEL_TOPOLOGY_ZONE, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from topospread.framework.status import SKIP, SUCCESS, Code, Status, new_status
from topospread.framework.storage import StorageLister
from topospread.framework.types import NodeInfo
from topospread.plugins.helper.storage import pvc_class

NAME: Final = "VolumeZone"
ERR_REASON_CONFLICT: Final = "node(s) had no available volume zone"

LABEL_FAILURE_DOMAIN_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
TOPOLOGY_LABELS: Final = (
    LABEL_FAILURE_DOMAIN_BETA_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION,
    LABEL_TOPOLOGY_ZONE,
    LABEL_TOPOLOGY_REGION,
)
_TO_GA: Final = {
    LABEL_FAILURE_DOMAIN_BETA_ZONE: LABEL_TOPOLOGY_ZONE,
    LABEL_FAILURE_DOMAIN_BETA_REGION: LABEL_TOPOLOGY_REGION,
}
# A multi-zone label value lists its zones joined by this (volumehelpers.LabelMultiZoneDelimiter).
MULTI_ZONE_DELIMITER: Final = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    """One topology label of a bound PV. Upstream: pvTopology (volume_zone.go)."""

    pv_name: str
    key: str
    values: frozenset[str]


@dataclass(frozen=True, slots=True)
class StateData:
    """Upstream: stateData (volume_zone.go)."""

    pod_pv_topologies: tuple[PVTopology, ...]

    def clone(self) -> StateData:
        return self  # frozen: shared by preemption's copies


STATE_KEY: Final = StateKey[StateData]("PreFilter" + NAME)


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """The zones of a (possibly multi-zone) label value; None when one is empty (an empty
    value is one empty zone).

    Upstream: LabelZonesToSet (cloud-provider/volume/helpers/zones.go)
    """
    zones = [z.strip() for z in value.split(MULTI_ZONE_DELIMITER)]
    if any(not z for z in zones):
        return None
    return frozenset(zones)


class VolumeZone:
    """Upstream: VolumeZone (volume_zone.go)."""

    __slots__ = ("_handle",)

    def __init__(self, handle: Handle) -> None:
        self._handle = handle

    @property
    def name(self) -> str:
        return NAME

    def _storage(self) -> StorageLister:
        return self._handle.object_lister().storage()

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Upstream: PreFilter (volume_zone.go)."""
        topologies, status = self.get_pv_by_pod(pod)
        if not status.is_success:
            return None, status
        if not topologies:
            return None, SKIP
        state.write(STATE_KEY, StateData(topologies))
        return None, SUCCESS

    def get_pv_by_pod(self, pod: Pod) -> tuple[tuple[PVTopology, ...], Status]:
        """The topology labels of the PVs bound to the pod's claims.

        Upstream: getPVbyPod (volume_zone.go)
        """
        storage = self._storage()
        out: list[PVTopology] = []
        for volume in pod.spec.volumes:
            if volume.persistent_volume_claim is None:
                continue
            claim = volume.persistent_volume_claim.claim_name
            if not claim:
                return (), _unresolvable("PersistentVolumeClaim had no name")
            pvc = storage.persistent_volume_claim(pod.metadata.namespace, claim)
            if pvc is None:
                return (), _unresolvable(f'persistentvolumeclaim "{claim}" not found')
            pv_name = pvc.spec.volume_name
            if not pv_name:
                sc_name = pvc_class(pvc)
                if not sc_name:
                    return (), _unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                cls = storage.storage_class(sc_name)
                if cls is None:
                    return (), _unresolvable(f'storageclass.storage.k8s.io "{sc_name}" not found')
                if cls.volume_binding_mode is None:
                    return (), _unresolvable(
                        f'VolumeBindingMode not set for StorageClass "{sc_name}"'
                    )
                if cls.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER:
                    continue  # unbound: VolumeBinding decides
                return (), _unresolvable("PersistentVolume had no name")
            pv = storage.persistent_volume(pv_name)
            if pv is None:
                return (), _unresolvable(f'persistentvolume "{pv_name}" not found')
            for key in TOPOLOGY_LABELS:
                value = pv.metadata.labels.get(key)
                if value is None:
                    continue
                zones = label_zones_to_set(value)
                if zones is None:
                    continue  # upstream logs and ignores a label it cannot parse
                out.append(PVTopology(pv.metadata.name, key, zones))
        return tuple(out), SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: Filter (volume_zone.go)."""
        if not pod.spec.volumes:
            return SUCCESS
        try:
            topologies = state.read(STATE_KEY).pod_pv_topologies
        except StateNotFoundError:
            topologies, status = self.get_pv_by_pod(pod)
            if not status.is_success:
                return status
        labels = node_info.node.metadata.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            # A node without zone labels (a single-zone cluster) takes any volume.
            return SUCCESS
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_TO_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return new_status(Code.UnschedulableAndUnresolvable, ERR_REASON_CONFLICT)
        return SUCCESS


def _unresolvable(message: str) -> Status:
    return new_status(Code.UnschedulableAndUnresolvable, message)


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> VolumeZone:
    """VolumeZone takes no args. Upstream: New (volume_zone.go)."""
    return VolumeZone(handle)
