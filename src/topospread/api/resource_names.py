"""Resource names and their classes (native, extended, hugepages, ...), as the API helpers name
them; read by validation and by the scheduler's resource plugins alike.

Upstream: pkg/apis/core/v1/helper/helpers.go and pkg/scheduler/util/utils.go, v1.35.
"""

from __future__ import annotations

import functools
from typing import Final

from topospread.util.validation import is_qualified_name

RESOURCE_CPU: Final = "cpu"
RESOURCE_MEMORY: Final = "memory"
RESOURCE_EPHEMERAL_STORAGE: Final = "ephemeral-storage"
RESOURCE_PODS: Final = "pods"
RESOURCE_HUGE_PAGES_PREFIX: Final = "hugepages-"
RESOURCE_ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
RESOURCE_DEFAULT_NAMESPACE_PREFIX: Final = "kubernetes.io/"
DEFAULT_RESOURCE_REQUESTS_PREFIX: Final = "requests."
# Resources counted as whole numbers in quotas and node capacity (helper.IsIntegerResourceName).
INTEGER_RESOURCES: Final = frozenset(
    {
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    }
)


def is_hugepage_resource_name(name: str) -> bool:
    """Upstream: IsHugePageResourceName (pkg/apis/core/v1/helper/helpers.go, v1.35)."""
    return name.startswith(RESOURCE_HUGE_PAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    """Upstream: IsAttachableVolumeResourceName (pkg/apis/core/v1/helper/helpers.go, v1.35)."""
    return name.startswith(RESOURCE_ATTACHABLE_VOLUMES_PREFIX)


def is_prefixed_native_resource(name: str) -> bool:
    """A name in the ``*kubernetes.io/`` namespace.

    Upstream: IsPrefixedNativeResource (pkg/apis/core/v1/helper/helpers.go, v1.35)
    """
    return RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    """Unprefixed, or in the ``*kubernetes.io/`` namespace.

    Upstream: IsNativeResource (pkg/apis/core/v1/helper/helpers.go, v1.35)
    """
    return "/" not in name or is_prefixed_native_resource(name)


@functools.lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """A fully-qualified name outside ``kubernetes.io`` that is also a valid quota name.

    Upstream: IsExtendedResourceName (pkg/apis/core/v1/helper/helpers.go, v1.35)
    """
    if is_native_resource(name) or name.startswith(DEFAULT_RESOURCE_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(DEFAULT_RESOURCE_REQUESTS_PREFIX + name)


@functools.lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """Extended, hugepages, prefixed-native or attachable-volume resources: counted as int64.

    Upstream: IsScalarResourceName (pkg/scheduler/util/utils.go, v1.35)
    """
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource_name(name)
    )


def is_integer_resource_name(name: str) -> bool:
    """Upstream: IsIntegerResourceName (pkg/apis/core/helper/helpers.go, v1.35)."""
    return name in INTEGER_RESOURCES or is_extended_resource_name(name)


def is_overcommit_allowed(name: str) -> bool:
    """Native resources other than hugepages may have requests below their limits.

    Upstream: IsOvercommitAllowed (pkg/apis/core/helper/helpers.go, v1.35)
    """
    return is_native_resource(name) and not is_hugepage_resource_name(name)
