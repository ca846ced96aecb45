"""A claim's data sources (``dataSource``, ``dataSourceRef``) and a PersistentVolume's legacy
sources (glusterfs, flexVolume, azureFile, storageos) and volume attributes class, refused as the
API server refuses them on create: exact messages, paths and order, and one line with exit
code 2 from the command line.

A PersistentVolumeClaim is prepared first as persistentvolumeclaimStrategy.PrepareForCreate
prepares it (v1.35 default gates: CrossNamespaceVolumeDataSource off, AnyVolumeDataSource on);
a claim template (a generic ephemeral volume's) is validated as given. Rows named as in
upstream's tests come from TestValidatePersistentVolumeClaim / TestValidateEphemeralVolume
(testValidatePVC), TestValidateGlusterfsPersistentVolumeSource, TestValidatePersistentVolumes
(core validation_test.go, v1.35).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import PV, PVC, assert_manifest_refused
from test_label_validation import LABEL_REGEX_ERROR, SUBDOMAIN_REGEX_ERROR
from test_timeline import zones
from topospread.api.claim_spec import PersistentVolumeClaimSpec
from topospread.api.claim_validation import prepare_claim_spec, validate_claim_spec
from topospread.api.field import Path as FieldPath
from topospread.api.storage import PersistentVolume, PersistentVolumeClaim
from topospread.api.storage_validation import validate_storage_object
from topospread.framework.config import default_config
from topospread.simulator.controllers.claims import admit_claim
from topospread.simulator.scenario import build_scenario
from topospread.simulator.simulation import Simulation
from topospread.simulator.timeline_format import parse_timeline

DNS_LABEL: Final = LABEL_REGEX_ERROR
DNS_SUBDOMAIN: Final = SUBDOMAIN_REGEX_ERROR
NOT_PVC: Final = "must be 'PersistentVolumeClaim' when referencing the default apiGroup"
SNAPSHOT: Final = {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"}
POPULATOR: Final = {"apiGroup": "populator.example.com", "kind": "Foo", "name": "foo1"}


def messages(obj: object) -> list[str]:
    errors = validate_storage_object(obj)
    assert errors is not None
    return [str(e) for e in errors]


def make_claim(**spec: Any) -> PersistentVolumeClaim:
    """A 10G ReadWriteOnce claim foo/ns with ``spec`` on top."""
    full: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "10G"}},
    }
    full.update(spec)
    meta = {"name": "foo", "namespace": "ns"}
    return msgspec.convert({"metadata": meta, "spec": full}, PersistentVolumeClaim)


def template_messages(**spec: Any) -> list[str]:
    claim = make_claim(**spec)
    return [str(e) for e in validate_claim_spec(claim.spec, FieldPath.root("spec"))]


# (claim spec, a PersistentVolumeClaim's messages, a claim template's messages).
DATA_SOURCES: Final[dict[str, tuple[dict[str, Any], list[str], list[str]]]] = {
    "mismatch-data-source-and-ref": (
        {
            "dataSource": {"kind": "PersistentVolumeClaim", "name": "pvc1"},
            "dataSourceRef": {"kind": "PersistentVolumeClaim", "name": "pvc2"},
        },
        ["spec: Invalid value: {}: must match dataSourceRef"],
        ["spec: Invalid value: {}: must match dataSourceRef"],
    ),
    "invaild-apigroup-in-data-source-ref": (
        {"dataSourceRef": {"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"}},
        # The claim's dataSource is copied from its ref, and refused too.
        [
            f'spec.dataSource.apiGroup: Invalid value: "^invalid": {DNS_SUBDOMAIN}',
            f'spec.dataSourceRef.apiGroup: Invalid value: "^invalid": {DNS_SUBDOMAIN}',
        ],
        [f'spec.dataSourceRef.apiGroup: Invalid value: "^invalid": {DNS_SUBDOMAIN}'],
    ),
    "invaild-apigroup-in-data-source": (
        {"dataSource": {"apiGroup": "^invalid", "kind": "Foo", "name": "foo1"}},
        # Neither a claim nor a snapshot: dropped from a new claim without a dataSourceRef.
        [],
        [f'spec.dataSource.apiGroup: Invalid value: "^invalid": {DNS_SUBDOMAIN}'],
    ),
    "a dataSource claim without a name is refused in both fields of a claim": (
        {"dataSource": {"kind": "PersistentVolumeClaim"}},
        ["spec.dataSource.name: Required value", "spec.dataSourceRef.name: Required value"],
        ["spec.dataSource.name: Required value"],
    ),
    "a dataSourceRef without a kind or name, of the core group": (
        {"dataSourceRef": {}},
        [
            "spec.dataSource.name: Required value",
            "spec.dataSource.kind: Required value",
            f'spec.dataSource: Invalid value: "": {NOT_PVC}',
            "spec.dataSourceRef.name: Required value",
            "spec.dataSourceRef.kind: Required value",
            f'spec.dataSourceRef: Invalid value: "": {NOT_PVC}',
        ],
        [
            "spec.dataSourceRef.name: Required value",
            "spec.dataSourceRef.kind: Required value",
            f'spec.dataSourceRef: Invalid value: "": {NOT_PVC}',
        ],
    ),
    "a snapshot in both fields, equal": (
        {"dataSource": SNAPSHOT, "dataSourceRef": SNAPSHOT},
        [],
        [],
    ),
    "a populator in dataSourceRef only": ({"dataSourceRef": POPULATOR}, [], []),
    "apiGroup absent differs from apiGroup empty (Go compares the pointers)": (
        {
            "dataSource": {"kind": "PersistentVolumeClaim", "name": "a"},
            "dataSourceRef": {"apiGroup": "", "kind": "PersistentVolumeClaim", "name": "a"},
        },
        ["spec: Invalid value: {}: must match dataSourceRef"],
        ["spec: Invalid value: {}: must match dataSourceRef"],
    ),
    # CrossNamespaceVolumeDataSource is alpha and off in v1.35: a new claim's namespaced ref is
    # dropped before validation; a template's is validated as it is.
    "a dataSourceRef in another namespace beside a dataSource": (
        {"dataSource": SNAPSHOT, "dataSourceRef": {**SNAPSHOT, "namespace": "Other_NS"}},
        [],
        [
            f'spec.dataSourceRef.namespace: Invalid value: "Other_NS": {DNS_LABEL}',
            "spec: Invalid value: {}: may not be specified when dataSourceRef.namespace is "
            "specified",
        ],
    ),
    "a dataSourceRef in another namespace, alone": (
        {"dataSourceRef": {**POPULATOR, "namespace": "other"}},
        [],
        [],
    ),
}


@pytest.mark.parametrize("name", list(DATA_SOURCES))
def test_a_claims_data_sources_are_refused_as_the_api_server_refuses_them(name: str) -> None:
    spec, claim, template = DATA_SOURCES[name]
    assert messages(make_claim(**spec)) == claim
    assert template_messages(**spec) == template


def test_a_new_claims_data_sources_are_prepared_as_prepare_for_create_prepares_them() -> None:
    def prepared(**spec: Any) -> PersistentVolumeClaimSpec:
        return prepare_claim_spec(make_claim(**spec).spec)

    only_source = prepared(dataSource=SNAPSHOT)
    assert only_source.data_source_ref is not None
    assert msgspec.to_builtins(only_source.data_source_ref) == SNAPSHOT
    only_ref = prepared(dataSourceRef=POPULATOR)
    assert only_ref.data_source is not None
    assert msgspec.to_builtins(only_ref.data_source) == POPULATOR
    dropped = prepared(dataSource={"kind": "Foo", "name": "x"})
    assert dropped.data_source is None and dropped.data_source_ref is None
    elsewhere = prepared(dataSourceRef={**POPULATOR, "namespace": "other"})
    assert elsewhere.data_source is None and elsewhere.data_source_ref is None
    unchanged = make_claim().spec
    assert prepare_claim_spec(unchanged) is unchanged


def make_pv(**spec: Any) -> PersistentVolume:
    full: dict[str, Any] = {"capacity": {"storage": "10G"}, "accessModes": ["ReadWriteOnce"]}
    full.update(spec)
    return msgspec.convert({"metadata": {"name": "foo"}, "spec": full}, PersistentVolume)


CSI: Final = {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-a"}
GLUSTER: Final = {"endpoints": "my-endpoint", "path": "/tmp"}

PV_SOURCES: Final[dict[str, tuple[dict[str, Any], list[str]]]] = {
    "missing endpointname": (
        {"glusterfs": {"path": "/tmp"}},
        ["spec.glusterfs.endpoints: Required value"],
    ),
    "missing path": (
        {"glusterfs": {"endpoints": "my-endpoint"}},
        ["spec.glusterfs.path: Required value"],
    ),
    "non null endpointnamespace with empty string": (
        {"glusterfs": {**GLUSTER, "endpointsNamespace": ""}},
        [
            'spec.glusterfs.endpointsNamespace: Invalid value: "": '
            "if the endpointnamespace is set, it must be a valid namespace name"
        ],
    ),
    "an endpoints namespace that is not a DNS label": (
        {"glusterfs": {**GLUSTER, "endpointsNamespace": "Bad.NS"}},
        [f'spec.glusterfs.endpointsNamespace: Invalid value: "Bad.NS": {DNS_LABEL}'],
    ),
    "an endpoints namespace given as null is unset": (
        {"glusterfs": {**GLUSTER, "endpointsNamespace": None}},
        [],
    ),
    "a flexVolume without a driver, with a reserved option": (
        {"flexVolume": {"options": {"kubernetes.io/x": "1", "b.k8s.io": "2", "ok/y": "3"}}},
        [
            "spec.flexVolume.driver: Required value",
            'spec.flexVolume.options[b.k8s.io]: Invalid value: "b.k8s.io": '
            "kubernetes.io and k8s.io namespaces are reserved",
            'spec.flexVolume.options[kubernetes.io/x]: Invalid value: "kubernetes.io/x": '
            "kubernetes.io and k8s.io namespaces are reserved",
        ],
    ),
    "a flexVolume beside another source is checked and let through": (
        {"hostPath": {"path": "/foo", "type": "Directory"}, "flexVolume": {}},
        ["spec.flexVolume.driver: Required value"],
    ),
    "an azureFile without its secret and share names": (
        {"azureFile": {}},
        ["spec.azureFile.secretName: Required value", "spec.azureFile.shareName: Required value"],
    ),
    "an azureFile with an empty secret namespace": (
        {"azureFile": {"secretName": "s", "shareName": "sh", "secretNamespace": ""}},
        ["spec.azureFile.secretNamespace: Required value"],
    ),
    "an azureFile with a secret namespace": (
        {"azureFile": {"secretName": "s", "shareName": "sh", "secretNamespace": "ns"}},
        [],
    ),
    "a storageos volume without a name, a secret reference without name or namespace": (
        {"storageos": {"volumeNamespace": "Bad_NS", "secretRef": {}}},
        [
            "spec.storageos.volumeName: Required value",
            f'spec.storageos.volumeNamespace: Invalid value: "Bad_NS": {DNS_LABEL}',
            "spec.storageos.secretRef.name: Required value",
            "spec.storageos.secretRef.namespace: Required value",
        ],
    ),
    "a storageos after another source is one too many": (
        {"glusterfs": GLUSTER, "storageos": {"volumeName": "v"}},
        ["spec.storageos: Forbidden: may not specify more than 1 volume type"],
    ),
    # The PV's volumeAttributesClassName (VolumeAttributesClass GA, on in v1.35).
    "a volume attributes class on a CSI volume": (
        {"csi": CSI, "volumeAttributesClassName": "gold"},
        [],
    ),
    "invalid-volume-attributes-class-name": (
        {"csi": CSI, "volumeAttributesClassName": "-invalid-"},
        [f'spec.volumeAttributesClassName: Invalid value: "-invalid-": {DNS_SUBDOMAIN}'],
    ),
    "an empty volume attributes class, not on a CSI volume": (
        {"glusterfs": GLUSTER, "volumeAttributesClassName": ""},
        [
            "spec.volumeAttributesClassName: Required value: an empty string is disallowed",
            "spec.csi: Required value: has to be specified when using volumeAttributesClassName",
        ],
    ),
}


@pytest.mark.parametrize("name", list(PV_SOURCES))
def test_a_volumes_legacy_source_and_class_are_refused_as_the_api_server_refuses_them(
    name: str,
) -> None:
    spec, expected = PV_SOURCES[name]
    assert messages(make_pv(**spec)) == expected


@pytest.mark.parametrize("command", ["schedule", "check"])
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            PVC.replace("spec: {", "spec: {dataSourceRef: {apiGroup: ^x, kind: Foo, name: f}, "),
            '(PersistentVolumeClaim default/data): spec.dataSource.apiGroup: Invalid value: "^x": '
            + DNS_SUBDOMAIN,
            id="claim dataSourceRef",
        ),
        pytest.param(
            PV.replace("  csi:", "  volumeAttributesClassName: ''\n  csi:"),
            "(PersistentVolume pv-a): spec.volumeAttributesClassName: Required value: "
            "an empty string is disallowed",
            id="volume attributes class",
        ),
        pytest.param(
            PV.replace(
                "  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-a}\n",
                "  iscsi: {targetPortal: " + "p" * 60 + ", iqn: iqn.2015-02.example.com:t,"
                " initiatorName: iqn.2015-02.example.com:i}\n",
            ),
            f'(PersistentVolume pv-a): spec.iscsi.targetportal: Invalid value: "{"p" * 60}": '
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
            "iscsi.initiatorName is specified.",
            id="iscsi name and portal",
        ),
        pytest.param(
            PV.replace(
                "  csi: {driver: ebs.csi.aws.com, volumeHandle: vol-a}\n",
                "  glusterfs: {path: /x}\n",
            ),
            "(PersistentVolume pv-a): spec.glusterfs.endpoints: Required value",
            id="glusterfs",
        ),
    ],
)
def test_a_bad_data_source_or_legacy_source_is_one_line_and_exit_2(
    command: str, text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_manifest_refused(command, text, message, tmp_path, capsys)


# ---------------------------------------------------------------------------------------------
# What is stored: a new claim as PrepareForCreate leaves it, however it is created.

STORED_CASES: Final = {
    # (dataSource, dataSourceRef) given -> (dataSource, dataSourceRef) stored.
    "a populator as dataSource alone is dropped": ((POPULATOR, None), (None, None)),
    "a snapshot as dataSource alone is copied to dataSourceRef": (
        (SNAPSHOT, None),
        (SNAPSHOT, SNAPSHOT),
    ),
    "a populator as dataSourceRef alone is copied to dataSource": (
        (None, POPULATOR),
        (POPULATOR, POPULATOR),
    ),
    "a dataSourceRef in another namespace is dropped": (
        (None, {**POPULATOR, "namespace": "other"}),
        (None, None),
    ),
}


def claim_manifest(source: Any, ref: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    }
    if source is not None:
        spec["dataSource"] = source
    if ref is not None:
        spec["dataSourceRef"] = ref
    meta = {"name": "c", "namespace": "default"}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def stored_sources(claim: PersistentVolumeClaim) -> tuple[Any, Any]:
    return (
        None if claim.spec.data_source is None else msgspec.to_builtins(claim.spec.data_source),
        None
        if claim.spec.data_source_ref is None
        else msgspec.to_builtins(claim.spec.data_source_ref),
    )


@pytest.mark.parametrize("name", list(STORED_CASES))
def test_a_new_claim_is_stored_with_the_data_sources_the_api_server_stores(name: str) -> None:
    given, expected = STORED_CASES[name]
    manifest = claim_manifest(*given)
    # Read from manifests (schedule, check, explain, verify).
    claim = msgspec.convert(manifest, PersistentVolumeClaim)
    scenario = build_scenario([("c.yaml", claim)], default_config())
    assert stored_sources(scenario.cluster().storage_state.pvcs["default/c"]) == expected
    # Applied in a timeline (simulate, sweep, rebalance: the simulator's API server).
    sim = Simulation(parse_timeline({"nodeGroups": zones(), "objects": [manifest]}, "t.yaml"))
    assert stored_sources(sim.cluster.storage_state.pvcs["default/c"]) == expected
    # Made by a controller (a StatefulSet's or an ephemeral volume's claim).
    assert stored_sources(admit_claim(claim, [])) == expected
