"""The harness the fast-path claim tests share (``test_fastpath_claims``,
``test_fastpath_claims_migration``): their hypothesis settings, a scenario decided on both
paths and compared, and the binder's answers node by node against its fresh ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any, Final

import msgspec
import pytest
from hypothesis import HealthCheck, seed, settings

from test_fastpath import summary
from topospread.api.types import Node
from topospread.plugins.volumebinding.binder import BinderError
from topospread.simulator.run import ScheduleRun, schedule
from topospread.simulator.scenario import Scenario


def storage_state(run: ScheduleRun) -> tuple[Any, Any]:
    storage = run.cluster.storage()
    return (
        sorted(msgspec.json.encode(pv).decode() for pv in storage.pvs.values()),
        sorted(msgspec.json.encode(pvc).decode() for pvc in storage.pvcs.values()),
    )


# The seeds hypothesis derived for test_fastpath_claims' tests (``derandomize``: from a test's
# source) before they shared these helpers: pinned, so that sharing them kept their examples.
ORIGINAL_SEEDS: Final = {
    "test_pods_with_claims_decide_on_the_fast_path_as_on_the_reference_path": int(
        "36434955986155534748494372203691294891524484321789651783195653383682020419978345"
        "708663973600290572144284158066652693"
    ),
    "test_the_binders_answer_per_node_labels_is_its_answer_node_by_node": int(
        "21688528086043585623538086818831188032770582433612128583721518761401189437718347"
        "968713055853047255642793126054011698"
    ),
    "test_volume_limits_kept_within_an_attempt_answer_as_afresh_on_every_node": int(
        "25844279263128949425185103210713348819788066167870816099556082621379246641781963"
        "807446628554048277412644475768375664"
    ),
    "test_pods_with_claims_sample_past_a_hundred_nodes_as_on_the_reference_path": int(
        "21210812379804210399553695738052173579220039784438325313405887214367352619361423"
        "370717058297617214481357814392341173"
    ),
    # Not an original: the seed the sampling test above derives from its source since the
    # shared helpers, which drew a pod whose nominated node failed outside the window searched
    # next (the fast path then started its next search one node early).
    "test_pods_with_claims_sample_past_a_failed_nominated_node_as_on_the_reference_path": int(
        "36548567047519338882160257679893475903831295743399473909544922147646841479300346"
        "964550150164590221566692057075835841"
    ),
    "test_the_volume_kernels_decide_most_nodes_without_their_reference_plugins": int(
        "19603353200986223243213963415715149763592828104711941124145219614023885519204340"
        "225935653068990785919863037097601521"
    ),
}


def derandomized(max_examples: int, *, too_slow_ok: bool = True) -> Callable[[Any], Any]:
    """The module's hypothesis settings: ``max_examples`` examples, the same on every run
    (derandomized, no example database; a test of ``ORIGINAL_SEEDS`` from its pinned seed),
    no deadline; slow data generation allowed unless ``too_slow_ok`` is False."""
    configured = settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow] if too_slow_ok else [],
        derandomize=True,
        database=None,
    )

    def apply(test: Any) -> Any:
        pinned = ORIGINAL_SEEDS.get(test.__name__)
        test = configured(test)
        return test if pinned is None else seed(pinned)(test)

    return apply


def decide_both_ways(
    scenario: Scenario,
    seed: int,
    percentage: int | None = None,
    counting: Callable[[pytest.MonkeyPatch], None] | None = None,
) -> tuple[ScheduleRun, ScheduleRun]:
    """The scenario scheduled on the reference path, then on the fast path (``counting``
    patched in for that run): the same decisions, and Reserve and PreBind went through the
    same storage (the same claims bound to the same volumes, provisioned in the same zones)."""
    reference = schedule(scenario, seed=seed, fast=False, percentage_of_nodes_to_score=percentage)
    with pytest.MonkeyPatch.context() as monkeypatch:
        if counting is not None:
            counting(monkeypatch)
        fast = schedule(scenario, seed=seed, fast=True, percentage_of_nodes_to_score=percentage)
    assert summary(fast) == summary(reference)
    assert storage_state(fast) == storage_state(reference)
    return reference, fast


def assert_lean_decides_as_detailed(
    scenario: Scenario, seed: int, percentage: int | None, fast: ScheduleRun
) -> None:
    """Without detail (no statuses, no messages) the fast path places every pod alike."""
    lean = schedule(
        scenario, seed=seed, fast=True, detail=False, percentage_of_nodes_to_score=percentage
    )
    assert [(d.key, d.node) for d in lean.attempts] == [(d.key, d.node) for d in fast.attempts]


def plugin_of_cluster(scenario: Scenario, name: str) -> tuple[ScheduleRun, Any]:
    """The scenario's nodes, bound pods and objects, nothing queued, scheduled once; and its
    framework's plugin ``name``, over that cluster's storage."""
    run = schedule(dataclasses.replace(scenario, queue=[]))
    return run, next(iter(run.scheduler.frameworks.values())).plugins[name]


def binder_answers_as_afresh(scenario: Scenario) -> Iterator[tuple[Any, list[tuple[Node, Any]]]]:
    """Per queued pod whose claims the binder takes (in the scenario's cluster, nothing
    queued): its claims as PreFilter keeps them and, node by node, the binder's answer with
    them (memoised per node view), asserted to be the answer it gives afresh on that node."""
    run, plugin = plugin_of_cluster(scenario, "VolumeBinding")
    binder = plugin.binder
    nodes_ = [info.node for info in run.cluster.list()]
    for p in scenario.queue:
        try:
            kept = binder.get_pod_volume_claims(p)
        except BinderError:
            continue
        answers = []
        for node in nodes_:
            try:
                got = binder.find_pod_volumes(p, kept, node)
            except BinderError as err:
                got = err.args
            try:
                want = binder._find_pod_volumes(binder.get_pod_volume_claims(p), node)
            except BinderError as err:
                want = err.args
            assert got == want, node.metadata.name
            answers.append((node, got))
        yield kept, answers
