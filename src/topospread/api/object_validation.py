"""The API server's create validation of the objects topospread reads besides pods and nodes:
each kind's metadata (with its own rule for names), a workload's own spec fields, a Service's
selector, a PriorityClass's value.

Upstream: ValidateService, ValidateNamespace (pkg/apis/core/validation), ValidateDeployment and
friends (pkg/apis/apps/validation), ValidateJob, ValidateCronJob (pkg/apis/batch/validation),
ValidatePriorityClass (pkg/apis/scheduling/validation), ValidatePodDisruptionBudget
(pkg/apis/policy/validation), v1.35.
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.apps_validation import Workload, validate_workload_spec
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from topospread.api.meta_validation import (
    name_is_dns1035_label,
    name_is_dns_label,
    validate_labels,
    validate_object_meta,
)
from topospread.api.storage_validation import validate_storage_object
from topospread.api.types import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    Namespace,
    PodDisruptionBudget,
    PriorityClass,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)

# The highest priority a PriorityClass not named system-* may have.
HIGHEST_USER_DEFINABLE_PRIORITY: Final = 1_000_000_000
SYSTEM_PRIORITY_CLASS_PREFIX: Final = "system-"
# The system classes the API server creates, with their values (neither is the global default).
_SYSTEM_PRIORITY_CLASSES: Final = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}
_PREEMPTION_POLICIES: Final = ("PreemptLowerPriority", "Never")
# A CronJob's name leaves room for the 11 characters of its Jobs' suffix.
CRON_JOB_NAME_MAX_LENGTH: Final = 52
_WORKLOADS: Final = (
    Deployment,
    ReplicaSet,
    StatefulSet,
    DaemonSet,
    ReplicationController,
    Job,
    CronJob,
)


def validate_object(obj: Any) -> list[FieldError]:
    """What creating ``obj`` would be refused for, in upstream's order: its metadata, then its
    spec. Kinds not listed here (pods and nodes have their own) give no errors."""
    meta = Path.root("metadata")
    if isinstance(obj, Namespace):
        return validate_object_meta(
            obj.metadata, meta, requires_namespace=False, name_rule=name_is_dns_label
        )
    if isinstance(obj, Service):
        errs = validate_object_meta(
            obj.metadata, meta, requires_namespace=True, name_rule=name_is_dns1035_label
        )
        return errs + validate_labels(obj.spec.selector or {}, Path.root("spec", "selector"))
    if isinstance(obj, PriorityClass):
        return _priority_class(obj, meta)
    if isinstance(obj, PodDisruptionBudget):
        return validate_object_meta(obj.metadata, meta, requires_namespace=True)
    if isinstance(obj, _WORKLOADS):
        return _workload(obj, meta)
    storage = validate_storage_object(obj)
    return storage if storage is not None else []


def _priority_class(obj: PriorityClass, meta: Path) -> list[FieldError]:
    """Upstream: ValidatePriorityClass (pkg/apis/scheduling/validation) and
    IsKnownSystemPriorityClass (pkg/apis/scheduling/v1/helpers.go), v1.35."""
    errs = validate_object_meta(obj.metadata, meta, requires_namespace=False)
    name = obj.metadata.name
    if name.startswith(SYSTEM_PRIORITY_CLASS_PREFIX):
        known = _SYSTEM_PRIORITY_CLASSES.get(name)
        if known is None:
            problem = f"{name} is not a known system priority class"
        elif obj.value != known:
            problem = f"value of {name} PriorityClass must be {known}"
        elif obj.global_default:
            problem = f"globalDefault of {name} PriorityClass must be false"
        else:
            problem = ""
        if problem:
            errs.append(
                forbidden(
                    meta.child("name"),
                    f"priority class names with '{SYSTEM_PRIORITY_CLASS_PREFIX}' prefix are "
                    f"reserved for system use only. error: {problem}",
                )
            )
    elif obj.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        errs.append(
            forbidden(
                Path.root("value"),
                "maximum allowed value of a user defined priority is "
                f"{HIGHEST_USER_DEFINABLE_PRIORITY}",
            )
        )
    if obj.preemption_policy is not None:
        policy_path = Path.root("preemptionPolicy")
        if not obj.preemption_policy:
            errs.append(required(policy_path))
        elif obj.preemption_policy not in _PREEMPTION_POLICIES:
            errs.append(
                not_supported(policy_path, GoJSON(obj.preemption_policy), _PREEMPTION_POLICIES)
            )
    return errs


def describe_object(obj: Any) -> str:
    """``Kind namespace/name``, or ``Kind name`` for a cluster-scoped object."""
    meta = obj.metadata
    return f"{obj.kind} {meta.namespace + '/' if meta.namespace else ''}{meta.name}"


def _workload(obj: Workload, meta: Path) -> list[FieldError]:
    errs = validate_object_meta(obj.metadata, meta, requires_namespace=True)
    if isinstance(obj, CronJob) and len(obj.metadata.name) > CRON_JOB_NAME_MAX_LENGTH:
        errs.append(
            invalid(
                meta.child("name"),
                obj.metadata.name,
                f"must be no more than {CRON_JOB_NAME_MAX_LENGTH} characters",
            )
        )
    return errs + validate_workload_spec(obj)
