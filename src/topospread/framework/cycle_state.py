"""CycleState: data plugins share within one scheduling cycle, under typed keys."""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar, cast


class StateData(Protocol):
    """What a plugin stores in the cycle state; ``clone`` serves preemption's what-if copies."""

    def clone(self) -> StateData: ...


T = TypeVar("T", bound=StateData)


class StateKey(Generic[T]):
    """A typed key: reading it gives back the type that was written under it."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"StateKey({self.name!r})"


class StateNotFoundError(KeyError):
    """Nothing was written under the key (for instance PreFilter did not run)."""


class CycleState:
    """Per-cycle storage. ``clone`` copies each entry through its own ``clone``."""

    __slots__ = ("_storage", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._storage: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()

    def write(self, key: StateKey[T], value: T) -> None:
        self._storage[key.name] = value

    def has(self, key: StateKey[T]) -> bool:
        return key.name in self._storage

    def read(self, key: StateKey[T]) -> T:
        try:
            return cast(T, self._storage[key.name])
        except KeyError:
            raise StateNotFoundError(key.name) from None

    def delete(self, key: StateKey[T]) -> None:
        self._storage.pop(key.name, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._storage = {k: v.clone() for k, v in self._storage.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        return copy
