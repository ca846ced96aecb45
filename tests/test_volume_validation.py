"""A pod's ``spec.volumes`` refused as the API server refuses them (ValidateVolumes and
validateVolumeSource, pkg/apis/core/validation/validation.go, v1.35), with exact messages, in
upstream's order, and the quick yes/no path agreeing with the full check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from test_bad_input import DEPLOYMENT, GOOD_NODE, GOOD_POD, assert_manifest_refused, write_text
from test_cli import run
from topospread.api.field import Path as Path_
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod
from topospread.api.validation import validate_pod
from topospread.api.volume_validation import validate_volumes
from topospread.api.volumes import VOLUME_SOURCES, Volume

LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
MORE: Final = "Forbidden: may not specify more than 1 volume type"
# A generic ephemeral volume whose claim template the API server accepts.
EPHEMERAL: Final = {
    "volumeClaimTemplate": {
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    }
}
LONG_POD: Final = "p" * 250


def make_pod(*volumes: dict[str, Any], name: str = "web-1", **meta: Any) -> Pod:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default", **meta},
            "spec": {"containers": [{"name": "c", "image": "nginx"}], "volumes": list(volumes)},
        },
        Pod,
    )


def messages(pod: Pod, *, from_template: bool = False) -> list[str]:
    return [str(e) for e in validate_pod(pod, from_template=from_template)]


# A pod as a chart and the API server make it: the projected service account token volume, a
# configMap, scratch space and a claim.
CHART_VOLUMES: Final = (
    {
        "name": "kube-api-access-x7k2p",
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
        },
    },
    {"name": "config", "configMap": {"name": "web-config"}},
    {"name": "tmp", "emptyDir": {}},
    {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}},
)

CASES: Final = {
    "no source": (
        make_pod({"name": "v"}),
        ["spec.volumes[0]: Required value: must specify a volume type"],
    ),
    "a null source is none": (
        make_pod({"name": "v", "secret": None}),
        ["spec.volumes[0]: Required value: must specify a volume type"],
    ),
    "two sources: the later one is refused": (
        make_pod({"name": "v", "projected": {}, "emptyDir": {}}),
        [f"spec.volumes[0].projected: {MORE}"],
    ),
    "cephFS and downwarAPI as upstream spells their paths": (
        make_pod({"name": "v", "downwardAPI": {}, "cephfs": {}, "secret": {"secretName": "s"}}),
        [f"spec.volumes[0].cephFS: {MORE}", f"spec.volumes[0].downwarAPI: {MORE}"],
    ),
    "scaleIO after configMap": (
        make_pod({"name": "v", "scaleIO": {}, "configMap": {"name": "c"}}),
        [f"spec.volumes[0].scaleIO: {MORE}"],
    ),
    "image last": (
        make_pod({"name": "v", "image": {"reference": "x"}, "csi": {"driver": "d"}}),
        [f"spec.volumes[0].image: {MORE}"],
    ),
    "an empty claim name (the first source only is checked)": (
        make_pod(
            {"name": "a", "persistentVolumeClaim": {}},
            {"name": "b", "emptyDir": {}, "persistentVolumeClaim": {}},
        ),
        [
            "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
            f"spec.volumes[1].persistentVolumeClaim: {MORE}",
        ],
    ),
    "no name": (
        make_pod({"name": "", "emptyDir": {}}),
        ["spec.volumes[0].name: Required value"],
    ),
    "a name that is not a DNS label": (
        make_pod({"name": "Data", "emptyDir": {}}),
        [f'spec.volumes[0].name: Invalid value: "Data": {LABEL_MSG}'],
    ),
    "a duplicate name": (
        make_pod({"name": "data", "emptyDir": {}}, {"name": "data", "secret": {"secretName": "s"}}),
        ['spec.volumes[1].name: Duplicate value: "data"'],
    ),
    "a volume with errors is not remembered": (
        make_pod({"name": "data"}, {"name": "data", "emptyDir": {}}),
        ["spec.volumes[0]: Required value: must specify a volume type"],
    ),
    "source errors come before name errors": (
        make_pod({"name": "Data", "persistentVolumeClaim": {"claimName": ""}, "rbd": {}}),
        [
            "spec.volumes[0].persistentVolumeClaim.claimName: Required value",
            f"spec.volumes[0].rbd: {MORE}",
            f'spec.volumes[0].name: Invalid value: "Data": {LABEL_MSG}',
        ],
    ),
    "a claim an ephemeral volume creates": (
        make_pod(
            {"name": "scratch", "ephemeral": EPHEMERAL},
            {"name": "data", "persistentVolumeClaim": {"claimName": "web-1-scratch"}},
        ),
        [
            'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "web-1-scratch": '
            "must not reference a PVC that gets created for an ephemeral volume"
        ],
    ),
    "an ephemeral volume whose claim name is too long": (
        make_pod({"name": "scratch", "ephemeral": EPHEMERAL}, name=LONG_POD),
        [
            'spec.volumes[0].name: Invalid value: "scratch": '
            f'PVC name "{LONG_POD}-scratch": must be no more than 253 characters'
        ],
    ),
    "the claim is checked even when the volume has errors": (
        make_pod(
            {"name": "s", "ephemeral": EPHEMERAL},
            {"name": "D", "persistentVolumeClaim": {"claimName": "web-1-s"}, "fc": {}},
        ),
        [
            f"spec.volumes[1].fc: {MORE}",
            f'spec.volumes[1].name: Invalid value: "D": {LABEL_MSG}',
            'spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: "web-1-s": '
            "must not reference a PVC that gets created for an ephemeral volume",
        ],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_invalid_volumes_report_upstream_messages(case: str) -> None:
    pod, expected = CASES[case]
    assert messages(pod) == expected
    assert not pod_fields_valid(pod)


def test_a_chart_like_pods_volumes_are_valid() -> None:
    pod = make_pod(*CHART_VOLUMES)
    assert messages(pod) == []
    assert pod_fields_valid(pod)
    assert pod.spec.volumes[0].projected is not None


def test_volume_errors_come_after_the_labels_and_before_the_containers() -> None:
    pod = msgspec.convert(
        {
            "metadata": {"name": "web-1", "namespace": "default", "labels": {"a": "-"}},
            "spec": {"containers": [{"name": "c"}], "volumes": [{"name": "v"}]},
        },
        Pod,
    )
    assert [m.split(":")[0] for m in messages(pod)] == [
        "metadata.labels",
        "spec.volumes[0]",
        "spec.containers[0].image",
    ]


def test_a_template_has_no_pod_name_to_check_ephemeral_claims_with() -> None:
    """ValidatePodTemplateSpec passes ValidatePodSpec no pod metadata."""
    long_claim = make_pod({"name": "scratch", "ephemeral": EPHEMERAL}, name=LONG_POD)
    created = CASES["a claim an ephemeral volume creates"][0]
    for pod in (long_claim, created):
        assert messages(pod, from_template=True) == []
        assert pod_fields_valid(pod, from_template=True)
    no_source = make_pod({"name": "v"})
    assert messages(no_source, from_template=True) == [
        "spec.volumes[0]: Required value: must specify a volume type"
    ]


def test_every_volume_source_is_known_by_its_json_name() -> None:
    fields = json.loads(
        (Path(__file__).parent.parent / "src/topospread/api/fields.json").read_text()
    )["types"]["V1Volume"]
    names = {f.encode_name for f in msgspec.structs.fields(Volume)}
    assert names == set(fields)
    assert {a for a, _ in VOLUME_SOURCES} == {f.name for f in msgspec.structs.fields(Volume)} - {
        "name"
    }
    for attr, _ in VOLUME_SOURCES:
        encode_name = next(f.encode_name for f in msgspec.structs.fields(Volume) if f.name == attr)
        pod = make_pod({"name": "v", encode_name: {}})
        assert getattr(pod.spec.volumes[0], attr) is not None, attr
        assert (messages(pod) == []) == (attr not in _REQUIRED_FIELDS), attr


# The sources an empty ``{}`` of which the API server refuses for a missing field (their
# messages: test_volume_source_validation.py).
_REQUIRED_FIELDS: Final = {
    "persistent_volume_claim",
    "host_path",
    "gce_persistent_disk",
    "aws_elastic_block_store",
    "secret",
    "nfs",
    "iscsi",
    "rbd",
    "cinder",
    "config_map",
    "azure_disk",
    "csi",
    "image",
    "ephemeral",
    "git_repo",
    "glusterfs",
    "flocker",
    "cephfs",
    "quobyte",
    "fc",
    "flex_volume",
    "azure_file",
    "vsphere_volume",
    "photon_persistent_disk",
    "portworx_volume",
    "storageos",
    "scale_io",
}


POD_WITH: Final = GOOD_POD.replace(
    "  containers:", "  volumes: [{name: data, emptyDir: {}, configMap: {name: c}}]\n  containers:"
)
TEMPLATE_WITH: Final = DEPLOYMENT.replace(
    "      containers:", "      volumes: [{name: data}]\n      containers:"
)


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            POD_WITH,
            "(Pod default/p): spec.volumes[0].configMap: Forbidden: may not specify "
            "more than 1 volume type",
            id="pod",
        ),
        pytest.param(
            TEMPLATE_WITH,
            "(Deployment default/web): spec.template.spec.volumes[0]: Required value: must "
            "specify a volume type",
            id="deployment template",
        ),
    ],
)
def test_invalid_volumes_are_refused_naming_the_file_and_object(
    command: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_manifest_refused(command, text, message, tmp_path, capsys)


def test_the_cluster_written_back_keeps_each_volumes_type_and_reads_back_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typed source is written back whole; a source read only for its presence is written
    as ``{}``, so the volume keeps its type: ``-o yaml``'s output is still a valid input."""
    pod = GOOD_POD.replace(
        "  containers:", f"  volumes: {json.dumps(list(CHART_VOLUMES))}\n  containers:"
    )
    argv = ["schedule", "--nodes", write_text(tmp_path, "nodes.yaml", GOOD_NODE)]
    code, out, err = run(
        [*argv, "--pods", write_text(tmp_path, "pods.yaml", pod), "-o", "yaml"], capsys
    )
    assert code == 0, err
    written = next(d for d in yaml.safe_load_all(out) if d["kind"] == "Pod")
    assert written["spec"]["volumes"] == list(CHART_VOLUMES)
    again = write_text(tmp_path, "again.yaml", out)
    code, out, err = run(["schedule", "--nodes", again, "-o", "yaml"], capsys)
    assert code == 0, err
    assert "kube-api-access-x7k2p" in out


_NAMES: Final = ["data", "scratch", "", "Data", "web-1-scratch"]
_SOURCES: Final = {
    "emptyDir": st.sampled_from([{}, {"sizeLimit": "1Gi"}, {"sizeLimit": "-1"}]),
    "projected": st.sampled_from(
        [
            {"sources": []},
            CHART_VOLUMES[0]["projected"],
            {"sources": [{"serviceAccountToken": {"expirationSeconds": 10, "path": "t"}}]},
            {"defaultMode": 4096, "sources": [{"secret": {"name": "s"}}]},
            {"sources": [{"serviceAccountToken": {"expirationSeconds": 2**32 + 1, "path": "t"}}]},
            {"sources": [{"serviceAccountToken": {"path": "../t"}}]},
            {"sources": [{"configMap": {"name": "c", "items": [{"key": "k", "path": "/p"}]}}]},
            {
                "sources": [
                    {"configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}},
                    {"secret": {"name": "s", "items": [{"key": "k", "path": "p"}]}},
                ]
            },
            {
                "sources": [
                    {"downwardAPI": {"items": [{"path": "p", "fieldRef": {"fieldPath": "x"}}]}}
                ]
            },
            {"sources": [{"secret": {"name": "s"}, "configMap": {"name": "c"}}]},
            {"sources": [{"clusterTrustBundle": {"signerName": "s", "path": "b"}}]},
            {"sources": [{"clusterTrustBundle": {"path": "b"}}]},
        ]
    ),
    "secret": st.sampled_from(
        [{"secretName": "s"}, {}, {"secretName": "s", "items": [{"key": "k", "path": "../p"}]}]
    ),
    "configMap": st.sampled_from([{"name": "c"}, {}, {"name": "c", "defaultMode": -1}]),
    "hostPath": st.sampled_from([{"path": "/d"}, {}, {"path": "/d", "type": "Dir"}]),
    "downwardAPI": st.sampled_from(
        [
            {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]},
            {"items": [{"path": "n", "fieldRef": {"fieldPath": "spec.nodeName"}}]},
        ]
    ),
    "csi": st.sampled_from([{"driver": "d.example.com"}, {"driver": "D_"}]),
    "nfs": st.sampled_from([{"server": "s", "path": "/x"}, {"server": "s", "path": "x"}]),
    "ephemeral": st.sampled_from(
        [
            EPHEMERAL,
            {},
            {"volumeClaimTemplate": {"metadata": {"name": "x"}, "spec": {}}},
            {"volumeClaimTemplate": {**EPHEMERAL["volumeClaimTemplate"], "metadata": {}}},
        ]
    ),
    "iscsi": st.sampled_from(
        [
            {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:disk", "lun": 0},
            {"targetPortal": "1" * 60, "iqn": "naa." + "0" * 32, "initiatorName": "eui.x"},
            {"targetPortal": "p", "iqn": "iqn.x", "chapAuthSession": True},
        ]
    ),
    "fc": st.sampled_from([{"wwids": ["w"]}, {}, {"targetWWNs": ["a"], "lun": 256}]),
    "flexVolume": st.sampled_from([{"driver": "d"}, {"driver": "d", "options": {"k8s.io/x": ""}}]),
    "image": st.sampled_from([{"reference": "r"}, {}, {"reference": "r", "pullPolicy": "No"}]),
    "persistentVolumeClaim": st.fixed_dictionaries(
        {"claimName": st.sampled_from(["", "c", "web-1-scratch", "web-1-data"])}
    ),
}
# Mostly one source (valid volumes), sometimes none or two.
_VOLUME: Final = st.builds(
    lambda name, sources: {"name": name, **sources},
    st.sampled_from(_NAMES),
    st.sampled_from([1, 1, 1, 1, 0, 2])
    .flatmap(
        lambda n: st.lists(st.sampled_from(list(_SOURCES)), min_size=n, max_size=n, unique=True)
    )
    .flatmap(lambda keys: st.fixed_dictionaries({k: _SOURCES[k] for k in keys})),
)


@given(
    volumes=st.lists(_VOLUME, max_size=4),
    pod_name=st.sampled_from(["web-1", LONG_POD]),
    from_template=st.booleans(),
)
@settings(max_examples=500, deadline=None)
def test_the_quick_check_agrees_with_the_full_one(
    volumes: list[dict[str, Any]], pod_name: str, from_template: bool
) -> None:
    pod = make_pod(*volumes, name=pod_name)
    errors = validate_volumes(
        pod.spec.volumes, "" if from_template else pod_name, Path_.root("spec", "volumes")
    )
    assert pod_fields_valid(pod, from_template=from_template) == (not errors), errors


# A projected podCertificate (PodCertificateRequest: beta in v1.35, off by default): the API
# server drops it from a new pod before validating it (dropDisabledPodCertificateProjection),
# so a source that held only it is stored empty, and validateProjectionSources, which refuses
# two sources in one but not none, accepts that; its JSON is still decoded (strictly) first.
CERTIFICATE: Final = {"signerName": "example.com/s", "keyType": "ED25519", "keyPath": "k"}


def test_a_projected_pod_certificate_is_dropped_and_its_empty_source_accepted() -> None:
    alone = make_pod({"name": "v", "projected": {"sources": [{"podCertificate": CERTIFICATE}]}})
    (source,) = alone.spec.volumes[0].projected.sources  # type: ignore[union-attr]
    assert msgspec.to_builtins(source) == {}
    assert b"podCertificate" not in msgspec.json.encode(alone)
    assert messages(alone) == []
    # Beside another source it is not a second one: dropped before the count.
    beside = {"podCertificate": CERTIFICATE, "configMap": {"name": "cm"}}
    assert messages(make_pod({"name": "v", "projected": {"sources": [beside]}})) == []
    # Its own fields are never validated (a bad key type, an unknown signer).
    bad = {"podCertificate": {"signerName": "not a signer", "keyType": "DSA"}}
    assert messages(make_pod({"name": "v", "projected": {"sources": [bad]}})) == []


@pytest.mark.parametrize(
    ("certificate", "message"),
    [
        pytest.param(
            "{signerName: 5}",
            "json: cannot unmarshal number into Go struct field PodCertificateProjection.spec."
            "volumes.projected.sources.podCertificate.signerName of type string",
            id="a field of the wrong type",
        ),
        pytest.param(
            "{signerName: example.com/s, bogus: 1}",
            'strict decoding error: unknown field "spec.volumes[0].projected.sources[0].'
            'podCertificate.bogus"',
            id="an unknown field",
        ),
    ],
)
def test_a_projected_pod_certificate_is_still_decoded_strictly(
    certificate: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GOOD_POD + (
        "  volumes:\n  - name: v\n    projected:\n"
        f"      sources: [{{podCertificate: {certificate}}}]\n"
    )
    assert_manifest_refused("schedule", text, message, tmp_path, capsys)
