"""Manifests as kubectl reads them: files, directories and standard input, each file a YAML
stream (``---``-separated documents) or JSON, Lists flattened; every object with where it came
from (``FILE: object N``), which prefixes its errors.

The YAML and JSON themselves are read by ``api.loader``; this module only finds the files.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Final

from topospread.errors import ManifestError

if TYPE_CHECKING:
    from topospread.api.loader import Object

# What a directory's manifests and case files are called (kubectl's -f DIR: .json .yaml .yml).
MANIFEST_SUFFIXES: Final = (".yaml", ".yml", ".json")
CASE_SUFFIXES: Final = (".yaml", ".yml")
STDIN: Final = "-"

Located = tuple[str, "Object"]


def read_manifests(
    names: Iterable[str | Path],
    stdin: BinaryIO | None = None,
    *,
    meanwhile: Callable[[], object] | None = None,
) -> list[Located]:
    """Every object of the files, directories (searched recursively, sorted) and standard input
    (``-``) named, in order, each with where it came from. A directory without manifests, or a
    path that does not exist, is an error: a wrong path must not pass as an empty cluster.
    ``meanwhile`` is called while forked workers decode a large file, as ``load_text`` says:
    once for each such file, so it should do its work once."""
    # NOTE: imported here, not with this module: a command that reads no manifest (--help
    # among them) does not import the decoders (0.04 s).
    from topospread.api.loader import load_manifests, load_text

    out: list[Located] = []
    for name in names:
        if str(name) == STDIN:
            data = (stdin or sys.stdin.buffer).read()
            out += [
                (f"<stdin>: object {i + 1}", o)
                for i, o in enumerate(load_text(data, "<stdin>", meanwhile=meanwhile))
            ]
            continue
        path = Path(name)
        found = list(files_in(path, MANIFEST_SUFFIXES))
        if not found:
            raise ManifestError(f"{path}: no manifest (*.yaml, *.yml, *.json) found")
        for file in found:
            objs = load_manifests(file, meanwhile=meanwhile)
            out += [(f"{file}: object {i + 1}", o) for i, o in enumerate(objs)]
    return out


def files_in(path: Path, suffixes: Sequence[str]) -> Iterator[Path]:
    """``path`` if it is a file; the files below it with one of ``suffixes``, sorted, if it is a
    directory; an error if it is neither."""
    if path.is_dir():
        yield from sorted(p for p in path.rglob("*") if p.suffix in suffixes and p.is_file())
    elif path.exists():
        yield path
    else:
        raise ManifestError(f"{path}: no such file or directory")


def case_files(paths: Sequence[Path]) -> list[Path]:
    """The case files of ``paths`` (directories searched recursively for *.yaml and *.yml);
    none found is an error (a wrong path must not pass)."""
    found = [file for path in paths for file in files_in(path, CASE_SUFFIXES)]
    if not found:
        named = ", ".join(str(p) for p in paths)
        raise ManifestError(f"{named}: no case file (*.yaml, *.yml) found")
    return found
