"""A fast decision's per-node detail as the cycle leaves it: columns over the node table.

The cycle hands over the indices it scored, the total and each score plugin's column, and
the nodes it visited and rejected with their status indices into the path's interned status
table. Nothing is built per node until the detail is read: ``fragment`` writes the report's
JSON by joining each node's entries, kept per node table (``fragment.NodeText``), and
``materialise`` builds the Decision's dicts for any other reader.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from topospread.simulator.fastpath.fragment import NodeText
from topospread.simulator.fastpath.vectors import I64

# Node indices and status indices, as the cycle leaves them (intp, int32) or the detail
# writer receives them (int64).
Ints = npt.NDArray[np.signedinteger[Any]]

_ENCODE: Final = msgspec.json.encode


@dataclass(slots=True)
class NodeKeys:
    """Per node table (one list of names), each node's rank in name order, built once (the
    report lists feasible nodes sorted by name), and the names' JSON once a fragment needs it."""

    names: list[str]
    rank: I64
    text: NodeText | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, names: list[str]) -> NodeKeys:
        order = sorted(range(len(names)), key=names.__getitem__)
        rank = np.empty(len(names), np.int64)
        rank[order] = np.arange(len(names))
        return cls(names, rank)


@dataclass(slots=True)
class FastDetail:
    """One successful fast attempt's detail, by node index.

    NOTE: holds references, not copies, to what never changes once written: the table's list
    of names (a rebuild makes a new list), the status table's formatted reasons (append-only)
    and the score columns (fresh arrays per attempt).
    """

    keys: NodeKeys
    # The feasible nodes the search kept, in visiting order.
    take: I64
    # With two nodes or more: each node's total, then the plugins that scored and their
    # weighted scores (a column per plugin, in ``take``'s order).
    totals: I64 | None
    plugins: list[str]
    columns: list[I64]
    # The pod's own nominated node's reasons (tried alone first), then the visited nodes
    # rejected, in visiting order, with their status indices (as the cycle's arrays: made
    # into lists only when the detail is written, by the writer process where there is one).
    prior: dict[str, list[str]]
    seen: Ints
    codes: Ints
    formatted: list[list[str]]
    # ``totals`` then ``columns`` as rows of one array, where they come so (the detail
    # writer's), else None (they are stacked when the fragment is written).
    scored: Ints | None = None

    def feasible(self) -> list[str]:
        names = self.keys.names
        take = self.take
        return list(map(names.__getitem__, take[np.argsort(self.keys.rank[take])].tolist()))

    def materialise(
        self,
    ) -> tuple[list[str], dict[str, int], dict[str, dict[str, int]], dict[str, list[str]]]:
        """The Decision's feasible nodes (sorted), scores, plugin scores and reasons, each
        container built by C-level calls over the columns."""
        names = self.keys.names
        take_names = list(map(names.__getitem__, self.take.tolist()))
        scores: dict[str, int] = {}
        plugin_scores: dict[str, dict[str, int]] = {}
        if self.totals is not None:
            scores = dict(zip(take_names, self.totals.tolist(), strict=True))
            # NOTE: one row per name (the columns are len(take) long); no plugin scored: an
            # empty row each, as the reference reports.
            rows: Iterator[dict[str, int]] = map(
                dict,
                map(
                    zip,
                    itertools.repeat(self.plugins),
                    zip(*(c.tolist() for c in self.columns), strict=True),
                ),
            ) if self.columns else (dict() for _ in take_names)  # fmt: skip
            plugin_scores = dict(zip(take_names, rows, strict=False))
        reasons = dict(self.prior)
        reasons.update(
            zip(
                map(names.__getitem__, self.seen.tolist()),
                map(self.formatted.__getitem__, self.codes.tolist()),
                strict=True,
            )
        )
        return self.feasible(), scores, plugin_scores, reasons

    def fragment(self) -> bytes:
        """``"feasible":…,"scores":…,"pluginScores":…,"reasons":…``: what msgspec writes for
        ``materialise()``'s containers."""
        return b"".join(self.fragment_parts())

    def fragment_parts(self) -> list[bytes]:
        """``fragment()`` in a few pieces (the detail writer writes them as they are).

        NOTE: written from the node table's ``NodeText``, by joining entries, where each
        container of ``materialise()`` would be made from its columns without merging keys:
        the indices of ``take`` and of ``seen`` are each distinct (the cycle's visiting
        order lists a node once), the pod has no nominated node's reasons (``prior``: its
        node may be in ``seen`` too) and the plugins are distinct. Otherwise msgspec encodes
        the containers.
        """
        if (
            self.prior
            or (self.totals is not None and not self.plugins)
            or (len(set(self.plugins)) != len(self.plugins))
        ):
            return [_ENCODE(_Columns(*self.materialise()))[1:-1]]
        keys = self.keys
        text = keys.text
        if text is None:
            text = keys.text = NodeText(keys.names, keys.rank)
        take = self.take
        if self.totals is None:
            scores = plugin_scores = b""
        else:
            scored = self.scored
            if scored is None:
                scored = np.stack((self.totals, *self.columns))
            scores, plugin_scores = text.scores(take, tuple(self.plugins), scored)
        return [
            b'"feasible":[',
            text.feasible(take),
            b'],"scores":{',
            scores,
            b'},"pluginScores":{',
            plugin_scores,
            b'},"reasons":{',
            text.reasons(self.formatted, self.seen, self.codes),
            b"}",
        ]


class _Columns(msgspec.Struct):
    """A detail's containers, encoded in the report's key order."""

    feasible: list[str]
    scores: dict[str, int]
    plugin_scores: dict[str, dict[str, int]] = msgspec.field(name="pluginScores")
    reasons: dict[str, list[str]]
