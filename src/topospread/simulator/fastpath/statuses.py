"""The fast path's statuses by index: filters answer with one int32 per node, an index into one
table of interned statuses (0: SUCCESS), and a failed attempt's diagnosis reads them back."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from topospread.framework.status import SUCCESS, Code, Status, format_reasons
from topospread.simulator.fastpath.vectors import I32, I64, B, Rows


class StatusTable:
    """Interned statuses (index 0: SUCCESS), their reasons as reports show them, and per index
    whether the code is Unschedulable (preemption may help)."""

    __slots__ = ("_formatted", "_index", "_unresolved", "table")

    def __init__(self) -> None:
        self.table: list[Status] = [SUCCESS]
        self._index: dict[Status, int] = {SUCCESS: 0}
        self._formatted: list[list[str]] = []
        self._unresolved: B = np.zeros(0, np.bool_)

    def intern(self, status: Status) -> int:
        index = self._index.get(status)
        if index is None:
            index = self._index[status] = len(self.table)
            self.table.append(status)
        return index

    def formatted(self, index: int) -> list[str]:
        """A status's reasons as reports show them (shared: never mutated)."""
        while len(self._formatted) <= index:
            self._formatted.append(format_reasons(self.table[len(self._formatted)]))
        return self._formatted[index]

    def formatted_table(self) -> list[list[str]]:
        return self._formatted

    def unresolved(self) -> B:
        """Per status index: whether its code is Unschedulable (preemption may help)."""
        table = self.table
        if len(self._unresolved) != len(table):
            self._unresolved = np.fromiter(
                (s.code is Code.Unschedulable for s in table), np.bool_, len(table)
            )
        return self._unresolved


class VectorStatuses(Mapping[str, Status]):
    """A failed attempt's status of every node, read from the status vector (``codes[p]``
    indexes ``table`` for the node at position ``p``; every node was visited), iterated in
    the order the search visited them, and counted per distinct status for FitError's
    message (``status_counts``) without a dict of every node."""

    __slots__ = ("_bincount", "_codes", "_index", "_names", "_order", "_table")

    def __init__(
        self,
        names: list[str],
        index: Mapping[str, int],
        order: Rows,
        codes: I32,
        table: list[Status],
    ) -> None:
        self._names = names
        self._index = index
        self._order = order
        self._codes = codes
        self._table = table
        self._bincount: I64 | None = None  # how many nodes have each status: taken once

    def __getitem__(self, name: str) -> Status:
        p = self._index.get(name)
        if p is None:
            raise KeyError(name)
        return self._table[int(self._codes[p])]

    def __contains__(self, name: object) -> bool:
        return name in self._index

    def __iter__(self) -> Iterator[str]:
        names = self._names
        return (names[i] for i in self._order.tolist())

    def __len__(self) -> int:
        return len(self._order)

    def _counts(self) -> I64:
        if self._bincount is None:
            self._bincount = np.bincount(self._codes)
        return self._bincount

    def distinct(self) -> list[int]:
        """The status indexes met, in table order."""
        return [int(i) for i in np.flatnonzero(self._counts())]

    def status_counts(self) -> list[tuple[Status, int]]:
        counts = self._counts()
        return [(self._table[int(i)], int(counts[i])) for i in np.flatnonzero(counts)]


class Names(Sequence[str]):
    """Node names at some indices, built only when asked for (usually one of them is)."""

    __slots__ = ("_indices", "_names")

    def __init__(self, names: list[str], indices: Rows) -> None:
        self._names = names
        self._indices = indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return self._names[int(self._indices[i])]
