"""The outcome of one scheduling attempt (``Decision``), as the scheduler returns it and the
reports, explain and the simulator read it; and which pods kube-scheduler never sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from topospread.api.types import Pod
from topospread.simulator.fastpath.detail import FastDetail

# kube-scheduler lists and watches pods with the field selector
# status.phase!=Succeeded,status.phase!=Failed (newPodInformer, pkg/scheduler/scheduler.go): a
# pod in a terminal phase is neither in its cache (it takes no resources, counts in no spread
# domain) nor ever queued, though kubectl, the controllers and so our inputs still show it.
TERMINAL_POD_PHASES: Final = frozenset({"Succeeded", "Failed"})


def is_terminal(pod: Pod) -> bool:
    """Whether the pod has finished (phase Succeeded or Failed): kube-scheduler never sees it."""
    return pod.status.phase in TERMINAL_POD_PHASES


@dataclass(slots=True)
class Decision:
    """The outcome of one scheduling attempt, with what reports and explain need."""

    pod: Pod
    node: str | None
    attempt: int
    message: str | None = None
    # ``namespace/name`` of the pods this attempt's preemption evicted, most important first.
    preempted: list[str] = field(default_factory=list)
    # A fast attempt's detail as the fast path's columns: ``feasible``, ``scores``,
    # ``plugin_scores`` and ``reasons`` are built from it when first read (reports write it
    # without building them: ``FastDetail.fragment``).
    columns: FastDetail | None = None
    _feasible: list[str] = field(default_factory=list, init=False, repr=False)
    _scores: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _plugin_scores: dict[str, dict[str, int]] = field(default_factory=dict, init=False, repr=False)
    _reasons: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)

    def _materialise(self) -> None:
        columns = self.columns
        if columns is not None:
            self.columns = None
            self._feasible, self._scores, self._plugin_scores, self._reasons = columns.materialise()

    def drop_detail(self) -> None:
        """Forget the per-node detail, built or not (a spill has taken it): feasible nodes,
        scores and reasons read empty from now on."""
        self.columns = None
        self._feasible = []
        self._scores = {}
        self._plugin_scores = {}
        self._reasons = {}

    @property
    def feasible(self) -> list[str]:
        """The feasible nodes the search kept, sorted by name."""
        self._materialise()
        return self._feasible

    @feasible.setter
    def feasible(self, value: list[str]) -> None:
        self._materialise()
        self._feasible = value

    @property
    def scores(self) -> dict[str, int]:
        """Each scored node's total, in the search's visiting order."""
        self._materialise()
        return self._scores

    @scores.setter
    def scores(self, value: dict[str, int]) -> None:
        self._materialise()
        self._scores = value

    @property
    def plugin_scores(self) -> dict[str, dict[str, int]]:
        """Each scored node's weighted score per plugin that scored."""
        self._materialise()
        return self._plugin_scores

    @plugin_scores.setter
    def plugin_scores(self, value: dict[str, dict[str, int]]) -> None:
        self._materialise()
        self._plugin_scores = value

    @property
    def reasons(self) -> dict[str, list[str]]:
        """Each rejected node's reasons as reports show them."""
        self._materialise()
        return self._reasons

    @reasons.setter
    def reasons(self, value: dict[str, list[str]]) -> None:
        self._materialise()
        self._reasons = value

    @property
    def key(self) -> str:
        return f"{self.pod.metadata.namespace}/{self.pod.metadata.name}"

    @property
    def nominated_node(self) -> str | None:
        """The node a failed attempt left the pod nominated to (``status.nominatedNodeName``
        after it: set by this attempt's preemption, or kept from an earlier one); None for an
        attempt that bound the pod, or when no node is nominated."""
        if self.node is not None:
            return None
        return self.pod.status.nominated_node_name or None

    def attempt_json(self) -> dict[str, Any]:
        """The attempt without its per-node detail, as every report records it: its number,
        the node it bound to, the nominated node and the victims a failed attempt's
        preemption left, and its FailedScheduling (or binding) message."""
        return {
            "attempt": self.attempt,
            "node": self.node,
            "nominatedNode": self.nominated_node,
            "message": self.message,
            "preempted": self.preempted,
        }

    def to_json(self) -> dict[str, Any]:
        """``attempt_json`` with the attempt's per-node detail: feasible nodes, scores per
        node and per plugin, and each rejected node's reasons."""
        return {
            **self.attempt_json(),
            "feasible": self.feasible,
            "scores": self.scores,
            "pluginScores": self.plugin_scores,
            "reasons": self.reasons,
        }


__all__ = ["TERMINAL_POD_PHASES", "Decision", "is_terminal"]
