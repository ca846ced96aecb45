"""The Go type of each field the typed structs decode, as Go's ``reflect.Type.String()`` names it
(``int32``, ``v1.RestartPolicy``, ``[]v1.Container``, ``map[string]string``), so that a value of
the wrong JSON type is told as the API server's JSON decoder tells it.

A struct-typed field's Go type comes from the struct it decodes into (our structs bear the Go
names), checked against the schema of ``fields.json`` (written from the client models of the
release we mirror): a field whose schema type differs from our struct is not claimed. A scalar
field's Go type (a named string type, int32 or int64, a quantity, an IntOrString, a time) is
not in the schema, so it is listed here; a field listed nowhere has no known Go type and its
errors keep our own wording rather than an invented one. The strict decode's structs (one per
schema type, every field) take theirs from ``go_fields.json``, read from the Go sources.

Upstream: the Go types of k8s.io/api (core/v1, apps/v1, batch/v1, policy/v1, storage/v1),
k8s.io/apimachinery meta/v1 and k8s.io/kube-scheduler config/v1, v1.35.
"""

from __future__ import annotations

from typing import Final

import msgspec
import msgspec.inspect as mi

from topospread.api.strict import go_fields, schema_types, strict_struct_type

# Types whose own UnmarshalJSON decides what they accept (not a plain Go kind).
QUANTITY: Final = "resource.Quantity"
INT_OR_STRING: Final = "intstr.IntOrString"
TIME: Final = "v1.Time"
MICRO_TIME: Final = "v1.MicroTime"
DURATION: Final = "v1.Duration"
BYTES: Final = "[]uint8"

_S: Final = "string"
_I32: Final = "int32"
_I64: Final = "int64"
_B: Final = "bool"
_MSS: Final = "map[string]string"
_LS: Final = "[]string"
_RL: Final = "v1.ResourceList"
_UID: Final = "types.UID"
_STS_PVC_RETENTION: Final = "v1.StatefulSetPersistentVolumeClaimRetentionPolicy"

# Go struct name -> JSON field name -> Go type (pointers left out: the decoder allocates them
# and reports the type pointed to). Only fields whose Go type is not a struct of ours.
_SCALARS: Final[dict[str, dict[str, str]]] = {
    "ObjectMeta": {
        "name": _S,
        "generateName": _S,
        "namespace": _S,
        "uid": _UID,
        "labels": _MSS,
        "annotations": _MSS,
        "deletionTimestamp": TIME,
        "creationTimestamp": TIME,
    },
    "OwnerReference": {
        "apiVersion": _S,
        "kind": _S,
        "name": _S,
        "uid": _UID,
        "controller": _B,
        "blockOwnerDeletion": _B,
    },
    "LabelSelectorRequirement": {
        "key": _S,
        "operator": "v1.LabelSelectorOperator",
        "values": _LS,
    },
    "LabelSelector": {"matchLabels": _MSS},
    "Taint": {"key": _S, "value": _S, "effect": "v1.TaintEffect", "timeAdded": TIME},
    "NodeSpec": {"unschedulable": _B, "podCIDR": _S, "podCIDRs": _LS, "providerID": _S},
    "ContainerImage": {"names": _LS, "sizeBytes": _I64},
    "NodeCondition": {
        "type": "v1.NodeConditionType",
        "status": "v1.ConditionStatus",
        "reason": _S,
    },
    "NodeStatus": {"capacity": _RL, "allocatable": _RL},
    "NodeSelectorRequirement": {
        "key": _S,
        "operator": "v1.NodeSelectorOperator",
        "values": _LS,
    },
    "PreferredSchedulingTerm": {"weight": _I32},
    "WeightedPodAffinityTerm": {"weight": _I32},
    "PodAffinityTerm": {
        "namespaces": _LS,
        "topologyKey": _S,
        "matchLabelKeys": _LS,
        "mismatchLabelKeys": _LS,
    },
    "Toleration": {
        "key": _S,
        "operator": "v1.TolerationOperator",
        "value": _S,
        "effect": "v1.TaintEffect",
        "tolerationSeconds": _I64,
    },
    "TopologySpreadConstraint": {
        "maxSkew": _I32,
        "topologyKey": _S,
        "whenUnsatisfiable": "v1.UnsatisfiableConstraintAction",
        "minDomains": _I32,
        "nodeAffinityPolicy": "v1.NodeInclusionPolicy",
        "nodeTaintsPolicy": "v1.NodeInclusionPolicy",
        "matchLabelKeys": _LS,
    },
    "ContainerPort": {
        "name": _S,
        "hostPort": _I32,
        "containerPort": _I32,
        "protocol": "v1.Protocol",
        "hostIP": _S,
    },
    "ResourceRequirements": {"limits": _RL, "requests": _RL},
    "Container": {"name": _S, "image": _S, "restartPolicy": "v1.ContainerRestartPolicy"},
    "PodSchedulingGate": {"name": _S},
    "SeccompProfile": {"type": "v1.SeccompProfileType", "localhostProfile": _S},
    "AppArmorProfile": {"type": "v1.AppArmorProfileType", "localhostProfile": _S},
    "PodOS": {"name": "v1.OSName"},
    "EphemeralContainer": {"name": _S, "image": _S, "targetContainerName": _S},
    "PodResourceClaim": {"name": _S},
    "PodSpec": {
        "nodeName": _S,
        "nodeSelector": _MSS,
        "overhead": _RL,
        "priority": _I32,
        "priorityClassName": _S,
        "schedulerName": _S,
        "preemptionPolicy": "v1.PreemptionPolicy",
        "hostNetwork": _B,
        "restartPolicy": "v1.RestartPolicy",
        "hostname": _S,
        "subdomain": _S,
    },
    "PodCondition": {
        "type": "v1.PodConditionType",
        "status": "v1.ConditionStatus",
        "reason": _S,
        "lastTransitionTime": TIME,
    },
    "ContainerStatus": {"name": _S, "restartCount": _I32, "ready": _B},
    "PodStatus": {"phase": "v1.PodPhase", "nominatedNodeName": _S, "startTime": TIME},
    "ServiceSpec": {"selector": _MSS},
    "ReplicationControllerSpec": {"replicas": _I32, "selector": _MSS, "minReadySeconds": _I32},
    "ReplicaSetSpec": {"replicas": _I32, "minReadySeconds": _I32},
    "RollingUpdateStatefulSetStrategy": {"partition": _I32, "maxUnavailable": INT_OR_STRING},
    "StatefulSetUpdateStrategy": {"type": "v1.StatefulSetUpdateStrategyType"},
    "StatefulSetOrdinals": {"start": _I32},
    "StatefulSetSpec": {
        "replicas": _I32,
        "serviceName": _S,
        "podManagementPolicy": "v1.PodManagementPolicyType",
        "minReadySeconds": _I32,
        "revisionHistoryLimit": _I32,
        # Kept as raw data here, decoded by api/storage.py; as a whole, these Go types.
        "volumeClaimTemplates": "[]v1.PersistentVolumeClaim",
        "persistentVolumeClaimRetentionPolicy": _STS_PVC_RETENTION,
    },
    "StatefulSetStatus": {"collisionCount": _I32},
    "RollingUpdateDeployment": {"maxUnavailable": INT_OR_STRING, "maxSurge": INT_OR_STRING},
    "DeploymentStrategy": {"type": "v1.DeploymentStrategyType"},
    "DeploymentSpec": {
        "replicas": _I32,
        "minReadySeconds": _I32,
        "revisionHistoryLimit": _I32,
        "paused": _B,
        "progressDeadlineSeconds": _I32,
    },
    "DeploymentStatus": {"collisionCount": _I32},
    "RollingUpdateDaemonSet": {"maxUnavailable": INT_OR_STRING, "maxSurge": INT_OR_STRING},
    "DaemonSetUpdateStrategy": {"type": "v1.DaemonSetUpdateStrategyType"},
    "DaemonSetSpec": {"minReadySeconds": _I32, "revisionHistoryLimit": _I32},
    "DaemonSetStatus": {"collisionCount": _I32},
    "JobSpec": {
        "parallelism": _I32,
        "completions": _I32,
        "completionMode": "v1.CompletionMode",
        "manualSelector": _B,
        "suspend": _B,
    },
    "CronJobSpec": {
        "schedule": _S,
        "timeZone": _S,
        "startingDeadlineSeconds": _I64,
        "concurrencyPolicy": "v1.ConcurrencyPolicy",
        "suspend": _B,
        "successfulJobsHistoryLimit": _I32,
        "failedJobsHistoryLimit": _I32,
    },
    "PodDisruptionBudgetSpec": {
        "minAvailable": INT_OR_STRING,
        "maxUnavailable": INT_OR_STRING,
        "unhealthyPodEvictionPolicy": "v1.UnhealthyPodEvictionPolicyType",
    },
    "Condition": {
        "type": _S,
        "status": "v1.ConditionStatus",
        "reason": _S,
        "message": _S,
        "lastTransitionTime": TIME,
    },
    "PodDisruptionBudgetStatus": {
        "disruptionsAllowed": _I32,
        "disruptedPods": "map[string]v1.Time",
        "currentHealthy": _I32,
        "desiredHealthy": _I32,
        "expectedPods": _I32,
    },
    "PriorityClass": {
        "value": _I32,
        "globalDefault": _B,
        "preemptionPolicy": "v1.PreemptionPolicy",
    },
    "ObjectReference": {
        "kind": _S,
        "namespace": _S,
        "name": _S,
        "uid": _UID,
        "apiVersion": _S,
    },
    "PersistentVolumeSpec": {
        "capacity": _RL,
        "accessModes": "[]v1.PersistentVolumeAccessMode",
        "storageClassName": _S,
        "volumeMode": "v1.PersistentVolumeMode",
        "persistentVolumeReclaimPolicy": "v1.PersistentVolumeReclaimPolicy",
        "volumeAttributesClassName": _S,
    },
    "PersistentVolumeStatus": {"phase": "v1.PersistentVolumePhase"},
    "VolumeResourceRequirements": {"requests": _RL, "limits": _RL},
    "TypedLocalObjectReference": {"apiGroup": _S, "kind": _S, "name": _S},
    "TypedObjectReference": {"apiGroup": _S, "kind": _S, "name": _S, "namespace": _S},
    "PersistentVolumeClaimSpec": {
        "accessModes": "[]v1.PersistentVolumeAccessMode",
        "volumeName": _S,
        "storageClassName": _S,
        "volumeMode": "v1.PersistentVolumeMode",
        "volumeAttributesClassName": _S,
    },
    "PersistentVolumeClaimStatus": {"phase": "v1.PersistentVolumeClaimPhase"},
    "StorageClass": {
        "provisioner": _S,
        "parameters": _MSS,
        "reclaimPolicy": "v1.PersistentVolumeReclaimPolicy",
        "volumeBindingMode": "v1.VolumeBindingMode",
        "allowVolumeExpansion": _B,
    },
    "TopologySelectorLabelRequirement": {"key": _S, "values": _LS},
    "VolumeNodeResources": {"count": _I32},
    "CSINodeDriver": {"name": _S, "nodeID": _S, "topologyKeys": _LS},
    "Volume": {"name": _S},
    "PersistentVolumeClaimVolumeSource": {"claimName": _S, "readOnly": _B},
    # The volume sources' scalars (k8s.io/api core/v1 types.go); a pointer's pointee.
    "GCEPersistentDiskVolumeSource": {
        "pdName": _S,
        "fsType": _S,
        "partition": _I32,
        "readOnly": _B,
    },
    "AWSElasticBlockStoreVolumeSource": {
        "volumeID": _S,
        "fsType": _S,
        "partition": _I32,
        "readOnly": _B,
    },
    "AzureDiskVolumeSource": {
        "diskName": _S,
        "diskURI": _S,
        "readOnly": _B,
        "kind": "v1.AzureDataDiskKind",
    },
    "CinderVolumeSource": {"volumeID": _S, "readOnly": _B},
    "PortworxVolumeSource": {"volumeID": _S, "fsType": _S, "readOnly": _B},
    "ISCSIVolumeSource": {"targetPortal": _S, "iqn": _S, "lun": _I32, "readOnly": _B},
    "RBDVolumeSource": {"monitors": _LS, "image": _S, "pool": _S, "readOnly": _B},
    "CSIVolumeSource": {"driver": _S, "readOnly": _B},
    "CSIPersistentVolumeSource": {"driver": _S, "volumeHandle": _S, "readOnly": _B},
    # k8s.io/kube-scheduler/config/v1, decoded by the scheduler's own configuration loader.
    "KubeSchedulerConfiguration": {
        "parallelism": _I32,
        "enableProfiling": _B,
        "enableContentionProfiling": _B,
        "percentageOfNodesToScore": _I32,
        "podInitialBackoffSeconds": _I64,
        "podMaxBackoffSeconds": _I64,
        "delayCacheUntilActive": _B,
    },
    "KubeSchedulerProfile": {"schedulerName": _S, "percentageOfNodesToScore": _I32},
    "Plugin": {"name": _S, "weight": _I32},
    "PluginConfig": {"name": _S},
    "PodTopologySpreadArgs": {"defaultingType": "v1.PodTopologySpreadConstraintsDefaulting"},
    # k8s.io/component-base/config/v1alpha1.
    "LeaderElectionConfiguration": {
        "leaderElect": _B,
        "leaseDuration": DURATION,
        "renewDeadline": DURATION,
        "retryPeriod": DURATION,
        "resourceLock": _S,
        "resourceName": _S,
        "resourceNamespace": _S,
    },
    "ClientConnectionConfiguration": {
        "kubeconfig": _S,
        "acceptContentTypes": _S,
        "contentType": _S,
        "qps": "float32",
        "burst": _I32,
    },
    "Extender": {
        "urlPrefix": _S,
        "filterVerb": _S,
        "preemptVerb": _S,
        "prioritizeVerb": _S,
        "weight": _I64,
        "bindVerb": _S,
        "enableHTTPS": _B,
        "httpTimeout": DURATION,
        "nodeCacheCapable": _B,
        "ignorable": _B,
    },
    "ExtenderManagedResource": {"name": _S, "ignoredByScheduler": _B},
    "ExtenderTLSConfig": {
        "insecure": _B,
        "serverName": _S,
        "certFile": _S,
        "keyFile": _S,
        "caFile": _S,
        "certData": BYTES,
        "keyData": BYTES,
        "caData": BYTES,
    },
    # The registered args types (types_pluginargs.go and types.go's DynamicResourcesArgs).
    "DefaultPreemptionArgs": {
        "minCandidateNodesPercentage": _I32,
        "minCandidateNodesAbsolute": _I32,
    },
    "InterPodAffinityArgs": {
        "hardPodAffinityWeight": _I32,
        "ignorePreferredTermsOfExistingPods": _B,
    },
    "NodeResourcesFitArgs": {"ignoredResources": _LS, "ignoredResourceGroups": _LS},
    "ScoringStrategy": {"type": "v1.ScoringStrategyType"},
    "ResourceSpec": {"name": _S, "weight": _I64},
    "UtilizationShapePoint": {"utilization": _I32, "score": _I32},
    "VolumeBindingArgs": {"bindTimeoutSeconds": _I64},
    "DynamicResourcesArgs": {"filterTimeout": DURATION, "bindingTimeout": DURATION},
}

# Go structs we keep as plain mappings (their Go type -> JSON field name -> Go type), so that a
# wrong-typed value inside one is still named as encoding/json names it.
DICT_STRUCTS: Final[dict[str, dict[str, str]]] = {
    _STS_PVC_RETENTION: {
        "whenDeleted": "v1.PersistentVolumeClaimRetentionPolicyType",
        "whenScaled": "v1.PersistentVolumeClaimRetentionPolicyType",
    },
}

# Our structs that are not in the API schema (the scheduler configuration's types), by our
# class name, with their Go names. Every other struct is known when the schema has it.
_CONFIG_STRUCTS: Final = {
    "KubeSchedulerConfiguration": "KubeSchedulerConfiguration",
    "KubeSchedulerProfile": "KubeSchedulerProfile",
    "Plugins": "Plugins",
    "PluginSet": "PluginSet",
    "PluginRef": "Plugin",
    "PluginConfig": "PluginConfig",
    "PodTopologySpreadArgs": "PodTopologySpreadArgs",
    **{
        name: name
        for name in (
            "LeaderElectionConfiguration",
            "ClientConnectionConfiguration",
            "Extender",
            "ExtenderManagedResource",
            "ExtenderTLSConfig",
            "DefaultPreemptionArgs",
            "InterPodAffinityArgs",
            "NodeResourcesFitArgs",
            "ScoringStrategy",
            "ResourceSpec",
            "UtilizationShapePoint",
            "RequestedToCapacityRatioParam",
            "NodeResourcesBalancedAllocationArgs",
            "VolumeBindingArgs",
            "NodeAffinityArgs",
            "DynamicResourcesArgs",
        )
    },
}
# The Go package of a configuration struct when it is not kube-scheduler's config/v1.
_CONFIG_PACKAGES: Final = {
    "LeaderElectionConfiguration": "v1alpha1",
    "ClientConnectionConfiguration": "v1alpha1",
}


def go_struct_name(cls: type[msgspec.Struct]) -> str | None:
    """The Go name of the struct ``cls`` decodes, or None when it is not known for sure."""
    name = cls.__name__
    strict = strict_struct_type(cls)
    if strict is not None:
        return go_fields()[0].get(strict)
    if name in _CONFIG_STRUCTS:
        return _CONFIG_STRUCTS[name]
    return name if f"V1{name}" in schema_types() else None


def field_go_type(cls: type[msgspec.Struct], field: mi.Field) -> str | None:
    """The Go type of ``field`` of ``cls`` (pointer left out), or None when not known."""
    strict = strict_struct_type(cls)
    if strict is not None:  # a strict struct: its type from the Go sources
        return go_fields()[1].get(strict, {}).get(field.encode_name, [None])[0]
    go_name = go_struct_name(cls)
    if go_name is None:
        return None
    listed = _SCALARS.get(go_name, {}).get(field.encode_name)
    if listed is not None:
        return listed
    derived = _derived(field.type)
    if derived is None:
        return None
    go_type, ref = derived
    # The schema must agree that the field holds that struct (ours may be a stand-in).
    if (
        cls.__name__ not in _CONFIG_STRUCTS
        and schema_types()[f"V1{go_name}"].get(field.encode_name) != ref
    ):
        return None
    return go_type


def _derived(info: mi.Type) -> tuple[str, object] | None:
    """A struct, list of structs or map of structs as (Go type, schema reference)."""
    info = unwrap(info)
    if isinstance(info, mi.StructType):
        name = go_struct_name(info.cls)
        package = _CONFIG_PACKAGES.get(info.cls.__name__, "v1")
        return None if name is None else (f"{package}.{name}", f"V1{info.cls.__name__}")
    if isinstance(info, mi.ListType):
        inner = unwrap(info.item_type)
        if isinstance(inner, mi.StructType):
            name = go_struct_name(inner.cls)
            return None if name is None else (f"[]v1.{name}", [f"V1{inner.cls.__name__}"])
    if isinstance(info, mi.DictType):
        inner = unwrap(info.value_type)
        if isinstance(inner, mi.StructType):
            name = go_struct_name(inner.cls)
            if name is not None:
                return f"map[string]v1.{name}", {"*": f"V1{inner.cls.__name__}"}
    return None


def unwrap(info: mi.Type) -> mi.Type:
    """``X | None`` as ``X``; any other type as it is."""
    if isinstance(info, mi.UnionType):
        concrete = [x for x in info.types if not isinstance(x, mi.NoneType)]
        if len(concrete) == 1:
            return concrete[0]
    return info


def element_go_type(go_type: str) -> str | None:
    """The Go type of an item of a slice or a value of a map of Go type ``go_type``."""
    if go_type == _RL:
        return QUANTITY
    if go_type.startswith("[]"):
        return go_type[2:]
    if go_type.startswith("map["):
        depth = 0
        for i, ch in enumerate(go_type):
            depth += (ch == "[") - (ch == "]")
            if ch == "]" and depth == 0:
                return go_type[i + 1 :]
    return None
