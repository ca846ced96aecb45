"""The CronJob controller, as far as placement goes: the Job the next scheduled run creates.

A CronJob makes pods only through its Jobs, and the simulator never finishes a Job, so one
run is what placement needs: when the CronJob has no Job of its own, the sync creates the Job
of the first scheduled time after the clock (the Job controller, controllers/job.py, then
creates its pods). The Job is named ``<cronjob>-<scheduled time in minutes since the Unix
epoch>`` and carries the job template's labels and annotations, the scheduled-timestamp
annotation (in ``spec.timeZone``) and the CronJob's controller reference. A suspended CronJob
creates no Job (a Job it already made keeps running, as upstream). Later runs, the
concurrency policy and the history limits are not modelled: they wait on Jobs finishing.

Upstream: pkg/controller/cronjob/cronjob_controllerv2.go (syncCronJob) and utils.go
(getJobFromTemplate2, getJobName), v1.35
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Final

from topospread.api.cron import (
    CronError,
    Schedule,
    location,
    next_time,
    parse_schedule,
)
from topospread.api.types import CronJob, Job, ObjectMeta
from topospread.errors import ValidationError
from topospread.simulator.clock import SECOND
from topospread.simulator.controllers.common import (
    describe,
    format_time,
    is_controlled_by,
    new_controller_ref,
)

CRON_JOB_SCHEDULED_TIMESTAMP: Final = "batch.kubernetes.io/cronjob-scheduled-timestamp"


def cron_job_schedule(cj: CronJob) -> tuple[Schedule, dt.tzinfo]:
    """The parsed schedule and time zone; a ValidationError naming the field otherwise.

    Upstream: validateScheduleFormat and validateTimeZone (pkg/apis/batch/validation, v1.35)
    """
    spec = cj.spec
    try:
        schedule = parse_schedule(spec.schedule)
    except CronError as err:
        what = "Required value" if not spec.schedule else f'Invalid value: "{spec.schedule}"'
        raise ValidationError(f"{describe(cj)}: spec.schedule: {what}: {err}") from err
    try:
        tz = location(spec.time_zone)
    except CronError as err:
        raise ValidationError(
            f'{describe(cj)}: spec.timeZone: Invalid value: "{spec.time_zone}": {err}'
        ) from err
    return schedule, tz


def get_job_name(cj: CronJob, scheduled: int) -> str:
    """Upstream: getJobName and getTimeHashInMinutes (utils.go, v1.35)"""
    return f"{cj.metadata.name}-{scheduled // SECOND // 60}"


def get_job_from_template(cj: CronJob, scheduled: int, tz: dt.tzinfo) -> Job:
    """The Job of the run scheduled at ``scheduled`` (nanoseconds since the Unix epoch).

    Upstream: getJobFromTemplate2 (utils.go, v1.35)
    """
    template = cj.spec.job_template
    stamp = dt.datetime.fromtimestamp(scheduled // SECOND, tz).isoformat()
    if stamp.endswith("+00:00"):
        stamp = stamp[: -len("+00:00")] + "Z"  # Go's RFC 3339
    meta = ObjectMeta(
        name=get_job_name(cj, scheduled),
        namespace=cj.metadata.namespace,
        labels=dict(template.metadata.labels),
        annotations={**template.metadata.annotations, CRON_JOB_SCHEDULED_TIMESTAMP: stamp},
        owner_references=[new_controller_ref(cj)],
        creation_timestamp=format_time(scheduled),
    )
    return Job(metadata=meta, spec=template.spec)


def sync_cron_job(cj: CronJob, jobs: Iterable[Job], *, now: int) -> tuple[Job, ...]:
    """One sync of a CronJob at ``now`` (nanoseconds since the Unix epoch): the Job of its
    next scheduled run when it has none of its own and is not suspended, else nothing.

    ``jobs``: the Jobs of its namespace.

    Upstream: ControllerV2.syncCronJob (cronjob_controllerv2.go, v1.35)
    """
    schedule, tz = cron_job_schedule(cj)
    if cj.spec.suspend or cj.metadata.deletion_timestamp is not None:
        return ()
    ns = cj.metadata.namespace
    if any(j.metadata.namespace == ns and is_controlled_by(j.metadata, cj) for j in jobs):
        return ()
    at = next_time(schedule, now, tz)
    if at is None:  # a schedule that never fires (February 30th)
        return ()
    return (get_job_from_template(cj, at, tz),)


__all__ = [
    "CRON_JOB_SCHEDULED_TIMESTAMP",
    "cron_job_schedule",
    "get_job_from_template",
    "get_job_name",
    "sync_cron_job",
]
