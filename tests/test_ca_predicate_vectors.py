"""The PredicateChecker's vectorised answers (simulator/fastpath/filter_vectors.py)
are the reference plugins': on random clusters through fork, add, remove and revert, every pod
gets the same verdict and reasons on every node, and the same node from the round-robin
search; and the cluster-autoscaler and Karpenter tests pass with every answer cross-checked."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ca_helpers import MIB, build_test_node, build_test_pod
from test_fastpath import ZONE
from test_fastpath import nodes as random_nodes
from test_fastpath import pod as random_pod
from topospread.api.types import Namespace, Node, Pod, Service
from topospread.autoscaler.clusterautoscaler import autoscaler as ca_module
from topospread.autoscaler.clusterautoscaler.snapshot import (
    ClusterSnapshot,
    PredicateChecker,
    PredicateError,
)
from topospread.autoscaler.karpenter import karpenter as karpenter_module
from topospread.cluster.snapshot import ObjectStore
from topospread.cluster.state import ClusterState
from topospread.framework.config import Profile, default_config
from topospread.framework.features import DEFAULT_FEATURES, Features
from topospread.framework.runtime import Registry
from topospread.framework.types import NodeInfo
from topospread.plugins.registry import IN_TREE

EXERCISED: Counter[str] = Counter()


def _answer(error: PredicateError | None) -> Any:
    if error is None:
        return None
    s = error.status
    return (error.node_name, s.code, s.plugin, tuple(s.reasons))


def _renamed(node: Node, name: str) -> Node:
    labels = {**node.metadata.labels, "kubernetes.io/hostname": name}
    meta = msgspec.structs.replace(node.metadata, name=name, labels=labels)
    return msgspec.structs.replace(node, metadata=meta)


def _pair(state: ClusterState) -> tuple[PredicateChecker, PredicateChecker]:
    """A fast checker and a reference one on the same snapshot."""
    snapshot = ClusterSnapshot(state)
    profile = default_config().profiles[0]
    fast = PredicateChecker(snapshot, profile, IN_TREE)
    reference = PredicateChecker(snapshot, profile, IN_TREE, fast=False)
    return fast, reference


def _assert_same(fast: PredicateChecker, reference: PredicateChecker, pods: list[Pod]) -> None:
    infos = fast.snapshot.node_infos()
    for p in pods:
        if fast.vectors is not None and fast.vectors.codes(p) is not None:
            EXERCISED["vectors"] += 1
        for info in infos:
            assert _answer(fast.check_predicates(p, info.name)) == _answer(
                reference.check_predicates(p, info.name)
            ), (p.metadata.name, info.name)
        reference._last_index = fast._last_index
        assert fast.fits_any_node(p) == reference.fits_any_node(p), p.metadata.name
        assert fast._last_index == reference._last_index
        even = fast.fits_any_node_matching(p, _even)
        assert even == reference.fits_any_node_matching(p, _even)


def _even(info: NodeInfo) -> bool:
    return int(info.name.lstrip("ntx") or 0) % 2 == 0


NODE_AFFINITY: list[dict[str, Any]] = [
    {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z0", "z2"]}]},
    {"matchExpressions": [{"key": ZONE, "operator": "DoesNotExist"}]},
    # On metadata.name: PreFilter narrows the nodes, which the fast path declines.
    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n0", "n1"]}]},
]


def _with_node_affinity(pod: Pod, which: int) -> Pod:
    """The pod with a required node affinity term (``which`` past the terms: unchanged)."""
    if which >= len(NODE_AFFINITY):
        return pod
    raw = msgspec.to_builtins(pod)
    affinity = raw["spec"].setdefault("affinity", {})
    affinity["nodeAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [NODE_AFFINITY[which]]
        }
    }
    return msgspec.convert(raw, Pod)


@st.composite
def clusters(draw: st.DrawFn) -> tuple[ClusterState, list[Pod], list[Any]]:
    cluster = draw(random_nodes())
    names = [n.metadata.name for n in cluster]
    bound = [
        draw(random_pod(f"b{i}", draw(st.sampled_from(names))))
        for i in range(draw(st.integers(0, 8)))
    ]
    pending = [
        _with_node_affinity(draw(random_pod(f"q{i}")), draw(st.integers(0, 5)))
        for i in range(draw(st.integers(1, 6)))
    ]
    services: list[Service] = []
    namespaces: list[Namespace] = []
    if draw(st.booleans()):
        svc = {
            "metadata": {"name": "svc", "namespace": "default"},
            "spec": {"selector": {"app": "a"}},
        }
        services.append(msgspec.convert(svc, Service))
    if draw(st.booleans()):
        ns = {"metadata": {"name": "other", "labels": {"team": "x"}}}
        namespaces.append(msgspec.convert(ns, Namespace))
    ops = draw(st.lists(st.sampled_from([0, 0, 1, 2, 3, 4, 5, 5, 5]), max_size=10))
    state = ClusterState(cluster, bound, ObjectStore(services, namespaces=namespaces))
    return state, pending, ops


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(clusters(), st.randoms(use_true_random=False))
def test_vectors_answer_as_the_reference_plugins_through_forks(
    drawn: tuple[ClusterState, list[Pod], list[int]], rnd: Any
) -> None:
    state, pending, ops = drawn
    fast, reference = _pair(state)
    snapshot = fast.snapshot
    _assert_same(fast, reference, pending)
    added = 0
    for op in ops:
        infos = snapshot.node_infos()
        if op == 0:
            snapshot.fork()
        elif op == 1:
            snapshot.revert()
        elif op == 2:
            snapshot.commit()
        elif op == 3 and infos:  # a template copy of a node, as scale-up's estimator adds
            added += 1
            snapshot.add_node(_renamed(rnd.choice(infos).node, f"t{added}"))
        elif op == 4 and len(infos) > 1:  # a node's removal, as scale-down simulates
            snapshot.remove_node(rnd.choice(infos).name)
        else:  # a pending pod placed where it fits, as binpacking does
            p = rnd.choice(pending)
            host = fast.fits_any_node(p)
            if host is not None:
                placed = msgspec.structs.replace(
                    p,
                    metadata=msgspec.structs.replace(
                        p.metadata, name=f"{p.metadata.name}-{op}{added}"
                    ),
                )
                snapshot.add_pod(placed, host)
        _assert_same(fast, reference, pending)


def test_the_vectors_were_exercised() -> None:
    assert EXERCISED["vectors"] > 100


class CrossChecked(PredicateChecker):
    """Answers with the vectors and asserts the reference plugins answer the same."""

    def __init__(
        self,
        snapshot: ClusterSnapshot,
        profile: Profile,
        registry: Registry,
        features: Features = DEFAULT_FEATURES,
    ) -> None:
        super().__init__(snapshot, profile, registry, features)
        self.reference = PredicateChecker(snapshot, profile, registry, features, fast=False)

    def check_predicates(self, pod: Pod, node_name: str) -> PredicateError | None:
        got = super().check_predicates(pod, node_name)
        assert _answer(got) == _answer(self.reference.check_predicates(pod, node_name))
        return got

    def fits_any_node_matching(self, pod: Pod, matches: Any) -> str | None:
        self.reference._last_index = self._last_index
        got = super().fits_any_node_matching(pod, matches)
        assert got == self.reference.fits_any_node_matching(pod, matches)
        assert self._last_index == self.reference._last_index
        EXERCISED["cross-checked"] += 1
        return got


@pytest.mark.parametrize(
    "module",
    [
        "test_ca_autoscaler.py",
        "test_ca_scenario.py",
        "test_ca_scaledown.py",
        "test_ca_estimator.py",
        "test_karpenter_provisioning.py",
        "test_karpenter_topology.py",
        "test_karpenter_consolidation.py",
        "test_autoscaling.py",
    ],
)
def test_the_autoscaler_tests_pass_with_every_answer_cross_checked(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ca_helpers

    monkeypatch.setattr(ca_module, "PredicateChecker", CrossChecked)
    monkeypatch.setattr(karpenter_module, "PredicateChecker", CrossChecked)
    monkeypatch.setattr(ca_helpers, "PredicateChecker", CrossChecked)
    before = EXERCISED["cross-checked"]
    here = Path(__file__).parent
    assert pytest.main(["-q", "-x", "-p", "no:cacheprovider", str(here / module)]) == 0
    assert EXERCISED["cross-checked"] > before


def test_a_reverted_fork_gives_the_room_back_to_the_vectors() -> None:
    node = build_test_node("n0", 1000, 1000 * MIB, pods=2)
    fast, reference = _pair(ClusterState([node]))
    pod = build_test_pod("p", 400, 10 * MIB)
    snapshot = fast.snapshot
    with snapshot.forked():
        for i in range(2):
            snapshot.add_pod(build_test_pod(f"x{i}", 400, 10 * MIB), "n0")
        _assert_same(fast, reference, [pod])
        assert fast.fits_any_node(pod) is None
    _assert_same(fast, reference, [pod])
    assert fast.check_predicates(pod, "n0") is None
    assert fast.vectors is not None and fast.vectors.codes(pod) is not None


_REGISTRATION = """
import sys
import topospread.cli.scheduling, topospread.simulator.run, topospread.render.report
import topospread.plugins.registry, topospread.analysis.verify_scenario
print(sorted(m for m in sys.modules if m.startswith("topospread.autoscaler")))
import topospread.simulator.autoscaling
from topospread.autoscaler.clusterautoscaler import snapshot
print(len(snapshot._FACTORY))
"""


def test_the_simulators_autoscaler_loop_registers_the_vectors_and_schedule_imports_neither() -> (
    None
):
    """In a fresh interpreter (the suite imports every module first: conftest.py): what the
    schedule command imports leaves the autoscaler package out, and the simulator's
    autoscaler controller, which runs the models, registers the fast path with the checker."""
    done = subprocess.run(
        [sys.executable, "-c", _REGISTRATION], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported, registered = done.stdout.split("\n")[:2]
    assert imported == "[]"
    assert registered == "1"
