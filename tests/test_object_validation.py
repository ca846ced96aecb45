"""The API server's validation of resources (containers, pods, nodes) and of the workload kinds'
own fields, with its messages and the field's path."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from topospread.api.apps_validation import validate_workload_spec
from topospread.api.loader import decode_object
from topospread.api.strict import FieldValidation, field_validation
from topospread.api.types import CronJob, Deployment, Job, Node, Pod, StatefulSet
from topospread.api.validation import validate_node, validate_pod

QUANTITY_FORMAT = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def pod(resources: dict[str, Any], **spec: Any) -> Pod:
    data = {
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "nginx", "resources": resources}], **spec},
    }
    # Decoded without the strict decode, which refuses a quantity that does not parse before
    # validation is asked (as the API server's decoder does): validation's own words here.
    with field_validation(FieldValidation.IGNORE):
        return decode_object(data, Pod, "p.yaml")


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        pytest.param(
            {"requests": {"cpu": "lots"}},
            f'spec.containers[0].resources.requests[cpu]: Invalid value: "lots": {QUANTITY_FORMAT}',
            id="a word for a quantity",
        ),
        pytest.param(
            {"limits": {"memory": "12XB"}},
            f'spec.containers[0].resources.limits[memory]: Invalid value: "12XB": '
            f"{QUANTITY_FORMAT}",
            id="an unknown suffix",
        ),
        pytest.param(
            {"requests": {"memory": "-1Gi"}},
            'spec.containers[0].resources.requests[memory]: Invalid value: "-1Gi": '
            "must be greater than or equal to 0",
            id="a negative request",
        ),
        pytest.param(
            {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
            'spec.containers[0].resources.requests: Invalid value: "2": '
            "must be less than or equal to cpu limit of 1",
            id="a request above its limit",
        ),
        pytest.param(
            {"requests": {"gpus": "1"}},
            'spec.containers[0].resources.requests[gpus]: Invalid value: "gpus": '
            "must be a standard resource type or fully qualified",
            id="an unqualified resource name",
        ),
        pytest.param(
            {"requests": {"example.com/gpu": "1"}},
            "spec.containers[0].resources.limits: Required value: "
            "Limit must be set for non overcommitable resources",
            id="an extended resource without a limit",
        ),
        pytest.param(
            {"requests": {"example.com/gpu": "500m"}, "limits": {"example.com/gpu": "500m"}},
            'spec.containers[0].resources.limits[example.com/gpu]: Invalid value: "500m": '
            "must be an integer",
            id="a fraction of an extended resource",
        ),
    ],
)
def test_container_resources_are_refused_as_the_api_server_refuses_them(
    resources: dict[str, Any], expected: str
) -> None:
    errors = validate_pod(pod(resources))
    assert errors and str(errors[0]) == expected


def test_valid_resources_pass_and_numbers_are_quantities_too() -> None:
    ok = {"requests": {"cpu": 0.5, "memory": "1Gi"}, "limits": {"cpu": 1, "memory": "2Gi"}}
    assert validate_pod(pod(ok)) == []


def node(capacity: dict[str, Any]) -> Node:
    with field_validation(FieldValidation.IGNORE):  # as pod() above
        return decode_object(
            {"metadata": {"name": "n"}, "status": {"capacity": capacity}}, Node, "n.yaml"
        )


@pytest.mark.parametrize(
    ("capacity", "expected"),
    [
        ({"cpu": "eight"}, f'status.capacity.cpu: Invalid value: "eight": {QUANTITY_FORMAT}'),
        (
            {"memory": "-1Gi"},
            'status.capacity.memory: Invalid value: "-1Gi": must be greater than or equal to 0',
        ),
        ({"pods": "1500m"}, 'status.capacity.pods: Invalid value: "1500m": must be an integer'),
    ],
)
def test_node_capacity_is_validated(capacity: dict[str, Any], expected: str) -> None:
    errors = validate_node(node(capacity))
    assert errors and str(errors[0]) == expected


def test_nodes_are_validated_each_by_its_own_capacity_and_allocatable() -> None:
    """Nodes sharing one but not the other of capacity and allocatable (kept per pair) each
    get their own errors."""
    capacity = {"cpu": "8", "memory": "32Gi"}

    def made(allocatable: dict[str, Any], capacity: dict[str, Any] = capacity) -> Node:
        with field_validation(FieldValidation.IGNORE):  # as pod() above
            return decode_object(
                {
                    "metadata": {"name": "n"},
                    "status": {"capacity": capacity, "allocatable": allocatable},
                },
                Node,
                "n.yaml",
            )

    assert validate_node(made({"cpu": "7"})) == []
    assert [str(e) for e in validate_node(made({"cpu": "-7"}))] == [
        'status.allocatable.cpu: Invalid value: "-7": must be greater than or equal to 0'
    ]
    assert [str(e) for e in validate_node(made({"cpu": "7"}, {"cpu": "x"}))] == [
        f'status.capacity.cpu: Invalid value: "x": {QUANTITY_FORMAT}'
    ]
    assert validate_node(made({"cpu": "7"})) == []


def workload(cls: type[msgspec.Struct], spec: dict[str, Any]) -> Any:
    return decode_object({"metadata": {"name": "w"}, "spec": spec}, cls, "w.yaml")


@pytest.mark.parametrize(
    ("cls", "spec", "expected"),
    [
        (
            Deployment,
            {"replicas": -3},
            "spec.replicas: Invalid value: -3: must be greater than or equal to 0",
        ),
        (
            Deployment,
            {"strategy": {"type": "BlueGreen"}},
            'spec.strategy.type: Unsupported value: "BlueGreen": supported values: '
            '"Recreate", "RollingUpdate"',
        ),
        (
            Deployment,
            {"strategy": {"rollingUpdate": {"maxSurge": "50", "maxUnavailable": 1}}},
            'spec.strategy.rollingUpdate.maxSurge: Invalid value: "50": a valid percent string '
            "must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex "
            "used for validation is '[0-9]+%')",
        ),
        (
            Deployment,
            {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}},
            'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 '
            "when `maxSurge` is 0",
        ),
        (
            Deployment,
            {"minReadySeconds": 30, "progressDeadlineSeconds": 30},
            "spec.progressDeadlineSeconds: Invalid value: 30: must be greater than minReadySeconds",
        ),
        (
            StatefulSet,
            {"podManagementPolicy": "AllAtOnce"},
            # ValidateStatefulSetSpec says Invalid here, with its own wording.
            "spec.podManagementPolicy: Invalid value: \"AllAtOnce\": must be 'OrderedReady' or "
            "'Parallel'",
        ),
        (
            Job,
            {"parallelism": -1},
            "spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        ),
        (
            CronJob,
            {"schedule": "* * * * *", "jobTemplate": {"spec": {"completions": -2}}},
            "spec.jobTemplate.spec.completions: Invalid value: -2: must be greater than or "
            "equal to 0",
        ),
    ],
)
def test_workload_fields_are_refused_as_the_api_server_refuses_them(
    cls: type[msgspec.Struct], spec: dict[str, Any], expected: str
) -> None:
    errors = validate_workload_spec(workload(cls, spec))
    assert errors and str(errors[0]) == expected


def test_a_valid_deployment_passes() -> None:
    spec = {"replicas": 3, "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}}}
    assert validate_workload_spec(workload(Deployment, spec)) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "apiVersion: v1\nkind: Service\nmetadata: {name: web_svc, namespace: default}\n",
            'metadata.name: Invalid value: "web_svc": a DNS-1035 label must consist of lower '
            "case alphanumeric characters or '-', start with an alphabetic character, and end "
            "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
            "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            id="a Service name is a DNS-1035 label",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n"
            "spec: {selector: {app: 'no spaces'}}\n",
            'spec.selector: Invalid value: "no spaces": a valid label must be an empty string '
            "or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex "
            "used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
            id="a Service selector's values are label values",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: team.a}\n",
            'metadata.name: Invalid value: "team.a": must not contain dots',
            id="a Namespace name is a DNS label",
        ),
        pytest.param(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: top}\n"
            "value: 2000000000\n",
            "value: Forbidden: maximum allowed value of a user defined priority is 1000000000",
            id="a user PriorityClass above a billion",
        ),
        pytest.param(
            "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: "
            + "c" * 53
            + ", namespace: default}\nspec: {schedule: '* * * * *'}\n",
            f'metadata.name: Invalid value: "{"c" * 53}": must be no more than 52 characters',
            id="a CronJob name leaves room for its Jobs' suffix",
        ),
    ],
)
def test_other_kinds_are_validated_as_the_api_server_does(text: str, expected: str) -> None:
    from topospread.api.loader import load_text
    from topospread.api.object_validation import validate_object

    (obj,) = load_text(text, "o.yaml")
    errors = validate_object(obj)
    assert errors and str(errors[0]) == expected
