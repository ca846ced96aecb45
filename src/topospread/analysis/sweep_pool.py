"""The sweep's local backend: one worker process per core, each holding the base states and
replaying one failure per task.

Where the platform forks, each worker is forked from the sweep's process and reads its settled
base states as they are (``Bases.live``; a base it lacks it restores once), and replays each
failure in a child forked from it: the child's copy of the base costs what it touches
(copy-on-write), not a restore, and the child's exit frees it without a garbage collection.
Its run is the one a restored copy gives (the base is the same state; tests compare the two
backends). Elsewhere, workers are spawned and restore the snapshot for each failure
(analysis/sweep.py's ``run_job``).

Workers ignore Ctrl-C: the parent takes it, drops the queued tasks, stops the workers and
keeps the runs that completed.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from topospread.analysis.sweep import (
    Backend,
    Bases,
    Job,
    Run,
    SweepOptions,
    init_worker,
    run_failure,
    run_job,
    serial_backend,
    worker_options,
)
from topospread.simulator.simulation import Simulation
from topospread.simulator.snapshot import FORKS, Snapshot, call_forked


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


# A forking worker's base states, restored once (never run on: each run forks from them).
_LIVE: dict[int, Simulation] = {}


def _init(bases: Mapping[int, bytes], options: SweepOptions) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not FORKS:
        init_worker(bases, options)
        return
    init_worker({}, options)
    # Forked from the sweep's process: its live bases are this worker's (copy-on-write).
    missing = []
    for seed in bases:
        live = bases.live(seed) if isinstance(bases, Bases) else None
        if live is not None:
            _LIVE[seed] = live
        else:
            missing.append(seed)
    if missing:
        gc.disable()
        _LIVE.update({s: Snapshot[Simulation](bases[s]).restore() for s in missing})
        gc.enable()
        gc.collect()
        gc.freeze()  # the bases are never garbage: keep collections off them


def _run_forked(job: Job) -> tuple[int, Run]:
    """Replay one failure in a child forked from the worker's base state."""
    options = worker_options()
    run = call_forked(lambda sim: run_failure(sim, job.failure, job.seed, options), _LIVE[job.seed])
    return job.index, run


def pool_size(cores: int, jobs: int) -> int:
    """How many worker processes share ``cores`` for ``jobs`` runs: one per core, or one per
    job when there are at most twice as many jobs as cores and they do not divide evenly —
    three zone failures on two cores all run at once and finish together after 1.5 runs'
    time, instead of two runs side by side and then the third alone on one core, the other
    idle."""
    if jobs <= cores:
        return max(1, jobs)
    if jobs <= 2 * cores and jobs % cores:
        return jobs
    return cores


def process_backend(workers: int, *, share_cores: bool = False) -> Backend:
    """Run the jobs on ``workers`` processes, at most ``2 * workers`` queued at a time (so a
    Ctrl-C has little to cancel and results stream in job order as far as possible).
    ``share_cores``: ``workers`` is the number of cores, and a few jobs that do not divide
    evenly over them get a process each (``pool_size``)."""

    def run(
        bases: Mapping[int, bytes],
        options: SweepOptions,
        jobs: Sequence[Job],
        done: Callable[[int, Run], None],
    ) -> None:
        size = pool_size(workers, len(jobs)) if share_cores else workers
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = ProcessPoolExecutor(
            size, mp_context=context, initializer=_init, initargs=(bases, options)
        )
        todo = list(reversed(jobs))
        running: set[Future[tuple[int, Run]]] = set()
        try:
            while todo or running:
                while todo and len(running) < 2 * size:
                    running.add(pool.submit(_run_forked if FORKS else run_job, todo.pop()))
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    done(*future.result())
        except BaseException:
            for future in running:
                future.cancel()
            # The workers may be mid-run: stop them rather than wait for it.
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    return run


__all__ = ["choose_backend", "default_workers", "pool_size", "process_backend"]


def choose_backend(jobs: int | None = None, ray: str | None = None) -> Backend:
    """Where the sweep runs: on the Ray cluster at ``ray`` (its address, or ``local``); on
    ``jobs`` worker processes (1: in this process); by default on one process per core, a few
    runs that do not divide evenly over the cores getting a process each."""
    if ray is not None:
        from topospread.analysis.sweep_ray import ray_backend

        return ray_backend(ray)
    if jobs is not None:
        return process_backend(jobs) if jobs > 1 else serial_backend
    cores = default_workers()
    return process_backend(cores, share_cores=True) if cores > 1 else serial_backend
