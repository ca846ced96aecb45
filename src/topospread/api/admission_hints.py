"""What admission learns of each decoded pod before it admits it, learnt by the process that
decoded the pod: its admission key (the fields admission reads, see
``simulator.pod_admission.AdmissionMemo``) and whether ``pod_fields_valid`` holds for it.

A large file is decoded by this process and a forked worker together
(``yaml_workers.decode_parts``); while collecting (``collecting()``, around the read), each
decodes a part's pods and finds their hints at once, and the worker sends its parts' hints
beside their objects. Admission then takes a pod's key and check from its hint instead of
making them again.

NOTE: exact because a hint holds the very values admission would compute: the key is the
msgpack of the pod's fields, and the worker's pods reach this process as msgpack decoded into
the same types, which encodes to the same bytes again (tests/test_admission_hints.py); the
check is a function of the pod's fields alone. A pod without a hint (decoded otherwise, or
made later) is keyed and checked as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

import msgspec

from topospread.api.decode import Object
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod

# A part's hints sent by a worker: the distinct keys of its pods, and for each of its objects
# -1 (not a pod) or twice its key's index in the list, plus 1 when its fields are valid.
PartHints = tuple[list[bytes], list[int]]

_KEY: Final = msgspec.msgpack.Encoder()


def admission_key(pod: Pod) -> bytes:
    """The fields of ``pod`` that admission reads and sets, as bytes: pods with equal keys
    are admitted alike (``AdmissionMemo``'s NOTE says which fields, and why)."""
    meta, spec = pod.metadata, pod.spec
    affinity = spec.affinity
    return _KEY.encode(
        (
            meta.labels,
            meta.annotations,
            spec.containers,
            spec.init_containers,
            spec.restart_policy,
            spec.resources,
            None if affinity is None else (affinity.pod_affinity, affinity.pod_anti_affinity),
            spec.topology_spread_constraints,
            spec.node_selector,
            spec.tolerations,
            spec.scheduling_gates,
            spec.overhead,
            spec.priority,
            spec.priority_class_name,
            spec.preemption_policy,
        )
    )


class AdmissionHints:
    """Each hinted pod's admission key and ``pod_fields_valid``, found by the pod itself."""

    __slots__ = ("_by_id",)

    def __init__(self) -> None:
        # id -> the pod (held, so that its id is not reused), its key, whether it is valid.
        self._by_id: dict[int, tuple[Pod, bytes, bool]] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, pod: Pod) -> tuple[bytes, bool] | None:
        """The pod's key and whether its own fields are valid; None when it has no hint."""
        found = self._by_id.get(id(pod))
        if found is None or found[0] is not pod:
            return None
        return found[1], found[2]

    def add_objects(self, objs: Sequence[Object]) -> None:
        """Find the hints of the pods among ``objs``."""
        by_id = self._by_id
        for obj in objs:
            if type(obj) is Pod:
                by_id[id(obj)] = (obj, admission_key(obj), pod_fields_valid(obj))

    def add_part(self, objs: Sequence[Object], hints: PartHints) -> None:
        """Take a worker's hints (``part_hints``) for ``objs``, its part's objects as decoded
        here."""
        keys, codes = hints
        if len(codes) != len(objs):
            return  # not expected: the objects are then admitted without hints
        by_id = self._by_id
        for obj, code in zip(objs, codes, strict=True):
            if code >= 0 and type(obj) is Pod:
                by_id[id(obj)] = (obj, keys[code >> 1], bool(code & 1))


_COLLECTING: AdmissionHints | None = None


@contextmanager
def collecting() -> Iterator[AdmissionHints]:
    """Hints for the pods that the parallel read (and its workers, forked meanwhile) decodes
    until the block ends."""
    global _COLLECTING
    before, _COLLECTING = _COLLECTING, AdmissionHints()
    try:
        yield _COLLECTING
    finally:
        _COLLECTING = before


def note_decoded(objs: Sequence[Object]) -> None:
    """Hints for the pods among ``objs``, decoded by this process, when collecting."""
    if _COLLECTING is not None:
        _COLLECTING.add_objects(objs)


def part_hints(objs: Sequence[Object]) -> PartHints | None:
    """A worker's hints for the pods among its part's ``objs``, to send with them; None when
    not collecting."""
    if _COLLECTING is None:
        return None
    keys: dict[bytes, int] = {}
    codes: list[int] = []
    for obj in objs:
        if type(obj) is Pod:
            key = admission_key(obj)
            index = keys.setdefault(key, len(keys))
            codes.append(2 * index + pod_fields_valid(obj))
        else:
            codes.append(-1)
    return list(keys), codes


def note_part(objs: Sequence[Object], hints: PartHints | None) -> None:
    """Take a worker's hints for its part's ``objs`` (decoded here), when collecting."""
    if _COLLECTING is not None and hints is not None:
        _COLLECTING.add_part(objs, hints)
