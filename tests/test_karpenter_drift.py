"""Karpenter's drift (autoscaler/karpenter/drift.py): a NodePool applied by the timeline whose
template or requirements changed makes the nodes launched from it drift, and the disruption
controller replaces them one command at a time within the Drifted budgets."""

from __future__ import annotations

from typing import Any

import pytest

from test_autoscaling import ZONE, changes, run, web
from test_karpenter_termination import pdb
from topospread.api.types import Node, ObjectMeta
from topospread.autoscaler.karpenter.drift import (
    NODEPOOL_DRIFTED,
    REQUIREMENTS_DRIFTED,
    drift_reason,
    launch_key,
)
from topospread.autoscaler.karpenter.nodepool import parse_nodepool
from topospread.errors import ManifestError

ON_DEMAND = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}


def requirements(*zones: str) -> list[dict[str, Any]]:
    return [{"key": ZONE, "operator": "In", "values": list(zones)}, ON_DEMAND]


def manifest(
    zones: tuple[str, ...] = ("zone-a", "zone-b"), labels: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {
            "nodeClassRef": {"group": "topospread", "kind": "NodeClass", "name": "default"},
            "requirements": requirements(*zones),
            **spec,
        }
    }
    if labels:
        template["metadata"] = {"labels": labels}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"template": template, "disruption": {"consolidateAfter": "0s"}},
    }


def rollout(applied: dict[str, Any], *objects: dict[str, Any]) -> dict[str, Any]:
    """Four 1.5-CPU web pods spread over two zones (a node in each), the NodePool applied
    again at 3m."""
    pool = {"name": "default", "requirements": requirements("zone-a", "zone-b")}
    return {
        "autoscaler": {"karpenter": {"nodePools": [pool]}},
        "objects": [web(4, cpu="1500m"), *objects],
        "timeline": [{"wait": "3m"}, {"apply": applied}, {"wait": "10m"}],
    }


def times(report: Any, action: str) -> list[tuple[float, str]]:
    return [(float(c["time"]), c["node"]) for c in changes(report, action)]


def test_a_changed_template_replaces_every_node_one_command_at_a_time() -> None:
    report = run(rollout(manifest(labels={"team": "a"})))
    assert report.steps[2].events == ["nodepool.karpenter.sh/default configured"]
    # Launched at 1s, one per zone. Drifted from 3m; the disruption poll at 3m10s launches a
    # replacement (the 10% budget allows one node of two), Ready a minute later; the old node
    # goes 10s after its drain begins, and the next poll replaces the other.
    assert times(report, "add") == [
        (1.0, "default-00001"),
        (1.0, "default-00002"),
        (190.0, "default-00003"),
        (270.0, "default-00004"),
    ]
    assert times(report, "remove") == [(260.0, "default-00001"), (340.0, "default-00002")]
    (first, _) = changes(report, "remove")
    assert first["reason"] == (
        "removed default-00001: drift: replace default-00001 (Drifted), replaced by m6g.xlarge "
        "on-demand in zone-b"
    )
    last = report.steps[-1]
    assert last.pending == {} and last.node_groups == {"default": 2} and not last.violations


def test_only_the_nodes_outside_the_new_requirements_drift() -> None:
    report = run(rollout(manifest(zones=("zone-a",))))
    (added,) = [c for c in changes(report, "add") if float(c["time"]) > 180]
    (removed,) = changes(report, "remove")
    assert (removed["node"], removed["zone"]) == ("default-00001", "zone-b")
    assert (added["zone"], float(added["time"])) == ("zone-a", 190.0)
    assert report.steps[-1].node_groups == {"default": 2}


def test_the_same_nodepool_applied_again_changes_nothing() -> None:
    report = run(rollout(manifest()))
    assert report.steps[2].events == ["nodepool.karpenter.sh/default unchanged"]
    assert changes(report, "remove") == []


@pytest.mark.parametrize(("grace", "replaced"), [(None, False), ("1h", True)])
def test_a_node_whose_budget_blocks_eviction_drifts_only_with_a_termination_grace_period(
    grace: str | None, replaced: bool
) -> None:
    # minAvailable 4 of 4: no pod may be evicted. Drift is eventual: such a node is still a
    # candidate when its NodePool bounds the drain with a terminationGracePeriod.
    spec = {"terminationGracePeriod": grace} if grace else {}
    doc = rollout(manifest(labels={"team": "a"}, **spec), pdb(4))
    report = run(doc)
    replacements = [c for c in changes(report, "add") if float(c["time"]) > 180]
    assert bool(replacements) is replaced


def test_a_nodepool_needs_karpenter_in_the_loop() -> None:
    doc = rollout(manifest())
    del doc["autoscaler"]
    doc["nodeGroups"] = [{"name": "n", "zones": ["zone-a"], "perZone": {"zone-a": 1}}]
    with pytest.raises(ManifestError) as err:
        run(doc)
    assert str(err.value) == (
        "t.yaml: timeline[1] (apply)[0] (NodePool default): a NodePool is Karpenter's: the "
        "scenario's autoscaler section has no karpenter"
    )


def _node(**labels: str) -> Node:
    return Node(metadata=ObjectMeta(name="n", labels={"karpenter.sh/nodepool": "p", **labels}))


def test_drift_reasons_follow_the_template_key_and_the_requirements() -> None:
    pool = parse_nodepool({"name": "p", "requirements": requirements("zone-a")}, "t.yaml")
    same = parse_nodepool({"name": "p", "expireAfter": "43200m"}, "t.yaml")
    assert same.template_key == parse_nodepool({"name": "p"}, "t.yaml").template_key
    in_a = _node(**{ZONE: "zone-a", "karpenter.sh/capacity-type": "on-demand"})
    in_b = _node(**{ZONE: "zone-b", "karpenter.sh/capacity-type": "on-demand"})
    assert drift_reason(in_a, pool, launch_key(pool)) == ""
    assert drift_reason(in_b, pool, launch_key(pool)) == REQUIREMENTS_DRIFTED
    assert drift_reason(in_a, pool, ("another", "")) == NODEPOOL_DRIFTED
    # A label the node does not carry at all (the model's nodes have no instance family)
    # is not taken for drift.
    family = {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["c5"]}
    wide = parse_nodepool(
        {"name": "p", "requirements": [*requirements("zone-a"), family]}, "t.yaml"
    )
    assert drift_reason(in_a, wide, launch_key(wide)) == ""


def test_the_drift_example_rolls_every_node_with_the_spread_kept() -> None:
    from test_autoscaling import example

    report = example("autoscaler-drift-karpenter.yaml")
    removed = [
        (float(c.time) / 1e9, c.node)
        for s in report.steps
        for c in s.autoscaler
        if c.action == "remove"
    ]
    assert removed == [(380.0, "default-00001"), (460.0, "default-00002"), (540.0, "default-00003")]
    last = report.steps[-1]
    assert last.pending == {} and not last.violations
    assert all(s.violations == [] for s in report.steps)


def test_a_candidate_is_drained_as_soon_as_its_replacement_has_started_up() -> None:
    # The disruption queue hears of the replacement's initialization at once, not at the
    # controller's next 10s poll (upstream: Queue.Reconcile, woken by the nodeclaim's update).
    doc = rollout(manifest(labels={"team": "a"}))
    doc["autoscaler"]["nodeStartupDelay"] = "45s"
    report = run(doc)
    assert times(report, "add")[2] == (190.0, "default-00003")
    # Ready at 3m55s: drained then, gone 10s later (not at the poll of 4m0s, plus 10s).
    assert times(report, "remove")[0] == (245.0, "default-00001")


def test_a_node_class_counts_only_when_both_nodepools_give_one() -> None:
    # The short form has no node class: a manifest applied over it (which must name one)
    # does not make every node drift; two manifests naming different classes do.
    short = parse_nodepool({"name": "default"}, "t.yaml")
    ec2 = manifest()
    ec2["spec"]["template"]["spec"]["nodeClassRef"] = {
        "group": "karpenter.k8s.aws",
        "kind": "EC2NodeClass",
        "name": "default",
    }
    applied = parse_nodepool(ec2, "t.yaml")
    other = dict(ec2["spec"]["template"]["spec"]["nodeClassRef"], name="gpu")
    ec2["spec"]["template"]["spec"]["nodeClassRef"] = other
    gpu = parse_nodepool(ec2, "t.yaml")
    node = _node(**{ZONE: "zone-a", "karpenter.sh/capacity-type": "on-demand"})
    assert drift_reason(node, applied, launch_key(short)) == ""
    assert drift_reason(node, gpu, launch_key(applied)) == NODEPOOL_DRIFTED
