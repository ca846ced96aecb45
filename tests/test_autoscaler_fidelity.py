"""Where the autoscaler loop follows upstream past the models' own decisions: nodes that other
steps add or remove in an autoscaled group, the pods' age (new-pod-scale-up-delay), launches
that hit a stock-out, and scale-downs whose drain the Eviction API refuses."""

from __future__ import annotations

from typing import Any

import jsonschema

from test_autoscaling import KARPENTER, changes, run, scale_from_zero, web
from topospread.render.schemas import load_schema
from topospread.simulator.cloud import Stockout as CloudStockout
from topospread.simulator.karpenter_loop import KarpenterController
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline
from topospread.simulator.timeline_steps.waiting import settle_with_autoscaler

SECOND = 1_000_000_000
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"


def pdb(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    }


def pinned(name: str, replicas: int, hosts: list[str], cpu: str = "100m") -> dict[str, Any]:
    """A Deployment of ``cpu`` pods kept to ``hosts`` (anywhere when none)."""
    term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": hosts}]}
    affinity = (
        {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
        if hosts
        else {}
    )
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
                        {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": cpu}}}
                    ],
                    "affinity": affinity,
                },
            },
        },
    }


def two_budgets(timeline: list[Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
    """web's pod on node-1 is under two budgets: the eviction subresource refuses it (500)
    while cluster-autoscaler's own check lets node-1 go; node-3 empties at 1m. Its removal,
    simulated while its pod was there, failed; --unremovable-node-recheck-timeout is 10s
    here (upstream's 5m would hold node-3 back until 5m10s), so it is unneeded from 1m10s."""
    return {
        "nodeGroups": [{"name": "node", "count": 3}],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {
                "options": {"unremovable-node-recheck-timeout": "10s", **(options or {})},
                "nodeGroups": [{"nodeGroup": "node", "maxSize": 3}],
            },
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
            *timeline,
        ],
    }


def test_a_scale_down_the_eviction_api_refuses_retries_for_2m_then_keeps_the_node() -> None:
    # Two budgets over web's pods: cluster-autoscaler's PDB tracker lets node-1 go (each
    # budget allows one disruption) but the eviction subresource refuses a pod with more than
    # one budget. Upstream (actuation/drain.go): the drain, started at 10m10s, retries the
    # eviction every 10s until --max-pod-eviction-time (2m) and fails at 12m10s; the node
    # stays, untainted, unneeded afresh. The drain runs after StartDeletion returned, so its
    # failure does not set off --scale-down-delay-after-failure: node-3, unneeded since 1m10s,
    # goes at 11m10s, during the drain. (This test asserted a failure at 10m10s and node-3 at
    # 13m10s when the model gave up at the first refusal and paused scale-down for it.)
    report = run(two_budgets([{"wait": "15m"}]))
    (draining,) = changes(report, "draining")
    assert draining["time"] == 610.0  # unneeded since the first tick (10s), 10m later
    (blocked,) = changes(report, "blocked")
    assert blocked["time"] == 730.0  # 2m of retries later
    assert blocked["node"] == draining["node"]
    assert blocked["node"] in ("node-1", "node-2")
    assert "more than one PodDisruptionBudget" in blocked["reason"]
    (removed,) = changes(report, "remove")
    assert (removed["node"], removed["time"]) == ("node-3", 670.0)
    assert report.to_json()["steps"][-1]["nodeGroups"] == {"node": 2}
    assert report.steps[-1].pending == {}
    last = report.steps[-1]
    assert blocked["node"] in {n for n in last.bound.values()}


def zonal(replicas: int, timeline: list[Any]) -> dict[str, Any]:
    """Three one-node zones (an autoscaled group each) and a zonal DoNotSchedule spread."""
    return {
        "nodeGroups": [
            {
                "name": "node",
                "zones": ["zone-a", "zone-b", "zone-c"],
                "perZone": {"zone-a": 1, "zone-b": 1, "zone-c": 1},
                "template": {"status": {"capacity": {"cpu": "1", "pods": "110"}}},
            }
        ],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {
                "options": {"scale-down-enabled": False},
                "nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 5}],
            },
        },
        "objects": [web(replicas, cpu="600m", minDomains=3)],
        "timeline": timeline,
    }


def test_a_node_added_by_a_step_raises_the_groups_target_size_and_a_scale_up_counts_from_it() -> (
    None
):
    # addNodes in an autoscaled group is an instance someone added to it: the cloud's target
    # size follows (upstream reads TargetSize from the cloud), so the next scale-up asks for
    # one more than the group has, and the cloud creates it.
    doc = {
        "nodeGroups": [
            {"name": "node", "count": 1, "template": {"status": {"capacity": {"cpu": "1"}}}}
        ],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "maxSize": 5}]},
        },
        "objects": [pinned("web", 1, [], cpu="600m")],
        "timeline": [
            {"addNodes": {"group": "node"}},
            {"wait": "10s"},
            {"scale": {"workload": "deployment/web", "replicas": 3}},
            {"wait": "10s"},
        ],
    }
    report = run(doc)
    (followed,) = changes(report, "targetSize")
    assert (followed["group"], followed["node"], followed["time"]) == ("node", "node-2", 10.0)
    assert "target size 1->2" in followed["reason"]
    (up,) = changes(report, "scaleUp")
    assert up["time"] == 20.0 and "node 2->3" in up["reason"]
    (added,) = changes(report, "add")
    assert added["node"] == "node-3"
    assert report.steps[-1].pending == {}
    assert report.to_json()["steps"][-1]["nodeGroups"] == {"node": 3}


def test_a_deleted_node_object_leaves_its_instance_unregistered_until_max_node_provision_time() -> (
    None
):
    # removeNode deletes the Node object; the instance runs on. Upstream counts it as an
    # upcoming node (no scale-up for the pods it held) and deletes it once unregistered for
    # longer than max-node-provision-time (15m), then scales up for the pods.
    report = run(zonal(3, [{"removeNode": "node-zone-c-1"}, {"wait": "16m"}]))
    assert [c["time"] for c in changes(report, "unregistered")] == [10.0]
    (removed,) = changes(report, "remove")
    assert removed["node"] == "node-zone-c-1" and removed["time"] == 920.0
    assert "removing unregistered node node-zone-c-1" in removed["reason"]
    (up,) = changes(report, "scaleUp")
    assert up["time"] == 920.0 and "node-zone-c 0->1" in up["reason"]
    (added,) = changes(report, "add")
    assert added["node"] == "node-zone-c-2" and added["time"] == 920.0
    assert report.steps[-1].pending == {}
    # 15m in, the pod still waited for the unregistered instance.
    waited = run(zonal(3, [{"removeNode": "node-zone-c-1"}, {"wait": "15m"}]))
    assert changes(waited, "add") == [] and len(waited.steps[-1].pending) == 1


def test_a_lost_node_stays_registered_and_is_not_replaced() -> None:
    report = run(zonal(3, [{"loseNode": "node-zone-c-1"}, {"wait": "2m"}]))
    assert changes(report, "add") == [] and changes(report, "unregistered") == []
    assert report.to_json()["steps"][-1]["nodeGroups"]["node-zone-c"] == 1


def test_pods_younger_than_new_pod_scale_up_delay_trigger_no_scale_up() -> None:
    # The controllers' pods carry a creationTimestamp on the simulation's clock; with a 30s
    # delay the pod created at 0 is considered at the first tick past 30s (age > delay).
    autoscaler = {
        "clusterAutoscaler": {
            "options": {"new-pod-scale-up-delay": "30s"},
            "nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 3}],
        }
    }
    report = run(scale_from_zero(autoscaler, [{"wait": "1m"}]))
    (up,) = changes(report, "scaleUp")
    assert up["time"] == 40.0
    # A pod a later step creates is young from then on: created at 2m, considered at 2m40s.
    timeline = [{"wait": "2m"}, {"apply": pinned("big", 1, [], cpu="3950m")}, {"wait": "1m"}]
    report = run(scale_from_zero(autoscaler, timeline))
    assert [c["time"] for c in changes(report, "scaleUp")] == [40.0, 160.0]


def test_the_api_server_stamps_created_pods_with_the_clock_and_input_pods_keep_theirs() -> None:
    doc = scale_from_zero(
        {"clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "maxSize": 3}]}}
    )
    doc["objects"].append(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "own", "creationTimestamp": "2020-01-01T00:00:00Z"},
            "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
        }
    )
    sim = Simulation(parse_timeline(doc, "t.yaml"))
    sim.settle("t.yaml")
    stamps = {p.metadata.name: p.metadata.creation_timestamp for p in sim.pods.values()}
    assert stamps.pop("own") == "2020-01-01T00:00:00Z"
    # The clock's 0 is the latest time the input records (the cluster was read no earlier):
    # here the input pod's creation, so the pods created at the start carry that time.
    assert stamps and set(stamps.values()) == {"2020-01-01T00:00:00Z"}


def test_input_pods_created_after_the_default_epoch_are_not_young_to_the_autoscaler() -> None:
    # A cluster read in 2026 whose pods were created then: with the clock's 0 at the Unix
    # epoch they would be 56 years in the future and new-pod-scale-up-delay would hold them
    # back for ever; the clock starts at the latest recorded time, so they are 0s old.
    doc = scale_from_zero(
        {
            "clusterAutoscaler": {
                "options": {"new-pod-scale-up-delay": "30s"},
                "nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 3}],
            }
        },
        [{"wait": "1m"}],
    )
    doc["objects"] = [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "read", "creationTimestamp": "2026-11-26T10:00:00Z"},
            "spec": {
                "nodeSelector": {"topology.kubernetes.io/zone": "zone-c"},
                "containers": [{"name": "c", "image": "nginx:1"}],
            },
        }
    ]
    report = run(doc)
    (up,) = changes(report, "scaleUp")
    assert up["time"] == 40.0


def test_karpenter_learns_of_a_stockout_only_when_its_launch_fails_and_retries_after_3m() -> None:
    # Karpenter picks zone-c (it cannot know of the stock-out). Each launch asks the fleet for
    # one capacity type (the AWS provider's getCapacityType): spot first, without the spot
    # offerings dearer than the cheapest on-demand one (SpotOfferingFilter). The cloud refuses
    # them, they go into the unavailable-offerings cache for 3m, the nodeclaim is deleted, and
    # the next batch (1s later) falls back to on-demand, then to the dearer spot offerings,
    # until every zone-c offering is cached and the pod finds none (4s). After the cache's TTL
    # the same three launches are refused again (3m10s), and once the stock-out is over the
    # pod launches.
    timeline = [{"stockout": {"zone": "zone-c", "duration": "4m"}}, {"wait": "8m"}]
    report = run(scale_from_zero(KARPENTER, timeline))
    failed = changes(report, "launchFailed")
    assert [(c["time"], c["zone"]) for c in failed] == [
        (1.0, "zone-c"),
        (2.0, "zone-c"),
        (3.0, "zone-c"),
        (190.0, "zone-c"),
        (191.0, "zone-c"),
        (192.0, "zone-c"),
    ]
    assert "insufficient capacity for t3.medium spot in zone-c" in failed[0]["reason"]
    assert "no new nodes in zone zone-c" in failed[0]["reason"]
    assert "insufficient capacity for t3.medium on-demand in zone-c" in failed[1]["reason"]
    assert "insufficient capacity for r5.large spot in zone-c" in failed[2]["reason"]
    (why,) = [c for c in changes(report, "noScaleUp") if c["time"] == 4.0]
    assert "topology.kubernetes.io/zone In [zone-c]" in why["reason"]
    (added,) = changes(report, "add")
    assert (added["time"], added["zone"]) == (370.0, "zone-c")
    assert report.steps[-1].pending == {}


def test_a_launch_skips_the_offerings_the_cloud_refuses_and_caches_them() -> None:
    # Only t3.medium is out in zone-c: the launch takes the next cheapest offering there.
    sim = Simulation(parse_timeline(scale_from_zero(KARPENTER, []), "t.yaml"))
    sim.settle("t.yaml")
    sim.cloud.stockouts.append(CloudStockout("zone-c", "t3.medium", 0, 3600 * SECOND))
    assert settle_with_autoscaler(sim, 5 * 60 * SECOND, "t.yaml") is not None
    assert isinstance(sim.autoscaler, KarpenterController)
    (added,) = [c for c in sim.autoscaler.changes if c.action == "add"]
    assert added.time == 1 * SECOND and added.zone == "zone-c"
    assert "t3.medium" not in added.reason
    assert [c for c in sim.autoscaler.changes if c.action == "launchFailed"] == []
    cache = sim.autoscaler.model.unavailable
    assert cache.is_unavailable(1.0, "t3.medium", "zone-c", "spot")
    assert not cache.is_unavailable(181.0, "t3.medium", "zone-c", "spot")


def test_the_new_actions_validate_against_the_simulate_schema() -> None:
    reports = [
        run(
            scale_from_zero(
                KARPENTER, [{"stockout": {"zone": "zone-c", "duration": "4m"}}, {"wait": "4m"}]
            )
        ),
        run(
            zonal(
                3,
                [
                    {"removeNode": "node-zone-c-1"},
                    {"addNodes": {"group": "node", "zone": "zone-a"}},
                    {"wait": "16m"},
                ],
            )
        ),
    ]
    seen = set()
    for report in reports:
        out = report.to_json()
        jsonschema.validate(out, load_schema("simulate"))
        seen |= {c["action"] for s in out["steps"] for c in s.get("autoscaler", [])}
    assert {"launchFailed", "targetSize", "unregistered"} <= seen


def zone_c_workload(lost: list[str]) -> dict[str, Any]:
    """Four one-cpu nodes per zone, a Deployment pinned to zone-c, and ``lost`` zones."""
    pinned_c = pinned("c", 4, [], cpu="600m")
    pinned_c["spec"]["template"]["spec"]["nodeSelector"] = {ZONE: "zone-c"}
    return {
        "nodeGroups": [
            {
                "name": "node",
                "zones": ["zone-a", "zone-b", "zone-c"],
                "perZone": {"zone-a": 4, "zone-b": 4, "zone-c": 4},
                "template": {"status": {"capacity": {"cpu": "1", "pods": "110"}}},
            }
        ],
        "autoscaler": {
            "nodeStartupDelay": "0s",
            "clusterAutoscaler": {
                "options": {"scale-down-enabled": False},
                "nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": 8}],
            },
        },
        "objects": [pinned_c],
        "timeline": [*({"loseZone": z} for z in lost), {"wait": "6m"}],
    }


def test_a_lost_zones_group_is_not_ready_for_scale_up() -> None:
    # Its four nodes are unready: more than ok-total-unready-count (3) and 45% of the group.
    # The cluster (4 of 12 unready, 33%) is healthy; the evicted pods trigger no scale-up.
    report = run(zone_c_workload(["zone-c"]))
    assert changes(report, "scaleUp") == [] and changes(report, "unhealthy") == []
    why = changes(report, "noScaleUp")
    assert why and "node-zone-c: not ready for scale-up" in why[0]["reason"]
    assert len(report.steps[-1].pending) == 4


def test_too_many_unready_nodes_stop_cluster_autoscaler() -> None:
    # 8 of 12 nodes unready: past both limits; upstream does nothing ("Cluster is not ready
    # for autoscaling") until enough come back.
    report = run(zone_c_workload(["zone-b", "zone-c"]))
    (unhealthy,) = changes(report, "unhealthy")
    assert unhealthy["time"] == 10.0 and "not ready for autoscaling" in unhealthy["reason"]
    assert changes(report, "scaleUp") == [] and changes(report, "noScaleUp") == []
