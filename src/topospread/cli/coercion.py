"""Option values coerced without Typer's pydantic adapters, for the types the CLI uses.

Typer 0.29 turns every command-line value into its parameter's type through a pydantic
``TypeAdapter`` built per parameter when the command runs; importing pydantic and building the
adapters cost every start about 0.05 to 0.08 CPU seconds. For plain ``str``, ``bool``, ``int``,
``float`` (with ``min``/``max``), ``Literal``/``Enum`` choices, ``Path`` and lists of these, the
value a command receives is decided here instead, whenever the outcome is plainly Typer's own
(a decimal integer, a known choice, a path that passes its checks). Anything else — every value
Typer would refuse, every other type, clamped ranges, custom parsers, files, tuples — goes to
Typer's own adapter, built only then, so the messages of bad values stay Typer's word for word.

NOTE: ``typer.core.build_runtime_param`` is private; ``install`` replaces it only on the Typer
version this was checked against (``TYPER_VERSION``, pinned in pyproject.toml), and on any other
leaves Typer's path alone. tests/test_cli_coercion.py holds every shortcut to Typer's result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from pathlib import Path
from typing import Any, Final, Literal, get_args, get_origin

import typer
import typer.core
from typer import _coercion
from typer._click import Context
from typer._param_types import coerce_cli_choice, coerce_cli_path, routes_to_path
from typer.models import ParameterInfo

TYPER_VERSION: Final = "0.29.2"

# The texts whose value Python's int()/float() and pydantic's lax parsing agree on (pydantic
# also takes " 7", "1_0", "5.0", which go to it); short enough to stay below int()'s digit limit.
_INT_TEXT: Final = re.compile(r"-?[0-9]{1,18}")
_FLOAT_TEXT: Final = re.compile(r"-?[0-9]{1,15}(?:\.[0-9]{1,15})?")

_Coerce = Callable[[Any, Any, Context], Any]
# What a shortcut returns when the value is not plainly its type's (or it raises): Typer
# decides, and words any error.
_UNDECIDED: Final = object()


@dataclass(frozen=True)
class ShortcutRuntimeParam(_coercion.RuntimeParam):
    """A parameter's coercion: the shortcut's when it decides, Typer's own otherwise."""

    descriptor: _coercion.TypeDescriptor
    shortcut: _Coerce

    @cached_property
    def typer_param(self) -> _coercion.RuntimeParam:
        """Typer's own coercion of this parameter (pydantic's adapter), built on first need."""
        return _coercion.build_runtime_param(self.descriptor)

    def _coerce_value(self, value: Any, param: Any, ctx: Context) -> Any:
        try:
            found = self.shortcut(value, param, ctx)
        except Exception:  # an error is Typer's to raise, in its words
            found = _UNDECIDED
        if found is _UNDECIDED:
            return self.typer_param._coerce_value(value, param=param, ctx=ctx)
        return found


def _number(kind: type[Any], info: ParameterInfo) -> _Coerce | None:
    if info.clamp:
        return None
    text = _INT_TEXT if kind is int else _FLOAT_TEXT
    low, high = info.min, info.max

    def coerce(value: Any, param: Any, ctx: Context) -> Any:
        if type(value) is str and text.fullmatch(value):
            value = kind(value)
        elif type(value) is not kind:
            return _UNDECIDED
        # Inside the range, said positively: NaN is in no range (pydantic refuses it there).
        if (low is not None and not low <= value) or (high is not None and not value <= high):
            return _UNDECIDED
        return value

    return coerce


def _choice(choices: tuple[Any, ...], case_sensitive: bool) -> _Coerce:
    def coerce(value: Any, param: Any, ctx: Context) -> Any:
        return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)

    return coerce


def _path(info: ParameterInfo) -> _Coerce:
    def coerce(value: Any, param: Any, ctx: Context) -> Any:
        if type(value) is not str:
            return _UNDECIDED
        # Typer's adapter makes the text a Path (pydantic: Path(text)), then checks it; a
        # check that fails is Typer's to report, naming the text as given.
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)

    return coerce


def _same(kind: type[Any]) -> _Coerce:
    def coerce(value: Any, param: Any, ctx: Context) -> Any:
        return value if type(value) is kind else _UNDECIDED

    return coerce


def _each(item: _Coerce) -> _Coerce:
    def coerce(value: Any, param: Any, ctx: Context) -> Any:
        if not isinstance(value, (list, tuple)):
            return _UNDECIDED
        found = [item(v, param, ctx) for v in value]
        return _UNDECIDED if any(f is _UNDECIDED for f in found) else found

    return coerce


def shortcut_for(annotation: Any, info: ParameterInfo) -> _Coerce | None:
    """The shortcut for values of this annotation, or None where Typer alone decides."""
    if info.parser is not None:
        return None
    if get_origin(annotation) is list:
        (item_type,) = get_args(annotation)
        item = shortcut_for(item_type, info)
        return None if item is None else _each(item)
    if get_origin(annotation) is Literal:
        return _choice(get_args(annotation), info.case_sensitive)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(tuple(annotation), info.case_sensitive)
    if annotation is int or annotation is float:
        return _number(annotation, info)
    if annotation is str or annotation is bool:
        return _same(annotation)
    if annotation is Path and info.path_type is None and routes_to_path(annotation, info):
        return _path(info)
    return None


def build_runtime_param(descriptor: _coercion.TypeDescriptor) -> _coercion.RuntimeParam:
    """What ``typer.core`` builds a parameter's coercion with: the shortcut where one fits."""
    shortcut = None
    if descriptor.file_annotation is None:
        shortcut = shortcut_for(descriptor.annotation, descriptor.parameter_info)
    if shortcut is None:
        return _coercion.build_runtime_param(descriptor)
    return ShortcutRuntimeParam(
        parameter_info=descriptor.parameter_info,
        annotation=descriptor.annotation,
        descriptor=descriptor,
        shortcut=shortcut,
    )


def install() -> bool:
    """Use the shortcuts for every command, on the Typer version they were checked against;
    whether they are in use."""
    if typer.__version__ != TYPER_VERSION or not hasattr(typer.core, "build_runtime_param"):
        return False
    typer.core.build_runtime_param = build_runtime_param
    return True
