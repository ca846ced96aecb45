"""A generic ephemeral volume's claim template and the legacy in-tree volume sources refused as
the API server refuses them, with exact messages and paths in upstream's order
(validateEphemeralVolumeSource, ValidatePersistentVolumeClaimTemplate, ValidateTemplateObjectMeta,
ValidatePersistentVolumeClaimSpec, validateGitRepoVolumeSource, validateISCSIVolumeSource,
validateFCVolumeSource, validateQuobyteVolumeSource, validateFlexVolumeSource, validateAzureDisk,
...; pkg/apis/core/validation/validation.go, v1.35), valid ones accepted, and the quick check
agreeing. Rows named in quotes are TestValidateVolumes' cases (validation_test.go) with their
values; upstream asserts the type and field, these the whole message.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import GOOD_POD, assert_manifest_refused
from test_label_validation import NAME_PART_REGEX_ERROR, SUBDOMAIN_REGEX_ERROR
from test_storage_validation import make_pv
from test_storage_validation import messages as pv_messages
from test_volume_validation import EPHEMERAL, LABEL_MSG, make_pod, messages
from topospread.api.quick_validation import pod_fields_valid
from topospread.api.types import Pod
from topospread.api.volume_source_legacy import split_host_port

V: Final = "spec.volumes[0]"
T: Final = f"{V}.ephemeral.volumeClaimTemplate"
REGISTRY: Final = "must be a host:port pair or multiple pairs separated by commas"
RESERVED: Final = "kubernetes.io and k8s.io namespaces are reserved"
BLOB_URI: Final = '"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"'
MANAGED_URI: Final = (
    '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/'
    '{disk-id}"'
)
ACCESS_MODES: Final = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
ISCSI: Final = {"targetPortal": "127.0.0.1", "iqn": "iqn.2015-02.example.com:test", "lun": 1}
SPEC: Final = EPHEMERAL["volumeClaimTemplate"]["spec"]
P: Final = f"{V}.projected.sources[0].clusterTrustBundle"


def _bundle(**fields: Any) -> dict[str, Any]:
    return {"projected": {"sources": [{"clusterTrustBundle": {"path": "b", **fields}}]}}


def _template(**fields: Any) -> dict[str, Any]:
    return {"ephemeral": {"volumeClaimTemplate": {"spec": SPEC, **fields}}}


def _spec(**fields: Any) -> dict[str, Any]:
    return _template(spec={**SPEC, **fields})


INVALID: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "ephemeral without a claim template": (
        {"ephemeral": {}},
        [f"{T}: Required value"],
    ),
    "ephemeral with an empty claim spec": (
        {"ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        [
            f"{T}.spec.accessModes: Required value: at least 1 access mode is required",
            f"{T}.spec.resources[storage]: Required value",
        ],
    ),
    "ephemeral template metadata other than labels and annotations, in Go's field order": (
        _template(
            metadata={
                "uid": "u",
                "name": "n",
                "namespace": "ns",
                "finalizers": [],
                "generation": 2,
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "deletionGracePeriodSeconds": 0,
                "labels": {"a": "b"},
                "annotations": {"c": "d"},
            }
        ),
        [
            f"{T}.metadata.name: Forbidden: cannot be set",
            f"{T}.metadata.namespace: Forbidden: cannot be set",
            f"{T}.metadata.uID: Forbidden: cannot be set",
            f"{T}.metadata.generation: Forbidden: cannot be set",
            f"{T}.metadata.creationTimestamp: Forbidden: cannot be set",
            f"{T}.metadata.deletionGracePeriodSeconds: Forbidden: cannot be set",
            f"{T}.metadata.finalizers: Forbidden: cannot be set",
        ],
    ),
    "ephemeral template labels and annotations are label keys": (
        _template(metadata={"annotations": {"a b": "x"}, "labels": {"c d": "y"}}),
        [
            f'{T}.metadata.annotations: Invalid value: "a b": {NAME_PART_REGEX_ERROR}',
            f'{T}.metadata.labels: Invalid value: "c d": {NAME_PART_REGEX_ERROR}',
        ],
    ),
    "ephemeral claim spec: selector, modes, ReadWriteOncePod with others, then the rest": (
        _spec(
            accessModes=["ReadWriteOncePod", "Sometimes", "ReadWriteOnce"],
            selector={"matchLabels": {"a b": "c"}},
            resources={"requests": {"storage": "0"}},
            storageClassName="Fast_Class",
            volumeMode="Raw",
            dataSource={"kind": "Snapshot"},
            volumeAttributesClassName="Gold_",
        ),
        [
            f'{T}.spec.selector.matchLabels: Invalid value: "a b": {NAME_PART_REGEX_ERROR}',
            f'{T}.spec.accessModes: Unsupported value: "Sometimes": supported values: '
            f"{ACCESS_MODES}",
            f"{T}.spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access "
            "modes",
            f'{T}.spec.resources[storage]: Invalid value: "0": must be greater than zero',
            f'{T}.spec.storageClassName: Invalid value: "Fast_Class": {SUBDOMAIN_REGEX_ERROR}',
            f'{T}.spec.volumeMode: Unsupported value: "Raw": supported values: "Block", '
            '"Filesystem"',
            f"{T}.spec.dataSource.name: Required value",
            f"{T}.spec.dataSource: Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' "
            "when referencing the default apiGroup",
            f'{T}.spec.volumeAttributesClassName: Invalid value: "Gold_": {SUBDOMAIN_REGEX_ERROR}',
        ],
    ),
    "GitRepo starts with ../": (
        {"gitRepo": {"repository": "foo", "directory": "../dots/bar"}},
        [f"{V}.gitRepo.directory: Invalid value: \"../dots/bar\": must not contain '..'"],
    ),
    "GitRepo absolute target": (
        {"gitRepo": {"repository": "foo", "directory": "/abstarget"}},
        [f'{V}.gitRepo.directory: Invalid value: "/abstarget": must be a relative path'],
    ),
    "gitRepo without a repository": ({"gitRepo": {}}, [f"{V}.gitRepo.repository: Required value"]),
    "empty hosts": (
        {"glusterfs": {"endpoints": "", "path": "path"}},
        [f"{V}.glusterfs.endpoints: Required value"],
    ),
    "empty path": (
        {"glusterfs": {"endpoints": "host", "path": ""}},
        [f"{V}.glusterfs.path: Required value"],
    ),
    "both empty": (
        {"flocker": {"datasetName": ""}},
        [f"{V}.flocker: Required value: one of datasetName and datasetUUID is required"],
    ),
    "both specified": (
        {
            "flocker": {
                "datasetName": "datasetName",
                "datasetUUID": "d846b09d-223d-43df-ab5b-d6db2206a0e4",
            }
        },
        [
            f'{V}.flocker: Invalid value: "resource": datasetName and datasetUUID can not be '
            "specified simultaneously"
        ],
    ),
    "slash in flocker datasetName": (
        {"flocker": {"datasetName": "foo/bar"}},
        [f"{V}.flocker.datasetName: Invalid value: \"foo/bar\": must not contain '/'"],
    ),
    "empty cephfs monitors (under upstream's cephfs)": (
        {"cephfs": {"monitors": []}},
        [f"{V}.cephfs.monitors: Required value"],
    ),
    "empty registry quobyte": (
        {"quobyte": {"volume": "/test"}},
        [f"{V}.quobyte.registry: Required value: {REGISTRY}"],
    ),
    "wrong format registry quobyte": (
        {"quobyte": {"registry": "registry7861", "volume": "/test"}},
        [f'{V}.quobyte.registry: Invalid value: "registry7861": {REGISTRY}'],
    ),
    "wrong format multiple registries quobyte: one error per bad pair": (
        {"quobyte": {"registry": "a:1,b,[::1]:2,c::3", "volume": "/test"}},
        [
            f'{V}.quobyte.registry: Invalid value: "a:1,b,[::1]:2,c::3": {REGISTRY}',
            f'{V}.quobyte.registry: Invalid value: "a:1,b,[::1]:2,c::3": {REGISTRY}',
        ],
    ),
    "empty volume quobyte": (
        {"quobyte": {"registry": "registry:7861"}},
        [f"{V}.quobyte.volume: Required value"],
    ),
    "too long tenant quobyte": (
        {"quobyte": {"registry": "registry:7861", "volume": "/test", "tenant": "t" * 65}},
        [
            f"{V}.quobyte.tenant: Required value: must be a UUID and may not exceed a length of "
            "64 characters"
        ],
    ),
    "fc empty wwn and wwid": (
        {"fc": {"lun": 1, "fsType": "ext4"}},
        [
            f"{V}.fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but "
            "not both"
        ],
    ),
    "fc invalid: both targetWWNs and wwids": (
        {"fc": {"targetWWNs": ["some_wwn"], "wwids": ["some_wwid"], "lun": 1}},
        [
            f'{V}.fc.targetWWNs: Invalid value: ["some_wwn"]: targetWWNs and wwids can not be '
            "specified simultaneously"
        ],
    ),
    "fc valid targetWWNs and empty lun": (
        {"fc": {"targetWWNs": ["wwn"]}},
        [f"{V}.fc.lun: Required value: lun is required if targetWWNs is specified"],
    ),
    "fc invalid: target lun out of range": (
        {"fc": {"targetWWNs": ["wwn"], "lun": 256}},
        [f"{V}.fc.lun: Invalid value: 256: must be between 0 and 255, inclusive"],
    ),
    "flexVolume: a driver, and options out of the reserved namespaces (sorted keys)": (
        {"flexVolume": {"options": {"kubernetes.io/x": "", "foo/k8s.io": "", "a.K8S.io": ""}}},
        [
            f"{V}.flexVolume.driver: Required value",
            f'{V}.flexVolume.options[a.K8S.io]: Invalid value: "a.K8S.io": {RESERVED}',
            f'{V}.flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": '
            f"{RESERVED}",
        ],
    ),
    "AzureFile empty secret and share": (
        {"azureFile": {}},
        [f"{V}.azureFile.secretName: Required value", f"{V}.azureFile.shareName: Required value"],
    ),
    "vsphereVolume without a path": (
        {"vsphereVolume": {}},
        [f"{V}.vsphereVolume.volumePath: Required value"],
    ),
    "photonPersistentDisk without an ID": (
        {"photonPersistentDisk": {}},
        [f"{V}.photonPersistentDisk.pdID: Required value"],
    ),
    "portworxVolume without an ID": (
        {"portworxVolume": {}},
        [f"{V}.portworxVolume.volumeID: Required value"],
    ),
    "storageos names are DNS labels; a secret needs a name": (
        {"storageos": {"volumeName": "Bad_Name", "volumeNamespace": "ns_x", "secretRef": {}}},
        [
            f'{V}.storageos.volumeName: Invalid value: "Bad_Name": {LABEL_MSG}',
            f'{V}.storageos.volumeNamespace: Invalid value: "ns_x": {LABEL_MSG}',
            f"{V}.storageos.secretRef.name: Required value",
        ],
    ),
    "storageos without a volume name": (
        {"storageos": {}},
        [f"{V}.storageos.volumeName: Required value"],
    ),
    "ScaleIO with empty gateway, system and name": (
        {"scaleIO": {}},
        [
            f"{V}.scaleIO.gateway: Required value",
            f"{V}.scaleIO.system: Required value",
            f"{V}.scaleIO.volumeName: Required value",
        ],
    ),
    "invalid IQN: iqn format": (
        {"iscsi": {**ISCSI, "iqn": "iqn.2015-02.example.com:test;ls;"}},
        [f'{V}.iscsi.iqn: Invalid value: "iqn.2015-02.example.com:test;ls;": must be valid format'],
    ),
    "invalid IQN: eui format": (
        {"iscsi": {**ISCSI, "iqn": "eui.0123456789ABCDEFGHIJ"}},
        [f'{V}.iscsi.iqn: Invalid value: "eui.0123456789ABCDEFGHIJ": must be valid format'],
    ),
    "invalid IQN: naa format": (
        {"iscsi": {**ISCSI, "iqn": "naa.62004567BA_4-78D.123456789ABCDEF"}},
        [
            f'{V}.iscsi.iqn: Invalid value: "naa.62004567BA_4-78D.123456789ABCDEF": must be '
            "valid format"
        ],
    ),
    "an IQN with a trailing newline (Go's $ is the text's end)": (
        {"iscsi": {**ISCSI, "iqn": "eui.0123456789ABCDEF\n"}},
        [f'{V}.iscsi.iqn: Invalid value: "eui.0123456789ABCDEF\\n": must be valid format'],
    ),
    "invalid initiatorName (under upstream's initiatorname)": (
        {"iscsi": {**ISCSI, "initiatorName": "2015-02.example.com:init"}},
        [
            f'{V}.iscsi.initiatorname: Invalid value: "2015-02.example.com:init": must be valid '
            "format starting with iqn, eui, or naa"
        ],
    ),
    "empty secret": (
        {"iscsi": {**ISCSI, "chapAuthDiscovery": True}},
        [f"{V}.iscsi.secretRef: Required value"],
    ),
    "an initiator name limits <volume name>:<target portal> to 64 characters": (
        {"iscsi": {**ISCSI, "targetPortal": "p" * 63, "initiatorName": "iqn.2015-02.a.b:c"}},
        [
            f'{V}.name: Invalid value: "v": Total length of <volume name>:<iscsi.targetPortal> '
            "must be under 64 characters if iscsi.initiatorName is specified."
        ],
    ),
    "cinder secret without a name": (
        {"cinder": {"volumeID": "v", "secretRef": {}}},
        [f"{V}.cinder.secretRef.name: Required value"],
    ),
    "AzureDisk of no kind is a Shared blob: its URI is https": (
        {"azureDisk": {"diskName": "foo", "diskURI": "/subscriptions/s/disks/d"}},
        [
            f'{V}.azureDisk.diskURI: Unsupported value: "/subscriptions/s/disks/d": supported '
            f"values: {BLOB_URI}"
        ],
    ),
    "AzureDisk managed: its URI is a resource ID": (
        {"azureDisk": {"diskName": "foo", "diskURI": "https://a/b.vhd", "kind": "Managed"}},
        [
            f'{V}.azureDisk.diskURI: Unsupported value: "https://a/b.vhd": supported values: '
            f"{MANAGED_URI}"
        ],
    ),
    "AzureDisk with an unknown caching mode and kind, no name or URI": (
        {"azureDisk": {"cachingMode": "Fast", "kind": "Big"}},
        [
            f"{V}.azureDisk.diskName: Required value",
            f"{V}.azureDisk.diskURI: Required value",
            f'{V}.azureDisk.cachingMode: Unsupported value: "Fast": supported values: "None", '
            '"ReadOnly", "ReadWrite"',
            f'{V}.azureDisk.kind: Unsupported value: "Big": supported values: "Dedicated", '
            '"Managed", "Shared"',
            f'{V}.azureDisk.diskURI: Unsupported value: "": supported values: {BLOB_URI}',
        ],
    ),
    "clusterTrustBundle by name: the part after the signer is a DNS subdomain": (
        _bundle(name="example.com:signer:Bad_", labelSelector={"matchLabels": {"a": "b"}}),
        [
            f'{P}.name: Invalid value: "example.com:signer:Bad_": not a valid '
            f"clustertrustbundlename: {SUBDOMAIN_REGEX_ERROR}",
            f'{P}.labelSelector: Invalid value: {{"matchLabels":{{"a":"b"}}}}: labelSelector '
            "must be unset if name is specified",
        ],
    ),
    "clusterTrustBundle by an empty name": (
        _bundle(name=""),
        [
            f"{P}.name: Required value: must be a valid object name",
            f'{P}.name: Invalid value: "": not a valid clustertrustbundlename: '
            f"{SUBDOMAIN_REGEX_ERROR}",
        ],
    ),
    "clusterTrustBundle named with a colon but no signer": (
        _bundle(name=":x"),
        [
            f'{P}.name: Invalid value: ":x": not a valid clustertrustbundlename: '
            'ClusterTrustBundle without signer name must not have ":" in its name'
        ],
    ),
    "clusterTrustBundle signer: empty": (
        _bundle(signerName=""),
        [
            f"{P}.signerName: Required value: must be a valid signer name",
            f"{P}.signerName: Required value",
        ],
    ),
    "clusterTrustBundle signer: not a domain and a path": (
        _bundle(signerName="a/b/c"),
        [
            f'{P}.signerName: Invalid value: "a/b/c": must be a fully qualified domain and path '
            "of the form 'example.com/signer-name'"
        ],
    ),
    "clusterTrustBundle signer: a one-label domain, a bad path label, a bad selector": (
        _bundle(signerName="Example/ok.Bad_", labelSelector={"matchLabels": {"a b": "c"}}),
        [
            f'{P}.signerName: Invalid value: "Example": validating label "Example": {LABEL_MSG}',
            f'{P}.signerName: Invalid value: "Example": should be a domain with at least two '
            "segments separated by dots",
            f'{P}.signerName: Invalid value: "ok.Bad_": validating label "Bad_": '
            f"{SUBDOMAIN_REGEX_ERROR}",
            f'{P}.labelSelector.matchLabels: Invalid value: "a b": {NAME_PART_REGEX_ERROR}',
        ],
    ),
}

VALID: Final[dict[str, dict[str, Any]]] = {
    "ephemeral with labels, annotations and a null creation timestamp": _template(
        metadata={"labels": {"app": "db"}, "annotations": {"x": "y"}, "creationTimestamp": None}
    ),
    "ephemeral with a class, a selector and a claim data source": _spec(
        storageClassName="gp3",
        accessModes=["ReadWriteOncePod"],
        selector={"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
        dataSource={"kind": "PersistentVolumeClaim", "name": "seed"},
        volumeMode="Block",
    ),
    "clusterTrustBundle by a signer-linked name": _bundle(name="example.com:signer:v1"),
    "clusterTrustBundle by signer with a selector": _bundle(
        signerName="example.com/signer",
        labelSelector={"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]},
    ),
    "valid GitRepo with .. in name": {"gitRepo": {"repository": "my-repo", "directory": "..foo"}},
    "valid Glusterfs": {"glusterfs": {"endpoints": "host1", "path": "path"}},
    "valid Flocker -- datasetUUID": {
        "flocker": {"datasetUUID": "d846b09d-223d-43df-ab5b-d6db2206a0e4"}
    },
    "valid CephFS": {"cephfs": {"monitors": ["a", "b"]}},
    "valid Quobyte": {"quobyte": {"registry": "registry:7861,[::1]:7861", "volume": "/test"}},
    "valid FC": {"fc": {"targetWWNs": ["some_wwn"], "lun": 1, "fsType": "ext4"}},
    "fc valid wwids": {"fc": {"wwids": ["some_wwid"]}},
    "valid FlexVolume": {
        "flexVolume": {"driver": "kubernetes.io/blue", "options": {"myns.io/x": "y"}}
    },
    "valid AzureFile": {"azureFile": {"secretName": "key", "shareName": "share"}},
    "valid vsphere": {"vsphereVolume": {"volumePath": "[ds] vol.vmdk"}},
    "valid photon": {"photonPersistentDisk": {"pdID": "pd"}},
    "valid portworx": {"portworxVolume": {"volumeID": "pwx"}},
    "valid StorageOS": {"storageos": {"volumeName": "vol", "volumeNamespace": "ns"}},
    "valid scaleio volume": {
        "scaleIO": {"gateway": "http://abcd/efg", "system": "test-system", "volumeName": "v-1"}
    },
    "valid IQN: eui format": {"iscsi": {**ISCSI, "iqn": "eui.0123456789ABCDEF"}},
    "valid IQN: naa format": {"iscsi": {**ISCSI, "iqn": "naa.62004567BA64678D0123456789ABCDEF"}},
    "valid initiatorName": {"iscsi": {**ISCSI, "initiatorName": "iqn.2015-02.example.com:init"}},
    "valid AzureDisk": {"azureDisk": {"diskName": "foo", "diskURI": "https://blob/vhds/bar.vhd"}},
    "AzureDisk managed": {
        "azureDisk": {
            "diskName": "d",
            "diskURI": "/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d",
            "kind": "Managed",
            "cachingMode": "None",
        }
    },
}


@pytest.mark.parametrize("case", list(INVALID))
def test_each_source_is_refused_with_upstream_messages(case: str) -> None:
    source, expected = INVALID[case]
    pod = make_pod({"name": "v", **source})
    assert messages(pod) == expected
    assert not pod_fields_valid(pod)


@pytest.mark.parametrize("case", list(VALID))
def test_valid_sources_are_accepted_and_written_back_whole(case: str) -> None:
    volume = {"name": "v", **VALID[case]}
    pod = make_pod(volume)
    assert messages(pod) == []
    assert pod_fields_valid(pod)
    again = msgspec.json.decode(msgspec.json.encode(pod), type=Pod)
    assert again == pod
    written = msgspec.json.decode(msgspec.json.encode(again.spec.volumes[0]))
    expected = copy.deepcopy(volume)
    meta = expected.get("ephemeral", {}).get("volumeClaimTemplate", {}).get("metadata", {})
    if meta.get("creationTimestamp", "") is None:  # null: unset, as Go reads it
        del meta["creationTimestamp"]
    assert written == expected


def test_a_templates_ephemeral_volume_is_checked_too() -> None:
    """ValidatePodTemplateSpec runs validateEphemeralVolumeSource as well."""
    pod = make_pod({"name": "v", "ephemeral": {}})
    assert messages(pod, from_template=True) == [f"{T}: Required value"]
    assert not pod_fields_valid(pod, from_template=True)


@pytest.mark.parametrize(
    ("hostport", "ok"),
    [
        ("a:1", True),
        (":1", True),
        ("a:", True),
        ("[::1]:80", True),
        ("[a]:", True),
        ("a", False),
        ("", False),
        ("a::1", False),
        ("[::1]", False),
        ("[::1]x:80", False),
        ("[a:80", False),
        ("a]:80", False),
        ("a[:80", False),
    ],
)
def test_host_port_pairs_split_as_go_splits_them(hostport: str, ok: bool) -> None:
    """Upstream: net.SplitHostPort (Go's net/ipsock.go)."""
    assert split_host_port(hostport) is ok


def test_a_pod_with_an_invalid_claim_template_is_refused_naming_the_file_and_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    volume = (
        "  volumes: [{name: scratch, ephemeral: {volumeClaimTemplate: "
        "{metadata: {name: x}, spec: {accessModes: [ReadWriteOnce], "
        "resources: {requests: {storage: 1Gi}}}}}}]\n  containers:"
    )
    text = GOOD_POD.replace("  containers:", volume)
    message = (
        "(Pod default/p): spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: "
        "Forbidden: cannot be set"
    )
    assert_manifest_refused("schedule", text, message, tmp_path, capsys)


PV_SOURCES: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "a PV's cinder secret names its namespace too": (
        {"cinder": {"volumeID": "v", "secretRef": {}}},
        [
            "spec.cinder.secretRef.name: Required value",
            "spec.cinder.secretRef.namespace: Required value",
        ],
    ),
    "a PV's iSCSI CHAP secret, its name, and its initiator name (one message for any fault)": (
        {
            "iscsi": {
                "targetPortal": "10.0.0.1:3260",
                "iqn": "iqn.2015-02.example.com:test",
                "chapAuthSession": True,
                "initiatorName": "eui.short",
            }
        },
        [
            "spec.iscsi.secretRef: Required value",
            'spec.iscsi.initiatorname: Invalid value: "eui.short": must be valid format',
        ],
    ),
    "a PV's iSCSI secret without a name": (
        {
            "iscsi": {
                "targetPortal": "p",
                "iqn": "naa." + "0" * 32,
                "secretRef": {"namespace": "ns"},
                "initiatorName": "x",
            }
        },
        [
            "spec.iscsi.secretRef.name: Required value",
            'spec.iscsi.initiatorname: Invalid value: "x": must be valid format',
        ],
    ),
    "a PV's cephfs, as a pod's (a secret of another namespace kept)": (
        {"cephfs": {"secretRef": {"name": "s", "namespace": "other"}}},
        ["spec.cephfs.monitors: Required value"],
    ),
    "a PV's scaleIO, as a pod's": (
        {"scaleIO": {"secretRef": {"name": "s"}}},
        [
            "spec.scaleIO.gateway: Required value",
            "spec.scaleIO.system: Required value",
            "spec.scaleIO.volumeName: Required value",
        ],
    ),
    "a PV's flocker, quobyte's registry, fc": (
        {"flocker": {}, "quobyte": {}},
        [
            "spec.flocker: Required value: one of datasetName and datasetUUID is required",
            "spec.quobyte: Forbidden: may not specify more than 1 volume type",
        ],
    ),
    "a PV's Azure disk URI for its defaulted kind": (
        {"azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s"}},
        [
            'spec.azureDisk.diskURI: Unsupported value: "/subscriptions/s": supported values: '
            f"{BLOB_URI}"
        ],
    ),
}


@pytest.mark.parametrize("case", list(PV_SOURCES))
def test_a_persistent_volumes_in_tree_sources_share_these_checks(case: str) -> None:
    """validateCinderPersistentVolumeSource, validateISCSIPersistentVolumeSource, validateAzureDisk
    (v1.35): the PV's variants of the pod's checks."""
    source, expected = PV_SOURCES[case]
    assert pv_messages(make_pv(**source)) == expected
