"""Where the autoscaler loop follows upstream past the models' own decisions: nodes that other
steps add or remove in an autoscaled group, the pods' age (new-pod-scale-up-delay), launches
that hit a stock-out, and scale-downs whose drain the Eviction API refuses."""

from __future__ import annotations

from typing import Any

from test_autoscaling import changes, run

SECOND = 1_000_000_000
HOSTNAME = "kubernetes.io/hostname"


def pdb(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }


def pinned(name: str, replicas: int, hosts: list[str]) -> dict[str, Any]:
    """A Deployment of 100m pods kept to ``hosts``."""
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": hosts}]}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1",
                            "resources": {"requests": {"cpu": "100m"}},
                        }
                    ],
                    "affinity": {
                        "nodeAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [term]
                            }
                        }
                    },
                },
            },
        },
    }


def test_a_scale_down_the_eviction_api_refuses_keeps_the_node_and_waits_out_the_failure_delay() -> (
    None
):
    # Two budgets over web's pods: cluster-autoscaler's PDB tracker lets node-1 go (each
    # budget allows one disruption) but the eviction subresource refuses a pod with more than
    # one budget, so the drain fails. Upstream: the node stays, untainted, unneeded afresh, and
    # scale-down waits --scale-down-delay-after-failure (3m): node-3, unneeded since 1m10s and
    # removable from 11m10s, goes only at 13m10s.
    doc = {
        "nodeGroups": [{"name": "node", "count": 3}],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "maxSize": 3}]},
        },
        "objects": [
            pinned("web", 2, ["node-1", "node-2"]),
            pinned("other", 1, ["node-3"]),
            pdb("a"),
            pdb("b"),
        ],
        "timeline": [
            {"wait": "1m"},
            {"scale": {"workload": "deployment/other", "replicas": 0}},
            {"wait": "15m"},
        ],
    }
    report = run(doc)
    (blocked,) = changes(report, "blocked")
    assert blocked["time"] == 610.0  # unneeded since the first tick (10s), 10m later
    assert blocked["node"] in ("node-1", "node-2")
    assert "more than one PodDisruptionBudget" in blocked["reason"]
    (removed,) = changes(report, "remove")
    assert (removed["node"], removed["time"]) == ("node-3", 790.0)
    assert report.to_json()["steps"][-1]["nodeGroups"] == {"node": 2}
    assert report.steps[-1].pending == {}
    last = report.steps[-1]
    assert blocked["node"] in {n for n in last.bound.values()}
