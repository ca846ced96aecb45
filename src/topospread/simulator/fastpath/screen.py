"""What the fast path tells preemption about a failed attempt, from its vectors: the nodes
rejected as Unschedulable, whether any holds a pod of lower priority, and which of them
preemption's dry run could make candidates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from topospread.api.types import Pod
from topospread.framework.nominator import pod_priority
from topospread.framework.status import Code
from topospread.simulator.fastpath.kernels.noderesources_fit import NodeResourcesFit
from topospread.simulator.fastpath.vectors import B

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastFailure, FastPath


def unschedulable_positions(path: FastPath, failure: FastFailure) -> Sequence[int] | None:
    """The positions, in node order, of the nodes a failure rejected as Unschedulable (an
    array: a victimless dry run reads its length and one position of thousands)."""
    if failure.rejected_with is None:
        return None
    positions = np.flatnonzero(_unschedulable(path, failure))
    return cast(Sequence[int], positions)


def _unschedulable(path: FastPath, failure: FastFailure) -> B:
    assert failure.rejected_with is not None
    if failure.unschedulable is None:
        failure.unschedulable = path.statuses.unresolved()[failure.rejected_with]
    return failure.unschedulable


def preemption_may_find_victims(path: FastPath, pod: Pod, failure: FastFailure) -> bool:
    """Whether a node that preemption would dry-run holds a pod of lower priority (only
    then does the dry run read the cycle state the PreFilter plugins write)."""
    path._fresh()
    table = path.table
    priority = pod_priority(pod)
    if failure.rejected_with is not None:
        # Every node was visited: its status is its index's.
        tried = _unschedulable(path, failure) & (table.min_priority < priority)
        return bool(tried.any())
    for name, status in failure.diagnosis.node_to_status.items():
        if status.code is Code.Unschedulable and table.min_priority[table.index[name]] < priority:
            return True
    return False


def preemption_screen(path: FastPath, pod: Pod, failure: FastFailure) -> Sequence[int] | None:
    """Of the nodes a failure rejected as Unschedulable (``unschedulable_positions``), the
    indices in that list of those preemption's dry run could make candidates; None when
    this path cannot tell.

    A node passes when it holds a pod of lower priority, every node-only filter passes
    there, and NodeResourcesFit passes with every pod of lower priority gone and the
    nominated pods of at least the pod's priority counted in. NOTE: a necessary
    condition, not a sufficient one: those filters' verdicts do not depend on the other
    filters, and the dry run fails a node where any of them fails with every potential
    victim removed (SelectVictimsOnNode). The Evaluator dry-runs the nodes passing it
    and, when none becomes a candidate, every node (for the statuses).
    """
    if failure.rejected_with is None or not path.accepts(pod):
        return None
    sig = path.signature(pod)
    if sig is None:
        return None
    static = sig.static
    fit = next((k for _, k in path.filter_kernels() if isinstance(k, NodeResourcesFit)), None)
    if fit is None or fit.name in static.skip_filters:
        return None
    table = path.table
    priority = pod_priority(pod)
    unschedulable = _unschedulable(path, failure)
    if len(unschedulable) != len(table.names):
        return None
    may = unschedulable & (table.min_priority < priority)
    for name, arr in static.filter_status.items():
        if static.rejects[name]:
            may &= arr == 0
    cpu, mem, eph, pods = path.nominations.requests(pod)
    free_cpu = table.free_cpu - cpu
    free_mem = table.free_mem - mem
    free_eph = table.free_eph - eph
    free_pods = table.free_pods - pods
    for p, level in table.bound.items():
        if p < priority:
            free_cpu += level.cpu
            free_mem += level.mem
            free_eph += level.eph
            free_pods += level.pods
    may &= fit.fit_bits(static, free_cpu, free_mem, free_eph, free_pods) == 0
    screened: list[int] = np.flatnonzero(may[unschedulable]).tolist()
    return screened
