"""cluster-autoscaler keeps one snapshot across loops (``ClusterSnapshot.sync``) instead of
copying the cluster every loop: through random churn of the cluster and random what-ifs on the
snapshot (reverted, as each loop reverts its own), the synced snapshot is the one a fresh copy
would be — nodes in the same order, the same node and pod objects, the same answers from the
checker — and sweeps with the autoscaler decide the same with the kept snapshot as with a
fresh one every loop (the same nodes added and removed, the same JSON)."""

from __future__ import annotations

import copy
import functools
from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from test_autoscaling import CA, web
from test_ca_predicate_vectors import _answer, _renamed
from test_fastpath import ZONE
from test_fastpath import nodes as random_nodes
from test_fastpath import pod as random_pod
from topospread.analysis.sweep import serial_backend, sweep
from topospread.api.types import Node, Pod
from topospread.autoscaler.clusterautoscaler.autoscaler import ClusterAutoscaler
from topospread.autoscaler.clusterautoscaler.nodegroup import with_node_name
from topospread.autoscaler.clusterautoscaler.snapshot import ClusterSnapshot, PredicateChecker
from topospread.cluster.state import ClusterState
from topospread.framework.config import default_config
from topospread.plugins.registry import IN_TREE
from topospread.simulator import cluster_autoscaler_loop
from topospread.simulator.timeline_format import parse_timeline

PROFILE = default_config().profiles[0]
SWEPT: Counter[str] = Counter()


def _tainted(node: Node, zone: str | None) -> Node:
    """The node changed in place: a new taint, and maybe another zone."""
    labels = dict(node.metadata.labels)
    if zone is not None:
        labels[ZONE] = zone
    raw = msgspec.to_builtins(node)
    raw["metadata"]["labels"] = labels
    raw["spec"].setdefault("taints", []).append(
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}
    )
    return msgspec.convert(raw, Node)


def _assert_as_fresh(kept: PredicateChecker, source: ClusterState, pending: list[Pod]) -> None:
    fresh = PredicateChecker(ClusterSnapshot(source), PROFILE, IN_TREE)
    mine, theirs = kept.snapshot.state, fresh.snapshot.state
    assert [i.name for i in mine.list()] == [i.name for i in theirs.list()]
    for a, b in zip(mine.list(), theirs.list(), strict=True):
        assert a.node is b.node
        assert [id(p) for p in a.pods] == [id(p) for p in b.pods], a.name
    assert mine.objects is theirs.objects
    kept.reset_search()
    for p in pending:
        for info in theirs.list():
            assert _answer(kept.check_predicates(p, info.name)) == _answer(
                fresh.check_predicates(p, info.name)
            )
        assert kept.fits_any_node(p) == fresh.fits_any_node(p)
        assert kept._last_index == fresh._last_index


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(random_nodes(), st.data())
def test_a_synced_snapshot_is_the_fresh_copy_through_random_churn(
    nodes: list[Node], data: st.DataObject
) -> None:
    names = [n.metadata.name for n in nodes]
    bound = [
        data.draw(random_pod(f"b{i}", data.draw(st.sampled_from(names))))
        for i in range(data.draw(st.integers(0, 8)))
    ]
    pending = [data.draw(random_pod(f"q{i}")) for i in range(data.draw(st.integers(1, 4)))]
    source = ClusterState(nodes, bound)
    kept = PredicateChecker(ClusterSnapshot(source), PROFILE, IN_TREE)
    snapshot = kept.snapshot
    serial = 0
    for _ in range(data.draw(st.integers(1, 5))):
        # The loop's what-ifs on the snapshot, undone at its end.
        snapshot.fork()
        for op in data.draw(st.lists(st.integers(0, 2), max_size=4)):
            infos = snapshot.node_infos()
            if op == 0 and infos:
                serial += 1
                snapshot.add_node(_renamed(data.draw(st.sampled_from(infos)).node, f"t{serial}"))
            elif op == 1 and len(infos) > 1:
                snapshot.remove_node(data.draw(st.sampled_from(infos)).name)
            elif infos:
                host = kept.fits_any_node(pending[0])
                if host is not None:
                    snapshot.add_pod(with_node_name(pending[0], host), host)
        snapshot.revert()
        # The cluster's own churn between loops.
        for op in data.draw(st.lists(st.integers(0, 5), max_size=6)):
            infos = list(source.list())
            serial += 1
            if op == 0 and infos:  # a node joins
                node = _renamed(data.draw(st.sampled_from(infos)).node, f"x{serial}")
                if data.draw(st.booleans()):
                    node = _tainted(node, data.draw(st.sampled_from(["z0", "z1", "z9"])))
                source.add_node(node)
            elif op == 1 and len(infos) > 1:  # a node leaves, with its pods
                source.remove_node(data.draw(st.sampled_from(infos)).name)
            elif op == 2 and infos:  # a node changes in place (tainted; maybe rezoned)
                info = data.draw(st.sampled_from(infos))
                zone = data.draw(st.sampled_from([None, "z1", "z7"]))
                source.update_node(_tainted(info.node, zone))
            elif op == 3 and infos:  # a pod is bound
                host = data.draw(st.sampled_from(infos)).name
                source.bind(data.draw(random_pod(f"p{serial}", host)), host)
            elif op == 4:  # a pod goes
                pods = source.pods()
                if pods:
                    source.unbind(data.draw(st.sampled_from(pods)))
            else:  # a pod is replaced by a new object of the same name
                pods = source.pods()
                if pods:
                    old = data.draw(st.sampled_from(pods))
                    source.unbind(old)
                    new = msgspec.structs.replace(
                        old, metadata=msgspec.structs.replace(old.metadata, labels={"v": "2"})
                    )
                    source.bind(new, new.spec.node_name)
        snapshot.sync(source)
        _assert_as_fresh(kept, source, pending)


def test_sync_refuses_an_open_fork() -> None:
    source = ClusterState([])
    snapshot = ClusterSnapshot(source)
    snapshot.fork()
    with pytest.raises(RuntimeError, match="fork open"):
        snapshot.sync(source)


def _cluster(per_zone: int, replicas: int, cpu: str, policy: str, most: int) -> dict[str, Any]:
    """Three zones of ``per_zone`` 1-CPU nodes, a Deployment spread by zone; cluster-autoscaler
    with one group per zone of up to ``most`` nodes."""
    auto = copy.deepcopy(CA)
    auto["clusterAutoscaler"]["nodeGroups"][0]["maxSize"] = most
    return {
        "nodeGroups": [
            {
                "name": "node",
                "zones": ["zone-a", "zone-b", "zone-c"],
                "perZone": per_zone,
                "template": {"status": {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
            }
        ],
        "objects": [web(replicas, cpu=cpu, nodeTaintsPolicy=policy)],
        "autoscaler": auto,
    }


def _report(doc: dict[str, Any], reuse: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(
            cluster_autoscaler_loop,
            "ClusterAutoscaler",
            functools.partial(ClusterAutoscaler, reuse_snapshot=reuse),
        )
        scenario = parse_timeline(copy.deepcopy(doc), "t.yaml")
        return sweep(scenario, zones=True, backend=serial_backend).to_json()


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    per_zone=st.integers(1, 3),
    replicas=st.integers(2, 14),
    cpu=st.sampled_from(["300m", "400m", "600m"]),
    policy=st.sampled_from(["Honor", "Ignore"]),
    most=st.integers(2, 6),
)
# A cluster whose every zone loss scales the other zones' groups up (its draws are random: the
# check that scale-ups were compared must not rest on them alone).
@example(per_zone=1, replicas=14, cpu="600m", policy="Honor", most=6)
def test_sweeps_decide_the_same_with_the_kept_snapshot_as_with_a_fresh_one(
    per_zone: int, replicas: int, cpu: str, policy: str, most: int
) -> None:
    doc = _cluster(per_zone, replicas, cpu, policy, max(most, per_zone))
    with pytest.MonkeyPatch.context() as monkeypatch:
        kept = _report(doc, True, monkeypatch)
        fresh = _report(doc, False, monkeypatch)
    assert kept == fresh
    for run in kept["runs"]:
        SWEPT["added" if run["autoscaler"]["added"] else "none"] += 1


def test_the_sweeps_compared_included_scale_ups() -> None:
    assert SWEPT["added"] > 0
