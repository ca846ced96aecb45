"""A rebalance plan replayed and checked: its evictions through the eviction subresource
(budgets honoured), the owning controllers recreating the pods and the exact scheduler placing
them, on a copy of the settled cluster; where each replacement landed, and why
(analysis/rebalance.py searches for the plans).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from topospread.analysis.reports import (
    ConstraintSpread,
    ReportDelta,
    StepReport,
    diff_report,
    step_report,
)
from topospread.api.types import DO_NOT_SCHEDULE, Node, Pod
from topospread.simulator.controllers.common import get_controller_of
from topospread.simulator.simulation import Settled, Simulation
from topospread.simulator.timeline_steps.rebalancing import Rebalance


@dataclass(slots=True)
class Target:
    """A constraint of one group of a workload's pods that is past its maxSkew."""

    workload: str
    spread: ConstraintSpread

    @property
    def name(self) -> str:
        v = self.spread.view
        revisions = self.spread.revisions
        rev = f", {revisions[0]}" if len(revisions) == 1 else ""
        return f"{self.workload}: topologySpreadConstraints[{v.index}] ({v.topology_key}{rev})"

    @property
    def namespace(self) -> str:
        pods = self.spread.pods
        return pods[0].metadata.namespace if pods else ""

    def key(self) -> tuple[str, int, str, tuple[str, ...]]:
        return spread_key(self.workload, self.spread)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "workload": self.workload, **self.spread.to_json()}


def spread_key(workload: str, c: ConstraintSpread) -> tuple[str, int, str, tuple[str, ...]]:
    return (workload, c.view.index, c.view.topology_key, tuple(c.revisions))


@dataclass(frozen=True, slots=True)
class Eviction:
    """One eviction of a plan, as replayed: the pod, its node and domains, and where its
    replacement landed (None: no replacement, or it stayed Pending, with why)."""

    pod: str
    node: str
    domains: dict[str, str]  # topology key -> the node's domain, for each targeted key
    replacement: str | None
    replacement_node: str | None
    replacement_domains: dict[str, str]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "node": self.node,
            "domains": self.domains,
            "replacement": self.replacement,
            "replacementNode": self.replacement_node,
            "replacementDomains": self.replacement_domains,
            "note": self.note,
        }

    def manifest(self) -> dict[str, Any]:
        """The policy/v1 Eviction a client posts to the pod's eviction subresource."""
        namespace, name = self.pod.split("/", 1)
        return {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }


@dataclass(slots=True)
class Trial:
    """One plan replayed: accepted, or the first reason it was not."""

    evictions: list[Eviction]
    after: StepReport | None
    failure: str | None = None
    delta: ReportDelta | None = None  # ``after`` in transit from a copy

    @property
    def ok(self) -> bool:
        return self.failure is None


def replay_plan(
    sim: Simulation, victims: Sequence[Pod], targets: Sequence[Target], before: StepReport
) -> Trial:
    """Evict the victims in order on ``sim`` (a copy, consumed), each followed by the
    controllers and the scheduler settling, and check the outcome."""
    keys = {t.key() for t in targets}
    target_keys = {t.spread.view.topology_key for t in targets}
    target_pods = [{p.key for p in t.spread.pods} for t in targets]
    evictions: list[Eviction] = []
    settled = Settled(0, True)
    for victim in victims:
        current = sim.pods.get(victim.key)
        if current is None:
            return Trial(evictions, None, f"{victim.key} was gone before its eviction")
        refusal = sim.evictions().evict(current)
        if refusal is not None:
            why = f"{refusal.message}: {refusal.cause}" if refusal.cause else refusal.message
            return Trial(evictions, None, f"evicting {victim.key}: {why}")
        known = set(sim.pods)
        node = sim.cluster.infos[current.spec.node_name].node
        sim.delete_pod(current)
        settled = sim.settle("rebalance")
        (e,) = landings(sim, [current], {current.key: node}, known, sorted(target_keys))
        evictions.append(e)
        if e.replacement is None:
            return Trial(evictions, None, f"no replacement was created for {current.key}")
        if e.replacement_node is None:
            return Trial(
                evictions, None, f"the replacement of {current.key} stays Pending: {e.note}"
            )
        domains, landed_domains = e.domains, e.replacement_domains
        for t, members in zip(targets, target_pods, strict=True):
            if current.key in members:
                key = t.spread.view.topology_key
                if key in domains and landed_domains.get(key) == domains[key]:
                    return Trial(
                        evictions,
                        None,
                        f"the replacement of {current.key} landed back in {key}="
                        f"{domains[key]} (on {e.replacement_node})",
                    )
    after = step_report(sim, 1, "after", Rebalance.action, [], settled)
    failure = _check(after, before, keys, victims)
    return Trial(evictions, after, failure)


def replay_on_copy(
    sim: Simulation, victims: Sequence[Pod], targets: Sequence[Target], before: StepReport
) -> Trial:
    """``replay_plan`` on a copy, its report sent back as its changes from ``before``."""
    trial = replay_plan(sim, victims, targets, before)
    if trial.after is not None:
        trial.delta, trial.after = diff_report(trial.after, before), None
    return trial


def _check(
    after: StepReport,
    before: StepReport,
    keys: set[tuple[str, int, str, tuple[str, ...]]],
    victims: Sequence[Pod],
) -> str | None:
    gone = {p.key for p in victims}
    for key, node in before.bound.items():
        if key in gone:
            continue
        if after.bound.get(key) != node:
            where = after.bound.get(key)
            return f"{key} was displaced ({'Pending' if where is None else 'now on ' + where})"
    for key in sorted(set(after.pending) - set(before.pending)):
        return f"{key} is left Pending: {after.pending[key]}"
    held_before = {
        spread_key(w.workload, c) for w in before.workloads for c in w.constraints if not c.violated
    }
    found = set()
    for w in after.workloads:
        for c in w.constraints:
            spread = spread_key(w.workload, c)
            found.add(spread)
            if spread in keys and c.exceeded:
                return (
                    f"{w.workload}: topologySpreadConstraints[{c.view.index}] "
                    f"({c.view.topology_key}) still has skew {c.skew} > maxSkew {c.view.max_skew}"
                )
            if spread in held_before and c.violated:
                return (
                    f"{w.workload}: topologySpreadConstraints[{c.view.index}] "
                    f"({c.view.topology_key}) held and is now violated"
                )
    for workload, index, topology_key, _ in sorted(keys - found):
        return (
            f"{workload}: topologySpreadConstraints[{index}] ({topology_key}): its pods "
            "changed group"
        )
    return None


# Domains listed by name in an eviction's note; more are counted.
_LISTED: Final = 6


def _few(domains: Sequence[str], total: int) -> str:
    if len(domains) <= _LISTED:
        return ", ".join(domains) or "none"
    return f"{len(domains)} of the {total}"


def why_landed(
    evictions: Sequence[Eviction], targets: Sequence[Target], members: Sequence[set[str]]
) -> list[Eviction]:
    """Each accepted eviction with why its replacement went where it did, from the targets'
    counts as the plan moves pods (only the plan's pods move: the plan check says so): the
    domains a DoNotSchedule constraint allowed then, or the emptiest ones a ScheduleAnyway
    constraint prefers."""
    counts = [dict(t.spread.view.counts) for t in targets]
    out = []
    for e in evictions:
        notes = []
        for t, own, tally in zip(targets, members, counts, strict=True):
            v = t.spread.view
            key = v.topology_key
            if e.pod not in own or key not in e.domains or e.domains[key] not in tally:
                continue
            tally[e.domains[key]] -= 1
            low = 0 if len(tally) < v.min_domains else min(tally.values())
            if v.when_unsatisfiable == DO_NOT_SCHEDULE:
                chosen = sorted(d for d, n in tally.items() if n + 1 - low <= v.max_skew)
                rule = f"maxSkew {v.max_skew} allows {_few(chosen, len(tally))}"
            else:
                chosen = sorted(d for d, n in tally.items() if n == min(tally.values()))
                rule = f"ScheduleAnyway prefers the emptiest: {_few(chosen, len(tally))}"
            shown = (
                " ".join(f"{d}={n}" for d, n in tally.items())
                if len(tally) <= _LISTED
                else f"{len(tally)} domains"
            )
            notes.append(f"{key} without it: {shown}; {rule}")
            landed = e.replacement_domains.get(key)
            if landed in tally:
                tally[landed] += 1
        out.append(dataclasses.replace(e, note="; ".join(notes)) if notes else e)
    return out


def landings(
    sim: Simulation,
    victims: Sequence[Pod],
    where: Mapping[str, Node],
    known: set[str],
    keys: Sequence[str] | None = None,
) -> list[Eviction]:
    """Each victim and where its replacement landed: the pods its controller created since
    ``known``, in creation order, one per victim in eviction order; domains under ``keys``
    (by default the well-known topology labels)."""
    created: dict[str, list[Pod]] = {}
    # A StatefulSet recreates a victim under its own name: a new uid says it is new.
    victim_uids = {p.metadata.uid for p in victims}
    for key in sim.pods:
        if key not in known or (key in where and sim.pods[key].metadata.uid not in victim_uids):
            ref = get_controller_of(sim.pods[key].metadata)
            if ref is not None:
                created.setdefault(ref.uid, []).append(sim.pods[key])
    out = []
    for pod in victims:
        labels = where[pod.key].metadata.labels
        shown = (
            keys
            if keys is not None
            else sorted(k for k in labels if k.startswith("topology.kubernetes.io/"))
        )
        domains = {k: labels[k] for k in shown if k in labels}
        ref = get_controller_of(pod.metadata)
        replacements = created.get(ref.uid, []) if ref is not None else []
        if not replacements:
            out.append(Eviction(pod.key, pod.spec.node_name, domains, None, None, {}))
            continue
        new = replacements.pop(0)
        if not new.spec.node_name:
            note = sim.pending_message(new)
            out.append(Eviction(pod.key, pod.spec.node_name, domains, new.key, None, {}, note))
            continue
        landed = sim.cluster.infos[new.spec.node_name].node.metadata.labels
        out.append(
            Eviction(
                pod.key,
                pod.spec.node_name,
                domains,
                new.key,
                new.spec.node_name,
                {k: landed[k] for k in domains if k in landed},
            )
        )
    return out


__all__ = [
    "Eviction",
    "Target",
    "Trial",
    "landings",
    "replay_on_copy",
    "replay_plan",
    "spread_key",
    "why_landed",
]
