"""A fast decision's per-node detail as the cycle leaves it: columns over the node table.

The cycle hands over the indices it scored, the total and each score plugin's column, and
the nodes it visited and rejected with their status indices into the path's interned status
table. Nothing is built per node until the detail is read: ``fragment`` encodes the report's
JSON from containers each made by one C-level call over the columns (a node's plugin scores
as a small Struct, not a dict), and ``materialise`` builds the Decision's dicts for any other
reader.
"""

from __future__ import annotations

import functools
import itertools
import keyword
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from topospread.simulator.fastpath.vectors import I64

# Node indices and status indices, as the cycle leaves them (intp, int32) or the detail
# writer receives them (int64).
Ints = npt.NDArray[np.signedinteger[Any]]

_ENCODE: Final = msgspec.json.encode
_ENCODER: Final = msgspec.json.Encoder()
MISSING: Final = object()


@dataclass(slots=True)
class NodeKeys:
    """Per node table (one list of names), each node's rank in name order, built once (the
    report lists feasible nodes sorted by name)."""

    names: list[str]
    rank: I64

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

    def feasible(self) -> list[str]:
        names = self.keys.names
        take = self.take
        return list(map(names.__getitem__, take[np.argsort(self.keys.rank[take])].tolist()))

    def _containers(
        self, row: Any, formatted: list[Any] | None = None
    ) -> tuple[list[str], dict[str, int], dict[str, Any], dict[str, Any]]:
        """The report's containers, each built by one C-level call over the columns; a node's
        plugin scores made by ``row`` (dict over (plugin, score) pairs, or a Struct type), its
        reasons taken from ``formatted`` (the status table's, by default)."""
        names = self.keys.names
        take_names = list(map(names.__getitem__, self.take.tolist()))
        scores: dict[str, int] = {}
        plugin_scores: dict[str, Any] = {}
        if self.totals is not None:
            scores = dict(zip(take_names, self.totals.tolist(), strict=True))
            if self.columns:
                # NOTE: ``row`` yields one per name (the columns are len(take) long).
                rows = row(*(c.tolist() for c in self.columns))
                plugin_scores = dict(zip(take_names, rows, strict=False))
            else:  # no plugin scored: an empty row each, as the reference reports
                plugin_scores = {name: {} for name in take_names}
        reasons = dict(self.prior)
        reasons.update(
            zip(
                map(names.__getitem__, self.seen.tolist()),
                map(
                    (self.formatted if formatted is None else formatted).__getitem__,
                    self.codes.tolist(),
                ),
                strict=True,
            )
        )
        return self.feasible(), scores, plugin_scores, reasons

    def materialise(
        self,
    ) -> tuple[list[str], dict[str, int], dict[str, dict[str, int]], dict[str, list[str]]]:
        """The Decision's feasible nodes (sorted), scores, plugin scores and reasons."""
        plugins = self.plugins

        def rows(*columns: list[int]) -> Iterator[dict[str, int]]:
            return map(dict, map(zip, itertools.repeat(plugins), zip(*columns, strict=True)))

        return self._containers(rows)

    def fragment(self) -> bytes:
        """``"feasible":…,"scores":…,"pluginScores":…,"reasons":…``: what msgspec writes for
        ``materialise()``'s containers.

        NOTE: a node's plugin scores are a Struct whose fields are the plugins that scored, in
        order: msgspec writes it as the dict ``materialise`` builds, byte for byte, without a
        dict per node; a node's reasons are its status's, encoded once (``msgspec.Raw``).
        """
        return _ENCODE(self._columns())[1:-1]

    def fragment_into(self, buf: bytearray) -> None:
        """``fragment()`` between braces, encoded into ``buf`` in place of what it held (the
        detail writer's one buffer for every fragment: no fresh 150 KB per chart attempt)."""
        _ENCODER.encode_into(self._columns(), buf)

    def _columns(self) -> _Columns:
        row = _row_type(tuple(self.plugins))
        if row is None:
            return _Columns(*self.materialise())
        return _Columns(*self._containers(functools.partial(map, row), _encoded(self.formatted)))


class _Columns(msgspec.Struct):
    """A detail's containers, encoded in the report's key order."""

    feasible: list[str]
    scores: dict[str, int]
    plugin_scores: dict[str, Any] = msgspec.field(name="pluginScores")
    reasons: dict[str, list[str]]


# id of a status table -> the table, and its reasons each encoded once (the table only grows).
_ENCODED: dict[int, tuple[list[list[str]], list[msgspec.Raw]]] = {}


def _encoded(formatted: list[list[str]]) -> list[msgspec.Raw]:
    """Each of the table's formatted reasons as its JSON (kept with the table)."""
    found = _ENCODED.get(id(formatted))
    if found is None or found[0] is not formatted:
        if len(_ENCODED) >= 64:
            _ENCODED.clear()
        found = _ENCODED[id(formatted)] = (formatted, [])
    raws = found[1]
    if len(raws) < len(formatted):
        raws += [msgspec.Raw(_ENCODE(reasons)) for reasons in formatted[len(raws) :]]
    return raws


_ROW_TYPES: dict[tuple[str, ...], Any] = {}


def _row_type(plugins: tuple[str, ...]) -> Any:
    """A Struct type with one int field per plugin, in order (None where a name cannot be a
    field); one per set of plugins that score."""
    row = _ROW_TYPES.get(plugins, MISSING)
    if row is MISSING:
        ok = all(p.isidentifier() and not keyword.iskeyword(p) and not p.startswith("_")
                 for p in plugins)  # fmt: skip
        # NOTE: gc=False: a row holds ints only, so it can be in no reference cycle, and the
        # collector need not track the hundreds made per fragment (a fifth cheaper to make).
        row = _ROW_TYPES[plugins] = (
            msgspec.defstruct("Row", [(p, int) for p in plugins], gc=False) if ok else None
        )
    return row
