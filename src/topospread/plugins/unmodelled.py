"""Default plugins whose subject topospread does not model: volumes.

They keep their place in the default profile so that plugin order and names match upstream.
For a pod that needs none of what they check (no PersistentVolumeClaim, no generic ephemeral
volume) they return Skip, as upstream's do. A pod that does need them is not waved through:
VolumeBinding rejects it with a message that says topospread cannot decide it, so the report
shows it Pending for that reason and never silently placed. (Dynamic resources have their own
plugin package, plugins/dynamicresources, whose other extension points shape every message.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import Handle, PreFilterExtensions, PreFilterResult
from topospread.framework.status import SKIP, Code, Status, new_status
from topospread.framework.types import NodeInfo

UNMODELLED_VOLUMES: Final = "topospread does not model volume binding"


class _SkipEverything:
    """A PreFilter that always skips, so that its Filter never runs."""

    plugin_name = ""

    @property
    def name(self) -> str:
        return self.plugin_name

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        return None, SKIP

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return SKIP


class VolumeRestrictions(_SkipEverything):
    plugin_name = "VolumeRestrictions"


class NodeVolumeLimits(_SkipEverything):
    plugin_name = "NodeVolumeLimits"


class VolumeZone(_SkipEverything):
    plugin_name = "VolumeZone"


def _claims_of(pod: Pod) -> list[str]:
    out = []
    for v in pod.spec.volumes:
        if v.persistent_volume_claim is not None:
            claim = v.persistent_volume_claim.claim_name
            out.append(f'volume "{v.name}" uses PersistentVolumeClaim "{claim}"')
        elif v.ephemeral is not None:
            out.append(f'volume "{v.name}" is a generic ephemeral volume')
    return out


class VolumeBinding(_SkipEverything):
    plugin_name = "VolumeBinding"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        claims = _claims_of(pod)
        if not claims:
            return None, SKIP
        return None, new_status(
            Code.UnschedulableAndUnresolvable, f"{UNMODELLED_VOLUMES} ({'; '.join(claims)})"
        )


@dataclass(frozen=True, slots=True)
class _Factory:
    """A plugin factory that ignores its arguments (a class, not a closure: picklable)."""

    cls: type[_SkipEverything]

    def __call__(
        self, args: Mapping[str, Any] | None, handle: Handle, features: Features
    ) -> _SkipEverything:
        return self.cls()


def _factory(cls: type[_SkipEverything]) -> Any:
    return _Factory(cls)


FACTORIES: Final = {
    cls.plugin_name: _factory(cls)
    for cls in (VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone)
}
