"""VolumeBindingArgs: the scheduler's validation of them.

topospread models neither the bind wait (bindTimeoutSeconds) nor the StorageCapacityScoring
scorer (shape), but a configuration kube-scheduler refuses is refused here too. In v1.35 the
StorageCapacityScoring gate is alpha and off, so a shape is refused as a whole (it is not
defaulted either); with the gate on it would be checked point by point.

Upstream: SetDefaults_VolumeBindingArgs (pkg/scheduler/apis/config/v1/defaults.go) and
ValidateVolumeBindingArgs (pkg/scheduler/apis/config/validation/validation_pluginargs.go), v1.35.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from topospread.api.field import FieldError, GoJSON, Path, invalid
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.plugins.noderesources.args import UtilizationShapePoint, validate_function_shape

DEFAULT_BIND_TIMEOUT_SECONDS: Final = 600
_SHAPE_GATED: Final = (
    "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"
)


def _point(raw: Any) -> UtilizationShapePoint:
    # The wire types have checked each point is an object of int32s; absent fields are 0.
    point = raw if isinstance(raw, Mapping) else {}
    return UtilizationShapePoint(
        utilization=point.get("utilization") or 0, score=point.get("score") or 0
    )


def validate_volume_binding_args(
    raw: Mapping[str, Any] | None, path: Path, features: Features = DEFAULT_FEATURES
) -> list[FieldError]:
    """Field errors of the (type-checked) raw args at ``path``: a negative bind timeout; a
    shape while StorageCapacityScoring is off, else a shape validateFunctionShape refuses.

    Upstream: ValidateVolumeBindingArgsWithOptions (validation_pluginargs.go, v1.35)
    """
    args = raw or {}
    errors: list[FieldError] = []
    timeout = args.get("bindTimeoutSeconds")
    timeout = DEFAULT_BIND_TIMEOUT_SECONDS if timeout is None else timeout
    if timeout < 0:
        errors.append(
            invalid(
                path.child("bindTimeoutSeconds"),
                timeout,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    shape: Sequence[Any] | None = args.get("shape")
    if features.enable_storage_capacity_scoring:
        # Unreachable with v1.35's defaults; an empty shape would be defaulted first.
        points = [_point(p) for p in shape or ()]
        if points:
            errors.extend(validate_function_shape(points, path.child("shape")))
    elif shape is not None:
        # The internal type, printed by encoding/json: Go field names, absent fields 0.
        value = [{"Utilization": p.utilization, "Score": p.score} for p in map(_point, shape)]
        errors.append(invalid(path.child("shape"), GoJSON(value), _SHAPE_GATED))
    return errors


__all__ = ["DEFAULT_BIND_TIMEOUT_SECONDS", "validate_volume_binding_args"]
