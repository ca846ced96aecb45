"""The disruption controller in ``simulate``: budget statuses recomputed from the pods in every
settle round, read by preemption (fewer PDB violations preferred) and by the eviction
subresource (which takes one disruption per eviction until the next sync)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from builders import make_pod
from test_drain import drain, pdb, web
from test_timeline import daemon_set, run
from topospread.api.loader import decode_manifests
from topospread.api.types import (
    Condition,
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    Pod,
    PodDisruptionBudget,
    PodDisruptionBudgetStatus,
)
from topospread.api.types import PodDisruptionBudgetSpec as Spec
from topospread.framework.config import default_config
from topospread.simulator.controllers.disruption import (
    DISRUPTION_ALLOWED_CONDITION,
    INSUFFICIENT_PODS_REASON,
    SUFFICIENT_PODS_REASON,
    SYNC_FAILED_REASON,
    sync_budget,
)
from topospread.simulator.eviction import EVICTION_REFUSED, Evictions
from topospread.simulator.run import schedule
from topospread.simulator.scenario import build_scenario
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.actions import apply_step

HOSTNAME = "kubernetes.io/hostname"


def condition(reason: str, message: str = "") -> Condition:
    status = "True" if reason == SUFFICIENT_PODS_REASON else "False"
    return Condition(
        type=DISRUPTION_ALLOWED_CONDITION, status=status, reason=reason, message=message
    )


def budget(selector: LabelSelector | None = None, **spec: Any) -> PodDisruptionBudget:
    if selector is None:
        selector = LabelSelector(match_labels={"app": "web"})
    return PodDisruptionBudget(
        metadata=ObjectMeta(name="b", namespace="default"),
        spec=Spec(selector=selector, **spec),
    )


def counts(pdb: PodDisruptionBudget) -> tuple[int, int, int, int]:
    s = pdb.status
    return s.expected_pods, s.desired_healthy, s.current_healthy, s.disruptions_allowed


# ------------------------------------------------------------------ the status computation


OWNED = [make_pod(f"p{i}").label("app", "web").owner("ReplicaSet", "rs") for i in range(3)]
PODS = [p.node("n").obj() for p in OWNED[:2]] + [OWNED[2].obj()]  # one not bound yet: unready


def scale_5(pod: Pod) -> tuple[str, int]:
    return "Deployment/default/web", 5


@pytest.mark.parametrize(
    "pdb_, want, reason",
    [
        pytest.param(
            budget(min_available=1),
            (3, 1, 2, 1),
            SUFFICIENT_PODS_REASON,
            id="an integer minAvailable counts the selected pods; healthy means ready",
        ),
        pytest.param(
            budget(max_unavailable="20%"),
            (5, 4, 2, 0),
            INSUFFICIENT_PODS_REASON,
            id="maxUnavailable counts the controller's scale: 5 - ceil(20% of 5) = 4 desired",
        ),
        pytest.param(
            budget(min_available="50%"),
            (5, 3, 2, 0),
            INSUFFICIENT_PODS_REASON,
            id="a percentage minAvailable rounds up against the scale",
        ),
        pytest.param(
            budget(min_available=0),
            (3, 0, 2, 2),
            SUFFICIENT_PODS_REASON,
            id="every healthy pod may go when none must stay",
        ),
        pytest.param(
            PodDisruptionBudget(
                metadata=ObjectMeta(name="b", namespace="default"), spec=Spec(min_available=0)
            ),
            (0, 0, 0, 0),
            INSUFFICIENT_PODS_REASON,
            id="no selector selects nothing: no pod expected, no disruption allowed",
        ),
    ],
)
def test_the_status_follows_the_disruption_controller(
    pdb_: PodDisruptionBudget, want: tuple[int, int, int, int], reason: str
) -> None:
    got = sync_budget(pdb_, PODS, scale_5)
    assert counts(got) == want
    assert got.status.conditions == [condition(reason)]


def test_a_sync_that_changes_nothing_returns_the_budget_itself() -> None:
    synced = sync_budget(budget(min_available=1), PODS, scale_5)
    assert sync_budget(synced, PODS, scale_5) is synced


@pytest.mark.parametrize(
    "pods, scale_of, message",
    [
        pytest.param(
            PODS, lambda pod: None, 'found no controllers for pod "p0"', id="unknown controller"
        ),
        pytest.param(
            [make_pod("d").label("app", "web").owner("DaemonSet", "agent").node("n").obj()],
            scale_5,
            "daemonsets.apps does not implement the scale subresource",
            id="a DaemonSet has no scale",
        ),
        pytest.param(
            [make_pod("j").label("app", "web").owner("Job", "batch", "batch/v1").node("n").obj()],
            scale_5,
            "jobs.batch does not implement the scale subresource",
            id="a Job has no scale",
        ),
    ],
)
def test_a_budget_that_needs_a_scale_it_cannot_find_fails_safe(
    pods: list[Pod], scale_of: Any, message: str
) -> None:
    # The status of an earlier sync stays; only the allowance drops, with the reason.
    before = budget(max_unavailable=1)
    before = msgspec.structs.replace(
        before,
        status=PodDisruptionBudgetStatus(
            disruptions_allowed=1,
            current_healthy=2,
            desired_healthy=1,
            expected_pods=2,
            conditions=[condition(SUFFICIENT_PODS_REASON)],
        ),
    )
    got = sync_budget(before, pods, scale_of)
    assert counts(got) == (2, 1, 2, 0)
    assert got.status.conditions == [condition(SYNC_FAILED_REASON, message)]


def test_an_integer_min_available_needs_no_scale_and_counts_unmanaged_pods() -> None:
    pods = [*PODS, make_pod("bare").label("app", "web").node("n").obj()]
    got = sync_budget(budget(min_available=2), pods, lambda pod: None)
    assert counts(got) == (4, 2, 3, 1)


def test_an_invalid_selector_fails_the_sync_with_the_selectors_error() -> None:
    selector = LabelSelector(
        match_expressions=[LabelSelectorRequirement(key="app", operator="Near", values=["x"])]
    )
    got = sync_budget(budget(selector, min_available=1), PODS, scale_5)
    assert got.status.disruptions_allowed == 0
    assert got.status.conditions == [
        condition(SYNC_FAILED_REASON, '"Near" is not a valid label selector operator')
    ]


def test_pods_being_deleted_and_evicted_pods_are_not_healthy_and_old_entries_are_dropped() -> None:
    pods = [*PODS[:2], OWNED[2].node("n").terminating().obj()]
    stale = msgspec.structs.replace(
        budget(min_available=1),
        status=PodDisruptionBudgetStatus(disrupted_pods={"gone": "2026-01-01T00:00:00Z"}),
    )
    got = sync_budget(stale, pods, scale_5)
    assert counts(got) == (3, 1, 2, 1) and got.status.disrupted_pods == {}


# ------------------------------------------------------------------ the eviction subresource


def test_each_eviction_takes_a_disruption_until_the_controller_syncs_again() -> None:
    written: list[PodDisruptionBudget] = []
    synced = sync_budget(budget(min_available=1), PODS, scale_5)
    evictions = Evictions([synced], written.append)
    assert evictions.evict(PODS[0]) is None
    (after,) = written
    assert after.status.disruptions_allowed == 0
    assert after.status.conditions == [condition(INSUFFICIENT_PODS_REASON)]
    refusal = evictions.evict(PODS[1])
    assert refusal is not None and refusal.message == EVICTION_REFUSED
    # The refusal quotes the status as the controller last wrote it.
    assert refusal.cause == "The disruption budget b needs 1 healthy pods and has 2 currently"


# ------------------------------------------------------------------ in simulate


def pinned(name: str, priority_class: str, node: str) -> dict[str, Any]:
    """A one-replica Deployment whose pod needs 3 of its node's 4 CPUs."""
    container = {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "3"}}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "priorityClassName": priority_class,
                    "nodeSelector": {HOSTNAME: node},
                    "containers": [container],
                },
            },
        },
    }


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def budget_for(app: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"{app}-pdb"},
        "spec": {"selector": {"matchLabels": {"app": app}}, **spec},
    }


URGENT: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "urgent"},
    "spec": {
        "priorityClassName": "high",
        "containers": [{"name": "c", "image": "app:1", "resources": {"requests": {"cpu": "3"}}}],
    },
}
# Two nodes, each full with one victim: "low" (priority 0) on n-1, whose budget allows no
# disruption, and "mid" (priority 10) on n-2, whose budget allows one. With no budget allowing
# anything, preemption's next criterion (the lowest highest-priority victim) picks n-1.
CLASSES = [priority_class("low", 0), priority_class("mid", 10), priority_class("high", 1000)]
BUDGETS = [budget_for("low", minAvailable=1), budget_for("mid", maxUnavailable=1)]
PREEMPTION: dict[str, Any] = {
    "nodeGroups": [{"name": "n", "count": 2}],
    "objects": [*CLASSES, pinned("low", "low", "n-1"), pinned("mid", "mid", "n-2"), *BUDGETS],
    "timeline": [{"apply": URGENT}],
}


def test_preemption_prefers_the_node_whose_victims_budget_allows_a_disruption() -> None:
    first, step = run(PREEMPTION).steps
    assert sorted(first.bound.values()) == ["n-1", "n-2"]
    (victim,) = step.settled.preempted
    assert victim.startswith("default/mid-")
    assert step.bound["default/urgent"] == "n-2"
    # The victim's replacement waits: its node is taken by the preemptor.
    (replacement,) = step.pending
    assert replacement.startswith("default/mid-")


def test_without_statuses_the_same_preemption_takes_the_other_node() -> None:
    """The snapshot commands read the status as given: a budget without one allows nothing,
    so both candidates violate a budget and n-1's lower-priority victim wins, as simulate
    chose before it kept the statuses current."""
    sim = Simulation(parse_timeline(PREEMPTION, "t.yaml"))
    sim.settle("t.yaml")
    objects: list[tuple[str, Any]] = [("t", info.node) for info in sim.cluster.list()]
    objects += [("t", p) for _, p in sorted(sim.pods.items())]
    objects += [("t", o) for m in [*CLASSES, *BUDGETS, URGENT] for o in decode_manifests(m, "t")]
    result = schedule(build_scenario(objects, default_config()))
    ((victim, by),) = result.preempted_existing
    assert victim.startswith("default/low-") and by == "default/urgent"


def test_budget_statuses_follow_each_settle() -> None:
    sim = Simulation(parse_timeline(PREEMPTION, "t.yaml"))
    sim.settle("t.yaml")
    statuses = {p.metadata.name: p for p in sim.scheduler.pdbs}
    assert counts(statuses["low-pdb"]) == (1, 1, 1, 0)
    assert counts(statuses["mid-pdb"]) == (1, 0, 1, 1)
    assert statuses["mid-pdb"].status.conditions == [condition(SUFFICIENT_PODS_REASON)]
    assert sim.scheduler.pdbs == sim.budgets()
    apply_step(sim, sim.scenario.steps[0])
    sim.settle("t.yaml")
    statuses = {p.metadata.name: p for p in sim.scheduler.pdbs}
    # mid's pod was preempted and its replacement is Pending: nothing more may go.
    assert counts(statuses["mid-pdb"]) == (1, 0, 0, 0)
    assert statuses["mid-pdb"].status.conditions == [condition(INSUFFICIENT_PODS_REASON)]


def test_a_drain_of_two_nodes_sees_the_first_nodes_evictions_in_the_budget() -> None:
    # web(4) puts 2 pods on each node; maxUnavailable 2 lets pool-1's two go in one pass,
    # with no settle before pool-2, whose pods the budget then keeps.
    _, drained = drain([web(4), pdb(maxUnavailable=2)], ["pool-1", "pool-2"])
    one, two = drained.drains
    assert one.complete and one.passes == 1 and len(one.evicted) == 2
    assert two.evicted == [] and len(two.blocked) == 2
    assert two.blocked[0].refusal.cause == (
        "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"
    )


def test_daemon_set_pods_under_a_max_unavailable_budget_fail_the_sync() -> None:
    doc = {
        "nodeGroups": [{"name": "n", "count": 1}],
        "objects": [daemon_set(), budget_for("agent", maxUnavailable=1)],
        "timeline": [],
    }
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    (got,) = sim.scheduler.pdbs
    assert got.status.disruptions_allowed == 0
    assert got.status.conditions == [
        condition(SYNC_FAILED_REASON, "daemonsets.apps does not implement the scale subresource")
    ]
