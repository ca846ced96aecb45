"""The YAML fast path: rapidyaml parses, emits JSON, and the JSON path decodes it as a JSON
manifest; large files are cut at item or document boundaries and decoded by forked workers.
Exact where it runs: ``yaml_screen`` says which text it declines (and why that suffices),
``yaml_split`` where a large text is cut; anything it cannot decide goes down the exact path
(``goyaml``), which also gives the precise message.
"""

from __future__ import annotations

import mmap
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

try:
    import ryml
except ImportError:  # pragma: no cover - rapidyaml is a dependency; the exact path suffices
    ryml = None

import msgspec

from topospread.api.decode import SMALL_TEXT_BYTES, Object, check_json, load_json
from topospread.api.strict import FieldValidation, current_mode, field_validation
from topospread.api.yaml_screen import (
    ONLY_IN_SCALARS,
    RISKY_JSON_KEY,
    has_directive,
    has_yaml_structure,
    only_in_scalar_text,
    printable,
    utf8,
)
from topospread.api.yaml_split import Parts, reads_exactly, split_yaml
from topospread.api.yaml_workers import PartReader, decode_parts


def available() -> bool:
    """Whether the fast path can run (rapidyaml is installed)."""
    return ryml is not None


def fast_yaml(
    text: str | bytes, source: str, *, meanwhile: Callable[[], object] | None = None
) -> list[Object] | None:
    """Objects through the fast path, or None when it declines or cannot decide.

    A large List or document stream is cut at item or document boundaries into parts of about
    ``_CHUNK_BYTES``, decoded one by one or, with several cores, by this process and forked
    workers together: rapidyaml's tree and JSON for a whole 350 MiB file cost gigabytes, and
    faulting that memory in cost more time than parsing. ``meanwhile`` is called once the
    workers are forked, if they are (see ``decode_parts``).
    """
    if ryml is None:
        return None
    raw = text if isinstance(text, bytes) else text.encode()
    if len(raw) < _FAST_MIN_BYTES:
        if current_mode() is not FieldValidation.IGNORE:
            return None
        if not printable(raw):
            return None  # the exact path names it
    if len(raw) < 2 * _CHUNK_BYTES:
        return _fast_yaml_one(raw, source, _Scratch())
    chunks = split_yaml(raw, len(raw) // _CHUNK_BYTES)
    if chunks is None:
        return _fast_yaml_one(raw, source, _Scratch())
    if not reads_exactly(chunks.outside, source):
        return None
    workers = min((os.cpu_count() or 1) - 1, _MAX_WORKERS - 1, len(chunks) - 1)
    if workers > 0:
        return _fast_yaml_parallel(chunks, workers, meanwhile)
    out: list[Object] = []
    scratch = _Scratch()
    for index in range(len(chunks)):
        objs = _fast_yaml_part(chunks[index], source, scratch)
        if objs is None:
            return None
        out += objs
    return out or None


class _Scratch:
    """rapidyaml's tree and the JSON buffer, reused by the parts one process decodes.

    NOTE: a part's tree (tens of MiB for 4 MiB of YAML) and buffer, allocated for each part,
    had their memory faulted in again for each; cleared, they keep it (a tree parsed into
    after ``clear()`` and ``clear_arena()`` holds the new text alone, as a new tree would).
    """

    def __init__(self) -> None:
        self._tree: Any = None
        self._buffer: mmap.mmap | bytearray = bytearray()

    def tree(self, raw: bytes) -> Any:
        """An empty tree with room for the nodes of ``raw``."""
        if self._tree is None:
            self._tree = ryml.Tree()
        else:
            self._tree.clear()
            self._tree.clear_arena()
        # NOTE: the tree is sized up front from the line count (kubectl output has about 1.2
        # nodes a line): growing it by doubling, copying every node each time, took three
        # quarters of the parse. Capacity only: a larger tree still grows, to the same result.
        # Grown with an eighth to spare, so that the next part, a little larger, fits: each
        # growth copies and clears every node (a tenth of the fast path's time went to
        # growing the reused tree part after part).
        needed = raw.count(b"\n") * 3 // 2 + 16
        if self._tree.capacity() < needed:
            self._tree.reserve(needed + needed // 8)
        return self._tree

    def buffer(self, raw: bytes) -> mmap.mmap | bytearray:
        """A buffer for the JSON of ``raw``'s documents (see ``_emit_json``)."""
        size = 2 * len(raw) + 4096
        if len(self._buffer) < size:
            # NOTE: anonymous memory, not a bytearray, which zeroes (faults in) all of its
            # room: only the pages the JSON is written to are ever faulted in.
            private = getattr(mmap, "MAP_PRIVATE", None)
            self._buffer = bytearray(size) if private is None else mmap.mmap(-1, size, private)
        return self._buffer


@contextmanager
def _stderr_silenced() -> Iterator[None]:
    """rapidyaml's C++ error handler writes to file descriptor 2 before it raises; a file the
    fast path cannot parse goes down the exact path, which says what is wrong in one line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _fast_yaml_one(raw: bytes, source: str, scratch: _Scratch) -> list[Object] | None:
    docs = _json_documents(raw, scratch)
    if docs is None:
        return None
    out: list[Object] = []
    try:
        for n, js in docs:
            where = source if n == 0 else f"{source}: document {n}"
            # Text the fast path reads is large (or not checked): machine-written.
            if not load_json(js, where, out, machine=True):
                return None
    except Exception:
        return None
    return out or None


def _json_documents(raw: bytes, scratch: _Scratch) -> list[tuple[int, bytes]] | None:
    """The JSON of each of ``raw``'s documents that is not empty, with its number in the
    text (0 when the text is one document); None when the fast path declines."""
    if has_directive(raw) or has_yaml_structure(raw):
        return None
    if not only_in_scalar_text(raw, ONLY_IN_SCALARS):
        return None
    if not utf8(raw):
        return None  # the exact path names the first bad byte, as go-yaml refuses the text
    if not printable(raw):
        return None  # the exact path names the character, as go-yaml refuses the text
    try:
        tree = scratch.tree(raw)
        with _stderr_silenced():
            ryml.parse_in_arena(raw, tree=tree)
        root = tree.root_id()
        docs = _children(tree, root) if tree.is_stream(root) else [root]
        out: list[tuple[int, bytes]] = []
        buffer: mmap.mmap | bytearray | None = None
        for n, doc in enumerate(docs, 1):
            if not tree.has_children(doc):
                if tree.has_val(doc) and tree.val(doc).tobytes().strip() not in (b"", b"null"):
                    return None
                continue  # an empty document
            if buffer is None:
                buffer = scratch.buffer(raw)
            # NOTE: JSON on one line, not indented: ryml writes every key and scalar with the
            # same code either way (only the white space between them differs), and the JSON
            # is 45% shorter, which every decode and search of it below pays for.
            tree.set_container_style(doc, ryml.FLOW_SL)
            js = _emit_json(tree, doc, buffer)
            if RISKY_JSON_KEY.search(js) is not None:
                return None
            out.append((0 if len(docs) == 1 else n, js))
    except Exception:
        return None
    return out


def _emit_json(tree: Any, node: int, buffer: mmap.mmap | bytearray) -> bytes:
    """A node of the tree as JSON, emitted into ``buffer`` (sized from the YAML text: the JSON
    of kubectl's YAML is shorter than twice it) or, when it does not fit, into one of the
    exact size.

    NOTE: ``emit_json_malloc`` returns a str, whose decode from and encode back to UTF-8 took
    half of the emit's time; this emits the bytes themselves.
    """
    try:
        with ryml.emit_json_in_place(tree, buffer, node) as emitted:
            return bytes(emitted)
    except IndexError:
        exact = bytearray(ryml.compute_json_length(tree, node))
        with ryml.emit_json_in_place(tree, exact, node) as emitted:
            return bytes(emitted)


# The size of the parts a large text is cut into (yaml_split).
_CHUNK_BYTES: Final = 4 << 20
# Smaller text takes the exact path, which reports duplicate keys (see decode.SMALL_TEXT_BYTES).
_FAST_MIN_BYTES: Final = SMALL_TEXT_BYTES
_MAX_WORKERS: Final = 8  # processes decoding parts at once, this one included


def _fast_yaml_part(raw: bytes, source: str, scratch: _Scratch) -> list[Object] | None:
    """A part of a cut text through the fast path; None when field validation warned: a
    warning names an item by its place in the part (and a worker's would be lost), so the
    exact path reads the whole text again to name them."""
    with field_validation(current_mode()) as warned:
        objs = _fast_yaml_one(raw, source, scratch)
    return None if warned else objs


def _fast_yaml_parallel(
    chunks: Parts | list[bytes], workers: int, meanwhile: Callable[[], object] | None = None
) -> list[Object] | None:
    """The parts read by this process and ``workers`` forked workers together."""
    sizes = chunks.sizes() if isinstance(chunks, Parts) else [len(c) for c in chunks]
    return decode_parts(chunks, sizes, workers, PART_READER, meanwhile)


def _decode_part(raw: bytes, scratch: _Scratch) -> list[Object] | None:
    return _fast_yaml_part(raw, "part", scratch)


# A worker's half of a part: each document's number and JSON.
_DOCUMENTS: Final = msgspec.msgpack.Decoder(list[tuple[int, bytes]])
_ENCODER: Final = msgspec.msgpack.Encoder()


def _prepare_part(raw: bytes, scratch: _Scratch) -> bytes | None:
    """A worker's half of a part (``PartReader``): the JSON of its documents, their field
    validation made (``check_json``); None when the fast path declines, or a check warned
    (see ``_fast_yaml_part``) or failed (the exact path says why)."""
    with field_validation(current_mode()) as warned:
        docs = _json_documents(raw, scratch)
        if docs is None:
            return None
        try:
            for _, js in docs:
                check_json(js)
        except Exception:
            return None
    return None if warned else _ENCODER.encode(docs)


def _finish_part(payload: bytes) -> list[Object] | None:
    """This process's half of a part a worker prepared: the objects of its documents' JSON,
    decoded as ``_fast_yaml_one`` decodes them, the checks the worker made left out."""
    with field_validation(current_mode()) as warned:
        out: list[Object] = []
        try:
            for _, js in _DOCUMENTS.decode(payload):
                if not load_json(js, "part", out, machine=True, checked=True):
                    return None
        except Exception:
            return None
    return None if warned or not out else out


PART_READER: Final = PartReader(_decode_part, _prepare_part, _finish_part, _Scratch)


def _children(tree: Any, node: int) -> list[int]:
    out = []
    child = tree.first_child(node)
    while child != ryml.NONE:
        out.append(child)
        child = tree.next_sibling(child)
    return out
