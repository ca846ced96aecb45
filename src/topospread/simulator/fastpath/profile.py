"""A profile's plugins as kernels: one per plugin, in the profile's order at each extension
point, and the runs of its filters and scores over every node at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import numpy as np

from topospread.framework.runtime import Framework
from topospread.simulator.fastpath.kernels import KERNELS, Attempt, Kernel, ReferenceKernel
from topospread.simulator.fastpath.lazy import LazyVerdicts
from topospread.simulator.fastpath.vectors import I32, I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath

_POINTS: Final = ("pre_filter_plugins", "filter_plugins", "pre_score_plugins", "score_plugins")


class ProfileKernels:
    """One kernel per plugin of the profile, by name: the plugin's own (``KERNELS``), or its
    reference plugin run node by node (``ReferenceKernel``)."""

    def __init__(self, path: FastPath, fwk: Framework) -> None:
        self.fwk = fwk
        self.by_name: dict[str, Kernel] = {}
        # False where a plugin with a kernel is configured beyond what the kernel computes
        # (a scoring strategy other than LeastAllocated, other resources): the path declines
        # every pod of the profile.
        self.supported = True
        for point in _POINTS:
            for pl in getattr(fwk, point):
                if pl.name in self.by_name:
                    continue
                kind = KERNELS.get(pl.name, ReferenceKernel)
                if not kind.supports(pl):
                    self.supported = False
                self.by_name[pl.name] = kind(path, pl)
        by_name = self.by_name
        if any(type(by_name[pl.name]).score is Kernel.score for pl in fwk.score_plugins):
            self.supported = False  # a score plugin whose kernel computes no score
        # NOTE: the points a kernel leaves as Kernel's (doing nothing) are not called: a
        # dozen calls per attempt, in order, of the kernels that do something.
        self.pre_filters = [
            by_name[pl.name]
            for pl in fwk.pre_filter_plugins
            if _overrides(by_name[pl.name], "pre_filter")
        ]
        prefiltering = {pl.name for pl in fwk.pre_filter_plugins}
        if any(
            (by_name[pl.name].per_pod or by_name[pl.name].must_skip) and pl.name not in prefiltering
            for pl in fwk.filter_plugins
        ):
            # NOTE: those kernels learn from the plugin's PreFilter whether it is in play.
            self.supported = False
        self.filters = [(pl.name, by_name[pl.name]) for pl in fwk.filter_plugins]
        self.pre_scores = [
            by_name[pl.name]
            for pl in fwk.pre_score_plugins
            if _overrides(by_name[pl.name], "pre_score")
        ]
        # The filter kernels that may run only on the nodes visited (``Kernel.defers``), and
        # those that note the chosen node (``Kernel.chose``).
        self.deferring = {name for name, kernel in self.filters if _overrides(kernel, "defers")}
        self.choosers = [kernel for _, kernel in self.filters if _overrides(kernel, "chose")]
        self.scores = [(pl.name, by_name[pl.name]) for pl in fwk.score_plugins]
        self.seeding = [pl for pl in fwk.pre_filter_plugins if by_name[pl.name].seeds_state]
        # Whether a filter runs through its reference plugin for every pod: nominated pods
        # may then change its verdicts, so the vectors never count them
        # (``FastPath.counts_nominated``; the volume plugins' ``ClaimKernel`` runs so only for
        # pods with claims, which that checks per shape).
        self.reference_filters = any(isinstance(k, ReferenceKernel) for _, k in self.filters)

    def run_filters(self, attempt: Attempt, n: int) -> I32 | LazyVerdicts | None:
        """Per node, the index of the status its first failing filter returns (0: feasible);
        None where a kernel declines the attempt. Where a filter runs only on the nodes the
        search visits (``Kernel.defers``), the verdicts as ``LazyVerdicts``.

        Upstream: RunPreFilterPlugins and RunFilterPlugins (framework.go, v1.35), over every
        node at once.
        """
        for kernel in self.pre_filters:
            kernel.pre_filter(attempt)
            if attempt.declined:
                return None
        static = attempt.sig.static
        deferring = self.deferring
        stages: list[tuple[Kernel, I32 | None]] = []
        deferred = False
        for name, kernel in self.filters:
            if name in static.skip_filters:
                continue
            if name in deferring and kernel.defers(attempt):
                stages.append((kernel, None))
                deferred = True
                continue
            status = kernel.filter(attempt)
            if attempt.declined:
                return None
            if status is None:
                continue
            stages.append((kernel, status))
            first = attempt.first
            attempt.first = status if first is None else np.where(first == 0, status, first)
        if deferred:
            return LazyVerdicts(attempt, stages, n)
        first = attempt.first
        if first is None:
            return np.zeros(n, np.int32)
        # A fresh array: callers write overrides into it, and static rows must not change.
        return first.copy() if any(first is a for a in static.filter_status.values()) else first

    def run_scores(self, attempt: Attempt, take: Rows) -> tuple[I64, dict[str, I64]] | None:
        """The weighted total per node of ``take``, and each plugin's weighted scores; None
        where a kernel declines the attempt.

        Upstream: RunPreScorePlugins and RunScorePlugins (framework.go, v1.35).
        """
        for kernel in self.pre_scores:
            kernel.pre_score(attempt, take)
            if attempt.declined:
                return None
        skipped = attempt.sig.skipped_scores
        weights = self.fwk.score_plugin_weight
        per_plugin: dict[str, I64] = {}
        total: I64 | None = None  # a copy of the first plugin's scores, then their sum
        for name, kernel in self.scores:
            if name in skipped:
                continue
            raw = kernel.score(attempt, take)
            if attempt.declined:
                return None
            if raw is None:
                continue  # PreScore skipped: nothing to score
            weight = weights[name]
            weighted = raw if weight == 1 else raw * weight
            per_plugin[name] = weighted
            if total is None:
                total = weighted.astype(np.int64)  # a copy: the plugin's column stays its own
            else:
                total += weighted
        if total is None:
            total = np.zeros(len(take), np.int64)
        return total, per_plugin


def _overrides(kernel: Kernel, point: str) -> bool:
    """Whether the kernel's class does something at ``point`` (Kernel's own does nothing)."""
    return getattr(type(kernel), point) is not getattr(Kernel, point)
