"""A PersistentVolume's node affinity and source, and a StorageClass's provisioner, parameters
and allowedTopologies, refused as the API server refuses them on create (ValidatePersistentVolume,
pkg/apis/core/validation; ValidateStorageClass, pkg/apis/storage/validation; v1.35): exact
messages and paths in upstream's order, and one line with exit code 2 from the command line.

Rows named as in upstream's tests are taken from them: TestValidatePersistentVolume and
TestValidateLocalVolumes (core validation), TestValidatePod's node affinity cases (there for a
pod's required node affinity, the same ValidateNodeSelector), TestValidateAllowedTopologies
(storage validation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import PV, SC, assert_manifest_refused
from test_label_validation import NAME_PART_REGEX_ERROR, SUBDOMAIN_REGEX_ERROR, VALUE_REGEX_ERROR
from topospread.api.field import aggregate_message
from topospread.api.storage import PersistentVolume, StorageClass
from topospread.api.storage_validation import validate_storage_object

HOST_PATH: Final = {"path": "/foo", "type": "Directory"}
GCE_PD: Final = {"pdName": "foo"}
TERM: Final = "spec.nodeAffinity.required.nodeSelectorTerms[0]"
MORE: Final = "Forbidden: may not specify more than 1 volume type"
RECYCLE: Final = (
    "spec.persistentVolumeReclaimPolicy: Forbidden: "
    "may not be 'recycle' for a hostPath mount of '/'"
)


def make_pv(**spec: Any) -> PersistentVolume:
    """A 10G ReadWriteOnce volume named foo with ``spec`` on top (None drops a field)."""
    full: dict[str, Any] = {"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"]}
    full.update(spec)
    full = {k: v for k, v in full.items() if v is not None}
    return msgspec.convert({"metadata": {"name": "foo"}, "spec": full}, PersistentVolume)


def with_affinity(affinity: dict[str, Any]) -> PersistentVolume:
    """Upstream's testVolumeWithNodeAffinity: a GCE PD volume of a class, with ``affinity``."""
    return make_pv(
        gcePersistentDisk=GCE_PD, storageClassName="test-storage-class", nodeAffinity=affinity
    )


def required_terms(*expressions: dict[str, Any], fields: Any = ()) -> dict[str, Any]:
    term: dict[str, Any] = {"matchExpressions": list(expressions)}
    if fields:
        term["matchFields"] = list(fields)
    return {"required": {"nodeSelectorTerms": [term]}}


def messages(obj: object) -> list[str]:
    errors = validate_storage_object(obj)
    assert errors is not None
    return [str(e) for e in errors]


SIMPLE_AFFINITY: Final = required_terms({"key": "foo", "operator": "In", "values": ["bar"]})

NODE_AFFINITY: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "volume-node-affinity": (SIMPLE_AFFINITY, []),
    "volume-empty-node-affinity": (
        {},
        ["spec.nodeAffinity.required: Required value: must specify required node constraints"],
    ),
    "a null required is no required": (
        {"required": None},
        ["spec.nodeAffinity.required: Required value: must specify required node constraints"],
    ),
    "volume-bad-node-affinity": (
        required_terms({"operator": "In", "values": ["test-label-value"]}),
        [
            f'{TERM}.matchExpressions[0].key: Invalid value: "": name part must be non-empty',
            f'{TERM}.matchExpressions[0].key: Invalid value: "": {NAME_PART_REGEX_ERROR}',
        ],
    ),
    "invalid node selector requirement in node affinity, operator can't be null": (
        required_terms({"key": "key1"}),
        [f'{TERM}.matchExpressions[0].operator: Invalid value: "": not a valid selector operator'],
    ),
    "invalid node selector requirement in node affinity, key is invalid": (
        required_terms({"key": "invalid key ___@#", "operator": "Exists"}),
        [
            f'{TERM}.matchExpressions[0].key: Invalid value: "invalid key ___@#": '
            + NAME_PART_REGEX_ERROR
        ],
    ),
    "an operator of another API": (
        required_terms({"key": "zone", "operator": "Near", "values": ["a"]}),
        [
            f'{TERM}.matchExpressions[0].operator: Invalid value: "Near": '
            "not a valid selector operator"
        ],
    ),
    "In without values": (
        required_terms({"key": "zone", "operator": "In"}),
        [
            f"{TERM}.matchExpressions[0].values: Required value: must be specified when "
            "`operator` is 'In' or 'NotIn'"
        ],
    ),
    "Exists with values": (
        required_terms({"key": "zone", "operator": "Exists", "values": ["a"]}),
        [
            f"{TERM}.matchExpressions[0].values: Forbidden: may not be specified when "
            "`operator` is 'Exists' or 'DoesNotExist'"
        ],
    ),
    "Gt with two values": (
        required_terms({"key": "rank", "operator": "Gt", "values": ["1", "2"]}),
        [
            f"{TERM}.matchExpressions[0].values: Required value: must be specified single "
            "value when `operator` is 'Lt' or 'Gt'"
        ],
    ),
    # The API server does not parse a Gt/Lt value (the scheduler's selector does, and fails).
    "Lt with one value that is no integer is accepted": (
        required_terms({"key": "rank", "operator": "Lt", "values": ["three"]}),
        [],
    ),
    "a value that is no label value (refused in a volume's required terms)": (
        required_terms({"key": "zone", "operator": "In", "values": ["a b"]}),
        [f'{TERM}.matchExpressions[0].values[0]: Invalid value: "a b": {VALUE_REGEX_ERROR}'],
    ),
    "operator, then key, then values, in upstream's order": (
        required_terms({"key": "", "operator": "Near", "values": ["a b"]}),
        [
            f'{TERM}.matchExpressions[0].operator: Invalid value: "Near": '
            "not a valid selector operator",
            f'{TERM}.matchExpressions[0].key: Invalid value: "": name part must be non-empty',
            f'{TERM}.matchExpressions[0].key: Invalid value: "": {NAME_PART_REGEX_ERROR}',
            f'{TERM}.matchExpressions[0].values[0]: Invalid value: "a b": {VALUE_REGEX_ERROR}',
        ],
    ),
    "invalid requiredDuringSchedulingIgnoredDuringExecution node selector, nodeSelectorTerms "
    "must have at least one term": (
        {"required": {"nodeSelectorTerms": []}},
        [
            "spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least "
            "one node selector term"
        ],
    ),
    "invalid node field selector requirement in node affinity, more values for field selector": (
        required_terms(
            fields=[{"key": "metadata.name", "operator": "In", "values": ["host1", "host2"]}]
        ),
        [
            f"{TERM}.matchFields[0].values: Required value: must be only one value when "
            "`operator` is 'In' or 'NotIn' for node field selector"
        ],
    ),
    "invalid node field selector requirement in node affinity, invalid operator": (
        required_terms(fields=[{"key": "metadata.name", "operator": "Exists"}]),
        [f'{TERM}.matchFields[0].operator: Invalid value: "Exists": not a valid selector operator'],
    ),
    "invalid node field selector requirement in node affinity, invalid key": (
        required_terms(fields=[{"key": "metadata.namespace", "operator": "In", "values": ["a"]}]),
        [
            f'{TERM}.matchFields[0].key: Invalid value: "metadata.namespace": '
            "not a valid field selector key"
        ],
    ),
    "a field selector's node name that is no DNS subdomain": (
        required_terms(fields=[{"key": "metadata.name", "operator": "In", "values": ["Node_1"]}]),
        [f'{TERM}.matchFields[0].values[0]: Invalid value: "Node_1": {SUBDOMAIN_REGEX_ERROR}'],
    ),
}


@pytest.mark.parametrize("name", list(NODE_AFFINITY))
def test_a_volumes_node_affinity_is_refused_as_the_api_server_refuses_it(name: str) -> None:
    affinity, expected = NODE_AFFINITY[name]
    assert messages(with_affinity(affinity)) == expected


def test_node_affinity_comes_after_the_reclaim_policy_and_before_the_source_and_class() -> None:
    pv = make_pv(
        persistentVolumeReclaimPolicy="Sometimes",
        nodeAffinity={},
        storageClassName="-gp3",
    )
    assert messages(pv) == [
        'spec.persistentVolumeReclaimPolicy: Unsupported value: "Sometimes": supported values: '
        '"Delete", "Recycle", "Retain"',
        "spec.nodeAffinity.required: Required value: must specify required node constraints",
        "spec: Required value: must specify a volume type",
        f'spec.storageClassName: Invalid value: "-gp3": {SUBDOMAIN_REGEX_ERROR}',
    ]


@pytest.mark.parametrize(
    ("modes", "expected"),
    [
        pytest.param(["ReadWriteOncePod"], [], id="good-volume-with-read-write-once-pod"),
        pytest.param(
            ["ReadWriteOnce", "ReadWriteOncePod"],
            ["spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes"],
            id="volume-with-read-write-once-pod-and-others",
        ),
        pytest.param(
            ["Bogus", "ReadWriteOncePod"],
            [
                'spec.accessModes: Unsupported value: "Bogus": supported values: '
                '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
            ],
            id="an unsupported mode is no other mode",
        ),
    ],
)
def test_a_volumes_read_write_once_pod_access_mode_stands_alone(
    modes: list[str], expected: list[str]
) -> None:
    # ValidatePersistentVolumeSpec refuses ReadWriteOncePod beside another supported mode, as
    # ValidatePersistentVolumeClaimSpec does for a claim.
    assert messages(make_pv(accessModes=modes, hostPath=HOST_PATH)) == expected


SOURCES: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "good-volume": ({"hostPath": HOST_PATH}, []),
    "missing-volume-source": ({}, ["spec: Required value: must specify a volume type"]),
    "too-many-sources": (
        {"accessModes": None, "hostPath": HOST_PATH, "gcePersistentDisk": GCE_PD},
        ["spec.accessModes: Required value", f"spec.gcePersistentDisk: {MORE}"],
    ),
    "every source after the first refused, in upstream's order": (
        {
            "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"},
            "nfs": {"server": "nfs", "path": "/x"},
            "hostPath": HOST_PATH,
        },
        [f"spec.nfs: {MORE}", f"spec.csi: {MORE}"],
    ),
    "a second CephFS source is refused at upstream's spelling": (
        {"hostPath": HOST_PATH, "cephfs": {"monitors": ["m"]}},
        [f"spec.cephFS: {MORE}"],
    ),
    # Upstream counts a flexVolume without ever refusing it as a second type.
    "a flexVolume beside another source is let through": (
        {"hostPath": HOST_PATH, "flexVolume": {"driver": "example/flex"}},
        [],
    ),
    "a flexVolume counts: a later source is one too many": (
        {"flexVolume": {"driver": "example/flex"}, "csi": {"driver": "d", "volumeHandle": "h"}},
        [f"spec.csi: {MORE}"],
    ),
    # Upstream's TestValidateGlusterfsPersistentVolumeSource "missing endpointname and path":
    # a PV's glusterfs source counts and has its fields checked.
    "missing endpointname and path": (
        {"glusterfs": {}},
        ["spec.glusterfs.endpoints: Required value", "spec.glusterfs.path: Required value"],
    ),
    "host mount of / with recycle reclaim policy": (
        {
            "hostPath": {"path": "/", "type": "Directory"},
            "persistentVolumeReclaimPolicy": "Recycle",
        },
        [RECYCLE],
    ),
    "host mount of / with recycle reclaim policy 2": (
        {
            "hostPath": {"path": "/a/..", "type": "Directory"},
            "persistentVolumeReclaimPolicy": "Recycle",
        },
        [
            "spec.hostPath.path: Invalid value: \"/a/..\": must not contain '..'",
            RECYCLE,
        ],
    ),
    "a double slash is / too (Go's path.Clean)": (
        {"hostPath": {"path": "//"}, "persistentVolumeReclaimPolicy": "Recycle"},
        [RECYCLE],
    ),
    "bad-hostpath-volume-backsteps": (
        {
            "hostPath": {"path": "/foo/..", "type": "Directory"},
            "storageClassName": "backstep-hostpath",
        },
        ["spec.hostPath.path: Invalid value: \"/foo/..\": must not contain '..'"],
    ),
    "a hostPath without a path": ({"hostPath": {}}, ["spec.hostPath.path: Required value"]),
    "valid local volume": ({"local": {"path": "/foo"}, "nodeAffinity": SIMPLE_AFFINITY}, []),
    "invalid local volume no node affinity": (
        {"local": {"path": "/foo"}},
        ["spec.nodeAffinity: Required value: Local volume requires node affinity"],
    ),
    "invalid local volume empty path": (
        {"local": {"path": ""}, "nodeAffinity": SIMPLE_AFFINITY},
        ["spec.local.path: Required value"],
    ),
    "invalid-local-volume-backsteps": (
        {"local": {"path": "/foo/.."}, "nodeAffinity": SIMPLE_AFFINITY},
        ["spec.local.path: Invalid value: \"/foo/..\": must not contain '..'"],
    ),
    "valid-local-volume-relative-path": (
        {"local": {"path": "foo"}, "nodeAffinity": SIMPLE_AFFINITY},
        [],
    ),
    "a CSI volume without a driver or a handle": (
        {"csi": {}},
        [
            "spec.csi.driver: Required value",
            f'spec.csi.driver: Invalid value: "": {SUBDOMAIN_REGEX_ERROR}',
            "spec.csi.volumeHandle: Required value",
        ],
    ),
    "a CSI driver is checked lowercased": (
        {"csi": {"driver": "EBS.CSI.AWS.COM", "volumeHandle": "vol-1"}},
        [],
    ),
    "a CSI driver longer than 63 characters": (
        {"csi": {"driver": "d" * 64, "volumeHandle": "vol-1"}},
        ["spec.csi.driver: Too long: may not be more than 63 bytes"],
    ),
    "a CSI volume's secret references, in upstream's order": (
        {
            "csi": {
                "driver": "ebs.csi.aws.com",
                "volumeHandle": "vol-1",
                "nodeExpandSecretRef": {"name": "s", "namespace": "Kube_System"},
                "controllerPublishSecretRef": {},
            }
        },
        [
            "spec.csi.controllerPublishSecretRef.name: Required value",
            "spec.csi.controllerPublishSecretRef.namespace: Required value",
            'spec.csi.nodeExpandSecretRef.namespace: Invalid value: "Kube_System": '
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
            "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
            "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ],
    ),
    "a GCE PD's errors are named under persistentDisk, as upstream names them": (
        {"gcePersistentDisk": {"partition": 256}},
        [
            "spec.persistentDisk.pdName: Required value",
            "spec.persistentDisk.partition: Invalid value: 256: must be between 1 and 255, "
            "inclusive",
        ],
    ),
    "an iSCSI volume's IQN of no known format": (
        {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "foo", "lun": 256}},
        [
            'spec.iscsi.iqn: Invalid value: "foo": must be valid format',
            "spec.iscsi.lun: Invalid value: 256: must be between 0 and 255, inclusive",
        ],
    ),
    "an iSCSI volume's IQN that starts right but is malformed": (
        {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2015-02.example.com"}},
        ['spec.iscsi.iqn: Invalid value: "iqn.2015-02.example.com": must be valid format'],
    ),
    "a valid iSCSI IQN": (
        {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2015-02.example.com:test"}},
        [],
    ),
    "an iSCSI volume without a portal or an IQN": (
        {"iscsi": {}},
        ["spec.iscsi.targetPortal: Required value", "spec.iscsi.iqn: Required value"],
    ),
    # validateISCSIPersistentVolumeSource: with an initiator name, "<PV name>:<portal>" (here
    # "foo:" and the portal) may be 64 bytes at most; refused at "targetportal" (sic), after
    # the portal's own check and before the IQN's.
    "an iSCSI volume with an initiator name and a name and portal of 65 bytes": (
        {"iscsi": {"targetPortal": "p" * 61, "initiatorName": "iqn.2015-02.example.com:x"}},
        [
            f'spec.iscsi.targetportal: Invalid value: "{"p" * 61}": Total length of <volume '
            "name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is "
            "specified.",
            "spec.iscsi.iqn: Required value",
        ],
    ),
    "an iSCSI volume with an initiator name and a name and portal of 64 bytes": (
        {
            "iscsi": {
                "targetPortal": "p" * 60,
                "iqn": "iqn.2015-02.example.com:test",
                "initiatorName": "iqn.2015-02.example.com:x",
            }
        },
        [],
    ),
    "an iSCSI volume without an initiator name has no limit on its portal": (
        {"iscsi": {"targetPortal": "p" * 200, "iqn": "iqn.2015-02.example.com:test"}},
        [],
    ),
    "a Portworx volume without an ID": (
        {"portworxVolume": {}},
        ["spec.portworxVolume.volumeID: Required value"],
    ),
    "an NFS volume without a server, with a relative path": (
        {"nfs": {"path": "exports"}},
        [
            "spec.nfs.server: Required value",
            'spec.nfs.path: Invalid value: "exports": must be an absolute path',
        ],
    ),
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_a_volumes_source_is_refused_as_the_api_server_refuses_it(name: str) -> None:
    spec, expected = SOURCES[name]
    assert messages(make_pv(**spec)) == expected


@pytest.mark.parametrize(
    ("iqn", "valid"),
    [
        ("eui.02004567A425678D", True),
        ("naa.52004567BA64678D52004567BA64678D", True),
        ("eui.02004567A425678", False),
        # Go's MatchString: the iqn pattern is anchored at its end only.
        ("iqn-junk iqn.2015-02.example.com:test", True),
        ("iqn.2015-02.example.com:a b", False),
    ],
)
def test_an_iscsi_volumes_iqn_is_matched_as_gos_regexps_match_it(iqn: str, valid: bool) -> None:
    pv = make_pv(iscsi={"targetPortal": "10.0.0.1:3260", "iqn": iqn})
    refused = [f'spec.iscsi.iqn: Invalid value: "{iqn}": must be valid format']
    assert messages(pv) == ([] if valid else refused)


def make_class(topologies: Any = None, **more: Any) -> StorageClass:
    data: dict[str, Any] = {
        "metadata": {"name": "zonal"},
        "provisioner": "ebs.csi.aws.com",
        "volumeBindingMode": "WaitForFirstConsumer",
        **more,
    }
    if topologies is not None:
        data["allowedTopologies"] = topologies
    return msgspec.convert(data, StorageClass)


def term(*expressions: tuple[str, list[str]]) -> dict[str, Any]:
    return {"matchLabelExpressions": [{"key": k, "values": v} for k, v in expressions]}


ZONE: Final = "failure-domain.beta.kubernetes.io/zone"
HOST: Final = "kubernetes.io/hostname"
T: Final = "allowedTopologies"

TOPOLOGIES: Final[dict[str, tuple[Any, list[str]]]] = {
    "no topology": (None, []),
    "valid topology": (
        [term((ZONE, ["zone1"]), (HOST, ["node1"])), term((ZONE, ["zone2"]), (HOST, ["node2"]))],
        [],
    ),
    "topology invalid key": (
        [term(("/invalidkey", ["zone1"]))],
        [
            f'{T}[0].matchLabelExpressions[0].key: Invalid value: "/invalidkey": '
            "prefix part must be non-empty"
        ],
    ),
    "topology lack of values": (
        [term((HOST, []))],
        [f"{T}[0].matchLabelExpressions[0].values: Required value"],
    ),
    "duplicate TopologySelectorRequirement values": (
        [term((HOST, ["node1", "node1"]))],
        [f'{T}[0].matchLabelExpressions[0].values[1]: Duplicate value: "node1"'],
    ),
    "multiple TopologySelectorRequirement values": ([term((HOST, ["node1", "node2"]))], []),
    # Upstream's list of the terms seen starts with a nil map per term, which an empty term
    # equals: it is refused as a duplicate.
    "empty MatchLabelExpressions": (
        [{}],
        [f'{T}[0].matchLabelExpressions: Duplicate value: ""'],
    ),
    "duplicate MatchLabelExpression keys": (
        [term((HOST, ["node1"]), (HOST, ["node2"]))],
        [f'{T}[0].matchLabelExpressions[1].key: Duplicate value: "{HOST}"'],
    ),
    "duplicate MatchLabelExpression keys but across separate terms": (
        [term((HOST, ["node1"])), term((HOST, ["node2"]))],
        [],
    ),
    "duplicate AllowedTopologies terms - identical": (
        [term((ZONE, ["zone1"]), (HOST, ["node1"])), term((ZONE, ["zone1"]), (HOST, ["node1"]))],
        [f'{T}[1].matchLabelExpressions: Duplicate value: ""'],
    ),
    "two AllowedTopologies terms, with a pair of the same MatchLabelExpressions and a pair of "
    "different ones": (
        [term((ZONE, ["zone1"]), (HOST, ["node1"])), term((ZONE, ["zone1"]), (HOST, ["node2"]))],
        [],
    ),
    "two AllowedTopologies terms, with a pair of the same Values and a pair of different ones": (
        [term((HOST, ["node1", "node2"])), term((HOST, ["node1", "node3"]))],
        [],
    ),
    "duplicate AllowedTopologies terms - different MatchLabelExpressions order": (
        [term((HOST, ["node1"]), (ZONE, ["zone1"])), term((ZONE, ["zone1"]), (HOST, ["node1"]))],
        [f'{T}[1].matchLabelExpressions: Duplicate value: ""'],
    ),
    "duplicate AllowedTopologies terms - different TopologySelectorRequirement values order": (
        [term((ZONE, ["zone1", "zone2"])), term((ZONE, ["zone2", "zone1"]))],
        [f'{T}[1].matchLabelExpressions: Duplicate value: ""'],
    ),
    "an expression's values, then its key, then the term's keys": (
        [term(("", ["a", "a"]), ("", []))],
        [
            f'{T}[0].matchLabelExpressions[0].values[1]: Duplicate value: "a"',
            f'{T}[0].matchLabelExpressions[0].key: Invalid value: "": name part must be non-empty',
            f'{T}[0].matchLabelExpressions[0].key: Invalid value: "": {NAME_PART_REGEX_ERROR}',
            f"{T}[0].matchLabelExpressions[1].values: Required value",
            f'{T}[0].matchLabelExpressions[1].key: Invalid value: "": name part must be non-empty',
            f'{T}[0].matchLabelExpressions[1].key: Invalid value: "": {NAME_PART_REGEX_ERROR}',
            f'{T}[0].matchLabelExpressions[1].key: Duplicate value: ""',
        ],
    ),
}


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_allowed_topologies_are_refused_as_the_api_server_refuses_them(name: str) -> None:
    topologies, expected = TOPOLOGIES[name]
    assert messages(make_class(topologies)) == expected


def test_each_empty_term_is_a_duplicate_of_every_nil_map_and_every_earlier_empty_term() -> None:
    errors = validate_storage_object(make_class([{}, {}]))
    assert errors is not None
    assert [str(e) for e in errors] == [
        f'{T}[0].matchLabelExpressions: Duplicate value: ""'
    ] * 2 + [f'{T}[1].matchLabelExpressions: Duplicate value: ""'] * 3
    # The API server's aggregate (ToAggregate) says each text once.
    assert aggregate_message(errors) == (
        f'[{T}[0].matchLabelExpressions: Duplicate value: "", '
        f'{T}[1].matchLabelExpressions: Duplicate value: ""]'
    )


CLASSES: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "a provisioner is a qualified name, checked lowercased": (
        {"provisioner": "-Example.com/EBS"},
        [
            'provisioner: Invalid value: "-example.com/ebs": prefix part a lowercase RFC 1123 '
            "subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'example.com', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ],
    ),
    "an upper-case provisioner passes": ({"provisioner": "Example.com/EBS"}, []),
    "a parameter with an empty key": (
        {"parameters": {"": "x", "type": "gp3"}},
        ['parameters: Invalid value: "": field can not be empty.'],
    ),
    "more than 512 parameters": (
        {"parameters": {f"k{i}": "v" for i in range(513)}},
        ["parameters: Too long: may not be more than 512 bytes"],
    ),
    "parameters beyond 256 KiB": (
        {"parameters": {"a": "x" * (256 * 1024)}},
        ["parameters: Too long: may not be more than 262144 bytes"],
    ),
    "provisioner, parameters, reclaim policy, binding mode, topologies: upstream's order": (
        {
            "provisioner": "",
            "parameters": {"": ""},
            "reclaimPolicy": "Recycle",
            "volumeBindingMode": "Later",
            "allowedTopologies": [term((HOST, []))],
        },
        [
            "provisioner: Required value",
            'parameters: Invalid value: "": field can not be empty.',
            'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
            'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", '
            '"WaitForFirstConsumer"',
            f"{T}[0].matchLabelExpressions[0].values: Required value",
        ],
    ),
}


@pytest.mark.parametrize("name", list(CLASSES))
def test_a_storage_class_is_refused_as_the_api_server_refuses_it(name: str) -> None:
    fields, expected = CLASSES[name]
    assert messages(make_class(**fields)) == expected


AFFINITY_LINE: Final = (
    "  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: "
    "[{key: topology.kubernetes.io/zone, values: [a]}]}]}}\n"
)


@pytest.mark.parametrize("command", ["schedule", "check"])
def test_a_volume_affinity_without_an_operator_is_one_line_and_exit_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_manifest_refused(
        command,
        PV + AFFINITY_LINE,
        "(PersistentVolume pv-a): spec.nodeAffinity.required.nodeSelectorTerms[0]"
        '.matchExpressions[0].operator: Invalid value: "": not a valid selector operator',
        tmp_path,
        capsys,
    )


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize(
    ("source", "message"),
    [
        pytest.param("", "spec: Required value: must specify a volume type", id="none"),
        pytest.param(
            "  hostPath: {path: /data}\n",
            f"spec.csi: {MORE}",
            id="two",
        ),
    ],
)
def test_a_volume_without_one_source_is_one_line_and_exit_2(
    command: str, source: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csi = "  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-a}\n"
    text = PV.replace(csi, source + (csi if source else ""))
    assert_manifest_refused(command, text, f"(PersistentVolume pv-a): {message}", tmp_path, capsys)


@pytest.mark.parametrize("command", ["schedule", "check"])
def test_a_topology_term_without_values_is_one_line_and_exit_2(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        SC + "allowedTopologies: [{matchLabelExpressions: [{key: topology.kubernetes.io/zone}]}]\n"
    )
    assert_manifest_refused(
        command,
        text,
        "(StorageClass zonal): allowedTopologies[0].matchLabelExpressions[0].values: "
        "Required value",
        tmp_path,
        capsys,
    )
