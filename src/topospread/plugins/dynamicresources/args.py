"""DynamicResourcesArgs: the scheduler's validation of them.

topospread models neither timeout (filterTimeout bounds a Filter's search, bindingTimeout a
PreBind wait), but a configuration kube-scheduler refuses is refused here too. Setting a field
whose feature gate is off is an error (unlike in the REST API): in v1.35 bindingTimeout needs
DRADeviceBindingConditions, alpha and off, so any bindingTimeout is refused.

Upstream: ValidateDynamicResourcesArgs (pkg/scheduler/apis/config/validation/
validation_pluginargs.go, v1.35).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from topospread.api.field import FieldError, GoJSON, Path, forbidden, invalid
from topospread.api.go_duration import SECOND, format_duration, parse_duration
from topospread.framework.features import DEFAULT_FEATURES, Features


def validate_dynamic_resources_args(
    raw: Mapping[str, Any] | None, path: Path, features: Features = DEFAULT_FEATURES
) -> list[FieldError]:
    """Field errors of the (type-checked) raw args at ``path``: a negative filterTimeout, a
    bindingTimeout under one second, or either set while its feature gate is off.

    Upstream: ValidateDynamicResourcesArgs (validation_pluginargs.go, v1.35)
    """
    args = raw or {}
    return [
        *_timeout_errors(
            args.get("filterTimeout"),
            path.child("filterTimeout"),
            gated_on=features.enable_dra_scheduler_filter_timeout,
            gates="DRASchedulingFilterTimeout feature gate is",
            least=0,
            least_message="must be zero or positive",
        ),
        *_timeout_errors(
            args.get("bindingTimeout"),
            path.child("bindingTimeout"),
            gated_on=features.enable_dra_device_binding_conditions
            and features.enable_dra_resource_claim_device_status,
            gates="DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is",
            least=SECOND,
            least_message="must be at least 1 second",
        ),
    ]


def _timeout_errors(
    value: Any, path: Path, *, gated_on: bool, gates: str, least: int, least_message: str
) -> list[FieldError]:
    """A duration field behind feature gates: when they are on, one under ``least`` is
    invalid; when they are off, any value is forbidden. A null duration is a nil pointer:
    unset (defaulted), not checked."""
    if value is None:
        return []
    if not gated_on:
        return [forbidden(path, f"{gates} disabled")]
    duration = parse_duration(value)
    if duration < least:
        return [invalid(path, GoJSON(format_duration(duration)), least_message)]
    return []


__all__ = ["validate_dynamic_resources_args"]
