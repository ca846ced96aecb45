"""The API server's validation of the workload kinds' own fields (replicas, strategies, history
limits, a StatefulSet's volumeClaimTemplates, Job and CronJob counts), with its messages.
Selectors and pod templates are checked where the controllers read them
(``check_selector_matches_template``, ``validate_pod``).

Upstream: ValidateDeploymentSpec, ValidateDeploymentStrategy, ValidateRollingUpdateDeployment,
ValidateReplicaSetSpec, ValidateStatefulSetSpec, ValidateDaemonSetSpec
(pkg/apis/apps/validation/validation.go), ValidateReplicationControllerSpec
(pkg/apis/core/validation/validation.go), validateJobSpec and validateCronJobSpec
(pkg/apis/batch/validation/validation.go), v1.35.
"""

from __future__ import annotations

import re
from typing import Final

from topospread.api.claim_validation import validate_claim_spec
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
)
from topospread.api.storage import volume_claim_templates
from topospread.api.types import (
    CronJob,
    DaemonSet,
    Deployment,
    Job,
    JobSpec,
    ReplicaSet,
    ReplicationController,
    RollingUpdateStatefulSetStrategy,
    StatefulSet,
    StatefulSetUpdateStrategy,
)

IS_NEGATIVE: Final = "must be greater than or equal to 0"
_PERCENT: Final = re.compile(r"[0-9]+%")
_GO_ATOI: Final = re.compile(r"[+-]?[0-9]+")  # what strconv.Atoi reads (ASCII digits only)
_PERCENT_ERR: Final = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)

Workload = Deployment | ReplicaSet | StatefulSet | DaemonSet | ReplicationController | Job | CronJob


def nonnegative(value: int | None, path: Path) -> list[FieldError]:
    """Upstream: ValidateNonnegativeField (core validation.go, v1.35)."""
    return [invalid(path, value, IS_NEGATIVE)] if value is not None and value < 0 else []


def _int_or_percent(value: int | str | None, path: Path) -> list[FieldError]:
    """Upstream: ValidatePositiveIntOrPercent and IsNotMoreThan100Percent (apps validation)."""
    if value is None:
        return []
    if isinstance(value, int):
        return nonnegative(value, path)
    if not _PERCENT.fullmatch(value):
        return [invalid(path, GoJSON(value), _PERCENT_ERR)]
    if int(value[:-1]) > 100:
        return [invalid(path, GoJSON(value), "must not be greater than 100%")]
    return []


def _is_zero(value: int | str | None) -> bool:
    return value == 0 or value == "0%"


def _deployment(obj: Deployment, spec_path: Path) -> list[FieldError]:
    spec = obj.spec
    errs = nonnegative(spec.replicas, spec_path.child("replicas"))
    strategy_path = spec_path.child("strategy")
    strategy = spec.strategy
    if strategy.type == "Recreate":
        if strategy.rolling_update is not None:
            errs.append(
                forbidden(
                    strategy_path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            )
    elif strategy.type in ("", "RollingUpdate"):
        rolling = strategy.rolling_update
        if rolling is not None:
            rolling_path = strategy_path.child("rollingUpdate")
            unavailable = rolling_path.child("maxUnavailable")
            errs += _int_or_percent(rolling.max_unavailable, unavailable)
            errs += _int_or_percent(rolling.max_surge, rolling_path.child("maxSurge"))
            if _is_zero(rolling.max_unavailable) and _is_zero(rolling.max_surge):
                errs.append(
                    invalid(
                        unavailable,
                        GoJSON(rolling.max_unavailable),
                        "may not be 0 when `maxSurge` is 0",
                    )
                )
    else:
        errs.append(
            not_supported(
                strategy_path.child("type"), GoJSON(strategy.type), ("Recreate", "RollingUpdate")
            )
        )
    errs += nonnegative(spec.min_ready_seconds, spec_path.child("minReadySeconds"))
    errs += nonnegative(spec.revision_history_limit, spec_path.child("revisionHistoryLimit"))
    deadline = spec.progress_deadline_seconds
    if deadline is not None:
        deadline_path = spec_path.child("progressDeadlineSeconds")
        errs += nonnegative(deadline, deadline_path)
        if deadline <= spec.min_ready_seconds:
            errs.append(
                invalid(deadline_path, GoJSON(deadline), "must be greater than minReadySeconds")
            )
    return errs


def _rolling_update_json(rolling: RollingUpdateStatefulSetStrategy | None) -> GoJSON:
    """The internal apps.RollingUpdateStatefulSetStrategy as encoding/json prints it: Go's
    field names (no json tags), an unset partition converted to 0, an unset maxUnavailable
    null."""
    if rolling is None:
        return GoJSON(None)
    return GoJSON({"Partition": rolling.partition or 0, "MaxUnavailable": rolling.max_unavailable})


def _percent_value(value: int | str) -> int:
    """The number an IntOrString stands for: a percentage's digits, an integer, or the string
    read as a decimal integer (0 when it is not one).

    Upstream: getIntOrPercentValue (pkg/apis/apps/validation/validation.go, v1.35)
    """
    if isinstance(value, int):
        return value
    if _PERCENT.fullmatch(value):
        return int(value[:-1])
    return int(value) if _GO_ATOI.fullmatch(value) else 0


def _stateful_set_rolling_update(
    rolling: RollingUpdateStatefulSetStrategy, path: Path
) -> list[FieldError]:
    """Upstream: validateRollingUpdateStatefulSet (pkg/apis/apps/validation, v1.35)"""
    errs = nonnegative(rolling.partition, path.child("partition"))
    value = rolling.max_unavailable
    if value is not None:
        unavailable = path.child("maxUnavailable")
        errs += _int_or_percent(value, unavailable)
        if _percent_value(value) == 0:
            errs.append(invalid(unavailable, GoJSON(value), "cannot be 0"))
    return errs


def _stateful_set_strategy(
    strategy: StatefulSetUpdateStrategy, spec_path: Path
) -> list[FieldError]:
    """The update strategy after defaulting (an empty type is RollingUpdate)."""
    path = spec_path.child("updateStrategy")
    if strategy.type == "OnDelete":
        if strategy.rolling_update is None:
            return []
        return [
            invalid(
                path.child("rollingUpdate"),
                _rolling_update_json(strategy.rolling_update),
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        ]
    if strategy.type in ("", "RollingUpdate"):
        if strategy.rolling_update is None:
            return []
        return _stateful_set_rolling_update(strategy.rolling_update, path.child("rollingUpdate"))
    # The whole strategy is the bad value (the internal struct, Go's field names).
    shown = {
        "Type": strategy.type,
        "RollingUpdate": _rolling_update_json(strategy.rolling_update).value,
    }
    return [invalid(path, GoJSON(shown), "must be 'RollingUpdate' or 'OnDelete'")]


def _retention_policy(policy: dict[str, str] | None, spec_path: Path) -> list[FieldError]:
    """An unset rule is defaulted to Retain before validation.

    Upstream: ValidatePersistentVolumeClaimRetentionPolicy (apps validation, v1.35)
    """
    if policy is None:
        return []
    path = spec_path.child("persistentVolumeClaimRetentionPolicy")
    errs: list[FieldError] = []
    for rule in ("whenDeleted", "whenScaled"):
        value = policy.get(rule, "")
        if value not in ("", "Retain", "Delete"):
            errs.append(not_supported(path.child(rule), GoJSON(value), ("Retain", "Delete")))
    return errs


def _volume_claim_templates(obj: StatefulSet, path: Path) -> list[FieldError]:
    """Each template's spec, as a new claim's (v1.34+, kubernetes#132212). Their metadata is
    not checked here: a bad name or label is refused only when the controller creates the
    claim (``<template>-<set>-<ordinal>``).

    Upstream: ValidateVolumeClaimTemplates (pkg/apis/apps/validation/validation.go, v1.35),
    skipped on update
    """
    errs: list[FieldError] = []
    for i, claim in enumerate(volume_claim_templates(obj)):
        errs += validate_claim_spec(claim.spec, path.index(i).child("spec"))
    return errs


def _stateful_set(obj: StatefulSet, spec_path: Path) -> list[FieldError]:
    """Upstream: ValidateStatefulSetSpec (pkg/apis/apps/validation/validation.go, v1.35)"""
    spec = obj.spec
    errs: list[FieldError] = []
    # An empty policy is defaulted to OrderedReady.
    if spec.pod_management_policy not in ("", "OrderedReady", "Parallel"):
        errs.append(
            invalid(
                spec_path.child("podManagementPolicy"),
                GoJSON(spec.pod_management_policy),
                "must be 'OrderedReady' or 'Parallel'",
            )
        )
    errs += _stateful_set_strategy(spec.update_strategy, spec_path)
    errs += _retention_policy(spec.persistent_volume_claim_retention_policy, spec_path)
    errs += _volume_claim_templates(obj, spec_path.child("volumeClaimTemplates"))
    errs += nonnegative(spec.replicas, spec_path.child("replicas"))
    errs += nonnegative(spec.min_ready_seconds, spec_path.child("minReadySeconds"))
    if spec.ordinals is not None:
        errs += nonnegative(spec.ordinals.start, spec_path.child("ordinals", "start"))
    return errs


def _daemon_set(obj: DaemonSet, spec_path: Path) -> list[FieldError]:
    """Upstream: ValidateDaemonSetSpec, ValidateDaemonSetUpdateStrategy (apps validation)."""
    spec = obj.spec
    strategy = spec.update_strategy
    errs: list[FieldError] = []
    if strategy.type not in ("", "RollingUpdate", "OnDelete"):
        # The whole strategy is the bad value, printed as encoding/json prints the internal
        # struct (no json tags; an unset IntOrString is 0).
        rolling = strategy.rolling_update
        shown = {
            "Type": strategy.type,
            "RollingUpdate": None
            if rolling is None
            else {
                "MaxUnavailable": rolling.max_unavailable or 0,
                "MaxSurge": rolling.max_surge or 0,
            },
        }
        errs.append(
            not_supported(
                spec_path.child("updateStrategy"), GoJSON(shown), ("RollingUpdate", "OnDelete")
            )
        )
    elif strategy.rolling_update is not None:
        rolling_path = spec_path.child("updateStrategy", "rollingUpdate")
        errs += _int_or_percent(
            strategy.rolling_update.max_unavailable, rolling_path.child("maxUnavailable")
        )
        errs += _int_or_percent(strategy.rolling_update.max_surge, rolling_path.child("maxSurge"))
    errs += nonnegative(spec.min_ready_seconds, spec_path.child("minReadySeconds"))
    errs += nonnegative(spec.revision_history_limit, spec_path.child("revisionHistoryLimit"))
    return errs


def _always_restarts(restart_policy: str, spec_path: Path) -> list[FieldError]:
    """A long-running workload's pods restart: the template's restartPolicy (defaulted to
    Always when empty) may be nothing else.

    Upstream: ValidatePodTemplateSpecForReplicaSet, ValidateStatefulSetSpec,
    ValidateDaemonSetSpec (pkg/apis/apps/validation), v1.35
    """
    if restart_policy in ("", "Always"):
        return []
    path = spec_path.child("template", "spec", "restartPolicy")
    return [not_supported(path, GoJSON(restart_policy), ("Always",))]


def _job_restart_policy(restart_policy: str, spec_path: Path) -> list[FieldError]:
    """A Job's pods run to completion: OnFailure or Never, and an empty restartPolicy is
    defaulted to Always first, so it is refused too.

    Upstream: validateJobSpec (pkg/apis/batch/validation/validation.go, v1.35)
    """
    path = spec_path.child("template", "spec", "restartPolicy")
    if restart_policy in ("", "Always"):
        return [required(path, 'valid values: "OnFailure", "Never"')]
    if restart_policy not in ("OnFailure", "Never"):
        return [not_supported(path, GoJSON(restart_policy), ("OnFailure", "Never"))]
    return []


def _job_spec(spec: JobSpec, spec_path: Path) -> list[FieldError]:
    errs = nonnegative(spec.parallelism, spec_path.child("parallelism"))
    errs += nonnegative(spec.completions, spec_path.child("completions"))
    if spec.completion_mode not in (None, "NonIndexed", "Indexed"):
        errs.append(
            not_supported(
                spec_path.child("completionMode"),
                GoJSON(spec.completion_mode),
                ("NonIndexed", "Indexed"),
            )
        )
    errs += _job_restart_policy(spec.template.spec.restart_policy, spec_path)
    return errs


def _cron_job(obj: CronJob, spec_path: Path) -> list[FieldError]:
    spec = obj.spec
    errs: list[FieldError] = []
    if spec.concurrency_policy not in ("", "Allow", "Forbid", "Replace"):
        errs.append(
            not_supported(
                spec_path.child("concurrencyPolicy"),
                GoJSON(spec.concurrency_policy),
                ("Allow", "Forbid", "Replace"),
            )
        )
    errs += nonnegative(spec.starting_deadline_seconds, spec_path.child("startingDeadlineSeconds"))
    errs += nonnegative(
        spec.successful_jobs_history_limit, spec_path.child("successfulJobsHistoryLimit")
    )
    errs += nonnegative(spec.failed_jobs_history_limit, spec_path.child("failedJobsHistoryLimit"))
    errs += _job_spec(spec.job_template.spec, spec_path.child("jobTemplate", "spec"))
    return errs


def validate_workload_spec(obj: Workload) -> list[FieldError]:
    """What the API server refuses in a workload's own spec fields, in upstream's order."""
    spec_path = Path.root("spec")
    if isinstance(obj, Job):
        return _job_spec(obj.spec, spec_path)
    if isinstance(obj, CronJob):
        return _cron_job(obj, spec_path)
    template = obj.spec.template
    restarts = _always_restarts(template.spec.restart_policy if template else "", spec_path)
    if isinstance(obj, Deployment):
        return _deployment(obj, spec_path) + restarts
    if isinstance(obj, StatefulSet):
        return _stateful_set(obj, spec_path) + restarts
    if isinstance(obj, DaemonSet):
        return _daemon_set(obj, spec_path) + restarts
    # ReplicaSet and ReplicationController
    errs = nonnegative(obj.spec.replicas, spec_path.child("replicas"))
    errs += nonnegative(obj.spec.min_ready_seconds, spec_path.child("minReadySeconds"))
    return errs + restarts


def template_path(obj: Workload) -> str:
    """Where a workload keeps its pod template, as validation paths name it."""
    if isinstance(obj, CronJob):
        return "spec.jobTemplate.spec.template"
    return "spec.template"


def template_error(template: str, error: FieldError) -> str:
    """``error``, found validating a pod made from the template at ``template``, as the API
    server reports it: under the template's path, and a label's or annotation's error right
    under it (``spec.template.labels``, ``spec.template.annotations``: ValidatePodTemplateSpec
    builds those paths from the template's, not from its metadata's).

    Upstream: ValidatePodTemplateSpec (core validation.go, v1.35)
    """
    text = str(error)
    for field in ("metadata.labels", "metadata.annotations"):
        if text.startswith(field) and text[len(field)] in ".[:":
            return f"{template}.{text.removeprefix('metadata.')}"
    return f"{template}.{text}"
