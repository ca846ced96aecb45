"""The bad-input corpus: every input a user can get wrong, driven through every command that reads
it. Each must end with exit code 2 and one line on stderr that names the file (or the flag),
never a traceback: an exception other than the domain errors fails the test with its stack.

Kinds of input and the commands that read them:
- manifests: ``check`` (chart output), ``schedule --pods`` and ``explain --pods`` (queued pods
  and workloads), ``simulate``/``sweep``/``rebalance`` (a timeline's ``objects``);
- nodes: ``check --cluster``, ``schedule --nodes``, ``explain --nodes``;
- timeline documents: ``simulate``, ``sweep``, ``rebalance``;
- verify scenarios: ``verify``; cases: ``evaluate``, ``conformance``;
- command-line values: every command's own flags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from test_cli import run

GOOD_NODE: Final = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
"""

GOOD_POD: Final = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default, labels: {app: web}}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""

DEPLOYMENT: Final = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
         labelSelector: {matchLabels: {app: web}}}
      containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]
"""


PV: Final = """\
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-a}
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-a}
"""

PVC: Final = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""

SC: Final = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: zonal}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
"""


def deployment(old: str, new: str) -> str:
    assert old in DEPLOYMENT, old
    return DEPLOYMENT.replace(old, new, 1)


def node(old: str, new: str) -> str:
    assert old in GOOD_NODE, old
    return GOOD_NODE.replace(old, new, 1)


# Manifests that must be refused, whatever reads them.
BAD_MANIFESTS: Final = {
    "misspelled replicas": deployment("replicas: 3", "replicaz: 3"),
    "misspelled spread constraints": deployment(
        "topologySpreadConstraints:", "topologySpreadConstraint:"
    ),
    "unknown container field": deployment("image: nginx,", "image: nginx, imagePullPolice: x,"),
    "field in the wrong place": deployment(
        "metadata: {labels: {app: web}}", "metadata: {labels: {app: web}, containers: []}"
    ),
    "negative replicas": deployment("replicas: 3", "replicas: -3"),
    "replicas a word": deployment("replicas: 3", "replicas: three"),
    "replicas a float": deployment("replicas: 3", "replicas: 2.5"),
    "cpu a word": deployment("cpu: 100m", "cpu: lots"),
    "cpu bad suffix": deployment("cpu: 100m", "cpu: 12XB"),
    "negative cpu": deployment("cpu: 100m", 'cpu: "-1"'),
    "request above limit": deployment(
        "requests: {cpu: 100m}", "requests: {cpu: 2}, limits: {cpu: 1}"
    ),
    "unqualified resource": deployment("cpu: 100m", "gpu: 1"),
    "maxSkew zero": deployment("maxSkew: 1", "maxSkew: 0"),
    "maxSkew a word": deployment("maxSkew: 1", "maxSkew: one"),
    "whenUnsatisfiable unknown": deployment("DoNotSchedule", "Sometimes"),
    "topologyKey empty": deployment("topologyKey: topology.kubernetes.io/zone", 'topologyKey: ""'),
    "bad selector operator": deployment(
        "labelSelector: {matchLabels: {app: web}}",
        "labelSelector: {matchExpressions: [{key: app, operator: Like, values: [web]}]}",
    ),
    "bad label key": deployment("labels: {app: web}}", 'labels: {"bad key!": web}}'),
    "selector not matching template": deployment(
        "matchLabels: {app: web}}\n", "matchLabels: {app: db}}\n"
    ),
    "no selector": deployment("  selector: {matchLabels: {app: web}}\n", ""),
    "bad name": deployment("name: web", "name: Web_Server"),
    "strategy unknown": deployment("replicas: 3", "replicas: 3\n  strategy: {type: BlueGreen}"),
    "maxSurge bad percent": deployment(
        "replicas: 3", "replicas: 3\n  strategy: {rollingUpdate: {maxSurge: 50}}"
    ).replace("maxSurge: 50", 'maxSurge: "50"'),
    "bad toleration operator": deployment(
        "containers:", "tolerations: [{key: k, operator: Maybe}]\n      containers:"
    ),
    "bad node affinity operator": deployment(
        "containers:",
        "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Near}]}]}}}\n"
        "      containers:",
    ),
    "duplicate keys": deployment("replicas: 3", "replicas: 3\n  replicas: 4"),
    "two documents without a separator": DEPLOYMENT + DEPLOYMENT.replace("web", "db"),
    "no kind": "apiVersion: v1\nmetadata: {name: x}\n",
    "no apiVersion": "kind: Pod\nmetadata: {name: x}\n",
    "kind not a string": "apiVersion: v1\nkind: [Pod]\nmetadata: {name: x}\n",
    "a scalar document": "just a string\n",
    "a top-level JSON array of scalars": "[1, 2, 3]\n",
    "malformed YAML": "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n",
    "tab indentation": "apiVersion: v1\nkind: Pod\nmetadata:\n\tname: x\n",
    "malformed JSON": '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}',
    "empty file": "",
    "only comments": "# nothing here\n",
    "invalid UTF-8": "apiVersion: v1\nkind: Pod\nmetadata: {name: \xff\xfe}\n",
    "alias bomb": "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}' if i else 'lol'] * 10)}]\n" for i in range(9)
    ),
    "nesting past max depth": "[" * 10_001 + "]" * 10_001,
    "nesting too deep to decode": "[" * 5_000 + "]" * 5_000,
    "metadata a list": "apiVersion: v1\nkind: Pod\nmetadata: [x]\n",
    "labels a list": "apiVersion: v1\nkind: Pod\nmetadata: {name: x, labels: [a]}\n",
    "undefined alias": "apiVersion: v1\nkind: Pod\nmetadata: {name: *nope}\n",
    "service name invalid": "apiVersion: v1\nkind: Service\nmetadata: {name: Web_Svc}\n",
    "priority class value too high": (
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\n"
        "value: 2000000000\n"
    ),
    "pod priority class unknown": GOOD_POD.replace("spec:\n", "spec:\n  priorityClassName: nope\n"),
    "pod nodeName invalid": GOOD_POD.replace("spec:\n", "spec:\n  nodeName: Bad_Node\n"),
    "pv capacity a word": PV.replace("storage: 10Gi", "storage: lots"),
    "pv access mode unknown": PV.replace("ReadWriteOnce", "ReadWriteSometimes"),
    "pvc without storage request": PVC.replace("resources: {requests: {storage: 1Gi}}", "{}"),
    "pvc access mode unknown": PVC.replace("ReadWriteOnce", "WriteMany"),
    "storage class binding mode unknown": SC.replace("WaitForFirstConsumer", "Eventually"),
    "pv affinity without an operator": PV
    + "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: zone}]}]}}\n",
    "pv without a source": PV.replace(
        "  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-a}\n", ""
    ),
    "storage class topology without values": SC
    + "allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone}]}]\n",
}

BAD_NODES: Final = {
    "node cpu a word": node(
        'cpu: "8", memory: 32Gi, pods: "110"}\n  allocatable',
        'cpu: eight, memory: 32Gi, pods: "110"}\n  allocatable',
    ),
    "node memory negative": node(
        'memory: 32Gi, pods: "110"}\n  allocatable', 'memory: -1Gi, pods: "110"}\n  allocatable'
    ),
    "node pods fractional": node('pods: "110"}\n  allocatable', "pods: 1500m}\n  allocatable"),
    "node taint key invalid": node(
        "status:", "spec:\n  taints: [{key: 'bad key!', effect: NoSchedule}]\nstatus:"
    ),
    "node taint effect unknown": node(
        "status:", "spec:\n  taints: [{key: k, effect: Sometimes}]\nstatus:"
    ),
    "node misspelled field": node("status:", "spec:\n  unschedulabel: true\nstatus:"),
    "node label value invalid": node("zone: a}", "zone: 'a b'}"),
    "node name invalid": node("name: n1", "name: N_1"),
    "node with namespace": node("name: n1", "name: n1\n  namespace: default"),
}

GROUP: Final = "nodeGroups: [{name: n, zones: [a], perZone: 1}]\n"

BAD_TIMELINES: Final = {
    "timeline unknown top-level key": "nodes: []\nobject: []\ntimeline: []\n",
    "timeline step unknown": GROUP + "timeline: [{explode: a}]\n",
    "timeline wait not a duration": GROUP + "timeline: [{wait: soon}]\n",
    "timeline loses an unknown zone": GROUP + "timeline: [{loseZone: b}]\n",
    "timeline scales an unknown workload": GROUP
    + "timeline: [{scale: {workload: deployment/nope, replicas: 2}}]\n",
    "timeline perZone negative": "nodeGroups: [{name: n, zones: [a], perZone: -1}]\ntimeline: []\n",
    "timeline object misspelled": GROUP
    + "objects:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containerz: []}}\n"
    + "timeline: []\n",
    "timeline template capacity a word": "nodeGroups: [{name: n, zones: [a], perZone: 1, "
    "template: {status: {capacity: {cpu: eight}}}}]\ntimeline: []\n",
    "timeline not a mapping": "- a\n- b\n",
    "timeline alias bomb": "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}' if i else 'lol'] * 10)}]\n" for i in range(9)
    ),
}

BAD_VERIFY: Final = {
    "verify not a mapping": "[1, 2]\n",
    "verify unknown key": "nodez: []\n",
    "verify misspelled object": "nodes: []\nobjects: [{apiVersion: apps/v1, kind: Deployment, "
    "metadata: {name: d}, spec: {replicaz: 1}}]\n",
}

BAD_CASES: Final = {
    "case not a mapping": "[1]\n",
    "case misspelled pod field": (
        "pod: {metadata: {name: p}, spec: {topologySpreadConstraint: []}}\nnodes: []\n"
    ),
}


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_bytes(
        text.encode("utf-8", "surrogateescape") if "\xff" not in text else text.encode("latin-1")
    )
    return str(path)


def assert_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str], names: str) -> None:
    code, out, err = run(argv, capsys)
    lines = [line for line in err.splitlines() if line.startswith("topospread: error:")]
    assert code == 2, f"exit {code} for {argv}:\n{out}\n{err}"
    assert len(lines) == 1, err
    assert names in lines[0], f"{names!r} not named in {lines[0]!r}"
    assert "Traceback" not in err


def write_text(tmp_path: Path, name: str, text: str) -> str:
    """``text`` written to ``tmp_path/name``; the path as a string, for argv."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def assert_manifest_refused(
    command: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``text`` as a manifest file given to ``schedule`` (as --pods beside a good node) or
    ``check``: exit 2, one line naming the file and saying ``message``."""
    bad = write_text(tmp_path, "bad.yaml", text)
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    argv = (
        ["schedule", "--nodes", nodes, "--pods", bad]
        if command == "schedule"
        else ["check", bad, "--zones", "3"]
    )
    assert_one_line_exit_2(argv, capsys, message)
    assert_one_line_exit_2(argv, capsys, "bad.yaml")


def assert_config_refused(
    text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``text`` as ``schedule --config``'s file: exit 2, one line ``config.yaml: message``."""
    bad = write_text(tmp_path, "config.yaml", text)
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    pods = write_text(tmp_path, "pods.yaml", GOOD_POD)
    argv = ["schedule", "--nodes", nodes, "--pods", pods, "--config", bad]
    assert_one_line_exit_2(argv, capsys, f"config.yaml: {message}")


# Each command that reads a kind of input, as argv around the bad file (BAD) and the good
# files it needs beside it (NODES, PODS, CHART).
READERS: Final = {
    "manifests": [
        ["check", "BAD", "--zones", "3"],
        ["schedule", "--nodes", "NODES", "--pods", "BAD"],
        ["explain", "--nodes", "NODES", "--pods", "BAD", "--pod", "p"],
    ],
    "nodes": [
        ["check", "CHART", "--cluster", "BAD"],
        ["schedule", "--nodes", "BAD", "--pods", "PODS"],
        ["explain", "--nodes", "BAD", "--pods", "PODS", "--pod", "p"],
    ],
    "timelines": [["simulate", "BAD"], ["sweep", "BAD", "--zones"], ["rebalance", "BAD"]],
    "verify": [["verify", "BAD"]],
    "cases": [["evaluate", "BAD"], ["conformance", "BAD"]],
}
CORPUS: Final = {
    "manifests": BAD_MANIFESTS,
    "nodes": BAD_NODES,
    "timelines": BAD_TIMELINES,
    "verify": BAD_VERIFY,
    "cases": BAD_CASES,
}


@pytest.mark.parametrize(
    ("kind", "name", "argv"),
    [
        pytest.param(kind, name, argv, id=f"{argv[0]}-{name}")
        for kind, inputs in CORPUS.items()
        for name in inputs
        for argv in READERS[kind]
    ],
)
def test_bad_input_is_one_line_and_exit_2_for_every_command_that_reads_it(
    kind: str, name: str, argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = {
        "BAD": _write(tmp_path, f"bad-{kind}.yaml", CORPUS[kind][name]),
        "NODES": _write(tmp_path, "nodes.yaml", GOOD_NODE),
        "PODS": _write(tmp_path, "pods.yaml", GOOD_POD),
        "CHART": _write(tmp_path, "chart.yaml", DEPLOYMENT),
    }
    assert_one_line_exit_2([files.get(a, a) for a in argv], capsys, f"bad-{kind}.yaml")


BAD_FLAGS: Final = {
    "check node cpu a word": (["check", "CHART", "--zones", "3", "--node-cpu", "abc"], "abc"),
    "check node memory negative": (
        ["check", "CHART", "--zones", "3", "--node-memory", "-1Gi"],
        "-1Gi",
    ),
    "check node ephemeral storage negative": (
        ["check", "CHART", "--zones", "3", "--node-ephemeral-storage", "-5Gi"],
        "--node-ephemeral-storage",
    ),
    "check validate unknown": (["check", "CHART", "--zones", "3", "--validate", "maybe"], "maybe"),
    "check zones zero": (["check", "CHART", "--zones", "0"], "--zones"),
    "check survive unknown": (["check", "CHART", "--survive", "region"], "--survive"),
    "check missing file": (["check", "nope.yaml", "--zones", "3"], "nope.yaml"),
    "schedule missing nodes file": (
        ["schedule", "--nodes", "nope.yaml", "--pods", "PODS"],
        "nope.yaml",
    ),
    "explain unknown pod": (
        ["explain", "--nodes", "NODES", "--pods", "PODS", "--pod", "ghost"],
        "ghost",
    ),
    "design redis negative shards": (
        ["design", "redis-cluster", "--shards", "-1", "--zones", "a,b,c"],
        "--shards",
    ),
    "design spread bad fraction": (
        [
            "design",
            "spread",
            "--selector",
            "app=web",
            "--topology-key",
            "zone",
            "--replicas",
            "6",
            "--domains",
            "3",
            "--max-fraction",
            "half",
        ],
        "--max-fraction",
    ),
    "simulate output unknown": (["simulate", "TIMELINE", "-o", "pdf"], "--output"),
    "sweep jobs zero": (["sweep", "TIMELINE", "--zones", "-j", "0"], "-j"),
}


@pytest.mark.parametrize("name", list(BAD_FLAGS))
def test_bad_command_line_values_are_one_line_and_exit_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, names = BAD_FLAGS[name]
    files = {
        "CHART": _write(tmp_path, "chart.yaml", DEPLOYMENT),
        "NODES": _write(tmp_path, "nodes.yaml", GOOD_NODE),
        "PODS": _write(tmp_path, "pods.yaml", GOOD_POD),
        "TIMELINE": _write(
            tmp_path, "t.yaml", "nodeGroups: [{name: n, zones: [a, b], perZone: 1}]\ntimeline: []\n"
        ),
    }
    argv = [files.get(a, a) for a in argv]
    assert_one_line_exit_2(argv, capsys, names)


def test_the_corpus_holds_at_least_sixty_inputs() -> None:
    total = sum(
        map(len, (BAD_MANIFESTS, BAD_NODES, BAD_TIMELINES, BAD_VERIFY, BAD_CASES, BAD_FLAGS))
    )
    assert total >= 60, total
