"""Kubernetes objects as the scheduler reads them: frozen, typed, decoded once from manifests.

Only the fields kube-scheduler (and topospread's controllers) read are declared; msgspec skips
every other field while decoding. Field names are the API's camelCase names (``rename="camel"``).
Defaults mirror the API server's: an absent map or list is empty, an absent pointer is ``None``.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from topospread.api.base import Int32, _Obj

# Re-exported: meta/v1 lives below the volume sources, whose claim templates carry it.
from topospread.api.meta_types import LabelSelector as LabelSelector
from topospread.api.meta_types import LabelSelectorRequirement as LabelSelectorRequirement
from topospread.api.meta_types import ObjectMeta as ObjectMeta
from topospread.api.meta_types import OwnerReference as OwnerReference

# Re-exported: what of the security contexts validation compares with the annotations.
from topospread.api.security_types import AppArmorProfile as AppArmorProfile
from topospread.api.security_types import EphemeralContainer as EphemeralContainer
from topospread.api.security_types import PodOS as PodOS
from topospread.api.security_types import PodSecurityContext as PodSecurityContext
from topospread.api.security_types import SeccompProfile as SeccompProfile
from topospread.api.security_types import SecurityContext as SecurityContext

# Re-exported: a pod's volumes live beside the sources they share with PersistentVolumes.
from topospread.api.volumes import (
    PersistentVolumeClaimVolumeSource as PersistentVolumeClaimVolumeSource,
)
from topospread.api.volumes import Volume as Volume

# Well-known label keys (k8s.io/api/core/v1 well_known_labels.go).
LABEL_HOSTNAME: Final = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE: Final = "topology.kubernetes.io/zone"
LABEL_TOPOLOGY_REGION: Final = "topology.kubernetes.io/region"
LABEL_FAILURE_DOMAIN_BETA_ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
LABEL_FAILURE_DOMAIN_BETA_REGION: Final = "failure-domain.beta.kubernetes.io/region"
LABEL_OS_STABLE: Final = "kubernetes.io/os"
LABEL_ARCH_STABLE: Final = "kubernetes.io/arch"
LABEL_INSTANCE_TYPE_STABLE: Final = "node.kubernetes.io/instance-type"

# Enumerations, spelled as the API spells them.
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
NODE_INCLUSION_POLICY_HONOR: Final = "Honor"
NODE_INCLUSION_POLICY_IGNORE: Final = "Ignore"
TAINT_EFFECT_NO_SCHEDULE: Final = "NoSchedule"
TAINT_EFFECT_PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
TAINT_EFFECT_NO_EXECUTE: Final = "NoExecute"
TOLERATION_OP_EXISTS: Final = "Exists"
TOLERATION_OP_EQUAL: Final = "Equal"
NODE_READY: Final = "Ready"
CONDITION_TRUE: Final = "True"
CONDITION_UNKNOWN: Final = "Unknown"


# ---------------------------------------------------------------------------------------------
# core/v1: Node


class Taint(_Obj, frozen=True):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: str | None = None


class NodeSpec(_Obj, frozen=True):
    unschedulable: bool = False
    taints: list[Taint] = []
    # On the wire podCIDR is podCIDRs[0] (api/cidr_validation.py: node_pod_cidrs).
    pod_cidr: str = msgspec.field(default="", name="podCIDR")
    pod_cidrs: list[str] = msgspec.field(default=[], name="podCIDRs")
    provider_id: str = msgspec.field(default="", name="providerID")


class ContainerImage(_Obj, frozen=True):
    names: list[str] = []
    size_bytes: int = 0


class NodeCondition(_Obj, frozen=True):
    """Read by the descheduler model (it works on a node only while the node's Ready condition
    is True or absent) and cluster-autoscaler's. The scheduler reads no condition."""

    type: str = ""
    status: str = ""
    reason: str = ""
    # RFC 3339; cluster-autoscaler reads when a node's readiness last changed.
    last_transition_time: str | None = None


class NodeStatus(_Obj, frozen=True):
    capacity: dict[str, str | int | float] = {}
    allocatable: dict[str, str | int | float] = {}
    images: list[ContainerImage] = []
    conditions: list[NodeCondition] = []


class Node(_Obj, frozen=True):
    api_version: str = "v1"
    kind: str = "Node"
    metadata: ObjectMeta = ObjectMeta()
    spec: NodeSpec = NodeSpec()
    status: NodeStatus = NodeStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels


# ---------------------------------------------------------------------------------------------
# core/v1: Pod


class NodeSelectorRequirement(_Obj, frozen=True):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class NodeSelectorTerm(_Obj, frozen=True):
    match_expressions: list[NodeSelectorRequirement] = []
    match_fields: list[NodeSelectorRequirement] = []


class NodeSelector(_Obj, frozen=True):
    node_selector_terms: list[NodeSelectorTerm] = []


class PreferredSchedulingTerm(_Obj, frozen=True):
    weight: Int32 = 0
    preference: NodeSelectorTerm = NodeSelectorTerm()


class NodeAffinity(_Obj, frozen=True):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] = []


class PodAffinityTerm(_Obj, frozen=True):
    label_selector: LabelSelector | None = None
    namespaces: list[str] = []
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] = []
    mismatch_label_keys: list[str] = []


class WeightedPodAffinityTerm(_Obj, frozen=True):
    weight: Int32 = 0
    pod_affinity_term: PodAffinityTerm = PodAffinityTerm()


class PodAffinity(_Obj, frozen=True):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class PodAntiAffinity(_Obj, frozen=True):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(_Obj, frozen=True):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class Toleration(_Obj, frozen=True):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class TopologySpreadConstraint(_Obj, frozen=True):
    """core/v1 TopologySpreadConstraint as written in the manifest (no defaults applied)."""

    max_skew: Int32 = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] = []


class ContainerPort(_Obj, frozen=True):
    name: str = ""
    host_port: Int32 = 0
    container_port: Int32 = 0
    protocol: str = ""
    host_ip: str = msgspec.field(default="", name="hostIP")


class ResourceRequirements(_Obj, frozen=True):
    limits: dict[str, str | int | float] = {}
    requests: dict[str, str | int | float] = {}


class Container(_Obj, frozen=True):
    name: str = ""
    image: str = ""
    ports: list[ContainerPort] = []
    resources: ResourceRequirements = ResourceRequirements()
    restart_policy: str | None = None
    security_context: SecurityContext | None = None


class PodSchedulingGate(_Obj, frozen=True):
    name: str = ""


class PodResourceClaim(_Obj, frozen=True):
    name: str = ""


class PodSpec(_Obj, frozen=True):
    node_name: str = ""
    node_selector: dict[str, str] = {}
    affinity: Affinity | None = None
    tolerations: list[Toleration] = []
    topology_spread_constraints: list[TopologySpreadConstraint] = []
    containers: list[Container] = []
    init_containers: list[Container] = []
    overhead: dict[str, str | int | float] = {}
    resources: ResourceRequirements | None = None
    priority: Int32 | None = None
    priority_class_name: str = ""
    scheduler_name: str = ""
    scheduling_gates: list[PodSchedulingGate] = []
    volumes: list[Volume] = []
    resource_claims: list[PodResourceClaim] = []
    preemption_policy: str | None = None
    host_network: bool = False
    restart_policy: str = ""
    # Read by Karpenter's termination (the API server defaults it to 30; None: not given).
    termination_grace_period_seconds: int | None = None
    # Set by the StatefulSet controller (the pod's stable network identity) and for indexed Jobs.
    hostname: str = ""
    subdomain: str = ""
    security_context: PodSecurityContext | None = None
    os: PodOS | None = None
    ephemeral_containers: list[EphemeralContainer] = []


class PodCondition(_Obj, frozen=True):
    """Read by preemption: a DisruptionTarget condition marks a victim the scheduler preempted."""

    type: str = ""
    status: str = ""
    reason: str = ""
    # RFC 3339; the Ready condition's is when the pod became ready (controllers rank by it).
    last_transition_time: str | None = None


class ContainerStatus(_Obj, frozen=True):
    """Read by the workload controllers: pods whose containers restarted more go first."""

    name: str = ""
    restart_count: Int32 = 0
    ready: bool = False


class PodStatus(_Obj, frozen=True):
    phase: str = ""
    nominated_node_name: str = ""
    # RFC 3339, as the kubelet writes it; preemption prefers victims that started later.
    start_time: str | None = None
    conditions: list[PodCondition] = []
    container_statuses: list[ContainerStatus] = []
    init_container_statuses: list[ContainerStatus] = []


class Pod(_Obj, frozen=True):
    api_version: str = "v1"
    kind: str = "Pod"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def labels(self) -> dict[str, str]:
        return self.metadata.labels

    @property
    def key(self) -> str:
        """``namespace/name``, as klog.KObj prints a pod."""
        return f"{self.metadata.namespace}/{self.metadata.name}"

    @property
    def is_terminating(self) -> bool:
        return self.metadata.deletion_timestamp is not None


class PodTemplateSpec(_Obj, frozen=True):
    """core/v1 PodTemplateSpec: the pods a workload controller stamps out."""

    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()


# ---------------------------------------------------------------------------------------------
# Owners whose selectors give the default spreading constraints


class ServiceSpec(_Obj, frozen=True):
    # None and {} differ: a Service with a nil selector selects nothing.
    selector: dict[str, str] | None = None


class Service(_Obj, frozen=True):
    api_version: str = "v1"
    kind: str = "Service"
    metadata: ObjectMeta = ObjectMeta()
    spec: ServiceSpec = ServiceSpec()


class ReplicationControllerSpec(_Obj, frozen=True):
    replicas: Int32 | None = None
    # Equality-based: None or {} defaults to the template's labels (the API server's default).
    selector: dict[str, str] | None = None
    # A pointer upstream: the API server requires it, default spreading's lookups do not.
    template: PodTemplateSpec | None = None
    min_ready_seconds: Int32 = 0


class ReplicationController(_Obj, frozen=True):
    api_version: str = "v1"
    kind: str = "ReplicationController"
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicationControllerSpec = ReplicationControllerSpec()


class ReplicaSetSpec(_Obj, frozen=True):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    min_ready_seconds: Int32 = 0


class ReplicaSet(_Obj, frozen=True):
    api_version: str = "apps/v1"
    kind: str = "ReplicaSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: ReplicaSetSpec = ReplicaSetSpec()


class RollingUpdateStatefulSetStrategy(_Obj, frozen=True):
    partition: Int32 | None = None
    # IntOrString: an integer or a percentage such as "25%".
    max_unavailable: int | str | None = None


class StatefulSetUpdateStrategy(_Obj, frozen=True):
    type: str = ""  # RollingUpdate (the API server's default) or OnDelete
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


class StatefulSetOrdinals(_Obj, frozen=True):
    start: Int32 = 0


class StatefulSetSpec(_Obj, frozen=True):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    service_name: str = ""
    pod_management_policy: str = ""  # OrderedReady (the API server's default) or Parallel
    update_strategy: StatefulSetUpdateStrategy = StatefulSetUpdateStrategy()
    min_ready_seconds: Int32 = 0
    ordinals: StatefulSetOrdinals | None = None
    revision_history_limit: Int32 | None = None
    # PersistentVolumeClaim manifests (api/storage.py decodes them: that module imports this
    # one), and the retention policy (whenDeleted, whenScaled: Retain or Delete).
    volume_claim_templates: list[dict[str, Any]] = []
    persistent_volume_claim_retention_policy: dict[str, str] | None = None


class StatefulSetStatus(_Obj, frozen=True):
    collision_count: Int32 | None = None


class StatefulSet(_Obj, frozen=True):
    api_version: str = "apps/v1"
    kind: str = "StatefulSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: StatefulSetSpec = StatefulSetSpec()
    status: StatefulSetStatus = StatefulSetStatus()


# ---------------------------------------------------------------------------------------------
# Workloads the simulator's controllers expand into pods (apps/v1, batch/v1)


class RollingUpdateDeployment(_Obj, frozen=True):
    # IntOrString: an integer or a percentage such as "25%".
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


class DeploymentStrategy(_Obj, frozen=True):
    type: str = ""  # RollingUpdate (the API server's default) or Recreate
    rolling_update: RollingUpdateDeployment | None = None


class DeploymentSpec(_Obj, frozen=True):
    replicas: Int32 | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    strategy: DeploymentStrategy = DeploymentStrategy()
    min_ready_seconds: Int32 = 0
    revision_history_limit: Int32 | None = None
    paused: bool = False
    progress_deadline_seconds: Int32 | None = None


class DeploymentStatus(_Obj, frozen=True):
    collision_count: Int32 | None = None


class Deployment(_Obj, frozen=True):
    api_version: str = "apps/v1"
    kind: str = "Deployment"
    metadata: ObjectMeta = ObjectMeta()
    spec: DeploymentSpec = DeploymentSpec()
    status: DeploymentStatus = DeploymentStatus()


class RollingUpdateDaemonSet(_Obj, frozen=True):
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


class DaemonSetUpdateStrategy(_Obj, frozen=True):
    type: str = ""  # RollingUpdate (the API server's default) or OnDelete
    rolling_update: RollingUpdateDaemonSet | None = None


class DaemonSetSpec(_Obj, frozen=True):
    selector: LabelSelector | None = None
    template: PodTemplateSpec = PodTemplateSpec()
    update_strategy: DaemonSetUpdateStrategy = DaemonSetUpdateStrategy()
    min_ready_seconds: Int32 = 0
    revision_history_limit: Int32 | None = None


class DaemonSetStatus(_Obj, frozen=True):
    collision_count: Int32 | None = None


class DaemonSet(_Obj, frozen=True):
    api_version: str = "apps/v1"
    kind: str = "DaemonSet"
    metadata: ObjectMeta = ObjectMeta()
    spec: DaemonSetSpec = DaemonSetSpec()
    status: DaemonSetStatus = DaemonSetStatus()


class JobSpec(_Obj, frozen=True):
    parallelism: Int32 | None = None
    completions: Int32 | None = None
    completion_mode: str | None = None  # NonIndexed (the API server's default) or Indexed
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    suspend: bool | None = None
    template: PodTemplateSpec = PodTemplateSpec()


class Job(_Obj, frozen=True):
    api_version: str = "batch/v1"
    kind: str = "Job"
    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec = JobSpec()


class JobTemplateSpec(_Obj, frozen=True):
    """batch/v1 JobTemplateSpec: the Job a CronJob creates for each scheduled run."""

    metadata: ObjectMeta = ObjectMeta()
    spec: JobSpec = JobSpec()


class CronJobSpec(_Obj, frozen=True):
    schedule: str = ""
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str = ""  # Allow (the API server's default), Forbid or Replace
    suspend: bool | None = None
    job_template: JobTemplateSpec = JobTemplateSpec()
    successful_jobs_history_limit: Int32 | None = None
    failed_jobs_history_limit: Int32 | None = None


class CronJob(_Obj, frozen=True):
    api_version: str = "batch/v1"
    kind: str = "CronJob"
    metadata: ObjectMeta = ObjectMeta()
    spec: CronJobSpec = CronJobSpec()


# ---------------------------------------------------------------------------------------------
# policy/v1: PodDisruptionBudget (read by preemption to prefer victims whose budget allows it)


class PodDisruptionBudgetSpec(_Obj, frozen=True):
    # IntOrString, kept for reports; the scheduler reads only the selector and the status.
    min_available: int | str | None = None
    max_unavailable: int | str | None = None
    # None and {} both select no pods (policy/v1).
    selector: LabelSelector | None = None
    # Read only to show the spec as validation prints it (IfHealthyBudget, AlwaysAllow).
    unhealthy_pod_eviction_policy: str | None = None


class Condition(_Obj, frozen=True):
    """metav1.Condition: a budget's ``DisruptionAllowed`` condition."""

    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: str | None = None


class PodDisruptionBudgetStatus(_Obj, frozen=True):
    """What the disruption controller writes (in ``simulate``, simulator/controllers/
    disruption.py) and kube-scheduler's preemption reads (``disruptionsAllowed``,
    ``disruptedPods``)."""

    disruptions_allowed: Int32 = 0
    # Pod name -> when its eviction was processed; such pods no longer count against the budget.
    disrupted_pods: dict[str, str] = {}
    current_healthy: Int32 = 0
    desired_healthy: Int32 = 0
    expected_pods: Int32 = 0
    conditions: list[Condition] = []


class PodDisruptionBudget(_Obj, frozen=True):
    api_version: str = "policy/v1"
    kind: str = "PodDisruptionBudget"
    metadata: ObjectMeta = ObjectMeta()
    spec: PodDisruptionBudgetSpec = PodDisruptionBudgetSpec()
    status: PodDisruptionBudgetStatus = PodDisruptionBudgetStatus()


# ---------------------------------------------------------------------------------------------
# kubescheduler.config.k8s.io: PodTopologySpreadArgs

SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"


class PodTopologySpreadArgs(_Obj, frozen=True):
    """PodTopologySpreadArgs as written in a profile (defaultingType defaults to System)."""

    default_constraints: list[TopologySpreadConstraint] = []
    defaulting_type: str = ""


# ---------------------------------------------------------------------------------------------
# Cluster-scoped objects some default plugins read


class Namespace(_Obj, frozen=True):
    """Read by InterPodAffinity's namespaceSelector (its labels only)."""

    api_version: str = "v1"
    kind: str = "Namespace"
    metadata: ObjectMeta = ObjectMeta()


class PriorityClass(_Obj, frozen=True):
    """Resolves ``spec.priorityClassName`` into ``spec.priority`` (the Priority admission step)."""

    api_version: str = "scheduling.k8s.io/v1"
    kind: str = "PriorityClass"
    metadata: ObjectMeta = ObjectMeta()
    value: Int32 = 0
    global_default: bool = False
    preemption_policy: str | None = None
