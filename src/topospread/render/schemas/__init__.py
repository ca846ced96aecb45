"""The JSON Schema of each command's ``-o json`` document (``evaluate``: of each line), shipped
with the package so a reader can validate what it parses; tests/test_json_schemas.py checks
every command's output against its schema."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any, Final

SCHEMA_COMMANDS: Final = (
    "evaluate",
    "schedule",
    "explain",
    "verify",
    "design",
    "simulate",
    "sweep",
    "check",
    "rebalance",
)


def load_schema(command: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``command``'s JSON output."""
    if command not in SCHEMA_COMMANDS:
        raise KeyError(f"no schema for {command!r}: one of {', '.join(SCHEMA_COMMANDS)}")
    text = files(__name__).joinpath(f"{command}.schema.json").read_text(encoding="utf-8")
    doc: dict[str, Any] = json.loads(text)
    return doc


__all__ = ["SCHEMA_COMMANDS", "load_schema"]
