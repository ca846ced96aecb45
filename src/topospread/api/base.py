"""The base of every API struct, shared by the core kinds (types.py), the volume sources a pod
and a PersistentVolume both carry (volumes.py) and the storage kinds (storage.py)."""

from __future__ import annotations

import msgspec


class _Obj(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True, gc=False):
    """Base of every API struct: immutable, keyword-only, camelCase on the wire.

    ``gc=False``: frozen plain data cannot form reference cycles, so the garbage collector need
    not track (and rescan) millions of loaded objects.

    Subclasses repeat ``frozen=True`` only so that type checkers see it (msgspec inherits it).
    """
