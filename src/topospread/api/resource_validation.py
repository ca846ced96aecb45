"""Resource names and quantities as the API server validates them: containers' requests and
limits, pod-level resources, overhead, and a node's capacity and allocatable.

A quantity the API server cannot parse fails its JSON decoding with apimachinery's message and
no field; here that message is given the field's path (``...requests[cpu]: Invalid value:
"lots": quantities must match the regular expression ...``), so that the user finds it.

Upstream: ValidateResourceRequirements, validateContainerResourceName, validateResourceName,
ValidateResourceQuantityValue, ValidateNonnegativeQuantity and validateNodeResources
(pkg/apis/core/validation/validation.go, v1.35).
"""

from __future__ import annotations

from collections.abc import Mapping

from topospread.api.field import FieldError, GoJSON, Path, forbidden, invalid, required
from topospread.api.resource import Quantity, QuantityError, parse_quantity
from topospread.api.resource_names import (
    INTEGER_RESOURCES,
    RESOURCE_CPU,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_HUGE_PAGES_PREFIX,
    RESOURCE_MEMORY,
    is_extended_resource_name,
    is_hugepage_resource_name,
    is_integer_resource_name,
    is_native_resource,
    is_overcommit_allowed,
)
from topospread.api.types import Node, ResourceRequirements
from topospread.util.validation import is_qualified_name

IS_NEGATIVE: str = "must be greater than or equal to 0"
NOT_INTEGER: str = "must be an integer"
_STANDARD_CONTAINER_RESOURCES = frozenset(
    {RESOURCE_CPU, RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE}
)
# Every resource name a Kubernetes release knows unqualified (helper.standardResources).
_STANDARD_RESOURCES = INTEGER_RESOURCES | {
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "storage",
    "requests.storage",
}

Quantities = Mapping[str, "str | int | float"]


def parse_field_quantity(value: str | int | float, path: Path) -> Quantity | FieldError:
    """A quantity as the API server decodes it, or the decoding error at its field."""
    try:
        return parse_quantity(value)
    except QuantityError as err:
        shown = value if isinstance(value, str) else GoJSON(value)
        return invalid(path, shown, str(err))


def _is_standard_resource(name: str) -> bool:
    return name in _STANDARD_RESOURCES or name.startswith(RESOURCE_HUGE_PAGES_PREFIX)


def _validate_resource_name(name: str, path: Path) -> list[FieldError]:
    """Upstream: validateResourceName (core validation.go, v1.35)."""
    errs = [invalid(path, GoJSON(name), msg) for msg in is_qualified_name(name)]
    if errs:
        return errs
    if "/" not in name and not _is_standard_resource(name):
        return [invalid(path, GoJSON(name), "must be a standard resource type or fully qualified")]
    return []


def _validate_container_resource_name(name: str, path: Path) -> list[FieldError]:
    """Upstream: validateContainerResourceName (core validation.go, v1.35)."""
    errs = _validate_resource_name(name, path)
    if "/" not in name:
        standard = name in _STANDARD_CONTAINER_RESOURCES or is_hugepage_resource_name(name)
        if not standard:
            errs.append(invalid(path, GoJSON(name), "must be a standard resource for containers"))
    elif not is_native_resource(name) and not is_extended_resource_name(name):
        errs.append(invalid(path, GoJSON(name), "doesn't follow extended resource name standard"))
    return errs


def validate_resource_quantity_value(name: str, value: Quantity, path: Path) -> list[FieldError]:
    """Not negative, and whole for the resources counted in units.

    Upstream: ValidateResourceQuantityValue (core validation.go, v1.35)
    """
    errs: list[FieldError] = []
    if value.sign() < 0:
        errs.append(invalid(path, str(value), IS_NEGATIVE))
    if is_integer_resource_name(name) and value.milli_value() % 1000 != 0:
        errs.append(invalid(path, str(value), NOT_INTEGER))
    return errs


def _quantities(
    resources: Quantities, path: Path, errs: list[FieldError], *, container: bool
) -> dict[str, Quantity]:
    parsed: dict[str, Quantity] = {}
    for name, raw in resources.items():
        key_path = path.key(name)
        if container:
            errs += _validate_container_resource_name(name, key_path)
        else:
            errs += _validate_resource_name(name, key_path)
        value = parse_field_quantity(raw, key_path)
        if isinstance(value, FieldError):
            errs.append(value)
            continue
        errs += validate_resource_quantity_value(name, value, key_path)
        parsed[name] = value
    return parsed


def validate_resource_requirements(
    requirements: ResourceRequirements, path: Path
) -> list[FieldError]:
    """A container's (or the pod's) requests and limits: names, quantities, requests within
    limits (equal to them for resources that cannot be overcommitted).

    Upstream: ValidateContainerResourceRequirements (core validation.go, v1.35)
    """
    errs: list[FieldError] = []
    limits_path, requests_path = path.child("limits"), path.child("requests")
    limits = _quantities(requirements.limits, limits_path, errs, container=True)
    requests = _quantities(requirements.requests, requests_path, errs, container=True)
    hugepages = any(is_hugepage_resource_name(n) for n in (*limits, *requests))
    compute = any(n in (RESOURCE_CPU, RESOURCE_MEMORY) for n in (*limits, *requests))
    for name, request in requests.items():
        limit = limits.get(name)
        if limit is not None:
            if request.cmp(limit) != 0 and not is_overcommit_allowed(name):
                errs.append(
                    invalid(
                        requests_path, str(request), f"must be equal to {name} limit of {limit}"
                    )
                )
            elif request.cmp(limit) > 0:
                errs.append(
                    invalid(
                        requests_path,
                        str(request),
                        f"must be less than or equal to {name} limit of {limit}",
                    )
                )
        elif not is_overcommit_allowed(name):
            errs.append(required(limits_path, "Limit must be set for non overcommitable resources"))
    if hugepages and not compute:
        errs.append(forbidden(path, "HugePages require cpu or memory"))
    return errs


def validate_overhead(overhead: Quantities, path: Path) -> list[FieldError]:
    """Upstream: validateOverhead (core validation.go, v1.35)."""
    errs: list[FieldError] = []
    _quantities(overhead, path, errs, container=False)
    return errs


def validate_node_resources(node: Node) -> list[FieldError]:
    """A node's capacity and allocatable: non-negative quantities, whole where counted.

    Upstream: validateNodeResources (core validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for field, resources in (
        ("capacity", node.status.capacity),
        ("allocatable", node.status.allocatable),
    ):
        base = Path.root("status", field)
        for name, raw in resources.items():
            # NOTE: upstream builds these paths with Child, not Key: status.capacity.cpu.
            at = base.child(name)
            value = parse_field_quantity(raw, at)
            if isinstance(value, FieldError):
                errs.append(value)
            else:
                errs += validate_resource_quantity_value(name, value, at)
    return errs
