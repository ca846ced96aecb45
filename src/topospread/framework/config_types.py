"""The kubescheduler.config.k8s.io/v1 wire types that ``config.py`` reads no further: each
registered plugin args type (but PodTopologySpreadArgs, which ``api.spread_validation`` decodes),
the component-base parts of a KubeSchedulerConfiguration and its extenders, every field with
its Go type.

They exist so that a value of the wrong JSON type anywhere in a configuration is refused as
kube-scheduler's decoder refuses it (``decoding args for plugin NodeResourcesFit: json: cannot
unmarshal number into Go struct field NodeResourcesFitArgs.ignoredResources of type []string``)
instead of in msgspec's words or not at all; what the plugins use is decoded again by each
plugin's own args module (the internal types, as upstream converts v1 to its internal config).

Upstream: k8s.io/kube-scheduler/config/v1 types.go and types_pluginargs.go (v0.35.4);
k8s.io/component-base/config/v1alpha1 types.go.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, TypeAlias

import msgspec

from topospread.api.base import Int32
from topospread.api.go_errors import go_first_error
from topospread.api.types import NodeAffinity

Int64: TypeAlias = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _Wire(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    api_version: str | None = None
    kind: str | None = None


class _Part(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    pass


# --- component-base v1alpha1 and the extenders (KubeSchedulerConfiguration's other parts) ---


class LeaderElectionConfiguration(_Part, frozen=True):
    leader_elect: bool | None = None
    lease_duration: str | None = None
    renew_deadline: str | None = None
    retry_period: str | None = None
    resource_lock: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None


class ClientConnectionConfiguration(_Part, frozen=True):
    kubeconfig: str | None = None
    accept_content_types: str | None = None
    content_type: str | None = None
    qps: float | None = None
    burst: Int32 | None = None


class ExtenderManagedResource(_Part, frozen=True):
    name: str | None = None
    ignored_by_scheduler: bool | None = None


class ExtenderTLSConfig(_Part, frozen=True):
    insecure: bool | None = None
    server_name: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    ca_file: str | None = None
    cert_data: str | None = None
    key_data: str | None = None
    ca_data: str | None = None


class Extender(_Part, frozen=True):
    url_prefix: str | None = None
    filter_verb: str | None = None
    preempt_verb: str | None = None
    prioritize_verb: str | None = None
    weight: Int64 | None = None
    bind_verb: str | None = None
    enable_https: bool | None = msgspec.field(default=None, name="enableHTTPS")
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: str | None = None
    node_cache_capable: bool | None = None
    managed_resources: list[ExtenderManagedResource] | None = None
    ignorable: bool | None = None


# --- the registered args types ---


class DefaultPreemptionArgs(_Wire, frozen=True):
    min_candidate_nodes_percentage: Int32 | None = None
    min_candidate_nodes_absolute: Int32 | None = None


class InterPodAffinityArgs(_Wire, frozen=True):
    hard_pod_affinity_weight: Int32 | None = None
    ignore_preferred_terms_of_existing_pods: bool | None = None


class ResourceSpec(_Part, frozen=True):
    name: str | None = None
    weight: Int64 | None = None


class UtilizationShapePoint(_Part, frozen=True):
    utilization: Int32 | None = None
    score: Int32 | None = None


class RequestedToCapacityRatioParam(_Part, frozen=True):
    shape: list[UtilizationShapePoint] | None = None


class ScoringStrategy(_Part, frozen=True):
    type: str | None = None
    resources: list[ResourceSpec] | None = None
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


class NodeResourcesFitArgs(_Wire, frozen=True):
    ignored_resources: list[str] | None = None
    ignored_resource_groups: list[str] | None = None
    scoring_strategy: ScoringStrategy | None = None


class NodeResourcesBalancedAllocationArgs(_Wire, frozen=True):
    resources: list[ResourceSpec] | None = None


class VolumeBindingArgs(_Wire, frozen=True):
    bind_timeout_seconds: Int64 | None = None
    shape: list[UtilizationShapePoint] | None = None


class NodeAffinityArgs(_Wire, frozen=True):
    added_affinity: NodeAffinity | None = None


class DynamicResourcesArgs(_Wire, frozen=True):
    filter_timeout: str | None = None
    binding_timeout: str | None = None


# The plugins whose args type kube-scheduler's v1 scheme registers (register.go), by plugin
# name; PodTopologySpread's is decoded, defaulted and validated in api.spread_validation.
ARGS_TYPES: Final[dict[str, type[_Wire]]] = {
    "DefaultPreemption": DefaultPreemptionArgs,
    "DynamicResources": DynamicResourcesArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "NodeResourcesFit": NodeResourcesFitArgs,
    "VolumeBinding": VolumeBindingArgs,
}


def wire_type_error(data: Any, cls: type[msgspec.Struct]) -> str | None:
    """Go's decoder's error for ``data`` decoded into the wire type ``cls``, or None when it
    decodes. Go's walk first (it names the error Go returns, in Go's order); msgspec's decode
    after it catches what the walk does not model, in its own words."""
    said = go_first_error(data, cls)
    if said is not None:
        return said
    try:
        msgspec.convert(data, cls)
    except msgspec.ValidationError as err:
        return str(err)
    return None


__all__ = [
    "ARGS_TYPES",
    "ClientConnectionConfiguration",
    "Extender",
    "LeaderElectionConfiguration",
    "wire_type_error",
]
