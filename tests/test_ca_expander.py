"""Expanders, from upstream's tests: TestMostPods (expander/mostpods), TestLeastWaste
(expander/waste), the priority expander's tests (expander/priority/priority_test.go), and the
chain of --expander=priority,least-waste (expander/factory/chain_test.go)."""

from __future__ import annotations

import random

import pytest

from builders import make_pod
from ca_helpers import build_test_node
from topospread.api.decode import decode_object
from topospread.api.types import Pod
from topospread.autoscaler.clusterautoscaler.expander import (
    ChainStrategy,
    LeastWasteExpander,
    MostPodsExpander,
    Option,
    PriorityExpander,
    RandomExpander,
    build_expander,
    waste_score,
)
from topospread.autoscaler.clusterautoscaler.options import ManifestError, parse_options
from topospread.framework.types import NodeInfo


def test_most_pods_prefers_the_option_that_schedules_the_most_pods() -> None:
    pod = make_pod("p").obj()
    eo0 = Option("EO0", 1)
    eo1 = Option("EO1", 1, [pod])
    eo1b = Option("EO1b", 1, [pod])
    e = ChainStrategy([MostPodsExpander()], RandomExpander(random.Random(0)))
    assert e.best_option([eo0], {}) is eo0
    assert e.best_option([eo0, eo1], {}) is eo1
    for seed in range(10):
        e = ChainStrategy([MostPodsExpander()], RandomExpander(random.Random(seed)))
        assert e.best_option([eo0, eo1, eo1b], {}) in (eo1, eo1b)


CPU_PER_POD = 500
MEMORY_PER_POD = 1000 * 1024 * 1024


def node_info(cpu: int, memory: int) -> NodeInfo:
    return NodeInfo(build_test_node("n", cpu, memory))


def test_least_waste_picks_the_node_group_that_wastes_the_least() -> None:
    e = ChainStrategy([LeastWasteExpander()], RandomExpander(random.Random(0)))
    infos = {"balanced": node_info(16 * CPU_PER_POD, 16 * MEMORY_PER_POD)}
    balanced = Option("balanced", 1)
    # Without any pods, one node info.
    assert e.best_option([balanced], infos) is balanced
    pod = make_pod("p").req(cpu=f"{CPU_PER_POD}m", memory=str(MEMORY_PER_POD)).obj()
    balanced = Option("balanced", 1, [pod])
    # One pod, one node info.
    assert e.best_option([balanced], infos) is balanced
    # One pod; one group has lots of memory, one less.
    infos["highmem"] = node_info(16 * CPU_PER_POD, 32 * MEMORY_PER_POD)
    highmem = Option("highmem", 1, [pod])
    assert e.best_option([balanced, highmem], infos) is balanced
    # One pod; lots of memory, less, and less cpu.
    infos["lowcpu"] = node_info(8 * CPU_PER_POD, 16 * MEMORY_PER_POD)
    lowcpu = Option("lowcpu", 1, [pod])
    assert e.best_option([balanced, highmem, lowcpu], infos) is lowcpu


CONFIG = {5: [r".*t2\.micro.*"], 10: [r".*t2\.large.*", r".*t3\.large.*"], 50: [r".*m4\.4xlarge.*"]}
ONE_ENTRY = {10: [r".*t2\.large.*"]}
WILDCARD = {5: [".*"], 10: [r".t2\.large.*"]}

T2_MICRO = Option("my-asg.t2.micro", 1)
T2_LARGE = Option("my-asg.t2.large", 1)
T3_LARGE = Option("my-asg.t3.large", 1)
M4_4XLARGE = Option("my-asg.m4.4xlarge", 1)


def priority(config: dict[int, list[str]], seed: int = 0) -> ChainStrategy:
    return ChainStrategy([PriorityExpander(config)], RandomExpander(random.Random(seed)))


@pytest.mark.parametrize(
    ("name", "config", "options", "want"),
    [
        ("selects single matching option out of one", CONFIG, [T2_LARGE], [T2_LARGE]),
        ("selects single matching option out of many", CONFIG, [T2_LARGE, M4_4XLARGE],
         [M4_4XLARGE]),
        ("does not fall back to random when higher priority matches", WILDCARD,
         [T2_LARGE, T2_MICRO], [T2_LARGE]),
        ("selects one of two matching options out of many", CONFIG,
         [T2_LARGE, T3_LARGE, T2_MICRO], [T2_LARGE, T3_LARGE]),
        ("falls back to random when no matches", CONFIG, [T2_LARGE, T3_LARGE],
         [T2_LARGE, T3_LARGE]),
        ("uses the only configured group", ONE_ENTRY, [T2_LARGE, T3_LARGE, M4_4XLARGE],
         [T2_LARGE]),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)  # fmt: skip
def test_priority_expander(
    name: str, config: dict[int, list[str]], options: list[Option], want: list[Option]
) -> None:
    for seed in range(10):
        assert priority(config, seed).best_option(options, {}) in want


def test_priority_expander_warns_about_groups_missing_from_its_config() -> None:
    expander = PriorityExpander(ONE_ENTRY)
    assert expander.best_options([T2_LARGE, T3_LARGE, M4_4XLARGE], {}) == [T2_LARGE]
    assert expander.warnings == [
        f"Priority expander: node group {g} not found in priority expander configuration. "
        "The group won't be used."
        for g in ("my-asg.t3.large", "my-asg.m4.4xlarge")
    ]


def test_an_empty_priority_config_is_rejected_with_upstreams_message() -> None:
    with pytest.raises(ManifestError) as err:
        parse_options({"priorities": {}}, "scenario.yaml: autoscaler")
    assert str(err.value) == (
        "scenario.yaml: autoscaler: priorities: Invalid value: {}: priority configuration in "
        "cluster-autoscaler-priority-expander configmap is empty; please provide valid "
        "configuration"
    )


def test_expanders_chain_each_narrowing_the_previous_ones_choice() -> None:
    pod = make_pod("p").req(cpu=f"{CPU_PER_POD}m", memory=str(MEMORY_PER_POD)).obj()
    infos = {
        "my-asg.t2.large": node_info(16 * CPU_PER_POD, 16 * MEMORY_PER_POD),
        "my-asg.t3.large": node_info(8 * CPU_PER_POD, 16 * MEMORY_PER_POD),
        "my-asg.m4.4xlarge": node_info(CPU_PER_POD, MEMORY_PER_POD),
    }
    t2 = Option("my-asg.t2.large", 1, [pod])
    t3 = Option("my-asg.t3.large", 1, [pod])
    m4 = Option("my-asg.m4.4xlarge", 1, [pod])
    config = {10: [r".*t2\.large.*", r".*t3\.large.*"], 1: [r".*m4.*"]}
    chain = build_expander(("priority", "least-waste"), random.Random(0), config)
    # priority keeps t2 and t3 (m4 would waste nothing but has the lower priority);
    # least-waste then takes t3.
    assert chain.best_option([t2, t3, m4], infos) is t3
    chain = build_expander(("least-waste",), random.Random(0), config)
    assert chain.best_option([t2, t3, m4], infos) is m4


def test_random_is_reproducible_with_the_seed() -> None:
    options = [Option(f"ng{i}", 1) for i in range(10)]

    def picks(seed: int) -> list[str]:
        chain = build_expander(("random",), random.Random(seed), {})
        return [chain.best_option(options, {}).node_group for _ in range(20)]  # type: ignore[union-attr]

    assert picks(7) == picks(7)
    assert len(set(picks(7))) > 1


def pod_with_init_container(name: str, init_cpu: str, cpu: str, overhead: str) -> Pod:
    return decode_object(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "initContainers": [
                    {
                        "name": "init",
                        "image": "busybox",
                        "resources": {"requests": {"cpu": init_cpu}},
                    }
                ],
                "containers": [
                    {"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}
                ],
                "overhead": {"cpu": overhead},
            },
        },
        Pod,
        "t",
    )


def test_least_waste_counts_a_pods_init_container_and_overhead_as_the_api_does() -> None:
    # Upstream's resourcesForPods sums podutils.PodRequests: the init container's 800m counts
    # (it asks for more than the 100m container), plus the 100m overhead: 900m of the 1-CPU
    # node, 0.1 idle (0.9 counting the container alone); no memory asked, all of it idle.
    pod = pod_with_init_container("p", init_cpu="800m", cpu="100m", overhead="100m")
    option = Option("tiny", 1, [pod])
    assert waste_score(option, node_info(1000, 16 * MEMORY_PER_POD)) == pytest.approx(1.1)
    # So with a small memory pod beside it least-waste prefers the 1-CPU, 16Gi group (0.1 +
    # 0.996) to a 2-CPU, 1Gi one (0.55 + 0.9375); counting the container alone (100m) it
    # would take the other (0.9 + 0.996 against 0.95 + 0.9375).
    infos = {"tiny": node_info(1000, 16 * MEMORY_PER_POD), "lean": node_info(2000, MEMORY_PER_POD)}
    lean = Option("lean", 1, [make_pod("m").req(memory=str(MEMORY_PER_POD // 16)).obj(), pod])
    tiny = Option("tiny", 1, [make_pod("m").req(memory=str(MEMORY_PER_POD // 16)).obj(), pod])
    e = ChainStrategy([LeastWasteExpander()], RandomExpander(random.Random(0)))
    assert e.best_option([lean, tiny], infos) is tiny
