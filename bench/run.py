"""Benchmarks mirroring kube-scheduler's scheduler_perf workloads, plus end-to-end CLI runs.

    python bench/run.py [--quick] [--max-seconds N] [--detail] [--reference | --compare]
                        [--reference-seconds N] [NAME...]

NAME selects workloads by family (``TopologySpreading``) or full name
(``TopologySpreading/5000Nodes_5000Pods``); none selects all. ``--quick`` builds every
workload at a tenth of its size, for smoke runs. ``--list`` prints the names. Like upstream's
scheduler_perf, the benchmark measures scheduling, not reporting: the Scheduler runs with the
fast path on and report detail off (``detail=False`` changes no decision: tests/test_fastpath.py
checks it). ``--detail`` turns the per-node scores and reasons that ``topospread schedule``
reports back on; ``--reference`` turns the fast path off; the line says so.

``--compare`` runs each scheduling workload twice, on the fast path and then on the reference
path (each in its own process, each with its own line), and adds a third line with the two
rates and their ratio:

    TopologySpreading/5000Nodes_5000Pods: fast N pods/s, reference M pods/s, R.Rx

The reference path can take hours at full size, so its run has its own time budget per phase,
``--reference-seconds`` (default 60, never more than ``--max-seconds``): past it the reference
rate is the rate so far and the line says after how many pods it stopped. The CLI and loading
workloads run once, as without ``--compare``, and get no ratio.

The scheduling workloads (bench/workloads.py) are scheduler_perf's topology-spreading, pod
(anti-)affinity, Unschedulable and PreemptionBasic workloads, and Scale. Two more run the CLI end to
end on files written to a temporary directory (bench/chart.py, bench/timeline_scenario.py,
bench/sweep_inputs.py): ``ChartCluster`` runs ``topospread schedule --nodes LIST -o jsonl`` on an
EKS-like cluster (one ``kubectl get -o yaml`` List) and reports its Pending pods per second of the
whole command, loading and output included; ``SimulateTimeline`` runs
``topospread simulate SCENARIO -o json`` on a timeline (scale up, rollout, zone loss, wait, restore)
and reports its wall seconds. ``SweepNodes`` and ``SweepZones`` run
``topospread sweep CLUSTER --nodes|--zones -o json`` on the timeline's Deployments over 1,000 nodes
(every single-node failure) and 5,000 nodes (the three zone failures), and report the runs, the wall
seconds of the whole command (load, base settle, sweep, output) and the runs per second of it.
``SweepZonesAutoscaler`` is the zone sweep with ``--autoscaler``: cluster-autoscaler in the loop,
one node group per zone, on the cluster as it keeps one (bench/sweep_inputs.py's
``autoscaled_sweep_cluster``). ``Rebalance`` plans on 5,000 nodes and 50,000 pods where a new zone
leaves three small Deployments past their maxSkew: a child process loads and settles the cluster,
then plans (``plan_rebalance``), and reports the seconds of each.

Each workload runs in its own child process, so that one workload's memory cannot inflate
another's figure, started through a small launcher (a bare interpreter, about 9 MiB) that
reports the child's peak resident set size from ``wait4``'s rusage (``ru_maxrss``: the child's
whole life, setup included). On Linux a process's ``ru_maxrss`` starts from the resident size
of the process it was forked from (the exec keeps the larger), and the bench grows to hundreds
of MiB writing the inputs, so the bench never forks the measured command itself: every peak
printed is the command's own. stdout gets one line per
workload:

    TopologySpreading/5000Nodes_5000Pods: N pods/s, peak RSS M MiB
    ChartCluster/1000Nodes_10000BoundPods_2000Pods: N pods/s, peak RSS M MiB
    SimulateTimeline/3000Nodes_30000Pods: S s, peak RSS M MiB
    SweepNodes/1000Nodes_10000Pods: N runs in S s, R runs/s, peak RSS M MiB (...)
    Load100kPods/YAML: S s, peak RSS M MiB

The CLI workloads are the ``topospread`` command itself as the child: the parent times it from
spawn to exit and reads its peak RSS the same way; its stdout goes to a file, read afterwards to
count the pods left Pending. Past ``--max-seconds`` the parent kills it and says ``stopped
after S s``.

The sweep's replays run in worker processes, the CLI's children: wait4's ``ru_maxrss`` covers
them once the CLI has reaped them, but as the largest single process, not their sum. So while a
sweep runs the parent also samples its process tree from /proc (Linux), and the line's peak RSS
is the peak of the tree's summed RSS (pages the forked workers and their per-run children still
share with the CLI count once per process: an upper bound), then in brackets its summed PSS
(shared pages split between the processes sharing them: what the tree takes) and the largest
process's. stderr adds when the workers came and went: the CLI starts them once the base state
is settled and snapshotted, and stops them when the last failure has been replayed, which splits
the wall time into base, sweep and output; and the CPU seconds of the CLI and its workers
(wait4's rusage) beside the cores other processes kept busy meanwhile (/proc/stat), which says
whether something else on the machine slowed the run. Past ``--max-seconds`` the parent
interrupts the sweep (SIGINT, as Ctrl-C: the CLI writes the runs completed so far) and says how
many of them there were.

Progress and setup timings go to stderr.

This script is the parent, and the child it spawns for each scheduling and loading workload
(``--worker``): the workloads' names are bench/jobs.py's, the child's measured loop is
bench/measure.py, and the end-to-end CLI runs are bench/cli_runs.py.

A scheduling workload runs as scheduler_perf runs it: the default profile and configuration
(percentageOfNodesToScore adaptive), one Scheduler over the cluster; the init pods are
enqueued and scheduled first, unmeasured; then the measured pods are enqueued, and only the
scheduling cycles that follow are timed (enqueueing, with its PreEnqueue checks, is reported
on stderr). The rate is measured pods bound per second of that loop. After ``--max-seconds``
(default 300) of either phase the phase stops where it is; the line then reports the rate so
far and says ``(stopped after N of M pods)``. Past ``--max-rss-mib`` (default: half the
machine's memory) it stops likewise, ``... at the memory limit``: the scheduler keeps every
attempt's Decision, scores of every scored node included, so memory grows with each pod.

Unschedulable enqueues its churn pods (9 CPU, priority 10, never schedulable) during the
measured phase, one after every 120 measured pods bound. In PreemptionBasic each measured pod's
first attempt preempts (a failed attempt: the victims are deleted at once and the pod goes back
to the active queue) and a later one binds it, as ``topospread schedule`` drives the Scheduler;
the line adds ``(N preempted)``. The worker logs the measured pods bound and left
unschedulable, the pods preempted and the other (init, churn) pods left unschedulable.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import manifests  # bench/manifests.py: the script's directory is first on sys.path
import msgspec
from cli_runs import run_chart, run_html, run_rebalance, run_sweep, run_timeline
from jobs import (  # bench/jobs.py
    CHART,
    HTML,
    LOAD_PODS,
    QUICK_DIVISOR,
    REBALANCE,
    STATEFUL_CHART,
    SWEEP,
    TIMELINE,
    Job,
    jobs,
    select,
)
from launcher import launch  # bench/launcher.py
from measure import MEMORY, TIME, Limits, Mode, Result, log, worker  # bench/measure.py


def default_max_rss_mib() -> float:
    """Half the machine's memory. Detailed Decisions at 5,000 nodes take about 0.3 MiB each,
    so DefaultTopologySpreading's 50,000 measured pods would need some 16 GiB."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**21
    except (ValueError, OSError):
        return 8192.0


def spawn(
    job: Job, divisor: int, limits: Limits, mode: Mode, manifest: Path | None
) -> Result | None:
    """Run ``job`` in a child process and print its line: the child's Result, None if it
    failed."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        job.name,
        "--divisor",
        str(divisor),
        "--max-seconds",
        str(limits.seconds),
        "--max-rss-mib",
        str(limits.rss_mib),
    ]
    if manifest is not None:
        cmd += ["--manifest", str(manifest)]
    cmd += [] if mode.fast else ["--reference"]
    cmd += ["--detail"] if mode.detail else []
    log(f"{job.name}:")
    launched = launch(cmd, subprocess.PIPE)
    assert launched.proc.stdout is not None
    out = launched.proc.stdout.read()
    exited = launched.poll(block=True)
    assert exited is not None
    rss = exited.rss_mib
    if exited.code != 0:
        print(f"{job.name}: FAILED (exit code {exited.code}), peak RSS {rss:,.0f} MiB")
        return None
    r = msgspec.json.decode(out.strip().splitlines()[-1], type=Result)
    if job.manifest_format is not None:
        print(f"{r.name}: {r.seconds:.1f} s, peak RSS {rss:,.0f} MiB", flush=True)
        return r
    rate = _rate(r)
    notes = [f"({n})" for n in _stops(r, "", "")]
    if r.unschedulable:
        notes.append(f"({r.unschedulable} unschedulable)")
    if r.preempted:
        notes.append(f"({r.preempted} preempted)")
    notes += mode.notes()
    suffix = "".join(" " + n for n in notes)
    print(f"{r.name}: {rate:,.1f} pods/s, peak RSS {rss:,.0f} MiB{suffix}", flush=True)
    return r


def _rate(r: Result) -> float:
    """Measured pods bound per second of the timed loop."""
    return r.bound / r.seconds if r.seconds > 0 else 0.0


def _stops(r: Result, lead: str, budget: str) -> list[str]:
    """Why a run's rate covers fewer pods than the workload has, each reason after ``lead``
    (a time stop's after ``budget``); empty when it covers all."""
    notes = []
    if r.init_stopped:
        notes.append(f"{lead}init stopped after {r.init_stopped} pods{budget}")
    if r.stopped == TIME:
        notes.append(f"{lead}stopped after {r.bound} of {r.total} pods{budget}")
    elif r.stopped == MEMORY:
        notes.append(f"{lead}stopped after {r.bound} of {r.total} pods at the memory limit")
    return notes


def _stopped_note(path: str, r: Result, budget: str) -> str:
    """Why ``path``'s rate covers fewer pods than the workload has ("" when it covers all)."""
    return "".join(f" ({n})" for n in _stops(r, f"{path} ", budget))


def compare(job: Job, divisor: int, limits: Limits, reference_limits: Limits, detail: bool) -> None:
    """Run a scheduling workload on the fast path, then on the reference path within
    ``reference_limits``, and print a line with both rates and their ratio."""
    fast = spawn(job, divisor, limits, Mode(fast=True, detail=detail), None)
    reference = spawn(job, divisor, reference_limits, Mode(fast=False, detail=detail), None)
    if fast is None or reference is None:
        print(f"{job.name}: no ratio (a run FAILED)", flush=True)
        return
    fast_rate, reference_rate = _rate(fast), _rate(reference)
    ratio = f"{fast_rate / reference_rate:,.1f}x" if reference_rate > 0 else "no ratio"
    budget = f" in its {reference_limits.seconds:g} s budget"
    notes = _stopped_note("fast", fast, "") + _stopped_note("reference", reference, budget)
    notes += " (detail on)" if detail else ""
    print(
        f"{job.name}: fast {fast_rate:,.0f} pods/s, reference {reference_rate:,.0f} pods/s, "
        f"{ratio}{notes}",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("names", nargs="*", metavar="NAME", help="workload family or full name")
    p.add_argument("--quick", action="store_true", help="every workload at 1/10 of its size")
    p.add_argument(
        "--max-seconds",
        type=float,
        default=300.0,
        help="per phase: stop scheduling after this long and report the rate so far",
    )
    p.add_argument(
        "--max-rss-mib",
        type=float,
        default=default_max_rss_mib(),
        help="per phase: stop scheduling past this peak RSS (default: half the RAM)",
    )
    p.add_argument(
        "--detail",
        action="store_true",
        help="build the Scheduler with detail=True (per-node scores and reasons in Decisions)",
    )
    p.add_argument(
        "--reference",
        action="store_true",
        help="build the Scheduler with fast=False (every attempt through the plugins)",
    )
    p.add_argument(
        "--compare",
        action="store_true",
        help="run each scheduling workload on the fast and the reference path; print the ratio",
    )
    p.add_argument(
        "--reference-seconds",
        type=float,
        default=60.0,
        help="with --compare, per phase: the reference run's time budget (default 60)",
    )
    p.add_argument("--list", action="store_true", help="print the workload names and exit")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--divisor", type=int, default=1, help=argparse.SUPPRESS)
    p.add_argument("--manifest", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.compare and args.reference:
        p.error("--compare runs both paths: leave out --reference")
    limits = Limits(seconds=args.max_seconds, rss_mib=args.max_rss_mib)
    reference_limits = Limits(
        seconds=min(args.reference_seconds, args.max_seconds), rss_mib=args.max_rss_mib
    )
    mode = Mode(fast=not args.reference, detail=args.detail)
    if args.worker:
        worker(args.worker, args.divisor, limits, mode, args.manifest)
        return
    divisor = QUICK_DIVISOR if args.quick else 1
    selected = select(jobs(divisor), args.names)
    if args.list:
        for job in selected:
            print(job.name)
        return
    with tempfile.TemporaryDirectory(prefix="topospread-bench-") as tmp:
        files: dict[str, Path] = {}
        for job in selected:
            if job.manifest_format is not None and job.manifest_format not in files:
                n = LOAD_PODS // divisor
                path = Path(tmp) / f"pods.{job.manifest_format.lower()}"
                t0 = time.perf_counter()
                if job.manifest_format == "YAML":
                    manifests.check_template()
                    manifests.write_yaml(path, n)
                else:
                    manifests.write_json(path, n)
                log(f"wrote {n} pods as {job.manifest_format} in {time.perf_counter() - t0:.1f} s")
                files[job.manifest_format] = path
        for job in selected:
            if job.cli in (CHART, STATEFUL_CHART):
                run_chart(job, Path(tmp), divisor, limits, stateful=job.cli == STATEFUL_CHART)
                continue
            if job.cli == TIMELINE:
                run_timeline(job, Path(tmp), divisor, limits)
                continue
            if job.cli == SWEEP:
                run_sweep(job, Path(tmp), divisor, limits)
                continue
            if job.cli == REBALANCE:
                run_rebalance(job, Path(tmp), divisor, limits)
                continue
            if job.cli == HTML:
                run_html(job, Path(tmp), limits)
                continue
            if args.compare and job.manifest_format is None:
                compare(job, divisor, limits, reference_limits, args.detail)
                continue
            manifest = files.get(job.manifest_format) if job.manifest_format else None
            spawn(job, divisor, limits, mode, manifest)


if __name__ == "__main__":
    main()
