"""DefaultBinder: binds a pod to its chosen node.

Upstream creates a Binding through the API server; here the caller updates the cluster state,
so Bind only reports success.
Upstream: pkg/scheduler/framework/plugins/defaultbinder/default_binder.go (v1.35)
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import Handle
from topospread.framework.status import SUCCESS, Status

NAME: Final = "DefaultBinder"


class DefaultBinder:
    """The default Bind plugin."""

    @property
    def name(self) -> str:
        return NAME

    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream: DefaultBinder.Bind (default_binder.go, v1.35)."""
        return SUCCESS


def new(args: Any | None, handle: Handle, features: Features) -> DefaultBinder:
    """DefaultBinder takes no args. Upstream: New (default_binder.go, v1.35)."""
    return DefaultBinder()
