"""Containers' ports, and a pod's hostname and subdomain, as kube-apiserver v1.35 refuses them
on create and in every workload's template (api/port_validation.py; ValidatePodSpec's
validateContainerPorts, checkHostPortConflicts, and its hostname and subdomain checks).

The tables' rows are upstream's (TestValidateContainerPorts in pkg/apis/core/validation's
validation_test.go, TestIsValidPortName in apimachinery's util/validation), each with the
whole message the API server prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from test_bad_input import GOOD_NODE, assert_one_line_exit_2, write_text
from topospread.api import quick_validation as quick
from topospread.api.field import Path as FieldPath
from topospread.api.port_validation import container_port_errors, host_port_conflicts
from topospread.api.types import Container, ContainerPort, Pod
from topospread.api.validation import pod_spec_errors, validate_pod
from topospread.util.validation import is_valid_port_name, is_valid_port_num

RANGE: Final = "must be between 1 and 65535, inclusive"
PROTOCOLS: Final = 'supported values: "SCTP", "TCP", "UDP"'
CHARSET: Final = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
LETTER: Final = "must contain at least one letter (a-z)"
LABEL_REGEX: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def pod_doc(**spec: Any) -> dict[str, Any]:
    doc_spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], **spec}
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": doc_spec}


def with_ports(*ports: dict[str, Any], **spec: Any) -> dict[str, Any]:
    doc = pod_doc(**spec)
    doc["spec"]["containers"][0]["ports"] = list(ports)
    return doc


def messages(doc: dict[str, Any], *, from_template: bool = False) -> list[str]:
    return [str(e) for e in validate_pod(msgspec.convert(doc, Pod), from_template=from_template)]


# ---------------------------------------------------------------------------------------------
# The syntax rules


@pytest.mark.parametrize(
    "name", ["telnet", "re-mail-ck", "pop3", "a", "a-1", "1-a", "a-1-b-2-c", "1-a-2-b-3"]
)
def test_upstreams_good_port_names_are_valid(name: str) -> None:
    assert is_valid_port_name(name) == []


@pytest.mark.parametrize(
    ("name", "problems"),
    [
        ("longerthan15characters", ["must be no more than 15 characters"]),
        ("", [CHARSET, LETTER]),
        ("a" * 16, ["must be no more than 15 characters"]),
        ("12345", [LETTER]),
        ("1-2-3-4", [LETTER]),
        ("-begin", ["must not begin or end with a hyphen"]),
        ("end-", ["must not begin or end with a hyphen"]),
        ("two--hyphens", ["must not contain consecutive hyphens"]),
        ("whois++", [CHARSET]),
        ("-A--", [CHARSET, LETTER, "must not contain consecutive hyphens",
                  "must not begin or end with a hyphen"]),
        ("\u00e9" * 8, ["must be no more than 15 characters", CHARSET, LETTER]),  # 16 bytes
    ],
    ids=["long", "empty", "16 a", "number", "numbers", "begin", "end", "two hyphens", "plus",
         "every problem", "bytes"],
)  # fmt: skip
def test_upstreams_bad_port_names_are_told_every_problem(name: str, problems: list[str]) -> None:
    assert is_valid_port_name(name) == problems


@pytest.mark.parametrize(("port", "ok"), [(1, True), (65535, True), (0, False), (65536, False),
                                          (-1, False)])  # fmt: skip
def test_a_port_number_is_1_to_65535(port: int, ok: bool) -> None:
    assert is_valid_port_num(port) == ([] if ok else [RANGE])


# ---------------------------------------------------------------------------------------------
# validateContainerPorts, upstream's table

AT: Final = FieldPath.root("ports")


def port_errors(*ports: dict[str, Any]) -> list[str]:
    return [str(e) for e in container_port_errors(msgspec.convert(ports, list[ContainerPort]), AT)]


def test_upstreams_good_ports_are_valid() -> None:
    assert (
        port_errors(
            {"name": "abc", "containerPort": 80, "hostPort": 80, "protocol": "TCP"},
            {"name": "easy", "containerPort": 82, "protocol": "TCP"},
            {"name": "as", "containerPort": 83, "protocol": "UDP"},
            {"name": "do-re-me", "containerPort": 84, "protocol": "SCTP"},
            {"containerPort": 85, "protocol": "TCP"},
        )
        == []
    )


_BAD_PORTS: Final[dict[str, tuple[list[dict[str, Any]], list[str]]]] = {
    "name > 15 characters": (
        [{"name": "a" * 16, "containerPort": 80, "protocol": "TCP"}],
        [f'ports[0].name: Invalid value: "{"a" * 16}": must be no more than 15 characters'],
    ),
    "name contains invalid characters": (
        [{"name": "a.b.c", "containerPort": 80, "protocol": "TCP"}],
        [f'ports[0].name: Invalid value: "a.b.c": {CHARSET}'],
    ),
    "name is a number": (
        [{"name": "80", "containerPort": 80, "protocol": "TCP"}],
        [f'ports[0].name: Invalid value: "80": {LETTER}'],
    ),
    "name not unique": (
        [
            {"name": "abc", "containerPort": 80, "protocol": "TCP"},
            {"name": "abc", "containerPort": 81, "protocol": "TCP"},
        ],
        ['ports[1].name: Duplicate value: "abc"'],
    ),
    "zero container port": (
        [{"containerPort": 0, "protocol": "TCP"}],
        ["ports[0].containerPort: Required value"],
    ),
    "invalid container port": (
        [{"containerPort": 65536, "protocol": "TCP"}],
        [f"ports[0].containerPort: Invalid value: 65536: {RANGE}"],
    ),
    "invalid host port": (
        [{"containerPort": 80, "hostPort": 65536, "protocol": "TCP"}],
        [f"ports[0].hostPort: Invalid value: 65536: {RANGE}"],
    ),
    "invalid protocol case": (
        [{"containerPort": 80, "protocol": "tcp"}],
        [f'ports[0].protocol: Unsupported value: "tcp": {PROTOCOLS}'],
    ),
    "invalid protocol": (
        [{"containerPort": 80, "protocol": "ICMP"}],
        [f'ports[0].protocol: Unsupported value: "ICMP": {PROTOCOLS}'],
    ),
    # Ours: a negative host port, a name with problems that is not also a duplicate, and
    # every error of one port in upstream's order.
    "negative host port": (
        [{"containerPort": 80, "hostPort": -1}],
        [f"ports[0].hostPort: Invalid value: -1: {RANGE}"],
    ),
    "a bad name is not remembered": (
        [{"name": "a.b", "containerPort": 1}, {"name": "a.b", "containerPort": 2}],
        [f'ports[0].name: Invalid value: "a.b": {CHARSET}',
         f'ports[1].name: Invalid value: "a.b": {CHARSET}'],
    ),
    "every error of a port": (
        [{"name": "-", "containerPort": -80, "hostPort": 70000, "protocol": "icmp"}],
        [f'ports[0].name: Invalid value: "-": {LETTER}',
         'ports[0].name: Invalid value: "-": must not begin or end with a hyphen',
         f"ports[0].containerPort: Invalid value: -80: {RANGE}",
         f"ports[0].hostPort: Invalid value: 70000: {RANGE}",
         f'ports[0].protocol: Unsupported value: "icmp": {PROTOCOLS}'],
    ),
}  # fmt: skip


@pytest.mark.parametrize(("ports", "expected"), list(_BAD_PORTS.values()), ids=list(_BAD_PORTS))
def test_upstreams_bad_ports_are_refused_with_the_servers_messages(
    ports: list[dict[str, Any]], expected: list[str]
) -> None:
    assert port_errors(*ports) == expected


def test_an_empty_protocol_is_tcp_as_the_server_defaults_it() -> None:
    """Upstream's row "protocol required" cannot happen through the API: the defaulter sets
    TCP first. Left empty, a port is accepted, and conflicts as TCP."""
    assert port_errors({"name": "abc", "containerPort": 80}) == []
    containers = msgspec.convert(
        [
            {"name": "a", "ports": [{"containerPort": 1, "hostPort": 80}]},
            {"name": "b", "ports": [{"containerPort": 1, "hostPort": 80, "protocol": "TCP"}]},
        ],
        list[Container],
    )
    assert [str(e) for e in host_port_conflicts(containers, FieldPath.root("containers"))] == [
        'containers[1].ports[0].hostPort: Duplicate value: "TCP//80"'
    ]


# ---------------------------------------------------------------------------------------------
# Host ports given twice


def test_host_ports_conflict_across_the_regular_containers() -> None:
    doc = with_ports({"containerPort": 80, "hostPort": 8080})
    doc["spec"]["containers"].append(
        {"name": "d", "image": "nginx", "ports": [{"containerPort": 81, "hostPort": 8080}]}
    )
    assert messages(doc) == ['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']


@pytest.mark.parametrize(
    "other",
    [
        {"containerPort": 81, "hostPort": 8080, "protocol": "UDP"},
        {"containerPort": 81, "hostPort": 8080, "hostIP": "10.0.0.1"},
        {"containerPort": 81, "hostPort": 8081},
        {"containerPort": 80},
    ],
    ids=["other protocol", "other host IP", "other port", "no host port"],
)
def test_host_ports_differing_in_protocol_ip_or_number_do_not_conflict(
    other: dict[str, Any],
) -> None:
    doc = with_ports({"containerPort": 80, "hostPort": 8080}, other)
    doc["spec"]["containers"][0]["ports"][1].setdefault("containerPort", 80)
    assert messages(doc) == []


def test_a_host_ip_is_part_of_the_duplicate_value() -> None:
    doc = with_ports(
        {"containerPort": 53, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
        {"containerPort": 54, "hostPort": 53, "protocol": "UDP", "hostIP": "10.0.0.1"},
    )
    assert messages(doc) == [
        'spec.containers[0].ports[1].hostPort: Duplicate value: "UDP/10.0.0.1/53"'
    ]


def test_init_containers_host_ports_are_checked_each_alone_and_named_at_index_0() -> None:
    """Init containers run one at a time: a host port shared with a regular container or
    another init container is accepted; one repeated within an init container is refused,
    and upstream names it under initContainers[0] whichever init container it is."""
    doc = with_ports({"containerPort": 80, "hostPort": 8080})
    doc["spec"]["initContainers"] = [
        {"name": "i", "image": "busybox", "ports": [{"containerPort": 1, "hostPort": 8080}]},
        {"name": "j", "image": "busybox", "ports": [{"containerPort": 1, "hostPort": 8080}]},
    ]
    assert messages(doc) == []
    doc["spec"]["initContainers"][1]["ports"].append({"containerPort": 2, "hostPort": 8080})
    assert messages(doc) == [
        'spec.initContainers[0].ports[1].hostPort: Duplicate value: "TCP//8080"'
    ]


def test_the_port_errors_come_in_upstreams_order_among_the_containers_checks() -> None:
    """validateContainerCommon: image, then ports, then resources and the security context;
    then the duplicate name; the regular containers' host port conflicts after the last of
    them and before the init containers; an init container's after its duplicate name;
    then the pod's host-network check."""
    doc = pod_doc(hostNetwork=True)
    doc["spec"]["containers"] = [
        {
            "name": "c",
            "ports": [
                {"containerPort": 80, "hostPort": 80},
                {"containerPort": 80, "protocol": "x"},
            ],
            "resources": {"requests": {"cpu": "-1"}},
            "securityContext": {"seccompProfile": {}},
        },
        {"name": "c", "image": "x", "ports": [{"containerPort": 81, "hostPort": 80}]},
    ]
    doc["spec"]["initContainers"] = [
        {
            "name": "c",
            "image": "x",
            "ports": [{"containerPort": 7, "hostPort": 7}, {"containerPort": 7, "hostPort": 7}],
        }
    ]
    found = [m.split(": ")[0] + ": " + m.split(": ")[1] for m in messages(doc)]
    assert found == [
        "spec.containers[0].image: Required value",
        "spec.containers[0].ports[1].protocol: Unsupported value",
        "spec.containers[0].resources.requests[cpu]: Invalid value",
        "spec.containers[0].securityContext.seccompProfile.type: Required value",
        "spec.containers[1].name: Duplicate value",
        "spec.containers[1].ports[0].hostPort: Duplicate value",
        "spec.initContainers[0].name: Duplicate value",
        "spec.initContainers[0].ports[1].hostPort: Duplicate value",
        "spec.containers[1].ports[0].hostPort: Invalid value",  # must match containerPort
    ]


# ---------------------------------------------------------------------------------------------
# hostname and subdomain


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("hostname", "web.0", "must not contain dots"),
        ("hostname", "Web-0", LABEL_REGEX),
        ("subdomain", "bad subdomain name", LABEL_REGEX),
        ("subdomain", "a" * 64, "must be no more than 63 characters"),
    ],
    ids=["hostname with dots", "hostname upper case", "subdomain with spaces", "long subdomain"],
)
def test_a_hostname_and_a_subdomain_must_be_dns_labels(
    field: str, value: str, problem: str
) -> None:
    for from_template in (False, True):
        assert messages(pod_doc(**{field: value}), from_template=from_template) == [
            f"spec.{field}: Invalid value: {json.dumps(value)}: {problem}"
        ]
    assert messages(pod_doc(**{field: "web-0"})) == []


def test_hostname_and_subdomain_come_after_the_node_name_and_before_the_tolerations() -> None:
    doc = pod_doc(
        nodeName="N_1",
        hostname="A",
        subdomain="B",
        tolerations=[{"key": "k", "operator": "Sometimes"}],
        topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone",
                                    "whenUnsatisfiable": "DoNotSchedule"}],
    )  # fmt: skip
    assert [m.split(":")[0] for m in messages(doc)] == [
        "spec.topologySpreadConstraints[0].maxSkew",
        "spec.nodeName",
        "spec.hostname",
        "spec.subdomain",
        "spec.tolerations[0].operator",
    ]


@pytest.mark.parametrize(
    ("field", "value"),
    [("hostname", "web-0"), ("hostname", "Web-0"), ("hostname", "a.b"), ("subdomain", "svc"),
     ("subdomain", "Svc"), ("subdomain", "a" * 64)],
)  # fmt: skip
def test_the_quick_check_finds_a_hostname_or_subdomain_valid_exactly_when_the_full_check_does(
    field: str, value: str
) -> None:
    pod = msgspec.convert(pod_doc(**{field: value}), Pod)
    spec_errors = pod_spec_errors(pod)
    full = messages(pod_doc(**{field: value}))
    assert quick.pod_valid(pod, any(spec_errors), from_template=False) == (full == [])
    assert quick.pod_fields_valid(pod) == (full == [])


# ---------------------------------------------------------------------------------------------
# Through the command line, for a pod and each workload's template

_TEMPLATE: Final = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {
        "containers": [
            {"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 70000}]}
        ]
    },
}
_SELECTOR: Final = {"matchLabels": {"app": "web"}}
_JOB_TEMPLATE: Final = {
    **_TEMPLATE,
    "spec": {**_TEMPLATE["spec"], "restartPolicy": "Never"},
}

_WORKLOADS: Final[dict[str, tuple[dict[str, Any], str]]] = {
    "Deployment": (
        {"apiVersion": "apps/v1", "spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
        "spec.template",
    ),
    "StatefulSet": (
        {
            "apiVersion": "apps/v1",
            "spec": {"selector": _SELECTOR, "serviceName": "web", "template": _TEMPLATE},
        },
        "spec.template",
    ),
    "DaemonSet": (
        {"apiVersion": "apps/v1", "spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
        "spec.template",
    ),
    "ReplicaSet": (
        {"apiVersion": "apps/v1", "spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
        "spec.template",
    ),
    "ReplicationController": (
        {"apiVersion": "v1", "spec": {"template": _TEMPLATE}},
        "spec.template",
    ),
    "Job": ({"apiVersion": "batch/v1", "spec": {"template": _JOB_TEMPLATE}}, "spec.template"),
    "CronJob": (
        {
            "apiVersion": "batch/v1",
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": _JOB_TEMPLATE}}},
        },
        "spec.jobTemplate.spec.template",
    ),
}


@pytest.mark.parametrize(("doc", "where"), list(_WORKLOADS.values()), ids=list(_WORKLOADS))
def test_a_workload_whose_template_has_a_bad_host_port_is_refused_in_one_line(
    doc: dict[str, Any], where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check`` puts every workload's template through the API server's checks (``schedule``
    leaves DaemonSets out)."""
    kind = next(k for k, v in _WORKLOADS.items() if v[0] is doc)
    obj = {"kind": kind, "metadata": {"name": "web", "namespace": "default"}, **doc}
    bad = write_text(tmp_path, "w.yaml", json.dumps(obj))
    assert_one_line_exit_2(
        ["check", bad, "--zones", "3"],
        capsys,
        f"w.yaml: object 1 ({kind} default/web): "
        f"{where}.spec.containers[0].ports[0].hostPort: Invalid value: 70000: {RANGE}",
    )


def test_schedule_refuses_a_pod_with_a_lower_case_protocol_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = with_ports({"containerPort": 80, "hostPort": 80, "protocol": "tcp"})
    pods = write_text(tmp_path, "pods.yaml", json.dumps({"apiVersion": "v1", "kind": "Pod", **doc}))
    nodes = write_text(tmp_path, "nodes.yaml", GOOD_NODE)
    assert_one_line_exit_2(
        ["schedule", "--nodes", nodes, "--pods", pods],
        capsys,
        f"pods.yaml: object 1 (Pod default/p): spec.containers[0].ports[0].protocol: "
        f'Unsupported value: "tcp": {PROTOCOLS}',
    )


# ---------------------------------------------------------------------------------------------
# The memos: a template's ports are in both keys, a pod's hostname and subdomain are its own


@pytest.mark.parametrize("field", ["containers", "initContainers"])
def test_twins_differing_only_in_their_ports_are_validated_each_by_its_own(field: str) -> None:
    """pod_spec_errors keeps a template's errors by a key of the fields they read, and
    AdmissionMemo keeps what admission made of a template: the ports are in both keys."""
    from topospread.errors import ValidationError
    from topospread.simulator.pod_admission import AdmissionMemo, admit_pod, priority_classes

    good = pod_doc()
    good["spec"][field] = [
        {"name": "i" if field == "initContainers" else "c", "image": "busybox",
         "ports": [{"containerPort": 1, "hostPort": 9}, {"containerPort": 2, "hostPort": 10}]}
    ]  # fmt: skip
    bad: dict[str, Any] = json.loads(json.dumps(good))
    bad["spec"][field][0]["ports"][1]["hostPort"] = 9
    expected = [f'spec.{field}[0].ports[1].hostPort: Duplicate value: "TCP//9"']
    for _ in range(2):
        assert messages(good) == []
        assert messages(bad) == expected
    memo = AdmissionMemo(priority_classes([]))
    for _ in range(2):
        admit_pod(msgspec.convert(good, Pod), memo.priorities, "x", memo=memo)
        with pytest.raises(ValidationError, match=r"hostPort: Duplicate value"):
            admit_pod(msgspec.convert(bad, Pod), memo.priorities, "x", memo=memo)


def test_pods_of_one_set_differing_in_hostname_are_validated_each_by_its_own() -> None:
    """The hostname is each pod's own: checked for each pod, not kept with the template."""
    from topospread.errors import ValidationError
    from topospread.simulator.pod_admission import AdmissionMemo, admit_pod, priority_classes

    memo = AdmissionMemo(priority_classes([]))
    found = []
    for name, hostname in (("web-0", "web-0"), ("web-1", "Web-1"), ("web-2", "web-2")):
        doc = pod_doc(hostname=hostname, subdomain="web")
        doc["metadata"]["name"] = name
        pod = msgspec.convert(doc, Pod)
        fast = memo.admit_valid(pod)
        try:
            admit_pod(pod, memo.priorities, "x", memo=memo)
            found.append((name, fast is not None, "ok"))
        except ValidationError as e:
            found.append((name, fast is not None, str(e).split(": ")[1]))
    assert found == [
        ("web-0", False, "ok"),
        ("web-1", False, "spec.hostname"),
        ("web-2", True, "ok"),
    ]
