"""Copies of a simulation's whole state, to replay many futures from one settled present.

A :class:`Snapshot` is the pickled state of a :class:`~topospread.simulator.simulation.
Simulation` — cluster, scheduler queue and caches, controllers, clock, taint manager and
budgets — taken once; every :meth:`Snapshot.restore` gives an independent simulation equal to
the one snapshotted, as if it had been loaded and settled again. Its bytes cross process and
machine boundaries unchanged, so a process pool or a Ray cluster replays exactly what the
caller would.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import os
import pickle
import signal
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

import msgspec

import topospread.api.types

_PROTOCOL: Final = pickle.HIGHEST_PROTOCOL

D = TypeVar("D", bound=dict[Any, Any])
T = TypeVar("T")
R = TypeVar("R")
K = TypeVar("K")
V = TypeVar("V")


def restore_dict_subclass(cls: type[D], items: dict[Any, Any], state: dict[str, Any]) -> D:
    """Rebuild an indexing dict subclass from its items and attributes without replaying its
    ``__setitem__`` (whose indexes are part of ``state``): their ``__reduce__``."""
    obj = cls.__new__(cls)
    dict.update(obj, items)
    obj.__dict__.update(state)
    return obj


class IndexedDict(dict[K, V]):
    """A dict whose subclass keeps indexes in ``__setitem__``, ``__delitem__``, ``pop`` and
    ``clear``: every other way in goes through those, and pickling (Simulation.snapshot)
    restores the items and the indexes without replaying them."""

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def setdefault(self, key: K, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple[K, V]:
        key = next(reversed(self))
        return key, self.pop(key)

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_dict_subclass, (type(self), dict(self), self.__dict__))


@functools.cache
def _struct_defaults() -> dict[str, Any]:
    """The Struct-valued field defaults of the API types by ``Class.field``. msgspec leaves a
    field out of JSON (``omit_defaults``) when it *is* its default object, so a copy of one
    would show up in encodings, and in the template hashes taken of them."""
    found: dict[str, Any] = {}
    todo = list(msgspec.Struct.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__ != topospread.api.types.__name__:
            continue
        for f in msgspec.structs.fields(cls):
            if isinstance(f.default, msgspec.Struct):
                found[f"{cls.__qualname__}.{f.name}"] = f.default
    return found


@functools.cache
def _struct_default_ids() -> dict[int, str]:
    return {id(obj): key for key, obj in _struct_defaults().items()}


def struct_default(key: str) -> Any:
    """The default object itself, in the unpickling process (see ``_struct_defaults``)."""
    return _struct_defaults()[key]


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        key = _struct_default_ids().get(id(obj))
        if key is not None and _struct_defaults()[key] is obj:
            return (struct_default, (key,))
        return NotImplemented


class Snapshot(Generic[T]):
    """A simulation's state frozen as bytes; ``restore()`` any number of times."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data

    @classmethod
    def of(cls, obj: T) -> Snapshot[T]:
        out = io.BytesIO()
        _Pickler(out, protocol=_PROTOCOL).dump(obj)
        return cls(out.getvalue())

    def restore(self) -> T:
        obj: T = pickle.loads(self.data)
        return obj

    def __len__(self) -> int:
        return len(self.data)


FORKS: Final = hasattr(os, "fork")


class ChildDied(RuntimeError):
    """The child ``call_forked`` forked died before it answered (killed by a signal, say the
    OOM killer's): ``exitcode`` as ``multiprocessing`` gives it (minus the signal)."""

    def __init__(self, exitcode: int) -> None:
        super().__init__(f"the forked child died before it answered (exit code {exitcode})")
        self.exitcode = exitcode


def call_forked(fn: Callable[[T], R], obj: T) -> R:
    """``fn(obj)`` in a child forked from this process: the child's copy of ``obj`` costs
    what ``fn`` touches (copy-on-write), and its exit frees it without a garbage collection.
    The result (or the error) comes back pickled; the child always exits here, never back
    into its caller's code. POSIX only (``FORKS``)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            os.close(read)
            gc.disable()
            try:
                payload = pickle.dumps((True, fn(obj)), protocol=_PROTOCOL)
            except BaseException as err:  # every error goes to the parent
                try:
                    payload = pickle.dumps((False, err))
                except Exception:
                    payload = pickle.dumps((False, RuntimeError(repr(err))))
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    try:
        with os.fdopen(read, "rb") as source:
            data = source.read()
        _, status = os.waitpid(pid, 0)
    except BaseException:  # Ctrl-C, say: the child's answer is not wanted any more
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        raise
    if not data:
        raise ChildDied(os.waitstatus_to_exitcode(status))
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    result: R = value
    return result


class Copies(Generic[T]):
    """Independent copies of one object to run functions on, the object itself untouched:
    in a forked child where the platform forks (``call_forked``), else on a snapshot
    restored for each call (taken once, on first use)."""

    __slots__ = ("_obj", "_snapshot")

    def __init__(self, obj: T) -> None:
        self._obj = obj
        self._snapshot: Snapshot[T] | None = None

    def run(self, fn: Callable[[T], R]) -> R:
        if FORKS:
            return call_forked(fn, self._obj)
        if self._snapshot is None:
            self._snapshot = Snapshot.of(self._obj)
        return fn(self._snapshot.restore())
