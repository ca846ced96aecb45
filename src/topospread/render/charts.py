"""The simulate page's charts: per workload constraint, the matching pods per domain and the
skew against maxSkew over the timeline, as inline SVG (no plotting script), from the JSON's
steps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from markupsafe import Markup, escape

# Chart geometry (SVG user units).
_W: Final = 340
_H: Final = 150
_PAD: Final = 28
# Constraints with more domains than this draw only the skew (a hostname constraint's nodes).
MAX_CHARTED_DOMAINS: Final = 8


def hue(i: int) -> str:
    """A colour (a workload's, a domain's): hues spread by the golden angle, as an HSL triple
    for CSS."""
    return f"{(i * 137.508) % 360:.0f} 65% 50%"


def charts(
    steps: Sequence[dict[str, Any]], constraint_name: Callable[[dict[str, Any]], str]
) -> list[dict[str, Any]]:
    """One chart per workload constraint (revisions counted apart are one series each)."""
    series: dict[str, dict[str, Any]] = {}
    for i, s in enumerate(steps):
        for w in s["workloads"]:
            for c in w["constraints"]:
                title = f"{w['workload']} {constraint_name(c)}"
                entry = series.setdefault(
                    title, {"max": c["maxSkew"], "skew": {}, "over": {}, "domains": {}}
                )
                entry["skew"][i] = c["skew"]
                # Past maxSkew as the JSON says it (``exceeded``), not recomputed here.
                entry["over"][i] = c["exceeded"]
                for domain, n in c["counts"].items():
                    entry["domains"].setdefault(domain, {})[i] = n
    return [
        {"title": title, "svg": chart_svg(entry, len(steps))} for title, entry in series.items()
    ]


def chart_svg(entry: dict[str, Any], n_steps: int) -> Markup:
    domains: dict[str, dict[int, int]] = entry["domains"]
    charted = domains if len(domains) <= MAX_CHARTED_DOMAINS else {}
    values = [v for v in entry["skew"].values() if v is not None]
    values += [v for d in charted.values() for v in d.values()]
    top: int = max([int(entry["max"]), *values, 1])

    def x(i: int) -> float:
        return _PAD + (_W - 2 * _PAD) * (i / max(1, n_steps - 1))

    def y(v: float) -> float:
        return _H - _PAD + 4 - (_H - 2 * _PAD) * (v / top)

    def path(points: dict[int, Any]) -> str:
        pts = [(i, v) for i, v in sorted(points.items()) if v is not None]
        return " ".join(
            f"{'M' if k == 0 else 'L'}{x(i):.1f},{y(v):.1f}" for k, (i, v) in enumerate(pts)
        )

    parts = [
        f'<svg viewBox="0 0 {_W} {_H}" role="img" xmlns="http://www.w3.org/2000/svg">',
        f'<line class="axis" x1="{_PAD}" y1="{y(0):.1f}" x2="{_W - _PAD}" y2="{y(0):.1f}"/>',
        f'<line class="max" x1="{_PAD}" y1="{y(entry["max"]):.1f}" x2="{_W - _PAD}" '
        f'y2="{y(entry["max"]):.1f}"/>',
        f'<text x="2" y="{y(entry["max"]) + 3:.1f}">{entry["max"]}</text>',
        f'<text x="2" y="{y(top) + 3:.1f}">{top}</text>',
    ]
    for k, (domain, points) in enumerate(sorted(charted.items())):
        colour = hue(k + 3)
        parts.append(
            f'<path class="domain" style="stroke: hsl({colour})" d="{path(points)}">'
            f"<title>{escape(domain)}</title></path>"
        )
    parts.append(f'<path class="skew" d="{path(entry["skew"])}"><title>skew</title></path>')
    for i, v in sorted(entry["skew"].items()):
        if v is not None and entry["over"][i]:
            parts.append(
                f'<circle class="over" cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5">'
                f"<title>step {i}: skew {v} &gt; maxSkew {entry['max']}</title></circle>"
            )
    for i in range(n_steps):
        parts.append(f'<text x="{x(i) - 3:.1f}" y="{_H - 6}">{i}</text>')
    legend = " · ".join(
        f'<tspan style="fill: hsl({hue(k + 3)})">{escape(d)}</tspan>'
        for k, d in enumerate(sorted(charted))
    )
    if legend:
        parts.append(f'<text x="{_PAD}" y="12">{legend} · skew</text>')
    elif domains:
        # Too many domains to draw one line each: say so rather than leave them out silently.
        parts.append(
            f'<text x="{_PAD}" y="12" data-undrawn="{len(domains)}">skew only ({len(domains)} '
            f"domains, more than {MAX_CHARTED_DOMAINS} to draw; counts in each step's table)</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


__all__ = ["MAX_CHARTED_DOMAINS", "chart_svg", "charts", "hue"]
