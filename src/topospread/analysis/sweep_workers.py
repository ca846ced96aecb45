"""What ``sweep``'s backends share (the serial one here, the process pool's in sweep_pool.py,
Ray's in sweep_ray.py): the jobs they are handed, the base states they run them from, the
worker's side of a job, and how a run whose worker died is reported."""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from topospread.analysis.sweep_failures import Failure
from topospread.analysis.sweep_run import Run, SweepOptions, run_failure
from topospread.simulator.checkpoint import FORKS, Snapshot
from topospread.simulator.simulation import Simulation


class RunError(msgspec.Struct, frozen=True, rename="camel"):
    """A run that did not complete: its worker died on every attempt (``error`` says how,
    e.g. ``worker killed by SIGKILL``)."""

    failure: Failure
    seed: int
    error: str
    attempts: int


# Attempts of one run before it is reported as failed: the first and one retry.
MAX_ATTEMPTS: Final = 2


def death(exitcode: int | None, who: str = "worker") -> str:
    """How a process ended, as a failed run reports it: ``worker killed by SIGKILL``."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"{who} killed by {name}"
    return f"{who} exited with code {exitcode}"


@dataclass(frozen=True, slots=True)
class Job:
    index: int
    seed: int
    failure: Failure


# The base state of every seed in a worker process, set once per process.
_BASES: dict[int, Snapshot[Simulation]] = {}
_OPTIONS: list[SweepOptions] = []


class Bases(Mapping[int, bytes]):
    """The settled base state of each seed, as its snapshot's bytes — and, where the
    platform forks, as the live Simulation itself, snapshotted only if a backend asks for the
    bytes (the serial and Ray backends do; it takes seconds at 50,000 pods): a worker forked
    from this process reads the live state as it is (copy-on-write) instead of restoring a
    snapshot, which saves the restore and lays the copy out better (runs from a restored copy
    take about a quarter longer). Pickled (spawned workers, Ray), it is a dict of bytes."""

    def __init__(self) -> None:
        self._seeds: list[int] = []
        self._live: dict[int, Simulation] = {}
        self._data: dict[int, bytes] = {}

    def add(self, seed: int, sim: Simulation) -> None:
        self._seeds.append(seed)
        if FORKS:
            self._live[seed] = sim
        else:
            self._data[seed] = sim.snapshot().data

    def live(self, seed: int) -> Simulation | None:
        return self._live.get(seed)

    def release(self) -> None:
        """Drop the live states (the bytes taken so far stay)."""
        self._live.clear()

    def __getitem__(self, seed: int) -> bytes:
        data = self._data.get(seed)
        if data is None:
            sim = self._live.get(seed)
            if sim is None:
                raise KeyError(seed)
            data = self._data[seed] = sim.snapshot().data
        return data

    def __iter__(self) -> Iterator[int]:
        return iter(self._seeds)

    def __len__(self) -> int:
        return len(self._seeds)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self.items()),))


def init_worker(bases: Mapping[int, bytes], options: SweepOptions) -> None:
    _BASES.clear()
    _BASES.update({seed: Snapshot(data) for seed, data in bases.items()})
    _OPTIONS[:] = [options]


def worker_options() -> SweepOptions:
    """The options this worker was started with (``init_worker``)."""
    return _OPTIONS[0]


# A test hook, never set in use: the path of a file of lines "once|always <failure name>".
# A worker about to run that failure kills itself with SIGKILL, as the OOM killer would: on
# every attempt (always), or on the first only (once: it first leaves a mark beside the file).
# Read by the workers alone (the pool's, Ray's tasks), never in the sweep's own process.
KILL_HOOK_ENV: Final = "TOPOSPREAD_TEST_KILL_WORKER"


def kill_hook(job: Job) -> None:
    """Kill this worker if the test hook (KILL_HOOK_ENV) names the job's failure."""
    path = os.environ.get(KILL_HOOK_ENV)
    if not path:
        return
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return
    for line in lines:
        mode, _, name = line.partition(" ")
        if name != job.failure.name:
            continue
        if mode == "once":
            mark = f"{path}.{job.index}.killed"
            try:
                os.close(os.open(mark, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return  # killed once already: this is the retry
        os.kill(os.getpid(), signal.SIGKILL)


def run_job(job: Job) -> tuple[int, Run]:
    """One job in a worker: restore the seed's base, replay, free the copy. The garbage
    collector waits until the end: mid-run collections would walk the whole copy again and
    again (a copy is a few hundred thousand objects), one collection after it frees it."""
    gc.disable()
    try:
        sim = _BASES[job.seed].restore()
        run = run_failure(sim, job.failure, job.seed, _OPTIONS[0])
        del sim
    finally:
        gc.enable()
    gc.collect()
    return job.index, run


def run_jobs(
    bases: Mapping[int, bytes], options: SweepOptions, jobs: Sequence[Job]
) -> list[tuple[int, Run]]:
    """A batch of jobs in one call (a Ray task)."""
    init_worker(bases, options)
    out = []
    for job in jobs:
        kill_hook(job)
        out.append(run_job(job))
    return out


# A backend runs jobs against the snapshots of the base states and reports each run as it
# completes, or as failed when its worker died on every attempt: run(bases, options, jobs,
# done).
Done = Callable[[int, Run | RunError], None]
Backend = Callable[[Mapping[int, bytes], SweepOptions, Sequence[Job], Done], None]


def serial_backend(
    bases: Mapping[int, bytes],
    options: SweepOptions,
    jobs: Sequence[Job],
    done: Done,
) -> None:
    init_worker(bases, options)
    for job in jobs:
        done(*run_job(job))
