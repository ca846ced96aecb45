"""After a pod's nominated node fails, the search over every node that follows, past 100 nodes
(sampling), and where the next one starts: the fast path as the reference path, both as
upstream (findNodesThatFitPod, schedule_one.go, v1.35).

Upstream tries the nominated node alone first; its status stays in the diagnosis's
NodeToStatus, and the next search starts ``len(feasible) + NodeToStatus.Len()`` nodes further
on — the nominated node counted once more where the search did not reach it again.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from test_fastpath import summary
from topospread.api.types import Node, Pod
from topospread.framework.config import default_config
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
UNSCHEDULABLE = "NodeUnschedulable: node(s) were unschedulable"
TAINTED = "TaintToleration: node(s) had untolerated taint(s)"


def node(i: int) -> Node:
    """120 nodes: n110 unschedulable (the nominated one), n100 tainted, the rest free."""
    name = f"n{i:03}"
    return msgspec.convert(
        {
            "metadata": {"name": name, "labels": {HOST: name, ZONE: f"z{i % 3}"}},
            "spec": {
                "unschedulable": i == 110,
                "taints": [{"key": "k", "effect": "NoSchedule"}] if i == 100 else [],
            },
            "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"}},
        },
        Node,
    )


def pod(name: str, nominated: str, disk: bool) -> Pod:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "web:1", "resources": {"requests": {"cpu": "1"}}}],
        "priority": 1000,
    }
    if disk:  # an inline in-tree EBS disk, as in the pod that showed the divergence
        spec["volumes"] = [{"name": "v0", "awsElasticBlockStore": {"volumeID": f"ebs-{name}"}}]
    raw: dict[str, Any] = {"metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if nominated:
        raw["status"] = {"nominatedNodeName": nominated}
    return msgspec.convert(raw, Pod)


def run_both(queue: list[Pod]) -> tuple[ScheduleRun, ScheduleRun]:
    scenario = Scenario(
        nodes=[node(i) for i in range(120)],
        pods=[],
        queue=queue,
        objects=[],
        config=default_config(),
    )
    reference = schedule(scenario, fast=False, tie_break="name")
    fast = schedule(scenario, fast=True, tie_break="name")
    assert summary(fast) == summary(reference)
    return reference, fast


@pytest.mark.parametrize("disk", [False, True], ids=["plain", "inline-ebs"])
def test_a_failed_nominated_node_outside_the_window_moves_the_next_start_past_it(
    disk: bool,
) -> None:
    """120 nodes: the search stops at 100 feasible ones. q0, nominated to the unschedulable
    n110, searches n000..n099 from 0 (all feasible) and never reaches n110 again: 100 feasible
    plus n110's status make 101 processed nodes, so the next search starts at 101 — past the
    tainted n100, which q1 then never visits (it stops at n081, wrapping round)."""
    reference, fast = run_both([pod("q0", "n110", disk), pod("q1", "", disk)])
    for run in (reference, fast):
        q0, q1 = run.attempts
        assert (q0.node, q1.node) == ("n000", "n001")
        assert q0.reasons == {"n110": [UNSCHEDULABLE]}
        assert q0.feasible == [f"n{i:03}" for i in range(100)]
        assert q1.reasons == {"n110": [UNSCHEDULABLE]}  # not n100: outside q1's window
        window = [*range(101, 110), *range(111, 120), *range(82)]
        assert q1.feasible == sorted(f"n{i:03}" for i in window)
        assert run.scheduler.algorithm.next_start_node_index == (101 + 101) % 120
    assert fast.scheduler.fast_decisions == 2
    assert fast.scheduler.fast_nominated >= 1


@pytest.mark.parametrize("disk", [False, True], ids=["plain", "inline-ebs"])
def test_a_failed_nominated_node_inside_the_window_is_counted_once(disk: bool) -> None:
    """Nominated to n110 with the search starting past it (after q0's, at 100): the search
    visits n110 again (n100..n119, then n000..n081), its status is set once, and the next
    search starts at 100 + 102 (82 + 18 feasible, n100 and n110 failing), round 120."""
    reference, fast = run_both([pod("q0", "", disk), pod("q1", "n110", disk)])
    for run in (reference, fast):
        q0, q1 = run.attempts
        assert q0.reasons == {}
        assert q1.reasons == {"n100": [TAINTED], "n110": [UNSCHEDULABLE]}
        assert len(q1.feasible) == 100
        assert run.scheduler.algorithm.next_start_node_index == (100 + 102) % 120
    assert fast.scheduler.fast_decisions == 2


@pytest.mark.parametrize("disk", [False, True], ids=["plain", "inline-ebs"])
def test_after_a_failed_nominated_node_alone_the_next_start_is_one_past_the_window(
    disk: bool,
) -> None:
    """q0 alone: the index after its decision is 100 visited + the nominated n110."""
    reference, fast = run_both([pod("q0", "n110", disk)])
    for run in (reference, fast):
        assert run.scheduler.algorithm.next_start_node_index == 101
