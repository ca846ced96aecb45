"""Feature gates the scheduler's plugins read, at their kube-scheduler v1.35 defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from topospread.errors import ConfigError


@dataclass(frozen=True, slots=True)
class _Gate:
    field: str
    default: bool
    locked: bool


# name -> (Features field, default in v1.35, locked to default)
KNOWN_GATES: Final[Mapping[str, _Gate]] = {
    # Beta since v1.27, on by default; the API server also merges matchLabelKeys since v1.34.
    "MatchLabelKeysInPodTopologySpread": _Gate(
        "enable_match_label_keys_in_pod_topology_spread", True, False
    ),
    # GA in v1.33, locked on.
    "NodeInclusionPolicyInPodTopologySpread": _Gate(
        "enable_node_inclusion_policy_in_pod_topology_spread", True, True
    ),
    # Alpha in v1.35.
    "TaintTolerationComparisonOperators": _Gate(
        "enable_taint_toleration_comparison_operators", False, False
    ),
    "SchedulerQueueingHints": _Gate("enable_scheduling_queue_hint", True, False),
    # Beta in v1.34, on by default.
    "PodLevelResources": _Gate("enable_pod_level_resources", True, False),
    "PodSchedulingReadiness": _Gate("enable_pod_scheduling_readiness", True, True),
    "SidecarContainers": _Gate("enable_sidecar_containers", True, True),
}


@dataclass(frozen=True, slots=True)
class Features:
    """Upstream: feature.Features (pkg/scheduler/framework/plugins/feature/feature.go)."""

    enable_match_label_keys_in_pod_topology_spread: bool = True
    enable_node_inclusion_policy_in_pod_topology_spread: bool = True
    enable_taint_toleration_comparison_operators: bool = False
    enable_scheduling_queue_hint: bool = True
    enable_pod_scheduling_readiness: bool = True
    enable_sidecar_containers: bool = True
    enable_pod_level_resources: bool = True
    # Read only by the VolumeBinding and DynamicResources args validation, at their v1.35
    # defaults (StorageCapacityScoring alpha; DRASchedulerFilterTimeout beta since v1.34;
    # DRADeviceBindingConditions alpha until v1.36; DRAResourceClaimDeviceStatus beta since
    # v1.33). Not in KNOWN_GATES: nothing else here changes with them.
    enable_storage_capacity_scoring: bool = False
    enable_dra_scheduler_filter_timeout: bool = True
    enable_dra_device_binding_conditions: bool = False
    enable_dra_resource_claim_device_status: bool = True


DEFAULT_FEATURES: Final = Features()


def features_from_gates(gates: Mapping[str, object], where: str = "features") -> Features:
    """Apply ``--feature-gates``-style overrides, refusing what kube-scheduler refuses."""
    features = DEFAULT_FEATURES
    for name in sorted(gates):
        value = gates[name]
        gate = KNOWN_GATES.get(name)
        if gate is None:
            raise ConfigError(f"{where}: unrecognized feature gate: {name}")
        if not isinstance(value, bool):
            raise ConfigError(
                f"{where}.{name}: invalid value of {name}={value}, err: must be true or false"
            )
        if gate.locked and value != gate.default:
            raise ConfigError(
                f"{where}: cannot set feature gate {name} to {str(value).lower()}, "
                f"feature is locked to {str(gate.default).lower()}"
            )
        features = replace(features, **{gate.field: value})
    return features
