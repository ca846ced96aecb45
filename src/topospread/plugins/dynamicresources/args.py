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
    errors: list[FieldError] = []
    # A null duration is a nil pointer: unset (defaulted), not checked.
    filter_timeout = args.get("filterTimeout")
    if features.enable_dra_scheduler_filter_timeout:
        if filter_timeout is not None and parse_duration(filter_timeout) < 0:
            errors.append(
                invalid(
                    path.child("filterTimeout"),
                    GoJSON(format_duration(parse_duration(filter_timeout))),
                    "must be zero or positive",
                )
            )
    elif filter_timeout is not None:
        errors.append(
            forbidden(
                path.child("filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled"
            )
        )
    binding_timeout = args.get("bindingTimeout")
    if (
        features.enable_dra_device_binding_conditions
        and features.enable_dra_resource_claim_device_status
    ):
        if binding_timeout is not None and parse_duration(binding_timeout) < SECOND:
            errors.append(
                invalid(
                    path.child("bindingTimeout"),
                    GoJSON(format_duration(parse_duration(binding_timeout))),
                    "must be at least 1 second",
                )
            )
    elif binding_timeout is not None:
        errors.append(
            forbidden(
                path.child("bindingTimeout"),
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
                "disabled",
            )
        )
    return errors


__all__ = ["validate_dynamic_resources_args"]
