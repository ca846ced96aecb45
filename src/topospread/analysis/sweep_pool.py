"""The sweep's local backend: one worker process per core, each holding the base states'
snapshots and replaying one failure per task (analysis/sweep.py's ``run_job``).

Workers are forked where the platform can (they inherit the loaded code), spawned elsewhere.
They ignore Ctrl-C: the parent takes it, drops the queued tasks, stops the workers and keeps
the runs that completed.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

from topospread.analysis.sweep import Backend, Job, Run, SweepOptions, init_worker, run_job


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _init(bases: dict[int, bytes], options: SweepOptions) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    init_worker(bases, options)


def process_backend(workers: int) -> Backend:
    """Run the jobs on ``workers`` processes, at most ``2 * workers`` queued at a time (so a
    Ctrl-C has little to cancel and results stream in job order as far as possible)."""

    def run(
        bases: dict[int, bytes],
        options: SweepOptions,
        jobs: Sequence[Job],
        done: Callable[[int, Run], None],
    ) -> None:
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init, initargs=(bases, options)
        )
        todo = list(reversed(jobs))
        running: set[Future[tuple[int, Run]]] = set()
        try:
            while todo or running:
                while todo and len(running) < 2 * workers:
                    running.add(pool.submit(run_job, todo.pop()))
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


__all__ = ["default_workers", "process_backend"]
