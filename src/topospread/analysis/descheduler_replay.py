"""The descheduler's RemovePodsViolatingTopologySpreadConstraint replayed cycle by cycle
(``rebalance --descheduler``): its plugin picks (analysis/descheduler.py), the eviction API
evicts what the budgets allow, the controllers and the scheduler settle, until it picks nothing,
is refused, loops or runs out of rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from topospread.analysis.descheduler import (
    DeschedulerEviction,
    DeschedulerOptions,
    descheduler_evictions,
)
from topospread.analysis.rebalance_replay import Eviction, landings
from topospread.analysis.reports import (
    WorkloadReport,
    step_report,
    workload_reports,
)
from topospread.analysis.volume_pins import pin_text, pinned_value
from topospread.api.types import Pod
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.simulation import Settled, Simulation


@dataclass(slots=True)
class DeschedulerRound:
    """One descheduling cycle replayed: what the plugin picked, what the budgets refused,
    where the replacements landed, and the spread after the cluster settled."""

    index: int
    picked: list[DeschedulerEviction]
    refused: dict[str, str]  # pod -> the eviction API's refusal
    evictions: list[Eviction]
    after: list[WorkloadReport]
    # Picks the descheduler cannot see are useless: pod -> how its volumes pin it.
    pinned: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "round": self.index,
            "picked": [
                {"pod": e.pod, "node": e.node, "constraint": e.constraint, "reason": e.reason}
                for e in self.picked
            ],
            "refused": self.refused,
            "pinned": self.pinned,
            "evictions": [e.to_json() for e in self.evictions],
            "spread": [w.to_json() for w in self.after if w.constraints],
        }


@dataclass(slots=True)
class DeschedulerReport:
    """The descheduler's plugin and the cluster taking turns until it picks nothing (a
    fixpoint), every eviction it tries is refused by a PodDisruptionBudget (it evicts nothing,
    and every later cycle would try the same), the placement repeats an earlier round's (a
    cycle: it would evict for ever), or the rounds run out."""

    rounds: list[DeschedulerRound]
    outcome: str  # "fixpoint", "refused", "cycle" or "limit"
    cycle_from: int | None = None  # the earlier round whose placement came back
    violations: list[str] = field(default_factory=list)  # still violated at the end

    @property
    def evicted(self) -> int:
        return sum(len(r.evictions) for r in self.rounds)

    @property
    def verdict(self) -> str:
        """How the rounds ended, as "the descheduler ..." goes on."""
        n = len(self.rounds)
        if self.outcome == "fixpoint":
            return f"stops after {n} round(s): nothing more to evict"
        if self.outcome == "refused":
            tried = len(self.rounds[-1].refused)
            what = "evicts nothing" if self.evicted == 0 else f"evicts nothing more in round {n}"
            return (
                f"{what}: every eviction it tried ({tried}) was refused by a "
                "PodDisruptionBudget, and each later cycle would try the same"
            )
        if self.outcome == "cycle":
            back = "the start" if self.cycle_from == 0 else f"round {self.cycle_from}"
            return (
                f"loops: after round {n} the pods are placed as at {back}, so it would evict "
                "for ever"
            )
        return f"is still evicting after {n} round(s)"

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "outcome": self.outcome,
            "cycleFrom": self.cycle_from,
            "evicted": self.evicted,
            "rounds": [r.to_json() for r in self.rounds],
            "violationsAtTheEnd": self.violations,
        }


def descheduler_rounds(
    sim: Simulation, options: DeschedulerOptions, *, rounds: int = 10
) -> DeschedulerReport:
    """Replay the descheduler on ``sim`` (consumed): each round its plugin picks
    (analysis/descheduler.py), the eviction API evicts what the budgets allow, the
    controllers and the scheduler settle."""
    seen = {_placement(sim): 0}
    done: list[DeschedulerRound] = []
    for index in range(1, rounds + 1):
        picked = descheduler_evictions(sim.cluster, options)
        if not picked:
            return DeschedulerReport(done, "fixpoint", violations=_violations(sim))
        pinned = _pinned_picks(sim, picked)
        # The cycle evicts its picks one after another, then the cluster reacts.
        refused: dict[str, str] = {}
        victims: list[Pod] = []
        evictions = sim.evictions()
        known = set(sim.pods)
        for e in picked:
            pod = sim.pods.get(e.pod)
            if pod is None:
                continue
            refusal = evictions.evict(pod)
            if refusal is not None:
                refused[e.pod] = f"{refusal.message}: {refusal.cause}".rstrip(": ")
                continue
            sim.delete_pod(pod)
            victims.append(pod)
        if refused and not victims:
            # Nothing changed, so the next cycle picks the same pods and is refused again.
            done.append(DeschedulerRound(index, picked, refused, [], workload_reports(sim), pinned))
            return DeschedulerReport(done, "refused", violations=_violations(sim))
        where = {p.key: sim.cluster.infos[p.spec.node_name].node for p in victims}
        sim.settle(f"descheduler round {index}")
        made = landings(sim, victims, where, known)
        done.append(DeschedulerRound(index, picked, refused, made, workload_reports(sim), pinned))
        key = _placement(sim)
        if key in seen:
            return DeschedulerReport(done, "cycle", seen[key], _violations(sim))
        seen[key] = index
    return DeschedulerReport(done, "limit", violations=_violations(sim))


def _pinned_picks(sim: Simulation, picked: Sequence[DeschedulerEviction]) -> dict[str, str]:
    """The picks whose bound volumes pin them to their domain of the picking constraint's
    topology key: the descheduler's NodeFit does not read volumes, so it evicts them, and
    their replacements can only come back (or stay Pending)."""
    storage = sim.cluster.storage()
    nodes = [info.node for info in sim.cluster.list()]
    out = {}
    for e in picked:
        pod = sim.pods.get(e.pod)
        if pod is None or not pod.spec.volumes:
            continue
        key = e.constraint.rsplit(" ", 1)[-1]
        value = pinned_value(pod, storage, nodes, key)
        if value is not None:
            out[e.pod] = pin_text(pod, storage, key, value)
    return out


def _placement(sim: Simulation) -> tuple[tuple[str, str, int], ...]:
    """Where the pods are, by controller and node (names change with every replacement)."""
    counts: dict[tuple[str, str], int] = {}
    for pod in sim.pods.values():
        ref = get_controller_of(pod.metadata)
        owner = f"{pod.metadata.namespace}/{ref.kind}/{ref.name}" if ref else pod.key
        where = (owner, pod.spec.node_name)
        counts[where] = counts.get(where, 0) + 1
    return tuple(sorted((o, n, c) for (o, n), c in counts.items()))


def _violations(sim: Simulation) -> list[str]:
    return step_report(sim, 0, "", "", [], Settled(0, True)).violations


__all__ = ["DeschedulerReport", "DeschedulerRound", "descheduler_rounds"]
