"""plugins/nodeports: NodePorts."""

from topospread.plugins.nodeports.node_ports import (
    DEFAULT_BIND_ALL_HOST_IP,
    ERR_REASON,
    NAME,
    PRE_FILTER_STATE_KEY,
    HostPortInfo,
    NodePorts,
    PreFilterState,
    fits,
    fits_ports,
    get_host_ports,
    new,
    used_ports,
)

__all__ = [
    "DEFAULT_BIND_ALL_HOST_IP",
    "ERR_REASON",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "HostPortInfo",
    "NodePorts",
    "PreFilterState",
    "fits",
    "fits_ports",
    "get_host_ports",
    "new",
    "used_ports",
]
