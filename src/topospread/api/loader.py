"""Manifest files (YAML or JSON, as ``kubectl get -o yaml|json`` prints them) into typed objects:
the entry points every reader of manifests uses.

It reads single objects, multi-document YAML streams, ``kind: List`` and typed lists
(``PodList``, ...), and manifests already parsed by other code (a case file that embeds its
cluster). The work is done by:

- ``goyaml``: YAML as sigs.k8s.io/yaml reads it (go-yaml v2's scalars, limits and duplicate
  keys), the exact path;
- ``yaml_fast``: rapidyaml for large machine-written YAML, exact where it runs, declining
  otherwise;
- ``decode``: the kind registry, JSON straight into the typed structs, field validation per
  object (``strict``), ``go_errors`` for a value of the wrong JSON type in the API server's
  words (the Go types of the fields in ``go_types``), and ``decode_errors`` for any other
  one-line message naming the field.

``null`` means unset wherever the API decodes it so. Every problem is a ``ManifestError`` whose
one-line message names the file, the object and the field.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO, Final

from topospread.api.decode import (
    Object,
    UnknownObject,
    decode_object,
    json_duplicates,
    load_json,
    looks_like_json,
    register_kind,
    walk,
    walk_root,
)
from topospread.api.decode_errors import render
from topospread.api.goyaml import decode_utf8, parse_yaml
from topospread.api.strict import duplicates_marked
from topospread.api.yaml_fast import fast_yaml
from topospread.api.yaml_file import NotCut, cut_file, decode_file
from topospread.errors import ManifestError

# The public API of manifest reading; the decoders live in decode, goyaml and yaml_fast.
__all__ = [
    "Object",
    "UnknownObject",
    "decode_manifest",
    "decode_manifests",
    "decode_object",
    "load_manifests",
    "load_text",
    "read_yaml_documents",
    "register_kind",
]

_END: Final = object()  # the end of the documents, one read ahead

# ---------------------------------------------------------------------------------------------
# Public entry points


def load_manifests(
    path: str | os.PathLike[str], *, meanwhile: Callable[[], object] | None = None
) -> list[Object]:
    """Every object in a YAML or JSON manifest file, Lists flattened, in file order;
    ``meanwhile`` as in ``load_text``.

    A large List is decoded in parts read from the file by the processes that decode them
    (``yaml_file``); any other file is read whole, then decoded.
    """
    source = os.fspath(path)
    once = _Once(meanwhile)
    fast = True
    with _open(source) as file:
        parts = cut_file(file.fileno(), source)
        if parts is not None:
            try:
                with _gc_paused():
                    objs = decode_file(parts, source, once)
            except NotCut:
                objs = None  # read whole, and cut or not as any text
            else:
                if objs is not None:
                    return objs
                fast = False  # a part declined: the exact path reads the file
        text = _read_from(file, source)
    return _decoded(text, source, once, fast=fast)


def load_text(
    text: str | bytes, source_name: str, *, meanwhile: Callable[[], object] | None = None
) -> list[Object]:
    """Every object in manifest text; ``source_name`` prefixes error messages.

    ``meanwhile``, when given, is called once while forked workers decode parts of a large
    text, before this process decodes its own (the caller's other work, such as the imports
    it needs next, then costs no wall time of its own); it is not called when no worker is
    forked. What it raises is raised here.
    """
    return _decoded(text, source_name, meanwhile)


def _decoded(
    text: str | bytes,
    source_name: str,
    meanwhile: Callable[[], object] | None,
    *,
    fast: bool = True,
) -> list[Object]:
    """``load_text``; without ``fast``, YAML goes down the exact path at once."""
    try:
        return _load_text(text, source_name, meanwhile, fast)
    except RecursionError as err:
        # Nesting below go-yaml's MAX_DEPTH that is still too deep for the decoders here; no
        # manifest comes close (a pod's spec nests about a dozen levels).
        raise ManifestError(
            f"{source_name}: could not decode: nested too deeply "
            f"(more than {sys.getrecursionlimit()} levels)"
        ) from err


def _load_text(
    text: str | bytes, source_name: str, meanwhile: Callable[[], object] | None, fast: bool
) -> list[Object]:
    out: list[Object] = []
    with _gc_paused():
        if looks_like_json(text):
            raw = text if isinstance(text, bytes) else text.encode()
            if not raw.isascii():
                # msgspec checks the strings it decodes, not those it skips (an unknown
                # field's, read leniently): the text is checked whole, as go-yaml reads it.
                decode_utf8(raw, source_name)
            marked = json_duplicates(raw)
            if marked is not None:
                with duplicates_marked():
                    walk_root(marked, source_name, out)
                return out
            if load_json(raw, source_name, out):
                return out
        objs = fast_yaml(text, source_name, meanwhile=meanwhile) if fast else None
        if objs is not None:
            return objs
        if isinstance(text, bytes):
            text = decode_utf8(text, source_name)
        if not text or text.isspace():
            raise ManifestError(f"{source_name}: the file is empty")
        # Documents are decoded as they are parsed, one read ahead: a file of one document
        # names no document number in its errors.
        docs = parse_yaml(text, source_name)
        doc, ahead = next(docs, _END), next(docs, _END)
        single, n, empty = ahead is _END, 1, True
        while doc is not _END:
            empty = empty and doc is None
            walk_root(doc, source_name if single else f"{source_name}: document {n}", out)
            doc, ahead, n = ahead, next(docs, _END) if ahead is not _END else _END, n + 1
        if empty:
            raise ManifestError(
                f"{source_name}: no objects: the file holds only comments or empty documents"
            )
    return out


def decode_manifests(data: Any, source: str) -> list[Object]:
    """Objects from already-parsed data: one manifest, a List, or a list of them (None is [])."""
    out: list[Object] = []
    with _gc_paused():
        walk(data, source, None, out)
    return out


def decode_manifest(data: Any, where: str) -> list[Object]:
    """Objects from one item of a scenario's list of manifests (its ``objects``, an ``apply``
    step's): a manifest, or a List of them. A sequence or a null there is refused, as a List's
    item is: it was read as more (or no) objects, in silence."""
    if data is None or isinstance(data, list):
        raise ManifestError(f"{where}: expected an object (a mapping), got {render(data)}")
    return decode_manifests(data, where)


def read_yaml_documents(path: str | os.PathLike[str]) -> list[Any]:
    """The non-empty documents of a YAML file, parsed with Kubernetes' YAML rules."""
    source = os.fspath(path)
    text = _read(source)
    with _gc_paused():
        return [doc for doc in parse_yaml(decode_utf8(text, source), source) if doc is not None]


# ---------------------------------------------------------------------------------------------
# Reading files


def _read(source: str) -> bytes:
    with _open(source) as file:
        return _read_from(file, source)


def _open(source: str) -> BinaryIO:
    try:
        return open(source, "rb")  # the callers close it
    except OSError as err:
        raise _unreadable(source, err) from err


def _read_from(file: BinaryIO, source: str) -> bytes:
    try:
        return file.read()
    except OSError as err:
        raise _unreadable(source, err) from err


def _unreadable(source: str, err: OSError) -> ManifestError:
    if isinstance(err, FileNotFoundError):
        return ManifestError(f"{source}: no such file or directory")
    if isinstance(err, IsADirectoryError):
        return ManifestError(f"{source}: is a directory, not a manifest file")
    return ManifestError(f"{source}: cannot read the file: {err.strerror}")


class _Once:
    """``meanwhile`` called at most once, however many tries a file's decoding takes."""

    def __init__(self, meanwhile: Callable[[], object] | None) -> None:
        self._meanwhile = meanwhile

    def __call__(self) -> None:
        meanwhile, self._meanwhile = self._meanwhile, None
        if meanwhile is not None:
            meanwhile()


@contextmanager
def _gc_paused() -> Iterator[None]:
    # A bulk load allocates millions of objects that all survive; collections triggered by the
    # allocation count would rescan them again and again for nothing.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
