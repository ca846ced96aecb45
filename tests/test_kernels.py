"""Each fast-path kernel computes what its reference plugin computes, plugin by plugin; and a
plugin without a kernel runs through its reference plugin while every other stays vectorised."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_fastpath import scenarios, summary
from topospread.api.types import Pod
from topospread.framework.config import (
    DEFAULT_MULTI_POINT,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    PluginRef,
    Plugins,
    PluginSet,
    default_config,
)
from topospread.framework.cycle_state import CycleState
from topospread.framework.features import Features
from topospread.framework.interface import (
    Handle,
    PreFilterExtensions,
    PreFilterResult,
    ScoreExtensions,
)
from topospread.framework.status import SUCCESS, Code, Status, new_status
from topospread.framework.types import MAX_NODE_SCORE, NodeInfo, NodeScore
from topospread.plugins.helper.normalize_score import default_normalize_score
from topospread.plugins.interpodaffinity.plugin import InterPodAffinity
from topospread.plugins.noderesources.balanced_allocation import BalancedAllocation
from topospread.plugins.noderesources.fit import Fit
from topospread.plugins.podtopologyspread.plugin import PodTopologySpread
from topospread.plugins.registry import IN_TREE
from topospread.simulator.fastpath import KERNELS, FastPath
from topospread.simulator.fastpath.kernels import Attempt, ReferenceKernel
from topospread.simulator.run import schedule
from topospread.simulator.scenario import Scenario

KERNEL_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    database=None,
)


def kernel_cases(scenario: Scenario) -> Iterator[tuple[FastPath, Pod, Attempt, CycleState]]:
    """For each queued pod the fast path takes: the path over the scenario's bound pods, the
    pod's attempt, and the reference PreFilter's cycle state for it."""
    run = schedule(
        Scenario(nodes=scenario.nodes, pods=scenario.pods, queue=[], objects=scenario.objects,
                 config=scenario.config)
    )  # fmt: skip
    (fast,) = run.scheduler.fast.values()
    fwk = fast.fwk
    infos = fast.cluster.list()
    for pod in scenario.queue:
        sig = fast.signature(pod) if fast.accepts(pod) else None
        if sig is None:
            continue
        state = CycleState()
        _, status, _ = fwk.run_pre_filter_plugins(state, pod, infos)
        if not status.is_success:
            continue  # the reference rejects it before any filter
        yield fast, pod, Attempt(pod, sig, CycleState()), state


@KERNEL_SETTINGS
@given(scenarios())
def test_each_filter_kernel_gives_its_plugins_statuses_node_by_node(scenario: Scenario) -> None:
    for fast, pod, attempt, state in kernel_cases(scenario):
        infos = fast.cluster.list()
        for pl in fast.fwk.filter_plugins:
            if pl.name in state.skip_filter_plugins:
                continue  # its PreFilter skipped: the reference never runs its Filter
            assert pl.name not in attempt.sig.static.skip_filters, pl.name
            vector = fast.kernels[pl.name].filter(attempt)
            assert not attempt.declined
            got = [
                SUCCESS if vector is None else fast.statuses.table[int(vector[i])]
                for i in range(len(infos))
            ]
            want = [_tagged(pl.filter(state, pod, info), pl.name) for info in infos]
            assert got == want, pl.name


@KERNEL_SETTINGS
@given(scenarios())
def test_each_score_kernel_gives_its_plugins_normalized_scores(scenario: Scenario) -> None:
    for fast, pod, attempt, state in kernel_cases(scenario):
        infos = fast.cluster.list()
        take = np.arange(len(infos))
        fast.fwk.run_pre_score_plugins(state, pod, infos)
        for pl in fast.fwk.score_plugins:
            got = None
            if pl.name not in attempt.sig.skipped_scores:
                got = fast.kernels[pl.name].score(attempt, take)
            if pl.name in state.skip_score_plugins:
                assert got is None, pl.name  # PreScore skipped: nothing to score
                continue
            scores = [NodeScore(info.name, pl.score(state, pod, info)[0]) for info in infos]
            ext = pl.score_extensions()
            if ext is not None:
                assert ext.normalize_score(state, pod, scores).is_success
            assert got is not None, pl.name
            assert got.tolist() == [s.score for s in scores], pl.name


def _tagged(status: Status, plugin: str) -> Status:
    return SUCCESS if status.is_success else status.with_plugin(plugin)


def test_every_default_filter_and_score_plugin_has_a_kernel() -> None:
    fwk = schedule(Scenario(nodes=[], pods=[], queue=[], objects=[], config=default_config()))
    for framework in fwk.scheduler.frameworks.values():
        for pl in (*framework.filter_plugins, *framework.score_plugins):
            assert pl.name in KERNELS, pl.name


def test_volume_binding_is_a_score_plugin_that_scores_nothing_and_keeps_the_path_on() -> None:
    run = schedule(Scenario(nodes=[], pods=[], queue=[], objects=[], config=default_config()))
    (framework,) = run.scheduler.frameworks.values()
    assert [pl.name for pl in framework.score_plugins][3] == "VolumeBinding"
    (fast,) = run.scheduler.fast.values()
    assert fast.supported
    assert not isinstance(fast.kernels["VolumeBinding"], ReferenceKernel)


# ---------------------------------------------------------------------- a plugin without one

ODD_NODE = "node(s) had an odd number"


class EvenNodes:
    """An out-of-tree plugin: its PreFilter skips pods without labels; its Filter rejects
    nodes named with an odd number unless the pod is an "app: b" pod; its Score is ten per
    pod the node holds, normalized reversed (fewer pods score higher)."""

    name = "EvenNodes"

    def pre_filter(
        self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status]:
        if not pod.metadata.labels:
            return None, new_status(Code.Skip)
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if pod.metadata.labels.get("app") == "b" or int(node_info.name[1:]) % 2 == 0:
            return SUCCESS
        return new_status(Code.Unschedulable, ODD_NODE)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 10 * len(node_info.pods), SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status:
        return default_normalize_score(MAX_NODE_SCORE, True, scores)


def _new_even_nodes(args: Any, handle: Handle, features: Features) -> EvenNodes:
    return EvenNodes()


EVEN_CONFIG = default_config(
    KubeSchedulerConfiguration(
        profiles=[
            KubeSchedulerProfile(
                plugins=Plugins(
                    multi_point=PluginSet(
                        enabled=[*DEFAULT_MULTI_POINT, PluginRef(name="EvenNodes", weight=2)]
                    )
                )
            )
        ]
    )
)
EVEN_REGISTRY = {**IN_TREE, "EvenNodes": _new_even_nodes}
KERNELLED = (Fit, BalancedAllocation, PodTopologySpread, InterPodAffinity)


def count_reference_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Calls of the kernelled plugins' and EvenNodes' Filter and Score made while the fast path
    decides an attempt (outside it, preemption and nominated nodes run the reference)."""
    calls: Counter[str] = Counter()
    inside = [False]
    decide = FastPath.try_schedule

    def deciding(self: FastPath, *args: Any, **kwargs: Any) -> Any:
        inside[0] = True
        try:
            return decide(self, *args, **kwargs)
        finally:
            inside[0] = False

    monkeypatch.setattr(FastPath, "try_schedule", deciding)
    for cls in (*KERNELLED, EvenNodes):
        for point in ("filter", "score"):
            original = getattr(cls, point, None)
            if original is None:
                continue  # BalancedAllocation has no Filter

            def counted(self: Any, *args: Any, _o: Any = original, _k: str = point) -> Any:
                if inside[0]:
                    calls[f"{type(self).__name__}.{_k}"] += 1
                return _o(self, *args)

            monkeypatch.setattr(cls, point, counted)
    return calls


def test_a_plugin_without_a_kernel_runs_through_its_reference_plugin() -> None:
    run = schedule(
        Scenario(nodes=[], pods=[], queue=[], objects=[], config=EVEN_CONFIG),
        registry=EVEN_REGISTRY,
    )
    (fast,) = run.scheduler.fast.values()
    assert fast.supported
    assert isinstance(fast.kernels["EvenNodes"], ReferenceKernel)
    others = [k for name, k in fast.kernels.items() if name != "EvenNodes"]
    assert not any(isinstance(k, ReferenceKernel) for k in others)


def test_a_plugin_without_a_kernel_decides_as_the_reference_and_the_rest_stay_vectorised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = count_reference_calls(monkeypatch)
    seen: Counter[str] = Counter()

    @settings(
        max_examples=80,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        derandomize=True,
        database=None,
    )
    @given(scenarios(), st.integers(0, 3))
    def decides_as_the_reference(scenario: Scenario, seed: int) -> None:
        scenario = Scenario(
            nodes=scenario.nodes, pods=scenario.pods, queue=scenario.queue,
            objects=scenario.objects, config=EVEN_CONFIG,
        )  # fmt: skip
        reference = schedule(scenario, seed=seed, fast=False, registry=EVEN_REGISTRY)
        calls.clear()
        fast = schedule(scenario, seed=seed, fast=True, registry=EVEN_REGISTRY)
        assert summary(fast) == summary(reference)
        # Inside the fast path's decisions, only the plugin without a kernel ran its plugin.
        assert {k for k in calls if not k.startswith("EvenNodes.")} == set()
        seen["decided"] += fast.scheduler.fast_decisions
        seen["even filter"] += calls["EvenNodes.filter"]
        seen["even score"] += calls["EvenNodes.score"]
        seen["rejected odd"] += sum(
            any(ODD_NODE in r for r in reasons)
            for d in fast.attempts
            for reasons in d.reasons.values()
        )

    decides_as_the_reference()
    # The random scenarios reached attempts the fast path decided with EvenNodes filtering
    # (and rejecting) and scoring through its reference plugin.
    assert seen["decided"] > 50
    assert seen["even filter"] > 50
    assert seen["even score"] > 20
    assert seen["rejected odd"] > 10


@given(st.lists(st.integers(0, 300)), st.sampled_from([np.int32, np.int64]))
def test_the_spread_kernels_distinct_values_are_np_uniques(values: list[int], dtype: Any) -> None:
    """Domain codes and taint set numbers: distinct, ascending, as np.unique gives them."""
    from topospread.simulator.fastpath.kernels.podtopologyspread import _distinct

    array = np.array(values, dtype)
    assert _distinct(array).tolist() == np.unique(array).tolist()
