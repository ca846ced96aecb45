"""A pod's volumes, and the volume sources that both a pod's inline volumes and a
PersistentVolume carry: the attachable disks VolumeRestrictions compares (GCE PD, AWS EBS,
iSCSI, Ceph RBD), the in-tree sources NodeVolumeLimits and VolumeBinding translate to CSI
drivers (GCE PD, AWS EBS, Azure Disk, Cinder, Azure File, vSphere, Portworx), and CSI; and
every other source the API server validates (hostPath, emptyDir, secret, configMap, downwardAPI,
projected, NFS, image, a generic ephemeral volume's claim template in ``claim_spec``, and the
legacy in-tree sources), decoded whole so that validation sees them and ``-o yaml`` re-emits
them.

List fields of the sources validation caches on are tuples, so that a source is hashable (see
``volume_source_validation``). Equal sources of the decoded whole kinds that pods repeat are
shared (``shared_source``): one object, however many pods carry it.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

import msgspec

from topospread.api.base import Int32, _Obj
from topospread.api.claim_spec import EphemeralVolumeSource
from topospread.api.meta_types import LabelSelector


class GCEPersistentDiskVolumeSource(_Obj, frozen=True):
    pd_name: str = ""
    fs_type: str = ""
    partition: int = 0
    read_only: bool = False


class AWSElasticBlockStoreVolumeSource(_Obj, frozen=True):
    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    partition: int = 0
    read_only: bool = False


class AzureDiskVolumeSource(_Obj, frozen=True):
    disk_name: str = ""
    disk_uri: str = msgspec.field(default="", name="diskURI")
    # None: the API server defaults it to "ReadWrite" (SetDefaults_AzureDiskVolumeSource).
    caching_mode: str | None = None
    fs_type: str | None = None
    read_only: bool = False
    # Read by CSI migration (only managed disks translate); the API server defaults it to
    # "Shared" (SetDefaults_AzureDiskVolumeSource), which readers of a missing kind apply.
    kind: str | None = None


class LocalObjectReference(_Obj, frozen=True):
    name: str = ""


class SecretReference(_Obj, frozen=True):
    """A secret named in another namespace (a CSI volume's secret references)."""

    name: str = ""
    namespace: str = ""


class CinderVolumeSource(_Obj, frozen=True):
    volume_id: str = msgspec.field(default="", name="volumeID")
    read_only: bool = False
    # A pod's names a secret of its namespace (only ``name``); a PersistentVolume's may name
    # another namespace.
    secret_ref: SecretReference | None = None


class PortworxVolumeSource(_Obj, frozen=True):
    """A PersistentVolume's ``spec.portworxVolume`` (read by the binder's CSI migration)."""

    volume_id: str = msgspec.field(default="", name="volumeID")
    fs_type: str = ""
    read_only: bool = False


class ISCSIVolumeSource(_Obj, frozen=True):
    target_portal: str = ""
    iqn: str = ""
    lun: int = 0
    iscsi_interface: str = ""
    fs_type: str = ""
    read_only: bool = False
    portals: tuple[str, ...] = ()
    chap_auth_discovery: bool = False
    chap_auth_session: bool = False
    secret_ref: LocalObjectReference | None = None
    initiator_name: str | None = None


class RBDVolumeSource(_Obj, frozen=True):
    monitors: list[str] = []
    image: str = ""
    pool: str = ""
    read_only: bool = False


class CSIVolumeSource(_Obj, frozen=True):
    """An inline CSI volume of a pod (``volumes[].csi``)."""

    driver: str = ""
    read_only: bool = False
    fs_type: str | None = None
    volume_attributes: dict[str, str] | None = None
    node_publish_secret_ref: LocalObjectReference | None = None


class CSIPersistentVolumeSource(_Obj, frozen=True):
    """A PersistentVolume's ``spec.csi``: the driver and the volume's handle, and the secrets
    the API server checks the names of."""

    driver: str = ""
    volume_handle: str = ""
    read_only: bool = False
    controller_publish_secret_ref: SecretReference | None = None
    node_publish_secret_ref: SecretReference | None = None
    controller_expand_secret_ref: SecretReference | None = None
    node_expand_secret_ref: SecretReference | None = None


class LocalVolumeSource(_Obj, frozen=True):
    """A PersistentVolume's ``spec.local``: a disk, partition or directory of one node."""

    path: str = ""
    fs_type: str | None = None


class PersistentVolumeClaimVolumeSource(_Obj, frozen=True):
    claim_name: str = ""


class KeyToPath(_Obj, frozen=True):
    key: str = ""
    path: str = ""
    mode: Int32 | None = None


class HostPathVolumeSource(_Obj, frozen=True):
    path: str = ""
    # None: the API server defaults it to "" (HostPathUnset).
    type: str | None = None


class EmptyDirVolumeSource(_Obj, frozen=True):
    medium: str = ""
    size_limit: str | int | float | None = None


class SecretVolumeSource(_Obj, frozen=True):
    secret_name: str = ""
    items: tuple[KeyToPath, ...] = ()
    default_mode: Int32 | None = None
    optional: bool | None = None


class ConfigMapVolumeSource(_Obj, frozen=True):
    name: str = ""
    items: tuple[KeyToPath, ...] = ()
    default_mode: Int32 | None = None
    optional: bool | None = None


class ObjectFieldSelector(_Obj, frozen=True):
    api_version: str = ""
    field_path: str = ""


class ResourceFieldSelector(_Obj, frozen=True):
    container_name: str = ""
    resource: str = ""
    divisor: str | int | float | None = None

    def __hash__(self) -> int:
        # NOTE: a divisor given as a float (``1.0``) is equal to the int (``1``), yet written
        # back as given: a source holding one is unhashable, so that it is never shared with
        # (``shared_source``) nor takes the cached verdict of one whose divisor is the int.
        if isinstance(self.divisor, float):
            raise TypeError("a ResourceFieldSelector with a float divisor is not hashed")
        return super().__hash__()


class DownwardAPIVolumeFile(_Obj, frozen=True):
    path: str = ""
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    mode: Int32 | None = None


class DownwardAPIVolumeSource(_Obj, frozen=True):
    items: tuple[DownwardAPIVolumeFile, ...] = ()
    default_mode: Int32 | None = None


class SecretProjection(_Obj, frozen=True):
    name: str = ""
    items: tuple[KeyToPath, ...] = ()
    optional: bool | None = None


class ConfigMapProjection(_Obj, frozen=True):
    name: str = ""
    items: tuple[KeyToPath, ...] = ()
    optional: bool | None = None


class DownwardAPIProjection(_Obj, frozen=True):
    items: tuple[DownwardAPIVolumeFile, ...] = ()


class ServiceAccountTokenProjection(_Obj, frozen=True):
    audience: str = ""
    # None: the API server defaults it to 3600 (an hour).
    expiration_seconds: int | None = None
    path: str = ""


class ClusterTrustBundleProjection(_Obj, frozen=True):
    name: str | None = None
    signer_name: str | None = None
    # A selector's maps make the projection unhashable: never cached.
    label_selector: LabelSelector | None = None
    optional: bool | None = None
    path: str = ""


class VolumeProjection(_Obj, frozen=True):
    secret: SecretProjection | None = None
    config_map: ConfigMapProjection | None = None
    downward_api: DownwardAPIProjection | None = msgspec.field(default=None, name="downwardAPI")
    service_account_token: ServiceAccountTokenProjection | None = None
    cluster_trust_bundle: ClusterTrustBundleProjection | None = None
    # NOTE: no ``podCertificate``: with the v1.35 default gates (PodCertificateRequest, beta,
    # off) the API server drops it from a new pod or template before validating it
    # (dropDisabledPodCertificateProjection, pkg/api/pod/util.go), so a source that held only
    # it is stored empty, which validation accepts. Its JSON types are still checked on decode
    # (strict decoding knows every field).


class ProjectedVolumeSource(_Obj, frozen=True):
    sources: tuple[VolumeProjection, ...] = ()
    default_mode: Int32 | None = None


class NFSVolumeSource(_Obj, frozen=True):
    server: str = ""
    path: str = ""
    read_only: bool = False


class ImageVolumeSource(_Obj, frozen=True):
    reference: str = ""
    pull_policy: str = ""


# The legacy in-tree sources (deprecated or removed plugins that the API still accepts), decoded
# whole for their validation (``volume_source_legacy``); pods rarely carry them.


class GitRepoVolumeSource(_Obj, frozen=True):
    repository: str = ""
    revision: str = ""
    directory: str = ""


class GlusterfsVolumeSource(_Obj, frozen=True):
    endpoints: str = ""
    path: str = ""
    read_only: bool = False


class FlockerVolumeSource(_Obj, frozen=True):
    dataset_name: str = ""
    dataset_uuid: str = msgspec.field(default="", name="datasetUUID")


class CephFSVolumeSource(_Obj, frozen=True):
    monitors: tuple[str, ...] = ()
    path: str = ""
    user: str = ""
    secret_file: str = ""
    # A pod's names a secret of its namespace (``name``); a PersistentVolume's may name another.
    secret_ref: SecretReference | None = None
    read_only: bool = False


class QuobyteVolumeSource(_Obj, frozen=True):
    registry: str = ""
    volume: str = ""
    read_only: bool = False
    user: str = ""
    group: str = ""
    tenant: str = ""


class FCVolumeSource(_Obj, frozen=True):
    target_wwns: tuple[str, ...] = msgspec.field(default=(), name="targetWWNs")
    lun: Int32 | None = None
    fs_type: str = ""
    read_only: bool = False
    wwids: tuple[str, ...] = ()


class FlexVolumeSource(_Obj, frozen=True):
    driver: str = ""
    fs_type: str = ""
    secret_ref: LocalObjectReference | None = None
    read_only: bool = False
    # A map: the source is unhashable, so checked afresh each time (never cached).
    options: dict[str, str] = {}


class AzureFileVolumeSource(_Obj, frozen=True):
    secret_name: str = ""
    share_name: str = ""
    read_only: bool = False


class VsphereVirtualDiskVolumeSource(_Obj, frozen=True):
    volume_path: str = ""
    fs_type: str = ""
    storage_policy_name: str = ""
    storage_policy_id: str = msgspec.field(default="", name="storagePolicyID")


class PhotonPersistentDiskVolumeSource(_Obj, frozen=True):
    pd_id: str = msgspec.field(default="", name="pdID")
    fs_type: str = ""


class StorageOSVolumeSource(_Obj, frozen=True):
    volume_name: str = ""
    volume_namespace: str = ""
    fs_type: str = ""
    read_only: bool = False
    secret_ref: LocalObjectReference | None = None


class ScaleIOVolumeSource(_Obj, frozen=True):
    gateway: str = ""
    system: str = ""
    # A pod's names a secret of its namespace (``name``); a PersistentVolume's may name another.
    secret_ref: SecretReference | None = None
    ssl_enabled: bool = False
    protection_domain: str = ""
    storage_pool: str = ""
    storage_mode: str = ""
    volume_name: str = ""
    fs_type: str = ""
    read_only: bool = False


class Volume(_Obj, frozen=True):
    name: str = ""
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    # Read by drain: kubectl refuses pods with local storage without --delete-emptydir-data.
    empty_dir: EmptyDirVolumeSource | None = None
    # Read by rebalance: the descheduler's evictor leaves pods with local storage alone.
    host_path: HostPathVolumeSource | None = None
    # Read by the volume plugins (VolumeRestrictions, NodeVolumeLimits): see api/volumes.py.
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    csi: CSIVolumeSource | None = None
    # In-tree sources CSI migration can translate, but whose volumes no limit counts here.
    azure_file: AzureFileVolumeSource | None = None
    vsphere_volume: VsphereVirtualDiskVolumeSource | None = None
    portworx_volume: PortworxVolumeSource | None = None
    # Decoded whole and validated (volume_source_validation.py, volume_source_legacy.py).
    git_repo: GitRepoVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    nfs: NFSVolumeSource | None = None
    glusterfs: GlusterfsVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    cephfs: CephFSVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    downward_api: DownwardAPIVolumeSource | None = msgspec.field(default=None, name="downwardAPI")
    fc: FCVolumeSource | None = None
    flex_volume: FlexVolumeSource | None = None
    config_map: ConfigMapVolumeSource | None = None
    photon_persistent_disk: PhotonPersistentDiskVolumeSource | None = None
    storageos: StorageOSVolumeSource | None = None
    projected: ProjectedVolumeSource | None = None
    scale_io: ScaleIOVolumeSource | None = msgspec.field(default=None, name="scaleIO")
    image: ImageVolumeSource | None = None

    def __post_init__(self) -> None:
        """Shares the volume's source with every equal one (``shared_source``): msgspec calls
        this for each Volume it decodes (JSON, msgpack, ``convert``) as well as for each one
        constructed, so every path that makes pods shares them."""
        # NOTE: a volume has one source as a rule, and these are the kinds a pod's sources
        # repeat in (kube-api-access-*: projected, on every pod read from a cluster). Written
        # out, not looped over, since this runs for every volume of every pod decoded.
        source: Any = self.projected
        if source is not None:
            found = shared_source(source)
            if found is not source:
                _force_setattr(self, "projected", found)
        source = self.config_map
        if source is not None:
            found = shared_source(source)
            if found is not source:
                _force_setattr(self, "config_map", found)
        source = self.secret
        if source is not None:
            found = shared_source(source)
            if found is not source:
                _force_setattr(self, "secret", found)
        source = self.downward_api
        if source is not None:
            found = shared_source(source)
            if found is not source:
                _force_setattr(self, "downward_api", found)


S = TypeVar("S")

_force_setattr: Final = msgspec.structs.force_setattr
_SHARED_LIMIT: Final = 1 << 12
_SHARED: dict[Any, Any] = {}


def shared_source(source: S) -> S:
    """The one object equal to ``source`` that volumes share: the first equal source seen, or
    ``source`` itself (then the one shared from now on).

    NOTE: sharing is safe because the sources are frozen values all the way down (tuples, not
    lists) and carry nothing of the pod or volume that holds them: validation is given the
    path of the volume it checks, so a message still names the pod's own volume. A source
    holding a map (a clusterTrustBundle's label selector) is unhashable and
    stays the pod's own. The table is bounded: when full it starts afresh (equal sources
    seen after that share a new object; nothing else changes).

    It costs a hash and a compare of the source just decoded (about 1 us for a
    kube-api-access source, whose ~13 objects are then freed at once and reused for the next
    pod's), and saves ~1.1 KiB a pod: 112 MiB on 100,000 pods.
    """
    try:
        found: S = _SHARED[source]
    except KeyError:
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        _SHARED[source] = source
        return source
    except TypeError:
        return source
    return found


# Each source of a volume, in the order the API server's validateVolumeSource looks at them:
# (attribute, field path child). Two field paths are upstream's own spellings: ``cephFS``
# (JSON: ``cephfs``) and ``downwarAPI`` (sic, JSON: ``downwardAPI``).
# NOTE: ``image`` is taken to come last, after ``ephemeral``: the v1.35 validation.go in the
# indexed sources predates it (the ImageVolume KEP places it at the end).
VOLUME_SOURCES: Final = (
    ("empty_dir", "emptyDir"),
    ("host_path", "hostPath"),
    ("git_repo", "gitRepo"),
    ("gce_persistent_disk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistent_volume_claim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downward_api", "downwarAPI"),
    ("fc", "fc"),
    ("flex_volume", "flexVolume"),
    ("config_map", "configMap"),
    ("azure_file", "azureFile"),
    ("vsphere_volume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume"),
    ("azure_disk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scale_io", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
)
