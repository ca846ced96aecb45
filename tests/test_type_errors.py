"""A value of the wrong JSON type is refused with the API server's own message: Go's
encoding/json ``UnmarshalTypeError`` as sigs.k8s.io/json gives it (``json: cannot unmarshal
<value> into Go struct field <Struct>.<path> of type <Go type>``), after our prefix naming the
file and the object, with exit code 2; the scheduler configuration with kube-scheduler's loader's
(the same decoder; a plugin's args with ``decoding args for plugin <name>: `` before it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

import pytest
import yaml

from test_bad_input import (
    DEPLOYMENT,
    GOOD_NODE,
    GOOD_POD,
    assert_config_refused,
    assert_one_line_exit_2,
    write_text,
)
from test_edges_audit import BUDGET, CONFIG
from test_loader_fast_path import exact, outcome
from topospread.api import yaml_fast
from topospread.api.go_errors import go_number

STATEFUL_SET: Final = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  serviceName: db
  podManagementPolicy: Parallel
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: postgres}]
"""
CLAIM: Final = """\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: fast
  resources: {requests: {storage: 1Gi}}
"""
ROLLING: Final = DEPLOYMENT.replace(
    "  replicas: 3\n",
    "  replicas: 3\n  strategy: {rollingUpdate: {maxUnavailable: 1, maxSurge: 1}}\n",
)
POD: Final = GOOD_POD.replace(
    "  containers:",
    "  tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 60}]\n"
    "  topologySpreadConstraints:\n"
    "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
    "  containers:",
)
NODE: Final = GOOD_NODE.replace(
    "status:", "spec:\n  unschedulable: false\n  taints: [{key: k, effect: NoSchedule}]\nstatus:"
)
QUANTITY_FORMAT: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def _with(base: str, old: str, new: str) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


def _unmarshal(value: str, field: str, go_type: str) -> str:
    return f"json: cannot unmarshal {value} into Go struct field {field} of type {go_type}"


# name: (manifest, the message after "FILE (Kind ns/name): ")
MANIFESTS: Final = {
    "Deployment replicas a fraction": (
        _with(DEPLOYMENT, "replicas: 3", "replicas: 1.5"),
        _unmarshal("number 1.5", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment replicas a string": (
        _with(DEPLOYMENT, "replicas: 3", 'replicas: "2"'),
        _unmarshal("string", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment replicas beyond int32": (
        _with(DEPLOYMENT, "replicas: 3", "replicas: 3000000000"),
        _unmarshal("number 3000000000", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment replicas beyond int64 as Go writes the float": (
        _with(DEPLOYMENT, "replicas: 3", "replicas: 1.0e+22"),
        _unmarshal("number 1e+22", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment paused a quoted boolean": (
        _with(DEPLOYMENT, "replicas: 3", 'replicas: 3\n  paused: "true"'),
        _unmarshal("string", "DeploymentSpec.spec.paused", "bool"),
    ),
    "IntOrString maxUnavailable a boolean (its int32 refuses it)": (
        _with(ROLLING, "maxUnavailable: 1", "maxUnavailable: true"),
        _unmarshal(
            "bool", "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxUnavailable", "int32"
        ),
    ),
    "IntOrString maxSurge a fraction": (
        _with(ROLLING, "maxSurge: 1", "maxSurge: 1.5"),
        _unmarshal(
            "number 1.5", "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge", "int32"
        ),
    ),
    "a string enum is its named Go type": (
        _with(DEPLOYMENT, "    spec:\n", "    spec:\n      restartPolicy: 1\n"),
        _unmarshal("number", "PodSpec.spec.template.spec.restartPolicy", "v1.RestartPolicy"),
    ),
    "Pod containers a mapping": (
        _with(
            GOOD_POD,
            "containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]",
            "containers: {name: c}",
        ),
        _unmarshal("object", "PodSpec.spec.containers", "[]v1.Container"),
    ),
    "Pod nodeSelector a list": (
        _with(GOOD_POD, "spec:\n", "spec:\n  nodeSelector: [a]\n"),
        _unmarshal("array", "PodSpec.spec.nodeSelector", "map[string]string"),
    ),
    "Pod affinity a string (a pointer reports the type pointed to)": (
        _with(GOOD_POD, "spec:\n", "spec:\n  affinity: zone\n"),
        _unmarshal("string", "PodSpec.spec.affinity", "v1.Affinity"),
    ),
    "Pod tolerationSeconds a string (an int64)": (
        _with(POD, "tolerationSeconds: 60", 'tolerationSeconds: "60"'),
        _unmarshal("string", "Toleration.spec.tolerations.tolerationSeconds", "int64"),
    ),
    "Pod whenUnsatisfiable a number": (
        _with(POD, "whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: 1"),
        _unmarshal(
            "number",
            "TopologySpreadConstraint.spec.topologySpreadConstraints.whenUnsatisfiable",
            "v1.UnsatisfiableConstraintAction",
        ),
    ),
    "Pod creationTimestamp a number (a metav1.Time decodes a string)": (
        _with(GOOD_POD, "metadata: {", "metadata: {creationTimestamp: 5, "),
        _unmarshal("number", "ObjectMeta.metadata.creationTimestamp", "string"),
    ),
    "Pod label value a YAML 1.1 boolean": (
        _with(GOOD_POD, "labels: {app: web}", "labels: {app: web, ready: yes}"),
        _unmarshal("bool", "ObjectMeta.metadata.labels", "string"),
    ),
    "Pod containerPort a fraction": (
        _with(
            GOOD_POD,
            "{name: c, image: nginx,",
            "{name: c, image: nginx, ports: [{containerPort: 80.5}],",
        ),
        _unmarshal("number 80.5", "ContainerPort.spec.containers.ports.containerPort", "int32"),
    ),
    "Node unschedulable a quoted boolean": (
        _with(NODE, "unschedulable: false", 'unschedulable: "true"'),
        _unmarshal("string", "NodeSpec.spec.unschedulable", "bool"),
    ),
    "Node taint effect a number": (
        _with(NODE, "effect: NoSchedule", "effect: 1"),
        _unmarshal("number", "Taint.spec.taints.effect", "v1.TaintEffect"),
    ),
    "Node allocatable a list": (
        _with(NODE, 'allocatable: {cpu: "8", memory: 32Gi, pods: "110"}', "allocatable: [cpu]"),
        _unmarshal("array", "NodeStatus.status.allocatable", "v1.ResourceList"),
    ),
    "StatefulSet podManagementPolicy a boolean": (
        _with(STATEFUL_SET, "podManagementPolicy: Parallel", "podManagementPolicy: true"),
        _unmarshal(
            "bool", "StatefulSetSpec.spec.podManagementPolicy", "v1.PodManagementPolicyType"
        ),
    ),
    "StatefulSet partition a string": (
        _with(STATEFUL_SET, "partition: 0", 'partition: "0"'),
        _unmarshal(
            "string",
            "RollingUpdateStatefulSetStrategy.spec.updateStrategy.rollingUpdate.partition",
            "int32",
        ),
    ),
    "PVC accessModes a string": (
        _with(CLAIM, "accessModes: [ReadWriteOnce]", "accessModes: ReadWriteOnce"),
        _unmarshal(
            "string",
            "PersistentVolumeClaimSpec.spec.accessModes",
            "[]v1.PersistentVolumeAccessMode",
        ),
    ),
    "PVC storageClassName a number": (
        _with(CLAIM, "storageClassName: fast", "storageClassName: 5"),
        _unmarshal("number", "PersistentVolumeClaimSpec.spec.storageClassName", "string"),
    ),
    "PVC storage request a boolean (a quantity fails to parse)": (
        _with(CLAIM, "storage: 1Gi", "storage: true"),
        f"spec.resources.requests[storage]: Invalid value: true: {QUANTITY_FORMAT}",
    ),
    "PDB minAvailable a fraction": (
        _with(BUDGET, "minAvailable: 1", "minAvailable: 1.5"),
        _unmarshal("number 1.5", "PodDisruptionBudgetSpec.spec.minAvailable", "int32"),
    ),
    "a volume source a list (a field our struct keeps as raw data)": (
        _with(GOOD_POD, "  containers:", "  volumes: [{name: v, emptyDir: [1]}]\n  containers:"),
        _unmarshal("array", "Volume.spec.volumes.emptyDir", "v1.EmptyDirVolumeSource"),
    ),
    "PDB selector a list": (
        _with(BUDGET, "selector: {matchLabels: {app: web}}", "selector: [app]"),
        _unmarshal("array", "PodDisruptionBudgetSpec.spec.selector", "v1.LabelSelector"),
    ),
}

# name: (configuration, the message after "config.yaml: ")
CONFIGS: Final = {
    "parallelism a fraction": (
        _with(CONFIG, "profiles:", "parallelism: 1.5\nprofiles:"),
        _unmarshal("number 1.5", "KubeSchedulerConfiguration.parallelism", "int32"),
    ),
    "podMaxBackoffSeconds a string (an int64)": (
        _with(CONFIG, "profiles:", 'podMaxBackoffSeconds: "10"\nprofiles:'),
        _unmarshal("string", "KubeSchedulerConfiguration.podMaxBackoffSeconds", "int64"),
    ),
    "a profile's schedulerName a number": (
        _with(CONFIG, "- pluginConfig:", "- schedulerName: 5\n  pluginConfig:"),
        _unmarshal("number", "KubeSchedulerProfile.profiles.schedulerName", "string"),
    ),
    "a plugin's weight a string": (
        _with(
            CONFIG,
            "- pluginConfig:",
            '- plugins: {score: {enabled: [{name: PodTopologySpread, weight: "2"}]}}\n'
            "  pluginConfig:",
        ),
        _unmarshal("string", "Plugin.profiles.plugins.score.enabled.weight", "int32"),
    ),
    "PodTopologySpreadArgs defaultingType a number": (
        _with(CONFIG, "defaultingType: List", "defaultingType: 1"),
        "profiles[0].pluginConfig[0].args: decoding args for plugin PodTopologySpread: "
        + _unmarshal(
            "number",
            "PodTopologySpreadArgs.defaultingType",
            "v1.PodTopologySpreadConstraintsDefaulting",
        ),
    ),
}


def _label(text: str) -> str:
    obj = yaml.safe_load(text)
    name = obj["metadata"]["name"]
    return f"({obj['kind']} {name})" if obj["kind"] == "Node" else f"({obj['kind']} default/{name})"


@pytest.mark.parametrize("name", list(MANIFESTS))
def test_a_wrong_json_type_is_refused_with_the_api_servers_decode_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = MANIFESTS[name]
    bad = write_text(tmp_path, "bad.yaml", text)
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    argv = ["schedule", "--nodes", nodes, "--pods", bad]
    assert_one_line_exit_2(argv, capsys, f"bad.yaml {_label(text)}: {message}")


@pytest.mark.parametrize("name", list(CONFIGS))
def test_a_wrong_json_type_in_the_scheduler_configuration_is_kube_schedulers_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = CONFIGS[name]
    assert_config_refused(text, message, tmp_path, capsys)


@pytest.mark.parametrize("name", list(MANIFESTS))
def test_the_message_is_the_same_on_the_fast_and_exact_yaml_paths_and_from_json(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = MANIFESTS[name][0]
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)  # the fast path for a small file too
    fast = outcome(text)
    assert fast[0] == "error", fast
    assert fast == exact(text, monkeypatch)
    as_json = json.dumps(yaml.load(text, Loader=yaml.SafeLoader))
    assert outcome(as_json) == fast


def test_an_integral_float_is_the_integer_kubectl_sends() -> None:
    """kubectl re-encodes the float64 it read as Go does: 2.0 is sent as 2, which int32 takes."""
    text = _with(DEPLOYMENT, "replicas: 3", "replicas: 2.0")
    (deployment,) = outcome(text)
    assert deployment["spec"]["replicas"] == 2
    assert outcome(json.dumps(yaml.load(text, Loader=yaml.SafeLoader))) == [deployment]


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (1.5, "1.5"),
        (2.0, "2"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (1e16, "10000000000000000"),
        (0.00001, "0.00001"),
        (-3.25, "-3.25"),
        (3000000000, "3000000000"),
    ],
)
def test_numbers_are_written_as_gos_encoding_json_writes_them(value: float, written: str) -> None:
    assert go_number(value) == written
