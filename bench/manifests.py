"""Pod Lists as ``kubectl get pods -o yaml`` and ``-o json`` print them, for the loading benchmark.

Each pod is what a running Deployment's pod looks like when read back from a cluster: owner
reference, service-account volume, default tolerations, a topology spread constraint, five
conditions and a container status (about 3 KB of YAML, 6 KB of JSON). Both files hold the same
pods. Writing YAML with a YAML library would take a minute for 100,000 pods, so one pod is
dumped with placeholders (libyaml decides layout and quoting) and the placeholders are filled in
per pod; ``check_template`` proves that a filled-in pod reads back as the same data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec
import yaml
from kube_objects import (
    api_access_volume,
)  # bench/kube_objects.py: the script's directory is on sys.path

# The values that vary from pod to pod; each placeholder is a plain YAML scalar, and so are the
# values put in its place (names, hex, dotted IPs), so neither needs quoting.
_FIELDS: Final = ("name", "app", "uid", "node", "host_ip", "pod_ip", "suffix", "cid")
_PLACEHOLDER: Final = {f: f"zz{f.replace('_', '')}zz" for f in _FIELDS}
TIMESTAMP: Final = "2025-06-01T12:00:00Z"
APPS: Final = 100
NODES: Final = 5000


def values(i: int) -> dict[str, str]:
    app = f"web-{i % APPS}"
    node = i % NODES
    return {
        "name": f"{app}-7d4b9c8f6d-{i:06d}",
        "app": app,
        "uid": f"{i:08x}-7c2e-4f1a-9b3d-5a6e8f0c1d2e",
        "node": f"node-{node}",
        "host_ip": f"10.0.{node // 250}.{node % 250 + 1}",
        "pod_ip": f"10.{64 + i // 65536}.{i // 256 % 256}.{i % 256}",
        "suffix": f"{i % 99991:05d}",
        "cid": f"{i:064x}",
    }


def pod(v: dict[str, str]) -> dict[str, Any]:
    """One running pod of a Deployment, as the API server returns it."""
    image = "registry.example.com/web:1.2.3"
    token = f"kube-api-access-{v['suffix']}"
    conditions = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "creationTimestamp": TIMESTAMP,
            "generateName": f"{v['app']}-7d4b9c8f6d-",
            "labels": {"app": v["app"], "pod-template-hash": "7d4b9c8f6d"},
            "name": v["name"],
            "namespace": "prod",
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "ReplicaSet",
                    "name": f"{v['app']}-7d4b9c8f6d",
                    "uid": "0b1c2d3e-7c2e-4f1a-9b3d-5a6e8f0c1d2e",
                }
            ],
            "resourceVersion": "123456",
            "uid": v["uid"],
        },
        "spec": {
            "containers": [
                {
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "name": "web",
                    "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                    "resources": {
                        "limits": {"cpu": "500m", "memory": "512Mi"},
                        "requests": {"cpu": "100m", "memory": "256Mi"},
                    },
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                    "volumeMounts": [
                        {
                            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                            "name": token,
                            "readOnly": True,
                        }
                    ],
                }
            ],
            "dnsPolicy": "ClusterFirst",
            "enableServiceLinks": True,
            "nodeName": v["node"],
            "preemptionPolicy": "PreemptLowerPriority",
            "priority": 0,
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": "default",
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
            "tolerations": [
                {
                    "effect": "NoExecute",
                    "key": f"node.kubernetes.io/{key}",
                    "operator": "Exists",
                    "tolerationSeconds": 300,
                }
                for key in ("not-ready", "unreachable")
            ],
            "topologySpreadConstraints": [
                {
                    "labelSelector": {"matchLabels": {"app": v["app"]}},
                    "matchLabelKeys": ["pod-template-hash"],
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ],
            "volumes": [api_access_volume(token)],
        },
        "status": {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": TIMESTAMP,
                    "status": "True",
                    "type": t,
                }
                for t in (*conditions, "PodScheduled")
            ],
            "containerStatuses": [
                {
                    "containerID": f"containerd://{v['cid']}",
                    "image": image,
                    "imageID": f"registry.example.com/web@sha256:{'ab' * 32}",
                    "lastState": {},
                    "name": "web",
                    "ready": True,
                    "restartCount": 0,
                    "started": True,
                    "state": {"running": {"startedAt": TIMESTAMP}},
                }
            ],
            "hostIP": v["host_ip"],
            "hostIPs": [{"ip": v["host_ip"]}],
            "phase": "Running",
            "podIP": v["pod_ip"],
            "podIPs": [{"ip": v["pod_ip"]}],
            "qosClass": "Burstable",
            "startTime": TIMESTAMP,
        },
    }


def _yaml_item_template() -> str:
    """A ``str.format`` template of one List item (``- `` then the pod, indented by two)."""
    text = yaml.dump(
        pod(_PLACEHOLDER),
        Dumper=yaml.CSafeDumper,
        default_flow_style=False,
        sort_keys=True,  # kubectl's YAML has sorted keys (sigs.k8s.io/yaml goes through a map)
        width=1 << 30,
    )
    text = text.replace("{", "{{").replace("}", "}}")
    for f, placeholder in _PLACEHOLDER.items():
        text = text.replace(placeholder, "{%s}" % f)  # noqa: UP031 - braces are the point
    lines = text.splitlines(keepends=True)
    return "- " + lines[0] + "".join("  " + line for line in lines[1:])


def check_template() -> None:
    """A filled-in YAML item and a JSON item read back as the data they were made from."""
    v = values(123_457)
    item = yaml.load(_yaml_item_template().format(**v), Loader=yaml.CSafeLoader)
    assert item == [pod(v)], "YAML template does not reproduce the pod"
    assert msgspec.json.decode(_json_item(v)) == pod(v)


def _json_item(v: dict[str, str]) -> bytes:
    return msgspec.json.format(msgspec.json.encode(pod(v)), indent=4)


def write_yaml(path: Path, n: int) -> None:
    template = _yaml_item_template()
    with path.open("w", encoding="utf-8") as f:
        f.write("apiVersion: v1\nitems:\n")
        for i in range(n):
            f.write(template.format(**values(i)))
        f.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def write_json(path: Path, n: int) -> None:
    indent = b"\n" + b" " * 8
    with path.open("wb") as f:
        f.write(b'{\n    "apiVersion": "v1",\n    "items": [\n')
        for i in range(n):
            if i:
                f.write(b",\n")
            f.write(b" " * 8 + _json_item(values(i)).replace(b"\n", indent))
        f.write(b'\n    ],\n    "kind": "List",\n    "metadata": {\n')
        f.write(b'        "resourceVersion": ""\n    }\n}\n')
