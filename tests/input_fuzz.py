"""A mutation fuzzer for every command's inputs, deterministic by seed.

Each example input under ``examples/`` (scenarios, cases, timelines, check manifests and
autoscaler sections, verify scenarios, ``--then`` steps, a scheduler configuration, a
kubeconfig) is mutated — a key misspelled at some depth, a value given another type, a bad
quantity, a huge integer, or the file's bytes broken: empty, a duplicate key, an alias bomb, a
tab, a BOM, cut short, bytes that are no UTF-8 — and the command that reads it is run
in-process (the CLI's ``main``). A run is a finding when it:

- raises (a traceback),
- exits with a code other than 0, 2, or 1 where the command documents 1 for a finding,
- exits 2 without exactly one ``topospread: error:`` line, or with one that does not name the
  mutated file,
- exits 0 (or 1) on a mutation kubectl or the API server (or our own strict formats) refuses:
  a misspelled key of a struct, a value of another JSON type where the field takes one type,
  a duplicate key, an alias bomb, bytes that are no UTF-8.

``tests/test_input_fuzz.py`` runs a few hundred cases; ``bench/fuzz_inputs.py`` runs more.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import random
import re
import shutil
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from input_fuzz_targets import Target, targets
from topospread.cli import main

# Maps whose keys are the user's (labels, resources, node names ...), in Kubernetes objects and
# in our own formats: a key renamed in one of them is a new key, not a misspelling.
FREE_FORM: Final = frozenset(
    {
        "labels",
        "annotations",
        "matchLabels",
        "nodeSelector",
        "data",
        "stringData",
        "binaryData",
        "allocatable",
        "capacity",
        "requests",
        "limits",
        "parameters",
        "hard",
        "overhead",
        "filter",
        "counts",
        "volumeAttributes",
        "attributes",
        "selector",  # a Service's selector; a workload's is a struct below matchLabels
    }
)


@dataclass(frozen=True)
class Mutation:
    """One change to a target's input."""

    kind: str
    where: str
    data: bytes
    # Whether kubectl, the API server or our strict formats refuse the input so changed.
    must_refuse: bool


@dataclass
class Finding:
    target: str
    mutation: Mutation
    problem: str
    code: int | None
    err: str

    def line(self) -> str:
        last = self.err.strip().splitlines()[-1:] or [""]
        return (
            f"{self.target} | {self.mutation.kind} {self.mutation.where} | {self.problem} "
            f"(exit {self.code}) | {last[0][:300]}"
        )


# ---------------------------------------------------------------------------- mutations


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if at:
        yield at
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*at, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _paths(inner, (*at, i))


def _dump(docs: list[Any], as_json: bool = False) -> bytes:
    if as_json and len(docs) == 1:
        return json.dumps(docs[0], indent=1).encode()
    return yaml.safe_dump_all(docs, sort_keys=False, explicit_start=len(docs) > 1).encode()


def _misspell(key: str, rng: random.Random) -> str:
    if len(key) < 3:
        return key + "x"
    how = rng.choice(("swap", "drop", "double", "suffix", "case"))
    i = rng.randrange(len(key) - 1)
    if how == "swap" and key[i] != key[i + 1]:
        return key[:i] + key[i + 1] + key[i] + key[i + 2 :]
    if how == "drop":
        return key[:i] + key[i + 1 :]
    if how == "double":
        return key[: i + 1] + key[i] + key[i + 1 :]
    if how == "case" and key[0].isalpha():
        return key[0].swapcase() + key[1:]
    return key + "z"


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    return "map"


OTHER_VALUES: Final = ("x", 7, 2.5, True, [], ["x"], {}, {"a": "b"}, None)
# YAML scalars with a meaning of their own (YAML 1.1 as Kubernetes reads it), written in place
# of a value: tags, special floats, bases, timestamps, merge keys, binary.
PLACEHOLDER: Final = "PLACEHOLDER-7f3e"
YAML_TOKENS: Final = (
    ".nan",
    ".inf",
    "-.inf",
    "0x1F",
    "0o17",
    "017",
    "1_000",
    "2024-01-01",
    "2024-01-01T10:00:00Z",
    "!!binary aGVsbG8=",
    "!!str 5",
    "!!int '5'",
    "!!float 1",
    "!!python/object:os.system ls",
    "!custom x",
    "y",
    "~",
    "'",
    '"\\x"',
    "*undefined",
    "&anchor 5",
    "{a: 1, a: 2}",
    "[1, [2, [3]]]",
    "123456789012345678901234567890",
    "1e400",
)
# Keys of our own formats whose value takes one of several JSON types (a timeline's perZone is
# a count or a count per zone; a node step's nodes a name or a list ...).
UNIONS: Final = {
    "perZone": {"number", "map"},
    "apply": {"map", "list"},
    "drain": {"string", "list", "map"},
    "loseZone": {"string", "map"},
    "restoreZone": {"string", "map"},
    **{
        step: {"string", "list"}
        for step in ("cordon", "uncordon", "removeNode", "loseNode", "restoreNode", "deletePods")
    },
    "node": {"string", "list"},
    "nodes": {"string", "list"},
}
BAD_QUANTITIES: Final = ("1Gi ", "1.5.2", "-1", "1e400", "", "1Qi", "0x10")
HUGE_INTS: Final = (2**31, 2**63, 10**30, -(2**63) - 1)
QUANTITY_PARENTS: Final = frozenset({"requests", "limits", "allocatable", "capacity", "hard"})
# Keys whose value kubectl and the API server take as a string or a number alike.
INT_OR_STRING: Final = frozenset(
    {"maxUnavailable", "maxSurge", "minAvailable", "port", "targetPort", "partition"}
)


def _parent_key(path: tuple[Any, ...]) -> Any:
    for key in reversed(path[:-1]):
        if isinstance(key, str):
            return key
    return None


def _structural(docs: list[Any], rng: random.Random, as_json: bool = False) -> Mutation | None:
    docs = copy.deepcopy(docs)
    choices = [(d, p) for d, doc in enumerate(docs) for p in _paths(doc)]
    if not choices:
        return None
    d, path = rng.choice(choices)
    parent: Any = docs[d]
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    where = f"doc {d} " + ".".join(str(p) for p in path)
    value = parent[last]
    kind = rng.choice(("rename", "retype", "retype", "quantity", "huge", "token", "key"))
    if kind == "token" and not as_json and not isinstance(value, dict | list):
        token = rng.choice(YAML_TOKENS)
        parent[last] = PLACEHOLDER
        text = _dump(docs).decode()
        text = text.replace(f"'{PLACEHOLDER}'", token).replace(PLACEHOLDER, token)
        return Mutation("token", f"{where} = {token}", text.encode(), must_refuse=False)
    if kind == "key" and isinstance(last, str) and isinstance(parent, dict):
        new_key = rng.choice((1, True, None, 2.5))
        if new_key in parent:
            return None
        parent[new_key] = parent.pop(last)
        free = len(path) >= 2 and path[-2] in FREE_FORM
        return Mutation(
            "key", f"{where} -> {new_key!r}", _dump(docs, as_json), must_refuse=not free
        )
    if kind == "rename" and isinstance(last, str):
        new = _misspell(last, rng)
        if new == last or new in parent:
            return None
        parent[new] = parent.pop(last)
        # A key right under a map of keys the user names is the user's; a selector is a
        # Service's map of labels unless it holds a label selector's fields.
        free = len(path) >= 2 and path[-2] in FREE_FORM
        if path[-2:-1] == ("selector",) and last in ("matchLabels", "matchExpressions"):
            free = False
        return Mutation("rename", f"{where} -> {new}", _dump(docs, as_json), must_refuse=not free)
    if kind == "quantity" and isinstance(value, str | int) and not isinstance(value, bool):
        bad = rng.choice(BAD_QUANTITIES)
        parent[last] = bad
        # Quantity.UnmarshalJSON trims spaces, and 1e400 is a quantity (a huge one).
        quantity = _parent_key(path) in QUANTITY_PARENTS and bad not in ("1Gi ", "1e400")
        return Mutation(
            "quantity", f"{where} = {bad!r}", _dump(docs, as_json), must_refuse=quantity
        )
    if kind == "huge" and isinstance(value, int) and not isinstance(value, bool):
        parent[last] = rng.choice(HUGE_INTS)
        return Mutation(
            "huge", f"{where} = {parent[last]}", _dump(docs, as_json), must_refuse=False
        )
    new_value = rng.choice([v for v in OTHER_VALUES if _type_of(v) != _type_of(value)])
    parent[last] = new_value
    before, after = _type_of(value), _type_of(new_value)
    refuse = before != "null" and after != "null"
    if isinstance(last, str) and last in INT_OR_STRING and {before, after} <= {"string", "number"}:
        refuse = False
    if isinstance(last, str) and {before, after} <= UNIONS.get(last, set()):
        refuse = False
    if _parent_key(path) in QUANTITY_PARENTS and {before, after} <= {"string", "number"}:
        refuse = False
    if (
        _parent_key(path) in FREE_FORM - QUANTITY_PARENTS
        and isinstance(last, str)
        and after in ("string", "number")
    ):
        # A label's (an annotation's ...) value is a string: a number is refused.
        refuse = after != "string"
    return Mutation(
        "retype", f"{where}: {before} -> {after}", _dump(docs, as_json), must_refuse=refuse
    )


BOMB: Final = (
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
    "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
)


def _textual(text: str, rng: random.Random) -> Mutation | None:
    raw = text.encode()
    lines = text.splitlines(keepends=True)
    kind = rng.choice(
        ("empty", "duplicate", "bomb", "tab", "bom", "truncate", "non-utf8", "comments")
    )
    if kind == "empty":
        data = rng.choice((b"", b"---\n", b"\n\n", b"--- \n...\n", b"null\n", b"[]\n"))
        return Mutation("empty", repr(data), data, must_refuse=False)
    if kind == "comments":
        return Mutation("empty", "comments only", b"# nothing here\n", must_refuse=False)
    if kind == "duplicate":
        keyed = [
            i
            for i, line in enumerate(lines)
            if ":" in line
            and not line.lstrip().startswith(("#", "-", "{"))
            and line.rstrip().endswith(":") is False
            and "{" not in line
        ]
        if not keyed:
            return None
        i = rng.choice(keyed)
        data = "".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]).encode()
        return Mutation("duplicate", f"line {i + 1} {lines[i].strip()}", data, must_refuse=True)
    if kind == "bomb":
        return Mutation("bomb", "alias bomb", BOMB.encode() + raw, must_refuse=True)
    if kind == "tab":
        indented = [i for i, line in enumerate(lines) if line.startswith("  ")]
        if not indented:
            return None
        i = rng.choice(indented)
        lines = [*lines]
        lines[i] = "\t" + lines[i][2:]
        data = "".join(lines)
        # A tab may separate tokens in flow context: refused only where libyaml (go-yaml's
        # parent) refuses it.
        try:
            list(yaml.load_all(data, Loader=yaml.CSafeLoader))
            refused = False
        except yaml.YAMLError:
            refused = True
        return Mutation("tab", f"line {i + 1}", data.encode(), must_refuse=refused)
    if kind == "bom":
        return Mutation("bom", "UTF-8 BOM", b"\xef\xbb\xbf" + raw, must_refuse=False)
    if kind == "truncate":
        cut = rng.randrange(1, max(2, len(raw)))
        return Mutation("truncate", f"at byte {cut}", raw[:cut], must_refuse=False)
    at = rng.randrange(len(raw) + 1)
    bad = rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00"))
    return Mutation(
        "non-utf8", f"{bad!r} at byte {at}", raw[:at] + bad + raw[at:], must_refuse=True
    )


def mutations(target: Target, rng: random.Random, count: int) -> list[Mutation]:
    """``count`` mutations of ``target``'s input, drawn from ``rng``."""
    docs = [d for d in yaml.safe_load_all(target.text)]
    out: list[Mutation] = []
    tries = 0
    while len(out) < count and tries < count * 20:
        tries += 1
        as_json = target.file_name.endswith(".json")
        made = _structural(docs, rng, as_json) if rng.random() < 0.7 else _textual(target.text, rng)
        if made is not None:
            out.append(made)
    return out


# ---------------------------------------------------------------------------- running


# What even a lenient reader (client-go's kubeconfig loader) refuses.
LENIENT_REFUSALS: Final = frozenset({"bomb", "tab", "non-utf8"})


def run_one(target: Target, mutation: Mutation, workdir: Path) -> Finding | None:
    """Run ``target``'s command on ``mutation``'s input; a finding, or None when fine."""
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    path = workdir / "in" / target.file_name
    path.parent.mkdir()
    path.write_bytes(mutation.data)
    argv = target.argv(path, workdir)
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    code: int | None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if target.plugin:
                from topospread import kubectl

                kubectl.main(argv)
            else:
                main(argv)
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        except BaseException:  # every escape is a finding
            code = None
            err.write(traceback.format_exc())
    err.flush()
    text = err.buffer.getvalue().decode(errors="replace")  # type: ignore[attr-defined]

    def found(problem: str) -> Finding:
        return Finding(target.name, mutation, problem, code, text)

    if code is None or "Traceback" in text:
        return found("traceback")
    if code not in {0, 2} | target.also:
        return found("exit code")
    if code == 2:
        errors = [line for line in text.splitlines() if line.startswith("topospread: error:")]
        if len(errors) != 1:
            return found("not one error line")
        said = errors[0].removeprefix("topospread: error: ")
        # An option's own error (explain --pod naming no queued pod) names the option.
        if (
            target.file_name not in said
            and target.after_reading not in said
            and not said.startswith("--")
        ):
            return found("no file name")
        return None
    if mutation.must_refuse and (target.strict or mutation.kind in LENIENT_REFUSALS):
        return found("accepted")
    if code == 0 and target.conserved is not None:
        out.flush()
        lost = target.conserved(mutation.data, out.buffer.getvalue().decode())  # type: ignore[attr-defined]
        if lost is not None:
            return found(f"dropped: {lost}")
    return None


# Findings in code another change owns, each with why it is left (the fuzzer reports them
# apart): none at present (the in-place node groups' template, name and zones, the first ones,
# are checked where they are declared since parse_node_group validates the nodes they make).
KNOWN: Final[tuple[tuple[str, re.Pattern[str]], ...]] = ()


def known(finding: Finding) -> bool:
    """Whether ``finding`` is one of KNOWN's."""
    return any(
        finding.target == target and pattern.search(finding.mutation.where)
        for target, pattern in KNOWN
    )


@dataclass
class Report:
    runs: int = 0
    findings: list[Finding] = field(default_factory=list)
    known: list[Finding] = field(default_factory=list)


def fuzz(seed: int, per_target: int, only: str | None = None, *, exact: bool = False) -> Report:
    """Mutate every target's input ``per_target`` times (seeded) and run each; ``only``: the
    targets whose name contains it (is it, when ``exact``)."""
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        for target in targets():
            if only and (only != target.name if exact else only not in target.name):
                continue
            rng = random.Random(f"{seed}:{target.name}")
            for mutation in mutations(target, rng, per_target):
                report.runs += 1
                finding = run_one(target, mutation, Path(tmp, "case"))
                if finding is not None:
                    (report.known if known(finding) else report.findings).append(finding)
    return report
