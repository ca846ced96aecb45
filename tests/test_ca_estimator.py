"""The binpacking estimator and pod equivalence groups, from upstream's table tests.

Upstream: TestBinpackingEstimate (estimator/binpacking_estimator_test.go) and
TestGroupSchedulablePodsForNode (core/scaleup/equivalence/groups_test.go).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
import pytest

from builders import make_node, make_pod
from ca_helpers import MIB, checker_for
from test_ca_expander import pod_with_init_container
from topospread.api.types import Pod
from topospread.api.volumes import ProjectedVolumeSource, Volume
from topospread.autoscaler.clusterautoscaler.estimator import (
    BinpackingEstimator,
    EstimationLimiter,
    build_pod_groups,
    decreasing_pod_order,
    node_limit,
)
from topospread.autoscaler.clusterautoscaler.nodegroup import NodeGroup, template_node_info

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def estimatee(
    count: int,
    cpu: int,
    mem: int,
    *,
    prefix: str = "estimatee",
    host_port: int = 0,
    skew: str = "",
    max_skew: int = 2,
) -> list[Pod]:
    pods = []
    for i in range(count):
        b = make_pod(f"{prefix}-{i}").namespace("universe").label("app", "estimatee")
        if host_port:
            b = b.container(ports=[{"containerPort": 80, "hostPort": host_port}])
        b = b.req(cpu=f"{cpu}m", memory=str(mem))
        if skew:
            b = b.spread_constraint(
                max_skew, skew, selector={"matchLabels": {"app": "estimatee"}}, min_domains=1
            )
        pods.append(b.obj())
    return pods


@dataclass
class Case:
    name: str
    millicores: int
    memory_mib: int
    groups: list[list[Pod]]
    expect_nodes: int
    expect_pods: int
    max_nodes: int = 0
    expect_processed: list[str] | None = None


HIGH = estimatee(10, 500, 1000, prefix="high")

CASES = [
    Case("simple resource-based binpacking", 350 * 3 - 50, 2 * 1000,
         [estimatee(10, 350, 1000)], 5, 10),
    Case("pods-per-node bound binpacking", 10000, 20000, [estimatee(20, 10, 100)], 2, 20),
    Case("hostport conflict forces pod-per-node", 1000, 5000,
         [estimatee(8, 200, 1000, host_port=5555)], 8, 8),
    Case("limiter cuts binpacking", 1000, 5000, [estimatee(20, 500, 1000)], 5, 10, max_nodes=5),
    Case("decreasing ordered pods are processed first", 1000, 5000,
         [estimatee(10, 50, 1000), HIGH], 5, 10, max_nodes=5,
         expect_processed=[p.metadata.name for p in HIGH]),
    # 200m pods, as upstream's table has them since the hostname retry: 20m ones would go
    # to oldnode (100m) once the last new node refuses them by the skew.
    Case("hostname topology spreading with maxSkew=2 forces 2 pods/node", 1000, 5000,
         [estimatee(8, 200, 200, skew=HOSTNAME)], 4, 8),
    Case("zonal topology spreading with maxSkew=2 only allows 2 pods to schedule", 1000, 5000,
         [estimatee(8, 20, 100, skew=ZONE)], 1, 2),
    # The last new node refuses a pod by the skew: it goes to an earlier node with room
    # (oldnode included), so 12 pods need 3 new nodes, not one per pod past the first few.
    Case("hostname topology spreading with maxSkew=1 with a large scaleup handles "
         "scheduling pods retroactively", 1000, 5000,
         [estimatee(12, 20, 100, skew=HOSTNAME, max_skew=1)], 3, 12),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_binpacking_estimate(case: Case) -> None:
    # One node in another zone, so that topology spreading sees two domains (as upstream's).
    old = (
        make_node("oldnode")
        .label(HOSTNAME, "oldnode")
        .label(ZONE, "zone-jupiter")
        .capacity(cpu="100m", memory=str(100 * MIB), pods="10")
        .obj()
    )
    checker = checker_for([old])
    group = NodeGroup(
        "template",
        0,
        1000,
        0,
        labels={ZONE: "zone-mars"},
        capacity={"cpu": f"{case.millicores}m", "memory": str(case.memory_mib * MIB), "pods": "10"},
    )
    estimator = BinpackingEstimator(checker, EstimationLimiter(case.max_nodes))
    estimate = estimator.estimate(case.groups, template_node_info(group), "template")
    assert estimate.node_count == case.expect_nodes
    assert len(estimate.pods) == case.expect_pods
    if case.expect_processed is not None:
        assert [p.metadata.name for p in estimate.pods] == case.expect_processed
    # The estimation runs on a fork: the snapshot is as it was.
    assert [i.name for i in checker.snapshot.node_infos()] == ["oldnode"]
    assert checker.snapshot.get("oldnode").pods == []  # type: ignore[union-attr]


def test_pods_of_one_controller_with_the_same_spec_form_one_group() -> None:
    rs = [make_pod(f"rs-{i}").owner("ReplicaSet", "rs").req(cpu="1").obj() for i in range(3)]
    other = make_pod("rs-odd").owner("ReplicaSet", "rs").req(cpu="2").obj()
    lone = [make_pod(f"lone-{i}").req(cpu="1").obj() for i in range(2)]
    groups = build_pod_groups([*rs, other, *lone])
    assert [[p.metadata.name for p in g.pods] for g in groups] == [
        ["rs-0", "rs-1", "rs-2"],
        ["rs-odd"],
        ["lone-0"],
        ["lone-1"],
    ]


def with_token_volume(pod: Pod, suffix: str) -> Pod:
    """The pod with its own service-account token volume, as the API server adds one."""
    token = Volume(name=f"kube-api-access-{suffix}", projected=ProjectedVolumeSource())
    return msgspec.structs.replace(pod, spec=msgspec.structs.replace(pod.spec, volumes=[token]))


def test_pods_differing_only_in_token_volumes_or_hostnames_are_equivalent() -> None:
    # Upstream: PodSpecSemanticallyEqual drops projected volumes and the hostname; a
    # DaemonSet's pods are each a group of their own (groupPodsBySchedulingProperties).
    rs = [
        with_token_volume(make_pod(f"rs-{i}").owner("ReplicaSet", "rs").req(cpu="1").obj(), s)
        for i, s in enumerate(("abcde", "fghij"))
    ]
    sts = [
        make_pod(f"db-{i}").owner("StatefulSet", "db").spec_field("hostname", f"db-{i}").obj()
        for i in range(2)
    ]
    ds = [make_pod(f"agent-{i}").owner("DaemonSet", "agent").obj() for i in range(2)]
    groups = build_pod_groups([*rs, *sts, *ds])
    assert [[p.metadata.name for p in g.pods] for g in groups] == [
        ["rs-0", "rs-1"],
        ["db-0", "db-1"],
        ["agent-0"],
        ["agent-1"],
    ]


def test_a_controller_has_at_most_ten_equivalence_groups() -> None:
    pods = [
        make_pod(f"p{i}").owner("ReplicaSet", "rs").req(cpu=f"{i + 1}").obj() for i in range(12)
    ]
    pods.append(make_pod("p0-twin").owner("ReplicaSet", "rs").req(cpu="1").obj())
    groups = build_pod_groups(pods)
    assert len(groups) == 12
    assert [p.metadata.name for p in groups[0].pods] == ["p0", "p0-twin"]


@pytest.mark.parametrize(
    ("max_total", "current", "target", "max_size", "want"),
    [
        (0, 10, 2, 5, 3),  # the group's free capacity
        (12, 10, 2, 5, 2),  # max-nodes-total leaves less
        (10, 10, 2, 5, -1),  # max-nodes-total reached
        (0, 10, 5, 5, -1),  # the group is full
    ],
)
def test_node_limit_takes_the_tightest_threshold(
    max_total: int, current: int, target: int, max_size: int, want: int
) -> None:
    group = NodeGroup("ng", 0, max_size, target)
    got = node_limit(
        max_nodes_per_scaleup=1000,
        group=group,
        max_nodes_total=max_total,
        current_node_count=current,
    )
    assert got == want


def test_daemonset_pods_join_the_template_where_they_would_run() -> None:
    from topospread.api.types import DaemonSet

    def ds(name: str, spec: dict[str, object]) -> DaemonSet:
        import msgspec

        return msgspec.convert(
            {
                "metadata": {"name": name, "namespace": "kube-system"},
                "spec": {"template": {"metadata": {"labels": {"ds": name}}, "spec": spec}},
            },
            DaemonSet,
        )

    containers = [{"name": "c", "resources": {"requests": {"cpu": "300m"}}}]
    everywhere = ds("everywhere", {"containers": containers})
    elsewhere = ds("elsewhere", {"containers": containers, "nodeSelector": {"pool": "other"}})
    intolerant = ds("intolerant", {"containers": containers})
    tolerant = ds("tolerant", {"containers": containers, "tolerations": [{"operator": "Exists"}]})
    from topospread.api.types import Taint

    plain = NodeGroup("ng", 0, 10, 0, labels={"pool": "web"}, capacity={"cpu": "1", "pods": "10"})
    info = template_node_info(plain, [everywhere, elsewhere])
    assert [p.metadata.name for p in info.pods] == [f"everywhere-{info.name}"]
    assert all(p.spec.node_name == info.name for p in info.pods)
    tainted = NodeGroup(
        "gpu", 0, 10, 0, taints=[Taint(key="gpu", effect="NoSchedule")], capacity={"cpu": "1"}
    )
    pods_on_gpu = template_node_info(tainted, [intolerant, tolerant]).pods
    names = [p.metadata.owner_references[0].name for p in pods_on_gpu]
    assert names == ["tolerant"]
    # The DaemonSet's 300m leaves 700m per new node: three 300m pods need two nodes, not one.
    checker = checker_for([])
    pods = [make_pod(f"p{i}").req(cpu="300m").obj() for i in range(3)]
    est = BinpackingEstimator(checker, EstimationLimiter()).estimate([pods], info, "ng")
    assert est.node_count == 2


def test_the_snapshot_forks_nest_and_commit_into_the_enclosing_fork() -> None:
    node = make_node("n").capacity(cpu="1").obj()
    checker = checker_for([node])
    snap = checker.snapshot
    snap.fork()
    snap.add_pod(make_pod("a").node("n").obj(), "n")
    snap.fork()
    snap.add_pod(make_pod("b").node("n").obj(), "n")
    snap.commit()  # b joins the outer fork
    snap.fork()
    snap.add_node(make_node("m").obj())
    snap.revert()  # m goes
    assert [p.metadata.name for p in snap.get("n").pods] == ["a", "b"]  # type: ignore[union-attr]
    assert snap.get("m") is None
    snap.revert()
    assert snap.get("n").pods == []  # type: ignore[union-attr]


def test_template_nodes_drop_transient_taints_and_keep_the_groups_own() -> None:
    from topospread.api.types import Taint

    taints = [
        Taint(key="dedicated", value="web", effect="NoSchedule"),
        Taint(key="node.kubernetes.io/not-ready", effect="NoSchedule"),
        Taint(key="ToBeDeletedByClusterAutoscaler", effect="NoSchedule"),
        Taint(key="startup-taint.cluster-autoscaler.kubernetes.io/cni", effect="NoSchedule"),
        Taint(key="node.cloudprovider.kubernetes.io/uninitialized", effect="NoSchedule"),
    ]
    group = NodeGroup("ng", 0, 10, 0, taints=taints, capacity={"cpu": "1"}, zones=["z1", "z2"])
    info = template_node_info(group)
    assert [t.key for t in info.node.spec.taints] == ["dedicated"]
    assert info.name.startswith("template-node-for-ng-")
    labels = info.node.metadata.labels
    assert labels[ZONE] == "z1"  # a multi-zone group's template carries its first zone
    assert labels[HOSTNAME] == info.name


def test_the_decreasing_order_weighs_a_pods_init_container_as_the_api_does() -> None:
    # Upstream: DecreasingPodOrderer.calculatePodScore reads podutils.PodRequests: "late"
    # runs a 300m container after a 900m init container, so it asks for 900m and goes before
    # "wide" (500m); by its containers alone it would go after.
    late = pod_with_init_container("late", init_cpu="900m", cpu="300m", overhead="0")
    wide = make_pod("wide").req(cpu="500m").obj()
    group = NodeGroup("ng", 0, 10, 0, capacity={"cpu": "2", "memory": "4Gi", "pods": "10"})
    template = template_node_info(group)
    assert decreasing_pod_order([[wide], [late]], template) == [[late], [wide]]


def spread_pods(count: int, prefix: str, node: str = "") -> list[Pod]:
    """1-cpu pods spread by hostname (maxSkew 1, DoNotSchedule) over app=spread."""
    out = []
    for i in range(count):
        b = make_pod(f"{prefix}-{i}").label("app", "spread").req(cpu="1", memory=str(MIB))
        b = b.spread_constraint(1, HOSTNAME, selector={"matchLabels": {"app": "spread"}})
        if node:
            b = b.node(node)
        out.append(b.obj())
    return out


def test_a_pod_the_last_new_node_refuses_by_hostname_spread_goes_to_another_node() -> None:
    # Upstream: tryToScheduleOnNewNodes retries a pod that breaks a hostname spread on the
    # last new node on every other node (isPodUsingHostNameTopologyKey,
    # hasTopologyConstraintError), an existing node too, and counts that node among the
    # estimate's. "room" has 1 matching pod and 3 cpus free. e-0 takes two pods (1/2, then
    # 2/2 with room at 1); the third breaks the skew there (3 - 1) and goes to room (2); the
    # fourth to e-0 (3 - 2), the fifth to room again: 2 nodes. Without the retry the third
    # would open e-1 and the fifth e-2: 3 nodes.
    room = make_node("room").label(HOSTNAME, "room").capacity(cpu="4", memory="4Gi").obj()
    checker = checker_for([room], spread_pods(1, "placed", node="room"))
    group = NodeGroup("ng", 0, 10, 0, capacity={"cpu": "4", "memory": "4Gi", "pods": "10"})
    estimator = BinpackingEstimator(checker, EstimationLimiter(0))
    estimate = estimator.estimate([spread_pods(5, "p")], template_node_info(group), "ng")
    assert estimate.node_count == 2 and len(estimate.pods) == 5
    assert estimate.nodes_with_pods == ["ng-e-0", "room"]
