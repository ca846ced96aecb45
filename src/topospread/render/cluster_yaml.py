"""The cluster after a scheduling run as a multi-document YAML manifest stream (``schedule -o
yaml``), written document by document, with libyaml's emitter where it writes the same bytes as
PyYAML's."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from typing import IO, Any, Final

import msgspec
import yaml

from topospread.simulator.run import ScheduleRun

# libyaml's emitter where PyYAML was built with it: the same documents, byte for byte, several
# times faster than the pure-Python emitter.
_YAML_DUMPER: Final[type[yaml.SafeDumper]] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def cluster_documents(run: ScheduleRun) -> Iterator[Any]:
    """The cluster after the run, one manifest at a time: nodes, bound pods, finished pods,
    pods left pending, then the other objects."""
    infos = run.cluster.list()
    for info in infos:
        yield _manifest(info.node)
    for info in infos:
        for p in info.pods:
            yield _manifest(p)
    for p in run.scenario.terminal_pods:
        yield _manifest(p)
    for o in run.pending:
        yield _manifest(o.pod)
    for obj in run.scenario.objects:
        yield _manifest(obj)


def write_cluster_yaml(run: ScheduleRun, out: IO[str]) -> None:
    """The cluster after the run as a multi-document manifest stream, ready to feed back in,
    written document by document."""
    dump_yaml_documents(cluster_documents(run), out)


def cluster_yaml(run: ScheduleRun) -> str:
    """``write_cluster_yaml`` into one string (for small runs and tests)."""
    out = io.StringIO()
    write_cluster_yaml(run, out)
    return out.getvalue()


def dump_yaml_documents(documents: Iterable[Any], out: IO[str]) -> None:
    """``yaml.safe_dump_all(documents, out, sort_keys=False, default_flow_style=False)``, the
    same bytes, one document at a time, through libyaml's emitter where that is the same.

    NOTE: libyaml folds long double-quoted scalars differently from PyYAML's Python emitter,
    and disagrees on which keys fit the simple ``key: value`` form (empty keys, keys near 128
    characters, keys with line breaks). A document whose JSON encoding shows a character
    other than printable ASCII and newlines, or an empty, long or multi-line key
    (``_libyaml_safe``), or whose libyaml output holds a double quote at all, is written by the
    Python emitter. Random documents (tests/test_reports.py) check that the result is
    safe_dump_all's, byte for byte.
    """
    options: dict[str, Any] = {"sort_keys": False, "default_flow_style": False}
    if _YAML_DUMPER is yaml.SafeDumper:
        yaml.dump_all(documents, out, Dumper=yaml.SafeDumper, **options)
        return
    # One libyaml dumper for the whole stream, writing each document into ``buffer`` (libyaml
    # flushes at every document end). Every document starts with "---", as dump_all starts
    # every document after the first; the first one's is dropped.
    buffer = io.StringIO()
    fast = _YAML_DUMPER(buffer, explicit_start=True, **options)
    fast.open()
    for n, document in enumerate(documents):
        text = None
        if _libyaml_safe(msgspec.json.encode(document)):
            buffer.seek(0)
            buffer.truncate()
            fast.represent(document)
            text = buffer.getvalue()
            if '"' in text or (n == 0 and not text.startswith("---\n")):
                text = None
            elif n == 0:
                text = text[4:]
        if text is None:
            text = yaml.dump(document, Dumper=yaml.SafeDumper, explicit_start=n > 0, **options)
        out.write(text)
    fast.close()


def _libyaml_safe(encoded: bytes) -> bool:
    """Whether a document's JSON encoding shows only what both YAML emitters write alike:
    printable ASCII and newlines (msgspec writes any other character as UTF-8 or an escape),
    and keys that are not empty, shorter than 100 characters and on one line."""
    if not encoded.isascii():
        return False
    # Escaped backslashes and quotes become two plain characters (as long, and with no quote
    # left inside a string): every backslash left starts an escape of another character.
    plain = encoded.replace(b"\\\\", b"xx").replace(b'\\"', b"xx")
    return _LIBYAML_UNSAFE.search(plain) is None


# An escape other than \n (a control character), DEL, an empty key, a key of 100 characters
# or more (upstream label and annotation keys may reach 317), or a key holding a newline.
# A false match only sends the document to the Python emitter.
_LIBYAML_UNSAFE: Final = re.compile(rb'\\[^n]|\x7f|"":|"[^"\\]{100,}":|\\n[^"]*":')


def _manifest(obj: msgspec.Struct) -> Any:
    """The object as a manifest: apiVersion and kind first (defaults are omitted otherwise)."""
    body = msgspec.to_builtins(obj)
    head = {"apiVersion": getattr(obj, "api_version", ""), "kind": getattr(obj, "kind", "")}
    return {**head, **{k: v for k, v in body.items() if k not in head}}
