"""``check``'s report: a short human report, one JSON document, or GitHub Actions workflow
commands (``::error file=...::``) that annotate the files in a pull request."""

from __future__ import annotations

import json

from topospread.analysis.check import CheckReport, Finding
from topospread.analysis.check_autoscaler import verdict_line
from topospread.analysis.check_hooks import NOT_RUN
from topospread.simulator.controllers.kinds import LEFT_OUT, counts_text


def check_json(report: CheckReport) -> str:
    return json.dumps(report.to_json(), indent=2)


def check_text(report: CheckReport) -> str:
    verdict = "PASS" if report.passed else "INTERRUPTED" if not report.errors else "FAIL"
    counts = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
    lines = [
        f"{verdict}: {report.source}: {report.workloads} workload(s) on {report.nodes} node(s); "
        f"{counts}"
    ]
    if report.autoscaler is not None:
        lines.append(f"  autoscaler: {verdict_line(report.autoscaler)}")
    if report.hooks_run:
        lines.append(f"  hooks run: {', '.join(h.ran(e) for e, h in report.hooks_run)}")
    if report.interrupted:
        lines.append(
            f"  interrupted: {len(report.survived)} of {report.losses} failure(s) replayed; "
            "the report covers them"
        )
    elif report.survived:
        lines.append(f"  survived: {len(report.survived)} failure(s) replayed")
    for f in [*report.errors, *report.warnings]:
        where = f" ({f.where})" if f.where else ""
        lines.append(f"{f.level}: {f.obj}{where}: {f.message} [{f.rule}]")
    if report.ignored:
        lines.append(f"note: {LEFT_OUT}: {counts_text(report.ignored)}")
    if report.hooks_not_run:
        lines.append(f"note: {_hooks_note(report)}")
    return "\n".join(lines)


def _hooks_note(report: CheckReport) -> str:
    return f"{NOT_RUN}: {', '.join(h.note() for h in report.hooks_not_run)}"


def check_github(report: CheckReport) -> str:
    """One workflow command per finding (errors fail the job's annotations, warnings do not),
    a notice for the kinds left out and one for the hooks left out, then the text report's
    first line."""
    lines = [_command(f) for f in [*report.errors, *report.warnings]]
    if report.ignored:
        note = f"{LEFT_OUT}: {counts_text(report.ignored)}"
        lines.append(f"::notice title=topospread::{_data(note)}")
    if report.hooks_not_run:
        lines.append(f"::notice title=topospread::{_data(_hooks_note(report))}")
    lines.append(check_text(report).splitlines()[0])
    return "\n".join(lines)


def _command(f: Finding) -> str:
    props = [f"file={_property(f.file)}"] if f.file else []
    props.append(f"title={_property(f'topospread {f.rule}: {f.obj}')}")
    return f"::{f.level} {','.join(props)}::{_data(f.message)}"


def _data(text: str) -> str:
    """A workflow command's message, escaped as the runner unescapes it."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


__all__ = ["check_github", "check_json", "check_text"]
