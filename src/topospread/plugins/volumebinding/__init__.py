"""plugins/volumebinding: VolumeBinding and its volume binder."""

from topospread.plugins.volumebinding.binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    VolumeBinder,
)
from topospread.plugins.volumebinding.volume_binding import (
    ERR_UNBOUND_IMMEDIATE,
    NAME,
    VolumeBinding,
    new,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "VolumeBinder",
    "VolumeBinding",
    "new",
]
