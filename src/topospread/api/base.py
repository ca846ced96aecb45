"""The base of every API struct, shared by the core kinds (types.py), the volume sources a pod
and a PersistentVolume both carry (volumes.py) and the storage kinds (storage.py)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec

# A Go int32 field: the API server's JSON decoder refuses a number outside its range, so the
# typed decode does too (a replicas of 3000000000 would otherwise be read and acted on).
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
Int32: TypeAlias = Annotated[int, msgspec.Meta(ge=INT32_MIN, le=INT32_MAX)]


class _Obj(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True, gc=False):
    """Base of every API struct: immutable, keyword-only, camelCase on the wire.

    ``gc=False``: frozen plain data cannot form reference cycles, so the garbage collector need
    not track (and rescan) millions of loaded objects.

    Subclasses repeat ``frozen=True`` only so that type checkers see it (msgspec inherits it).
    """
