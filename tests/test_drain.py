"""``drain`` as ``kubectl drain --ignore-daemonsets``: evictions that honour
PodDisruptionBudgets (retried while replacements bind elsewhere), kubectl's refusal of pods
without a controller or with local storage, ``force``, ``disableEviction``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from test_cli import run as cli
from test_timeline import daemon_set, run
from topospread.analysis.reports import StepReport
from topospread.errors import TopospreadError
from topospread.render.simulate import timeline_text
from topospread.simulator.eviction import EVICTION_REFUSED, MULTIPLE_PDBS
from topospread.simulator.timeline_format import parse_timeline

NODES = [{"name": "pool", "count": 2}]


def web(replicas: int = 4, cpu: str = "1", volumes: list[Any] | None = None) -> dict[str, Any]:
    """A Deployment without spread constraints; ``cpu`` per pod sizes how many fit a node
    (4 CPU each)."""
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": cpu}}}]
    }
    if volumes:
        spec["volumes"] = volumes
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": spec},
        },
    }


def pdb(name: str = "web-pdb", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


def bare(name: str = "bare", node: str = "pool-1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "bare"}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]},
    }


def drain(objects: list[Any], args: Any = "pool-1") -> tuple[StepReport, StepReport]:
    first, drained = run({"nodeGroups": NODES, "objects": objects, "timeline": [
        {"drain": args}]}).steps  # fmt: skip
    return first, drained


def on(step: StepReport, node: str) -> list[str]:
    return sorted(k for k, n in step.bound.items() if n == node)


# ------------------------------------------------------------------ budgets


def test_min_available_blocks_until_replacements_bind_elsewhere_then_drain_completes() -> None:
    first, drained = drain([web(4), pdb(minAvailable=3)])
    assert len(on(first, "pool-1")) == 2
    (result,) = drained.drains
    # One disruption allowed at a time: evict one, wait for its replacement, evict the next.
    assert result.complete and result.passes == 2 and len(result.evicted) == 2
    assert on(drained, "pool-1") == [] and len(on(drained, "pool-2")) == 4
    assert drained.events[1] == (
        f"drained pool-1: evicted 2 pods ({', '.join(on(first, 'pool-1'))})"
    )
    assert drained.pending == {} and drained.settled.settled
    # The replacements created between the passes are reported with the step.
    assert len(drained.settled.created) == 2 and len(drained.settled.placed) == 2


def test_a_budget_that_cannot_be_met_leaves_pods_blocked_with_the_api_servers_message() -> None:
    # 2 CPU pods: pool-2 is full, so the first eviction's replacement stays Pending.
    first, drained = drain([web(4, cpu="2"), pdb(minAvailable=3)])
    (result,) = drained.drains
    assert not result.complete and result.passes == 2 and len(result.evicted) == 1
    (left,) = on(drained, "pool-1")
    assert left in on(first, "pool-1") and len(drained.pending) == 1
    assert drained.events[1:] == [
        f"drain pool-1 incomplete: evicted 1 pod ({result.evicted[0]})",
        "drain pool-1 incomplete: 1 pod blocked by PodDisruptionBudget default/web-pdb "
        f"(Cannot evict pod as it would violate the pod's disruption budget.): {left}",
    ]
    (blocked,) = drained.to_json()["drains"][0]["blocked"]
    assert blocked == {
        "pod": left,
        "reason": "TooManyRequests",
        "message": EVICTION_REFUSED,
        "cause": "The disruption budget web-pdb needs 3 healthy pods and has 3 currently",
        "podDisruptionBudgets": ["default/web-pdb"],
    }


def test_min_available_equal_to_replicas_blocks_every_pod_in_one_pass() -> None:
    first, drained = drain([web(4), pdb(minAvailable=4)])
    (result,) = drained.drains
    assert result.passes == 1 and result.evicted == []
    assert on(drained, "pool-1") == on(first, "pool-1")
    assert drained.blocked == on(first, "pool-1")
    assert "2 pods blocked by PodDisruptionBudget default/web-pdb" in drained.events[2]


@pytest.mark.parametrize(
    "spec, passes",
    [
        pytest.param({"maxUnavailable": "25%"}, 2, id="maxUnavailable 25% of 4 is 1"),
        pytest.param({"maxUnavailable": "30%"}, 1, id="maxUnavailable 30% of 4 rounds up to 2"),
        pytest.param({"maxUnavailable": 1}, 2, id="maxUnavailable 1"),
        pytest.param({"minAvailable": "50%"}, 1, id="minAvailable 50% of 4 is 2"),
        pytest.param({"minAvailable": "51%"}, 2, id="minAvailable 51% of 4 rounds up to 3"),
    ],
)
def test_percentages_count_against_the_deployments_replicas_rounded_up(
    spec: dict[str, Any], passes: int
) -> None:
    _, drained = drain([web(4), pdb(**spec)])
    (result,) = drained.drains
    assert result.complete and result.passes == passes and len(result.evicted) == 2


def test_a_pod_matched_by_two_budgets_is_refused_and_not_retried() -> None:
    first, drained = drain([web(4), pdb("a", maxUnavailable=4), pdb("b", maxUnavailable=4)])
    (result,) = drained.drains
    assert result.passes == 1 and result.evicted == []
    assert on(drained, "pool-1") == on(first, "pool-1")
    assert drained.events[2] == (
        "drain pool-1 incomplete: 2 pods blocked by PodDisruptionBudgets default/a, default/b "
        f"({MULTIPLE_PDBS}): {', '.join(on(first, 'pool-1'))}"
    )
    assert {b.refusal.reason for b in result.blocked} == {"InternalError"}


@pytest.mark.parametrize(
    "selector, blocked",
    [
        pytest.param({}, 2, id="an empty selector selects every pod of the namespace"),
        pytest.param(None, 0, id="no selector selects nothing"),
    ],
)
def test_policy_v1_selectors_in_eviction(selector: Any, blocked: int) -> None:
    budget = pdb(minAvailable=4)
    budget["spec"]["selector"] = selector
    _, drained = drain([web(4), budget])
    assert len(drained.blocked) == blocked


def test_disable_eviction_deletes_without_consulting_budgets() -> None:
    first, drained = drain(
        [web(4), pdb(minAvailable=4)], {"node": "pool-1", "disableEviction": True}
    )
    (result,) = drained.drains
    assert result.complete and result.deleted_directly
    assert drained.events[1] == f"drained pool-1: deleted 2 pods ({', '.join(on(first, 'pool-1'))})"
    assert on(drained, "pool-1") == [] and len(on(drained, "pool-2")) == 4


def test_a_budget_over_pods_of_a_controller_without_scale_fails_safe() -> None:
    pod_spec = {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
    template = {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "batch"},
        "spec": {"parallelism": 2, "template": template},
    }
    first, drained = drain([job, pdb(maxUnavailable=1)])
    (result,) = drained.drains
    assert result.evicted == [] and [b.pod for b in result.blocked] == on(first, "pool-1") != []
    # Upstream's scale finder: a Job has no scale subresource.
    assert result.blocked[0].refusal.cause == (
        "The disruption budget web-pdb does not allow evicting pods currently because it "
        "failed sync: jobs.batch does not implement the scale subresource"
    )


def test_daemon_set_pods_stay_with_kubectls_warning() -> None:
    first, drained = drain([daemon_set(), web(2)])
    (result,) = drained.drains
    (agent,) = [k for k in on(first, "pool-1") if k.startswith("default/agent-")]
    assert result.complete and on(drained, "pool-1") == [agent]
    assert drained.events[-1] == (
        f"drain pool-1: Warning: ignoring DaemonSet-managed Pods: {agent}"
    )


# ------------------------------------------------------------------ kubectl's filters


def test_a_pod_without_a_controller_stops_the_drain_of_its_node_without_force() -> None:
    first, drained = drain([web(4), bare()])
    (result,) = drained.drains
    assert result.evicted == [] and result.errors == [
        "cannot delete Pods that declare no controller (use --force to override): default/bare"
    ]
    assert drained.events == [
        "cordoned pool-1",
        "drain pool-1 failed: evicted no pods; cannot delete Pods that declare no controller "
        "(use --force to override): default/bare",
    ]
    # Nothing was evicted; the node stays cordoned.
    assert on(drained, "pool-1") == on(first, "pool-1")
    assert drained.topology[0][0].spec.unschedulable


def test_force_evicts_pods_without_a_controller_with_kubectls_warning() -> None:
    _, drained = drain([web(4), bare()], {"nodes": ["pool-1"], "force": True})
    (result,) = drained.drains
    assert result.complete and "default/bare" in result.evicted
    assert "default/bare" not in drained.bound  # nothing recreates it
    assert (
        drained.events[-1]
        == "drain pool-1: Warning: deleting Pods that declare no controller: default/bare"
    )


def test_a_pod_of_a_missing_daemon_set_is_refused_unless_forced() -> None:
    orphan = bare("orphan")
    orphan["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "gone", "controller": True}
    ]
    _, refused = drain([web(2), orphan])
    assert refused.drains[0].errors == [
        'cannot delete daemonsets.apps "gone" not found: default/orphan'
    ]
    assert refused.bound["default/orphan"] == "pool-1"
    _, forced = drain([web(2), orphan], {"node": "pool-1", "force": True})
    assert forced.drains[0].complete and "default/orphan" not in forced.bound
    # Only the last filter's verdict is kept, and the later filters find the pod Okay: kubectl
    # loses this warning (filters.go says so), and so do we.
    assert forced.drains[0].warnings == []


def test_pods_with_empty_dir_need_delete_empty_dir_data() -> None:
    volumes = [{"name": "scratch", "emptyDir": {}}]
    _, refused = drain([web(2, volumes=volumes)])
    assert (
        refused.drains[0]
        .errors[0]
        .startswith(
            "cannot delete Pods with local storage (use --delete-emptydir-data to override): "
        )
    )
    _, drained = drain([web(2, volumes=volumes)], {"node": "pool-1", "deleteEmptyDirData": True})
    assert drained.drains[0].complete and len(drained.drains[0].evicted) == 1


def test_the_text_report_names_blocked_drains_in_its_summary() -> None:
    report = run({"nodeGroups": NODES, "objects": [web(4), pdb(minAvailable=4)], "timeline": [
        {"drain": "pool-1"}]})  # fmt: skip
    text = timeline_text(report)
    assert "drain pool-1 incomplete: 2 pods blocked by PodDisruptionBudget default/web-pdb" in text
    assert text.endswith("Drains left pods on their nodes: step 1.")


# ------------------------------------------------------------------ errors

BAD_DRAINS = {
    "force not a boolean": (
        {"drain": {"node": "pool-1", "force": "yes"}},
        't.yaml: timeline[0] (drain): force: Invalid value: "yes": expected true or false '
        "(kubectl drain --force)",
    ),
    "no node": (
        {"drain": {"force": True}},
        "t.yaml: timeline[0] (drain): give exactly one of node or nodes",
    ),
    "unknown option": (
        {"drain": {"node": "pool-1", "gracePeriod": 3}},
        "t.yaml: timeline[0] (drain): gracePeriod: unknown field; expected node, nodes, force, "
        "disableEviction, deleteEmptyDirData",
    ),
}


@pytest.mark.parametrize("step, message", BAD_DRAINS.values(), ids=BAD_DRAINS.keys())
def test_bad_drain_arguments_name_the_step_and_field(step: Any, message: str) -> None:
    with pytest.raises(TopospreadError) as err:
        parse_timeline({"nodeGroups": NODES, "timeline": [step]}, "t.yaml")
    assert str(err.value) == message


BAD_BUDGETS = {
    "both set": (
        {"minAvailable": 1, "maxUnavailable": 1},
        'spec: Invalid value: {"MinAvailable":1,"Selector":{"matchLabels":{"app":"web"}},'
        '"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: minAvailable and '
        "maxUnavailable cannot be both set",
    ),
    "both set, percentages, a policy and expressions": (
        {
            "minAvailable": "50%",
            "maxUnavailable": "10%",
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
            "selector": {
                "matchLabels": {"tier": "a", "app": "web"},
                "matchExpressions": [
                    {"key": "k", "operator": "Exists"},
                    {"key": "v", "operator": "In", "values": ["x<y"]},
                ],
            },
        },
        'spec: Invalid value: {"MinAvailable":"50%","Selector":{"matchLabels":{"app":"web",'
        '"tier":"a"},"matchExpressions":[{"key":"k","operator":"Exists"},{"key":"v",'
        '"operator":"In","values":["x\\u003cy"]}]},"MaxUnavailable":"10%",'
        '"UnhealthyPodEvictionPolicy":"AlwaysAllow"}: minAvailable and maxUnavailable cannot '
        "be both set",
    ),
    "not a percentage": (
        {"minAvailable": "half"},
        "spec.minAvailable: Invalid value: \"half\": must be an integer or percentage (e.g '5%')",
    ),
    "over 100%": (
        {"maxUnavailable": "120%"},
        'spec.maxUnavailable: Invalid value: "120%": must not be greater than 100%',
    ),
    "negative": (
        {"minAvailable": -1},
        "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
    ),
}


@pytest.mark.parametrize("spec, message", BAD_BUDGETS.values(), ids=BAD_BUDGETS.keys())
def test_an_invalid_budget_exits_2_naming_the_budget_and_field(
    spec: dict[str, Any], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"nodeGroups": NODES, "objects": [pdb(**spec)]}
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, err = cli(["simulate", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.strip().endswith(f"objects[0] (PodDisruptionBudget default/web-pdb): {message}")
