"""The ``rebalance`` step: plan the fewest evictions that restore spread and make them. Its
options are checked here, with the timeline; the planning is analysis/rebalance.py's, lent
to the step through ``StepEnv.rebalance`` (the simulator may not import the analysis)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Self

from topospread.errors import ManifestError
from topospread.simulator.timeline_steps.arguments import mapping_arg
from topospread.simulator.timeline_steps.step import Step, StepEnv, StepResult, unsupported

if TYPE_CHECKING:
    from topospread.simulator.simulation import Simulation

# The rebalance step's options (analysis/rebalance.py reads them): key -> expected type.
REBALANCE_OPTIONS: Final[Mapping[str, type]] = {
    "includeSoft": bool,
    "namespaces": list,
    "excludeNamespaces": list,
    "selector": str,
    "evictLocalStorage": bool,
    "maxEvictions": int,
    "maxReplays": int,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Rebalance(Step):
    """``rebalance``: ``{}`` (or nothing), or some of REBALANCE_OPTIONS (the flags of the
    ``rebalance`` command)."""

    action = "rebalance"
    options: Mapping[str, Any]

    @classmethod
    def parse(cls, args: Any, where: str) -> Self:
        return cls(args=args, where=where, options=rebalance_args(args, where))

    def apply(self, sim: Simulation, env: StepEnv) -> StepResult:
        if env.rebalance is None:
            raise unsupported(self.where)
        return StepResult(env.rebalance(sim, self.options, self.where))


def rebalance_args(a: Any, where: str) -> Mapping[str, Any]:
    """``rebalance``'s options, checked: ``{}`` for none."""
    if a is None:
        return {}
    mapping_arg(a, where, required=(), allowed=tuple(REBALANCE_OPTIONS))
    for key, value in a.items():
        kind = REBALANCE_OPTIONS[key]
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is list:
            ok = ok and all(isinstance(v, str) for v in value)
        if kind is int:
            ok = ok and value >= 1
        if not ok:
            expected = {bool: "true or false", list: "a list of names", str: "a string"}.get(
                kind, "a whole number, 1 or more"
            )
            raise ManifestError(
                f"{where}: {key}: Invalid value: {json.dumps(value)}: expected {expected}"
            )
    return dict(a)


__all__ = ["REBALANCE_OPTIONS", "Rebalance", "rebalance_args"]
