"""A StatefulSet's volumeClaimTemplates are validated with the set, as kube-apiserver v1.34+
validates them (kubernetes#132212, ValidateVolumeClaimTemplates in ValidateStatefulSetSpec):
each template's spec as a new claim's (ValidatePersistentVolumeClaimSpec with
ValidationOptionsForPersistentVolumeClaimCreate), under
``spec.volumeClaimTemplates[i].spec``, after the retention policy and before the replicas.
The templates' metadata is not checked there: a bad name is still refused when the
controller creates the claim, as upstream refuses it then.

The first row is issue kubernetes#132211's StatefulSet (a template without accessModes); the
others are ValidatePersistentVolumeClaimSpec's checks in its order, named after the
scenarios of testValidatePVC (TestValidatePersistentVolumeClaim, pkg/apis/core/validation/
validation_test.go, v1.35) they take their faults from: "no-access-modes",
"invalid-accessmode", "with-read-write-once-pod-and-others", "no-resource-requests",
"negative-storage-request", "invalid-storage-class-name", "invalid-volume-mode",
"invalid-label-selector", "invalid-apigroup-in-data-source",
"invalid-volume-attributes-class-name".
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import msgspec
import pytest
import yaml

from test_bad_input import GOOD_NODE, assert_one_line_exit_2, write_text
from test_label_validation import SUBDOMAIN_REGEX_ERROR
from topospread.api.object_validation import validate_object
from topospread.api.types import StatefulSet

STS: Final = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: postgres, resources: {requests: {cpu: "1"}}}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
"""
TEMPLATES: Final = "spec.volumeClaimTemplates[0].spec"
MODES: Final = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'


def sts(old: str = "", new: str = "") -> StatefulSet:
    """The StatefulSet with ``old`` replaced by ``new``, decoded."""
    assert old in STS, old
    return msgspec.convert(yaml.safe_load(STS.replace(old, new, 1)), StatefulSet)


def test_a_valid_template_gives_no_error() -> None:
    assert validate_object(sts()) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        pytest.param(
            "      accessModes: [ReadWriteOnce]\n",
            "",
            [f"{TEMPLATES}.accessModes: Required value: at least 1 access mode is required"],
            id="no-access-modes (kubernetes#132211's set)",
        ),
        pytest.param(
            "[ReadWriteOnce]",
            "[ReadWriteSometimes]",
            [
                f'{TEMPLATES}.accessModes: Unsupported value: "ReadWriteSometimes": supported '
                f"values: {MODES}"
            ],
            id="invalid-accessmode",
        ),
        pytest.param(
            "[ReadWriteOnce]",
            "[ReadWriteOncePod, ReadWriteOnce]",
            [
                f"{TEMPLATES}.accessModes: Forbidden: may not use ReadWriteOncePod with other "
                "access modes"
            ],
            id="with-read-write-once-pod-and-others",
        ),
        pytest.param(
            "{requests: {storage: 1Gi}}",
            "{requests: {}}",
            [f"{TEMPLATES}.resources[storage]: Required value"],
            id="no-resource-requests",
        ),
        pytest.param(
            "storage: 1Gi",
            "storage: -1Gi",
            [f'{TEMPLATES}.resources[storage]: Invalid value: "-1Gi": must be greater than zero'],
            id="negative-storage-request",
        ),
        pytest.param(
            "      accessModes:",
            "      storageClassName: Fast_SSD\n      accessModes:",
            [f'{TEMPLATES}.storageClassName: Invalid value: "Fast_SSD": {SUBDOMAIN_REGEX_ERROR}'],
            id="invalid-storage-class-name",
        ),
        pytest.param(
            "      accessModes:",
            "      volumeMode: Disk\n      accessModes:",
            [
                f'{TEMPLATES}.volumeMode: Unsupported value: "Disk": supported values: "Block", '
                '"Filesystem"'
            ],
            id="invalid-volume-mode",
        ),
        pytest.param(
            "      accessModes:",
            "      selector: {matchLabels: {tier: a b}}\n      accessModes:",
            [
                f'{TEMPLATES}.selector.matchLabels: Invalid value: "a b": a valid label must be an '
                "empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
                "or '12345', regex used for validation is "
                "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
            ],
            id="a selector's label values are checked (ValidateLabelSelector)",
        ),
        pytest.param(
            "      accessModes:",
            "      dataSource: {kind: Snapshot, name: s1}\n      accessModes:",
            [
                f'{TEMPLATES}.dataSource: Invalid value: "Snapshot": must be '
                "'PersistentVolumeClaim' when referencing the default apiGroup"
            ],
            id="a data source of another kind needs its apiGroup (validateDataSource)",
        ),
        pytest.param(
            "      accessModes:",
            "      volumeAttributesClassName: Gold_1\n      accessModes:",
            [
                f'{TEMPLATES}.volumeAttributesClassName: Invalid value: "Gold_1": '
                + SUBDOMAIN_REGEX_ERROR
            ],
            id="invalid-volume-attributes-class-name (VolumeAttributesClass is GA)",
        ),
        pytest.param(
            "      accessModes:",
            "      selector: {matchExpressions: [{key: key2, operator: InvalidOp, values: [v1]}]}"
            "\n      accessModes:",
            [
                f'{TEMPLATES}.selector.matchExpressions[0].operator: Invalid value: "InvalidOp": '
                "not a valid selector operator"
            ],
            id="invalid-label-selector",
        ),
        pytest.param(
            "      accessModes:",
            "      dataSource: {apiGroup: ^invalid, kind: Foo, name: foo1}\n      accessModes:",
            [
                f'{TEMPLATES}.dataSource.apiGroup: Invalid value: "^invalid": '
                + SUBDOMAIN_REGEX_ERROR
            ],
            id="invalid-apigroup-in-data-source",
        ),
        pytest.param(
            "storage: 1Gi",
            "storage: 0G",
            [f'{TEMPLATES}.resources[storage]: Invalid value: "0": must be greater than zero'],
            id="zero-storage-request",
        ),
        pytest.param(
            "      resources: {requests: {storage: 1Gi}}\n",
            "      resources: {requests: {storage: 1Gi}}\n  - metadata: {name: logs}\n"
            "    spec: {resources: {requests: {storage: 1Gi}}}\n",
            [
                "spec.volumeClaimTemplates[1].spec.accessModes: Required value: at least 1 access "
                "mode is required"
            ],
            id="each template by its index",
        ),
    ],
)
def test_a_templates_spec_is_refused_with_the_set(old: str, new: str, expected: list[str]) -> None:
    assert [str(e) for e in validate_object(sts(old, new))] == expected


def test_the_templates_come_after_the_retention_policy_and_before_the_replicas() -> None:
    obj = sts(
        "  replicas: 2\n",
        "  replicas: -1\n  persistentVolumeClaimRetentionPolicy: {whenDeleted: Keep}\n",
    )
    bare = [{"metadata": {"name": "data"}, "spec": {}}]
    obj = msgspec.structs.replace(
        obj, spec=msgspec.structs.replace(obj.spec, volume_claim_templates=bare)
    )
    assert [e.field for e in validate_object(obj)] == [
        "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
        f"{TEMPLATES}.accessModes",
        f"{TEMPLATES}.resources[storage]",
        "spec.replicas",
    ]


def test_a_templates_metadata_is_not_checked_with_the_set() -> None:
    assert validate_object(sts("{name: data}", "{name: Data_1, labels: {a: b c}}")) == []


def test_schedule_refuses_the_set_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write_text(tmp_path, "sts.yaml", STS.replace("      accessModes: [ReadWriteOnce]\n", ""))
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    assert_one_line_exit_2(
        ["schedule", "--nodes", nodes, "--pods", pods],
        capsys,
        "sts.yaml: object 1 (StatefulSet default/db): spec.volumeClaimTemplates[0].spec."
        "accessModes: Required value: at least 1 access mode is required",
    )


def test_schedule_still_refuses_a_bad_template_name_at_the_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pods = write_text(tmp_path, "sts.yaml", STS.replace("{name: data}", "{name: Data_1}"))
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    assert_one_line_exit_2(
        ["schedule", "--nodes", nodes, "--pods", pods],
        capsys,
        "sts.yaml: object 1 (StatefulSet default/db, claim Data_1-db-0) (PersistentVolumeClaim "
        'default/Data_1-db-0): metadata.name: Invalid value: "Data_1-db-0": '
        + SUBDOMAIN_REGEX_ERROR,
    )
