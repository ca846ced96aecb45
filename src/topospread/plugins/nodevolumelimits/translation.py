"""In-tree volume plugins and the CSI drivers they migrated to, as far as NodeVolumeLimits
counts them: which inline volumes and PVs are migratable, the driver each maps to, the volume
handle a translated volume gets, and whether migration is on for a plugin on a node.

Upstream: k8s.io/csi-translation-lib (translate.go and plugins/*.go) and isCSIMigrationOn
(nodevolumelimits/utils.go), v1.35. CSI migration is GA (always on) for AWS EBS, GCE PD, Azure
Disk and OpenStack Cinder; a node has migrated a plugin when its CSINode's migrated-plugins
annotation lists it.
"""

from __future__ import annotations

import hashlib
from typing import Final

from topospread.api.storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolume
from topospread.api.types import LABEL_TOPOLOGY_ZONE, Volume

AWS_EBS_IN_TREE: Final = "kubernetes.io/aws-ebs"
GCE_PD_IN_TREE: Final = "kubernetes.io/gce-pd"
AZURE_DISK_IN_TREE: Final = "kubernetes.io/azure-disk"
CINDER_IN_TREE: Final = "kubernetes.io/cinder"
AZURE_FILE_IN_TREE: Final = "kubernetes.io/azure-file"
VSPHERE_IN_TREE: Final = "kubernetes.io/vsphere-volume"
PORTWORX_IN_TREE: Final = "kubernetes.io/portworx-volume"

CSI_DRIVER_OF: Final = {
    AWS_EBS_IN_TREE: "ebs.csi.aws.com",
    GCE_PD_IN_TREE: "pd.csi.storage.gke.io",
    AZURE_DISK_IN_TREE: "disk.csi.azure.com",
    CINDER_IN_TREE: "cinder.csi.openstack.org",
    AZURE_FILE_IN_TREE: "file.csi.azure.com",
    VSPHERE_IN_TREE: "csi.vsphere.vmware.com",
    PORTWORX_IN_TREE: "pxd.portworx.com",
}
# The plugins whose migration isCSIMigrationOn recognises (the GA ones).
_MIGRATION_ON: Final = frozenset(
    {AWS_EBS_IN_TREE, GCE_PD_IN_TREE, AZURE_DISK_IN_TREE, CINDER_IN_TREE}
)

CSI_ATTACH_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
_RESOURCE_NAME_LENGTH_LIMIT: Final = 63
_UNSPECIFIED: Final = "UNSPECIFIED"


def csi_attach_limit_key(driver: str) -> str:
    """Upstream: GetCSIAttachLimitKey (pkg/volume/util/attach_limit.go, v1.35)."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        hashed = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + hashed
    return CSI_ATTACH_LIMIT_PREFIX + driver


# The migratable in-tree sources by field, in csi-translation-lib's order: a PV's spec has the
# first four; a pod's inline volume all seven.
_IN_TREE_SOURCES: Final = (
    ("gce_persistent_disk", GCE_PD_IN_TREE),
    ("aws_elastic_block_store", AWS_EBS_IN_TREE),
    ("cinder", CINDER_IN_TREE),
    ("azure_disk", AZURE_DISK_IN_TREE),
    ("azure_file", AZURE_FILE_IN_TREE),
    ("vsphere_volume", VSPHERE_IN_TREE),
    ("portworx_volume", PORTWORX_IN_TREE),
)
_PV_IN_TREE_SOURCES: Final = _IN_TREE_SOURCES[:4]


def inline_plugin_name(volume: Volume) -> str | None:
    """The in-tree plugin of a migratable inline volume (None: not migratable).

    Upstream: IsInlineMigratable / GetInTreePluginNameFromSpec (csi-translation-lib)
    """
    return next((p for f, p in _IN_TREE_SOURCES if getattr(volume, f) is not None), None)


def pv_plugin_name(pv: PersistentVolume) -> str | None:
    """The in-tree plugin of a migratable PV (None: not migratable). Upstream: IsPVMigratable."""
    spec = pv.spec
    return next((p for f, p in _PV_IN_TREE_SOURCES if getattr(spec, f) is not None), None)


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """Upstream: isCSIMigrationOn (nodevolumelimits/utils.go, v1.35)."""
    if csi_node is None or plugin not in _MIGRATION_ON:
        return False
    migrated = csi_node.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "")
    return plugin in migrated.split(",") if migrated else False


def _ebs_volume_id(volume_id: str) -> str:
    """``aws://zone/vol-1`` -> ``vol-1``. Upstream: KubernetesVolumeIDToEBSVolumeID."""
    if volume_id.startswith("aws://"):
        return volume_id.rsplit("/", 1)[-1]
    return volume_id


def inline_volume_handle(volume: Volume) -> str | None:
    """The volume handle of an inline volume translated to CSI (None: not translatable inline).

    Upstream: TranslateInTreeInlineVolumeToCSI of each csi-translation-lib plugin
    """
    if volume.gce_persistent_disk is not None:
        pd = volume.gce_persistent_disk.pd_name
        return f"projects/{_UNSPECIFIED}/zones/{_UNSPECIFIED}/disks/{pd}"
    if volume.aws_elastic_block_store is not None:
        return _ebs_volume_id(volume.aws_elastic_block_store.volume_id)
    if volume.cinder is not None:
        return volume.cinder.volume_id
    if volume.azure_disk is not None:
        return volume.azure_disk.disk_uri
    return None


def pv_volume_handle(pv: PersistentVolume) -> str | None:
    """The volume handle of a PV translated to CSI. Upstream: TranslateInTreePVToCSI."""
    spec = pv.spec
    if spec.gce_persistent_disk is not None:
        zone = pv.metadata.labels.get(LABEL_TOPOLOGY_ZONE) or pv.metadata.labels.get(
            "failure-domain.beta.kubernetes.io/zone", _UNSPECIFIED
        )
        pd = spec.gce_persistent_disk.pd_name
        if "__" in zone:  # a regional disk
            return f"projects/{_UNSPECIFIED}/regions/{_UNSPECIFIED}/disks/{pd}"
        return f"projects/{_UNSPECIFIED}/zones/{zone}/disks/{pd}"
    if spec.aws_elastic_block_store is not None:
        return _ebs_volume_id(spec.aws_elastic_block_store.volume_id)
    if spec.cinder is not None:
        return spec.cinder.volume_id
    if spec.azure_disk is not None:
        return spec.azure_disk.disk_uri
    return None
