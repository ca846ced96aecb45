"""plugins/volumezone: VolumeZone."""

from topospread.plugins.volumezone.volume_zone import (
    ERR_REASON_CONFLICT,
    NAME,
    TOPOLOGY_LABELS,
    VolumeZone,
    label_zones_to_set,
    new,
)

__all__ = [
    "ERR_REASON_CONFLICT",
    "NAME",
    "TOPOLOGY_LABELS",
    "VolumeZone",
    "label_zones_to_set",
    "new",
]
