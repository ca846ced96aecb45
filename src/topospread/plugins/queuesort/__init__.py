"""plugins/queuesort: PrioritySort."""

from topospread.plugins.queuesort.priority_sort import NAME, PrioritySort, new, pod_priority

__all__ = ["NAME", "PrioritySort", "new", "pod_priority"]
