"""Gaps the bad-input audit found, each now refused with the API server's (or kube-scheduler's)
message, its field's path, and exit code 2, by every command that reads the input."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

from test_bad_input import (
    DEPLOYMENT,
    GOOD_POD,
    assert_config_refused,
    assert_manifest_refused,
    assert_one_line_exit_2,
    write_text,
)
from test_label_validation import SUBDOMAIN_REGEX_ERROR
from test_loader_fast_path import exact, outcome
from topospread.api import loader, yaml_fast
from topospread.api.strict import FieldValidation, field_validation

CONFIG: Final = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}
"""
PRIORITY_CLASS: Final = (
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n"
)


DAEMON_SET: Final = DEPLOYMENT.replace("kind: Deployment", "kind: DaemonSet").replace(
    "  replicas: 3\n", ""
)
JOB: Final = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""
BUDGET: Final = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
"""


def _with(base: str, old: str, new: str) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


# Manifests, with the message each must be refused with.


MANIFESTS: Final = {
    "replicas beyond int32": (
        _with(DEPLOYMENT, "replicas: 3", "replicas: 3000000000"),
        "(Deployment default/web): json: cannot unmarshal number 3000000000 into Go struct "
        "field DeploymentSpec.spec.replicas of type int32",
    ),
    "maxSkew beyond int32": (
        _with(DEPLOYMENT, "maxSkew: 1", "maxSkew: 2147483648"),
        "(Deployment default/web): json: cannot unmarshal number 2147483648 into Go struct "
        "field TopologySpreadConstraint.spec.template.spec.topologySpreadConstraints.maxSkew "
        "of type int32",
    ),
    "container without a name": (
        _with(GOOD_POD, "name: c, ", ""),
        "(Pod default/p): spec.containers[0].name: Required value",
    ),
    "container name not a DNS label": (
        _with(GOOD_POD, "name: c, ", "name: C_1, "),
        '(Pod default/p): spec.containers[0].name: Invalid value: "C_1": a lowercase RFC 1123 '
        "label must consist of lower case alphanumeric characters or '-', and must start and end "
        "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    "two containers of one name": (
        _with(GOOD_POD, "containers: [", "containers: [{name: c, image: busybox}, "),
        '(Pod default/p): spec.containers[1].name: Duplicate value: "c"',
    ),
    "init container named as a container": (
        _with(
            GOOD_POD,
            "  containers:",
            "  initContainers: [{name: c, image: busybox}]\n  containers:",
        ),
        '(Pod default/p): spec.initContainers[0].name: Duplicate value: "c"',
    ),
    "restartPolicy unknown": (
        _with(GOOD_POD, "spec:\n", "spec:\n  restartPolicy: Sometimes\n"),
        '(Pod default/p): spec.restartPolicy: Unsupported value: "Sometimes": supported values: '
        '"Always", "OnFailure", "Never"',
    ),
    "PriorityClass preemptionPolicy unknown": (
        PRIORITY_CLASS + "preemptionPolicy: Sometimes\n",
        '(PriorityClass high): preemptionPolicy: Unsupported value: "Sometimes": supported '
        'values: "PreemptLowerPriority", "Never"',
    ),
    "PriorityClass with the system- prefix": (
        _with(PRIORITY_CLASS, "name: high", "name: system-high"),
        "(PriorityClass system-high): metadata.name: Forbidden: priority class names with "
        "'system-' prefix are reserved for system use only. error: system-high is not a known "
        "system priority class",
    ),
    "system class with another value": (
        _with(PRIORITY_CLASS, "name: high", "name: system-node-critical"),
        "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for "
        "system use only. error: value of system-node-critical PriorityClass must be 2000001000",
    ),
    "Deployment template restartPolicy Never": (
        _with(DEPLOYMENT, "    spec:\n", "    spec:\n      restartPolicy: Never\n"),
        "(Deployment default/web): spec.template.spec.restartPolicy: Unsupported value: "
        '"Never": supported values: "Always"',
    ),
    "DaemonSet template restartPolicy OnFailure": (
        _with(DAEMON_SET, "    spec:\n", "    spec:\n      restartPolicy: OnFailure\n"),
        "(DaemonSet default/web): spec.template.spec.restartPolicy: Unsupported value: "
        '"OnFailure": supported values: "Always"',
    ),
    "DaemonSet updateStrategy unknown": (
        _with(DAEMON_SET, "  selector:", "  updateStrategy: {type: Rolling}\n  selector:"),
        '(DaemonSet default/web): spec.updateStrategy: Unsupported value: {"Type":"Rolling",'
        '"RollingUpdate":null}: supported values: "RollingUpdate", "OnDelete"',
    ),
    "Job template without restartPolicy": (
        _with(JOB, "      restartPolicy: Never\n", ""),
        "(Job default/j): spec.template.spec.restartPolicy: Required value: valid values: "
        '"OnFailure", "Never"',
    ),
    "Job template restartPolicy unknown": (
        _with(JOB, "restartPolicy: Never", "restartPolicy: Sometimes"),
        "(Job default/j): spec.template.spec.restartPolicy: Unsupported value: "
        '"Sometimes": supported values: "OnFailure", "Never"',
    ),
    "Deployment template error named in the Deployment": (
        _with(DEPLOYMENT, "maxSkew: 1", "maxSkew: 0"),
        "(Deployment default/web): spec.template.spec.topologySpreadConstraints[0].maxSkew: "
        "Invalid value: 0: must be greater than zero",
    ),
    "PodDisruptionBudget with both bounds": (
        _with(BUDGET, "minAvailable: 1,", "minAvailable: 1, maxUnavailable: 1,"),
        '(PodDisruptionBudget default/web): spec: Invalid value: {"MinAvailable":1,"Selector":'
        '{"matchLabels":{"app":"web"}},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}: '
        "minAvailable and maxUnavailable cannot be both set",
    ),
    "Pod in a version the core group does not serve": (
        _with(GOOD_POD, "apiVersion: v1", "apiVersion: v2"),
        '(Pod default/p): no matches for kind "Pod" in version "v2"',
    ),
    "a kind the core group does not have": (
        _with(GOOD_POD, "kind: Pod", "kind: Pud"),
        '(Pud default/p): no matches for kind "Pud" in version "v1"',
    ),
    "Deployment in a retired apps version": (
        _with(DEPLOYMENT, "apps/v1", "apps/v1beta1"),
        '(Deployment web): no matches for kind "Deployment" in version "apps/v1beta1"',
    ),
    "CSINode naming a driver twice": (
        "apiVersion: storage.k8s.io/v1\nkind: CSINode\nmetadata: {name: n1}\nspec:\n"
        "  drivers: [{name: ebs.csi.aws.com, nodeID: i-1}, {name: ebs.csi.aws.com, nodeID: i-1}]\n",
        '(CSINode n1): spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com"',
    ),
    # ValidateClassName (NameIsDNSSubdomain) of the class a claim or a volume names, after the
    # claim's requests and before its volumeMode (ValidatePersistentVolumeClaimSpec, v1.35).
    "claim naming a class that is no DNS subdomain": (
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: default}\n"
        "spec: {accessModes: [ReadWriteOnce], storageClassName: Fast_SSD, volumeMode: Disk,\n"
        "  resources: {requests: {storage: 1Gi}}}\n",
        '(PersistentVolumeClaim default/data): spec.storageClassName: Invalid value: "Fast_SSD": '
        + SUBDOMAIN_REGEX_ERROR,
    ),
    "volume naming a class that is no DNS subdomain": (
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: pv1}\n"
        "spec: {accessModes: [ReadWriteOnce], capacity: {storage: 1Gi}, storageClassName: -gp3,\n"
        "  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-1}}\n",
        '(PersistentVolume pv1): spec.storageClassName: Invalid value: "-gp3": '
        + SUBDOMAIN_REGEX_ERROR,
    ),
}

CONFIGS: Final = {
    "args field misspelled": (
        _with(CONFIG, "defaultingType: List", "defaultingType: List\n      defaultConstraint: []"),
        "profiles[0].pluginConfig[0].args: strict decoding error: "
        'unknown field "defaultConstraint"',
    ),
    "args field in the wrong case": (
        _with(CONFIG, "maxSkew: 1", "maxskew: 1"),
        "profiles[0].pluginConfig[0].args: strict decoding error: unknown field "
        '"defaultConstraints[0].maxskew"',
    ),
    "args maxSkew zero": (
        _with(CONFIG, "maxSkew: 1", "maxSkew: 0"),
        "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: "
        "not in valid range (0, inf)",
    ),
    "args maxSkew a string": (
        _with(CONFIG, "maxSkew: 1", 'maxSkew: "1"'),
        "profiles[0].pluginConfig[0].args: decoding args for plugin PodTopologySpread: json: "
        "cannot unmarshal string into Go struct field "
        "TopologySpreadConstraint.defaultConstraints.maxSkew of type int32",
    ),
    "percentageOfNodesToScore a string": (
        _with(CONFIG, "profiles:", 'percentageOfNodesToScore: "50"\nprofiles:'),
        "json: cannot unmarshal string into Go struct field "
        "KubeSchedulerConfiguration.percentageOfNodesToScore of type int32",
    ),
}


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize("name", list(MANIFESTS))
def test_audited_manifests_are_refused_with_the_api_servers_message(
    name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = MANIFESTS[name]
    assert_manifest_refused(command, text, message, tmp_path, capsys)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_audited_scheduler_configurations_name_the_file_and_the_args_path(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = CONFIGS[name]
    assert_config_refused(text, message, tmp_path, capsys)


@pytest.mark.parametrize("name", ["replicas beyond int32", "maxSkew beyond int32"])
def test_int32_overflow_errs_alike_on_the_fast_and_exact_yaml_paths(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)  # the fast path for a small file too
    text = MANIFESTS[name][0]
    fast = outcome(text)
    assert fast[0] == "error", fast
    assert fast == exact(text, monkeypatch)


def test_an_unserved_kind_of_a_built_in_group_is_read_under_validate_ignore() -> None:
    """What a newer cluster serves is read with ``ignore``: a kind this release lacks is left
    to the readers, not refused; a custom resource's group is never judged."""
    pud = _with(GOOD_POD, "kind: Pod", "kind: Pud")
    with field_validation(FieldValidation.IGNORE):
        (obj,) = loader.load_text(pud, "t.yaml")
    assert isinstance(obj, loader.UnknownObject)
    assert obj.kind == "Pud"
    crd = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
    (widget,) = loader.load_text(crd, "t.yaml")
    assert isinstance(widget, loader.UnknownObject)


def test_verify_names_the_workload_not_the_replica_set_it_expands_into(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = (
        "nodes:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1, labels: "
        "{topology.kubernetes.io/zone: a, kubernetes.io/hostname: n1}}\n"
        '  status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}\n'
        "workloads:\n"
        + "\n".join(
            ("- " if i == 0 else "  ") + line
            for i, line in enumerate(
                _with(DEPLOYMENT, "    spec:\n", "    spec:\n      restartPolicy: Never\n")
                .replace("replicas: 3", "replicas: 2")
                .splitlines()
            )
        )
        + "\n"
    )
    bad = write_text(tmp_path, "verify.yaml", scenario)
    assert_one_line_exit_2(
        ["verify", bad],
        capsys,
        "verify.yaml: workloads[0] (Deployment default/web): spec.template.spec.restartPolicy: "
        'Unsupported value: "Never": supported values: "Always"',
    )
