"""Containers' ports as the API server checks them within ValidatePodSpec: each port's own
fields (validateContainerPorts, part of every container's common checks) and the host ports
a pod may not give twice (AccumulateUniqueHostPorts: across the regular containers, which run
together, and within each init container, which run one at a time).

The NodePorts plugin reads the host port, protocol and host IP of these ports: a pod refused
here (``hostPort: 70000``, ``protocol: tcp``, two containers on ``8080/TCP``) never reaches
the scheduler.

Checked after defaulting: the API server sets an empty protocol to TCP before it validates
(the ``+default="TCP"`` of core/v1 ContainerPort), so an empty one is read as TCP here, and
the protocol's ``Required`` is never told.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
)
from topospread.api.types import Container, ContainerPort
from topospread.util.validation import is_valid_port_name, is_valid_port_num

DEFAULT_PROTOCOL: Final = "TCP"
# core.ProtocolTCP, ProtocolUDP, ProtocolSCTP, listed sorted as sets.List gives them.
SUPPORTED_PORT_PROTOCOLS: Final = ("SCTP", "TCP", "UDP")


def container_port_errors(ports: Sequence[ContainerPort], path: Path) -> list[FieldError]:
    """A container's ports (``path``: its ``ports``): a name, when given, an IANA service name
    unique among the container's ports (a name with problems is told for them alone); a
    container port, required, 1 to 65535; a host port, when given, 1 to 65535; a supported
    protocol. Each port's errors in that order.

    Upstream: validateContainerPorts (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at = path.index(i)
        name = port.name
        if name:
            problems = is_valid_port_name(name)
            if problems:
                errs.extend(invalid(at.child("name"), name, msg) for msg in problems)
            elif name in names:
                errs.append(duplicate(at.child("name"), name))
            else:
                names.add(name)
        if port.container_port == 0:
            errs.append(required(at.child("containerPort")))
        else:
            errs.extend(
                invalid(at.child("containerPort"), port.container_port, msg)
                for msg in is_valid_port_num(port.container_port)
            )
        if port.host_port != 0:
            errs.extend(
                invalid(at.child("hostPort"), port.host_port, msg)
                for msg in is_valid_port_num(port.host_port)
            )
        protocol = port.protocol or DEFAULT_PROTOCOL
        if protocol not in SUPPORTED_PORT_PROTOCOLS:
            # A named string type (core.Protocol): its bad value printed as JSON.
            errs.append(
                not_supported(at.child("protocol"), GoJSON(protocol), SUPPORTED_PORT_PROTOCOLS)
            )
    return errs


def host_port_conflicts(containers: Sequence[Container], path: Path) -> list[FieldError]:
    """The host ports the ``containers`` (``path``: their list) give more than once, as
    protocol, host IP and port (``TCP//8080``, ``UDP/10.0.0.1/53``): each repeat after the
    first is a duplicate. Host ports left 0 are not compared.

    Upstream: AccumulateUniqueHostPorts, checkHostPortConflicts
    (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, container in enumerate(containers):
        for j, port in enumerate(container.ports):
            if port.host_port == 0:
                continue
            key = f"{port.protocol or DEFAULT_PROTOCOL}/{port.host_ip}/{port.host_port}"
            if key in seen:
                at = path.index(i).child("ports").index(j).child("hostPort")
                errs.append(duplicate(at, key))
            else:
                seen.add(key)
    return errs


def init_container_host_port_conflicts(container: Container, path: Path) -> list[FieldError]:
    """One init container's repeated host ports (``path``: the init containers' list).

    NOTE: upstream checks each init container as a list of its own, ``[container]``, under the
    init containers' path, so the error names ``initContainers[0]`` whichever init container
    repeats a port: told here as the API server tells it.

    Upstream: validateInitContainers (pkg/apis/core/validation/validation.go, v1.35)
    """
    if len(container.ports) < 2:
        return []
    return host_port_conflicts((container,), path)
