"""plugins/noderesources: NodeResourcesFit and NodeResourcesBalancedAllocation."""

from topospread.plugins.noderesources.balanced_allocation import (
    BALANCED_ALLOCATION_NAME,
    BalancedAllocation,
    new_balanced_allocation,
)
from topospread.plugins.noderesources.fit import (
    ERR_REASON_SIDECAR_DISABLED,
    NAME,
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
    Fit,
    InsufficientResource,
    fits,
    insufficient_reason,
    new,
)

__all__ = [
    "BALANCED_ALLOCATION_NAME",
    "ERR_REASON_SIDECAR_DISABLED",
    "NAME",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "BalancedAllocation",
    "Fit",
    "InsufficientResource",
    "fits",
    "insufficient_reason",
    "new",
    "new_balanced_allocation",
]
