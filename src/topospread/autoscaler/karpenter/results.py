"""What a Karpenter pass decides: the nodeclaims it launches, the ones the cloud could not
launch, the nodes it disrupts, and the commands dropped at their validation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from topospread.api.types import Node
from topospread.autoscaler.karpenter.disruption import Command
from topospread.autoscaler.karpenter.drift import METHOD_DRIFT


@dataclass(frozen=True, slots=True)
class NodeClaimLaunch:
    """A nodeclaim to create: where and what the cloud launches, and for which pods."""

    name: str
    nodepool: str
    instance_type: str
    zone: str
    capacity_type: str
    price: float
    pods: tuple[str, ...]
    instance_type_options: tuple[str, ...]
    node: Node

    @property
    def reason(self) -> str:
        return f"provisioning {len(self.pods)} pod(s): {', '.join(self.pods)}"


@dataclass(frozen=True, slots=True)
class Disruption:
    """Nodes to disrupt, why (method, reason), and the replacement when there is one."""

    method: str
    reason: str
    decision: str
    nodes: tuple[str, ...]
    replacements: tuple[NodeClaimLaunch, ...]
    savings: float

    @property
    def replacement(self) -> NodeClaimLaunch | None:
        return self.replacements[0] if self.replacements else None

    @property
    def message(self) -> str:
        text = f"{self.method}: {self.decision} {', '.join(self.nodes)} ({self.reason})"
        if self.replacements:
            text += ", replaced by " + ", ".join(
                f"{r.instance_type} {r.capacity_type} in {r.zone}" for r in self.replacements
            )
        if self.method == METHOD_DRIFT:
            return text  # a drifted node goes whatever it costs
        return text + f", saving ${self.savings:.4f}/h"


@dataclass(frozen=True, slots=True)
class LaunchFailure:
    """A nodeclaim the cloud could not launch: every offering it tried was out of capacity
    (each now in the unavailable-offerings cache); the nodeclaim is deleted and its pods wait
    for the next pass."""

    name: str
    nodepool: str
    pods: tuple[str, ...]
    tried: tuple[tuple[str, str, str, str], ...]  # instance type, zone, capacity type, error

    @property
    def reason(self) -> str:
        offerings = ", ".join(f"{it} {ct} in {zone}" for it, zone, ct, _ in self.tried[:3])
        more = f" and {len(self.tried) - 3} more" if len(self.tried) > 3 else ""
        return (
            f"failed launching nodeclaim {self.name}: insufficient capacity for "
            f"{offerings}{more} ({self.tried[0][3]}); the nodeclaim is deleted and the "
            "offerings are unavailable for 3m"
        )


# The cloud's answer to one launch: None when it can launch the offering (instance type, zone,
# capacity type), else the insufficient-capacity error's text.
CreateFunc = Callable[[str, str, str], "str | None"]


@dataclass(slots=True)
class KarpenterResult:
    """What one pass decided."""

    now: float
    launched: list[NodeClaimLaunch] = field(default_factory=list)
    launch_failures: list[LaunchFailure] = field(default_factory=list)
    pod_errors: dict[str, str] = field(default_factory=dict)
    scheduled_on_existing: dict[str, list[str]] = field(default_factory=dict)
    disruptions: list[Disruption] = field(default_factory=list)
    # Commands dropped at their validation, each with the kind of its validation error
    # (validation.rejected_message tells of them).
    rejected: list[tuple[Command, str]] = field(default_factory=list)
