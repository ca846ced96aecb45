"""Preemption's dry run by NodeResourcesFit's arithmetic against the reference dry run.

Where NodeResourcesFit is the only filter the victims can sway, DefaultPreemption gives
victims back by Fit's arithmetic instead of a filter run per pod (``reprieve_by_fit``). These
random clusters are made for that case — pods of several sizes and priorities packed onto
nodes, budgets that some evictions would violate, queued pods that arrive nominated, pods of
equal priority that preemption nominates — and every attempt (node, scores, reasons, message,
victims) must be the reference path's, where every step runs the filters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any
from unittest.mock import patch

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topospread.api.types import Node, Pod, PodDisruptionBudget
from topospread.framework.config import default_config
from topospread.framework.cycle_state import CycleState
from topospread.framework.preemption import (
    Candidate,
    Evaluator,
    nodes_where_preemption_might_help,
)
from topospread.framework.schedule_one import NodeStatuses
from topospread.framework.status import Status
from topospread.framework.types import NodeInfo
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario

SEEN: Counter[str] = Counter()
GPU = "example.com/gpu"


def node(name: str, cpu: str, pods: str, gpus: str) -> Node:
    raw = {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods, GPU: gpus}},
    }
    return msgspec.convert(raw, Node)


@st.composite
def pod(draw: st.DrawFn, name: str, nodes: list[str], bound: bool) -> Pod:
    cpu = draw(st.sampled_from(["300m", "500m", "900m", "1500m"]))
    requests = {"cpu": cpu}
    if draw(st.integers(0, 3)) == 0:
        requests[GPU] = (
            "1"  # an extended resource: Fit's general arithmetic, not the cpu/memory one
        )
    spec: dict[str, Any] = {
        "containers": [
            {"name": "c", "image": "app:1", "resources": {"requests": requests, "limits": requests}}
        ],
        "priority": draw(st.sampled_from([0, 5, 10] if bound else [5, 10, 100])),
    }
    raw: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": draw(st.sampled_from("ab"))},
        },
        "spec": spec,
    }
    if bound:
        spec["nodeName"] = draw(st.sampled_from(nodes))
        if draw(st.booleans()):
            raw["status"] = {"startTime": f"2026-01-0{draw(st.integers(1, 9))}T00:00:00Z"}
    elif draw(st.integers(0, 5)) == 0:
        raw["status"] = {"nominatedNodeName": draw(st.sampled_from(nodes))}
    return msgspec.convert(raw, Pod)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    names = [f"n{i}" for i in range(draw(st.integers(1, 5)))]
    nodes = [
        node(
            n,
            draw(st.sampled_from(["2", "3"])),
            draw(st.sampled_from(["3", "110"])),
            draw(st.sampled_from(["0", "2"])),
        )
        for n in names
    ]
    bound = [draw(pod(f"b{i}", names, True)) for i in range(draw(st.integers(0, 12)))]
    queue = [draw(pod(f"q{i}", names, False)) for i in range(draw(st.integers(1, 6)))]
    budgets = [
        msgspec.convert(
            {
                "metadata": {"name": f"pdb-{app}", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": app}}},
                "status": {"disruptionsAllowed": draw(st.integers(0, 2))},
            },
            PodDisruptionBudget,
        )
        for app in "ab"
        if draw(st.booleans())
    ]
    return Scenario(nodes=nodes, pods=bound, queue=queue, objects=budgets, config=default_config())


def summary(run: ScheduleRun) -> list[Any]:
    return [
        (d.key, d.node, d.feasible, d.scores, d.reasons, d.message, d.preempted)
        for d in run.attempts
    ]


# NOTE: derandomized, so that the coverage the tests below count is the same on every run (it
# counts what the random scenarios reached) and does not depend on the tests that ran before.
COUNTED = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)


@COUNTED
@given(scenarios(), st.integers(0, 3))
def test_reprieve_by_fit_picks_the_reference_victims(scenario: Scenario, seed: int) -> None:
    reference = schedule(scenario, seed=seed, fast=False)
    fast = schedule(scenario, seed=seed, fast=True)
    assert summary(fast) == summary(reference)
    for fwk in fast.scheduler.frameworks.values():
        plugin = fwk.plugins["DefaultPreemption"]
        assert isinstance(plugin, DefaultPreemption) and plugin.reprieve_by_fit
    SEEN["preempted"] += sum(len(d.preempted) for d in fast.attempts)
    SEEN["nominated"] += fast.scheduler.fast_nominated
    queued = {p.metadata.name: p for p in scenario.queue}
    SEEN["gpu preemptor"] += sum(
        bool(d.preempted) and GPU in str(queued[d.pod.metadata.name].spec.containers)
        for d in fast.attempts
    )


def test_preemption_by_fit_was_exercised() -> None:
    if not SEEN["preempted"]:  # run alone (-k): the property test counts first
        test_reprieve_by_fit_picks_the_reference_victims()
    assert SEEN["preempted"] > 50
    assert SEEN["nominated"] > 20
    assert SEEN["gpu preemptor"] > 10


def _candidates(found: list[Candidate]) -> list[tuple[str, tuple[str, ...], int]]:
    return [
        (c.name, tuple(p.metadata.name for p in c.victims.pods), c.victims.num_pdb_violations)
        for c in found
    ]


@COUNTED
@given(scenarios(), st.integers(0, 3))
def test_the_screened_dry_run_finds_the_reference_candidates(scenario: Scenario, seed: int) -> None:
    # Wherever the fast path screens the nodes, the dry run over the screened nodes alone
    # (judged without copies where only Fit matters) finds the candidates the full reference
    # dry run finds, in order, victim for victim; and every node that is a candidate passed
    # the screen.
    original = Evaluator.find_candidates

    def checked(
        self: Evaluator,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        statuses: Mapping[str, Status],
    ) -> tuple[list[Candidate], Mapping[str, Status], list[str]]:
        screen = statuses.screen if isinstance(statuses, NodeStatuses) else None
        if screen is not None and not statuses.victimless:
            potential = nodes_where_preemption_might_help(all_nodes, statuses)
            pdbs = self.handle.pod_disruption_budgets()
            n = len(potential)
            for offset in sorted({0, seed % n, n - 1}):
                full, _, _ = self.dry_run_preemption(state, pod, potential, pdbs, offset, n)
                screened = self.dry_run_screened(state, pod, potential, pdbs, offset, n, screen)
                assert _candidates(screened) == _candidates(full)
                names = {potential[i].name for i in screen}
                assert all(c.name in names for c in full)
                SEEN["screened candidates"] += len(full)
        return original(self, state, all_nodes, pod, statuses)

    with patch.object(Evaluator, "find_candidates", checked):
        fast = schedule(scenario, seed=seed, fast=True)
    reference = schedule(scenario, seed=seed, fast=False)
    assert summary(fast) == summary(reference)


def test_the_screened_dry_run_was_exercised() -> None:
    if not SEEN["screened candidates"]:  # run alone (-k): the property test counts first
        test_the_screened_dry_run_finds_the_reference_candidates()
    assert SEEN["screened candidates"] > 50
