"""The Kernel protocol: a plugin's filter and score over every node of the table at once.

A kernel is named after its upstream plugin and registered under that name in ``KERNELS``.
The cycle calls, in the profile's order, each filter plugin's kernel for a vector of status
indices (0: passes) and each score plugin's kernel for its normalized scores of the nodes to
score; the shapes read the class flags to know which plugins they take once per pod shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from topospread.api.types import Pod
from topospread.framework.cycle_state import CycleState
from topospread.framework.types import MAX_NODE_SCORE
from topospread.plugins.helper.normalize_score import default_normalize_score_array
from topospread.simulator.fastpath.vectors import I32, I64, Rows

if TYPE_CHECKING:
    from topospread.simulator.fastpath.cycle import FastPath
    from topospread.simulator.fastpath.shapes import Signature


@dataclass(slots=True)
class Attempt:
    """One scheduling attempt as the kernels see it."""

    pod: Pod
    sig: Signature
    state: CycleState  # the decision's cycle state (the reference fallback's PreFilter writes it)
    # Per node, what nominated pods of at least the pod's priority request (cpu, memory,
    # ephemeral storage, count), to take off the free room; None: not counted.
    nominated: tuple[I64, I64, I64, I64] | None = None
    first: I32 | None = None  # the verdicts so far, in filter order (None: every node passes)
    declined: bool = False  # a kernel cannot prove this attempt equal: the reference decides
    # The reference PreFilter plugins already ran on ``state`` (the scheduler filtered the
    # nodes holding nominated pods with them): plugins without a kernel read what they wrote.
    prefiltered: bool = False
    memo: dict[str, Any] = field(default_factory=dict)


class Kernel:
    """A plugin's vectorised filter and score. The defaults do nothing: a filter that passes
    every node (None), a score plugin that skips (None).

    Class flags, read by the shapes and the cycle:
    ``dynamic``: its PreFilter and PreScore are not run once per pod shape (it reads the pods
    bound or the pod itself, per decision); ``node_only``: its Filter reads only the pod's
    spec and the node, and is taken once per shape; ``static_score``: likewise its Score
    (``reverse``: DefaultNormalizeScore's reverse flag, None: no normalization);
    ``must_skip``: the path declines a pod unless its PreFilter skips; ``seeds_state``: its
    PreFilter writes state before skipping, read after the decision (``seed_state``);
    ``reads_spec``: reads the node's taints or unschedulable flag (a node update's memo);
    ``reads_images``: its scores read how many nodes hold each image;
    ``per_pod``: its PreFilter runs once per shape where it skips there for a reason the
    shape's key holds (the pod has no volume it reads); for the other shapes (pods with
    claims) the plugin runs per attempt through its reference plugin (``Static.per_attempt``).
    """

    dynamic: ClassVar[bool] = False
    node_only: ClassVar[bool] = False
    static_score: ClassVar[bool] = False
    reverse: ClassVar[bool | None] = None
    must_skip: ClassVar[bool] = False
    seeds_state: ClassVar[bool] = False
    reads_spec: ClassVar[bool] = False
    reads_images: ClassVar[bool] = False
    per_pod: ClassVar[bool] = False
    # Whether nominated pods of the pod's priority can change its verdicts beyond what
    # NodeResourcesFit reads (then the vectors never count them: ``counts_nominated``).
    reads_nominated: ClassVar[bool] = False

    def __init__(self, path: FastPath, plugin: Any) -> None:
        self.path = path
        self.plugin = plugin
        self.name: str = plugin.name

    @classmethod
    def supports(cls, plugin: Any) -> bool:
        """Whether this kernel computes what ``plugin`` (as configured) computes."""
        del plugin
        return True

    def pre_filter(self, attempt: Attempt) -> None:
        """Run before any filter of the attempt (its plugin's PreFilter, where needed)."""

    def filter(self, attempt: Attempt) -> I32 | None:
        """Per node, the index of the status the plugin rejects with (0: passes); None: every
        node passes."""
        del attempt
        return None

    def defers(self, attempt: Attempt) -> bool:
        """Whether its Filter runs only on the nodes the search visits (``filter_rows``),
        rather than on every node (``filter``): ``lazy.py``."""
        del attempt
        return False

    def filter_rows(self, attempt: Attempt, rows: Rows) -> I32:
        """Per node of ``rows``, the index of the status the plugin rejects with (0:
        passes), for a kernel that ``defers``."""
        raise NotImplementedError(self.name)

    def chose(self, attempt: Attempt, row: int) -> None:
        """The attempt placed the pod on the node at ``row``: write what the points after
        the decision (Reserve, PreBind) read of that node, where the filter left it out."""

    def pre_score(self, attempt: Attempt, take: Rows) -> None:
        """Run before any score of the attempt, over the nodes to score."""

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        """The plugin's normalized scores of the nodes ``take`` (unweighted); None: its
        PreScore skipped, nothing to score."""
        del attempt, take
        return None


class StaticKernel(Kernel):
    """A plugin that reads only the pod's spec and the node: its verdicts and raw scores are
    the shape's, taken once from the reference plugin (``Shapes.build``)."""

    def filter(self, attempt: Attempt) -> I32 | None:
        static = attempt.sig.static
        found = static.filter_status.get(self.name)
        return found if found is not None and static.rejects[self.name] else None

    def score(self, attempt: Attempt, take: Rows) -> I64 | None:
        static = attempt.sig.static
        name = self.name
        zero = static.all_zero.get(name)
        if zero is None:
            zero = static.all_zero[name] = not static.static_scores[name].any()
        reverse = self.reverse
        if zero:  # DefaultNormalizeScore of zeros: MaxNodeScore reversed, else zeros
            if not reverse:
                return np.zeros(len(take), np.int64)
            return np.full(len(take), MAX_NODE_SCORE, np.int64)
        raw: I64 = static.static_scores[name][take]
        if reverse is None:
            return raw
        return default_normalize_score_array(MAX_NODE_SCORE, reverse, raw)


class SkippingKernel(Kernel):
    """A plugin whose PreFilter skips for every pod this path takes (it declines the others):
    its Filter never runs."""

    must_skip = True
