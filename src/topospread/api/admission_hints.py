"""What admission learns of each decoded pod before it admits it, learnt by the process that
decoded the pod: its admission key (the fields admission reads, see
``simulator.pod_admission.AdmissionMemo``) and whether ``pod_fields_valid`` holds for it.

A large file is read by this process and a forked worker together
(``yaml_workers.decode_parts``); while collecting (``collecting()``, around the read), this
process finds the hints of each part's pods once it has their objects, whichever process read
the part's text. Admission then takes a pod's key and check from its hint instead of making
them again.

NOTE: exact because a hint holds the very values admission would compute, of the very object
it admits: the key is the msgpack of the pod's fields, and the check a function of the pod's
fields alone. A pod without a hint (decoded otherwise, or made later) is keyed and checked as
before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Final

import msgspec

from topospread.api.decode import Object
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod

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
            spec.security_context,
            spec.os,
            spec.ephemeral_containers,
            spec.host_network,
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


_COLLECTING: AdmissionHints | None = None


@contextmanager
def collecting() -> Iterator[AdmissionHints]:
    """Hints for the pods that the parallel read decodes until the block ends."""
    global _COLLECTING
    before, _COLLECTING = _COLLECTING, AdmissionHints()
    try:
        yield _COLLECTING
    finally:
        _COLLECTING = before


def note_decoded(objs: Sequence[Object]) -> None:
    """Hints for the pods among ``objs``, a part's objects, when collecting.

    NOTE: found during the read, not by admission after it: while this process finds them,
    the worker reads more of the parts, which this process would otherwise have read."""
    if _COLLECTING is not None:
        _COLLECTING.add_objects(objs)
