"""``sweep``'s report: each run compared with its seed's base state (``Outcome``), ranked worst
first, checked against the ``--require`` requirements, and given as JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from topospread.analysis.reports import pending_json
from topospread.analysis.sweep_autoscaler import AutoscalerInfo
from topospread.analysis.sweep_failures import Failure
from topospread.analysis.sweep_run import Phase, Run
from topospread.analysis.sweep_workers import RunError

REQUIREMENTS: Final = ("no-pending", "no-violation", "no-blocked-drain", "recovers")


@dataclass(slots=True)
class Outcome:
    """A run compared with its seed's base state."""

    run: Run
    new_pending: int
    new_violations: list[str]
    recovered: bool

    @property
    def failure(self) -> Failure:
        return self.run.failure

    def severity(self) -> tuple[int, ...]:
        """Worst first: not recovered, new Pending pods, violations, blocked drains,
        preferences not met."""
        d = self.run.during
        return (
            int(not self.recovered),
            self.new_pending,
            len(self.new_violations),
            len(d.blocked),
            len(d.preferences_not_met),
        )

    def breaks(self, requirement: str) -> bool:
        d = self.run.during
        if requirement == "no-pending":
            return self.new_pending > 0
        if requirement == "no-violation":
            return bool(self.new_violations)
        if requirement == "no-blocked-drain":
            return bool(d.blocked)
        return not self.recovered  # recovers


def compare(run: Run, base: Phase) -> Outcome:
    def pending_by_workload(p: Phase) -> dict[str, int]:
        return {w: o.pending for w, o in p.workloads.items()}

    base_pending = pending_by_workload(base)
    base_violated = set(base.violated)
    new_pending = sum(
        max(0, n - base_pending.get(w, 0)) for w, n in pending_by_workload(run.during).items()
    )
    new_violations = [v for v in run.during.violated if v not in base_violated]
    after_pending = pending_by_workload(run.after)
    recovered = all(n <= base_pending.get(w, 0) for w, n in after_pending.items()) and all(
        v in base_violated for v in run.after.violated
    )
    return Outcome(run, new_pending, new_violations, recovered)


@dataclass(slots=True)
class SweepReport:
    source: str
    seeds: list[int]
    base: dict[int, Phase]
    outcomes: list[Outcome]
    planned: int
    # Failures per kind (each replayed once per seed).
    plan: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    warnings: list[str] = field(default_factory=list)
    # Runs whose worker died on every attempt (no outcome), in job order.
    failed: list[RunError] = field(default_factory=list)
    autoscaler: AutoscalerInfo | None = None

    @property
    def families(self) -> list[str]:
        """The kinds of failure tried, in KINDS order."""
        return list(self.plan)

    def ranked(self) -> list[Outcome]:
        return sorted(
            self.outcomes,
            key=lambda o: (tuple(-x for x in o.severity()), o.failure.sort_key(), o.run.seed),
        )

    def failing(self, requirements: Sequence[str]) -> list[Outcome]:
        return [o for o in self.ranked() if any(o.breaks(r) for r in requirements)]

    def workloads(self) -> list[str]:
        names = {w for o in self.outcomes for w in o.run.during.workloads}
        names |= {w for b in self.base.values() for w in b.workloads}
        return sorted(names)

    def to_json(self, requirements: Sequence[str] = ()) -> dict[str, Any]:
        """The whole report; with ``requirements`` (``--require``) also which runs break
        which of them (``require``), the verdict the exit code reports."""
        return {
            "source": self.source,
            "seeds": self.seeds,
            "families": self.families,
            "failures": self.plan,
            "planned": self.planned,
            "completed": len(self.outcomes),
            "failed": [
                {
                    "failure": {
                        "name": e.failure.name,
                        "kind": e.failure.kind,
                        "targets": list(e.failure.targets),
                    },
                    "seed": e.seed,
                    "error": e.error,
                    "attempts": e.attempts,
                }
                for e in self.failed
            ],
            "interrupted": self.interrupted,
            "base": {str(s): phase_json(p) for s, p in self.base.items()},
            "ranked": [
                {
                    "failure": o.failure.name,
                    "seed": o.run.seed,
                    "newPending": o.new_pending,
                    "newViolations": o.new_violations,
                    "blocked": len(o.run.during.blocked),
                    "preferencesNotMet": len(o.run.during.preferences_not_met),
                    "recovered": o.recovered,
                    "broken": any(o.severity()),
                }
                for o in self.ranked()
            ],
            "runs": [
                {
                    **msgspec.to_builtins(o.run),
                    "during": phase_json(o.run.during),
                    "after": phase_json(o.run.after),
                    "failure": {
                        "name": o.failure.name,
                        "kind": o.failure.kind,
                        "targets": list(o.failure.targets),
                    },
                    "recovered": o.recovered,
                }
                for o in sorted(self.outcomes, key=lambda o: (o.failure.sort_key(), o.run.seed))
            ],
            "warnings": self.warnings,
        } | (
            ({"autoscaler": self.autoscaler.to_json()} if self.autoscaler is not None else {})
            | ({"require": self._require_json(requirements)} if requirements else {})
        )

    def _require_json(self, requirements: Sequence[str]) -> dict[str, Any]:
        failing = self.failing(requirements)
        return {
            "requirements": list(requirements),
            "passed": not failing,
            "failing": [
                {
                    "failure": o.failure.name,
                    "seed": o.run.seed,
                    "breaks": [r for r in requirements if o.breaks(r)],
                }
                for o in failing
            ],
        }


def phase_json(p: Phase) -> dict[str, Any]:
    """A phase as the JSON report gives it: Pending pods in the shape of every report
    (``pending_json``)."""
    out: dict[str, Any] = msgspec.to_builtins(p)
    out["pending"] = pending_json(p.pending)
    return out
