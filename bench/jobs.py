"""The benchmark's workloads as the parent runs them: the scheduling workloads of
bench/workloads.py, each in a child (bench/measure.py), and the end-to-end CLI runs
(bench/cli_runs.py), by name and family, at full size or divided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from workloads import WORKLOADS  # bench/workloads.py: the script's directory is on sys.path

QUICK_DIVISOR: Final = 10
LOAD_PODS: Final = 100_000
LOAD_FORMATS: Final = ("YAML", "JSON")


@dataclass(frozen=True, slots=True)
class Job:
    name: str
    family: str
    manifest_format: str | None = None  # YAML or JSON for the loading benchmark
    cli: str | None = None  # CHART, STATEFUL_CHART, TIMELINE, SWEEP or REBALANCE: on files
    sweep: Sweep | None = None  # for SWEEP


REBALANCE: Final = "rebalance"
HTML: Final = "html"
CHART: Final = "chart"
STATEFUL_CHART: Final = "stateful-chart"
TIMELINE: Final = "timeline"
SWEEP: Final = "sweep"


@dataclass(frozen=True, slots=True)
class Sweep:
    """A ``topospread sweep`` workload: the failures its ``flag`` chooses, of a cluster of
    ``nodes`` and ``pods`` at full size (bench/sweep_inputs.py's ``sweep_cluster``)."""

    family: str
    flag: str
    nodes: int
    pods: int
    # With cluster-autoscaler in the loop (bench/sweep_inputs.py's ``autoscaled_sweep_cluster``).
    autoscaler: bool = False

    def name(self, divisor: int) -> str:
        return f"{self.family}/{self.nodes // divisor}Nodes_{self.pods // divisor}Pods"


SWEEPS: Final = (
    Sweep("SweepNodes", "--nodes", 1000, 10_000),
    Sweep("SweepZones", "--zones", 5000, 50_000),
    Sweep("SweepZonesAutoscaler", "--zones", 5000, 50_000, autoscaler=True),
)


def jobs(divisor: int) -> list[Job]:
    out = [Job(w.name(divisor), w.family) for w in WORKLOADS]
    out.append(
        Job(
            f"ChartCluster/{1000 // divisor}Nodes_{10_000 // divisor}BoundPods_"
            f"{2000 // divisor}Pods",
            "ChartCluster",
            cli=CHART,
        )
    )
    out.append(
        Job(
            f"ChartClusterStateful/{1000 // divisor}Nodes_{10_000 // divisor}BoundPods_"
            f"{2000 // divisor}Pods",
            "ChartClusterStateful",
            cli=STATEFUL_CHART,
        )
    )
    out.append(
        Job(
            f"SimulateTimeline/{3000 // divisor}Nodes_{30_000 // divisor}Pods",
            "SimulateTimeline",
            cli=TIMELINE,
        )
    )
    out += [Job(s.name(divisor), s.family, cli=SWEEP, sweep=s) for s in SWEEPS]
    out.append(
        Job(f"Rebalance/{5000 // divisor}Nodes_{50_000 // divisor}Pods", "Rebalance", cli=REBALANCE)
    )
    out.append(Job("HtmlReport/300Nodes_4000Pods", "HtmlReport", cli=HTML))
    family = f"Load{LOAD_PODS // divisor // 1000}kPods"
    out += [Job(f"{family}/{fmt}", family, fmt) for fmt in LOAD_FORMATS]
    return out


def select(all_jobs: Sequence[Job], names: Sequence[str]) -> list[Job]:
    if not names:
        return list(all_jobs)
    unknown = [n for n in names if not any(n in (j.name, j.family) for j in all_jobs)]
    if unknown:
        known = ", ".join(j.name for j in all_jobs)
        raise SystemExit(f"bench: unknown workload {unknown[0]!r}; known: {known}")
    return [j for j in all_jobs if j.name in names or j.family in names]
