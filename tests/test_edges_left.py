"""The bad-input gaps the two audits left, each refused with the API server's (or kubectl's)
exact message, its field's path, and exit code 2."""

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
    assert_manifest_refused,
    assert_one_line_exit_2,
    run,
    write_text,
)
from test_loader_fast_path import exact, outcome
from topospread.api import yaml_fast
from topospread.api.apps_validation import validate_workload_spec
from topospread.api.decode import decode_object
from topospread.api.strict import FieldValidation, field_validation
from topospread.api.types import StatefulSet
from topospread.errors import ConfigError
from topospread.framework.config import decode_config

STATEFUL_SET: Final = DEPLOYMENT.replace("kind: Deployment", "kind: StatefulSet").replace(
    "  replicas: 3\n", "  replicas: 3\n  serviceName: web\n"
)


def _with(base: str, old: str, new: str) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


def _sts(spec_lines: str) -> str:
    return _with(STATEFUL_SET, "  selector:", spec_lines + "  selector:")


# validateContainerCommon requires an image of every container, a pod's or a template's;
# validateContainerOnlyForPod refuses a pod's image with whitespace around it
# (pkg/apis/core/validation/validation.go, v1.35). Then ValidateStatefulSetSpec
# (pkg/apis/apps/validation/validation.go, v1.35), after defaulting.
MANIFESTS: Final = {
    # validateContainers: an empty list of containers is one Required error (nothing else of
    # the containers is said); a spec without the key is the same empty list.
    "Pod without containers": (
        _with(
            GOOD_POD,
            "  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]",
            "  containers: []",
        ),
        "(Pod default/p): spec.containers: Required value",
    ),
    "Pod whose spec is empty": (
        _with(
            GOOD_POD,
            "spec:\n  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]",
            "spec: {}",
        ),
        "(Pod default/p): spec.containers: Required value",
    ),
    "Pod with only an init container, without an image": (
        _with(
            GOOD_POD,
            "  containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m}}}]",
            "  initContainers: [{name: i}]",
        ),
        "(Pod default/p): spec.containers: Required value",  # the first error, before init's
    ),
    "Deployment template without a spec": (
        DEPLOYMENT.split("    spec:\n")[0],
        "(Deployment default/web): spec.template.spec.containers: Required value",
    ),
    "Pod container without an image": (
        _with(GOOD_POD, "image: nginx, ", ""),
        "(Pod default/p): spec.containers[0].image: Required value",
    ),
    "Pod init container without an image": (
        _with(GOOD_POD, "  containers:", "  initContainers: [{name: init}]\n  containers:"),
        "(Pod default/p): spec.initContainers[0].image: Required value",
    ),
    "Pod image with whitespace around it": (
        _with(GOOD_POD, "image: nginx", "image: ' nginx'"),
        '(Pod default/p): spec.containers[0].image: Invalid value: " nginx": must not have '
        "leading or trailing whitespace",
    ),
    "Deployment template container without an image": (
        _with(DEPLOYMENT, "image: nginx, ", ""),
        "(Deployment default/web): spec.template.spec.containers[0].image: Required value",
    ),
    "StatefulSet podManagementPolicy unknown": (
        _sts("  podManagementPolicy: Sometimes\n"),
        '(StatefulSet default/web): spec.podManagementPolicy: Invalid value: "Sometimes": '
        "must be 'OrderedReady' or 'Parallel'",
    ),
    "StatefulSet updateStrategy type unknown": (
        _sts("  updateStrategy: {type: Rolling}\n"),
        '(StatefulSet default/web): spec.updateStrategy: Invalid value: {"Type":"Rolling",'
        "\"RollingUpdate\":null}: must be 'RollingUpdate' or 'OnDelete'",
    ),
    "StatefulSet updateStrategy type unknown with a rollingUpdate": (
        _sts("  updateStrategy: {type: Rolling, rollingUpdate: {maxUnavailable: 2}}\n"),
        '(StatefulSet default/web): spec.updateStrategy: Invalid value: {"Type":"Rolling",'
        '"RollingUpdate":{"Partition":0,"MaxUnavailable":2}}: must be \'RollingUpdate\' or '
        "'OnDelete'",
    ),
    "StatefulSet OnDelete with a rollingUpdate": (
        _sts("  updateStrategy: {type: OnDelete, rollingUpdate: {partition: 2}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate: Invalid value: "
        '{"Partition":2,"MaxUnavailable":null}: only allowed for updateStrategy \'RollingUpdate\'',
    ),
    "StatefulSet negative partition": (
        _sts("  updateStrategy: {rollingUpdate: {partition: -1}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate.partition: Invalid value: "
        "-1: must be greater than or equal to 0",
    ),
    "StatefulSet maxUnavailable 0": (
        _sts("  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 0}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid "
        "value: 0: cannot be 0",
    ),
    "StatefulSet maxUnavailable 0%": (
        _sts("  updateStrategy: {rollingUpdate: {maxUnavailable: 0%}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid "
        'value: "0%": cannot be 0',
    ),
    "StatefulSet maxUnavailable over 100%": (
        _sts("  updateStrategy: {rollingUpdate: {maxUnavailable: 101%}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid "
        'value: "101%": must not be greater than 100%',
    ),
    "StatefulSet maxUnavailable negative": (
        _sts("  updateStrategy: {rollingUpdate: {maxUnavailable: -1}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid "
        "value: -1: must be greater than or equal to 0",
    ),
    # The first of two errors (the second: cannot be 0, as "half" reads as 0).
    "StatefulSet maxUnavailable not a percentage": (
        _sts("  updateStrategy: {rollingUpdate: {maxUnavailable: half}}\n"),
        "(StatefulSet default/web): spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid "
        'value: "half": a valid percent string must be a numeric string followed by an ending '
        "'%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
    ),
    "StatefulSet retention policy unknown": (
        _sts("  persistentVolumeClaimRetentionPolicy: {whenScaled: Keep}\n"),
        "(StatefulSet default/web): spec.persistentVolumeClaimRetentionPolicy.whenScaled: "
        'Unsupported value: "Keep": supported values: "Retain", "Delete"',
    ),
}


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize("name", list(MANIFESTS))
def test_left_gaps_are_refused_with_the_api_servers_message(
    name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = MANIFESTS[name]
    assert_manifest_refused(command, text, message, tmp_path, capsys)


def test_a_template_image_with_whitespace_passes_but_its_pods_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The API server accepts the Deployment (only a pod's image is held to that); the pods its
    ReplicaSet creates are refused (upstream: FailedCreate events, no pod ever runs), which we
    report as the error that stops the run, naming the workload and the pod."""
    bad = write_text(tmp_path, "bad.yaml", _with(DEPLOYMENT, "image: nginx", "image: ' nginx'"))
    argv = ["check", bad, "--zones", "3"]
    assert_one_line_exit_2(argv, capsys, "bad.yaml: deployment default/web (Pod default/web-")
    assert_one_line_exit_2(
        argv,
        capsys,
        '): spec.containers[0].image: Invalid value: " nginx": must not have leading or '
        "trailing whitespace",
    )


@pytest.mark.parametrize(
    "spec_lines",
    [
        "  podManagementPolicy: Parallel\n",
        "  updateStrategy: {type: OnDelete}\n",
        "  updateStrategy: {rollingUpdate: {partition: 1, maxUnavailable: 50%}}\n",
        "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}\n",
    ],
)
def test_valid_stateful_set_strategies_are_accepted(
    spec_lines: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_text(tmp_path, "ok.yaml", _sts(spec_lines))
    code, _, err = run(["check", bad, "--zones", "3"], capsys)
    assert code != 2 and "error" not in err, err


def test_a_stateful_sets_spec_errors_come_in_upstreams_order() -> None:
    text = _sts(
        "  podManagementPolicy: Sometimes\n"
        "  updateStrategy: {rollingUpdate: {partition: -2, maxUnavailable: half}}\n"
        "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Keep}\n"
        "  minReadySeconds: -1\n"
        "  ordinals: {start: -1}\n"
    )
    sts = decode_object(yaml.safe_load(text), StatefulSet, "t")
    assert [str(e) for e in validate_workload_spec(sts)] == [
        "spec.podManagementPolicy: Invalid value: \"Sometimes\": must be 'OrderedReady' or "
        "'Parallel'",
        "spec.updateStrategy.rollingUpdate.partition: Invalid value: -2: must be greater than "
        "or equal to 0",
        'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "half": a valid '
        "percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or "
        "'93%', regex used for validation is '[0-9]+%')",
        'spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: "half": cannot be 0',
        'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": '
        'supported values: "Retain", "Delete"',
        "spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0",
        "spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0",
    ]


# kubectl apply/create -f: the client-side check (strict, warn) or the decoder (ignore).
STOP: Final = "if you choose to ignore these errors, turn validation off with --validate=false"
TYPE_META: Final = {
    "no apiVersion nor kind": (
        "metadata: {name: n1}\n",
        FieldValidation.STRICT,
        f't.yaml (name "n1"): error validating data: [apiVersion not set, kind not set]; {STOP}',
    ),
    "null kind, warn": (
        "apiVersion: v1\nkind:\nmetadata: {name: n1}\n",
        FieldValidation.WARN,
        f't.yaml (name "n1"): error validating data: kind not set; {STOP}',
    ),
    "apiVersion a number": (
        "apiVersion: 1\nkind: Node\nmetadata: {name: n1}\n",
        FieldValidation.STRICT,
        f"t.yaml (Node n1): error validating data: apiVersion isn't string type; {STOP}",
    ),
    "no kind, ignore": (
        "metadata: {name: n1, labels: {b: x, a: z}}\napiVersion: v1\n",
        FieldValidation.IGNORE,
        't.yaml (name "n1"): Object \'Kind\' is missing in \'{"apiVersion":"v1","metadata":'
        '{"labels":{"a":"z","b":"x"},"name":"n1"}}\'',
    ),
    "second document without a kind": (
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\napiVersion: v1\n",
        FieldValidation.STRICT,
        f"t.yaml: document 2: error validating data: kind not set; {STOP}",
    ),
}


@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("name", list(TYPE_META))
def test_a_manifest_without_apiversion_or_kind_is_refused_as_kubectl_refuses_it(
    name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, mode, message = TYPE_META[name]
    if fast:
        monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    with field_validation(mode):
        got = outcome(text) if fast else exact(text, monkeypatch)
    assert got == ("error", message)


def _volume(source: str) -> str:
    return _with(GOOD_POD, "  containers:", f"  volumes: [{{name: v, {source}}}]\n  containers:")


def _sts_with(extra: str) -> str:
    return _with(STATEFUL_SET, "  serviceName: web\n", "  serviceName: web\n" + extra)


# Go types of k8s.io/api core/v1 and apps/v1 (types.go, v1.35), as encoding/json names them.
WRONG_TYPES: Final = {
    "a volume source's int32": (
        _volume("gcePersistentDisk: {pdName: d, partition: x}"),
        "(Pod default/p): json: cannot unmarshal string into Go struct field "
        "GCEPersistentDiskVolumeSource.spec.volumes.gcePersistentDisk.partition of type int32",
    ),
    "an iSCSI lun as a string": (
        _volume("iscsi: {targetPortal: t, iqn: i, lun: '1'}"),
        "(Pod default/p): json: cannot unmarshal string into Go struct field "
        "ISCSIVolumeSource.spec.volumes.iscsi.lun of type int32",
    ),
    "a volume source's bool": (
        _volume("csi: {driver: d, readOnly: 'yes'}"),
        "(Pod default/p): json: cannot unmarshal string into Go struct field "
        "CSIVolumeSource.spec.volumes.csi.readOnly of type bool",
    ),
    "an Azure disk kind as a number": (
        _volume("azureDisk: {diskName: d, diskURI: u, kind: 1}"),
        "(Pod default/p): json: cannot unmarshal number into Go struct field "
        "AzureDiskVolumeSource.spec.volumes.azureDisk.kind of type v1.AzureDataDiskKind",
    ),
    "volumeClaimTemplates not a list": (
        _sts_with("  volumeClaimTemplates: x\n"),
        "(StatefulSet default/web): json: cannot unmarshal string into Go struct field "
        "StatefulSetSpec.spec.volumeClaimTemplates of type []v1.PersistentVolumeClaim",
    ),
    "a volumeClaimTemplate not a mapping": (
        _sts_with("  volumeClaimTemplates: [x]\n"),
        "(StatefulSet default/web): json: cannot unmarshal string into Go struct field "
        "StatefulSetSpec.spec.volumeClaimTemplates of type v1.PersistentVolumeClaim",
    ),
    "a retention policy not a mapping": (
        _sts_with("  persistentVolumeClaimRetentionPolicy: [a]\n"),
        "(StatefulSet default/web): json: cannot unmarshal array into Go struct field "
        "StatefulSetSpec.spec.persistentVolumeClaimRetentionPolicy of type "
        "v1.StatefulSetPersistentVolumeClaimRetentionPolicy",
    ),
}


@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("name", list(WRONG_TYPES))
def test_wrong_typed_values_name_upstreams_go_types(
    name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, message = WRONG_TYPES[name]
    if fast:
        monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    got = outcome(text) if fast else exact(text, monkeypatch)
    assert got == ("error", f"t.yaml {message}")


def test_a_wrong_typed_volume_field_exits_2_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = WRONG_TYPES["a volume source's int32"]
    bad = write_text(tmp_path, "bad.yaml", text)
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    assert_one_line_exit_2(["schedule", "--nodes", nodes, "--pods", bad], capsys, message)


# A retention policy's fields are apps/v1 PersistentVolumeClaimRetentionPolicyType (a string).
RETENTION_TYPES: Final = {
    "whenDeleted a number": (
        _sts_with("  persistentVolumeClaimRetentionPolicy: {whenDeleted: 1}\n"),
        "number",
        "whenDeleted",
    ),
    "whenScaled a list": (
        _sts_with("  persistentVolumeClaimRetentionPolicy: {whenScaled: [Retain]}\n"),
        "array",
        "whenScaled",
    ),
    "whenDeleted a bool": (
        _sts_with(
            "  persistentVolumeClaimRetentionPolicy: {whenScaled: Retain, whenDeleted: no}\n"
        ),
        "bool",
        "whenDeleted",
    ),
}


@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("name", list(RETENTION_TYPES))
def test_a_wrong_typed_retention_policy_field_is_go_s_type_error(
    name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, what, field = RETENTION_TYPES[name]
    if fast:
        monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    got = outcome(text) if fast else exact(text, monkeypatch)
    assert got == (
        "error",
        f"t.yaml (StatefulSet default/web): json: cannot unmarshal {what} into Go struct field "
        "StatefulSetPersistentVolumeClaimRetentionPolicy.spec."
        f"persistentVolumeClaimRetentionPolicy.{field} of type "
        "v1.PersistentVolumeClaimRetentionPolicyType",
    )


def test_a_wrong_typed_retention_policy_field_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = RETENTION_TYPES["whenDeleted a number"][0]
    bad = write_text(tmp_path, "bad.yaml", text)
    assert_one_line_exit_2(
        ["check", bad, "--zones", "3"],
        capsys,
        "bad.yaml (StatefulSet default/web): json: cannot unmarshal number into Go struct field "
        "StatefulSetPersistentVolumeClaimRetentionPolicy.spec.persistentVolumeClaimRetentionPolicy"
        ".whenDeleted of type v1.PersistentVolumeClaimRetentionPolicyType",
    )


# kubectl's getObjectKind counts only an absent (null) apiVersion or kind as not set: an empty
# string passes its check, and the decoder then finds no kind (NewMissingKindErr).
EMPTY_KIND: Final = {
    "empty kind": (
        "apiVersion: v1\nkind: ''\nmetadata: {name: n1}\n",
        '"apiVersion":"v1","kind":""',
    ),
    "empty kind and apiVersion": (
        "apiVersion: ''\nkind: ''\nmetadata: {name: n1}\n",
        '"apiVersion":"","kind":""',
    ),
    "empty kind, apiVersion missing": ("kind: ''\nmetadata: {name: n1}\n", '"kind":""'),
}


@pytest.mark.parametrize("mode", list(FieldValidation), ids=lambda m: m.value)
@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("name", list(EMPTY_KIND))
def test_an_empty_kind_passes_kubectls_check_and_is_missing_to_its_decoder(
    name: str, fast: bool, mode: FieldValidation, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, fields = EMPTY_KIND[name]
    if name == "empty kind, apiVersion missing" and mode is not FieldValidation.IGNORE:
        expected = f't.yaml (name "n1"): error validating data: apiVersion not set; {STOP}'
    else:
        expected = (
            f"t.yaml (name \"n1\"): Object 'Kind' is missing in '{{{fields},"
            '"metadata":{"name":"n1"}}\''
        )
    if fast:
        monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    with field_validation(mode):
        got = outcome(text) if fast else exact(text, monkeypatch)
    assert got == ("error", expected)


def test_an_empty_kind_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_text(tmp_path, "bad.yaml", EMPTY_KIND["empty kind"][0])
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    assert_one_line_exit_2(
        ["schedule", "--nodes", nodes, "--pods", bad],
        capsys,
        'bad.yaml (name "n1"): Object \'Kind\' is missing in \'{"apiVersion":"v1","kind":"",'
        '"metadata":{"name":"n1"}}\'',
    )


CONFIG: Final = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: PLUGIN
    args: ARGS
"""
# PluginConfig.decodeNestedObjects (k8s.io/kube-scheduler/config/v1 types.go) decodes the args
# of a plugin with an args type; apimachinery's SimpleMetaFactory.Interpret reads their
# apiVersion and kind first, into an anonymous struct, and a non-object fails there.
META_STRUCT: Final = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)
NOT_A_MAPPING: Final = {
    "a string": ('"x"', "string"),
    "a list": ("[1]", "array"),
    "a number": ("3", "number"),
    "a bool": ("true", "bool"),
}


@pytest.mark.parametrize("plugin", ["PodTopologySpread", "NodeResourcesFit", "InterPodAffinity"])
@pytest.mark.parametrize("name", list(NOT_A_MAPPING))
def test_plugin_args_that_are_not_a_mapping_are_kube_schedulers_decode_error(
    name: str, plugin: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args, what = NOT_A_MAPPING[name]
    text = CONFIG.replace("PLUGIN", plugin).replace("ARGS", args)
    config = write_text(tmp_path, "config.yaml", text)
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    pods = write_text(tmp_path, "pods.yaml", GOOD_POD)
    argv = ["schedule", "--nodes", nodes, "--pods", pods, "--config", config]
    assert_one_line_exit_2(
        argv,
        capsys,
        f"config.yaml: profiles[0].pluginConfig[0].args: decoding args for plugin {plugin}: "
        f"couldn't get version/kind; json parse error: json: cannot unmarshal {what} into Go "
        f"value of type {META_STRUCT}",
    )


def test_args_of_a_plugin_without_an_args_type_stay_unread() -> None:
    """Only a registered <Name>Args type is decoded; other plugins' args stay raw, unread."""
    for plugin in ("TaintToleration", "MyOutOfTreePlugin"):
        data = yaml.safe_load(CONFIG.replace("PLUGIN", plugin).replace("ARGS", '"x"'))
        config = decode_config(data, "config.yaml")
        assert config.profiles[0].plugin_args == {plugin: None}


def test_the_first_profiles_args_error_is_reported() -> None:
    text = CONFIG.replace("PLUGIN", "NodeAffinity").replace("ARGS", "[1]") + (
        "  - name: PodTopologySpread\n    args: x\n"
    )
    with pytest.raises(ConfigError, match=r"pluginConfig\[0\].*plugin NodeAffinity"):
        decode_config(yaml.safe_load(text), "config.yaml")


_CPU: Final = "resources: {requests: {cpu: 100m}}"
_QUANTITY_ERROR: Final = (
    'Invalid value: "lots": quantities must match the regular expression '
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
# Go's decoder reads the fields in the order kubectl sends them (its re-encoded map: sorted),
# saves the first plain type error and goes on, but stops at once when a type's own
# UnmarshalJSON fails (decodeState.saveError and literalStore, encoding/json decode.go as
# sigs.k8s.io/json vendors it; Quantity.UnmarshalJSON, IntOrString.UnmarshalJSON).
FIRST_ERROR: Final = {
    "a type error before a bad quantity": (
        _with(GOOD_POD, "spec:\n", "spec:\n  priority: x\n").replace("100m", "lots"),
        "(Pod default/p): spec.containers[0].resources.requests[cpu]: " + _QUANTITY_ERROR,
    ),
    "a type error after a bad quantity": (
        GOOD_POD.replace("100m", "lots") + "  priority: x\n",
        "(Pod default/p): spec.containers[0].resources.requests[cpu]: " + _QUANTITY_ERROR,
    ),
    "two type errors: the first in sorted order": (
        GOOD_POD + "  priority: x\n  nodeName: 1\n",
        "(Pod default/p): json: cannot unmarshal number into Go struct field "
        "PodSpec.spec.nodeName of type string",
    ),
    "a type error before a bad IntOrString": (
        _with(
            DEPLOYMENT,
            "  replicas: 3\n",
            "  replicas: x\n  strategy: {rollingUpdate: {maxSurge: true}}\n",
        ),
        "(Deployment default/web): json: cannot unmarshal bool into Go struct field "
        "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
    ),
    "a bad IntOrString read before a bad quantity": (
        _with(
            DEPLOYMENT, "  replicas: 3\n", "  strategy: {rollingUpdate: {maxSurge: 1.5}}\n"
        ).replace("100m", "lots"),
        "(Deployment default/web): json: cannot unmarshal number 1.5 into Go struct field "
        "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32",
    ),
    "a quantity under a mistyped object is never read": (
        GOOD_POD.replace(_CPU, "resources: [{requests: {cpu: lots}}]") + "  priority: x\n",
        "(Pod default/p): json: cannot unmarshal array into Go struct field "
        "Container.spec.containers.resources of type v1.ResourceRequirements",
    ),
}


@pytest.mark.parametrize("fast", [False, True], ids=["exact", "fast"])
@pytest.mark.parametrize("name", list(FIRST_ERROR))
def test_of_two_mistakes_the_api_servers_decoder_names_the_one_go_returns(
    name: str, fast: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, message = FIRST_ERROR[name]
    if fast:
        monkeypatch.setattr(yaml_fast, "_FAST_MIN_BYTES", 0)
    got = outcome(text) if fast else exact(text, monkeypatch)
    assert got == ("error", f"t.yaml {message}")
    assert outcome(json.dumps(yaml.safe_load(text))) == got


def test_of_two_mistakes_the_one_go_returns_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, message = FIRST_ERROR["a type error before a bad quantity"]
    bad = write_text(tmp_path, "bad.yaml", text)
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    assert_one_line_exit_2(
        ["schedule", "--nodes", nodes, "--pods", bad], capsys, f"bad.yaml {message}"
    )
