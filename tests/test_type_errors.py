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


def replaced(base: str, old: str, new: str) -> str:
    """``base`` with its first ``old`` replaced by ``new`` (which must be there)."""
    assert old in base, old
    return base.replace(old, new, 1)


def unmarshal_error(value: str, field: str, go_type: str) -> str:
    """Go's UnmarshalTypeError message, as the API server returns it."""
    return f"json: cannot unmarshal {value} into Go struct field {field} of type {go_type}"


# name: (manifest, the message after "FILE (Kind ns/name): ")
MANIFESTS: Final = {
    "Deployment replicas a fraction": (
        replaced(DEPLOYMENT, "replicas: 3", "replicas: 1.5"),
        unmarshal_error("number 1.5", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment replicas a string": (
        replaced(DEPLOYMENT, "replicas: 3", 'replicas: "2"'),
        unmarshal_error("string", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment replicas beyond int32": (
        replaced(DEPLOYMENT, "replicas: 3", "replicas: 3000000000"),
        unmarshal_error("number 3000000000", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment replicas beyond int64 as Go writes the float": (
        replaced(DEPLOYMENT, "replicas: 3", "replicas: 1.0e+22"),
        unmarshal_error("number 1e+22", "DeploymentSpec.spec.replicas", "int32"),
    ),
    "Deployment paused a quoted boolean": (
        replaced(DEPLOYMENT, "replicas: 3", 'replicas: 3\n  paused: "true"'),
        unmarshal_error("string", "DeploymentSpec.spec.paused", "bool"),
    ),
    "IntOrString maxUnavailable a boolean (its int32 refuses it)": (
        replaced(ROLLING, "maxUnavailable: 1", "maxUnavailable: true"),
        unmarshal_error(
            "bool", "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxUnavailable", "int32"
        ),
    ),
    "IntOrString maxSurge a fraction": (
        replaced(ROLLING, "maxSurge: 1", "maxSurge: 1.5"),
        unmarshal_error(
            "number 1.5", "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge", "int32"
        ),
    ),
    "a string enum is its named Go type": (
        replaced(DEPLOYMENT, "    spec:\n", "    spec:\n      restartPolicy: 1\n"),
        unmarshal_error("number", "PodSpec.spec.template.spec.restartPolicy", "v1.RestartPolicy"),
    ),
    "Pod containers a mapping": (
        replaced(
            GOOD_POD,
            "containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]",
            "containers: {name: c}",
        ),
        unmarshal_error("object", "PodSpec.spec.containers", "[]v1.Container"),
    ),
    "Pod nodeSelector a list": (
        replaced(GOOD_POD, "spec:\n", "spec:\n  nodeSelector: [a]\n"),
        unmarshal_error("array", "PodSpec.spec.nodeSelector", "map[string]string"),
    ),
    "Pod affinity a string (a pointer reports the type pointed to)": (
        replaced(GOOD_POD, "spec:\n", "spec:\n  affinity: zone\n"),
        unmarshal_error("string", "PodSpec.spec.affinity", "v1.Affinity"),
    ),
    "Pod tolerationSeconds a string (an int64)": (
        replaced(POD, "tolerationSeconds: 60", 'tolerationSeconds: "60"'),
        unmarshal_error("string", "Toleration.spec.tolerations.tolerationSeconds", "int64"),
    ),
    "Pod whenUnsatisfiable a number": (
        replaced(POD, "whenUnsatisfiable: DoNotSchedule", "whenUnsatisfiable: 1"),
        unmarshal_error(
            "number",
            "TopologySpreadConstraint.spec.topologySpreadConstraints.whenUnsatisfiable",
            "v1.UnsatisfiableConstraintAction",
        ),
    ),
    "Pod creationTimestamp a number (a metav1.Time decodes a string)": (
        replaced(GOOD_POD, "metadata: {", "metadata: {creationTimestamp: 5, "),
        unmarshal_error("number", "ObjectMeta.metadata.creationTimestamp", "string"),
    ),
    "Pod label value a YAML 1.1 boolean": (
        replaced(GOOD_POD, "labels: {app: web}", "labels: {app: web, ready: yes}"),
        unmarshal_error("bool", "ObjectMeta.metadata.labels", "string"),
    ),
    "Pod containerPort a fraction": (
        replaced(
            GOOD_POD,
            "{name: c, image: nginx,",
            "{name: c, image: nginx, ports: [{containerPort: 80.5}],",
        ),
        unmarshal_error(
            "number 80.5", "ContainerPort.spec.containers.ports.containerPort", "int32"
        ),
    ),
    "Node unschedulable a quoted boolean": (
        replaced(NODE, "unschedulable: false", 'unschedulable: "true"'),
        unmarshal_error("string", "NodeSpec.spec.unschedulable", "bool"),
    ),
    "Node taint effect a number": (
        replaced(NODE, "effect: NoSchedule", "effect: 1"),
        unmarshal_error("number", "Taint.spec.taints.effect", "v1.TaintEffect"),
    ),
    "Node allocatable a list": (
        replaced(NODE, 'allocatable: {cpu: "8", memory: 32Gi, pods: "110"}', "allocatable: [cpu]"),
        unmarshal_error("array", "NodeStatus.status.allocatable", "v1.ResourceList"),
    ),
    "StatefulSet podManagementPolicy a boolean": (
        replaced(STATEFUL_SET, "podManagementPolicy: Parallel", "podManagementPolicy: true"),
        unmarshal_error(
            "bool", "StatefulSetSpec.spec.podManagementPolicy", "v1.PodManagementPolicyType"
        ),
    ),
    "StatefulSet partition a string": (
        replaced(STATEFUL_SET, "partition: 0", 'partition: "0"'),
        unmarshal_error(
            "string",
            "RollingUpdateStatefulSetStrategy.spec.updateStrategy.rollingUpdate.partition",
            "int32",
        ),
    ),
    "PVC accessModes a string": (
        replaced(CLAIM, "accessModes: [ReadWriteOnce]", "accessModes: ReadWriteOnce"),
        unmarshal_error(
            "string",
            "PersistentVolumeClaimSpec.spec.accessModes",
            "[]v1.PersistentVolumeAccessMode",
        ),
    ),
    "PVC storageClassName a number": (
        replaced(CLAIM, "storageClassName: fast", "storageClassName: 5"),
        unmarshal_error("number", "PersistentVolumeClaimSpec.spec.storageClassName", "string"),
    ),
    "PVC storage request a boolean (a quantity fails to parse)": (
        replaced(CLAIM, "storage: 1Gi", "storage: true"),
        f"spec.resources.requests[storage]: Invalid value: true: {QUANTITY_FORMAT}",
    ),
    "PDB minAvailable a fraction": (
        replaced(BUDGET, "minAvailable: 1", "minAvailable: 1.5"),
        unmarshal_error("number 1.5", "PodDisruptionBudgetSpec.spec.minAvailable", "int32"),
    ),
    "a volume source a list (a field our struct keeps as raw data)": (
        replaced(GOOD_POD, "  containers:", "  volumes: [{name: v, emptyDir: [1]}]\n  containers:"),
        unmarshal_error("array", "Volume.spec.volumes.emptyDir", "v1.EmptyDirVolumeSource"),
    ),
    "PDB selector a list": (
        replaced(BUDGET, "selector: {matchLabels: {app: web}}", "selector: [app]"),
        unmarshal_error("array", "PodDisruptionBudgetSpec.spec.selector", "v1.LabelSelector"),
    ),
}

# name: (configuration, the message after "config.yaml: ")
CONFIGS: Final = {
    "parallelism a fraction": (
        replaced(CONFIG, "profiles:", "parallelism: 1.5\nprofiles:"),
        unmarshal_error("number 1.5", "KubeSchedulerConfiguration.parallelism", "int32"),
    ),
    "podMaxBackoffSeconds a string (an int64)": (
        replaced(CONFIG, "profiles:", 'podMaxBackoffSeconds: "10"\nprofiles:'),
        unmarshal_error("string", "KubeSchedulerConfiguration.podMaxBackoffSeconds", "int64"),
    ),
    "a profile's schedulerName a number": (
        replaced(CONFIG, "- pluginConfig:", "- schedulerName: 5\n  pluginConfig:"),
        unmarshal_error("number", "KubeSchedulerProfile.profiles.schedulerName", "string"),
    ),
    "a plugin's weight a string": (
        replaced(
            CONFIG,
            "- pluginConfig:",
            '- plugins: {score: {enabled: [{name: PodTopologySpread, weight: "2"}]}}\n'
            "  pluginConfig:",
        ),
        unmarshal_error("string", "Plugin.profiles.plugins.score.enabled.weight", "int32"),
    ),
    "PodTopologySpreadArgs defaultingType a number": (
        replaced(CONFIG, "defaultingType: List", "defaultingType: 1"),
        "profiles[0].pluginConfig[0].args: decoding args for plugin PodTopologySpread: "
        + unmarshal_error(
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
    text = replaced(DEPLOYMENT, "replicas: 3", "replicas: 2.0")
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
