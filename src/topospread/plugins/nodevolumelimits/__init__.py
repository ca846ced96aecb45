"""plugins/nodevolumelimits: NodeVolumeLimits (CSILimits)."""

from topospread.plugins.nodevolumelimits.csi import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NAME,
    CSILimits,
    new,
    volume_limits,
)

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "CSILimits", "new", "volume_limits"]
