"""VolumeBinding: a pod's claims must be bound, or bindable on the node, before it goes there.

Upstream: pkg/scheduler/framework/plugins/volumebinding/volume_binding.go (v1.35). With the
default feature gates StorageCapacityScoring is off (alpha since 1.33), so upstream builds no
scorer: the plugin serves PreScore and Score (weight 1 in the expanded defaults), but its
PreScore always skips and Score never runs. This plugin does the same (the gate is not
modelled: with it on, upstream would score by the free capacity of the chosen volumes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from topospread.api.field import Path, aggregate_message
from topospread.api.storage import CLAIM_LOST
from topospread.api.types import Pod
from topospread.errors import ConfigError
from topospread.framework.cycle_state import CycleState, StateKey, StateNotFoundError
from topospread.framework.features import Features
from topospread.framework.interface import (
    Handle,
    PreFilterExtensions,
    PreFilterResult,
    ScoreExtensions,
)
from topospread.framework.status import SKIP, SUCCESS, Code, Status, as_status, new_status
from topospread.framework.storage import StorageLister
from topospread.framework.types import NodeInfo
from topospread.plugins.helper.storage import claim_name_of, ephemeral_volume_is_for_pod
from topospread.plugins.volumebinding.args import validate_volume_binding_args
from topospread.plugins.volumebinding.binder import (
    BinderError,
    PodVolumeClaims,
    PodVolumes,
    VolumeBinder,
)

NAME: Final = "VolumeBinding"
ERR_UNBOUND_IMMEDIATE: Final = "pod has unbound immediate PersistentVolumeClaims"


@dataclass(slots=True)
class StateData:
    """Upstream: stateData (volume_binding.go). Filter fills ``pod_volumes_by_node``."""

    claims: PodVolumeClaims | None = None
    pod_volumes_by_node: dict[str, PodVolumes] = field(default_factory=dict)
    has_static_bindings: bool = False
    all_bound: bool = False

    def clone(self) -> StateData:
        # Upstream's Clone returns the same pointer: Filter's per-node results are shared by
        # preemption's copies, which only add entries for the nodes they evaluate.
        return self


STATE_KEY: Final = StateKey[StateData](NAME)


def pod_claims_error(pod: Pod, storage: StorageLister) -> tuple[bool, str | None]:
    """Whether the pod uses claims, and the first thing wrong with one of them.

    Upstream: podHasPVCs (volume_binding.go)
    """
    has_pvc = False
    for volume in pod.spec.volumes:
        claim = claim_name_of(pod, volume)
        if claim is None:
            continue
        name, ephemeral = claim
        has_pvc = True
        pvc = storage.persistent_volume_claim(pod.metadata.namespace, name)
        if pvc is None:
            if ephemeral:
                return True, (
                    "waiting for ephemeral volume controller to create the "
                    f'persistentvolumeclaim "{name}"'
                )
            return True, f'persistentvolumeclaim "{name}" not found'
        if pvc.status.phase == CLAIM_LOST:
            return True, (
                f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                f'"{pvc.spec.volume_name}"'
            )
        if pvc.metadata.deletion_timestamp is not None:
            return True, f'persistentvolumeclaim "{name}" is being deleted'
        if ephemeral:
            err = ephemeral_volume_is_for_pod(pod, pvc)
            if err is not None:
                return True, err
    return has_pvc, None


class VolumeBinding:
    """Binds pod volumes in scheduling: Filter decides per node, Reserve assumes the decision,
    Unreserve reverts it, PreBind writes it. Upstream: VolumeBinding (volume_binding.go)."""

    __slots__ = ("_handle", "binder")

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self.binder = VolumeBinder(self._storage)

    def _storage(self) -> StorageLister:
        return self._handle.object_lister().storage()

    @property
    def name(self) -> str:
        return NAME

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        """Upstream: PreFilter (volume_binding.go)."""
        has_pvc, err = pod_claims_error(pod, self._storage())
        if err is not None:
            return None, new_status(Code.UnschedulableAndUnresolvable, err)
        if not has_pvc:
            state.write(STATE_KEY, StateData())
            return None, SKIP
        try:
            claims = self.binder.get_pod_volume_claims(pod)
        except BinderError as e:
            return None, as_status(e)
        if claims.unbound_claims_immediate:
            return None, new_status(Code.UnschedulableAndUnresolvable, ERR_UNBOUND_IMMEDIATE)
        # No PreFilterResult: since v1.32 (kubernetes#127584) upstream filters every node, a
        # local PV's hostname affinity included (a hostname label need not be the node's name).
        state.write(STATE_KEY, StateData(claims=claims))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """Upstream: Filter (volume_binding.go)."""
        try:
            data = state.read(STATE_KEY)
        except StateNotFoundError as e:
            return as_status(e)
        claims = data.claims if data.claims is not None else PodVolumeClaims()
        try:
            volumes, reasons = self.binder.find_pod_volumes(pod, claims, node_info.node)
        except BinderError as e:
            return as_status(e)
        if reasons:
            return new_status(Code.UnschedulableAndUnresolvable, *reasons)
        data.pod_volumes_by_node[node_info.name] = volumes
        data.has_static_bindings = data.has_static_bindings or bool(volumes.static_bindings)
        return SUCCESS

    def pre_score(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> Status:
        """Skip: with StorageCapacityScoring off upstream builds no scorer.

        Upstream: PreScore (volume_binding.go, v1.35)
        """
        del state, pod, nodes
        return SKIP

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        """Never run: PreScore skips for every pod (the framework runs no Score after a Skip).

        Upstream: Score (volume_binding.go, v1.35)
        """
        del state, pod, node_info
        return 0, SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream: Reserve (volume_binding.go).

        Without PreFilter's state (a caller that decided without running PreFilter, as the
        fast path does for pods without claims) there is nothing to reserve; upstream's state
        says the same for such a pod, and upstream never reaches Reserve without it.
        """
        data = _state_or_none(state)
        if data is None:
            return SUCCESS
        volumes = data.pod_volumes_by_node.get(node_name)
        if volumes is None:
            data.all_bound = True
            return SUCCESS
        try:
            data.all_bound = self.binder.assume_pod_volumes(pod, node_name, volumes)
        except (BinderError, KeyError) as e:
            return as_status(e)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Upstream: Unreserve (volume_binding.go): idempotent."""
        data = _state_or_none(state)
        if data is None:
            return
        volumes = data.pod_volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert_assumed_pod_volumes(volumes)

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream: PreBind (volume_binding.go)."""
        data = _state_or_none(state)
        if data is None or data.all_bound:
            return SUCCESS
        volumes = data.pod_volumes_by_node.get(node_name)
        if volumes is None:
            return as_status(f'no pod volumes found for node "{node_name}"')
        self.binder.bind_pod_volumes(pod, volumes)
        info = self._handle.snapshot_shared_lister().node_infos().get(node_name)
        if info is None:
            return as_status(
                f'binding volumes: failed to get node "{node_name}": node "{node_name}" not found'
            )
        try:
            self.binder.check_bindings(info.node, volumes)
        except BinderError as e:
            return as_status(e)
        return SUCCESS


def _state_or_none(state: CycleState) -> StateData | None:
    try:
        return state.read(STATE_KEY)
    except StateNotFoundError:
        return None


def new(args: Mapping[str, Any] | None, handle: Handle, features: Features) -> VolumeBinding:
    """Upstream: New (volume_binding.go). VolumeBindingArgs' bindTimeoutSeconds and shape
    only matter for the wait and the scorer, neither of which is modelled; they are validated
    all the same, as New validates them."""
    errors = validate_volume_binding_args(args, Path.nil(), features)
    if errors:
        raise ConfigError(aggregate_message(errors))
    return VolumeBinding(handle)
