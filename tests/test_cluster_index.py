"""The cluster index keeps, through any churn, the counts one walk over the pods gives."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_fastpath import HOST, SELECTORS, ZONE, nodes, pod
from topospread.api.types import LabelSelector, Node, Pod, Taint
from topospread.cluster.index import spread_counts
from topospread.cluster.state import ClusterState
from topospread.labels.selector import Selector, label_selector_as_selector


def compiled(raw: dict[str, object]) -> Selector:
    return label_selector_as_selector(msgspec.convert(raw, LabelSelector))


def selectors() -> list[Selector]:
    return [compiled(s) for s in SELECTORS]


def walked_domain_counts(
    cluster: ClusterState, namespace: str, selector: Selector, key: str
) -> dict[str, int]:
    """Every domain of ``key`` with the pods a spread constraint counts in it, by one walk."""
    out: dict[str, int] = {}
    for info in cluster.list():
        value = info.node.metadata.labels.get(key)
        if value is None:
            continue
        n = sum(1 for p in info.pods if spread_counts(p, namespace, selector))
        out[value] = out.get(value, 0) + n
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes(), st.data())
def test_domain_counts_equal_a_walk_over_the_pods_after_any_churn(
    first: list[Node], data: st.DataObject
) -> None:
    cluster = ClusterState(first)
    index = cluster.index()
    asked = [(ns, sel, key) for ns in ("default", "other") for sel in selectors()
             for key in (ZONE, HOST)]  # fmt: skip
    spare = [
        msgspec.structs.replace(n, metadata=msgspec.structs.replace(n.metadata, name=f"x{i}"))
        for i, n in enumerate(data.draw(nodes()))
    ]
    for step in range(data.draw(st.integers(1, 15))):
        names = [info.name for info in cluster.list()]
        op = data.draw(st.sampled_from(["add", "remove", "relabel", "bind", "unbind", "ask"]))
        if op == "add" and spare:
            cluster.add_node(spare.pop())
        elif op == "remove" and len(names) > 1:
            cluster.remove_node(data.draw(st.sampled_from(names)))
        elif op == "relabel" and names:
            node = cluster.infos[data.draw(st.sampled_from(names))].node
            zone = data.draw(st.sampled_from(["z0", "z1", "z9"]))
            labels = {HOST: node.metadata.name, ZONE: zone}
            meta = msgspec.structs.replace(node.metadata, labels=labels)
            cluster.update_node(msgspec.structs.replace(node, metadata=meta))
        elif op == "bind" and names:
            name = data.draw(st.sampled_from(names))
            cluster.bind(data.draw(pod(f"p{step}", name)), name)
        elif op == "unbind" and cluster.pods():
            cluster.unbind(data.draw(st.sampled_from(cluster.pods())))
        elif op == "ask":
            ns, sel, key = data.draw(st.sampled_from(asked))
            assert index.domain_counts(ns, sel, key) == walked_domain_counts(cluster, ns, sel, key)
    assert cluster.index() is index  # one index per cluster state, kept current
    for ns, sel, key in asked:
        assert index.domain_counts(ns, sel, key) == walked_domain_counts(cluster, ns, sel, key)
        per_node = index.matching_of(ns, sel).per_node.tolist()
        assert per_node == [
            sum(1 for p in info.pods if spread_counts(p, ns, sel)) for info in cluster.list()
        ]
    # Per term: the pods a predicate selects, per node, kept since first asked.
    counts = index.affinity.counts_of("app a", _is_app_a)
    assert counts.tolist() == [sum(map(_is_app_a, info.pods)) for info in cluster.list()]


def _is_app_a(p: Pod) -> bool:
    return p.metadata.labels.get("app") == "a"


def test_domain_counts_honour_the_eligible_rows() -> None:
    first = [
        msgspec.convert({"metadata": {"name": f"n{i}", "labels": {ZONE: f"z{i % 2}"}}}, type=Node)
        for i in range(4)
    ]
    cluster = ClusterState(first)
    for i in range(4):
        meta = {"name": f"a{i}", "namespace": "default", "labels": {"app": "a"}}
        cluster.bind(msgspec.convert({"metadata": meta, "spec": {}}, type=Pod), f"n{i}")
    selector = compiled({"matchLabels": {"app": "a"}})
    index = cluster.index()
    rows = [name in ("n0", "n1", "n2") for name in index.names]
    assert index.domain_counts("default", selector, ZONE) == {"z0": 2, "z1": 2}
    assert index.domain_counts("default", selector, ZONE, rows) == {"z0": 2, "z1": 1}
    assert index.domain_counts("other", selector, ZONE) == {"z0": 0, "z1": 0}
    only_n3 = [name == "n3" for name in index.names]
    assert index.domain_counts("default", selector, ZONE, only_n3) == {"z1": 1}


def _untainted_domains(keys: tuple[str, ...]) -> Callable[[Node], tuple[str | None, ...]]:
    """A shape's reader: a node's domain under each key, None where it is tainted (as
    nodeTaintsPolicy Honor leaves a node out for a pod tolerating nothing)."""

    def read(node: Node) -> tuple[str | None, ...]:
        if node.spec.taints:
            return (None,) * len(keys)
        return tuple(node.metadata.labels.get(k) for k in keys)

    return read


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes(), st.data())
def test_eligible_domain_counts_follow_taints_updated_in_place_and_any_churn(
    first: list[Node], data: st.DataObject
) -> None:
    """A shape's eligibility, kept across asks, read again for the nodes updated in place
    (a taint, labels unchanged), and its counts, against a walk over every node and pod."""
    cluster = ClusterState(first)
    index = cluster.index()
    keys = (ZONE, HOST)
    read = _untainted_domains(keys)
    sel = selectors()

    def walked(namespace: str, selector: Selector) -> list[dict[str, int]]:
        out: list[dict[str, int]] = [{} for _ in keys]
        for info in cluster.list():
            for j, value in enumerate(read(info.node)):
                if value is not None:
                    n = sum(1 for p in info.pods if spread_counts(p, namespace, selector))
                    out[j][value] = out[j].get(value, 0) + n
        return out

    for step in range(data.draw(st.integers(1, 20))):
        names = [info.name for info in cluster.list()]
        op = data.draw(st.sampled_from(["taint", "untaint", "remove", "bind", "unbind", "ask"]))
        if op in ("taint", "untaint") and names:
            node = cluster.infos[data.draw(st.sampled_from(names))].node
            taints = [Taint(key="k", value="v", effect="NoSchedule")] if op == "taint" else []
            spec = msgspec.structs.replace(node.spec, taints=taints)
            cluster.update_node(msgspec.structs.replace(node, spec=spec))
        elif op == "remove" and len(names) > 1:
            cluster.remove_node(data.draw(st.sampled_from(names)))
        elif op == "bind" and names:
            name = data.draw(st.sampled_from(names))
            cluster.bind(data.draw(pod(f"p{step}", name)), name)
        elif op == "unbind" and cluster.pods():
            cluster.unbind(data.draw(st.sampled_from(cluster.pods())))
        else:
            ns = data.draw(st.sampled_from(["default", "other"]))
            s = data.draw(st.sampled_from(sel))
            asked = index.eligible_domain_counts(
                ("shape", ns, id(s)), ns, [(s, k) for k in keys], read
            )
            assert asked == walked(ns, s)
    for ns in ("default", "other"):
        for s in sel:
            asked = index.eligible_domain_counts(
                ("shape", ns, id(s)), ns, [(s, k) for k in keys], read
            )
            assert asked == walked(ns, s)


def test_a_state_built_with_its_pods_is_the_state_they_are_bound_to_one_by_one() -> None:
    """ClusterState(nodes, pods) binds the pods in bulk: each node's pods in order, the nodes
    holding pods with pod (anti)affinity, and an unknown node's KeyError, as ``bind`` gives."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}
            ]
        }
    }

    def bound(name: str, node: str, affinity: dict[str, object] | None) -> Pod:
        spec: dict[str, object] = {"nodeName": node}
        if affinity is not None:
            spec["affinity"] = affinity
        return msgspec.convert({"metadata": {"name": name}, "spec": spec}, Pod)

    node_list = [msgspec.convert({"metadata": {"name": f"n{i}"}}, Node) for i in range(4)]
    affinities = [None, anti, {"nodeAffinity": {}}, {"podAffinity": {}}]
    pods = [bound(f"p{i}", f"n{i * 7 % 3}", affinities[i % 4]) for i in range(12)]
    bulk = ClusterState(node_list, pods)
    one_by_one = ClusterState(node_list)
    for p in pods:
        one_by_one.bind(p, p.spec.node_name)
    assert [[p.metadata.name for p in i.pods] for i in bulk.list()] == [
        [p.metadata.name for p in i.pods] for i in one_by_one.list()
    ]
    assert [i.name for i in bulk.have_pods_with_affinity_list()] == [
        i.name for i in one_by_one.have_pods_with_affinity_list()
    ]
    assert bulk._affinity_pods == one_by_one._affinity_pods
    with pytest.raises(KeyError, match="n9"):
        ClusterState(node_list, [bound("lost", "n9", None)])
