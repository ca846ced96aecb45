"""The ``topospread simulate`` scenarios of the end-to-end benchmarks (SimulateTimeline and the
HTML report's): a node group over three zones, Deployments with zone and hostname spread
constraints, and a timeline (scale up, rollout, loss of a zone, wait, restore). sweep_inputs.py
sizes the same node group and Deployments for the sweep and rebalance runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import yaml
from kube_objects import HOSTNAME, ZONE

TIMELINE_ZONES: Final = ("zone-a", "zone-b", "zone-c")
TIMELINE_APPS: Final = 10


def spread_deployments(replicas: int) -> list[dict[str, Any]]:
    """``TIMELINE_APPS`` Deployments of ``replicas`` pods each (200m CPU, 256Mi): half spread over
    zones hard (DoNotSchedule), half soft; all soft over hostnames; both count each revision on
    its own (matchLabelKeys: [pod-template-hash])."""
    objects = []
    for i in range(TIMELINE_APPS):
        app = f"app-{i}"
        selector = {"matchLabels": {"app": app}}
        objects.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": app, "namespace": "default"},
                "spec": {
                    "replicas": replicas,
                    "selector": selector,
                    "template": {
                        "metadata": {"labels": {"app": app}},
                        "spec": {
                            "containers": [
                                {
                                    "name": app,
                                    "image": f"registry.example.com/{app}:1.0.0",
                                    "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}},
                                }
                            ],
                            "topologySpreadConstraints": [
                                {
                                    "maxSkew": 1,
                                    "topologyKey": ZONE,
                                    "whenUnsatisfiable": "DoNotSchedule"
                                    if i % 2 == 0
                                    else "ScheduleAnyway",
                                    "labelSelector": selector,
                                    "matchLabelKeys": ["pod-template-hash"],
                                },
                                {
                                    "maxSkew": 1,
                                    "topologyKey": HOSTNAME,
                                    "whenUnsatisfiable": "ScheduleAnyway",
                                    "labelSelector": selector,
                                    "matchLabelKeys": ["pod-template-hash"],
                                },
                            ],
                        },
                    },
                },
            }
        )
    return objects


def node_group(per_zone: int | dict[str, int]) -> dict[str, Any]:
    """One node group over ``TIMELINE_ZONES``: 16 CPU, 64Gi, 110 pods a node (room for 80 of the
    Deployments' pods)."""
    return {
        "name": "node",
        "zones": list(TIMELINE_ZONES),
        "perZone": per_zone,
        "template": {
            "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
        },
    }


def timeline(divisor: int = 1) -> dict[str, Any]:
    """3,000 nodes over three zones; ten Deployments, 27,000 pods, scaled up to 30,000; then a
    rollout, the loss of a zone, the unreachable toleration running out, and the zone's return.
    """
    per_zone = 1000 // divisor
    replicas = 2700 // divisor
    return {
        "nodeGroups": [node_group(per_zone)],
        "objects": spread_deployments(replicas),
        "timeline": [
            {
                "name": "scale up app-0",
                "scale": {"workload": "deployment/app-0", "replicas": replicas + 3000 // divisor},
            },
            {
                "name": "roll out app-1",
                "rollout": {
                    "workload": "deployment/app-1",
                    "patch": {
                        "spec": {
                            "containers": [
                                {"name": "app-1", "image": "registry.example.com/app-1:1.1.0"}
                            ]
                        }
                    },
                },
            },
            {"name": "zone-c goes dark", "loseZone": "zone-c"},
            {"name": "zone-c stays dark", "wait": "6m"},
            {"name": "zone-c comes back", "restoreZone": "zone-c"},
        ],
    }


def write_timeline(path: Path, divisor: int = 1) -> int:
    """Write the timeline scenario; returns the pod count after the scale-up."""
    doc = timeline(divisor)
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    return sum(int(d["spec"]["replicas"]) for d in doc["objects"]) + 3000 // divisor


def html_timeline() -> dict[str, Any]:
    """The timeline's steps on 300 nodes and 4,000 pods (3,700 then a scale-up of 300): the
    size issue 13 names for the HTML report."""
    doc = timeline(10)
    for d in doc["objects"]:
        d["spec"]["replicas"] = 370
    doc["timeline"][0]["scale"]["replicas"] = 370 + 300
    return doc


def write_html_timeline(path: Path) -> int:
    doc = html_timeline()
    path.write_text(yaml.dump(doc, Dumper=yaml.CSafeDumper, sort_keys=False), encoding="utf-8")
    return sum(int(d["spec"]["replicas"]) for d in doc["objects"]) + 300
