"""The ``topospread sweep`` and ``topospread rebalance`` inputs of the end-to-end benchmarks:
timeline_scenario.py's node group and Deployments sized to a number of nodes and pods, with no
timeline of their own; the sweep's as cluster-autoscaler keeps it (SweepZonesAutoscaler), with
its ``autoscaler:`` section; and the rebalance input, a fourth zone joining under skewed
Deployments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import yaml
from kube_objects import ZONE
from timeline_scenario import TIMELINE_APPS, TIMELINE_ZONES, node_group, spread_deployments


def sweep_cluster(nodes: int, pods: int) -> dict[str, Any]:
    """A ``topospread sweep`` input: the timeline's node group and Deployments, sized to
    ``nodes`` over the three zones (the first zones take the remainder) and ``pods`` over the
    ten Deployments, with no timeline of its own (the sweep's failures start from the settled
    cluster)."""
    per_zone = {
        zone: nodes // len(TIMELINE_ZONES) + (i < nodes % len(TIMELINE_ZONES))
        for i, zone in enumerate(TIMELINE_ZONES)
    }
    return {
        "nodeGroups": [node_group(per_zone)],
        "objects": spread_deployments(pods // TIMELINE_APPS),
    }


def write_sweep_cluster(path: Path, nodes: int, pods: int) -> tuple[int, int]:
    """Write the sweep's input; returns its (nodes, pods)."""
    doc = sweep_cluster(nodes, pods)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    written_nodes = sum(doc["nodeGroups"][0]["perZone"].values())
    return written_nodes, sum(int(d["spec"]["replicas"]) for d in doc["objects"])


def autoscaled_sweep_cluster(nodes: int, pods: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sweep's cluster as cluster-autoscaler keeps one, and its ``autoscaler:`` section:
    each pod asks for 1.2 CPU (ten a 16-CPU node: 75%, above the default
    scale-down-utilization-threshold of 0.5, so no packed node is a scale-down candidate); the
    zone constraints honour taints (``nodeTaintsPolicy: Honor``, the docs' remedy: a lost
    zone's tainted nodes leave the domains); a surviving node's 4 spare CPUs hold three of a
    lost zone's pods, so about two fifths of them stay Pending and the autoscaler scales the
    surviving zones' groups up; and the node group is autoscaled, one group per zone
    (``node-zone-a``, ...) of up to twice its nodes."""
    doc = sweep_cluster(nodes, pods)
    for d in doc["objects"]:
        spec = d["spec"]["template"]["spec"]
        for c in spec["containers"]:
            c["resources"]["requests"]["cpu"] = "1200m"
        for t in spec["topologySpreadConstraints"]:
            if t["topologyKey"] == ZONE:
                t["nodeTaintsPolicy"] = "Honor"
    most = 2 * max(doc["nodeGroups"][0]["perZone"].values())
    section = {
        "clusterAutoscaler": {"nodeGroups": [{"nodeGroup": "node", "minSize": 0, "maxSize": most}]}
    }
    return doc, section


def write_autoscaled_sweep_cluster(
    path: Path, section_path: Path, nodes: int, pods: int
) -> tuple[int, int]:
    """Write the autoscaled sweep's input and its autoscaler section; returns (nodes, pods)."""
    doc, section = autoscaled_sweep_cluster(nodes, pods)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    section_path.write_text(yaml.safe_dump(section, sort_keys=False), encoding="utf-8")
    written_nodes = sum(doc["nodeGroups"][0]["perZone"].values())
    return written_nodes, sum(int(d["spec"]["replicas"]) for d in doc["objects"])


REBALANCE_SKEWED: Final = 3


def rebalance_cluster(nodes: int, pods: int) -> dict[str, Any]:
    """A ``topospread rebalance`` input: the sweep's cluster (its Deployments kept to its three
    zones by required node affinity, so a new zone is not theirs), ``REBALANCE_SKEWED`` small
    Deployments of 6 replicas spread by zone (DoNotSchedule), then a fourth zone of two nodes
    joins: each small Deployment goes 2/2/2/0, past its maxSkew of 1, and needs one eviction."""
    doc = sweep_cluster(nodes, pods)
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": ZONE, "operator": "In", "values": list(TIMELINE_ZONES)}
                        ]
                    }
                ]
            }
        }
    }
    for d in doc["objects"]:
        d["spec"]["template"]["spec"]["affinity"] = affinity
    for i in range(REBALANCE_SKEWED):
        app = f"skewed-{i}"
        selector = {"matchLabels": {"app": app}}
        doc["objects"].append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": app, "namespace": "default"},
                "spec": {
                    "replicas": 6,
                    "selector": selector,
                    "template": {
                        "metadata": {"labels": {"app": app}},
                        "spec": {
                            "containers": [{"name": app, "image": f"registry.example.com/{app}:1"}],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": ZONE,
                                    "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": selector,
                                    "matchLabelKeys": ["pod-template-hash"],
                                }
                            ],
                        },
                    },
                },
            }
        )
    extra = node_group({"zone-d": 0})
    extra["name"] = "extra"
    extra["zones"] = ["zone-d"]
    doc["nodeGroups"].append(extra)
    doc["timeline"] = [
        {"name": "zone-d joins", "addNodes": {"group": "extra", "zone": "zone-d", "count": 2}}
    ]
    return doc


def write_rebalance_cluster(path: Path, nodes: int, pods: int) -> tuple[int, int]:
    """Write the rebalance input; returns its (nodes, pods) before zone-d joins."""
    doc = rebalance_cluster(nodes, pods)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    written_nodes = sum(doc["nodeGroups"][0]["perZone"].values())
    return written_nodes, sum(int(d["spec"]["replicas"]) for d in doc["objects"])
