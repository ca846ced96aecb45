"""The jsonl report's bytes around each attempt's detail fragment: the header line, a line's
bytes before its attempts, an attempt's before its fragment (``report._encode_outcome`` puts
them together; ``DetailSpill`` encodes a line of one attempt as it becomes final, for
``streaming.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import msgspec

if TYPE_CHECKING:
    from topospread.framework.runtime import Framework
    from topospread.simulator.decision import Decision

# What ends a line of one attempt after its fragment: the attempt's brace, the list's bracket,
# the line's brace.
LINE_END: Final = b"}]}\n"


def header_line(encoder: msgspec.json.Encoder, frameworks: Mapping[str, Framework]) -> bytes:
    """The report's first line: the profile's plugins (and every profile's, with several)."""
    first = next(iter(frameworks.values()))
    header: dict[str, Any] = {"plugins": first.describe()}
    if len(frameworks) > 1:
        header["profiles"] = {name: f.describe() for name, f in frameworks.items()}
    return encoder.encode(header) + b"\n"


def outcome_head(
    encoder: msgspec.json.Encoder, key: str, node: str | None, message: str | None, buf: bytearray
) -> None:
    """A line's bytes before its attempts."""
    buf += b'{"pod":'
    encoder.encode_into(key, buf, -1)
    buf += b',"node":'
    encoder.encode_into(node, buf, -1)
    buf += b',"message":'
    encoder.encode_into(message, buf, -1)
    buf += b',"attempts":['


def attempt_head(encoder: msgspec.json.Encoder, decision: Decision, buf: bytearray) -> None:
    """An attempt's bytes before its detail fragment: its summary (a small dict), open."""
    encoder.encode_into(decision.attempt_json(), buf, -1)
    del buf[-1]
    buf += b","


def line_head(
    encoder: msgspec.json.Encoder,
    key: str,
    node: str | None,
    message: str | None,
    decision: Decision,
) -> bytes:
    """A line of one attempt, ``decision``, up to its fragment (``LINE_END`` ends
    it after the fragment)."""
    buf = bytearray()
    outcome_head(encoder, key, node, message, buf)
    attempt_head(encoder, decision, buf)
    return bytes(buf)
