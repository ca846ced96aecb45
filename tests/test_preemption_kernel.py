"""Preemption's vectorised dry run (simulator/fastpath/dry_run.py) against the reference.

Random clusters built for the case the kernel takes — NodeResourcesFit the only filter the
victims can sway — with priorities that tie, start times that tie or are missing, budgets that
some evictions violate, pods that arrive nominated, and nodes of equal shape (equal scores for
pickOneNodeForPreemption). Wherever the kernel answers, its candidates must be the reference
dry run's (every node dry-run over copies, every filter run), in order, victim for victim, with
the same PDB violations, for several offsets and numbers of candidates, and its pick
``select_candidate``'s; and every whole run (nominated node, victims, messages) must be the
reference path's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any
from unittest.mock import patch

import msgspec
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topospread.api.types import Node, Pod, PodDisruptionBudget
from topospread.framework.config import default_config
from topospread.framework.cycle_state import CycleState
from topospread.framework.preemption import (
    Candidate,
    Evaluator,
    RankedCandidates,
    nodes_where_preemption_might_help,
)
from topospread.framework.schedule_one import NodeStatuses
from topospread.framework.status import Status
from topospread.framework.types import NodeInfo
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.plugins.noderesources.fit import PRE_FILTER_STATE_KEY as FIT_STATE
from topospread.simulator.fastpath.dry_run import PreemptionKernel, _pick
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario

SEEN: Counter[str] = Counter()


def node(name: str, cpu: str, pods: str) -> Node:
    raw = {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "4Gi", "pods": pods}},
    }
    return msgspec.convert(raw, Node)


@st.composite
def pod(draw: st.DrawFn, name: str, nodes: list[str], bound: bool) -> Pod:
    cpu = draw(st.sampled_from(["300m", "500m", "900m", "1500m"]))
    requests: dict[str, str] = {"cpu": cpu}
    if draw(st.integers(0, 3)) == 0:
        requests["memory"] = draw(st.sampled_from(["512Mi", "1Gi", "3Gi"]))
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
            raw["status"] = {"startTime": f"2026-01-0{draw(st.integers(1, 3))}T00:00:00Z"}
    elif draw(st.integers(0, 4)) == 0:
        raw["status"] = {"nominatedNodeName": draw(st.sampled_from(nodes))}
    return msgspec.convert(raw, Pod)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    names = [f"n{i}" for i in range(draw(st.integers(1, 6)))]
    # Few node shapes, so that candidates often tie on every criterion.
    nodes = [
        node(n, draw(st.sampled_from(["2", "3"])), draw(st.sampled_from(["3", "110"])))
        for n in names
    ]
    bound = [draw(pod(f"b{i}", names, True)) for i in range(draw(st.integers(0, 14)))]
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


def described(found: Sequence[Candidate]) -> list[tuple[str, tuple[str, ...], int]]:
    return [
        (c.name, tuple(p.metadata.name for p in c.victims.pods), c.victims.num_pdb_violations)
        for c in found
    ]


# NOTE: derandomized, so that the coverage counted below is the same on every run.
COUNTED = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)


@COUNTED
@given(scenarios(), st.integers(0, 3))
def test_the_kernel_finds_and_picks_the_reference_candidates(scenario: Scenario, seed: int) -> None:
    original = Evaluator.find_candidates

    def checked(
        self: Evaluator,
        state: CycleState,
        all_nodes: Sequence[NodeInfo],
        pod: Pod,
        statuses: Mapping[str, Status],
    ) -> tuple[Sequence[Candidate], Mapping[str, Status], list[str]]:
        screen = statuses.screen if isinstance(statuses, NodeStatuses) else None
        plugin = self.interface
        assert isinstance(plugin, DefaultPreemption)
        if screen is not None and not statuses.victimless:
            potential = nodes_where_preemption_might_help(all_nodes, statuses)
            pdbs = self.handle.pod_disruption_budgets()
            n = len(potential)
            for offset in sorted({0, seed % n, n - 1}):
                for k in sorted({1, 2, n}):
                    ranked = plugin.vectorised_candidates(
                        state, pod, potential, pdbs, offset, k, screen
                    )
                    if ranked is None:
                        SEEN["declined"] += 1
                        continue
                    full, _, _ = self.dry_run_preemption(state, pod, potential, pdbs, offset, k)
                    assert described(ranked) == described(full)
                    best = self.select_candidate(full)
                    assert best is not None and described([ranked.best]) == described([best])
                    SEEN["compared"] += 1
                    SEEN["candidates"] += len(full)
                    SEEN["violating"] += sum(c.victims.num_pdb_violations > 0 for c in full)
                    SEEN["several victims"] += sum(len(c.victims.pods) > 1 for c in full)
        found = original(self, state, all_nodes, pod, statuses)
        SEEN["by the kernel"] += isinstance(found[0], RankedCandidates)
        return found

    with patch.object(Evaluator, "find_candidates", checked):
        fast = schedule(scenario, seed=seed, fast=True)
    reference = schedule(scenario, seed=seed, fast=False)
    assert summary(fast) == summary(reference)
    for fwk in fast.scheduler.frameworks.values():
        plugin = fwk.plugins["DefaultPreemption"]
        assert isinstance(plugin, DefaultPreemption)
        assert isinstance(plugin.victims_kernel, PreemptionKernel)
    SEEN["nominated"] += fast.scheduler.fast_nominated


def test_the_kernel_was_exercised() -> None:
    if not SEEN["compared"]:  # run alone (-k): the property test counts first
        test_the_kernel_finds_and_picks_the_reference_candidates()
    assert SEEN["compared"] > 200
    assert SEEN["candidates"] > 400
    assert SEEN["violating"] > 20
    assert SEEN["several victims"] > 50
    assert SEEN["by the kernel"] > 50
    assert SEEN["nominated"] > 10


def test_the_pick_breaks_ties_by_each_criterion_in_turn_then_takes_the_first() -> None:
    # One array per criterion, one entry per candidate; lower is better.
    keys = [
        np.array(row, np.int64)
        for row in (
            [0, 0, 0, 1],  # PDB violations: the last one is out
            [5, 5, 5, 0],  # highest victim priority: a tie
            [9, 7, 7, 0],  # sum of priorities: the second and third remain
            [2, 2, 2, 0],  # number of victims: still tied
            [-3, -3, -3, -9],  # latest start (negated): still tied
        )
    ]
    assert _pick(keys) == 1
    keys[4] = np.array([-3, -3, -4, -9], np.int64)  # the third started later
    assert _pick(keys) == 2
    assert _pick([np.zeros(1, np.int64)] * 5) == 0


def test_a_node_without_room_even_when_empty_is_left_to_the_reference() -> None:
    # Every pod of lower priority gone, the pod still does not fit (the screen would not
    # pass such a node): the kernel declines rather than guess.
    nodes = [node("n0", "2", "110")]
    bound = [
        msgspec.convert(
            {
                "metadata": {"name": "low", "namespace": "default"},
                "spec": {
                    "nodeName": "n0",
                    "priority": 0,
                    "containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "500m"}}},
                    ],
                },
            },
            Pod,
        )
    ]
    preemptor = msgspec.convert(
        {
            "metadata": {"name": "big", "namespace": "default"},
            "spec": {
                "priority": 10,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "3"}}}],
            },
        },
        Pod,
    )
    run = schedule(
        Scenario(nodes=nodes, pods=bound, queue=[preemptor], objects=[], config=default_config()),
        fast=True,
    )
    kernel = run.scheduler.frameworks["default-scheduler"].plugins["DefaultPreemption"]
    assert isinstance(kernel, DefaultPreemption) and kernel.victims_kernel is not None
    fwk = run.scheduler.frameworks["default-scheduler"]
    state = CycleState()
    fwk.run_pre_filter_plugins(state, preemptor, run.scheduler.cluster.list())
    need = state.read(FIT_STATE).resource
    found = kernel.victims_kernel.candidates(
        preemptor, need, kernel.features, run.scheduler.cluster.list(), [0], 1, []
    )
    assert found is None
    assert run.attempts[-1].node is None and not run.attempts[-1].preempted


def _preemptor(name: str, cpu: str) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "priority": 100,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            },
        },
        Pod,
    )


def _low(name: str, node_name: str, cpu: str) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "nodeName": node_name,
                "priority": 0,
                "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
            },
        },
        Pod,
    )


def test_the_kernel_follows_nodes_that_come_go_and_change_between_preemptions() -> None:
    # The kernel keeps each node's pods sorted between attempts; nodes removed, added and
    # refilled between preemptions must not leave it reading stale rows.
    def run(fast: bool) -> list[Any]:
        nodes = [node(f"n{i}", "3", "110") for i in range(6)]
        bound = [
            _low(f"b{i}-{j}", f"n{i}", f"{500 + 100 * j}m") for i in range(6) for j in range(4)
        ]
        scenario = Scenario(nodes=nodes, pods=bound, queue=[], objects=[], config=default_config())
        sched = schedule(scenario, fast=fast).scheduler
        seen: list[Any] = []
        for step in range(4):
            sched.add(_preemptor(f"p{step}", "2"))
            seen += [(d.key, d.node, d.message, d.preempted) for d in sched.run()]
            cluster = sched.cluster
            if step == 0:
                cluster.remove_node("n1")
            elif step == 1:
                cluster.add_node(node("n9", "3", "110"))
                for j in range(3):
                    cluster.bind(_low(f"c{j}", "n9", "900m"), "n9")
            elif step == 2:
                cluster.unbind(_low("b3-0", "n3", "500m"))
                cluster.bind(_low("d0", "n3", "1000m"), "n3")
        return seen

    answered: list[bool] = []
    original = PreemptionKernel.candidates

    def counted(self: PreemptionKernel, *args: Any) -> RankedCandidates | None:
        found = original(self, *args)
        answered.append(found is not None)
        return found

    with patch.object(PreemptionKernel, "candidates", counted):
        fast = run(True)
    assert fast == run(False)
    assert sum(bool(preempted) for *_, preempted in fast) == 4
    assert answered == [True] * 4  # every preemption was the kernel's


def test_the_cluster_state_lists_the_nodes_holding_pods_with_affinity_in_node_order() -> None:
    cluster = Scenario(
        nodes=[node(f"n{i}", "3", "110") for i in range(3)],
        pods=[],
        queue=[],
        objects=[],
        config=default_config(),
    ).cluster()
    with_affinity = msgspec.convert(
        {
            "metadata": {"name": "a", "namespace": "default", "labels": {"app": "a"}},
            "spec": {
                "nodeName": "n2",
                "containers": [{"name": "c"}],
                "affinity": {
                    "podAntiAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": {"app": "a"}},
                                "topologyKey": "kubernetes.io/hostname",
                            }
                        ]
                    }
                },
            },
        },
        Pod,
    )
    assert cluster.have_pods_with_affinity_list() == []
    cluster.bind(_low("plain", "n0", "100m"), "n0")
    cluster.bind(with_affinity, "n2")
    assert [i.name for i in cluster.have_pods_with_affinity_list()] == ["n2"]
    cluster.unbind(with_affinity)
    assert cluster.have_pods_with_affinity_list() == []
    cluster.bind(with_affinity, "n2")
    cluster.remove_node("n2")
    assert cluster.have_pods_with_affinity_list() == []
