"""plugins/volumerestrictions: VolumeRestrictions."""

from topospread.plugins.volumerestrictions.volume_restrictions import (
    ERR_REASON_DISK_CONFLICT,
    ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,
    NAME,
    VolumeRestrictions,
    new,
)

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "NAME",
    "VolumeRestrictions",
    "new",
]
