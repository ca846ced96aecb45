"""The reasons Karpenter gives for a pod it cannot place, byte for byte upstream's:
InstanceTypeFilterError (scheduling/nodeclaim.go), the scheduler's NodePool errors
(scheduler.go), Requirements.String and Compatible (pkg/scheduling)."""

from __future__ import annotations

import msgspec
import pytest

from builders import make_node, make_pod
from karpenter_helpers import TEST_ZONES, Env, nodepool
from topospread.api.types import LABEL_ARCH_STABLE, LABEL_TOPOLOGY_ZONE, DaemonSet, Pod
from topospread.autoscaler.karpenter import Karpenter, NodePool, builtin_catalogue
from topospread.autoscaler.karpenter.requirements import Requirement, Requirements
from topospread.cluster.state import ClusterState

POOL = "karpenter.sh/nodepool In [default]"


def _error(*pools: NodePool, pod: Pod) -> str:
    env = Env(*pools)
    result = env.provision(pod)
    assert result.launched == []
    [why] = result.pod_errors.values()
    return why


def test_no_instance_type_has_enough_resources() -> None:
    assert _error(nodepool(), pod=make_pod("p").req(cpu="64").obj()) == (
        f"no instance type has enough resources, requirements={POOL}, "
        'resources={"cpu":"64","pods":"1"}'
    )


def test_a_cpu_request_in_millions_is_called_a_typo() -> None:
    assert _error(nodepool(), pod=make_pod("p").req(cpu="2M").obj()).endswith(
        '"cpu":"2M","pods":"1"} (CPU request >= 1 Million, m vs M typo?)'
    )


def test_no_instance_type_met_all_requirements() -> None:
    pod = make_pod("p").req(cpu="1").node_selector(LABEL_ARCH_STABLE, "s390x").obj()
    assert _error(nodepool(), pod=pod) == (
        "no instance type met all requirements, requirements="
        f'{POOL}, kubernetes.io/arch In [s390x], resources={{"cpu":"1","pods":"1"}}'
    )


def test_the_daemon_overhead_is_part_of_the_resources() -> None:
    ds = msgspec.convert(
        {
            "metadata": {"name": "agent", "namespace": "kube-system"},
            "spec": {
                "template": {
                    "spec": {
                        "nodeSelector": {LABEL_ARCH_STABLE: "arm64"},
                        "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
                    }
                }
            },
        },
        DaemonSet,
    )
    karpenter = Karpenter([nodepool()], builtin_catalogue(TEST_ZONES), daemonsets=[ds])
    result = karpenter.run_once(0.0, ClusterState([], []), [make_pod("p").req(cpu="9").obj()])
    assert result.pod_errors == {
        "default/p": "no instance type has enough resources, "
        f'requirements={POOL}, resources={{"cpu":"10","pods":"2"}}'
    }


def test_a_nodepool_whose_requirements_leave_no_instance_type_is_skipped() -> None:
    pool = nodepool(requirements=[{"key": LABEL_TOPOLOGY_ZONE, "operator": "In", "values": ["x"]}])
    assert _error(pool, pod=make_pod("p").req(cpu="1").obj()) == (
        "nodepool requirements filtered out all available instance types"
    )


def test_the_errors_of_every_nodepool_are_joined() -> None:
    limited = nodepool("limited", limits={"cpu": "1"}, weight=10)
    tainted = nodepool("tainted", taints=[{"key": "a", "effect": "NoSchedule"}])
    why = _error(limited, tainted, pod=make_pod("p").req(cpu="1").obj())
    assert why.startswith("all available instance types exceed limits for nodepool; ")


def test_without_nodepools_nothing_is_scheduled_even_onto_existing_nodes() -> None:
    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    karpenter = Karpenter([], builtin_catalogue(TEST_ZONES))
    result = karpenter.run_once(0.0, ClusterState([node], []), [make_pod("p").req(cpu="1").obj()])
    assert result.scheduled_on_existing == {}
    assert result.pod_errors == {"default/p": "no dynamic nodepools found"}


@pytest.mark.parametrize(
    ("requirement", "text"),
    [
        (Requirement.new("k", "Gt", ["4"]), "k Exists >=5"),
        (Requirement.new("k", "Lt", ["4"]), "k Exists <=3"),
        (Requirement.new("k", "In", list("abcdefg")), "k In [a b c d e and 2 others]"),
        (Requirement.new("k", "NotIn", ["b", "a"]), "k NotIn [a b]"),
        (Requirement.new("k", "DoesNotExist"), "k DoesNotExist"),
    ],
    ids=["gt", "lt", "many", "notin", "doesnotexist"],
)
def test_requirement_text(requirement: Requirement, text: str) -> None:
    assert str(requirement) == text


def test_requirements_text_leaves_the_hostname_out() -> None:
    reqs = Requirements(
        [
            Requirement.new("kubernetes.io/hostname", "In", ["h"]),
            Requirement.new("b", "In", ["x"]),
            Requirement.new("a", "Exists"),
        ]
    )
    assert str(reqs) == "a Exists, b In [x]"


def test_an_undefined_label_gets_a_typo_hint() -> None:
    pool = Requirements([Requirement.new("team", "In", ["a"])])
    pod = Requirements([Requirement.new("zone", "In", ["z"])])
    assert pool.compatible(pod) == (
        'label "zone" does not have known values (typo of "topology.kubernetes.io/zone"?)'
    )


def test_absence_on_both_sides_is_compatible() -> None:
    # Upstream Intersects: no common value is fine when both ask for absence.
    have = Requirements([Requirement.new("k", "DoesNotExist")])
    assert have.compatible(Requirements([Requirement.new("k", "NotIn", ["a"])])) == ""
    assert have.intersects(Requirements([Requirement.new("k", "NotIn", ["a"])]))
