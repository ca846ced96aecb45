"""PrioritySort: the scheduling queue's order — higher priority first, then first come.

Upstream: pkg/scheduler/framework/plugins/queuesort/priority_sort.go (v1.35)
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.types import Pod
from topospread.framework.features import Features
from topospread.framework.interface import Handle, QueuedPodInfo

NAME: Final = "PrioritySort"

# scheduling.DefaultPriorityWhenNoDefaultClassExists: a pod admitted without any priority.
DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS: Final = 0


def pod_priority(pod: Pod) -> int:
    """The pod's spec.priority, or 0 when the Priority admission step never set it.

    Upstream: PodPriority (component-helpers/scheduling/corev1/helpers.go, v1.35)
    """
    priority = pod.spec.priority
    return DEFAULT_PRIORITY_WHEN_NO_DEFAULT_CLASS_EXISTS if priority is None else priority


class PrioritySort:
    """Orders the active queue by pod priority, then by the time each pod entered the queue."""

    @property
    def name(self) -> str:
        return NAME

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """True when ``a`` should be popped before ``b``.

        Upstream: PrioritySort.Less (priority_sort.go, v1.35)
        """
        p1 = pod_priority(a.pod)
        p2 = pod_priority(b.pod)
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


def new(args: Any | None, handle: Handle, features: Features) -> PrioritySort:
    """PrioritySort takes no args. Upstream: New (priority_sort.go, v1.35)."""
    return PrioritySort()
