"""The memo of failed fast-path attempts (simulator/failure_memo.py): whole scenarios decide
alike with and without it, attempt by attempt (every Decision, the queue's view of the pod,
the random source's state, the search's start, the counters), and any change the scheduler
reads between two attempts is never answered from it."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from claims_harness import derandomized
from test_fastpath import scenarios as fastpath_scenarios
from test_fastpath_claims import storage_scenarios
from test_simulation import random_timeline
from test_timeline import deployment
from topospread.analysis.simulate import simulate
from topospread.analysis.sweep import sweep
from topospread.api.types import Node, Pod
from topospread.cluster.state import ClusterState
from topospread.framework.config import default_config
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.interface import QueuedPodInfo
from topospread.framework.status import as_status
from topospread.plugins.defaultpreemption.plugin import DefaultPreemption
from topospread.plugins.registry import IN_TREE
from topospread.simulator import failure_memo, pending_runs
from topospread.simulator.decision import Decision
from topospread.simulator.failure_memo import DrawLog, FailureMemo
from topospread.simulator.run import schedule
from topospread.simulator.scenario import Scenario
from topospread.simulator.scheduler import Scheduler
from topospread.simulator.scheduling_cycle import SchedulingCycle
from topospread.simulator.timeline_format import parse_timeline

ROOT = Path(__file__).resolve().parents[1]


class Trace:
    """Every attempt of every scheduler, as seen right after it."""

    def __init__(self) -> None:
        self.attempts: list[Any] = []
        self.schedulers: dict[int, Scheduler] = {}
        self.draws: list[tuple[int, ...]] = []

    @property
    def hits(self) -> int:
        return sum(s.memo_hits for s in self.schedulers.values())


def tracing(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> Trace:
    trace = Trace()
    real = SchedulingCycle.schedule_one
    monkeypatch.setattr(failure_memo, "ENABLED", enabled)
    # Every attempt traced: no runs of pending pods, whose repeated failures make none
    # (tests/test_pending_runs.py compares the two).
    monkeypatch.setattr(pending_runs, "ENABLED", False)

    def traced(self: Scheduler, info: QueuedPodInfo) -> Decision:
        decision = real(self, info)
        trace.schedulers[id(self)] = self
        if self.memo is not None:
            trace.draws += [o.draws for o in self.memo.outcomes.values() if o.draws]
        key = decision.key
        trace.attempts.append(
            (
                decision.to_json(),
                decision.pod.status.nominated_node_name,
                info.attempts,
                sorted(info.unschedulable_plugins),
                key in self.unschedulable,
                len(self.active),
                self.rng.getstate(),
                self.algorithm.next_start_node_index,
                (self.fast_decisions, self.fast_failures, self.fast_nominated),
            )
        )
        return decision

    monkeypatch.setattr(SchedulingCycle, "schedule_one", traced)
    return trace


def both_ways(run: Callable[[], Any]) -> tuple[Any, Trace]:
    """``run()`` with the memo off, then on: the same result and the same attempts; the
    memo's trace."""
    out: list[tuple[Any, Trace]] = []
    for enabled in (False, True):
        with pytest.MonkeyPatch.context() as monkeypatch:
            trace = tracing(monkeypatch, enabled)
            out.append((run(), trace))
    (off, off_trace), (on, on_trace) = out
    assert off_trace.hits == 0
    assert len(on_trace.attempts) == len(off_trace.attempts)
    for i, (a, b) in enumerate(zip(on_trace.attempts, off_trace.attempts, strict=True)):
        assert a == b, f"attempt {i}"
    assert on == off
    return on, on_trace


# ------------------------------------------------------------------ whole scenarios


def pending_replicas_timeline() -> dict[str, Any]:
    """Two zones' worth of DoNotSchedule replicas that cannot all fit: a lost zone and a lost
    node leave dozens Pending, retried after every eviction."""
    big = deployment(30)
    tmpl = big["spec"]["template"]["spec"]
    tmpl["containers"][0]["resources"] = {"requests": {"cpu": "300m"}}
    other = deployment(12, name="api")
    other["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "200m"}}
    return {
        "nodeGroups": [
            {
                "name": "pool",
                "zones": ["a", "b", "c"],
                "perZone": 2,
                "template": {"status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}},
            }
        ],
        "objects": [big, other],
        "timeline": [
            {"loseZone": "a"},
            {"wait": "6m"},
            {"loseNode": "pool-b-1"},
            {"wait": "301s"},
            {"scale": {"workload": "deployment/web", "replicas": 40}},
            {"restoreNode": "pool-b-1"},
            {"restoreZone": "a"},
            {"wait": "1m"},
        ],
    }


def test_a_timeline_with_lost_zones_and_many_pending_replicas_decides_alike() -> None:
    doc = pending_replicas_timeline()
    report, trace = both_ways(
        lambda: simulate(parse_timeline(copy.deepcopy(doc), "t.yaml")).to_json()
    )
    assert trace.hits > 50
    # Dozens Pending at once (14, 21, 31 after the losses and the scale-up, here).
    assert max(len(s["pending"]) for s in report["steps"]) >= 20


@pytest.mark.parametrize("seed", range(4))
def test_random_timelines_decide_alike(seed: int) -> None:
    doc = random_timeline(seed)
    both_ways(lambda: simulate(parse_timeline(copy.deepcopy(doc), "t.yaml"), seed=seed).to_json())


def node(name: str, cpu: str, zone: str = "z") -> Node:
    raw = {
        "metadata": {
            "name": name,
            "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone},
        },
        "status": {"allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"}},
    }
    return msgspec.convert(raw, Node)


def pod(name: str, cpu: str, priority: int = 0, node_name: str = "", **spec: Any) -> Pod:
    raw: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": name.rstrip("0123456789")},
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}}
            ],
            "priority": priority,
            **spec,
        },
    }
    if node_name:
        raw["spec"]["nodeName"] = node_name
        raw["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    return msgspec.convert(raw, Pod)


def preemption_scenario(seed: int) -> Scenario:
    """Bound low-priority pods on equal nodes; queued: replicas too big for any node (their
    preemption dry-runs every node, from a random offset, and finds no victim), replicas of
    the bound pods' priority (no victim), preemptors that evict, and small pods whose equal
    scores the random source breaks."""
    rng = random.Random(seed)
    nodes = [node(f"n{i}", "2", zone=f"z{i % 3}") for i in range(6)]
    bound = [pod(f"low{i}", rng.choice(["500m", "900m"]), 0, f"n{i % 6}") for i in range(9)]
    queue: list[Pod] = []
    for i in range(rng.randint(4, 8)):
        queue.append(pod(f"huge{i}", "3", priority=5))
    for i in range(rng.randint(3, 6)):
        queue.append(pod(f"same{i}", "1800m", priority=0))
    for i in range(rng.randint(1, 3)):
        queue.append(pod(f"pre{i}", "1500m", priority=10))
    for i in range(rng.randint(4, 10)):
        queue.append(pod(f"small{i}", "100m", priority=rng.choice([0, 1])))
    rng.shuffle(queue)
    return Scenario(nodes=nodes, pods=bound, queue=queue, objects=[], config=default_config())


def outcome(run: Any) -> list[Any]:
    return [(o.pod.metadata.name, o.node, o.message) for o in run.outcomes]


@pytest.mark.parametrize("seed", range(6))
def test_preemption_scenarios_decide_alike_and_replay_the_dry_runs_draws(seed: int) -> None:
    scenario = preemption_scenario(seed)
    _, trace = both_ways(lambda: outcome(schedule(scenario, seed=seed)))
    assert trace.hits > 0
    # The huge replicas' failures drew preemption's random offset, replayed by every hit.
    assert any(trace.draws)


@st.composite
def replicated(draw: st.DrawFn) -> Scenario:
    """tests/test_fastpath.py's random clusters (affinity of every kind, spread, host ports,
    priorities, preemption, nominated pods, namespaces) with each queued pod made replicas
    of itself, in a drawn order."""
    scenario = draw(fastpath_scenarios())
    queue = []
    for p in scenario.queue:
        for r in range(draw(st.integers(1, 4))):
            meta = msgspec.structs.replace(p.metadata, name=f"{p.metadata.name}-{r}")
            queue.append(msgspec.structs.replace(p, metadata=meta))
    queue = draw(st.permutations(queue))
    return dataclasses.replace(scenario, queue=queue)


HITS: Counter[str] = Counter()


@derandomized(120)
@given(replicated(), st.integers(0, 3), st.booleans())
def test_random_replicated_clusters_decide_alike(
    scenario: Scenario, seed: int, detail: bool
) -> None:
    _, trace = both_ways(lambda: outcome(schedule(scenario, seed=seed, detail=detail)))
    HITS["hits"] += trace.hits
    HITS["with draws"] += bool(trace.draws)


def test_random_replicated_clusters_were_answered_from_the_memo() -> None:
    assert HITS["hits"] > 40 and HITS["with draws"] > 10, HITS


@pytest.mark.parametrize("detail", [True, False])
def test_detail_on_and_off_decide_alike(detail: bool) -> None:
    scenario = preemption_scenario(7)
    both_ways(lambda: outcome(schedule(scenario, seed=7, detail=detail)))


@derandomized(40)
@given(storage_scenarios())
def test_storage_scenarios_decide_alike(scenario: Scenario) -> None:
    both_ways(lambda: outcome(schedule(scenario, seed=1)))


def autoscaler_sweep() -> Callable[[], Any]:
    """bench/sweep_inputs.py's autoscaled zone sweep, small (cluster-autoscaler in the loop),
    as a call that runs it afresh and gives its report."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import sweep_inputs  # bench/sweep_inputs.py: the benchmark's generator
    finally:
        sys.path.remove(str(ROOT / "bench"))
    doc, section = sweep_inputs.autoscaled_sweep_cluster(12, 120)
    doc["autoscaler"] = section
    return lambda: sweep(parse_timeline(copy.deepcopy(doc), "t.yaml"), zones=True).to_json()


def test_the_autoscaler_sweep_decides_alike() -> None:
    report, trace = both_ways(autoscaler_sweep())
    assert trace.hits > 0
    assert report["runs"]


# ------------------------------------------------------------------ invalidation


def scheduler_with(nodes: list[Node], bound: list[Pod], queue: list[Pod]) -> Scheduler:
    cluster = ClusterState(nodes=nodes, pods=bound)
    scheduler = Scheduler(cluster, default_config(), IN_TREE, DEFAULT_FEATURES)
    for p in queue:
        scheduler.add(p)
    return scheduler


def blocked() -> tuple[Scheduler, Pod]:
    """One node of 1 CPU, 900m of it taken by ``blocker``; two identical 500m pods queued."""
    blocker = pod("blocker", "900m", node_name="n1")
    scheduler = scheduler_with(
        [node("n1", "1")], [blocker], [pod("web0", "500m"), pod("web1", "500m")]
    )
    return scheduler, blocker


def test_the_second_identical_pod_fails_from_the_memo() -> None:
    scheduler, _ = blocked()
    first = scheduler.schedule_one(scheduler.active.pop())
    assert scheduler.memo is not None and len(scheduler.memo.outcomes) == 1
    second = scheduler.schedule_one(scheduler.active.pop())
    assert scheduler.memo_hits == 1
    assert (
        first.message
        == second.message
        == (
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: "
            "1 No preemption victims found for incoming pod."
        )
    )
    assert first.reasons == second.reasons == {"n1": ["NodeResourcesFit: Insufficient cpu"]}
    assert (scheduler.fast_decisions, scheduler.fast_failures) == (2, 2)
    assert sorted(scheduler.unschedulable) == ["default/web0", "default/web1"]
    assert scheduler.unschedulable["default/web1"].unschedulable_plugins == {"NodeResourcesFit"}


@pytest.mark.parametrize("enabled", [True, False])
def test_a_deletion_between_two_identical_pods_lets_the_second_bind(enabled: bool) -> None:
    """The blocker leaves after web0's failure, before web1's attempt: web1 binds (a stale
    outcome would fail it as web0 failed)."""
    scheduler, blocker = blocked()
    if not enabled:
        scheduler.memo = None
    kept: list[int] = []

    def delete_blocker(decision: Decision) -> None:
        if decision.key == "default/web0" and not kept:
            kept.append(len(scheduler.memo.outcomes) if scheduler.memo is not None else 0)
            assert scheduler.delete_assigned_pod(blocker)

    decisions = scheduler.run(delete_blocker)
    assert kept == ([1] if enabled else [0])  # the failure was kept before the deletion
    assert [(d.key, d.node) for d in decisions[:2]] == [
        ("default/web0", None),
        ("default/web1", "n1"),
    ]


def test_a_node_added_between_two_identical_pods_lets_the_second_bind() -> None:
    scheduler, _ = blocked()
    extra = node("n2", "2")

    def add_node(decision: Decision) -> None:
        if decision.key == "default/web0" and scheduler.cluster.get("n2") is None:
            scheduler.cluster.add_node(extra)
            scheduler.on_node_change(new=extra)

    decisions = scheduler.run(add_node)
    assert [(d.key, d.node) for d in decisions[:2]] == [
        ("default/web0", None),
        ("default/web1", "n2"),
    ]


def changes(scheduler: Scheduler, blocker: Pod) -> Iterator[tuple[str, Callable[[], Any]]]:
    cluster = scheduler.cluster
    updated = msgspec.structs.replace(
        node("n1", "1"), metadata=msgspec.structs.replace(node("n1", "1").metadata)
    )
    yield "bind", lambda: cluster.bind(pod("other", "10m", node_name="n1"), "n1")
    yield "unbind", lambda: cluster.unbind(blocker)
    yield "node added", lambda: cluster.add_node(node("n2", "1"))
    yield "node updated", lambda: cluster.update_node(updated)
    yield "node removed", lambda: cluster.remove_node("n1")
    nominated = pod("nominee", "10m", priority=100)
    yield "nomination", lambda: scheduler.nominator.add(nominated, "n1")


@pytest.mark.parametrize("change", range(6))
def test_every_change_the_scheduler_reads_clears_the_memo(change: int) -> None:
    scheduler, blocker = blocked()
    scheduler.schedule_one(scheduler.active.pop())
    memo = scheduler.memo
    assert memo is not None and memo.outcomes
    epoch = memo.epoch
    _name, act = list(changes(scheduler, blocker))[change]
    act()
    assert not memo.outcomes and memo.epoch > epoch


def test_the_memo_lives_within_one_run() -> None:
    scheduler, _ = blocked()
    seen: list[int] = []
    assert scheduler.memo is not None
    memo = scheduler.memo
    scheduler.run(lambda d: seen.append(len(memo.outcomes)))
    assert seen == [1, 1] and scheduler.memo_hits == 1
    assert not memo.outcomes  # cleared as the run ends: storage, budgets... may change next


def test_a_decision_that_is_not_a_kept_failure_clears_the_memo() -> None:
    """A pod the fast path declines (a host port) fails through the reference plugins: the
    memo is cleared, though the failure changed nothing."""
    blocker = pod("blocker", "900m", node_name="n1")
    port = pod("port0", "500m")
    port = msgspec.structs.replace(
        port,
        spec=msgspec.structs.replace(
            port.spec,
            containers=[
                msgspec.convert(
                    {
                        "name": "c",
                        "image": "app:1",
                        "ports": [{"containerPort": 80, "hostPort": 80}],
                        "resources": {"requests": {"cpu": "500m"}},
                    },
                    type(port.spec.containers[0]),
                )
            ],
        ),
    )
    scheduler = scheduler_with([node("n1", "1")], [blocker], [pod("web0", "500m"), port])
    memo = scheduler.memo
    assert memo is not None
    scheduler.schedule_one(scheduler.active.pop())
    assert memo.outcomes
    scheduler.schedule_one(scheduler.active.pop())
    assert not memo.outcomes


def test_pods_nominated_or_meeting_nominations_are_never_kept() -> None:
    blocker = pod("blocker", "900m", node_name="n1")
    raw = msgspec.to_builtins(pod("web0", "500m"))
    raw["status"] = {"nominatedNodeName": "n1"}
    own = msgspec.convert(raw, Pod)
    scheduler = scheduler_with([node("n1", "1")], [blocker], [own, pod("web1", "500m")])
    memo = scheduler.memo
    assert memo is not None
    scheduler.schedule_one(scheduler.active.pop())  # web0, nominated to n1 until PostFilter
    assert not memo.outcomes
    # A nomination elsewhere (kept by the nominator whoever the pod): web1's failure is not kept.
    scheduler.nominator.add(pod("ghost", "10m", priority=100), "n1")
    scheduler.schedule_one(scheduler.active.pop())
    assert not memo.outcomes and scheduler.memo_hits == 0


def test_pods_with_claims_are_never_kept() -> None:
    blocker = pod("blocker", "900m", node_name="n1")
    queue = []
    for i in range(2):
        p = pod(f"db{i}", "500m")
        raw = msgspec.to_builtins(p)
        raw["spec"]["volumes"] = [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"data-db{i}"}}
        ]
        queue.append(msgspec.convert(raw, Pod))
    scheduler = scheduler_with([node("n1", "1")], [blocker], queue)
    memo = scheduler.memo
    assert memo is not None
    decisions = scheduler.run()
    assert len(decisions) == 2 and all(d.node is None for d in decisions)
    assert scheduler.memo_hits == 0


def test_the_memo_is_left_out_of_snapshots_and_the_source_pickles_as_it_was() -> None:
    scheduler, _ = blocked()
    scheduler.schedule_one(scheduler.active.pop())
    assert scheduler.memo is not None and scheduler.memo.outcomes
    copy_ = pickle.loads(pickle.dumps(scheduler.memo))
    assert isinstance(copy_, FailureMemo) and not copy_.outcomes
    assert copy_.epoch == scheduler.memo.epoch
    rng = pickle.loads(pickle.dumps(scheduler.rng))
    assert isinstance(rng, DrawLog) and rng.log is None
    assert rng.getstate() == scheduler.rng.getstate()
    assert rng.randrange(1000) == scheduler.rng.randrange(1000)


def test_the_switch_turns_the_memo_off_and_the_reference_path_never_has_one() -> None:
    cluster = ClusterState(nodes=[node("n1", "1")])
    assert Scheduler(cluster, default_config(), IN_TREE, DEFAULT_FEATURES, memo=False).memo is None
    assert Scheduler(cluster, default_config(), IN_TREE, DEFAULT_FEATURES, fast=False).memo is None
    assert Scheduler(cluster, default_config(), IN_TREE, DEFAULT_FEATURES).memo is not None


def test_pods_apart_only_in_labels_or_priority_have_their_own_outcomes() -> None:
    """web0 fails; api0 differs only in its labels, which the bound guard's anti-affinity does
    not select: it binds. web1 differs from web0 only in its priority: it preempts."""
    guard = msgspec.to_builtins(pod("guard", "100m", node_name="n1"))
    term = {
        "labelSelector": {"matchLabels": {"app": "web"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    guard["spec"]["affinity"] = {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
    }
    scheduler = scheduler_with(
        [node("n1", "2")], [msgspec.convert(guard, Pod)], [pod("web0", "500m")]
    )
    memo = scheduler.memo
    assert memo is not None
    first = scheduler.schedule_one(scheduler.active.pop())
    assert first.node is None and memo.outcomes
    scheduler.add(pod("api0", "500m"))
    assert scheduler.schedule_one(scheduler.active.pop()).node == "n1"

    blocker = pod("blocker", "900m", node_name="n1")
    scheduler = scheduler_with([node("n1", "1")], [blocker], [pod("web0", "500m")])
    memo = scheduler.memo
    assert memo is not None
    assert scheduler.schedule_one(scheduler.active.pop()).node is None and memo.outcomes
    scheduler.add(pod("web1", "500m", priority=10))
    decision = scheduler.schedule_one(scheduler.active.pop())
    assert decision.preempted == ["default/blocker"] and decision.nominated_node == "n1"
    assert scheduler.memo_hits == 0


def test_a_postfilter_error_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error's message aggregates the dry run's errors in its random visiting order: not
    kept."""

    def failing(self: DefaultPreemption, state: Any, pod: Pod, statuses: Any) -> Any:
        self.get_offset_and_num_candidates(1)  # a draw, as the dry run makes
        return None, as_status("dry run failed")

    monkeypatch.setattr(DefaultPreemption, "post_filter", failing)
    scheduler, _ = blocked()
    first = scheduler.schedule_one(scheduler.active.pop())
    assert first.message is not None and first.message.endswith("dry run failed")
    assert scheduler.memo is not None and not scheduler.memo.outcomes


def test_a_draw_other_than_randrange_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    real = DefaultPreemption.get_offset_and_num_candidates

    def drawing(self: DefaultPreemption, num_nodes: int) -> tuple[int, int]:
        self.handle.rng.random()  # type: ignore[attr-defined]
        return real(self, num_nodes)

    monkeypatch.setattr(DefaultPreemption, "get_offset_and_num_candidates", drawing)
    scheduler, _ = blocked()
    scheduler.schedule_one(scheduler.active.pop())
    assert scheduler.memo is not None and not scheduler.memo.outcomes
    monkeypatch.undo()
    scheduler.schedule_one(scheduler.active.pop())
    assert scheduler.memo.outcomes  # the same attempt without the other draw is kept


class CountingEncoder:
    """The memo's key encoder, counting its calls."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls = 0

    def encode(self, obj: Any) -> bytes:
        self.calls += 1
        return bytes(self.inner.encode(obj))


def test_a_queued_pod_keeps_its_key_however_many_pods_pass_through_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Five Pending pods tried again and again with a cache of two: each key is encoded once
    (on the queued pod), where the cache alone encoded every key on every retry."""
    encoder = CountingEncoder(failure_memo.KEY_ENCODER)
    monkeypatch.setattr(failure_memo, "KEY_ENCODER", encoder)
    monkeypatch.setattr(failure_memo, "KEYS_KEPT", 2)
    blocker = pod("blocker", "900m", node_name="n1")
    queued = [pod(f"web{i}", "500m") for i in range(5)]
    scheduler = scheduler_with([node("n1", "1")], [blocker], queued)
    for _ in range(4):  # four rounds: every pod tried, then all moved back
        scheduler.run()
        assert sorted(scheduler.unschedulable) == [f"default/web{i}" for i in range(5)]
        scheduler.queue.requeue(list(scheduler.unschedulable))
    assert encoder.calls == 5
    # A rewritten pod (a new object) gets its key taken again.
    info = scheduler.active.pop()
    info.pod = msgspec.structs.replace(info.pod)
    scheduler.schedule_one(info)
    assert encoder.calls == 6  # its failure kept under its key, taken anew
    scheduler.schedule_one(scheduler.active.pop())
    assert encoder.calls == 6 and scheduler.memo_hits > 0  # the next pod's key was kept


def test_a_pods_hint_group_is_taken_once_and_again_when_the_pod_or_its_plugins_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scheduler, _ = blocked()
    queue = scheduler.queue
    calls: list[str] = []
    taken = queue._hint_group_of

    def counting(key: str, info: QueuedPodInfo) -> Any:
        calls.append(key)
        return taken(key, info)

    monkeypatch.setattr(queue, "_hint_group_of", counting)
    for _ in range(3):
        scheduler.run()
        queue.requeue(list(scheduler.unschedulable))
    scheduler.run()
    assert sorted(calls) == ["default/web0", "default/web1"]
    pool = scheduler.unschedulable
    info = pool["default/web0"]
    group = pool._group["default/web0"]
    assert pool._group["default/web1"] == group
    info.unschedulable_plugins = frozenset({"NodeResourcesFit", "NodePorts"})
    pool.regroup("default/web0")
    assert calls[-1] == "default/web0" and pool._group["default/web0"] != group
    info.pod = msgspec.structs.replace(info.pod, spec=msgspec.structs.replace(info.pod.spec))
    info.unschedulable_plugins = frozenset({"NodeResourcesFit"})
    pool.regroup("default/web0")
    assert len(calls) == 4 and pool._group["default/web0"] == group
