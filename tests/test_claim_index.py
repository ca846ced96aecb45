"""The fast path's claims of ReplicaSets' pods (simulator/controllers/claim_index.py), kept from
sync to sync and brought up to date from the pod store's journal, against the reference's
claims made afresh (replicaset.py's ``PodClaims``): whole timelines replayed with the index and
without it, and the index alone under every change that could leave it stale."""

from __future__ import annotations

import itertools
import pickle
import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_simulation import budget, job, replica_set, statefulset
from test_timeline import daemon_set, deployment, zones
from topospread.analysis.simulate import simulate
from topospread.api.types import (
    LabelSelector,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodCondition,
    PodSpec,
    PodStatus,
    ReplicaSet,
    ReplicaSetSpec,
)
from topospread.labels.selector import label_selector_as_selector
from topospread.simulator.controller_manager import ControllerManager
from topospread.simulator.controllers.claim_index import ClaimIndex
from topospread.simulator.controllers.replicaset import PodClaims
from topospread.simulator.simulation import Simulation
from topospread.simulator.stores import PodStore
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.actions import apply_step

# ---------------------------------------------------------------------------------------------
# Whole timelines


def strategy(surge: Any, unavailable: Any) -> dict[str, Any]:
    rolling = {"maxSurge": surge, "maxUnavailable": unavailable}
    return {"type": "RollingUpdate", "rollingUpdate": rolling}


def orphan(name: str, app: str) -> dict[str, Any]:
    """A bare pod carrying a workload's labels: its ReplicaSet adopts it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }


def bare_replica_set(app: str, replicas: int) -> dict[str, Any]:
    """The bare ReplicaSet, selecting ``app``: applied again with another app, it releases
    its pods and adopts others."""
    rs = replica_set()
    rs["spec"]["replicas"] = replicas
    rs["spec"]["selector"] = {"matchLabels": {"app": app}}
    rs["spec"]["template"]["metadata"]["labels"] = {"app": app}
    return rs


def claims_timeline(seed: int) -> dict[str, Any]:
    """Deployments rolled and scaled (maxSurge, maxUnavailable, Recreate), a bare ReplicaSet
    whose selector changes and that is deleted and made again, orphans adopted, nodes and
    zones lost (evictions), a StatefulSet with claims, a Job, a DaemonSet."""
    rng = random.Random(seed)
    web = deployment(rng.randint(3, 8), match_label_keys=rng.random() < 0.5)
    web["spec"]["strategy"] = strategy(rng.choice([0, 1, "50%"]), rng.choice([1, 2, "25%"]))
    api = deployment(4, name="api")
    api["spec"]["strategy"] = {"type": "Recreate"}
    db = statefulset(rng.randint(2, 4))
    claim = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    db["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": claim}]
    storage_class = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": "std",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    objects = [storage_class, web, api, db, daemon_set(), job(), replica_set(), budget()]
    nodes = [f"pool-{z}-{i}" for z in "abc" for i in (1, 2)]
    steps: list[dict[str, Any]] = []
    bare, bare_app = 2, "bare"  # the bare ReplicaSet's replicas and selector
    for i in range(10):
        kind = rng.choice(
            ["scale", "scale-api", "rollout", "rollout-api", "orphan", "relabel-rs", "delete-rs",
             "loseZone", "loseNode", "wait", "drain", "scale-sts"]
        )  # fmt: skip
        node = rng.choice(nodes)
        if kind == "scale":
            steps.append({"scale": {"workload": "deployment/web", "replicas": rng.randint(0, 10)}})
        elif kind == "scale-api":
            steps.append({"scale": {"workload": "deployment/api", "replicas": rng.randint(1, 6)}})
        elif kind in ("rollout", "rollout-api"):
            name = "web" if kind == "rollout" else "api"
            patch = {"spec": {"containers": [{"name": "c", "image": f"nginx:{i + 2}"}]}}
            steps.append({"rollout": {"workload": f"deployment/{name}", "patch": patch}})
        elif kind == "orphan":
            # Not adopted by web's ReplicaSets (their selectors add pod-template-hash).
            app = rng.choice(["web", "bare", "bare", "other", "agent", "db"])
            # The StatefulSet claims only pods named after it: db-<ordinal>, past its replicas.
            name = f"db-{i + 5}" if app == "db" else f"stray-{i}"
            # bare scaled up by one at once: an orphan it adopts is not the surplus deleted.
            bare += 1
            steps.append({"apply": [orphan(name, app), bare_replica_set(bare_app, bare)]})
        elif kind == "relabel-rs":
            bare, bare_app = 3, rng.choice(["bare", "other"])
            steps.append({"apply": bare_replica_set(bare_app, bare)})
        elif kind == "delete-rs":
            bare, bare_app = 2, "bare"
            steps += [{"deleteWorkload": "rs/bare"}, {"apply": bare_replica_set("bare", bare)}]
        elif kind == "loseZone":
            zone = rng.choice("abc")
            steps += [{"loseZone": zone}, {"wait": "6m"}, {"restoreZone": zone}]
        elif kind == "loseNode":
            steps += [{"loseNode": node}, {"wait": "301s"}, {"restoreNode": node}]
        elif kind == "wait":
            steps.append({"wait": f"{rng.randint(1, 400)}s"})
        elif kind == "drain":
            steps += [{"drain": node}, {"uncordon": node}]
        else:
            steps.append({"scale": {"workload": "sts/db", "replicas": rng.randint(0, 5)}})
    return {"nodeGroups": zones(), "objects": objects, "timeline": steps}


def replay_pods(doc: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Every pod's name, node, phase, labels and owners after the initial settle and after
    each step, and the claims."""
    scenario = parse_timeline(doc, "t.yaml")
    sim = Simulation(scenario, seed=seed)
    sim.settle("t.yaml")
    out = [pods_of(sim)]
    for step in scenario.steps:
        apply_step(sim, step)
        sim.settle(step.where)
        out.append(pods_of(sim))
    return out


def pods_of(sim: Simulation) -> dict[str, Any]:
    return {
        "pods": {
            k: (
                p.spec.node_name,
                p.status.phase,
                sorted(p.metadata.labels.items()),
                [(r.kind, r.name, r.uid) for r in p.metadata.owner_references],
            )
            for k, p in sorted(sim.pods.items())
        },
        "claims": sorted(sim.cluster.storage_state.pvcs),
    }


def without_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path with the reference's claims, from the namespace's pods: every other
    shortcut stays on."""
    original = ControllerManager.__init__

    def init(self: ControllerManager, *, fast: bool) -> None:
        original(self, fast=fast)
        self._claim_index = None
        self._claimable_only = False

    monkeypatch.setattr(ControllerManager, "__init__", init)


@pytest.mark.parametrize("seed", range(10))
def test_timelines_replay_alike_with_the_kept_claims_and_with_claims_made_afresh(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = claims_timeline(seed)
    kept = replay_pods(doc, seed)
    report = simulate(parse_timeline(doc, "t.yaml"), seed=seed).to_json()
    with monkeypatch.context() as m:
        without_index(m)
        assert replay_pods(doc, seed) == kept
        assert simulate(parse_timeline(doc, "t.yaml"), seed=seed).to_json() == report
    reference = simulate(parse_timeline(doc, "t.yaml"), seed=seed, fast=False).to_json()
    assert reference == report
    # The timeline did what it is for: pods were made and deleted, some adopted.
    assert len({k for state in kept for k in state["pods"]}) > len(kept[-1]["pods"])


def test_the_timelines_adopt_release_and_evict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The equivalence above is worth something: across its seeds, orphans are adopted, a
    relabelled ReplicaSet releases pods, and evicted pods are replaced."""
    adopted = released = False
    for seed in range(10):
        states = replay_pods(claims_timeline(seed), seed)
        for before, after in itertools.pairwise(states):
            for key, (_, _, _, owners) in after["pods"].items():
                adopted |= key.startswith("default/stray") and bool(owners)
                old = before["pods"].get(key)
                released |= old is not None and bool(old[3]) and not owners
    assert adopted and released


def relabel_and_remake(index: bool, monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """web settled; one of its pods relabelled out of its selector (released, replaced), one
    deleted and made again under its name as an orphan (adopted), bare's ReplicaSet deleted
    and made again; the pods after each settle."""
    if not index:
        without_index(monkeypatch)
    doc = {"nodeGroups": zones(), "objects": [deployment(4), replica_set()]}
    sim = Simulation(parse_timeline(doc, "t.yaml"), seed=3)
    assert (sim._claim_index is not None) == index
    sim.settle("t")
    out = [pods_of(sim)]
    web = sorted(k for k in sim.pods if k.startswith("default/web-"))
    first, second = sim.pods[web[0]], sim.pods[web[1]]
    labels = {**first.metadata.labels, "app": "gone"}
    sim.update_pod(
        msgspec.structs.replace(
            first, metadata=msgspec.structs.replace(first.metadata, labels=labels)
        )
    )
    sim.settle("t")
    out.append(pods_of(sim))
    sim.delete_pod(second)
    meta = msgspec.structs.replace(second.metadata, owner_references=[], uid="")
    sim.create_pod(msgspec.structs.replace(second, metadata=meta, status=PodStatus()), "t")
    sim.settle("t")
    out.append(pods_of(sim))
    for step in parse_timeline(
        {"timeline": [{"deleteWorkload": "rs/bare"}, {"apply": replica_set()}]}, "t"
    ).steps:
        apply_step(sim, step)
        sim.settle("t")
        out.append(pods_of(sim))
    return out


def test_a_released_pod_and_a_pod_made_again_replay_alike_with_and_without_the_index(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = relabel_and_remake(True, monkeypatch)
    (released,) = [k for k, p in kept[1]["pods"].items() if ("app", "gone") in p[2]]
    assert kept[1]["pods"][released][3] == []  # released: no owner
    assert len(kept[1]["pods"]) == len(kept[0]["pods"]) + 1  # and replaced
    assert kept == relabel_and_remake(False, monkeypatch)


# ---------------------------------------------------------------------------------------------
# The index alone, against claims made afresh


SELECTORS = {
    "app=a": LabelSelector(match_labels={"app": "a"}),
    "app=b": LabelSelector(match_labels={"app": "b"}),
}


def make_rs(selector: str = "app=a", uid: str = "uid-1", deleting: bool = False) -> ReplicaSet:
    return ReplicaSet(
        metadata=ObjectMeta(
            name="rs",
            namespace="default",
            uid=uid,
            deletion_timestamp="2025-01-01T00:00:00Z" if deleting else None,
        ),
        spec=ReplicaSetSpec(replicas=3, selector=SELECTORS[selector]),
    )


def make_pod(
    name: str,
    app: str = "a",
    owner_uid: str | None = "uid-1",
    *,
    ready: bool = True,
    phase: str = "",
    namespace: str = "default",
) -> Pod:
    refs = []
    if owner_uid is not None:
        refs = [OwnerReference(kind="ReplicaSet", name="rs", uid=owner_uid, controller=True)]
    condition = PodCondition(type="Ready", status="True" if ready else "False")
    return Pod(
        metadata=ObjectMeta(
            name=name, namespace=namespace, labels={"app": app}, owner_references=refs
        ),
        spec=PodSpec(node_name="n1"),
        status=PodStatus(phase=phase, conditions=[condition]),
    )


def assert_claims_as_made_afresh(index: ClaimIndex, store: PodStore, rs: ReplicaSet) -> None:
    selector = label_selector_as_selector(rs.spec.selector)
    fresh = PodClaims(list(store.values()))
    kept = index.claims(store)
    assert kept.claim(rs, selector) == fresh.claim(rs, selector)
    assert kept.status(rs, selector, None) == fresh.status(rs, selector, None)


def test_a_pod_relabelled_out_of_the_selector_is_released_not_kept() -> None:
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    for name in ("p1", "p2", "p3"):
        store[f"default/{name}"] = make_pod(name)
    selector = label_selector_as_selector(rs.spec.selector)
    assert len(index.claims(store).claim(rs, selector).owned) == 3
    store["default/p2"] = make_pod("p2", app="b")
    claimed = index.claims(store).claim(rs, selector)
    assert [p.metadata.name for p in claimed.owned] == ["p1", "p3"]
    assert [(p.metadata.name, p.metadata.owner_references) for p in claimed.updated] == [("p2", [])]
    assert_claims_as_made_afresh(index, store, rs)


def test_an_orphan_is_adopted_and_a_pod_made_again_under_its_name_is_read_again() -> None:
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    store["default/p1"] = make_pod("p1")
    store["default/p2"] = make_pod("p2", owner_uid=None)
    selector = label_selector_as_selector(rs.spec.selector)
    claimed = index.claims(store).claim(rs, selector)
    assert [p.metadata.name for p in claimed.updated] == ["p2"]
    assert claimed.updated[0].metadata.owner_references[0].uid == "uid-1"
    assert index.claims(store).status(rs, selector, None) == (2, 2)
    # Deleted and made again, not ready, under the same name: read again, not kept.
    del store["default/p1"]
    store["default/p1"] = make_pod("p1", ready=False)
    assert index.claims(store).status(rs, selector, None) == (2, 1)
    # Finished: no longer active, no longer claimed.
    store["default/p1"] = make_pod("p1", phase="Succeeded")
    assert index.claims(store).status(rs, selector, None) == (1, 1)
    assert_claims_as_made_afresh(index, store, rs)


def test_an_owner_made_again_or_being_deleted_claims_afresh() -> None:
    store, index = PodStore(), ClaimIndex()
    store["default/p1"] = make_pod("p1")
    store["default/p2"] = make_pod("p2", owner_uid=None)
    first = make_rs()
    selector = label_selector_as_selector(first.spec.selector)
    assert len(index.claims(store).claim(first, selector).owned) == 2
    # Made again with another UID: p1 is another owner's, p2 still an orphan to adopt.
    again = make_rs(uid="uid-2")
    claimed = index.claims(store).claim(again, selector)
    assert [p.metadata.name for p in claimed.owned] == ["p2"]
    assert_claims_as_made_afresh(index, store, again)
    # Being deleted: it neither adopts nor releases.
    deleting = make_rs(deleting=True)
    assert index.claims(store).claim(deleting, selector).updated == []
    assert_claims_as_made_afresh(index, store, deleting)
    # Its selector changed (another object): p1 is released.
    other = make_rs(selector="app=b")
    assert_claims_as_made_afresh(index, store, other)


def test_a_claim_given_out_is_not_changed_by_later_changes() -> None:
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    store["default/p1"] = make_pod("p1")
    selector = label_selector_as_selector(rs.spec.selector)
    first = index.claims(store).claim(rs, selector)
    store["default/p2"] = make_pod("p2")
    assert [p.metadata.name for p in first.owned] == ["p1"]
    assert len(index.claims(store).claim(rs, selector).owned) == 2


def test_a_journal_that_no_longer_reaches_back_makes_the_claim_afresh() -> None:
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    store["default/p1"] = make_pod("p1")
    selector = label_selector_as_selector(rs.spec.selector)
    index.claims(store).claim(rs, selector)
    position = store.journal_position()
    for i in range(5000):  # past the journal's slack: its older half is dropped
        store["other/q"] = make_pod("q", namespace="other", ready=i % 2 == 0)
    store["default/p2"] = make_pod("p2")
    assert store.changed_since(position) is None
    assert len(index.claims(store).claim(rs, selector).owned) == 2
    assert_claims_as_made_afresh(index, store, rs)


def test_a_restored_snapshot_claims_as_the_original() -> None:
    """A snapshot carries no journal: a claim kept behind its end is made afresh."""
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    store["default/p1"] = make_pod("p1")
    selector = label_selector_as_selector(rs.spec.selector)
    index.claims(store).claim(rs, selector)
    store["default/p2"] = make_pod("p2", owner_uid=None)
    store2, index2, rs2 = pickle.loads(pickle.dumps((store, index, rs)))
    assert store2.changed_since(0) is None
    assert store2.changed_since(store2.journal_position()) == []
    selector2 = label_selector_as_selector(rs2.spec.selector)
    store2["default/p3"] = make_pod("p3")
    assert len(index2.claims(store2).claim(rs2, selector2).owned) == 3
    assert_claims_as_made_afresh(index2, store2, rs2)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "put", "delete", "owner"]),
        st.integers(0, 7),  # which pod
        st.sampled_from(["a", "b"]),  # its app label, or the owner's selector
        st.sampled_from([None, "uid-1", "uid-2"]),  # its controller, or the owner's UID
        st.booleans(),  # ready; or the owner being deleted
        st.sampled_from(["", "Running", "Failed"]),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(OPS)
def test_kept_claims_equal_claims_made_afresh_after_any_changes(ops: list[Any]) -> None:
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    for op, i, app, uid, flag, phase in ops:
        key = f"default/p{i}"
        if op == "put":
            store[key] = make_pod(f"p{i}", app, uid, ready=flag, phase=phase)
        elif op == "delete":
            store.pop(key, None)
        else:
            rs = make_rs(f"app={app}", uid or "uid-1", deleting=flag and phase == "Failed")
        assert_claims_as_made_afresh(index, store, rs)


def test_scaling_keeps_the_claim_the_selector_being_the_same_object() -> None:
    store, index, rs = PodStore(), ClaimIndex(), make_rs()
    store["default/p1"] = make_pod("p1")
    selector = label_selector_as_selector(rs.spec.selector)
    first = index.claims(store).claim(rs, selector)
    scaled = msgspec.structs.replace(rs, spec=msgspec.structs.replace(rs.spec, replicas=9))
    assert index.claims(store).claim(scaled, selector) is first
