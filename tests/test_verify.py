"""``verify``: the Redis-cluster designs' verdicts, counterexample traces, workloads expanded
by their controllers, invariants, the bounded fallback, bad input, and the symmetry reduction
against the unreduced search on random small clusters."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from test_cli import run
from topospread.analysis.verify import (
    VerifyResult,
    VerifyScenario,
    expand_workload,
    find_symmetry,
    load_verify_scenario,
    verify,
)
from topospread.api.types import StatefulSet
from topospread.errors import ManifestError, TopospreadError, ValidationError
from topospread.render.verify import verify_text

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "verify"
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"


def example(name: str) -> VerifyScenario:
    return load_verify_scenario(EXAMPLES / f"{name}.yaml")


def write(tmp: Path, doc: dict[str, Any], name: str = "scenario.yaml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def node(name: str, zone: str = "zone-a", pods: str = "110", **labels: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {HOST: name, ZONE: zone, **labels}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": pods}},
    }


def stateful_set(
    name: str, replicas: int = 2, policy: str | None = None, **spec: Any
) -> dict[str, Any]:
    labels = {"app": name}
    out: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
            },
        },
    }
    if policy:
        out["spec"]["podManagementPolicy"] = policy
    return out


# ---------------------------------------------------------------------------------------------
# The Redis-cluster designs (examples/verify)


def test_the_derived_design_deadlocks_when_a_replica_is_left_only_its_masters_zone() -> None:
    result = verify(example("redis-3shards-3zones-maxskew1"))
    cex = result.counterexample
    assert cex is not None and not result.ok and not result.proved
    assert cex.kind == "deadlock"
    assert cex.message == "deadlock after 5 bindings: 1 pod left and none can be placed"
    assert [s.pod for s in cex.steps] == [
        "default/redis-shard-0-0",
        "default/redis-shard-0-1",
        "default/redis-shard-1-0",
        "default/redis-shard-1-1",
        "default/redis-shard-2-0",
    ]
    # Every step was a choice the scheduler may make: one of the best-scoring nodes.
    assert all(s.node in s.choices and set(s.choices) <= set(s.feasible) for s in cex.steps)
    placed = {n.metadata.name: [p.metadata.name for p in pods] for n, pods in cex.cluster}
    empty = [name for name, pods in placed.items() if not pods]
    assert sum(len(p) for p in placed.values()) == 5 and len(empty) == 1
    # The one free node is in the zone of the stuck replica's master.
    (stuck, why), *_ = cex.pending
    assert stuck == "default/redis-shard-2-1"
    master_node = next(n for n, pods in placed.items() if "redis-shard-2-0" in pods)
    assert master_node[:-1] == empty[0][:-1]
    assert why == (
        "0/6 nodes are available: 1 node(s) didn't match pod anti-affinity rules, "
        "5 node(s) didn't match pod topology spread constraints."
    )


def test_the_relaxed_design_with_hostname_max_skew_2_is_proven() -> None:
    result = verify(example("redis-3shards-3zones-maxskew2"))
    assert result.proved and result.exhaustive and result.counterexample is None
    assert result.orders == 69120
    assert result.depth == 6
    # Symmetry merges states: far fewer than the orders covered.
    assert result.states < 200


@pytest.mark.parametrize(
    ("name", "orders"),
    [
        pytest.param("redis-3shards-1zone-6nodes", 64800, id="one zone, six nodes"),
        pytest.param("redis-3shards-2zones", 10368, id="two zones, three shards"),
        pytest.param("redis-2shards-2zones", 64, id="two zones, two shards"),
    ],
)
def test_the_single_zone_and_two_zone_designs_are_proven(name: str, orders: int) -> None:
    result = verify(example(name))
    assert result.proved
    assert result.orders == orders


def test_six_shards_scale_and_the_zone_skew_formula_lets_a_zone_hold_half_the_pods() -> None:
    result = verify(example("redis-6shards-3zones-4nodes"))
    cex = result.counterexample
    assert cex is not None and cex.kind == "invariant"
    assert cex.invariant == "less-than-half-per-zone"
    assert len(cex.steps) == 12
    assert "holds 6 matching pods (at most 5)" in cex.message
    # Interchangeable shards keep the search small: 12 pods in well under a thousand states.
    assert result.states < 1000


def test_a_broken_invariant_is_reported_with_the_state_that_breaks_it() -> None:
    result = verify(example("redis-3shards-3zones-one-per-node"))
    cex = result.counterexample
    assert cex is not None and cex.kind == "invariant"
    assert cex.invariant == "less-than-a-third-per-node"
    assert len(cex.steps) == 6
    last = cex.steps[-1]
    assert last.pod == "default/redis-shard-2-1"
    on_node = next(pods for n, pods in cex.cluster if n.metadata.name == last.node)
    assert len(on_node) == 2
    assert f"{HOST}={last.node} holds 2 matching pods (at most 1)" in cex.message


def test_any_feasible_branches_over_every_feasible_node_and_finds_a_shorter_trace() -> None:
    result = verify(example("redis-3shards-3zones-one-per-node"), any_feasible=True)
    cex = result.counterexample
    assert cex is not None and len(cex.steps) == 2
    assert cex.steps[0].node == cex.steps[1].node
    assert all(s.choices == s.feasible for s in cex.steps)


def test_the_text_report_shows_the_trace_the_grid_and_the_stuck_pod() -> None:
    text = verify_text(verify(example("redis-3shards-3zones-maxskew1")))
    assert "COUNTEREXAMPLE: deadlock after 5 bindings" in text
    assert "   5. default/redis-shard-2-0 -> " in text
    assert "|               zone-a              |" in text
    assert "redis-shard-2-0*" in text
    assert "  default/redis-shard-2-1: 0/6 nodes are available:" in text
    proof = verify_text(verify(example("redis-3shards-3zones-maxskew2")))
    assert "PROVED: every scheduling order binds every pod and keeps every invariant." in proof
    assert "69120 complete scheduling orders covered" in proof


# ---------------------------------------------------------------------------------------------
# The state budget


def test_past_the_state_budget_it_samples_and_says_it_is_not_a_proof() -> None:
    result = verify(example("redis-3shards-3zones-maxskew2"), max_states=30, samples=50)
    assert result.ok and not result.proved and not result.exhaustive
    assert result.samples == 50 and result.orders is None
    assert result.to_json()["verdict"] == "bounded"
    assert result.to_json()["note"].startswith("not a proof")
    assert "NOT A PROOF" in verify_text(result)


def test_sampling_finds_the_deadlock_reproducibly_from_its_seed() -> None:
    runs = [
        verify(example("redis-3shards-3zones-maxskew1"), max_states=10, samples=500, seed=3)
        for _ in range(2)
    ]
    first, second = (r.counterexample for r in runs)
    assert first is not None and first.kind == "deadlock"
    assert first == second
    assert not runs[0].exhaustive and runs[0].samples <= 500


# ---------------------------------------------------------------------------------------------
# Workloads


def test_an_ordered_ready_stateful_set_creates_each_ordinal_once_the_previous_is_bound() -> None:
    sts = load_verify_scenario_text({"workloads": [stateful_set("db", replicas=3)]})
    assert [p.metadata.name for p in sts.scenario.queue] == ["db-0", "db-1", "db-2"]
    assert sts.waits_for == {
        "default/db-0": (),
        "default/db-1": ("default/db-0",),
        "default/db-2": ("default/db-1",),
    }
    assert sts.origin["default/db-2"] == "StatefulSet default/db"
    # The StatefulSet is an owner for default spreading.
    assert any(isinstance(o, StatefulSet) for o in sts.scenario.objects)


def test_a_stateful_set_whose_first_ordinal_runs_already_creates_the_next_at_once() -> None:
    db0 = {
        "metadata": {"name": "db-0", "labels": {"app": "db"}},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]},
    }
    doc = {"nodes": [node("n1")], "pods": [db0], "workloads": [stateful_set("db", 3)]}
    sc = load_verify_scenario_text(doc)
    assert [p.metadata.name for p in sc.scenario.queue] == ["db-1", "db-2"]
    assert sc.waits_for == {"default/db-1": (), "default/db-2": ("default/db-1",)}


def test_parallel_stateful_sets_replica_sets_deployments_and_jobs_create_pods_at_once() -> None:
    workloads = [
        stateful_set("par", replicas=2, policy="Parallel"),
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                },
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "batch"},
            "spec": {
                "parallelism": 2,
                "completions": 4,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "i"}],
                    }
                },
            },
        },
    ]
    sc = load_verify_scenario_text({"workloads": workloads})
    origins = sorted(sc.origin.values())
    assert origins.count("StatefulSet default/par") == 2
    assert origins.count("Deployment default/web") == 2
    # A Job runs parallelism pods; the rest would follow completions, which never come here.
    assert origins.count("Job default/batch") == 2
    assert all(w == () for w in sc.waits_for.values())


def test_a_pod_not_yet_created_is_reported_as_waiting_for_its_predecessor() -> None:
    # One node that holds one pod: db-0 binds, db-1 finds no room.
    doc = {
        "nodes": [node("n1", pods="1")],
        "workloads": [stateful_set("db", replicas=3)],
    }
    cex = verify(load_verify_scenario_text(doc)).counterexample
    assert cex is not None and cex.kind == "deadlock"
    pending = dict(cex.pending)
    assert pending["default/db-1"].startswith("0/1 nodes are available: 1 Too many pods.")
    assert pending["default/db-2"] == (
        "not created yet: StatefulSet default/db waits for default/db-1 to be bound"
    )


def test_expanding_a_workload_is_deterministic() -> None:
    sc = load_verify_scenario_text({"workloads": [stateful_set("db", replicas=2)]})
    sts = next(o for o in sc.scenario.objects if isinstance(o, StatefulSet))
    import random

    first = expand_workload(sts, random.Random(0))
    again = expand_workload(sts, random.Random(0))
    assert first == again


# ---------------------------------------------------------------------------------------------
# Bad input


def load_verify_scenario_text(doc: dict[str, Any]) -> VerifyScenario:
    with tempfile.TemporaryDirectory() as tmp:
        return load_verify_scenario(write(Path(tmp), doc))


@pytest.mark.parametrize(
    ("doc", "error", "message"),
    [
        pytest.param(
            {"invariants": [{"maxPerDomain": {"selector": {}, "topologyKey": ZONE}}]},
            ManifestError,
            "invariants[0].maxPerDomain.max: Required value",
            id="missing max",
        ),
        pytest.param(
            {
                "invariants": [
                    {
                        "maxPerDomain": {"selector": {}, "topologyKey": ZONE, "max": 1},
                        "distinct": {"selector": {}, "topologyKey": ZONE, "groupBy": "s"},
                    }
                ]
            },
            ManifestError,
            "invariants[0]: give exactly one of maxPerDomain, distinct",
            id="two kinds in one item",
        ),
        pytest.param(
            {"invariants": [{"maxPerDomain": {"selector": {}, "topologyKey": ZONE, "max": -1}}]},
            ValidationError,
            "invariants[0].maxPerDomain.max: Invalid value: -1: must be an integer >= 0",
            id="negative max",
        ),
        pytest.param(
            {
                "invariants": [
                    {
                        "distinct": {
                            "selector": {"matchExpressions": [{"key": "a", "operator": "Is"}]},
                            "topologyKey": ZONE,
                            "groupBy": "shard",
                        }
                    }
                ]
            },
            ValidationError,
            "invariants[0].distinct.selector: Invalid value:",
            id="bad selector operator",
        ),
        pytest.param(
            {"invariants": [{"atMost": {}}]},
            ManifestError,
            "invariants[0]: unknown key 'atMost'",
            id="unknown invariant",
        ),
        pytest.param(
            {"workloads": [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}]},
            ManifestError,
            "workloads[0]: kind Service: workloads are StatefulSets, ReplicaSets, "
            "Deployments and Jobs",
            id="not a workload",
        ),
        pytest.param(
            {
                "workloads": [
                    {**stateful_set("db"), "spec": {**stateful_set("db")["spec"], "selector": {}}}
                ]
            },
            ValidationError,
            "workloads[0] (StatefulSet default/db): ",
            id="a workload its controller rejects",
        ),
        pytest.param(
            {"workloads": {"kind": "StatefulSet"}},
            ManifestError,
            "workloads: expected a list of workloads (StatefulSets, ReplicaSets, Deployments, "
            "Jobs)",
            id="workloads not a list",
        ),
        pytest.param(
            {"workloads": [stateful_set("db", schedulingGates=[{"name": "wait"}])]},
            ValidationError,
            "pod default/db-0: spec.schedulingGates:",
            id="gated pod",
        ),
        pytest.param(
            {"invariant": []},
            ManifestError,
            "unknown key 'invariant'; a scenario has nodes, pods, queue, objects, config, "
            "invariants, workloads",
            id="unknown top-level key",
        ),
    ],
)
def test_bad_verify_scenarios_raise_one_clear_error(
    doc: dict[str, Any], error: type[TopospreadError], message: str
) -> None:
    with pytest.raises(error) as info:
        load_verify_scenario_text({"nodes": [node("n1")], **doc})
    assert message in str(info.value)
    assert "scenario.yaml" in str(info.value)


# ---------------------------------------------------------------------------------------------
# The command


@pytest.mark.parametrize(
    ("name", "args", "code", "verdict"),
    [
        pytest.param("redis-3shards-3zones-maxskew1", [], 1, "counterexample", id="deadlock"),
        pytest.param("redis-3shards-3zones-maxskew2", [], 0, "proved", id="proof"),
        pytest.param(
            "redis-3shards-3zones-maxskew2",
            ["--max-states", "20", "--samples", "5"],
            0,
            "bounded",
            id="bounded",
        ),
    ],
)
def test_verify_exits_1_on_a_counterexample_and_0_otherwise(
    name: str, args: list[str], code: int, verdict: str, capsys: pytest.CaptureFixture[str]
) -> None:
    got, out, err = run(["verify", str(EXAMPLES / f"{name}.yaml"), "-o", "json", *args], capsys)
    assert got == code, err
    assert json.loads(out)["verdict"] == verdict
    assert err == ""  # no progress output when stderr is not a terminal


def test_verify_of_a_bad_scenario_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, {"invariants": {"maxPerDomain": {}}})
    code, out, err = run(["verify", str(path)], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"topospread: error: {path}: invariants: expected a list of invariants "
        "(maxPerDomain or distinct)\n"
    )


# ---------------------------------------------------------------------------------------------
# Symmetry reduction never changes the verdict


def test_hostname_labels_are_identities_and_zones_with_the_same_nodes_are_interchangeable() -> None:
    sym = find_symmetry(example("redis-3shards-3zones-maxskew1"))
    assert sym.identity_keys == [HOST]
    assert sym.zone_key == ZONE
    assert len(set(sym.node_shape)) == 1
    assert [len(g) for g in sym.zone_groups] == [3]


def test_shards_alike_but_for_their_shard_label_are_interchangeable() -> None:
    sym = find_symmetry(example("redis-3shards-3zones-maxskew1"))
    assert [len(orbit) for orbit in sym.orbits] == [3]
    # Each shard's master and replica are two classes (the replica waits for the master).
    assert all(len(roles) == 2 for roles in sym.orbits[0])


def test_a_shard_named_by_an_invariant_keeps_its_identity() -> None:
    doc = yaml.safe_load((EXAMPLES / "redis-3shards-3zones-maxskew1.yaml").read_text())
    doc["invariants"].append(
        {
            "name": "shard-0-apart",
            "maxPerDomain": {
                "selector": {"matchLabels": {"shard": "0"}},
                "topologyKey": ZONE,
                "max": 1,
            },
        }
    )
    sym = find_symmetry(load_verify_scenario_text(doc))
    # Shards 1 and 2 are still interchangeable; shard 0 is not.
    assert [len(orbit) for orbit in sym.orbits] == [2]


def test_a_node_selector_on_one_zone_keeps_that_zone_apart() -> None:
    doc = {
        "nodes": [node("a1", "zone-a"), node("b1", "zone-b"), node("c1", "zone-c")],
        "queue": [
            {
                "metadata": {"name": "p"},
                "spec": {
                    "nodeSelector": {ZONE: "zone-a"},
                    "containers": [{"name": "c", "image": "i"}],
                },
            }
        ],
    }
    sym = find_symmetry(load_verify_scenario_text(doc))
    assert sorted(len(g) for g in sym.zone_groups) == [1, 2]


def _constraints(draw: st.DrawFn) -> list[dict[str, Any]]:
    kinds = [(k, w) for k in (HOST, ZONE) for w in ("DoNotSchedule", "ScheduleAnyway")]
    return [
        {
            "maxSkew": draw(st.integers(1, 2)),
            "topologyKey": key,
            "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": draw(st.sampled_from(["a", "b"]))}},
        }
        for key, when in draw(st.lists(st.sampled_from(kinds), max_size=2, unique=True))
    ]


def _pod_spec(draw: st.DrawFn, group: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
        "topologySpreadConstraints": _constraints(draw),
    }
    if draw(st.booleans()):
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "topologyKey": draw(st.sampled_from([HOST, ZONE])),
                        "labelSelector": {"matchLabels": {"grp": group}},
                    }
                ]
            }
        }
    if draw(st.booleans()):
        spec["nodeSelector"] = {draw(st.sampled_from([ZONE, "disk"])): "zone-a"}
    elif draw(st.booleans()):
        zones = draw(st.lists(st.sampled_from(["zone-a", "zone-b", "zone-c"]), min_size=1))
        term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": zones}]}
        required = {"nodeSelectorTerms": [term]}
        affinity = spec.setdefault("affinity", {})
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": required}
    return spec


@st.composite
def small_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    nodes = []
    # At most four nodes, in up to three zones: the unreduced search stays small.
    sizes = draw(st.sampled_from([[1], [2], [3], [1, 1], [2, 1], [2, 2], [1, 1, 1], [2, 1, 1]]))
    for z, size in enumerate(sizes):
        for i in range(size):
            extra = {"disk": "ssd"} if draw(st.booleans()) else {}
            nodes.append(node(f"n{z}{i}", f"zone-{'abc'[z]}", draw(st.sampled_from(["2", "3"]))))
            nodes[-1]["metadata"]["labels"].update(extra)
    names = [n["metadata"]["name"] for n in nodes]
    queue = []
    for i in range(draw(st.integers(1, 3))):
        group = draw(st.sampled_from(["0", "1"]))
        labels = {"app": draw(st.sampled_from(["a", "b"])), "grp": group}
        queue.append(
            {"metadata": {"name": f"p{i}", "labels": labels}, "spec": _pod_spec(draw, group)}
        )
    pods = []
    if draw(st.booleans()):
        spec = {
            "nodeName": draw(st.sampled_from(names)),
            "containers": [{"name": "c", "image": "i"}],
        }
        pods.append({"metadata": {"name": "old", "labels": {"app": "a", "grp": "0"}}, "spec": spec})
    workloads = []
    # Shards: StatefulSets alike but for their shard label, which their anti-affinity names.
    policy = draw(st.sampled_from(["OrderedReady", "Parallel"]))
    spec = _pod_spec(draw, "x")
    replicas = draw(st.integers(1, 2))
    for shard in range(draw(st.sampled_from([0, 1, 2, 2]))):
        labels = {"app": "s", "grp": f"s{shard}"}
        count = replicas if shard == 0 else draw(st.sampled_from([replicas, replicas, 1]))
        sts = stateful_set(f"s{shard}", count, policy)
        sts["spec"]["selector"]["matchLabels"] = labels
        sts["spec"]["template"]["metadata"]["labels"] = labels
        own = json.loads(json.dumps(spec).replace('"x"', f'"s{shard}"'))
        sts["spec"]["template"]["spec"].update(own)
        workloads.append(sts)
    invariants = [
        {"maxPerDomain": {"selector": {}, "topologyKey": HOST, "max": draw(st.integers(1, 3))}},
        {"distinct": {"selector": {}, "topologyKey": ZONE, "groupBy": "grp"}},
    ]
    return {
        "nodes": nodes,
        "pods": pods,
        "queue": queue,
        "workloads": workloads,
        "invariants": draw(st.sampled_from([[], invariants[:1], invariants])),
    }


def _verdict(result: VerifyResult) -> tuple[Any, ...]:
    cex = result.counterexample
    return (
        result.ok,
        result.exhaustive,
        result.orders,
        result.depth,
        None if cex is None else len(cex.steps),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=small_scenarios(), any_feasible=st.booleans())
def test_symmetry_reduction_never_changes_the_verdict(
    doc: dict[str, Any], any_feasible: bool
) -> None:
    sc = load_verify_scenario_text(doc)
    reduced = verify(sc, any_feasible=any_feasible)
    reference = verify(sc, any_feasible=any_feasible, symmetry=False)
    assert _verdict(reduced) == _verdict(reference)
    assert reduced.states <= reference.states
    event("merged" if reduced.states < reference.states else "not merged")
    event("interchangeable workloads" if find_symmetry(sc).orbits else "no workload symmetry")


# ---------------------------------------------------------------------------------------------
# Claims: bound as the cycle binds them while orders are explored


def _claimed_db(replicas: int, pvs: list[tuple[str, str]], **spec: Any) -> dict[str, Any]:
    """A Parallel StatefulSet whose replicas each claim 1Gi of a WaitForFirstConsumer class
    without a provisioner, and static 5Gi PVs ``(name, zone)``."""
    sts = stateful_set("db", replicas=replicas, policy="Parallel", **spec)
    sts["spec"]["volumeClaimTemplates"] = [
        {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "resources": {"requests": {"storage": "1Gi"}},
            },
        }
    ]
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    ]
    for name, zone in pvs:
        term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": [zone]}]}
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": name},
                "spec": {
                    "capacity": {"storage": "5Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "local",
                    "csi": {"driver": "local.csi.example.com", "volumeHandle": name},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
                },
                "status": {"phase": "Available"},
            }
        )
    return {
        "nodes": [node("a1", "zone-a"), node("b1", "zone-b")],
        "objects": objects,
        "workloads": [sts],
    }


def test_a_static_pv_bound_to_one_replicas_claim_is_not_free_for_the_next() -> None:
    result = verify(load_verify_scenario_text(_claimed_db(2, [("pv-a", "zone-a")])))
    cex = result.counterexample
    assert cex is not None and cex.kind == "deadlock"
    assert [(s.pod, s.node) for s in cex.steps] in (
        [("default/db-0", "a1")],
        [("default/db-1", "a1")],
    )
    # The other replica's claim finds pv-a taken: upstream's reason on both nodes.
    ((_, message),) = cex.pending
    assert message == (
        "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."
    )


def test_replicas_with_a_pv_each_are_proven_and_pinned_to_their_volumes_zones() -> None:
    result = verify(
        load_verify_scenario_text(_claimed_db(2, [("pv-a", "zone-a"), ("pv-b", "zone-b")]))
    )
    assert result.ok and result.exhaustive


def test_volumes_in_one_zone_deadlock_a_zone_spread_and_nodes_are_not_merged() -> None:
    spread = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "db"}},
            }
        ]
    }
    doc = _claimed_db(3, [("pv-a1", "zone-a"), ("pv-a2", "zone-a"), ("pv-a3", "zone-a")], **spread)
    result = verify(load_verify_scenario_text(doc))
    # The volumes read the zone labels: no two nodes are interchangeable.
    assert result.reduction.endswith("2 node shapes")
    cex = result.counterexample
    assert cex is not None and cex.kind == "deadlock"
    # One replica takes a zone-a volume; the next may not join it (skew 2), and zone-b has no
    # volume for it.
    assert [s.node for s in cex.steps] == ["a1"]
    assert [m for _, m in cex.pending] == [
        "0/2 nodes are available: 1 node(s) didn't find available persistent volumes to bind, "
        "1 node(s) didn't match pod topology spread constraints."
    ] * 2
    reference = verify(load_verify_scenario_text(doc), symmetry=False).counterexample
    assert reference is not None and reference.pending == cex.pending


def test_a_manifest_given_as_the_verify_scenario_says_where_its_objects_go() -> None:
    with pytest.raises(ManifestError) as info:
        load_verify_scenario_text({"apiVersion": "apps/v1", "kind": "Deployment"})
    assert str(info.value).endswith(
        ": holds Kubernetes objects (Deployment), not a scenario (one mapping with keys nodes, "
        "pods, queue, objects, config, invariants, workloads): a verify scenario lists its "
        "objects under those keys (Nodes under nodes, Deployments and StatefulSets under "
        "workloads)"
    )
