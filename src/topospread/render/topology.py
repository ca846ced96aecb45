"""The topology as the Kubernetes docs draw it: zones over nodes over pods, in plain text.

```
+---------------+---------------+
|     zoneA     |     zoneB     |
+-------+-------+-------+-------+
| node1 | node2 | node3 | node4 |
+-------+-------+-------+-------+
|   P   |   P   |   P   |       |
+-------+-------+-------+-------+
```

Wide clusters (more nodes than fit a terminal) are summarised per zone instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from topospread.api.types import Node, Pod
from topospread.api.zones import zone_key_for

NO_ZONE: Final = "(no zone)"
MAX_GRID_NODES: Final = 12
MAX_POD_ROWS: Final = 6


@dataclass(frozen=True, slots=True)
class Column:
    node: Node
    pods: Sequence[Pod]


def _group(columns: Sequence[Column], zone_key: str) -> list[tuple[str, list[Column]]]:
    groups: dict[str, list[Column]] = {}
    for col in columns:
        groups.setdefault(col.node.metadata.labels.get(zone_key, NO_ZONE), []).append(col)
    return sorted(groups.items(), key=lambda kv: (kv[0] == NO_ZONE, kv[0]))


def draw_topology(
    columns: Sequence[Column],
    *,
    zone_key: str | None = None,
    pod_label: Callable[[Pod], str] | None = None,
    highlight: Mapping[str, str] | None = None,
) -> str:
    """The grid for up to MAX_GRID_NODES nodes, else a per-zone summary table.

    ``pod_label`` names a pod in its cell (default: its name); ``highlight`` maps pod keys
    (``namespace/name``) to a marker appended to their label, e.g. ``*`` for pods just placed.
    """
    if not columns:
        return "(no nodes)"
    key = zone_key_for([c.node for c in columns], zone_key)
    groups = _group(columns, key)
    if len(columns) > MAX_GRID_NODES:
        return _summary(groups, key)
    label = pod_label or (lambda p: p.metadata.name)
    marks = highlight or {}

    def cell(pod: Pod) -> str:
        return label(pod) + marks.get(f"{pod.metadata.namespace}/{pod.metadata.name}", "")

    ordered = [c for _, cols in groups for c in cols]
    rows: list[list[str]] = []
    depth = max(len(c.pods) for c in ordered)
    shown = min(depth, MAX_POD_ROWS)
    for r in range(shown):
        row = []
        for c in ordered:
            if r == MAX_POD_ROWS - 1 and len(c.pods) > MAX_POD_ROWS:
                row.append(f"+{len(c.pods) - (MAX_POD_ROWS - 1)} more")
            elif r < len(c.pods):
                row.append(cell(c.pods[r]))
            else:
                row.append("")
        rows.append(row)
    widths = [
        max(len(c.node.metadata.name), *(len(r[i]) for r in rows), 3) + 2
        for i, c in enumerate(ordered)
    ]
    # Widen the last node of a zone when the zone's name needs more room.
    start = 0
    for zone, cols in groups:
        span = sum(widths[start : start + len(cols)]) + len(cols) - 1
        if len(zone) + 2 > span:
            widths[start + len(cols) - 1] += len(zone) + 2 - span
        start += len(cols)

    def rule(spans: Sequence[int]) -> str:
        return "+" + "+".join("-" * w for w in spans) + "+"

    def line(texts: Sequence[str], spans: Sequence[int]) -> str:
        return "|" + "|".join(t.center(w) for t, w in zip(texts, spans, strict=True)) + "|"

    zone_spans = []
    start = 0
    for _, cols in groups:
        zone_spans.append(sum(widths[start : start + len(cols)]) + len(cols) - 1)
        start += len(cols)
    out = [rule(zone_spans), line([z for z, _ in groups], zone_spans), rule(widths)]
    out.append(line([c.node.metadata.name for c in ordered], widths))
    out.append(rule(widths))
    for row in rows or [[""] * len(ordered)]:
        out.append(line(row, widths))
    out.append(rule(widths))
    return "\n".join(out)


def _summary(groups: Sequence[tuple[str, Sequence[Column]]], key: str) -> str:
    header = (key, "nodes", "pods", "pods/node min-max")
    rows = []
    for zone, cols in groups:
        counts = [len(c.pods) for c in cols]
        rows.append((zone, str(len(cols)), str(sum(counts)), f"{min(counts)}-{max(counts)}"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)
