"""CronJob schedules, and the simulated clock at the end of time: an input whose latest
timestamp is near 9999-12-31T23:59:59Z (the last an RFC 3339 timestamp records) was a traceback
once the clock moved past it (a datetime overflow); now one line naming the step, or no run of
a CronJob that would fall after it."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from test_bad_input import assert_one_line_exit_2, write_text
from test_cli import run
from topospread.api.cron import CronError, next_time, parse_schedule
from topospread.api.go_duration import SECOND

# 9999-12-31T23:59:59.999999999Z in nanoseconds since the Unix epoch.
LAST_STAMP: Final = 253_402_300_800 * SECOND - 1

TIMELINE: Final = """\
nodeGroups:
- {name: node, zones: [a, b], perZone: 1}
objects:
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: web, creationTimestamp: "STAMP"}
  spec:
    replicas: 2
    selector: {matchLabels: {app: web}}
    template:
      metadata: {labels: {app: web}}
      spec: {containers: [{name: c, image: i}]}
timeline:
- scale: {workload: deployment/web, replicas: 3}
- wait: 1s
"""
MESSAGE: Final = (
    "t.yaml: timeline[1] (wait): the clock would pass 9999-12-31T23:59:59Z, the last time a "
    "timestamp can record (it started at 9999-12-31T23:59:59Z, the latest time the input "
    "records)"
)


@pytest.mark.parametrize("command", [["simulate"], ["rebalance"]])
def test_a_wait_past_the_last_timestamp_is_refused_naming_the_step(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_text(tmp_path, "t.yaml", TIMELINE.replace("STAMP", "9999-12-31T23:59:59Z"))
    assert_one_line_exit_2([*command, path], capsys, MESSAGE)


def test_a_taint_added_at_the_last_timestamp_starts_the_clock_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taint = (
        "nodes:\n- metadata: {name: x, labels: {topology.kubernetes.io/zone: a}}\n"
        "  spec: {taints: [{key: k, effect: NoExecute, timeAdded: '9999-12-31T23:59:59Z'}]}\n"
        "  status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
    )
    text = taint + TIMELINE.replace("STAMP", "2024-01-01T00:00:00Z")
    path = write_text(tmp_path, "t.yaml", text)
    assert_one_line_exit_2(["simulate", path], capsys, MESSAGE)


def test_the_clock_may_reach_the_last_timestamp_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_text(tmp_path, "t.yaml", TIMELINE.replace("STAMP", "9999-12-31T23:59:58Z"))
    code, out, err = run(["simulate", path], capsys)
    assert (code, err) == (0, "")
    assert "== Step 2/2: wait 1s (wait) at 1s ==" in out


@pytest.mark.parametrize("schedule", ["* * * * *", "@every 1h", "@yearly"])
def test_a_cron_job_makes_no_run_after_the_last_timestamp(
    schedule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parsed = parse_schedule(schedule)
    assert next_time(parsed, LAST_STAMP - 59 * SECOND) is None
    cron = f"""\
- apiVersion: batch/v1
  kind: CronJob
  metadata: {{name: report, creationTimestamp: "9999-12-31T23:59:59Z"}}
  spec:
    schedule: "{schedule}"
    jobTemplate:
      spec:
        template:
          spec: {{restartPolicy: Never, containers: [{{name: c, image: i}}]}}
"""
    text = TIMELINE.replace("STAMP", "2024-01-01T00:00:00Z").replace(
        "objects:\n", "objects:\n" + cron
    )
    text = text.replace("- wait: 1s\n", "")
    path = write_text(tmp_path, "t.yaml", text)
    code, out, err = run(["simulate", path, "-o", "json"], capsys)
    assert (code, err) == (0, "")
    assert '"default/report-' not in out


def test_a_cron_job_runs_in_the_last_minute_it_can() -> None:
    # 9999-12-31T23:59:00Z, the last whole minute: the run before the end is kept.
    assert next_time(parse_schedule("* * * * *"), LAST_STAMP - 60 * SECOND) == (
        LAST_STAMP + 1 - 60 * SECOND
    )


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("* * *", "expected exactly 5 fields, found 3: [* * *]"),
        ("0 0 * * * *", "expected exactly 5 fields, found 6: [0 0 * * * *]"),
    ],
)
def test_a_schedule_of_the_wrong_length_is_refused_in_robfig_crons_words(
    schedule: str, message: str
) -> None:
    # fmt.Errorf("...found %d: %s", ..., fields) prints a []string as Go does: [a b c]. It
    # was the Python list's repr (['*', '*', '*']).
    with pytest.raises(CronError) as info:
        parse_schedule(schedule)
    assert str(info.value) == message
