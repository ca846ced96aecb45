"""Lists made on first use: what a sync reads of the pods only in some cases.

The fast path's Deployment step claims its pods from kept claims (claim_index.py) and lists
them only when it reads them (ranking scale-down victims, a Recreate's running old pods).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar, overload

E = TypeVar("E")


class LazyList(Sequence[E]):
    """A list made on first use: the pods a sync reads only in some cases (the related pods
    that rank scale-down victims, a Recreate's running old pods)."""

    __slots__ = ("_items", "_make")

    def __init__(self, make: Callable[[], list[E]]) -> None:
        self._make = make
        self._items: list[E] | None = None

    def _list(self) -> list[E]:
        if self._items is None:
            self._items = self._make()
        return self._items

    @overload
    def __getitem__(self, index: int) -> E: ...
    @overload
    def __getitem__(self, index: slice) -> list[E]: ...
    def __getitem__(self, index: int | slice) -> E | list[E]:
        return self._list()[index]

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self) -> Iterator[E]:
        return iter(self._list())


def as_sequence(items: Iterable[E]) -> Sequence[E]:
    """``items`` as they are when already a sequence (a LazyList stays unmade), else listed."""
    return items if isinstance(items, Sequence) else list(items)


__all__ = ["LazyList", "as_sequence"]
