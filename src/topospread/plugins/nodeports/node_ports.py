"""NodePorts: a pod's host ports must be free on the node.

Upstream: pkg/scheduler/framework/plugins/nodeports/node_ports.go, with the port bookkeeping of
framework.HostPortInfo (pkg/scheduler/framework/types.go) and util.GetHostPorts (v1.35).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.port_validation import DEFAULT_PROTOCOL
from topospread.api.types import ContainerPort, Pod
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo

NAME: Final = "NodePorts"

ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"

# An empty hostIP binds every address; an empty protocol is TCP (DEFAULT_PROTOCOL).
DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"

# The one init-container restartPolicy that keeps a container running beside the main ones.
_RESTART_POLICY_ALWAYS: Final = "Always"


def get_host_ports(pod: Pod) -> list[ContainerPort]:
    """Ports with a hostPort of the pod's containers and of its sidecars (restartable init).

    Ordinary init containers have finished before the main containers start, so their host
    ports are never held at the same time and do not count.
    Upstream: GetHostPorts (pkg/scheduler/util/utils.go, v1.35)
    """
    ports: list[ContainerPort] = []
    for c in pod.spec.init_containers:
        if c.restart_policy != _RESTART_POLICY_ALWAYS:
            continue
        ports.extend(p for p in c.ports if p.host_port > 0)
    for c in pod.spec.containers:
        ports.extend(p for p in c.ports if p.host_port > 0)
    return ports


def _sanitize(ip: str, protocol: str) -> tuple[str, str]:
    return ip or DEFAULT_BIND_ALL_HOST_IP, protocol or DEFAULT_PROTOCOL


class HostPortInfo:
    """Host ports in use on a node: host IP -> set of (protocol, port).

    Upstream: HostPortInfo (pkg/scheduler/framework/types.go, v1.35)
    """

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        """Upstream: HostPortInfo.Add (v1.35); ports <= 0 are ignored."""
        if port <= 0:
            return
        ip, protocol = _sanitize(ip, protocol)
        self._by_ip.setdefault(ip, set()).add((protocol, port))

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """Whether (ip, protocol, port) collides with a port in use.

        0.0.0.0 collides with the same (protocol, port) on any IP; a specific IP collides with
        the same IP or with 0.0.0.0.
        Upstream: HostPortInfo.CheckConflict (pkg/scheduler/framework/types.go, v1.35)
        """
        if port <= 0:
            return False
        ip, protocol = _sanitize(ip, protocol)
        pp = (protocol, port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(pp in used for used in self._by_ip.values())
        return any(pp in self._by_ip.get(key, ()) for key in (DEFAULT_BIND_ALL_HOST_IP, ip))

    def __len__(self) -> int:
        return sum(len(used) for used in self._by_ip.values())


def used_ports(pods: Iterable[Pod]) -> HostPortInfo:
    """The host ports the node's pods hold (Upstream: NodeInfo.updateUsedPorts, v1.35)."""
    info = HostPortInfo()
    for pod in pods:
        for p in get_host_ports(pod):
            info.add(p.host_ip, p.protocol, p.host_port)
    return info


def fits_ports(want_ports: Iterable[ContainerPort], ports_in_use: HostPortInfo) -> bool:
    """Upstream: fitsPorts (node_ports.go, v1.35)."""
    return not any(
        ports_in_use.check_conflict(p.host_ip, p.protocol, p.host_port) for p in want_ports
    )


def fits(pod: Pod, node_info: NodeInfo) -> bool:
    """Whether none of the pod's host ports conflicts on the node (Upstream: Fits, v1.35)."""
    return fits_ports(get_host_ports(pod), used_ports(node_info.pods))


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The incoming pod's host ports (Upstream: preFilterState, node_ports.go, v1.35)."""

    ports: tuple[ContainerPort, ...]

    def clone(self) -> PreFilterState:
        # Not affected by adding or removing other pods.
        return self


PRE_FILTER_STATE_KEY: Final[StateKey[PreFilterState]] = StateKey("PreFilter" + NAME)


class NodePorts:
    """Filters out nodes where one of the pod's host ports is already taken."""

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Collect the pod's host ports; a pod without any skips Filter.

        Upstream: NodePorts.PreFilter (node_ports.go, v1.35)
        """
        ports = get_host_ports(pod)
        if not ports:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(tuple(ports)))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: NodePorts.Filter (node_ports.go, v1.35)."""
        try:
            s = state.read(PRE_FILTER_STATE_KEY)
        except StateNotFoundError as err:
            return as_status(f'reading "{err.args[0]}" from cycleState: not found')
        if not fits_ports(s.ports, used_ports(node_info.pods)):
            return new_status(Code.Unschedulable, ERR_REASON)
        return SUCCESS


def new(args: Any | None, handle: Handle, features: Features) -> NodePorts:
    """NodePorts takes no args. Upstream: New (node_ports.go, v1.35)."""
    return NodePorts()
