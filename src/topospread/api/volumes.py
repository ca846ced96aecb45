"""Volume sources that both a pod's inline volumes and a PersistentVolume carry, as far as the
scheduler's volume plugins read them: the attachable disks VolumeRestrictions compares (GCE PD,
AWS EBS, iSCSI, Ceph RBD), the in-tree sources NodeVolumeLimits translates to CSI drivers (GCE PD,
AWS EBS, Azure Disk, Cinder), and CSI itself.
"""

from __future__ import annotations

import msgspec

from topospread.api.base import _Obj


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
    read_only: bool = False


class CinderVolumeSource(_Obj, frozen=True):
    volume_id: str = msgspec.field(default="", name="volumeID")
    read_only: bool = False


class ISCSIVolumeSource(_Obj, frozen=True):
    target_portal: str = ""
    iqn: str = ""
    lun: int = 0
    read_only: bool = False


class RBDVolumeSource(_Obj, frozen=True):
    monitors: list[str] = []
    image: str = ""
    pool: str = ""
    read_only: bool = False


class CSIVolumeSource(_Obj, frozen=True):
    """An inline CSI volume of a pod (``volumes[].csi``): the driver only."""

    driver: str = ""
    read_only: bool = False


class CSIPersistentVolumeSource(_Obj, frozen=True):
    """A PersistentVolume's ``spec.csi``: the driver and the volume's handle."""

    driver: str = ""
    volume_handle: str = ""
    read_only: bool = False
