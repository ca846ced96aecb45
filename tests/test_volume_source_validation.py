"""Each volume source's own fields refused as the API server refuses them
(validateVolumeSource's per-source validators, validateKeyToPath, validateDownwardAPIVolumeFile,
validateProjectionSources; pkg/apis/core/validation/validation.go, v1.35), with exact messages
and paths in upstream's order, valid sources accepted, and the quick check agreeing."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import GOOD_POD, assert_manifest_refused
from test_label_validation import SUBDOMAIN_REGEX_ERROR
from test_volume_validation import make_pod, messages
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod

V: Final = "spec.volumes[0]"
MODE: Final = "must be a number between 0 and 0777 (octal), both inclusive"
HOST_PATH_TYPES: Final = (
    '"", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", '
    '"FileOrCreate", "Socket"'
)
FIELD_PATHS: Final = (
    '"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", '
    '"metadata.uid"'
)


def _file(path: str, field_path: str = "metadata.name", **more: Any) -> dict[str, Any]:
    return {"path": path, "fieldRef": {"apiVersion": "v1", "fieldPath": field_path}, **more}


def _token(**fields: Any) -> dict[str, Any]:
    return {"serviceAccountToken": {"path": "token", **fields}}


INVALID: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "configMap without a name": ({"configMap": {}}, [f"{V}.configMap.name: Required value"]),
    "hostPath without a path (nothing else checked)": (
        {"hostPath": {"type": "Nope"}},
        [f"{V}.hostPath.path: Required value"],
    ),
    "hostPath with a backstep and an unknown type": (
        {"hostPath": {"path": "/a/../b", "type": "Dir"}},
        [
            f"{V}.hostPath.path: Invalid value: \"/a/../b\": must not contain '..'",
            f'{V}.hostPath.type: Unsupported value: "Dir": supported values: {HOST_PATH_TYPES}',
        ],
    ),
    "emptyDir with a negative size limit": (
        {"emptyDir": {"sizeLimit": "-1Mi"}},
        [f"{V}.emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity"],
    ),
    "secret with a mode out of range": (
        {"secret": {"secretName": "s", "defaultMode": 99999}},
        [f"{V}.secret.defaultMode: Invalid value: 99999: {MODE}"],
    ),
    "secret without a name, items without key and path": (
        {"secret": {"items": [{"mode": -1}]}},
        [
            f"{V}.secret.secretName: Required value",
            f"{V}.secret.items[0].key: Required value",
            f"{V}.secret.items[0].path: Required value",
            f"{V}.secret.items[0].mode: Invalid value: -1: {MODE}",
        ],
    ),
    "configMap item paths: absolute, backstep, leading dots": (
        {
            "configMap": {
                "name": "c",
                "items": [
                    {"key": "a", "path": "/etc/a"},
                    {"key": "b", "path": "x/../../b"},
                    {"key": "c", "path": "..c"},
                ],
            }
        },
        [
            f'{V}.configMap.items[0].path: Invalid value: "/etc/a": must be a relative path',
            f"{V}.configMap.items[1].path: Invalid value: \"x/../../b\": must not contain '..'",
            f"{V}.configMap.items[2].path: Invalid value: \"..c\": must not start with '..'",
        ],
    ),
    "downwardAPI item errors sit at the source, not the item": (
        {"downwardAPI": {"defaultMode": 512, "items": [_file("../x")]}},
        [
            f"{V}.downwardAPI.defaultMode: Invalid value: 512: {MODE}",
            f"{V}.downwardAPI.path: Invalid value: \"../x\": must not contain '..'",
        ],
    ),
    "downwardAPI: neither or both refs": (
        {
            "downwardAPI": {
                "items": [
                    {"path": "a"},
                    _file("b", resourceFieldRef={"containerName": "c", "resource": "limits.cpu"}),
                ]
            }
        },
        [
            f"{V}.downwardAPI: Required value: one of fieldRef and resourceFieldRef is required",
            f'{V}.downwardAPI: Invalid value: "resource": fieldRef and resourceFieldRef can not '
            "be specified simultaneously",
        ],
    ),
    "downwardAPI field paths a volume may not name": (
        {
            "downwardAPI": {
                "items": [
                    _file("a", "spec.host"),
                    _file("b", "status.bogus"),
                    {"path": "c", "fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}},
                    {"path": "d", "fieldRef": {"apiVersion": "v1"}},
                ]
            }
        },
        [
            f'{V}.downwardAPI.fieldRef.fieldPath: Unsupported value: "spec.nodeName": '
            f"supported values: {FIELD_PATHS}",
            f'{V}.downwardAPI.fieldRef.fieldPath: Invalid value: "status.bogus": error '
            "converting fieldPath: field label not supported: status.bogus",
            f'{V}.downwardAPI.fieldRef.fieldPath: Invalid value: "metadata.name": error '
            "converting fieldPath: unsupported pod version: v2",
            f"{V}.downwardAPI.fieldRef.fieldPath: Required value",
        ],
    ),
    "downwardAPI resourceFieldRef": (
        {
            "downwardAPI": {
                "items": [
                    {"path": "a", "resourceFieldRef": {"resource": "limits.cpu"}},
                    {"path": "b", "resourceFieldRef": {"containerName": "c", "resource": "x"}},
                    {
                        "path": "c",
                        "resourceFieldRef": {
                            "containerName": "c",
                            "resource": "limits.memory",
                            "divisor": "3",
                        },
                    },
                ]
            }
        },
        [
            f"{V}.downwardAPI.resourceFieldRef.containerName: Required value",
            f'{V}.downwardAPI.resourceFieldRef.resource: Unsupported value: "x": supported '
            'values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", '
            '"requests.ephemeral-storage", "requests.memory"',
            f'{V}.downwardAPI.resourceFieldRef.divisor: Invalid value: "limits.memory": only '
            "divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are "
            "supported with the memory resource",
        ],
    ),
    "projected token: too short, and its path at projected.path": (
        {"projected": {"sources": [_token(expirationSeconds=10, path="../t")]}},
        [
            f"{V}.projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: "
            "10: may not specify a duration less than 10 minutes",
            f"{V}.projected.path: Invalid value: \"../t\": must not contain '..'",
        ],
    ),
    "projected token: too long, no path": (
        {"projected": {"sources": [_token(expirationSeconds=2**32 + 1, path="")]}},
        [
            f"{V}.projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: "
            "4294967297: may not specify a duration larger than 2^32 seconds",
            f"{V}.projected.path: Required value",
        ],
    ),
    "projected: mode, names, duplicate paths, two kinds in one source": (
        {
            "projected": {
                "defaultMode": 1000,
                "sources": [
                    {"secret": {"items": [{"key": "k", "path": "p"}]}},
                    {"configMap": {"name": "c", "items": [{"key": "k", "path": "p"}]}},
                    {"downwardAPI": {"items": [_file("p")]}, "configMap": {"name": "d"}},
                ],
            }
        },
        [
            f"{V}.projected.defaultMode: Invalid value: 1000: {MODE}",
            f"{V}.projected.sources[0].secret.name: Required value",
            f'{V}.projected: Invalid value: "c": conflicting duplicate paths',
            f'{V}.projected: Invalid value: "p": conflicting duplicate paths',
            f"{V}.projected.sources[2]: Forbidden: may not specify more than 1 volume type per "
            "source",
        ],
    ),
    "projected clusterTrustBundle without name or signer": (
        {"projected": {"sources": [{"clusterTrustBundle": {"path": "b"}}]}},
        [
            f"{V}.projected.sources[0].clusterTrustBundle: Required value: either name or "
            "signerName must be specified"
        ],
    ),
    "nfs without a server, a relative path": (
        {"nfs": {"path": "x"}},
        [
            f"{V}.nfs.server: Required value",
            f'{V}.nfs.path: Invalid value: "x": must be an absolute path',
        ],
    ),
    "nfs with nothing": (
        {"nfs": {}},
        [
            f"{V}.nfs.server: Required value",
            f"{V}.nfs.path: Required value",
            f'{V}.nfs.path: Invalid value: "": must be an absolute path',
        ],
    ),
    "csi driver: missing, then not a subdomain, and its secret at csi.name": (
        {"csi": {"driver": "Bad_Driver", "nodePublishSecretRef": {"name": "S"}}},
        [
            f'{V}.csi.driver: Invalid value: "Bad_Driver": {SUBDOMAIN_REGEX_ERROR}',
            f'{V}.csi.name: Invalid value: "S": {SUBDOMAIN_REGEX_ERROR}',
        ],
    ),
    "csi without a driver": (
        {"csi": {"nodePublishSecretRef": {}}},
        [
            f"{V}.csi.driver: Required value",
            f'{V}.csi.driver: Invalid value: "": {SUBDOMAIN_REGEX_ERROR}',
            f"{V}.csi.nodePublishSecretRef.name: Required value",
        ],
    ),
    "image without a reference, an unknown pull policy": (
        {"image": {"pullPolicy": "Sometimes"}},
        [
            f"{V}.image.reference: Required value",
            f'{V}.image.pullPolicy: Unsupported value: "Sometimes": supported values: '
            '"Always", "IfNotPresent", "Never"',
        ],
    ),
    "GCE PD under upstream's persistentDisk": (
        {"gcePersistentDisk": {"partition": 256}},
        [
            f"{V}.persistentDisk.pdName: Required value",
            f"{V}.persistentDisk.partition: Invalid value: 256: must be between 1 and 255, "
            "inclusive",
        ],
    ),
    "rbd without monitors or image": (
        {"rbd": {}},
        [f"{V}.rbd.monitors: Required value", f"{V}.rbd.image: Required value"],
    ),
}

VALID: Final[dict[str, dict[str, Any]]] = {
    "hostPath with a type": {"hostPath": {"path": "/var/log", "type": "DirectoryOrCreate"}},
    "hostPath with an empty type": {"hostPath": {"path": "/var/log", "type": ""}},
    "emptyDir in memory with a limit": {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    "secret with items and modes": {
        "secret": {
            "secretName": "tls",
            "defaultMode": 0o400,
            "items": [{"key": "tls.crt", "path": "certs/tls.crt", "mode": 0o777}],
        }
    },
    "configMap with a dotted file": {
        "configMap": {"name": "c", "items": [{"key": "k", "path": ".hidden/..data"}]}
    },
    "downwardAPI labels and annotations with subscripts": {
        "downwardAPI": {
            "items": [
                _file("labels", "metadata.labels['app.kubernetes.io/name']"),
                _file("annotations", "metadata.annotations['Example.com/Key']"),
                {
                    "path": "cpu",
                    "resourceFieldRef": {
                        "containerName": "c",
                        "resource": "limits.cpu",
                        "divisor": "1m",
                    },
                },
                {
                    "path": "hp",
                    "resourceFieldRef": {
                        "containerName": "c",
                        "resource": "requests.hugepages-2Mi",
                    },
                },
                {"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}},
            ]
        }
    },
    "projected token with the default expiry": {"projected": {"sources": [_token()]}},
    "projected clusterTrustBundle by signer": {
        "projected": {
            "sources": [{"clusterTrustBundle": {"signerName": "example.com/s", "path": "b"}}]
        }
    },
    "nfs": {"nfs": {"server": "10.0.0.1", "path": "/exports"}},
    "csi": {"csi": {"driver": "ebs.csi.aws.com", "volumeAttributes": {"a": "b"}}},
    "image": {"image": {"reference": "registry.example.com/data:1", "pullPolicy": "IfNotPresent"}},
}


@pytest.mark.parametrize("case", list(INVALID))
def test_each_sources_own_fields_are_refused_with_upstream_messages(case: str) -> None:
    source, expected = INVALID[case]
    pod = make_pod({"name": "v", **source})
    assert messages(pod) == expected
    assert not pod_fields_valid(pod)


@pytest.mark.parametrize("case", list(VALID))
def test_valid_sources_are_accepted(case: str) -> None:
    pod = make_pod({"name": "v", **VALID[case]})
    assert messages(pod) == []
    assert pod_fields_valid(pod)
    assert pod_fields_valid(pod)  # the cached verdict too


def test_a_templates_image_volume_may_leave_the_reference_out() -> None:
    pod = make_pod({"name": "v", "image": {}})
    assert messages(pod, from_template=True) == []
    assert pod_fields_valid(pod, from_template=True)
    assert not pod_fields_valid(pod)


@pytest.mark.parametrize("case", list(VALID))
def test_a_typed_source_is_written_back_whole(case: str) -> None:
    volume = {"name": "v", **VALID[case]}
    pod = make_pod(volume)
    again = msgspec.json.decode(msgspec.json.encode(pod), type=Pod)
    assert again == pod
    assert msgspec.json.decode(msgspec.json.encode(again.spec.volumes[0])) == volume


def test_a_pod_with_an_invalid_source_is_refused_naming_the_file_and_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GOOD_POD.replace("  containers:", "  volumes: [{name: c, configMap: {}}]\n  containers:")
    message = "(Pod default/p): spec.volumes[0].configMap.name: Required value"
    assert_manifest_refused("schedule", text, message, tmp_path, capsys)
