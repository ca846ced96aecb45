"""Which node label names the zones a report groups nodes by: one rule for the text's grid and
the JSON's ``zone`` of each node, so that the two (and the HTML drawn from the JSON) agree."""

from __future__ import annotations

from collections.abc import Sequence

from topospread.api.types import LABEL_TOPOLOGY_ZONE, Node


def zone_key_for(nodes: Sequence[Node], preferred: str | None = None) -> str:
    """The label to group nodes by: the one given, the well-known zone key, or ``zone``."""
    if preferred:
        return preferred
    if any(LABEL_TOPOLOGY_ZONE in n.metadata.labels for n in nodes):
        return LABEL_TOPOLOGY_ZONE
    if any("zone" in n.metadata.labels for n in nodes):
        return "zone"
    return LABEL_TOPOLOGY_ZONE


__all__ = ["zone_key_for"]
