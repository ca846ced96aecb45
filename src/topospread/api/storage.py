"""Storage objects as the scheduler's volume plugins read them: PersistentVolumes and their
claims (core/v1), StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities
(storage.k8s.io/v1). Frozen and typed like ``types.py``; only the fields the plugins, the
binder and the storage state read are declared.
"""

from __future__ import annotations

from typing import Final

import msgspec

from topospread.api.base import Int32, _Obj

# Re-exported: a claim's spec lives beside the template a generic ephemeral volume carries.
from topospread.api.claim_spec import PersistentVolumeClaimSpec as PersistentVolumeClaimSpec
from topospread.api.claim_spec import Quantities as Quantities
from topospread.api.claim_spec import TypedLocalObjectReference as TypedLocalObjectReference
from topospread.api.claim_spec import VolumeResourceRequirements as VolumeResourceRequirements
from topospread.api.decode_errors import clean, explain, type_info
from topospread.api.types import LabelSelector, NodeSelector, ObjectMeta, StatefulSet
from topospread.api.volumes import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CephFSVolumeSource,
    CinderVolumeSource,
    CSIPersistentVolumeSource,
    FCVolumeSource,
    FlockerVolumeSource,
    GCEPersistentDiskVolumeSource,
    HostPathVolumeSource,
    ISCSIVolumeSource,
    LocalVolumeSource,
    NFSVolumeSource,
    PhotonPersistentDiskVolumeSource,
    PortworxVolumeSource,
    QuobyteVolumeSource,
    RBDVolumeSource,
    ScaleIOVolumeSource,
    SecretReference,
    VsphereVirtualDiskVolumeSource,
)
from topospread.errors import ManifestError

# Access modes (core/v1 PersistentVolumeAccessMode).
READ_WRITE_ONCE: Final = "ReadWriteOnce"
READ_ONLY_MANY: Final = "ReadOnlyMany"
READ_WRITE_MANY: Final = "ReadWriteMany"
READ_WRITE_ONCE_POD: Final = "ReadWriteOncePod"
ACCESS_MODES: Final = (READ_WRITE_ONCE, READ_ONLY_MANY, READ_WRITE_MANY, READ_WRITE_ONCE_POD)
# Volume modes and phases.
VOLUME_MODE_FILESYSTEM: Final = "Filesystem"
VOLUME_MODE_BLOCK: Final = "Block"
VOLUME_AVAILABLE: Final = "Available"
VOLUME_BOUND: Final = "Bound"
VOLUME_RELEASED: Final = "Released"
VOLUME_FAILED: Final = "Failed"
CLAIM_PENDING: Final = "Pending"
CLAIM_BOUND: Final = "Bound"
CLAIM_LOST: Final = "Lost"
# StorageClass volumeBindingMode (storage/v1 VolumeBindingMode).
VOLUME_BINDING_IMMEDIATE: Final = "Immediate"
VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER: Final = "WaitForFirstConsumer"
VOLUME_BINDING_MODES: Final = (VOLUME_BINDING_IMMEDIATE, VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER)
# Annotations the PV controller and the scheduler write (component-helpers/storage/volume).
ANN_SELECTED_NODE: Final = "volume.kubernetes.io/selected-node"
ANN_BIND_COMPLETED: Final = "pv.kubernetes.io/bind-completed"
ANN_STORAGE_CLASS: Final = "volume.beta.kubernetes.io/storage-class"
ANN_BOUND_BY_CONTROLLER: Final = "pv.kubernetes.io/bound-by-controller"
ANN_DYNAMICALLY_PROVISIONED: Final = "pv.kubernetes.io/provisioned-by"
# The CSINode annotation naming the in-tree plugins migrated to CSI on the node.
ANN_MIGRATED_PLUGINS: Final = "storage.alpha.kubernetes.io/migrated-plugins"
# A provisioner that cannot provision (component-helpers/storage/volume NotSupportedProvisioner).
NOT_SUPPORTED_PROVISIONER: Final = "kubernetes.io/no-provisioner"
RESOURCE_STORAGE: Final = "storage"

# ---------------------------------------------------------------------------------------------
# core/v1: PersistentVolume


class ObjectReference(_Obj, frozen=True):
    """A PV's ``spec.claimRef``."""

    kind: str = ""
    namespace: str = ""
    name: str = ""
    uid: str = ""
    api_version: str = ""


class VolumeNodeAffinity(_Obj, frozen=True):
    required: NodeSelector | None = None


# A PV's own variants of legacy sources (the pod's, plus a namespace where the PV may name one
# outside any pod's), decoded whole for their validation (``pv_source_validation``).


class GlusterfsPersistentVolumeSource(_Obj, frozen=True):
    endpoints: str = ""
    path: str = ""
    read_only: bool = False
    # None (absent or null) is Go's nil pointer; "" is set, and refused.
    endpoints_namespace: str | None = None


class FlexPersistentVolumeSource(_Obj, frozen=True):
    driver: str = ""
    fs_type: str = ""
    secret_ref: SecretReference | None = None
    read_only: bool = False
    options: dict[str, str] = {}


class AzureFilePersistentVolumeSource(_Obj, frozen=True):
    secret_name: str = ""
    share_name: str = ""
    read_only: bool = False
    secret_namespace: str | None = None


class StorageOSPersistentVolumeSource(_Obj, frozen=True):
    volume_name: str = ""
    volume_namespace: str = ""
    fs_type: str = ""
    read_only: bool = False
    secret_ref: ObjectReference | None = None


class PersistentVolumeSpec(_Obj, frozen=True):
    capacity: Quantities = {}
    access_modes: list[str] = []
    claim_ref: ObjectReference | None = None
    storage_class_name: str = ""
    node_affinity: VolumeNodeAffinity | None = None
    volume_mode: str | None = None
    persistent_volume_reclaim_policy: str = ""
    volume_attributes_class_name: str | None = None
    # The volume's source (exactly one is valid, see pv_source_validation), each decoded for
    # the volume plugins or for the API server's checks of its fields.
    csi: CSIPersistentVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    portworx_volume: PortworxVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    local: LocalVolumeSource | None = None
    nfs: NFSVolumeSource | None = None
    glusterfs: GlusterfsPersistentVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    cephfs: CephFSVolumeSource | None = None
    fc: FCVolumeSource | None = None
    flex_volume: FlexPersistentVolumeSource | None = None
    azure_file: AzureFilePersistentVolumeSource | None = None
    vsphere_volume: VsphereVirtualDiskVolumeSource | None = None
    photon_persistent_disk: PhotonPersistentDiskVolumeSource | None = None
    scale_io: ScaleIOVolumeSource | None = msgspec.field(default=None, name="scaleIO")
    storageos: StorageOSPersistentVolumeSource | None = None


class PersistentVolumeStatus(_Obj, frozen=True):
    phase: str = ""


class PersistentVolume(_Obj, frozen=True):
    api_version: str = "v1"
    kind: str = "PersistentVolume"
    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeSpec = PersistentVolumeSpec()
    status: PersistentVolumeStatus = PersistentVolumeStatus()

    @property
    def name(self) -> str:
        return self.metadata.name


# ---------------------------------------------------------------------------------------------
# core/v1: PersistentVolumeClaim


class PersistentVolumeClaimStatus(_Obj, frozen=True):
    phase: str = ""


class PersistentVolumeClaim(_Obj, frozen=True):
    api_version: str = "v1"
    kind: str = "PersistentVolumeClaim"
    metadata: ObjectMeta = ObjectMeta()
    spec: PersistentVolumeClaimSpec = PersistentVolumeClaimSpec()
    status: PersistentVolumeClaimStatus = PersistentVolumeClaimStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def key(self) -> str:
        """``namespace/name``, the key upstream's caches use."""
        return f"{self.metadata.namespace}/{self.metadata.name}"


# ---------------------------------------------------------------------------------------------
# storage.k8s.io/v1


class TopologySelectorLabelRequirement(_Obj, frozen=True):
    key: str = ""
    values: list[str] = []


class TopologySelectorTerm(_Obj, frozen=True):
    match_label_expressions: list[TopologySelectorLabelRequirement] = []


class StorageClass(_Obj, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "StorageClass"
    metadata: ObjectMeta = ObjectMeta()
    provisioner: str = ""
    parameters: dict[str, str] = {}
    reclaim_policy: str | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] = []
    allow_volume_expansion: bool | None = None


class VolumeNodeResources(_Obj, frozen=True):
    count: Int32 | None = None


class CSINodeDriver(_Obj, frozen=True):
    name: str = ""
    node_id: str = msgspec.field(default="", name="nodeID")
    topology_keys: list[str] = []
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(_Obj, frozen=True):
    drivers: list[CSINodeDriver] = []


class CSINode(_Obj, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSINode"
    metadata: ObjectMeta = ObjectMeta()
    spec: CSINodeSpec = CSINodeSpec()


class CSIDriverSpec(_Obj, frozen=True):
    attach_required: bool | None = None
    storage_capacity: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: list[str] = []
    fs_group_policy: str | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = msgspec.field(default=None, name="seLinuxMount")
    node_allocatable_update_period_seconds: int | None = None


class CSIDriver(_Obj, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSIDriver"
    metadata: ObjectMeta = ObjectMeta()
    spec: CSIDriverSpec = CSIDriverSpec()


class CSIStorageCapacity(_Obj, frozen=True):
    api_version: str = "storage.k8s.io/v1"
    kind: str = "CSIStorageCapacity"
    metadata: ObjectMeta = ObjectMeta()
    node_topology: LabelSelector | None = None
    storage_class_name: str = ""
    capacity: str | int | float | None = None
    maximum_volume_size: str | int | float | None = None


def volume_claim_templates(sts: StatefulSet) -> list[PersistentVolumeClaim]:
    """The set's volumeClaimTemplates as claims. A null in one means "unset" to the API
    server's decoder (``metadata: null`` is an empty metadata); any value of the wrong type
    left (strict field validation refuses them first, unless it is off) is a ManifestError
    naming the template's field."""
    out = []
    for i, template in enumerate(sts.spec.volume_claim_templates):
        try:
            out.append(msgspec.convert(template, PersistentVolumeClaim))
            continue
        except msgspec.ValidationError:
            cleaned = clean(template, type_info(PersistentVolumeClaim))
        try:
            out.append(msgspec.convert(cleaned, PersistentVolumeClaim))
        except msgspec.ValidationError as err:
            raise ManifestError(f"spec.volumeClaimTemplates[{i}]: {explain(err, cleaned)}") from err
    return out


STORAGE_KINDS: Final = (
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    CSINode,
    CSIDriver,
    CSIStorageCapacity,
)
StorageObject = (
    PersistentVolume
    | PersistentVolumeClaim
    | StorageClass
    | CSINode
    | CSIDriver
    | CSIStorageCapacity
)
