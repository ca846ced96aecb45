"""In-tree volume plugins and the CSI drivers they migrated to: which inline volumes and PVs
are migratable, the driver each maps to, the volume handle a translated volume gets, and whether
migration is on for a plugin (shared by NodeVolumeLimits and the volume binder).

Upstream: k8s.io/csi-translation-lib v0.35 (translate.go and plugins/*.go), isCSIMigrationOn
(nodevolumelimits/utils.go, v1.35) and isCSIMigrationOnForPlugin (volumebinding/binder.go,
v1.35). CSI migration is GA (always on) for AWS EBS, GCE PD, Azure Disk and OpenStack Cinder,
and for Portworx (its CSIMigrationPortworx gate GA, locked on, since v1.33). NodeVolumeLimits
takes the first four as migrated on every node with a CSINode, Portworx only where the
CSINode's migrated-plugins annotation lists it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

from topospread.api.storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolume
from topospread.api.types import LABEL_FAILURE_DOMAIN_BETA_ZONE, LABEL_TOPOLOGY_ZONE, Volume
from topospread.api.volumes import AzureDiskVolumeSource

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
# The plugins migration is on for (isCSIMigrationOnForPlugin and isCSIMigrationOn agree, v1.35):
# GA for the first four; Portworx's gate is GA (locked on) since v1.33.
_MIGRATION_ON: Final = frozenset(
    {AWS_EBS_IN_TREE, GCE_PD_IN_TREE, AZURE_DISK_IN_TREE, CINDER_IN_TREE, PORTWORX_IN_TREE}
)
# Of those, the ones NodeVolumeLimits takes as migrated without reading the CSINode's
# migrated-plugins annotation (isCSIMigrationOn returns early for them).
_MIGRATED_ON_EVERY_NODE: Final = _MIGRATION_ON - {PORTWORX_IN_TREE}

CSI_ATTACH_LIMIT_PREFIX: Final = "attachable-volumes-csi-"
ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
_RESOURCE_NAME_LENGTH_LIMIT: Final = 63
UNSPECIFIED: Final = "UNSPECIFIED"
# csi-translation-lib's labelMultiZoneDelimiter: a regional volume's zones in one label.
LABEL_MULTI_ZONE_DELIMITER: Final = "__"
# The API server's default for an Azure Disk's kind (SetDefaults_AzureDiskVolumeSource).
AZURE_SHARED_BLOB_DISK: Final = "Shared"
AZURE_MANAGED_DISK: Final = "Managed"
_AWS_VOLUME_ID: Final = re.compile(r"^vol-[^/]*$")


def csi_attach_limit_key(driver: str) -> str:
    """Upstream: GetCSIAttachLimitKey (pkg/volume/util/attach_limit.go, v1.35)."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        hashed = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + hashed
    return CSI_ATTACH_LIMIT_PREFIX + driver


# The migratable in-tree sources by field, in csi-translation-lib's order: a PV's spec has
# those of ``_PV_IN_TREE_SOURCES``; a pod's inline volume all seven.
_IN_TREE_SOURCES: Final = (
    ("gce_persistent_disk", GCE_PD_IN_TREE),
    ("aws_elastic_block_store", AWS_EBS_IN_TREE),
    ("cinder", CINDER_IN_TREE),
    ("azure_disk", AZURE_DISK_IN_TREE),
    ("azure_file", AZURE_FILE_IN_TREE),
    ("vsphere_volume", VSPHERE_IN_TREE),
    ("portworx_volume", PORTWORX_IN_TREE),
)
_PV_IN_TREE_SOURCES: Final = (*_IN_TREE_SOURCES[:4], _IN_TREE_SOURCES[-1])


def inline_plugin_name(volume: Volume) -> str | None:
    """The in-tree plugin of a migratable inline volume (None: not migratable).

    Upstream: IsInlineMigratable / GetInTreePluginNameFromSpec (csi-translation-lib)
    """
    # NOTE: _IN_TREE_SOURCES's fields in its order, spelled out: every pod of a cluster has a
    # volume that is none of them (its service account token), and the scheduler's node table
    # asks of each bound pod's volumes (the chart cluster's 10,000) when it is built.
    if volume.gce_persistent_disk is not None:
        return GCE_PD_IN_TREE
    if volume.aws_elastic_block_store is not None:
        return AWS_EBS_IN_TREE
    if volume.cinder is not None:
        return CINDER_IN_TREE
    if volume.azure_disk is not None:
        return AZURE_DISK_IN_TREE
    if volume.azure_file is not None:
        return AZURE_FILE_IN_TREE
    if volume.vsphere_volume is not None:
        return VSPHERE_IN_TREE
    if volume.portworx_volume is not None:
        return PORTWORX_IN_TREE
    return None


def pv_plugin_name(pv: PersistentVolume) -> str | None:
    """The in-tree plugin of a migratable PV (None: not migratable). Upstream: IsPVMigratable."""
    spec = pv.spec
    return next((p for f, p in _PV_IN_TREE_SOURCES if getattr(spec, f) is not None), None)


def is_csi_migration_on_for_plugin(plugin: str) -> bool:
    """Upstream: isCSIMigrationOnForPlugin (volumebinding/binder.go, v1.35)."""
    return plugin in _MIGRATION_ON


def is_csi_migration_on(csi_node: CSINode | None, plugin: str) -> bool:
    """Whether NodeVolumeLimits counts the plugin's volumes as its CSI driver's on the node:
    a GA plugin on any node with a CSINode; Portworx where its annotation lists it.

    Upstream: isCSIMigrationOn (nodevolumelimits/utils.go, v1.35)
    """
    if csi_node is None or not is_csi_migration_on_for_plugin(plugin):
        return False
    if plugin in _MIGRATED_ON_EVERY_NODE:
        return True
    migrated = csi_node.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "")
    return plugin in migrated.split(",") if migrated else False


class TranslationError(ValueError):
    """csi-translation-lib could not translate a PV (its error message)."""


def gce_pv_volume_handle(pv: PersistentVolume, pd_name: str) -> str:
    """Zonal, regional (its zones' one region) or unspecified, by the PV's zone label (the
    legacy label first). Upstream: TranslateInTreePVToCSI (plugins/gce_pd.go)."""
    label = pv.metadata.labels.get(LABEL_FAILURE_DOMAIN_BETA_ZONE, "")
    if not label:
        label = pv.metadata.labels.get(LABEL_TOPOLOGY_ZONE, "")
    zones = label.split(LABEL_MULTI_ZONE_DELIMITER)
    if len(zones) == 1 and zones[0]:
        return f"projects/{UNSPECIFIED}/zones/{zones[0]}/disks/{pd_name}"
    if len(zones) > 1:
        try:
            region = gce_region_from_zones(zones)
        except TranslationError as err:
            raise TranslationError(f"failed to get region from zones: {err}") from err
        return f"projects/{UNSPECIFIED}/regions/{region}/disks/{pd_name}"
    return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd_name}"


def gce_region_from_zones(zones: Iterable[str]) -> str:
    """``{locale}-{region}-{zone}`` zones' one region. Upstream: gceGetRegionFromZones."""
    regions: set[str] = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                "zone in unexpected format, expected: {locale}-{region}-{zone}, got: " + zone
            )
        regions.add("-".join(parts[:2]))
    if len(regions) != 1:
        shown = " ".join(f"{r}:{{}}" for r in sorted(regions))  # Go prints a set as a map
        raise TranslationError(f"multiple or no regions gotten from zones, got: map[{shown}]")
    return next(iter(regions))


def ebs_volume_id(kubernetes_id: str) -> str:
    """``aws://zone/vol-1`` -> ``vol-1``; a bare ID as it is.

    Upstream: KubernetesVolumeIDToEBSVolumeID (plugins/aws_ebs.go)
    """
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    rest = kubernetes_id.removeprefix("aws://")
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    path = rest.partition("/")[2]
    aws_id = path.strip("/")
    if not _AWS_VOLUME_ID.match(aws_id):
        raise TranslationError(
            "failed to translate Kubernetes ID to EBS Volume ID "
            f"Invalid format for AWS volume ({kubernetes_id})"
        )
    return aws_id


def azure_disk_volume_handle(source: AzureDiskVolumeSource) -> str:
    """A managed disk's URI (the kind defaults to Shared, which does not translate).

    Upstream: TranslateInTreePVToCSI / TranslateInTreeInlineVolumeToCSI (plugins/azure_disk.go)
    """
    kind = source.kind if source.kind is not None else AZURE_SHARED_BLOB_DISK
    if kind.lower() != AZURE_MANAGED_DISK.lower():
        raise TranslationError(f"kind({kind}) is not supported in csi migration")
    return source.disk_uri


def inline_volume_handle(volume: Volume) -> str | None:
    """The volume handle of an inline volume translated to CSI (None: not translatable inline,
    or csi-translation-lib's error, which NodeVolumeLimits logs and skips).

    Upstream: TranslateInTreeInlineVolumeToCSI of each csi-translation-lib plugin
    """
    try:
        if volume.gce_persistent_disk is not None:
            pd = volume.gce_persistent_disk.pd_name
            return f"projects/{UNSPECIFIED}/zones/{UNSPECIFIED}/disks/{pd}"
        if volume.aws_elastic_block_store is not None:
            return ebs_volume_id(volume.aws_elastic_block_store.volume_id)
        if volume.cinder is not None:
            return volume.cinder.volume_id
        if volume.azure_disk is not None:
            return azure_disk_volume_handle(volume.azure_disk)
        if volume.portworx_volume is not None:
            return volume.portworx_volume.volume_id
    except TranslationError:
        return None
    return None


def pv_volume_handle(pv: PersistentVolume) -> str | None:
    """The volume handle of a PV translated to CSI (None: not translatable, or csi-translation-
    lib's error, which NodeVolumeLimits logs and skips). GCE PD: by the zone label, the legacy
    one first. Upstream: TranslateInTreePVToCSI of each csi-translation-lib plugin."""
    spec = pv.spec
    try:
        if spec.gce_persistent_disk is not None:
            return gce_pv_volume_handle(pv, spec.gce_persistent_disk.pd_name)
        if spec.aws_elastic_block_store is not None:
            return ebs_volume_id(spec.aws_elastic_block_store.volume_id)
        if spec.cinder is not None:
            return spec.cinder.volume_id
        if spec.azure_disk is not None:
            return azure_disk_volume_handle(spec.azure_disk)
        if spec.portworx_volume is not None:
            return spec.portworx_volume.volume_id
    except TranslationError:
        return None
    return None
