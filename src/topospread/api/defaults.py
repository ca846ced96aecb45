"""The API server's defaulting of the fields the scheduler reads (pkg/apis/core/v1/defaults.go).

Applied once, to objects read from manifests, before anything else looks at them:
- a container (regular, init or sidecar) that sets a limit but no request for a resource gets
  the limit as its request (SetDefaults_ResourceList via SetDefaults_Container's requests rule);
- pod-level ``spec.resources`` likewise defaults requests from limits (PodLevelResources);
- a pod on the host's network (``hostNetwork: true``) gets each container's and init
  container's ``containerPort`` as the ``hostPort`` it leaves 0 (SetDefaults_Pod's
  defaultHostNetworkPorts; a pod's only: templates are left as written since v1.28);
- a Node without ``status.allocatable`` gets a copy of ``status.capacity`` (SetDefaults_NodeStatus);
  and its ``podCIDR`` and ``podCIDRs`` come back as the API server stores them: the list it
  read (``podCIDR`` wins when the two disagree), ``podCIDR`` its first entry (the conversions to
  and from the internal Node, which has only the list).
Objects read back from a cluster already carry these values and are returned unchanged.
"""

from __future__ import annotations

import msgspec

from topospread.api.cidr_validation import node_pod_cidrs
from topospread.api.types import Container, Node, Pod, ResourceRequirements


def _default_requests(res: ResourceRequirements) -> ResourceRequirements:
    missing = {k: v for k, v in res.limits.items() if k not in res.requests}
    if not missing:
        return res
    return msgspec.structs.replace(res, requests={**res.requests, **missing})


def _default_container(c: Container, host_network: bool) -> Container:
    res = _default_requests(c.resources)
    ports = c.ports
    if host_network and any(p.host_port == 0 and p.container_port != 0 for p in ports):
        ports = [
            msgspec.structs.replace(p, host_port=p.container_port) if p.host_port == 0 else p
            for p in ports
        ]
    if res is c.resources and ports is c.ports:
        return c
    return msgspec.structs.replace(c, resources=res, ports=ports)


def default_pod(pod: Pod) -> Pod:
    """Requests default to limits, per container and at pod level; on the host's network,
    host ports default to container ports.

    Upstream: SetDefaults_Pod / SetDefaults_PodSpec, defaultHostNetworkPorts
    (pkg/apis/core/v1/defaults.go, v1.35)
    """
    spec = pod.spec
    host_network = spec.host_network
    containers = [_default_container(c, host_network) for c in spec.containers]
    init_containers = [_default_container(c, host_network) for c in spec.init_containers]
    resources = _default_requests(spec.resources) if spec.resources is not None else None
    unchanged = (
        all(a is b for a, b in zip(containers, spec.containers, strict=True))
        and all(a is b for a, b in zip(init_containers, spec.init_containers, strict=True))
        and resources is spec.resources
    )
    if unchanged:
        return pod
    new_spec = msgspec.structs.replace(
        spec, containers=containers, init_containers=init_containers, resources=resources
    )
    return msgspec.structs.replace(pod, spec=new_spec)


def default_node(node: Node) -> Node:
    """A node without allocatable reports its capacity as allocatable; its pod CIDRs are the
    ones the API server stores.

    Upstream: SetDefaults_NodeStatus (pkg/apis/core/v1/defaults.go),
    Convert_v1_NodeSpec_To_core_NodeSpec and Convert_core_NodeSpec_To_v1_NodeSpec
    (pkg/apis/core/v1/conversion.go), v1.35
    """
    status = node.status
    if not status.allocatable and status.capacity:
        status = msgspec.structs.replace(status, allocatable=dict(status.capacity))
    spec = node.spec
    if spec.pod_cidr or spec.pod_cidrs:
        cidrs = node_pod_cidrs(spec)
        if cidrs is not spec.pod_cidrs or spec.pod_cidr != cidrs[0]:
            spec = msgspec.structs.replace(spec, pod_cidr=cidrs[0], pod_cidrs=list(cidrs))
    if status is node.status and spec is node.spec:
        return node
    return msgspec.structs.replace(node, spec=spec, status=status)
