"""The API server's defaulting of requests and allocatable."""

from __future__ import annotations

import msgspec

from topospread.api.defaults import default_node, default_pod
from topospread.api.types import Node, Pod


def test_a_limit_without_a_request_becomes_the_request() -> None:
    pod = msgspec.convert(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {
                        "name": "a",
                        "resources": {
                            "limits": {"cpu": "1", "memory": "1Gi"},
                            "requests": {"cpu": "500m"},
                        },
                    }
                ],
                "initContainers": [{"name": "i", "resources": {"limits": {"cpu": "2"}}}],
            },
        },
        Pod,
    )
    got = default_pod(pod)
    assert got.spec.containers[0].resources.requests == {"cpu": "500m", "memory": "1Gi"}
    assert got.spec.init_containers[0].resources.requests == {"cpu": "2"}


def test_pod_level_limits_default_pod_level_requests() -> None:
    pod = msgspec.convert(
        {"metadata": {"name": "p"}, "spec": {"resources": {"limits": {"memory": "2Gi"}}}}, Pod
    )
    got = default_pod(pod)
    assert got.spec.resources is not None
    assert got.spec.resources.requests == {"memory": "2Gi"}


def test_a_pod_without_limits_is_returned_unchanged() -> None:
    pod = msgspec.convert({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}}, Pod)
    assert default_pod(pod) is pod


def test_allocatable_defaults_to_capacity_only_when_absent() -> None:
    node = msgspec.convert({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}}, Node)
    assert default_node(node).status.allocatable == {"cpu": "4"}
    node = msgspec.convert(
        {
            "metadata": {"name": "n"},
            "status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3"}},
        },
        Node,
    )
    assert default_node(node) is node


def _ports_pod(host_network: bool) -> Pod:
    port = {"containerPort": 80, "protocol": "TCP"}
    return msgspec.convert(
        {
            "metadata": {"name": "p"},
            "spec": {
                "hostNetwork": host_network,
                "containers": [
                    {"name": "a", "ports": [port, {"containerPort": 81, "hostPort": 9}]}
                ],
                "initContainers": [{"name": "i", "ports": [port]}],
            },
        },
        Pod,
    )


def test_on_the_hosts_network_a_host_port_left_0_becomes_the_container_port() -> None:
    """defaultHostNetworkPorts: containers and init containers; a host port given is kept
    (validation then refuses it)."""
    got = default_pod(_ports_pod(True))
    assert [p.host_port for p in got.spec.containers[0].ports] == [80, 9]
    assert [p.host_port for p in got.spec.init_containers[0].ports] == [80]


def test_off_the_hosts_network_host_ports_stay_as_given() -> None:
    pod = _ports_pod(False)
    assert default_pod(pod) is pod
