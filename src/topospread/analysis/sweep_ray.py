"""The sweep on a Ray cluster (``topospread sweep --ray ADDRESS``): the base states' snapshots
go into the object store once, the jobs run in batches as Ray tasks (sweep_workers.py's
``run_jobs``), and each batch's runs are reported as the batch completes.

Ray is an optional extra (``pip install 'topospread[ray]'``), imported only here, lazily. Every
job restores the same snapshot, so the runs are the ones the local backends give, whatever the
cluster or the batching. A run whose worker dies is run again once (Ray's task retries); a
run that kills its worker twice is reported as failed, and the other runs are kept.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any, Final

from topospread.analysis.sweep_run import SweepOptions
from topospread.analysis.sweep_workers import (
    MAX_ATTEMPTS,
    Backend,
    Done,
    Job,
    RunError,
    run_jobs,
)
from topospread.errors import ManifestError

INSTALL_HINT: Final = "install the ray extra: pip install 'topospread[ray]'"

# How long the check that something listens at the address may take (seconds).
CONNECT_TIMEOUT: Final = 5.0

# Ray tries a GCS that does not answer 20 times, each try taking about 40 s: one try while
# connecting, so an address where something other than Ray listens fails in under a minute (a
# user's own setting wins). It also bounds how long a starting GCS may take, so it is never set
# for "local". (Ray reads its other timeouts when it is imported, too late to change here.)
_CONNECT_ENV: Final = {"RAY_gcs_server_port_wait_time_s": "1"}
# A cluster started here: no usage statistics sent, no prompt about them.
_LOCAL_ENV: Final = {"RAY_USAGE_STATS_ENABLED": "0"}


def ray_backend(address: str, *, batch: int | None = None) -> Backend:
    """Run the jobs as Ray tasks of ``batch`` jobs each (default: four batches per CPU of the
    cluster, so every CPU stays busy while the slower batches finish).

    ``address`` is ``local`` to start a Ray cluster in this process for the sweep (stopped
    after it), or the address of an existing cluster as ``ray.init`` takes it: ``auto`` (the
    cluster ``ray start`` started on this machine), ``HOST:PORT`` (its GCS) or
    ``ray://HOST:PORT`` (its Ray Client server). The tasks import topospread on the cluster's
    workers, so every node of an existing cluster needs topospread installed at the same
    version as here. When Ray is already initialised in this process, that connection is used
    and left open.

    Raises ``ManifestError`` at once when Ray is not installed or nothing listens at the
    address, and when the sweep runs if Ray cannot connect or start.
    """
    if batch is not None and batch < 1:
        raise ValueError(f"batch must be at least 1, not {batch}")
    ray = _import_ray()
    if address != "local":
        _check_listening(address)

    def run(
        bases: Mapping[int, bytes],
        options: SweepOptions,
        jobs: Sequence[Job],
        done: Done,
    ) -> None:
        started = connect(address)
        try:
            _run(ray, bases, options, jobs, done, batch)
        finally:
            if started:
                ray.shutdown()

    return run


def connect(address: str) -> bool:
    """Start (``local``) or connect to the Ray cluster at ``address`` unless this process is
    already connected to one; True when this call did (so the caller shuts Ray down)."""
    ray = _import_ray()
    if ray.is_initialized():
        return False
    try:
        if address == "local":
            # address="local", not None: None would attach to the cluster `ray start` last
            # started on this machine (or to $RAY_ADDRESS) rather than start one.
            with _env(_LOCAL_ENV):
                ray.init(
                    address="local",
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
        elif address.startswith("ray://"):
            # Ray Client passes any other argument on to ray.init on the server.
            ray.init(address=address)
        else:
            with _env(_CONNECT_ENV):
                ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as e:
        what = "Ray could not start here" if address == "local" else "cannot connect to Ray"
        raise ManifestError(f"--ray {address}: {what}: {_one_line(e)}") from e
    return True


def _run(
    ray: Any,
    bases: Mapping[int, bytes],
    options: SweepOptions,
    jobs: Sequence[Job],
    done: Done,
    batch: int | None,
) -> None:
    if not jobs:
        return
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = batch or max(1, -(-len(jobs) // (4 * cpus)))
    # Every task gets the same two objects from the store, not a copy of them per task.
    bases_ref = ray.put(dict(bases))
    options_ref = ray.put(options)
    task = ray.remote(run_jobs)
    died = (ray.exceptions.WorkerCrashedError, ray.exceptions.OutOfMemoryError)
    # A task of one job is retried by Ray once when its worker dies; a batch is not (whose
    # run killed it is unknown): its jobs go again one per task, each with one attempt left.
    # So every run gets MAX_ATTEMPTS attempts, and a worker's death loses no other run.
    pending: dict[Any, tuple[list[Job], int]] = {}

    def submit(batch_jobs: list[Job], attempts_left: int) -> None:
        retries = attempts_left - 1 if len(batch_jobs) == 1 else 0
        ref = task.options(max_retries=retries).remote(bases_ref, options_ref, batch_jobs)
        pending[ref] = (batch_jobs, attempts_left)

    for start in range(0, len(jobs), size):
        submit(list(jobs[start : start + size]), MAX_ATTEMPTS)
    try:
        while pending:
            finished, _ = ray.wait(list(pending), num_returns=1)
            for ref in finished:
                batch_jobs, attempts_left = pending.pop(ref)
                try:
                    results = ray.get(ref)
                except died as err:
                    if len(batch_jobs) > 1:
                        for job in batch_jobs:
                            submit([job], attempts_left - 1)
                        continue
                    (job,) = batch_jobs
                    how = f"worker died ({type(err).__name__}: {_one_line(err)})"
                    done(job.index, RunError(job.failure, job.seed, how, MAX_ATTEMPTS))
                    continue
                for index, result in results:
                    done(index, result)
    except BaseException:
        # Ctrl-C or a failed task: the runs reported so far stay; the rest are stopped.
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError as e:
        raise ManifestError(f"--ray: Ray is not installed: {INSTALL_HINT}") from e
    return ray


def _check_listening(address: str) -> None:
    """Fail fast when nothing listens at ``HOST:PORT`` (Ray itself keeps retrying for
    minutes); ``auto`` is left to Ray, which finds the local cluster or says there is none."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    host = host.removeprefix("[").removesuffix("]")  # [::1]:6379
    if not (sep and host and port.isdigit()):
        raise ManifestError(f"--ray {address}: expected local, auto, HOST:PORT or ray://HOST:PORT")
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise ManifestError(
            f"--ray {address}: no Ray cluster answers there ({reason}); start one with "
            "`ray start --head`, or run one here with --ray local"
        ) from e


@contextmanager
def _env(values: dict[str, str]) -> Iterator[None]:
    """Set the environment variables the user has not set, for the block only."""
    added = {k: v for k, v in values.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for key in added:
            os.environ.pop(key, None)


def _one_line(e: BaseException) -> str:
    """The error on one line, with the last line of its cause: ray.init wraps what went wrong
    (a refused token, a timeout) in a ConnectionError that only names the address."""
    text = " ".join(str(e).split()) or type(e).__name__
    if e.__cause__ is not None and (lines := str(e.__cause__).strip().splitlines()):
        text += f" ({' '.join(lines[-1].split())})"
    return text


__all__ = ["INSTALL_HINT", "connect", "ray_backend"]
