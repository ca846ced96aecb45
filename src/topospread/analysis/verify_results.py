"""``verify``'s results: the verdict (proved, a counterexample, or a bounded check), the
counterexample's steps and failing state, the progress reported while the search runs, and the
assumptions every result states."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

from topospread.analysis.reports import node_json, pending_json
from topospread.analysis.verify_scenario import pod_key
from topospread.api.types import Node, Pod
from topospread.api.zones import zone_key_for

# About half a minute of search for a dozen pods with anti-affinity on a 2-core machine.
DEFAULT_MAX_STATES: Final = 50_000
DEFAULT_SAMPLES: Final = 200

ASSUMPTIONS: Final = (
    "every node is evaluated (percentageOfNodesToScore taken as 100%; "
    "clusters under 100 nodes are evaluated whole anyway)",
    "no preemption: a pod that fits nowhere waits",
    "any pending pod may be scheduled next (priority order and retries pick among them)",
)


@dataclass(frozen=True, slots=True)
class VerifyProgress:
    """Where the search is: ``phase`` is "search" or "sample"."""

    phase: str
    states: int
    depth: int
    frontier: int
    samples: int = 0


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One binding of a counterexample: the pod, its node, and the nodes it could have had."""

    pod: str
    node: str
    choices: tuple[str, ...]
    feasible: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "node": self.node,
            "choices": list(self.choices),
            "feasible": list(self.feasible),
        }


@dataclass(frozen=True, slots=True)
class Counterexample:
    """A reachable state that breaks a property, and the steps that reach it."""

    kind: Literal["deadlock", "invariant"]
    message: str
    steps: tuple[TraceStep, ...]
    # The cluster at the failing step: every node (scenario order) with its pods.
    cluster: tuple[tuple[Node, tuple[Pod, ...]], ...]
    # Pods not bound there, with why (FailedScheduling message, or what they wait for).
    pending: tuple[tuple[str, str], ...]
    invariant: str | None = None

    def to_json(self, zone_key: str | None = None) -> dict[str, Any]:
        """``zone_key``: the label the text's grid groups nodes by (``--zone-key``)."""
        key = zone_key_for([n for n, _ in self.cluster], zone_key)
        return {
            "kind": self.kind,
            "invariant": self.invariant,
            "message": self.message,
            "steps": [s.to_json() for s in self.steps],
            # The cluster at the failing step, in every report's shapes.
            "bound": {pod_key(p): n.metadata.name for n, pods in self.cluster for p in pods},
            "pending": pending_json(dict(self.pending)),
            "nodes": [node_json(n, key) for n, _ in self.cluster],
        }


@dataclass(slots=True)
class VerifyResult:
    """The verdict: ``proved`` (every order explored, nothing found), a counterexample, or a
    bounded run (``exhaustive`` false) that found nothing, which is not a proof."""

    source: str
    pods: int
    nodes: int
    any_feasible: bool
    exhaustive: bool
    states: int
    transitions: int
    depth: int
    orders: int | None = None
    samples: int = 0
    seed: int = 0
    max_states: int = DEFAULT_MAX_STATES
    counterexample: Counterexample | None = None
    invariants: list[str] = field(default_factory=list)
    reduction: str = ""
    assumptions: tuple[str, ...] = ASSUMPTIONS
    # Ctrl-C stopped the search: what it established so far (never a proof).
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return self.counterexample is None

    @property
    def proved(self) -> bool:
        return self.ok and self.exhaustive

    def note(self) -> str | None:
        """Why a run that found nothing is not a proof (None for a proof or a
        counterexample)."""
        if not self.ok or self.exhaustive:
            return None
        if self.interrupted:
            sampled = f", then {self.samples} random orders were sampled" if self.samples else ""
            return (
                f"not a proof: interrupted after {self.states} states; every state up to "
                f"{self.depth} bindings deep was checked{sampled}; no counterexample found so far"
            )
        return (
            f"not a proof: the state budget ran out; every state up to {self.depth} "
            f"bindings deep was checked, then {self.samples} random orders were sampled"
        )

    def to_json(self, zone_key: str | None = None) -> dict[str, Any]:
        doc = {
            "scenario": self.source,
            "verdict": "proved"
            if self.proved
            else ("counterexample" if not self.ok else "bounded"),
            "ok": self.ok,
            "note": self.note(),
            "proved": self.proved,
            "mode": "any-feasible" if self.any_feasible else "best-score",
            "podCount": self.pods,
            "nodeCount": self.nodes,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "orders": self.orders,
            "samples": self.samples,
            "seed": self.seed,
            "maxStates": self.max_states,
            "invariants": self.invariants,
            "reduction": self.reduction,
            "assumptions": list(self.assumptions),
            "counterexample": (
                self.counterexample.to_json(zone_key) if self.counterexample is not None else None
            ),
        }
        if self.interrupted:
            doc["interrupted"] = True
        return doc
