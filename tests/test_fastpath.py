"""The vectorised fast path decides exactly as the reference path, on random clusters."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from topospread.api.types import Namespace, Node, Pod, Service, Taint
from topospread.cluster.index import spread_counts as _spread_counts
from topospread.framework.config import default_config
from topospread.simulator.fastpath import FastPath
from topospread.simulator.fastpath import cycle as _cycle
from topospread.simulator.fastpath.shapes import Static as _Static
from topospread.simulator.fastpath.table import ROW_COLUMNS as _ROW_COLUMNS
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
FAST_DECISIONS: list[int] = []
FAST_KINDS: Counter[str] = Counter()
LARGE_FAST_DECISIONS: list[int] = []


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    out = []
    for i in range(draw(st.integers(1, 10))):
        labels = {HOST: f"n{i}"}
        if draw(st.integers(0, 5)):
            labels[ZONE] = draw(st.sampled_from(["z0", "z1", "z2"]))
        taints = []
        if draw(st.integers(0, 6)) == 0:
            taints.append({"key": "dedicated", "value": "x", "effect": "NoSchedule"})
        if draw(st.integers(0, 6)) == 0:
            taints.append({"key": "soft", "effect": "PreferNoSchedule"})
        out.append(
            msgspec.convert(
                {
                    "metadata": {"name": f"n{i}", "labels": labels},
                    "spec": {"taints": taints, "unschedulable": draw(st.integers(0, 9)) == 0},
                    "status": {
                        "allocatable": {
                            "cpu": draw(st.sampled_from(["1", "2", "4"])),
                            "memory": draw(st.sampled_from(["1Gi", "4Gi"])),
                            "pods": draw(st.sampled_from(["3", "110"])),
                        },
                        "images": [{"names": ["web:1"], "sizeBytes": 300 * 2**20}]
                        if draw(st.booleans())
                        else [],
                    },
                },
                Node,
            )
        )
    return out


def requests(draw: st.DrawFn) -> dict[str, Any]:
    req: dict[str, str] = {}
    if draw(st.booleans()):
        req["cpu"] = draw(st.sampled_from(["100m", "500m", "1"]))
    if draw(st.booleans()):
        req["memory"] = draw(st.sampled_from(["100Mi", "1Gi"]))
    return {"requests": req}


SELECTORS: list[Any] = [{"matchLabels": {"app": "a"}}, {}, {"matchLabels": {"app": "b"}}]


def affinity_term(draw: st.DrawFn) -> dict[str, Any]:
    term: dict[str, Any] = {
        "topologyKey": draw(st.sampled_from([ZONE, HOST])),
        "labelSelector": draw(st.sampled_from(SELECTORS)),
    }
    scope = draw(st.integers(0, 5))
    if scope == 1:
        term["namespaces"] = ["other"]
    elif scope == 2:
        term["namespaceSelector"] = {}
    elif scope == 3:
        term["namespaceSelector"] = {"matchLabels": {"team": "x"}}
    return term


def pod_affinity(draw: st.DrawFn) -> dict[str, Any] | None:
    """Required and preferred pod (anti-)affinity, as charts and operators write them."""
    if draw(st.integers(0, 2)):
        return None
    out: dict[str, Any] = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if draw(st.booleans()):
            continue
        stanza: dict[str, Any] = {}
        if draw(st.integers(0, 2)) == 0:
            stanza["requiredDuringSchedulingIgnoredDuringExecution"] = [
                affinity_term(draw) for _ in range(draw(st.integers(1, 2)))
            ]
        if draw(st.booleans()):
            stanza["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "weight": draw(st.sampled_from([1, 50, 100])),
                    "podAffinityTerm": affinity_term(draw),
                }
                for _ in range(draw(st.integers(1, 2)))
            ]
        out[kind] = stanza
    return out or None


@st.composite
def pod(
    draw: st.DrawFn, name: str, node: str | None = None, nominate_to: Sequence[str] = ()
) -> Pod:
    labels = draw(st.sampled_from([{"app": "a"}, {"app": "b"}, {}]))
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "web:1", "resources": requests(draw)}],
        # Queued pods outrank bound ones often enough for preemption to find victims.
        "priority": draw(st.sampled_from([0, 0, 10] if node is not None else [0, 10, 100, 1000])),
    }
    if draw(st.integers(0, 12)) == 0:
        spec["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    affinity = pod_affinity(draw)
    if affinity is not None:
        spec["affinity"] = affinity
    if node is not None:
        spec["nodeName"] = node
    else:
        if draw(st.integers(0, 5)) == 0:
            spec["preemptionPolicy"] = "Never"
        constraints = []
        for _ in range(draw(st.integers(0, 2))):
            c: dict[str, Any] = {
                "maxSkew": draw(st.integers(1, 3)),
                "topologyKey": draw(st.sampled_from([ZONE, HOST])),
                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                "labelSelector": draw(st.sampled_from(SELECTORS)),
            }
            if c["whenUnsatisfiable"] == "DoNotSchedule" and draw(st.booleans()):
                c["minDomains"] = draw(st.integers(1, 4))
            if draw(st.booleans()):
                c["nodeTaintsPolicy"] = "Honor"
            constraints.append(c)
        # One constraint per (key, action), as the API server insists.
        seen: set[tuple[str, str]] = set()
        spec["topologySpreadConstraints"] = [
            c
            for c in constraints
            if (k := (c["topologyKey"], c["whenUnsatisfiable"])) not in seen and not seen.add(k)  # type: ignore[func-returns-value]
        ]
        if draw(st.integers(0, 4)) == 0:
            spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
        if draw(st.integers(0, 4)) == 0:
            spec["nodeSelector"] = {ZONE: draw(st.sampled_from(["z0", "z1"]))}
    namespace = "other" if draw(st.integers(0, 4)) == 0 else "default"
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if node is not None and draw(st.integers(0, 8)) == 0:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    raw: dict[str, Any] = {"metadata": meta, "spec": spec}
    if nominate_to and draw(st.integers(0, 5)) == 0:
        # A pod read from a cluster while it waits for the room its preemption made.
        raw["status"] = {"nominatedNodeName": draw(st.sampled_from([*nominate_to, "gone"]))}
    return msgspec.convert(raw, Pod)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    cluster = draw(nodes())
    names = [n.metadata.name for n in cluster]
    bound = [
        draw(pod(f"b{i}", draw(st.sampled_from(names)))) for i in range(draw(st.integers(0, 8)))
    ]
    queue = [draw(pod(f"q{i}", nominate_to=names)) for i in range(draw(st.integers(1, 10)))]
    objects = []
    if draw(st.booleans()):
        objects.append(
            msgspec.convert(
                {
                    "metadata": {"name": "svc", "namespace": "default"},
                    "spec": {"selector": {"app": "a"}},
                },
                Service,
            )
        )
    if draw(st.booleans()):
        objects.append(
            msgspec.convert(
                {"metadata": {"name": draw(st.sampled_from(["default", "other"])),
                              "labels": {"team": "x"}}},
                Namespace,
            )
        )  # fmt: skip
    return Scenario(
        nodes=cluster, pods=bound, queue=queue, objects=objects, config=default_config()
    )


def summary(run: ScheduleRun) -> list[Any]:
    return [
        (
            d.key,
            d.node,
            d.feasible,
            d.scores,
            d.plugin_scores,
            d.reasons,
            d.message,
            d.preempted,
        )
        for d in run.attempts
    ]


def fast_as_reference(scenario: Scenario, seed: int, percentage: int | None) -> ScheduleRun:
    """The fast path's run, after checking that it decides as the reference path's."""
    reference = schedule(scenario, seed=seed, fast=False, percentage_of_nodes_to_score=percentage)
    fast = schedule(scenario, seed=seed, fast=True, percentage_of_nodes_to_score=percentage)
    assert summary(fast) == summary(reference)
    return fast


# NOTE: derandomized, so that the coverage below is the same on every run (it counts what the
# random scenarios reached) and does not depend on the tests that ran before.
@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
@given(scenarios(), st.integers(0, 3), st.sampled_from([None, 50, 100]))
def test_fast_path_decides_as_the_reference_path(
    scenario: Scenario, seed: int, percentage: int | None
) -> None:
    fast = fast_as_reference(scenario, seed, percentage)
    FAST_DECISIONS.append(fast.scheduler.fast_decisions)
    if fast.scheduler.fast_decisions:
        FAST_KINDS["affinity"] += any(p.spec.affinity for p in (*scenario.pods, *scenario.queue))
        FAST_KINDS["failed"] += fast.scheduler.fast_failures
        FAST_KINDS["preempted"] += fast.scheduler.fast_failures > 0 and any(
            d.preempted for d in fast.attempts
        )
        FAST_KINDS["nominated"] += fast.scheduler.fast_nominated
    # Dropping report detail never changes a decision (nor the random draws).
    lean = schedule(
        scenario, seed=seed, fast=True, detail=False, percentage_of_nodes_to_score=percentage
    )
    assert [(d.key, d.node) for d in lean.attempts] == [(d.key, d.node) for d in fast.attempts]


def _counted() -> None:
    if not FAST_DECISIONS:  # run alone (-k): the property test counts first
        test_fast_path_decides_as_the_reference_path()


def test_the_fast_path_was_exercised() -> None:
    _counted()  # most attempts must have taken the fast path
    assert sum(FAST_DECISIONS) > 100


def test_affinity_failures_and_preemption_were_exercised() -> None:
    # The random scenarios must reach what issue 9 moved onto the fast path: pods with pod
    # (anti-)affinity in the cluster and in the queue, failed attempts, and preemption.
    _counted()
    assert FAST_KINDS["affinity"] > 20
    assert FAST_KINDS["failed"] > 20
    assert FAST_KINDS["preempted"] > 0
    # Attempts decided while nominated pods wait (the pod's own nomination or others').
    assert FAST_KINDS["nominated"] > 20


def assert_table_as_built_afresh(fast: FastPath) -> None:
    """The fast path's node table, carried over rebuilds, against one built from scratch."""
    fast._fresh()
    scratch = FastPath(fast.cluster, fast.fwk, fast.features)
    fast.cluster.listeners.remove(scratch)
    assert fast.names == scratch.names
    for column in (*_ROW_COLUMNS, "min_priority", "free_cpu", "free_mem", "free_eph", "free_pods"):
        assert getattr(fast, column).tolist() == getattr(scratch, column).tolist(), column

    def levels(table: Any) -> dict[int, list[list[int]]]:
        """Bound pods' requests per priority (a level all pods have left is no level)."""
        out = {}
        for priority, level in table.bound.items():
            rows = [c.tolist() for c in (level.cpu, level.mem, level.eph, level.pods)]
            if any(any(row) for row in rows):
                out[priority] = rows
        return out

    assert levels(fast.table) == levels(scratch.table)
    # Each row's numbered taint set (numbers differ between the two tables: the sets agree).
    table = fast.table
    assert [table.taint_sets[k][0] for k in table.taint_set.tolist()] == [
        tuple(info.node.spec.taints) for info in fast.cluster.list()
    ]
    assert all(tuple(node.spec.taints) == taints for taints, node in table.taint_sets)
    fit: Any = fast.kernels.get("NodeResourcesFit")
    balanced: Any = fast.kernels.get("NodeResourcesBalancedAllocation")
    for static in fast.shapes.statics.values():
        if not isinstance(static, _Static):
            continue  # a shape the path declines
        built = scratch.shapes.build(static.pod)
        assert built is not None
        assert {  # each table interns its own statuses: compare the statuses
            k: [fast.statuses.table[i] for i in v.tolist()] for k, v in static.filter_status.items()
        } == {
            k: [scratch.statuses.table[i] for i in v.tolist()]
            for k, v in built.filter_status.items()
        }
        assert {k: v.tolist() for k, v in static.static_scores.items()} == {
            k: v.tolist() for k, v in built.static_scores.items()
        }
        assert static.rejects == built.rejects
        for name, zero in static.all_zero.items():  # kept between decisions
            assert zero == (not built.static_scores[name].any()), name
        # The resource scores kept between decisions, replayed from the changed rows.
        every = np.arange(len(fast.names))
        if "least" in static.kept and fast.table.all_alloc:
            kept = fit.kept_least(static).tolist()
            assert kept == fit.least_allocated_at(static, every).tolist()
        if "balanced" in static.kept:
            kept = balanced.kept_balanced(static).tolist()
            assert kept == balanced.balanced_at(static, every).tolist()
        if "fit" in static.kept:
            kept = fit.kept_bits(static).tolist()
            free = (fast.free_cpu, fast.free_mem, fast.free_eph, fast.free_pods)
            assert kept == fit.fit_bits(static, *free).tolist()
    infos = fast.cluster.list()
    for namespace, by_selector in fast.cluster.index().matching.items():
        for selector, matching in by_selector.items():
            expected = [
                sum(1 for p in info.pods if _spread_counts(p, namespace, selector))
                for info in infos
            ]
            assert matching.per_node.tolist() == expected
            for counter in matching.counters:
                counts = [0] * len(counter.counts)
                for i, n in enumerate(expected):
                    if counter.eligible[i] and counter.codes[i] >= 0:
                        counts[counter.codes[i]] += n
                assert counter.counts.tolist() == counts


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.data())
def test_node_churn_leaves_the_table_as_one_built_afresh(
    scenario: Scenario, data: st.DataObject
) -> None:
    """After the pods are scheduled (pod shapes decided, counters built), random changes to
    the cluster — nodes added (tainted, cordoned, labelled anew), removed and updated, pods
    bound and unbound, while the table is stale or not — leave the table, whose unchanged
    rows rebuilds carry over, as one built from the cluster as it stands."""
    run = schedule(scenario, seed=0, fast=True)
    (fast,) = run.scheduler.fast.values()
    cluster = fast.cluster
    extra = data.draw(nodes())
    spare = [
        msgspec.structs.replace(n, metadata=msgspec.structs.replace(n.metadata, name=f"x{i}"))
        for i, n in enumerate(extra)
    ]
    for _ in range(data.draw(st.integers(1, 12))):
        names = [info.name for info in cluster.list()]
        op = data.draw(st.sampled_from(["add", "remove", "update", "bind", "unbind", "fresh"]))
        if op == "add" and spare:
            cluster.add_node(spare.pop())
        elif op == "remove" and len(names) > 1:
            cluster.remove_node(data.draw(st.sampled_from(names)))
        elif op == "update" and names:
            node = cluster.infos[data.draw(st.sampled_from(names))].node
            other = data.draw(nodes())[0]
            new = msgspec.structs.replace(
                node,
                spec=other.spec,
                status=msgspec.structs.replace(node.status, allocatable=other.status.allocatable),
            )
            if data.draw(st.booleans()):  # a new zone too: the table is rebuilt
                new = msgspec.structs.replace(
                    new,
                    metadata=msgspec.structs.replace(
                        node.metadata, labels=other.metadata.labels | {HOST: node.metadata.name}
                    ),
                )
            cluster.update_node(new)
        elif op == "bind" and names:
            name = data.draw(st.sampled_from(names))
            pod = data.draw(pod_strategy(f"p{len(cluster.pods())}-{name}", name))
            cluster.bind(pod, name)
        elif op == "unbind":
            bound = cluster.pods()
            if bound:
                cluster.unbind(data.draw(st.sampled_from(bound)))
        elif op == "fresh":
            fast._fresh()
    assert_table_as_built_afresh(fast)


pod_strategy = pod


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2**40),  # allocatable cpu (milli) and memory, 0 included
            st.integers(0, 2**46),
            st.integers(0, 2**40),  # requested, non-zero-defaulted and actual
            st.integers(0, 2**46),
        ),
        min_size=1,
        max_size=20,
    ),
    st.tuples(st.integers(0, 2**34), st.integers(0, 2**40)),
)
def test_one_rows_resource_scores_are_the_vectors(
    rows: list[tuple[int, int, int, int]], request: tuple[int, int]
) -> None:
    """The per-row arithmetic that keeps a shape's LeastAllocated and BalancedAllocation
    scores between decisions gives the vector arithmetic's numbers, to the last unit."""
    node = msgspec.convert({"metadata": {"name": "n0", "labels": {HOST: "n0"}}}, Node)
    run = schedule(Scenario(nodes=[node], pods=[], queue=[], objects=[], config=default_config()))
    (fast,) = run.scheduler.fast.values()
    n = len(rows)
    fast.names = [f"n{i}" for i in range(n)]
    fast.alloc_cpu = np.array([r[0] for r in rows], np.int64)
    fast.alloc_mem = np.array([r[1] for r in rows], np.int64)
    fast.nz_cpu = fast.req_cpu = np.array([r[2] for r in rows], np.int64)
    fast.nz_mem = fast.req_mem = np.array([r[3] for r in rows], np.int64)
    pod = msgspec.convert(
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}, Pod
    )
    static = fast.shapes.build(pod)
    assert static is not None
    static.score_req = static.balanced_req = request
    every = np.arange(n)
    fit: Any = fast.kernels["NodeResourcesFit"]
    kernel: Any = fast.kernels["NodeResourcesBalancedAllocation"]
    balanced = kernel.balanced_at(static, every).tolist()
    assert [kernel.balanced_row(static, i) for i in range(n)] == balanced
    if all(r[0] and r[1] for r in rows):
        fast.table.all_alloc = True
        least = fit.least_allocated_at(static, every).tolist()
        assert [fit.least_row(static, i) for i in range(n)] == least
    # NodeResourcesFit's shortage bits, with room short, exact and to spare.
    fast.free_cpu = fast.alloc_cpu - fast.req_cpu
    fast.free_mem = fast.alloc_mem - fast.req_mem
    fast.alloc_eph = fast.free_eph = np.array([r[2] % 7 for r in rows], np.int64)
    fast.free_pods = np.array([r[3] % 3 - 1 for r in rows], np.int64)
    static.req_cpu, static.req_mem, static.req_eph = request[0], request[1], 3
    free = (fast.free_cpu, fast.free_mem, fast.free_eph, fast.free_pods)
    bits = fit.fit_bits(static, *free).tolist()
    assert [fit.fit_row(static, i) for i in range(n)] == bits


@st.composite
def large_scenarios(draw: st.DrawFn, nominate: bool = False) -> Scenario:
    """Past 100 nodes, where the scheduler samples: it stops at enough feasible nodes and
    the next search starts after the last one visited, round the list. ``nominate``: queued
    pods may come nominated to a node (or one that is gone)."""
    cluster = []
    for i in range(draw(st.integers(101, 240))):
        kind = draw(st.integers(0, 9))
        cluster.append(
            msgspec.convert(
                {
                    "metadata": {
                        "name": f"n{i}",
                        "labels": {HOST: f"n{i}", ZONE: f"z{draw(st.integers(0, 3))}"},
                    },
                    "spec": {
                        "unschedulable": kind == 0,
                        "taints": [{"key": "k", "effect": "NoSchedule"}] if kind == 1 else [],
                    },
                    "status": {
                        "allocatable": {
                            "cpu": "1" if kind == 2 else "4",
                            "memory": "4Gi",
                            "pods": "110",
                        }
                    },
                },
                Node,
            )
        )
    names = [n.metadata.name for n in cluster]
    bound = [
        draw(pod(f"b{i}", draw(st.sampled_from(names)))) for i in range(draw(st.integers(0, 30)))
    ]
    nominate_to = names if nominate else ()
    queue = [draw(pod(f"q{i}", nominate_to=nominate_to)) for i in range(draw(st.integers(1, 14)))]
    return Scenario(nodes=cluster, pods=bound, queue=queue, objects=[], config=default_config())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(large_scenarios(), st.integers(0, 3), st.sampled_from([None, 5, 30, 50]))
def test_fast_path_samples_as_the_reference_path_past_a_hundred_nodes(
    scenario: Scenario, seed: int, percentage: int | None
) -> None:
    fast = fast_as_reference(scenario, seed, percentage)
    LARGE_FAST_DECISIONS.append(fast.scheduler.fast_decisions)


def test_the_fast_path_decided_past_a_hundred_nodes() -> None:
    """The equivalence above is not the reference path's with itself."""
    assert sum(LARGE_FAST_DECISIONS) > 50


NOMINATED_WINDOWS: Counter[bool] = Counter()


def _nominated_outside_the_window() -> Scenario:
    """120 free nodes but n110 (unschedulable): q0, nominated to n110, searches n000..n099
    (100 feasible, enough) and never reaches n110 again — outside its window; q1 follows."""
    nodes = [
        msgspec.convert(
            {
                "metadata": {"name": f"n{i:03}", "labels": {HOST: f"n{i:03}", ZONE: f"z{i % 3}"}},
                "spec": {"unschedulable": i == 110},
                "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"}},
            },
            Node,
        )
        for i in range(120)
    ]
    queue = [
        msgspec.convert(
            {
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "web:1", "resources": {"requests": {"cpu": "1"}}}
                    ],
                    "priority": 1000,
                },
                **({"status": {"nominatedNodeName": "n110"}} if name == "q0" else {}),
            },
            Pod,
        )
        for name in ("q0", "q1")
    ]
    return Scenario(nodes=nodes, pods=[], queue=queue, objects=[], config=default_config())


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
@given(large_scenarios(nominate=True), st.integers(0, 3), st.sampled_from([None, 5, 30]))
# NOTE: how many random draws land outside the window varies with test order (Hypothesis mines
# constants from every loaded module), so one known case outside it is always run.
@example(_nominated_outside_the_window(), 0, None)
def test_fast_path_samples_past_a_failed_nominated_node_as_the_reference_path(
    scenario: Scenario, seed: int, percentage: int | None
) -> None:
    """Pods nominated to a node that no longer fits them: it is tried alone first, then every
    node is searched; the next search starts past the nominated node too where this one did
    not reach it (upstream counts its status: processedNodes in findNodesThatFitPod)."""
    real = _cycle._in_window

    def counted(row: int | None, start: int, visited: int, n: int) -> bool:
        inside = real(row, start, visited, n)
        NOMINATED_WINDOWS[inside] += 1
        return inside

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(_cycle, "_in_window", counted)
        fast_as_reference(scenario, seed, percentage)


def test_failed_nominated_nodes_fell_inside_and_outside_the_window() -> None:
    if not NOMINATED_WINDOWS:  # run alone (-k): the property test counts first
        test_fast_path_samples_past_a_failed_nominated_node_as_the_reference_path()
    print(NOMINATED_WINDOWS)
    # The split of the random draws varies with test order: Hypothesis feeds constants it
    # mines from every loaded module into generation, so even derandomized draws depend on the
    # modules earlier tests imported. The explicit example above is always outside; the exact
    # cases are in test_fastpath_nominated.py.
    assert NOMINATED_WINDOWS[True] > 5
    assert NOMINATED_WINDOWS[False] > 0


def test_a_soft_taint_on_one_node_updates_a_shapes_all_zero_taint_scores() -> None:
    """A shape's TaintToleration scores, 0 on every node (kept so between decisions), are no
    longer all 0 once a node gains a PreferNoSchedule taint in place: the table says so, and
    the next pod of that shape prefers the other nodes, as the reference path does."""

    def plain(name: str) -> Node:
        return msgspec.convert(
            {
                "metadata": {"name": name, "labels": {HOST: name, ZONE: "z0"}},
                "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"}},
            },
            Node,
        )

    def web(name: str) -> Pod:
        spec = {"containers": [{"name": "c", "image": "web:1"}]}
        return msgspec.convert({"metadata": {"name": name}, "spec": spec}, Pod)

    nodes_ = [plain(f"n{i}") for i in range(3)]
    run = schedule(Scenario(nodes=nodes_, pods=[], queue=[web("a")], objects=[],
                            config=default_config()))  # fmt: skip
    (fast,) = run.scheduler.fast.values()
    (static,) = (s for s in fast.shapes.statics.values() if isinstance(s, _Static))
    assert static.all_zero.get("TaintToleration") is True
    for name in ("n0", "n2"):
        node = fast.cluster.infos[name].node
        soft = msgspec.convert({"key": "soft", "effect": "PreferNoSchedule"}, Taint)
        fast.cluster.update_node(
            msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, taints=[soft]))
        )
    assert_table_as_built_afresh(fast)
    assert static.all_zero.get("TaintToleration") is not True
    run.scheduler.add(web("b"))
    run.scheduler.run()
    assert fast.cluster.infos["n1"].pods[-1].metadata.name == "b"


@st.composite
def one_zone_scenarios(draw: st.DrawFn) -> Scenario:
    """``scenarios`` with every node in zone z0: each zone term has one domain, every node."""
    scenario = draw(scenarios())
    one_zone = [
        msgspec.structs.replace(
            n,
            metadata=msgspec.structs.replace(n.metadata, labels={**n.metadata.labels, ZONE: "z0"}),
        )
        for n in scenario.nodes
    ]
    return Scenario(
        nodes=one_zone,
        pods=scenario.pods,
        queue=scenario.queue,
        objects=scenario.objects,
        config=scenario.config,
    )


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)
@given(one_zone_scenarios(), st.integers(0, 3))
def test_fast_path_decides_as_the_reference_path_with_every_node_in_one_zone(
    scenario: Scenario, seed: int
) -> None:
    # The node table sums a zone term's counts as one domain (``domain_sums``'s shortcut).
    fast_as_reference(scenario, seed, None)


def test_a_single_domain_sums_every_nodes_counts() -> None:
    def node(i: int) -> Node:
        return msgspec.convert(
            {
                "metadata": {"name": f"n{i}", "labels": {HOST: f"n{i}", ZONE: "z0"}},
                "status": {"allocatable": {"cpu": "4", "memory": "4Gi", "pods": "110"}},
            },
            Node,
        )

    term = {"topologyKey": ZONE, "labelSelector": {"matchLabels": {"app": "a"}}}

    def web(name: str, node: str | None, affinity: dict[str, Any] | None) -> Pod:
        spec: dict[str, Any] = {"containers": [{"name": "c", "image": "web:1"}]}
        if node:
            spec["nodeName"] = node
        if affinity:
            spec["affinity"] = affinity
        meta = {"name": name, "namespace": "default", "labels": {"app": "a"}}
        return msgspec.convert({"metadata": meta, "spec": spec}, Pod)

    required = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    scenario = Scenario(
        nodes=[node(i) for i in range(4)],
        pods=[web("b0", "n1", None), web("b1", "n2", required)],
        queue=[web("q0", None, required), web("q1", None, anti), web("q2", None, None)],
        objects=[],
        config=default_config(),
    )
    run = fast_as_reference(scenario, 0, None)
    # q0 goes anywhere (its zone holds a matching pod); q1's zone holds some: nowhere.
    assert [(d.key, d.node is not None) for d in run.attempts][:2] == [
        ("default/q0", True),
        ("default/q1", False),
    ]
    table = run.scheduler.fast[next(iter(run.scheduler.fast))].table
    per_node = np.array([0, 2, 1, 0], np.int64)
    has, at, total = table.domain_sums(ZONE, per_node)
    assert has.all() and at.tolist() == [3, 3, 3, 3] and total == 3
