"""The sweep's local backend: one worker process per core, each holding the base states and
replaying one failure per task.

Where the platform forks, each worker is forked from the sweep's process and reads its settled
base states as they are (``Bases.live``; a base it lacks it restores once), and replays each
failure in a child forked from it: the child's copy of the base costs what it touches
(copy-on-write), not a restore, and the child's exit frees it without a garbage collection.
Its run is the one a restored copy gives (the base is the same state; tests compare the two
backends). Elsewhere, workers are spawned and restore the snapshot for each failure
(sweep_workers.py's ``run_job``).

Workers ignore Ctrl-C: the parent takes it, drops the queued tasks, stops the workers and
keeps the runs that completed.

The pool is the sweep's own, not ``concurrent.futures``': a worker that dies there breaks the
whole pool (``BrokenProcessPool``) and no one can tell whose run killed it. Here each worker
runs one job at a time, so a death (the worker's, or its run's forked child's) is the job's:
a fresh worker replaces the dead one and the run goes again once; a second death reports the
run as failed, with the signal.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from topospread.analysis.sweep_run import Run, SweepOptions, run_failure
from topospread.analysis.sweep_workers import (
    MAX_ATTEMPTS,
    Backend,
    Bases,
    Done,
    Job,
    RunError,
    death,
    init_worker,
    kill_hook,
    run_job,
    serial_backend,
    worker_options,
)
from topospread.simulator.checkpoint import FORKS, ChildDied, Snapshot, call_forked
from topospread.simulator.simulation import Simulation


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


class _Worker:
    """One worker process and the job it runs (None: idle)."""

    def __init__(self, context: Any, bases: Mapping[int, bytes], options: SweepOptions) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, bases, options), daemon=True)
        self.process.start()
        child.close()
        self.job: Job | None = None
        # Whether the job reached the worker (False: it had died since its last answer).
        self.sent = False

    def give(self, job: Job) -> None:
        """Hand ``job`` over. A worker killed since its last answer (the OOM killer, a signal)
        has a broken pipe: the job stays its own, unsent, until the loop sees the worker's
        sentinel and gives the job to its replacement without counting an attempt."""
        self.job = job
        try:
            self.conn.send(job)
        except OSError:
            self.sent = False
        else:
            self.sent = True

    def stop(self) -> None:
        with contextlib.suppress(OSError):  # it died meanwhile
            self.conn.send(None)

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.terminate()


def _serve(conn: Connection, bases: Mapping[int, bytes], options: SweepOptions) -> None:
    """A worker: run each job sent until told to stop (None). Answers ("ok", (index, run)),
    ("died", index, how) when the run's forked child died, or ("error", index, exception)."""
    _init(bases, options)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        kill_hook(job)
        answer: tuple[Any, ...]
        try:
            answer = ("ok", _run_forked(job) if FORKS else run_job(job))
        except ChildDied as err:
            answer = ("died", job.index, death(err.exitcode, "worker's child"))
        except BaseException as err:  # a bug: the sweep's process raises it
            answer = ("error", job.index, err)
        conn.send(answer)


def process_backend(workers: int, *, share_cores: bool = False) -> Backend:
    """Run the jobs on ``workers`` processes, one job at a time each (so a Ctrl-C has
    nothing queued to cancel and results stream in job order as far as possible).
    ``share_cores``: ``workers`` is the number of cores, and a few jobs that do not divide
    evenly over them get a process each (``pool_size``).

    A worker that dies mid-run (the OOM killer) is replaced by a fresh one and its run tried
    again; a run whose worker died MAX_ATTEMPTS times is reported as failed (``RunError``,
    with the signal), and the other runs go on."""

    def run(
        bases: Mapping[int, bytes],
        options: SweepOptions,
        jobs: Sequence[Job],
        done: Done,
    ) -> None:
        if not jobs:
            return
        size = min(pool_size(workers, len(jobs)) if share_cores else workers, len(jobs))
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        todo = deque(jobs)
        attempts: dict[int, int] = {}
        pool = [_Worker(context, bases, options) for _ in range(size)]

        def lost(worker: _Worker, how: str) -> None:
            job = worker.job
            worker.job = None
            if job is None:
                return
            if not worker.sent:  # it never ran there: not an attempt
                todo.appendleft(job)
                return
            attempts[job.index] = attempts.get(job.index, 0) + 1
            if attempts[job.index] < MAX_ATTEMPTS:
                todo.appendleft(job)  # again, first
            else:
                done(job.index, RunError(job.failure, job.seed, how, attempts[job.index]))

        try:
            while True:
                for worker in pool:
                    if worker.job is None and todo:
                        worker.give(todo.popleft())
                busy = [w for w in pool if w.job is not None]
                if not busy:
                    break
                ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
                for worker in busy:
                    if worker.conn in ready:
                        try:
                            answer = worker.conn.recv()
                        except (EOFError, OSError):
                            answer = None  # it died: its sentinel says how
                        if answer is not None and answer[0] == "error":
                            raise answer[2]
                        if answer is not None and answer[0] == "ok":
                            worker.job = None
                            done(*answer[1])
                        elif answer is not None:  # its run's forked child died
                            lost(worker, answer[2])
                    if worker.process.sentinel in ready or not worker.process.is_alive():
                        worker.process.join()
                        lost(worker, death(worker.process.exitcode))
                        worker.conn.close()
                        pool[pool.index(worker)] = _Worker(context, bases, options)
        except BaseException:
            # Ctrl-C, or a bug in a run: the runs reported so far stay; the workers may be
            # mid-run, so they are stopped rather than waited for.
            for worker in pool:
                worker.kill()
            for worker in pool:
                worker.process.join()
            raise
        for worker in pool:
            worker.stop()
        for worker in pool:
            worker.process.join()

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
