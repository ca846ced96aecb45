"""NodePorts, translated from node_ports_test.go (v1.35), plus the host-port collection rules."""

from __future__ import annotations

from typing import Any

import pytest

from builders import PodBuilder, make_node, make_pod
from topospread.api.types import Pod
from topospread.cluster.snapshot import Snapshot, SnapshotHandle
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import FilterPlugin, PreFilterPlugin
from topospread.framework.status import SKIP, SUCCESS, Code, Status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins import nodeports
from topospread.plugins.nodeports import HostPortInfo, NodePorts, get_host_ports

CONFLICT = new_status(
    Code.Unschedulable, "node(s) didn't have free ports for the requested pod ports"
)


def _ports(*specs: str) -> list[dict[str, Any]]:
    """``"UDP/127.0.0.1/8080"`` -> a container port with that protocol, hostIP and hostPort."""
    ports = []
    for spec in specs:
        protocol, host_ip, port = spec.split("/")
        ports.append(
            {"protocol": protocol, "hostIP": host_ip, "hostPort": int(port), "containerPort": 80}
        )
    return ports


def new_pod(*specs: str) -> Pod:
    """Upstream's newPod: one container holding the given host ports."""
    builder: PodBuilder = make_pod("p").node("m1")
    if specs:
        builder = builder.container("img", _ports(*specs))
    return builder.obj()


def _node_info(*pods: Pod) -> NodeInfo:
    return NodeInfo(make_node("m1").obj(), list(pods))


def _new() -> NodePorts:
    return nodeports.new(None, SnapshotHandle(Snapshot([])), DEFAULT_FEATURES)


def test_reason_constant() -> None:
    assert nodeports.ERR_REASON == "node(s) didn't have free ports for the requested pod ports"


@pytest.mark.parametrize(
    ("pod", "node_info", "want"),
    [
        pytest.param(
            new_pod("UDP/127.0.0.1/8080"),
            _node_info(new_pod("UDP/127.0.0.1/9090")),
            SUCCESS,
            id="other port",
        ),
        pytest.param(
            new_pod("UDP/127.0.0.1/8080"),
            _node_info(new_pod("UDP/127.0.0.1/8080")),
            CONFLICT,
            id="same udp port",
        ),
        pytest.param(
            new_pod("TCP/127.0.0.1/8080"),
            _node_info(new_pod("TCP/127.0.0.1/8080")),
            CONFLICT,
            id="same tcp port",
        ),
        pytest.param(
            new_pod("TCP/127.0.0.1/8080"),
            _node_info(new_pod("TCP/127.0.0.2/8080")),
            SUCCESS,
            id="different host ip",
        ),
        pytest.param(
            new_pod("UDP/127.0.0.1/8080"),
            _node_info(new_pod("TCP/127.0.0.1/8080")),
            SUCCESS,
            id="different protocol",
        ),
        pytest.param(
            new_pod("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
            _node_info(new_pod("UDP/127.0.0.1/8080")),
            CONFLICT,
            id="second udp port conflict",
        ),
        pytest.param(
            new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
            _node_info(new_pod("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081")),
            CONFLICT,
            id="first tcp port conflict",
        ),
        pytest.param(
            new_pod("TCP/0.0.0.0/8001"),
            _node_info(new_pod("TCP/127.0.0.1/8001")),
            CONFLICT,
            id="first tcp port conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
            _node_info(new_pod("TCP/127.0.0.1/8001")),
            CONFLICT,
            id="TCP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("TCP/127.0.0.1/8001"),
            _node_info(new_pod("TCP/0.0.0.0/8001")),
            CONFLICT,
            id="second tcp port conflict to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("UDP/127.0.0.1/8001"),
            _node_info(new_pod("TCP/0.0.0.0/8001")),
            SUCCESS,
            id="second different protocol",
        ),
        pytest.param(
            new_pod("UDP/127.0.0.1/8001"),
            _node_info(new_pod("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001")),
            CONFLICT,
            id="UDP hostPort conflict due to 0.0.0.0 hostIP",
        ),
        pytest.param(
            new_pod("/127.0.0.1/8001"),
            _node_info(new_pod("TCP/127.0.0.1/8001")),
            CONFLICT,
            id="an empty protocol is TCP",
        ),
        pytest.param(
            new_pod("TCP//8001"),
            _node_info(new_pod("TCP/10.1.1.1/8001")),
            CONFLICT,
            id="an empty hostIP binds every address",
        ),
        pytest.param(
            new_pod("TCP/10.1.1.1/8001"),
            _node_info(new_pod("TCP//8001")),
            CONFLICT,
            id="a port held on every address blocks a specific address",
        ),
        pytest.param(
            new_pod("TCP/127.0.0.1/8080"),
            _node_info(
                make_pod("q")
                .node("m1")
                .init_container("img", _ports("TCP/127.0.0.1/8080"), restart_policy="Always")
                .container("img")
                .obj()
            ),
            CONFLICT,
            id="a sidecar's host port is held on the node",
        ),
        pytest.param(
            new_pod("TCP/127.0.0.1/8080"),
            _node_info(
                make_pod("q")
                .node("m1")
                .init_container("img", _ports("TCP/127.0.0.1/8080"))
                .container("img")
                .obj()
            ),
            SUCCESS,
            id="an ordinary init container's host port is not held",
        ),
    ],
)
def test_filter(pod: Pod, node_info: NodeInfo, want: Status) -> None:
    plugin = _new()
    assert isinstance(plugin, PreFilterPlugin)
    assert isinstance(plugin, FilterPlugin)
    state = CycleState()
    result, status = plugin.pre_filter(state, pod, [node_info])
    assert result is None
    assert status is SUCCESS
    assert plugin.filter(state, pod, node_info) == want


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("p").obj(), id="skip filter: a pod without containers"),
        pytest.param(
            make_pod("p").container("img", [{"containerPort": 80}]).obj(),
            id="skip filter: container ports without a hostPort",
        ),
        pytest.param(
            make_pod("p").init_container("img", _ports("TCP/127.0.0.1/80")).obj(),
            id="skip filter: only an ordinary init container has a host port",
        ),
    ],
)
def test_pre_filter_skips_pods_without_host_ports(pod: Pod) -> None:
    state = CycleState()
    assert _new().pre_filter(state, pod, []) == (None, SKIP)


def test_filter_without_pre_filter_is_an_error() -> None:
    # TestPreFilterDisabled
    status = _new().filter(CycleState(), make_pod("p").obj(), _node_info())
    assert status.code is Code.Error
    assert status.message == 'reading "PreFilterNodePorts" from cycleState: not found'


def test_get_host_ports_keeps_sidecars_then_containers_in_order() -> None:
    # TestGetContainerPorts: only ports with a hostPort, sidecars first, in declaration order.
    pod = (
        make_pod("p")
        .container("a", _ports("TCP//8001", "TCP//8002"))
        .container("b", [*_ports("TCP//8003"), {"containerPort": 8005, "protocol": "TCP"}])
        .init_container("c", _ports("TCP//7001"), restart_policy="Always")
        .init_container("d", _ports("TCP//7002"))
        .obj()
    )
    assert [p.host_port for p in get_host_ports(pod)] == [7001, 8001, 8002, 8003]


def test_host_port_info_ignores_ports_that_are_not_positive() -> None:
    info = HostPortInfo()
    info.add("", "", 0)
    info.add("127.0.0.1", "UDP", -1)
    assert len(info) == 0
    assert not info.check_conflict("", "", 0)
    info.add("", "", 80)
    assert len(info) == 1
    assert info.check_conflict("127.0.0.1", "TCP", 80)
    assert not info.check_conflict("127.0.0.1", "UDP", 80)
