"""DynamicResources in the default profile: its PostFilter's text in every FailedScheduling
message of a pod without claims, the order it runs in before DefaultPreemption, and the cycle
state its later points read (upstream's dynamicresources.go and RunPostFilterPlugins, v1.35)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import msgspec
import pytest

from builders import make_node, make_pod
from topospread.api.types import Node, Pod
from topospread.cluster.state import ClusterState
from topospread.framework.config import SchedulerConfig, decode_config, default_config
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import DEFAULT_FEATURES
from topospread.framework.status import Code
from topospread.plugins.dynamicresources import (
    ERR_NOT_FOUND,
    MSG_NO_NEW_CLAIMS,
    NAME,
    UNMODELLED_CLAIMS,
    DynamicResources,
)
from topospread.plugins.registry import in_tree_registry
from topospread.simulator.scheduler import Decision, Scheduler

PATHS: Final = pytest.mark.parametrize("fast", [True, False], ids=["fast", "reference"])


def _run(
    nodes: Iterable[Node],
    bound: Iterable[Pod],
    queue: Iterable[Pod],
    *,
    fast: bool,
    config: SchedulerConfig | None = None,
) -> list[Decision]:
    scheduler = Scheduler(
        ClusterState(nodes, bound),
        config or default_config(),
        in_tree_registry(),
        DEFAULT_FEATURES,
        tie_break="name",
        fast=fast,
    )
    for p in queue:
        scheduler.add(p)
    return scheduler.run()


def _small_nodes(*names: str) -> list[Node]:
    return [make_node(n).capacity(cpu="1", memory="1Gi").obj() for n in names]


def test_upstreams_postfilter_text_is_no_new_claims_to_deallocate() -> None:
    assert MSG_NO_NEW_CLAIMS == "no new claims to deallocate"
    assert ERR_NOT_FOUND == "not found"


@PATHS
def test_a_pod_without_claims_that_fits_nowhere_gets_upstreams_whole_message(fast: bool) -> None:
    (decision,) = _run(_small_nodes("a", "b"), [], [make_pod("big").req(cpu="2").obj()], fast=fast)
    assert decision.node is None
    assert decision.message == (
        "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


@PATHS
def test_a_pod_that_preemption_helps_fails_first_with_the_fit_error_alone(fast: bool) -> None:
    # DefaultPreemption succeeds (victim evicted, node nominated): RunPostFilterPlugins returns
    # its Success, whose message is empty, so DynamicResources' reason is dropped.
    victim = make_pod("low").priority(0).node("a").req(cpu="800m").obj()
    high = make_pod("high").priority(1000).req(cpu="800m").obj()
    first, second = _run(_small_nodes("a"), [victim], [high], fast=fast)
    assert first.node is None
    assert first.preempted == ["default/low"]
    assert first.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert second.node == "a"


@PATHS
def test_no_victim_of_lower_priority_gives_both_postfilter_reasons_in_profile_order(
    fast: bool,
) -> None:
    peer = make_pod("peer").priority(1000).node("a").req(cpu="800m").obj()
    (decision,) = _run(
        _small_nodes("a"), [peer], [make_pod("p").priority(1000).req(cpu="800m").obj()], fast=fast
    )
    assert decision.message == (
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_the_default_profile_runs_dynamicresources_postfilter_before_preemption() -> None:
    scheduler = Scheduler(
        ClusterState(_small_nodes("a"), []), default_config(), in_tree_registry(), DEFAULT_FEATURES
    )
    fwk = scheduler.framework_for(make_pod("p").obj())
    assert fwk is not None
    assert [pl.name for pl in fwk.post_filter_plugins] == ["DynamicResources", "DefaultPreemption"]


def _reordered_post_filter() -> SchedulerConfig:
    doc: dict[str, Any] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "plugins": {
                    "postFilter": {
                        "enabled": [{"name": "DefaultPreemption"}, {"name": "DynamicResources"}],
                        "disabled": [{"name": "*"}],
                    }
                }
            }
        ],
    }
    return decode_config(doc, "config.yaml")


@PATHS
def test_postfilter_reasons_are_joined_in_the_order_the_plugins_ran(fast: bool) -> None:
    (decision,) = _run(
        _small_nodes("a", "b"),
        [],
        [make_pod("big").req(cpu="2").obj()],
        fast=fast,
        config=_reordered_post_filter(),
    )
    assert decision.message == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 Preemption is not helpful for scheduling., no new claims to deallocate"
    )


def _pod(name: str, **spec: Any) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}], **spec},
        },
        Pod,
    )


@PATHS
def test_an_earlier_prefilter_rejection_leaves_postfilter_without_state(fast: bool) -> None:
    # NodeAffinity's PreFilter rejects the pod (one term pins two different node names) as
    # UnschedulableAndUnresolvable, so DynamicResources' PreFilter never runs: its PostFilter
    # finds no state and fails with the cycle state's bare "not found", which ends the
    # message and stops DefaultPreemption (upstream's FailedScheduling reads the same, e.g.
    # "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. not found").
    pins = [{"key": "metadata.name", "operator": "In", "values": [name]} for name in ("a", "b")]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": pins}]
            }
        }
    }
    (decision,) = _run(_small_nodes("a", "b"), [], [_pod("p", affinity=affinity)], fast=fast)
    assert decision.node is None
    assert decision.message == "0/2 nodes are available: pod affinity terms conflict. not found"


def test_prefilter_writes_its_state_then_skips_a_pod_without_claims() -> None:
    plugin = DynamicResources()
    state = CycleState()
    _, status = plugin.pre_filter(state, make_pod("p").obj(), [])
    assert status.code is Code.Skip
    result, post = plugin.post_filter(state, make_pod("p").obj(), {})
    assert result is None
    assert (post.code, post.reasons) == (Code.Unschedulable, (MSG_NO_NEW_CLAIMS,))
    assert plugin.reserve(state, make_pod("p").obj(), "a").is_success
    assert plugin.pre_bind(state, make_pod("p").obj(), "a").is_success


def test_every_point_after_prefilter_fails_without_its_state() -> None:
    plugin = DynamicResources()
    pod = make_pod("p").obj()
    for status in (
        plugin.post_filter(CycleState(), pod, {})[1],
        plugin.filter(CycleState(), pod, None),  # type: ignore[arg-type]
        plugin.reserve(CycleState(), pod, "a"),
        plugin.pre_bind(CycleState(), pod, "a"),
    ):
        assert (status.code, status.message) == (Code.Error, ERR_NOT_FOUND)


@PATHS
def test_a_pod_with_a_claim_is_pending_and_never_waved_through(fast: bool) -> None:
    claimed = _pod("gpu", resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-0"}])
    (decision,) = _run(_small_nodes("a"), [], [claimed], fast=fast)
    assert decision.node is None
    assert decision.message == (
        f'0/1 nodes are available: {UNMODELLED_CLAIMS} (resource claims "gpu"). '
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert NAME == "DynamicResources"
