"""The report's JSON of a fast attempt's detail, written from the columns by joining bytes.

A chart cluster attempt's detail is about 150 KB of JSON over a few hundred nodes, and most of
it repeats earlier attempts': from one attempt to the next, a few nodes' totals, plugin scores
or reasons change. ``NodeText`` keeps, per node table, each node's entry in each of the
detail's objects as it was last written (``,"name":…``) with the values it was written for;
an attempt compares its columns with those values (a few numpy operations over whole
columns), rebuilds the entries of the nodes whose values changed, and joins the entries of
the nodes it lists, taken from object arrays by the columns' indices: no dict, no Struct, no
int object per node.

The bytes are msgspec's for the dicts ``FastDetail.materialise`` builds (keys and strings
encoded by msgspec, ints in decimal as both write them); the tests check them on random
columns, over attempts that share a table.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec
import numpy as np
import numpy.typing as npt

from topospread.simulator.fastpath.vectors import I64

Ints = npt.NDArray[np.signedinteger[Any]]
Objects = npt.NDArray[np.object_]

_ENCODE: Final = msgspec.json.encode
# How many distinct rows of plugin scores a table keeps encoded (then it starts again).
_MAX_ROWS: Final = 1 << 16
# A status index no node's reasons entry was written for yet (no index is this low).
_NO_STATUS: Final = int(np.iinfo(np.int64).min)
# Odd 64-bit multipliers, one per plugin: a row's hash is its scores times them, modulo 2**64.
_MULTIPLIERS: Final = (
    0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x2545F4914F6CDD1D,
    0xD6E8FEB86659FD93, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3,
)  # fmt: skip


def _objects(items: Iterable[bytes], n: int) -> Objects:
    """A one-dimensional object array of ``n`` bytes objects (of a list of bytes, numpy
    would make an array of fixed-width bytes)."""
    array = np.empty(n, object)
    array[:] = list(items)
    return array


# The decimals of the small non-negative ints (most scores), made once.
_DECIMALS: Final = _objects((b"%d" % i for i in range(4096)), 4096)


def _decimals(values: Ints) -> list[bytes]:
    """Each value in decimal (as msgspec writes an int)."""
    if len(values) and values.min() >= 0 and values.max() < len(_DECIMALS):
        small: list[bytes] = _DECIMALS.take(values).tolist()
        return small
    return list(map(b"%d".__mod__, values.tolist()))


def _joined(entries: Objects) -> bytes:
    """The entries (each with its leading comma) joined, without the first comma."""
    items: list[bytes] = entries.tolist()
    if not items:
        return b""
    items[0] = items[0][1:]
    return b"".join(items)


class _Bodies:
    """Every distinct row of plugin scores seen for one list of plugins, by id, with its
    JSON object (``{"plugin":score,…}``) encoded once; id 0 is the row of zeros.

    Rows are held as columns (a row of the table per plugin), as the attempts' scores come.

    NOTE: a row's id is found by its hash, then checked against the row itself: a hash that
    two rows share costs a dict lookup, never a wrong id.
    """

    __slots__ = ("bodies", "by_hash", "by_row", "count", "generation", "multipliers", "rows",
                 "template")  # fmt: skip

    def __init__(self, plugins: tuple[str, ...]) -> None:
        # b'{"A":%d,"B":%d}': each name as msgspec writes it, a literal % doubled.
        self.template = (
            b"{" + b",".join(_ENCODE(p).replace(b"%", b"%%") + b":%d" for p in plugins) + b"}"
        )
        width = len(plugins)
        self.multipliers = np.array(
            [_MULTIPLIERS[i % len(_MULTIPLIERS)] + 2 * (i // len(_MULTIPLIERS))
             for i in range(width)],
            np.uint64,
        )  # fmt: skip
        self.generation = -1
        self._forget(width)

    def _forget(self, width: int) -> None:
        """No row known but zeros' (at first, and when too many are): a new generation."""
        self.rows = np.empty((width, 64), np.int64)
        self.bodies = np.empty(64, object)
        self.count = 0
        self.by_hash: dict[int, int] = {}
        self.by_row: dict[tuple[int, ...], int] = {}
        self.generation += 1
        self.id_of((0,) * width)

    def id_of(self, row: tuple[int, ...]) -> int:
        """The row's id, its object encoded the first time it is seen (which, with too many
        rows known, forgets them all first: a new generation)."""
        found = self.by_row.get(row)
        if found is None:
            if self.count == len(self.bodies):
                if self.count >= _MAX_ROWS:
                    self._forget(len(row))
                else:
                    self.rows = np.concatenate((self.rows, np.empty_like(self.rows)), axis=1)
                    self.bodies = np.concatenate((self.bodies, np.empty_like(self.bodies)))
            found = self.by_row[row] = self.count
            self.rows[:, found] = row
            self.bodies[found] = self.template % row
            self.count += 1
        return found

    def ids(self, scores: Ints) -> Ints:
        """The id of each column of ``scores`` (a row per plugin), all of one generation."""
        generation = self.generation
        hashes = (self.multipliers @ scores.astype(np.int64).view(np.uint64)).tolist()
        ids: list[int | None] = list(map(self.by_hash.get, hashes))
        if None in ids:
            for i, found in enumerate(ids):
                if found is None:
                    found = ids[i] = self.id_of(tuple(scores[:, i].tolist()))
                    self.by_hash.setdefault(hashes[i], found)
        index = np.array(ids, np.intp)
        wrong = np.flatnonzero((self.rows.take(index, axis=1) != scores).any(axis=0))
        for i in wrong.tolist():  # another row's hash (or one forgotten since)
            index[i] = self.id_of(tuple(scores[:, i].tolist()))
        if self.generation != generation:  # forgotten on the way: some ids are stale
            return self.ids(scores)
        return index


class _Scored:
    """For one list of plugins: each node's plugin scores as last seen, and the id of their
    row (``_Bodies``)."""

    __slots__ = ("bodies", "generation", "ids", "values")

    def __init__(self, n: int, plugins: tuple[str, ...]) -> None:
        self.bodies = _Bodies(plugins)
        self._forget(n)

    def _forget(self, n: int) -> None:
        """Every node's scores zeros (the bodies' id 0)."""
        self.values = np.zeros((len(self.bodies.multipliers), n), np.int64)
        self.ids = np.zeros(n, np.intp)
        self.generation = self.bodies.generation

    def members(self, keys: Objects, take: Ints, scored: Ints) -> tuple[bytes, bytes]:
        """The members of ``scores`` and of ``pluginScores`` for the nodes of ``take``
        (``scored``: the totals, then a row per plugin, in ``take``'s order)."""
        scores = scored[1:]
        changed = np.flatnonzero((self.values.take(take, axis=1) != scores).any(axis=0))
        if len(changed):
            nodes = take.take(changed)
            values = scores.take(changed, axis=1)
            ids = self.bodies.ids(values)
            if self.bodies.generation != self.generation:  # the nodes' ids are stale
                self._forget(len(self.ids))
                return self.members(keys, take, scored)
            self.values[:, nodes] = values
            self.ids[nodes] = ids
        # Each member a key (with its comma) and a value: the keys in every other place.
        parts: list[bytes] = [b""] * (2 * len(take))
        parts[::2] = keys.take(take).tolist()
        if parts:
            parts[0] = parts[0][1:]
        parts[1::2] = _decimals(scored[0])
        totals = b"".join(parts)
        parts[1::2] = self.bodies.bodies.take(self.ids.take(take)).tolist()
        return totals, b"".join(parts)


class NodeText:
    """One node table's names as JSON, and the entries the table's attempts last wrote.

    NOTE: an entry is rebuilt whenever the values it was written for differ from the node's
    in the attempt being written: cached bytes are always those of the values compared, so
    reusing them changes the cost of the output, never its bytes.
    """

    def __init__(self, names: list[str], rank: I64) -> None:
        self._names = names
        n = len(names)
        quoted = [_ENCODE(name) for name in names]
        # Each with a leading comma: a section's first entry drops it.
        self._keys = [b"," + q + b":" for q in quoted]
        self._key_array = _objects(self._keys, n)
        self._rank = rank
        self._by_rank = np.empty(n, object)
        self._by_rank[rank] = _objects((b"," + q for q in quoted), n)
        self._scored: dict[tuple[str, ...], _Scored] = {}
        # The status table the reasons' entries were written from, and its statuses' JSON.
        self._table: list[list[str]] | None = None
        self._statuses = np.empty(0, object)
        self._codes = np.full(n, _NO_STATUS, np.int64)
        self._reasons = _objects((b"" for _ in range(n)), n)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (a simulation's snapshot) as the names alone: what it keeps is a cost, not
        state, and is made again as attempts are written."""
        return (NodeText, (self._names, self._rank))

    def feasible(self, take: Ints) -> bytes:
        """The items of the JSON list of the names of ``take``, sorted."""
        return _joined(self._by_rank.take(np.sort(self._rank.take(take))))

    def scores(self, take: Ints, plugins: tuple[str, ...], scored: Ints) -> tuple[bytes, bytes]:
        """The members of ``{name: total}`` and of ``{name: {plugin: score}}`` for the nodes
        of ``take``, in its order (``scored``: the totals, then a row per plugin)."""
        found = self._scored.get(plugins)
        if found is None:
            found = self._scored[plugins] = _Scored(len(self._keys), plugins)
        return found.members(self._key_array, take, scored)

    def reasons(self, formatted: list[list[str]], seen: Ints, codes: Ints) -> bytes:
        """The members of ``{name: reasons}`` for the nodes of ``seen``, in its order, each
        node's reasons the formatted status its code indexes."""
        if formatted is not self._table:  # another status table: no entry is its
            self._table = formatted
            self._statuses = np.empty(0, object)
            self._codes[:] = _NO_STATUS
        statuses = self._statuses
        if len(statuses) < len(formatted):  # NOTE: the table only grows
            statuses = self._statuses = np.concatenate(
                (
                    statuses,
                    _objects(
                        map(_ENCODE, formatted[len(statuses) :]), len(formatted) - len(statuses)
                    ),
                )
            )
        changed = np.flatnonzero(self._codes.take(seen) != codes)
        if len(changed):
            nodes = seen.take(changed)
            values = codes.take(changed)
            self._codes[nodes] = values
            self._reasons[nodes] = list(
                map(bytes.__add__, self._key_array.take(nodes).tolist(),
                    statuses.take(values).tolist())
            )  # fmt: skip
        return _joined(self._reasons.take(seen))


__all__ = ["NodeText"]
