"""The inputs the mutation fuzzer (input_fuzz.py) changes: every example under examples/ and a
few more (a scheduler configuration, sweep's --then steps, a cluster dump, a kubeconfig), each
with the command that reads it."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

ROOT: Final = Path(__file__).resolve().parents[1]
EXAMPLES: Final = ROOT / "examples"

CONFIG: Final = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 50
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
  pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 1
"""

THEN: Final = """\
- name: scale up
  scale: {workload: deployment/web, replicas: 8}
- name: settle
  wait: 1m
"""

CLUSTER: Final = """\
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
   "kubernetes.io/hostname": "n1", "topology.kubernetes.io/zone": "a"}},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "labels": {
   "kubernetes.io/hostname": "n2", "topology.kubernetes.io/zone": "b"}},
  "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default",
   "labels": {"app": "web"}},
  "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x",
   "resources": {"requests": {"cpu": "1"}}}]}},
 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "default",
   "labels": {"app": "web"}},
  "spec": {"containers": [{"name": "c", "image": "x"}],
   "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
     "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "web"}}}]}}
]}
"""

KUBECONFIG: Final = """\
apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: c
  context: {cluster: k, user: u, namespace: default}
users:
- name: u
  user: {token: abc}
"""


@dataclass(frozen=True)
class Target:
    """One input file and the command that reads it."""

    name: str
    text: str
    # The argv, given the mutated file's path and a scratch directory.
    argv: Callable[[Path, Path], list[str]]
    # Exit codes besides 0 and 2 the command documents (1: a finding).
    also: frozenset[int] = frozenset()
    # The file's name as the command reads it.
    file_name: str = "input.yaml"
    # True: the kubectl plugin's entry point instead of topospread's.
    plugin: bool = False
    # False for a file read as client-go reads a kubeconfig (clientcmd.Load: no strict
    # decoding, so a misspelled or duplicate key is ignored, as kubectl ignores it).
    strict: bool = True
    # Given the input's bytes and the report (-o json), what it lost: None when nothing.
    conserved: Callable[[bytes, str], str | None] | None = None
    # An error line that may leave the file unnamed, as the input was read and the failure
    # came after (a kubeconfig's cluster out of reach).
    after_reading: str = "\0"


def _every_pod_reported(data: bytes, out: str) -> str | None:
    """Whether ``schedule -o json`` reports every pod of the scenario: each queued pod with
    its decision, each bound pod on its node."""
    try:
        docs = list(yaml.load_all(data, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return None
    doc = docs[0] if len(docs) == 1 else None
    if not isinstance(doc, dict):
        return None
    report = json.loads(out)
    decided = {p["pod"] for p in report["pods"]}
    bound = set(report["bound"])

    def key(pod: Any) -> str:
        meta = pod.get("metadata") or {}
        return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"

    for pod in doc.get("queue") or []:
        if key(pod) not in decided:
            return f"queued pod {key(pod)} not reported"
    for pod in doc.get("pods") or []:
        if key(pod) not in bound:
            return f"bound pod {key(pod)} not reported"
    return None


def _example(path: str) -> str:
    return (EXAMPLES / path).read_text()


def targets() -> list[Target]:
    """Every example input, each with the command that reads it."""
    out: list[Target] = []
    for case in sorted((EXAMPLES / "cases").glob("*.yaml")):
        out.append(
            Target(f"evaluate {case.name}", case.read_text(), lambda f, d: ["evaluate", str(f)])
        )
    first_case = sorted((EXAMPLES / "cases").glob("*.yaml"))[0]
    out.append(
        Target(
            "conformance",
            first_case.read_text(),
            lambda f, d: ["conformance", str(f.parent)],
            also=frozenset({1}),
        )
    )
    for scenario in sorted((EXAMPLES / "scenarios").glob("*.yaml")):
        out.append(
            Target(
                f"schedule {scenario.name}",
                scenario.read_text(),
                lambda f, d: ["schedule", str(f), "-o", "json"],
                conserved=_every_pod_reported,
            )
        )
    out.append(
        Target(
            "explain docs-one-constraint",
            _example("scenarios/docs-one-constraint.yaml"),
            lambda f, d: ["explain", str(f), "--pod", "mypod"],
        )
    )
    for name in ("redis-2shards-2zones.yaml", "redis-3shards-3zones-maxskew2.yaml"):
        out.append(
            Target(
                f"verify {name}",
                _example(f"verify/{name}"),
                lambda f, d: ["verify", str(f), "--max-states", "300", "--samples", "3"],
                also=frozenset({1}),
            )
        )
    for sim in sorted((EXAMPLES / "simulations").glob("*.yaml")):
        out.append(
            Target(
                f"simulate {sim.name}",
                sim.read_text(),
                lambda f, d: ["simulate", str(f), "-o", "json"],
            )
        )
    for mode in ("warn", "ignore"):
        # Unknown and duplicate fields are warnings (or nothing): read on, never a traceback.
        out.append(
            Target(
                f"simulate zone-outage --validate={mode}",
                _example("simulations/zone-outage.yaml"),
                lambda f, d, mode=mode: ["simulate", str(f), "-o", "json", "--validate", mode],
                strict=False,
            )
        )
        out.append(
            Target(
                f"check web.yaml --validate={mode}",
                _example("check/web.yaml"),
                lambda f, d, mode=mode: ["check", str(f), "--zones", "3", "--validate", mode],
                also=frozenset({1}),
                strict=False,
            )
        )
    out.append(
        Target(
            "sweep zone-outage",
            _example("simulations/zone-outage.yaml"),
            lambda f, d: ["sweep", str(f), "--zones", "-j", "1", "-o", "json"],
            also=frozenset({1}),
        )
    )
    out.append(
        Target(
            "rebalance tainted-zone",
            _example("simulations/tainted-zone.yaml"),
            lambda f, d: ["rebalance", str(f), "--max-replays", "5", "-o", "json"],
        )
    )
    zone_outage = EXAMPLES / "simulations/zone-outage.yaml"
    out.append(
        Target(
            "sweep --autoscaler",
            _example("sweep/cluster-autoscaler.yaml"),
            lambda f, d: ["sweep", str(zone_outage), "--zones", "-j", "1", "--autoscaler", str(f)],
            also=frozenset({1}),
        )
    )
    out.append(
        Target(
            "sweep --then",
            THEN,
            lambda f, d: ["sweep", str(zone_outage), "--zones", "-j", "1", "--then", str(f)],
            also=frozenset({1}),
        )
    )
    for manifest in sorted((EXAMPLES / "check").glob("*.yaml")):
        if "autoscaler" in manifest.name:
            out.append(
                Target(
                    f"check --autoscaler {manifest.name}",
                    manifest.read_text(),
                    lambda f, d: [
                        "check",
                        str(EXAMPLES / "check/shop.yaml"),
                        "--zones",
                        "3",
                        "--nodes-per-zone",
                        "1",
                        "--node-cpu",
                        "2",
                        "--autoscaler",
                        str(f),
                        "-o",
                        "json",
                    ],
                    also=frozenset({1}),
                )
            )
        else:
            out.append(
                Target(
                    f"check {manifest.name}",
                    manifest.read_text(),
                    lambda f, d: ["check", str(f), "--zones", "3", "-o", "json"],
                    also=frozenset({1}),
                )
            )
    out.append(
        Target(
            "schedule --config",
            CONFIG,
            lambda f, d: [
                "schedule",
                str(EXAMPLES / "scenarios/docs-two-constraints.yaml"),
                "--config",
                str(f),
                "-o",
                "json",
            ],
        )
    )
    out.append(
        Target(
            "schedule --cluster (JSON)",
            CLUSTER,
            lambda f, d: ["schedule", "--cluster", str(f), "-o", "json"],
            file_name="cluster.json",
        )
    )
    out.append(
        Target(
            "simulate --cluster (JSON)",
            CLUSTER,
            lambda f, d: [
                "simulate",
                str(EXAMPLES / "simulations/zone-outage.yaml"),
                "--cluster",
                str(f),
                "-o",
                "json",
            ],
            file_name="cluster.json",
        )
    )
    if importlib.util.find_spec("kubernetes") is None:
        return out  # without the live extra, a kubeconfig is not read
    out.append(
        Target(
            "kubectl topospread --kubeconfig",
            KUBECONFIG,
            lambda f, d: ["schedule", "--kubeconfig", str(f), "-o", "json"],
            file_name="kubeconfig",
            plugin=True,
            strict=False,
            # The file was read: the error is the cluster's, named by its context.
            after_reading='cluster "c" (',
        )
    )
    return out
