"""``explain`` as text: the verdict, each node's filters and scores, each constraint's domains."""

from __future__ import annotations

from typing import Any

from topospread.analysis.explain import Explanation
from topospread.api.types import DO_NOT_SCHEDULE


def attempt_line(a: dict[str, Any]) -> str:
    """One recorded attempt (``Decision.attempt_json``) on one line: where it bound, or its
    FailedScheduling message, the node it left the pod nominated to and the pods it preempted."""
    if a["node"] is not None:
        return f"attempt {a['attempt']}: bound to {a['node']}"
    line = f"attempt {a['attempt']}: not bound"
    if a["nominatedNode"]:
        line += f", nominated to {a['nominatedNode']}"
    if a["preempted"]:
        line += f", preempting {', '.join(a['preempted'])}"
    return f"{line}: {a['message']}"


def explanation_text(e: Explanation) -> str:
    key = f"{e.pod.metadata.namespace}/{e.pod.metadata.name}"
    out: list[str] = []
    if e.node is not None:
        out.append(f"{key} -> {e.node} (attempt {e.attempts[-1]['attempt'] if e.attempts else 0})")
    else:
        out.append(f"{key} is Pending: {e.message}")
    if e.interrupted:
        out.append(
            "Interrupted: the run stopped before it ended; this is the pod's last attempt "
            "before that."
            if e.attempts
            else "Interrupted: the run stopped before the pod's first attempt."
        )
    earlier = e.attempts[:-1] if e.attempts else []
    if earlier:
        out += ["", "Earlier attempts:"]
        out += [f"  {attempt_line(a)}" for a in earlier]
    if e.pre_filter:
        ran = [f"{name} {verdict}" for name, verdict in e.pre_filter.items() if verdict != "Skip"]
        skipped = [name for name, verdict in e.pre_filter.items() if verdict == "Skip"]
        out += ["", f"PreFilter: {', '.join(ran) or 'none ran'}"]
        if skipped:
            out.append(f"  skipped (nothing to check for this pod): {', '.join(skipped)}")
    if e.nodes:
        out += ["", "Nodes (every node evaluated; Filter plugins in profile order):"]
        for v in e.nodes:
            mark = "feasible" if v.feasible else "rejected"
            total = f", score {v.total}" if v.total is not None else ""
            out.append(f"  {v.node}: {mark}{total}")
            failed = {k: s for k, s in v.filters.items() if s not in ("Success", "Skip")}
            for plugin, verdict in failed.items():
                out.append(f"    {plugin}: {verdict}")
            if v.scores:
                parts = ", ".join(f"{k} {s}" for k, s in v.scores.items())
                out.append(f"    scores: {parts}")
    for c in e.constraints:
        out += [
            "",
            f"topologySpreadConstraints[{c.index}]: {c.topology_key}, {c.when_unsatisfiable}, "
            f"maxSkew {c.max_skew}, minDomains {c.min_domains}, selector {c.selector}"
            f"{'' if c.self_match else ' (does not match the pod itself)'}",
        ]
        counts = ", ".join(f"{d}={n}" for d, n in c.counts.items()) or "(no eligible domain)"
        out.append(f"  matching pods per domain: {counts}")
        if c.global_min is not None:
            why = ""
            if c.when_unsatisfiable == DO_NOT_SCHEDULE and len(c.counts) < c.min_domains:
                # Upstream's minMatchNum: fewer eligible domains than minDomains make it 0.
                n = len(c.counts)
                why = (
                    f" ({n} eligible domain{'' if n == 1 else 's'}, fewer than "
                    f"minDomains {c.min_domains})"
                )
            out.append(f"  global minimum: {c.global_min}{why}")
        if c.skew_by_node:
            skews = ", ".join(
                f"{n}={'missing label' if s is None else s}"
                + ("" if s is None or s <= c.max_skew else " (too high)")
                for n, s in c.skew_by_node.items()
            )
            out.append(f"  skew if placed on: {skews}")
    if e.node is None and e.nodes:
        out += ["", "Single changes that would let it schedule (each re-checked):"]
        if e.suggestions:
            out += [f"  - {s.change}: lands on {s.lands_on}" for s in e.suggestions]
        else:
            out.append("  none found")
    return "\n".join(out)
