"""``Inputs``: everything a command was given to read, and the one way each document it runs
on is assembled from them.

A command is given a document (a scenario, a timeline, a verify scenario) or none, manifest
files (``--nodes``, ``--pods``, ``--objects``), and a cluster (``--cluster`` files or a live
cluster); ``Inputs`` checks that they go together and reads them in the order the document's
format wants. The formats themselves are parsed where they are defined (simulator/scenario.py,
simulator/timeline_format.py, analysis/verify_scenario.py, conformance/case.py), all through
``api.loader``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from topospread.errors import ManifestError
from topospread.inputs.cluster import LIVE_FLAGS, ClusterSource, Warn, ignore
from topospread.inputs.manifests import Located, case_files, read_manifests
from topospread.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from topospread.analysis.verify_scenario import VerifyScenario
    from topospread.conformance.case import Case
    from topospread.simulator.autoscaler_spec import AutoscalerSpec
    from topospread.simulator.node_groups import NodeGroup
    from topospread.simulator.scenario import Scenario
    from topospread.simulator.timeline_format import TimelineScenario


# What ``schedule`` and ``explain`` say of a SCENARIO file of Kubernetes manifests.
MANIFESTS_HINT: Final = (
    ": give such a file with --pods FILE (its nodes and bound pods make the cluster, its "
    "workloads and unbound pods are placed), or the cluster's and the workloads' apart with "
    "--nodes FILE --pods FILE"
)


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a command was given to read. ``warn`` receives what reading found but did not
    stop at (a live cluster's resources left out). ``limits``: the most nodes and pods the
    documents may ask for, checked before anything is built (``topospread.limits``)."""

    document: Path | None = None
    nodes: tuple[Path, ...] = ()
    pods: tuple[Path, ...] = ()
    objects: tuple[Path, ...] = ()
    cluster: ClusterSource = field(default_factory=ClusterSource)
    config: Path | None = None
    warn: Warn = ignore
    limits: Limits = DEFAULT_LIMITS

    def scenario(self, *, meanwhile: Callable[[], object] | None = None) -> Scenario:
        """The scheduling inputs of ``schedule`` and ``explain``: a scenario document, manifest
        files (workloads given with ``pods`` expanded into the pods their controllers create;
        ``cluster`` files read as ``objects``), or a live cluster; bound pods exist, unbound
        ones are queued. ``config`` replaces the scheduler configuration.

        ``meanwhile`` (the caller's warm-up: the modules it imports next) is called once,
        unless reading fails: while forked workers decode a large manifest file (see
        ``api.loader.load_text``), or else once the inputs are read.
        """
        warm_up = _Once(meanwhile)
        with kept_for_the_run():
            loaded = self._scenario(warm_up)
        warm_up()
        return loaded

    def _scenario(self, warm_up: _Once) -> Scenario:
        files = [*self.nodes, *self.pods, *self.objects, *self.cluster.files]
        given = (self.document is not None, bool(files), self.cluster.is_live)
        if sum(given) > 1:
            raise ManifestError(
                "give one input: a SCENARIO file, --nodes/--pods/--objects/--cluster files, "
                f"or a live cluster ({LIVE_FLAGS})"
            )
        if self.document is not None:
            from topospread.simulator.scenario import load_config, load_scenario

            loaded = load_scenario(self.document, manifests_hint=MANIFESTS_HINT)
            if self.config is not None:
                loaded.config = load_config(self.config)
                loaded.warnings[:0] = loaded.config.warnings
            return loaded
        if not any(given):
            raise ManifestError(
                "nothing to schedule: give a SCENARIO file, --nodes and --pods files, "
                "--cluster files, or --live"
            )
        # The modules that make the scenario are imported while the manifests are read.
        warm_up.first(_imports_after_reading_manifests)
        warnings: list[str] = []
        from topospread.api.admission_hints import collecting

        # The processes that decode a large file find its pods' admission hints as they go.
        with collecting() as hints:
            if self.cluster.is_live:
                objects = self.cluster.read(warnings.append)
            else:
                objects = self._expanded(files, warm_up)
        from topospread.framework.config import default_config
        from topospread.simulator.scenario import build_scenario, load_config

        config = load_config(self.config) if self.config is not None else default_config()
        scenario = build_scenario(objects, config, hints=hints)
        scenario.warnings[:0] = warnings
        return scenario

    def _expanded(self, files: Sequence[Path], meanwhile: Callable[[], object]) -> list[Located]:
        """The objects of manifest files, the workloads of ``pods`` files replaced by their
        pods; ``meanwhile`` as ``read_manifests`` calls it."""
        items: list[Located] = []
        expandable: list[bool] = []
        for path in files:
            read = read_manifests([path], meanwhile=meanwhile)
            items += read
            expandable += [path in self.pods] * len(read)
        from topospread.analysis.verify_scenario import expand_workload_pods

        if any(expandable):
            # What the workloads would create is counted before it is (topospread.limits).
            budget = self.limits.budget()
            for (where, obj), expand in zip(items, expandable, strict=True):
                if expand:
                    budget.add_object(obj, where)
        return expand_workload_pods(items, expandable)

    def timeline(self) -> TimelineScenario:
        """The timeline scenario of ``simulate``, ``sweep`` and ``rebalance`` (or an empty one
        when only a cluster is given), started from the given cluster (read-only): its objects
        come before the scenario's own."""
        with kept_for_the_run():
            loaded = self._timeline()
        self.check_timeline(loaded)
        return loaded

    def check_timeline(
        self,
        scenario: TimelineScenario,
        then: Sequence[Mapping[str, Any]] = (),
        then_source: Path | None = None,
    ) -> None:
        """Refuse a timeline scenario (with sweep's ``--then`` steps, read from
        ``then_source``) that could ask for more nodes or pods than ``limits``, before anything
        is built: a ``SizeError``."""
        from topospread.simulator.sizes import check_timeline

        check_timeline(scenario, self.limits, then, str(then_source or "--then"))

    def _timeline(self) -> TimelineScenario:
        from topospread.simulator.timeline_format import load_timeline, parse_timeline, with_cluster

        if self.document is not None:
            loaded = load_timeline(self.document)
        elif self.cluster.given:
            loaded = parse_timeline({}, "cluster")
        else:
            raise ManifestError(
                f"give a timeline scenario, --cluster files or a live cluster ({LIVE_FLAGS})"
            )
        if self.cluster.given:
            loaded = with_cluster(loaded, self.cluster.read(self.warn))
        return loaded

    def verify_scenario(self) -> VerifyScenario:
        """The verify scenario of ``verify``: the ``schedule`` keys plus workloads and
        invariants."""
        from topospread.analysis.verify_scenario import load_verify_scenario

        if self.document is None:
            raise ManifestError("give a verify scenario")
        return load_verify_scenario(self.document, self.limits)

    def cases(self, paths: Sequence[Path]) -> Iterator[tuple[Path, Case]]:
        """Each case file of ``paths`` (directories searched recursively, sorted), read as it
        is reached: a bad case stops the run after the ones before it."""
        from topospread.conformance.case import load_case

        for path in case_files(paths):
            yield path, load_case(path)

    def steps(self, path: Path) -> list[dict[str, Any]]:
        """A file of timeline steps (a YAML list, or ``{timeline: [...]}``), checked as the
        timeline checks them: sweep's ``--then``."""
        from topospread.api.loader import read_yaml_documents
        from topospread.simulator.timeline_steps.actions import parse_step

        docs = read_yaml_documents(path)
        steps = docs[0] if len(docs) == 1 else None
        if isinstance(steps, dict) and set(steps) == {"timeline"}:
            steps = steps["timeline"]
        if not isinstance(steps, list):
            raise ManifestError(f"{path}: expected a list of timeline steps ({{<action>: args}})")
        for i, raw in enumerate(steps):
            parse_step(raw, i, str(path))
        return steps

    def autoscaler(self, path: Path, groups: Mapping[str, NodeGroup]) -> AutoscalerSpec:
        """A file holding a timeline scenario's ``autoscaler:`` section (or ``{autoscaler:
        ...}``), its node groups referring to ``groups`` (the scenario's ``nodeGroups``):
        ``sweep --autoscaler`` and ``check --autoscaler``."""
        from topospread.api.loader import read_yaml_documents
        from topospread.simulator.autoscaler_spec import parse_autoscaler

        docs = read_yaml_documents(path)
        section = docs[0] if len(docs) == 1 else None
        if isinstance(section, dict) and set(section) == {"autoscaler"}:
            section = section["autoscaler"]
        where = f"{path}: autoscaler"
        if not isinstance(section, dict):
            raise ManifestError(
                f"{where}: expected one mapping with clusterAutoscaler or karpenter "
                "(a timeline scenario's autoscaler: section)"
            )
        try:
            return parse_autoscaler(section, where, groups, path.parent)
        except ManifestError as err:
            if str(err).startswith(str(path)):
                raise
            raise ManifestError(f"{where}: {err}") from err

    def manifests(self, names: Sequence[str]) -> list[Located]:
        """The objects of the files, directories and standard input (``-``) named: ``check``'s
        chart output."""
        return read_manifests(names)


class _Once:
    """Warm-up steps run together once, when first called (later calls do nothing): by the
    first read that forks workers, or after the reads."""

    def __init__(self, step: Callable[[], object] | None) -> None:
        self._steps = [] if step is None else [step]

    def first(self, step: Callable[[], object]) -> None:
        """Run ``step`` before the others."""
        self._steps.insert(0, step)

    def __call__(self) -> None:
        steps, self._steps = self._steps, []
        for step in steps:
            step()


def _imports_after_reading_manifests() -> None:
    """The modules that turn manifests into a scenario (most of the scheduler's), imported
    while a large manifest file is decoded by forked workers: 0.1 s at a command's start."""
    for module in ("topospread.analysis.verify_scenario", "topospread.simulator.scenario"):
        import_module(module)


@contextmanager
def kept_for_the_run() -> Iterator[None]:
    """Read (and admit) a command's inputs — or build its scheduling run: cluster state, node
    table, indexes and decisions, all kept until the report is written — with the garbage
    collector paused, then move everything alive out of its generations for the rest of the
    run.

    NOTE: what a command reads (a cluster dump: a million objects, none in a reference cycle)
    all survives, and lives until the command ends. Collections triggered while it is read
    would rescan it again and again for nothing, as the loader's own pause says; left in the
    collector's oldest generation afterwards, every full collection the run triggers rescans
    all of it (a tenth of ``schedule``'s time on a 52 MiB dump). Frozen objects are still
    freed when unreferenced; only cycles among them wait for ``gc.unfreeze()``, which the CLI
    calls when the command ends (cli/options.py).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
