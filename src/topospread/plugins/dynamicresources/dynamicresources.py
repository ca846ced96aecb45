"""DynamicResources: ResourceClaims (dynamic resource allocation), at every point upstream serves.

Upstream: pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (v1.35). With
the default feature gates the plugin is enabled (DynamicResourceAllocation is GA) and sits in
the default profile's multiPoint just before DefaultPreemption, so it takes part in PreEnqueue,
PreFilter, Filter, PostFilter, Reserve and PreBind.

For a pod that references no ResourceClaim its behaviour is upstream's, exactly: PreFilter
writes an empty state and returns Skip (its Filter never runs), PostFilter reads that state and
answers Unschedulable "no new claims to deallocate" — the text every FailedScheduling message
of such a pod carries before DefaultPreemption's — and Reserve and PreBind have nothing to do.
Like upstream, every point after PreFilter reads the state PreFilter wrote: when an earlier
PreFilter rejected the pod as UnschedulableAndUnresolvable, this PreFilter never ran, and
PostFilter fails with the cycle state's bare "not found" error, which upstream appends to the
FailedScheduling message (``0/1 nodes are available: pod has unbound immediate
PersistentVolumeClaims. not found``).

topospread does not model ResourceClaims, DeviceClasses or ResourceSlices. A pod that references
a claim is never waved through: PreFilter rejects it as UnschedulableAndUnresolvable with a
message saying so, and PostFilter names no claim to deallocate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.field import Path, aggregate_message
from topospread.api.types import Pod
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import (
    Handle,
    PostFilterResult,
    PreFilterExtensions,
    PreFilterResult,
)
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.types import NodeInfo
from topospread.plugins.dynamicresources.args import validate_dynamic_resources_args

NAME: Final = "DynamicResources"

# PostFilter's answer for a pod whose PreFilter state holds no claim.
MSG_NO_NEW_CLAIMS: Final = "no new claims to deallocate"
# The text of upstream's fwk.ErrNotFound, what CycleState.Read returns for a missing key.
ERR_NOT_FOUND: Final = "not found"
UNMODELLED_CLAIMS: Final = "topospread does not model dynamic resource allocation"


@dataclass(frozen=True, slots=True)
class StateData:
    """What PreFilter learnt: the names of the pod's resource claims (empty: none).

    Upstream: stateData (dynamicresources.go); it also holds the claims' objects, the
    allocator and per-node allocations, none of which topospread models.
    """

    claims: tuple[str, ...] = ()

    def clone(self) -> StateData:
        # Upstream's Clone returns the same pointer too; this state is frozen, so sharing it
        # between preemption's what-if copies is safe.
        return self


STATE_KEY: Final = StateKey[StateData](NAME)
_EMPTY: Final = StateData()


class DynamicResources:
    """Makes sure a pod's ResourceClaims are allocated (here: that it has none)."""

    @property
    def name(self) -> str:
        return NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        """Upstream gates a pod whose claims do not exist yet (or are being deleted); a pod
        without claims always passes. topospread has no ResourceClaim objects to look up, so
        a pod with claims passes too and is rejected, with a reason, at PreFilter.

        Upstream: DynamicResources.PreEnqueue (dynamicresources.go, v1.35)
        """
        return SUCCESS

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """The state is written first, whatever follows (later points read it).

        Upstream: DynamicResources.PreFilter (dynamicresources.go, v1.35)
        """
        claims = pod.spec.resource_claims
        if not claims:
            state.write(STATE_KEY, _EMPTY)
            return None, SKIP
        names = tuple(c.name for c in claims)
        state.write(STATE_KEY, StateData(claims=names))
        quoted = ", ".join(f'"{n}"' for n in names)
        return None, new_status(
            Code.UnschedulableAndUnresolvable, f"{UNMODELLED_CLAIMS} (resource claims {quoted})"
        )

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: DynamicResources.Filter (dynamicresources.go, v1.35)."""
        data, status = _state_of(state)
        if data is None:
            return status
        if not data.claims:
            return SUCCESS
        return new_status(Code.UnschedulableAndUnresolvable, UNMODELLED_CLAIMS)

    def post_filter(
        self, state: CycleState, pod: Pod, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        """Unschedulable "no new claims to deallocate" for a pod without claims; for a pod
        with claims, Unschedulable without a reason (upstream looks for an allocated claim to
        deallocate; topospread models no allocation, so there is none to name).

        Upstream: DynamicResources.PostFilter (dynamicresources.go, v1.35)
        """
        data, status = _state_of(state)
        if data is None:
            return None, status
        if not data.claims:
            return None, new_status(Code.Unschedulable, MSG_NO_NEW_CLAIMS)
        return None, new_status(Code.Unschedulable)

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream: DynamicResources.Reserve (dynamicresources.go, v1.35)."""
        data, status = _state_of(state)
        return SUCCESS if data is not None else status

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Nothing was reserved. Upstream: DynamicResources.Unreserve (dynamicresources.go)."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream: DynamicResources.PreBind (dynamicresources.go, v1.35)."""
        data, status = _state_of(state)
        return SUCCESS if data is not None else status


def _state_of(state: CycleState) -> tuple[StateData | None, Status]:
    """The state PreFilter wrote, or the Error upstream's getStateData returns: the cycle
    state's error as it is ("not found"), with no prefix."""
    try:
        return state.read(STATE_KEY), SUCCESS
    except StateNotFoundError:
        return None, as_status(ERR_NOT_FOUND)


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> DynamicResources:
    """DynamicResources' args (filterTimeout, bindingTimeout) only bound waits topospread does
    not model; they are validated all the same, as New validates them.
    Upstream: New (dynamicresources.go, v1.35)."""
    errors = validate_dynamic_resources_args(args, Path.nil(), features)
    if errors:
        raise ConfigError(aggregate_message(errors))
    return DynamicResources()
