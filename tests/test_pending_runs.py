"""Runs of pending pods (simulator/pending_runs.py): timelines decide alike with and without
them, round by round: the report, and after every round of the simulation the whole queue as
each pod's attempts one by one would have left it (every pod's attempts, tick, rejecting
plugins, place in the pool and last Decision; the active queue's order; the random source,
the search's start, the counters, the clocks)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from test_failure_memo import autoscaler_sweep, pending_replicas_timeline
from test_simulation import random_timeline
from test_timeline import deployment
from topospread.analysis.simulate import simulate
from topospread.framework.nominator import pod_key
from topospread.simulator import pending_runs
from topospread.simulator.scheduler import Scheduler
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline


def queue_state(scheduler: Scheduler) -> Any:
    """What the queue holds, as the attempts one by one leave it: read from a copy, whose runs
    dissolve when read, so that the run goes on with its own."""
    s = copy.deepcopy(scheduler)
    pool = s.unschedulable
    active = sorted(s.active.infos(), key=lambda i: i.timestamp)
    return (
        [(k, i.attempts, i.timestamp, sorted(i.unschedulable_plugins)) for k, i in pool.items()],
        [pool.seq_of(k) for k in pool],
        [(pod_key(i.pod), i.attempts, i.timestamp) for i in active],
        {k: d.to_json() for k, d in s.last.items()},
        s.rng.getstate(),
        s.algorithm.next_start_node_index,
        (s.fast_decisions, s.fast_failures, s.fast_nominated, s.memo_hits),
        s.queue.tick(),
    )


class Rounds:
    """The queue after every round of every simulation, and how many members runs held."""

    def __init__(self) -> None:
        self.states: list[Any] = []
        self.members = 0


def rounds(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> Rounds:
    seen = Rounds()
    monkeypatch.setattr(pending_runs, "ENABLED", enabled)
    real = Simulation.round

    def traced(self: Simulation, *args: Any, **kwargs: Any) -> Any:
        out = real(self, *args, **kwargs)
        scheduler = self.scheduler
        seen.members += sum(len(i.run.infos) for i in scheduler._runs.values())
        seen.states.append(queue_state(scheduler))
        return out

    monkeypatch.setattr(Simulation, "round", traced)
    return seen


def both_ways(run: Callable[[], Any]) -> tuple[Any, Rounds]:
    out: list[tuple[Any, Rounds]] = []
    for enabled in (False, True):
        with pytest.MonkeyPatch.context() as monkeypatch:
            seen = rounds(monkeypatch, enabled)
            out.append((run(), seen))
    (off, off_rounds), (on, on_rounds) = out
    assert off_rounds.members == 0
    assert len(on_rounds.states) == len(off_rounds.states)
    for i, (a, b) in enumerate(zip(on_rounds.states, off_rounds.states, strict=True)):
        assert a == b, f"round {i}"
    assert on == off
    return on, on_rounds


def test_a_timeline_with_lost_zones_and_many_pending_replicas_decides_alike() -> None:
    doc = pending_replicas_timeline()
    report, seen = both_ways(
        lambda: simulate(parse_timeline(copy.deepcopy(doc), "t.yaml")).to_json()
    )
    assert seen.members > 100  # dozens of pods rode in runs, round after round
    assert max(len(s["pending"]) for s in report["steps"]) >= 20


def staggered_evictions_timeline() -> dict[str, Any]:
    """A lost zone whose Deployments tolerate the unreachable taint 60, 120, 180 and 300 s:
    four rounds of evictions in one wait, each moving the Pending replicas of the zone lost
    before back to the queue, where they fail again, runs and all."""
    doc = pending_replicas_timeline()
    objects = doc["objects"]
    for i, seconds in enumerate((60, 120, 180)):
        extra = deployment(4, name=f"batch{i}")
        spec = extra["spec"]["template"]["spec"]
        spec["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
        spec["tolerations"] = [
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": seconds,
            }
        ]
        objects.append(extra)
    doc["timeline"] = [
        {"loseZone": "a"},
        {"wait": "6m"},
        {"scale": {"workload": "deployment/web", "replicas": 45}},
        {"loseZone": "b"},
        {"wait": "6m"},
        {"restoreZone": "a"},
        {"wait": "1m"},
    ]
    return doc


def test_runs_fail_again_round_after_round_and_decide_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    failed: list[int] = []
    real = pending_runs.PendingRuns._fail_run

    def counted(self: Any, *args: Any) -> None:
        failed.append(1)
        real(self, *args)

    monkeypatch.setattr(pending_runs.PendingRuns, "_fail_run", counted)
    doc = staggered_evictions_timeline()
    report, seen = both_ways(
        lambda: simulate(parse_timeline(copy.deepcopy(doc), "t.yaml")).to_json()
    )
    assert len(failed) >= 3  # a run's leader failed again, its members with it
    assert seen.members > 100
    assert max(len(s["pending"]) for s in report["steps"]) >= 20


@pytest.mark.parametrize("seed", range(6))
def test_random_timelines_decide_alike(seed: int) -> None:
    doc = random_timeline(seed)
    both_ways(lambda: simulate(parse_timeline(copy.deepcopy(doc), "t.yaml"), seed=seed).to_json())


def test_the_autoscaler_sweep_decides_alike() -> None:
    report, seen = both_ways(autoscaler_sweep())
    assert seen.members > 0
    assert report["runs"]


def test_settling_a_run_gives_each_member_what_it_is_owed() -> None:
    """Members owe the failures since they joined: attempts, the latest failure's plugins,
    message and reasons; a member that joined at the latest failure owes none."""
    from topospread.api.types import Pod
    from topospread.framework.interface import QueuedPodInfo
    from topospread.simulator.failure_memo import MemoOutcome
    from topospread.simulator.pending_runs import Run

    infos = [
        QueuedPodInfo(pod=Pod(), attempts=3, unschedulable_plugins=frozenset({"A"})),
        QueuedPodInfo(pod=Pod(), attempts=1, unschedulable_plugins=frozenset({"A"})),
    ]
    outcome = MemoOutcome(
        start=0,
        nodes=1,
        message="0/1 nodes are available",
        reasons={"n1": ["B: no"]},
        plugins=frozenset({"B"}),
        post_filter=False,
        nominated=None,
        draws=(),
    )
    run = Run(b"key", ["ns/a", "ns/b"], infos, joined=[0, 2], failures=2, outcome=outcome)
    last: dict[str, Any] = {}
    run.settle(last)
    assert [i.attempts for i in infos] == [5, 1]
    assert [sorted(i.unschedulable_plugins) for i in infos] == [["B"], ["A"]]
    assert list(last) == ["ns/a"]
    assert (last["ns/a"].attempt, last["ns/a"].message, last["ns/a"].reasons) == (
        5,
        "0/1 nodes are available",
        {"n1": ["B: no"]},
    )
    assert run.joined == [2, 2]
    run.settle(last)  # nothing owed any more
    assert [i.attempts for i in infos] == [5, 1]
