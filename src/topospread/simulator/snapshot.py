"""Copies of a simulation's whole state, to replay many futures from one settled present.

A :class:`Snapshot` is the pickled state of a :class:`~topospread.simulator.simulation.
Simulation` — cluster, scheduler queue and caches, controllers, clock, taint manager and
budgets — taken once; every :meth:`Snapshot.restore` gives an independent simulation equal to
the one snapshotted, as if it had been loaded and settled again. Its bytes cross process and
machine boundaries unchanged, so a process pool or a Ray cluster replays exactly what the
caller would.
"""

from __future__ import annotations

import pickle
from typing import Any, Final, Generic, TypeVar

_PROTOCOL: Final = pickle.HIGHEST_PROTOCOL

D = TypeVar("D", bound=dict[Any, Any])
T = TypeVar("T")


def restore_dict_subclass(cls: type[D], items: dict[Any, Any], state: dict[str, Any]) -> D:
    """Rebuild an indexing dict subclass from its items and attributes without replaying its
    ``__setitem__`` (whose indexes are part of ``state``): their ``__reduce__``."""
    obj = cls.__new__(cls)
    dict.update(obj, items)
    obj.__dict__.update(state)
    return obj


class Snapshot(Generic[T]):
    """A simulation's state frozen as bytes; ``restore()`` any number of times."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    @classmethod
    def of(cls, obj: T) -> Snapshot[T]:
        return cls(pickle.dumps(obj, protocol=_PROTOCOL))

    def restore(self) -> T:
        obj: T = pickle.loads(self.data)
        return obj

    def __len__(self) -> int:
        return len(self.data)
