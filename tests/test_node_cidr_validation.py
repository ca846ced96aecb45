"""A node's pod CIDRs as kube-apiserver v1.35 reads and validates them on create: the sloppy CIDR
parser (util/net.py), the legacy-field check with the StrictIPCIDRValidation gate at its v1.35
default (off), the dual-stack rule, podCIDR folded into podCIDRs as the v1 conversion folds it,
and the one error line ``schedule`` prints.

Rows named like upstream's come from TestValidateNode (pkg/apis/core/validation/
validation_test.go, v1.35): its successCases, legacyValidationCases and errorCases
("invalid-pod-cidr", "duplicate-pod-cidr", "invalid-legacy-pod-cidr-with-strict-validation",
which passes with the gate off as "valid-legacy-pod-cidr-with-legacy-validation" does), and
the podCIDRs of TestValidateNodeUpdate's "pod-cidrs-as-is-2" and "pod-cidrs-not-same-length".
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from test_bad_input import GOOD_NODE, assert_one_line_exit_2, write_text
from topospread.api.cidr_validation import node_pod_cidrs, validate_pod_cidrs
from topospread.api.defaults import default_node
from topospread.api.quick_validation import pod_cidrs_valid
from topospread.api.types import Node, NodeSpec
from topospread.api.validation import validate_node
from topospread.util.net import IPNet, dual_stack_cidrs, parse_cidr_sloppy

BAD_CIDR: Final = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
PER_FAMILY: Final = "may specify no more than one CIDR for each IP family"


def node(**spec: Any) -> Node:
    return msgspec.convert(
        {"metadata": {"name": "abc"}, "spec": spec, "status": {"capacity": {"cpu": "10"}}}, Node
    )


def messages(n: Node) -> list[str]:
    return [str(e) for e in validate_node(n)]


# ---------------------------------------------------------------------------------------------
# The parser


def v4(*octets: int) -> bytes:
    return bytes(octets)


def v6(text: str) -> bytes:
    return ipaddress.IPv6Address(text).packed


@pytest.mark.parametrize(
    ("value", "network"),
    [
        pytest.param("192.168.0.0/16", IPNet(v4(192, 168, 0, 0), 16), id="a subnet"),
        pytest.param("10.0.0.1/16", IPNet(v4(10, 0, 0, 0), 16), id="bits beyond the prefix"),
        pytest.param(
            "192.168.000.000/16", IPNet(v4(192, 168, 0, 0), 16), id="octets with leading zeros"
        ),
        pytest.param("010.1.2.3/8", IPNet(v4(10, 0, 0, 0), 8), id="a zero-led octet is decimal"),
        pytest.param("10.0.0.0/024", IPNet(v4(10, 0, 0, 0), 24), id="a zero-led prefix length"),
        pytest.param("0.0.0.0/0", IPNet(v4(0, 0, 0, 0), 0), id="everything"),
        pytest.param("2000::/10", IPNet(v6("2000::"), 10), id="IPv6"),
        pytest.param("FD00:0:0::0001/128", IPNet(v6("fd00::1"), 128), id="IPv6 not canonical"),
        pytest.param("0000fd00::/8", IPNet(v6("fd00::"), 8), id="a group with leading zeros"),
        pytest.param("::/0", IPNet(bytes(16), 0), id="only an ellipsis"),
        pytest.param("1:2:3:4:5:6:7:8/64", IPNet(v6("1:2:3:4::"), 64), id="eight groups"),
        pytest.param(
            "::ffff:1.2.3.4/120", IPNet(v6("::ffff:1.2.3.0"), 120), id="IPv4-mapped, IPv4 family"
        ),
        pytest.param("1:2:3:4:5:6:1.2.3.4/96", IPNet(v6("1:2:3:4:5:6::"), 96), id="trailing v4"),
    ],
)
def test_the_sloppy_parser_reads_what_go_1_16_read(value: str, network: IPNet) -> None:
    assert parse_cidr_sloppy(value) == network


@pytest.mark.parametrize(
    "value",
    [
        "192.168.0.0",  # no prefix length
        "192.168.0.0/",
        "192.168.0.0/33",
        "192.168.0.256/24",
        "192.168.0/24",
        "192.168.0.0.0/24",
        "1.2.3.4/24/5",
        "10.0.0.0/-1",
        "10.0.0.0/+8",
        "10.0.0.0/ 8",
        " 10.0.0.0/8",
        "\u0661.2.3.4/8",  # an Arabic-Indic digit: Go reads ASCII digits only
        "2000::/129",
        "1::2::3/64",
        ":::/64",
        "1:::2/64",
        "1:2:3:4:5:6:7:8:9/64",
        "1:2:3:4::5:6:7:8/64",  # the ellipsis must stand for a group at least
        "1:2:3:4:5:6:7/64",
        "12345::/16",
        "1::2:/64",
        ":1::/64",
        "fe80::1%eth0/64",
        "1:2:3:4:5:1.2.3.4/64",  # a trailing IPv4 address at the wrong place
        "1.2.3.4::/64",
        "::1.2.3.4:5/64",
        "/24",
        "",
    ],
)
def test_the_sloppy_parser_refuses(value: str) -> None:
    assert parse_cidr_sloppy(value) is None


_V4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
_V6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(_V4, _V6), st.data())
def test_the_sloppy_parser_agrees_with_ipaddress_on_the_forms_both_read(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, data: st.DataObject
) -> None:
    bits = data.draw(st.integers(0, address.max_prefixlen))
    text = data.draw(st.sampled_from([str(address), address.exploded]))
    expected = ipaddress.ip_network(f"{text}/{bits}", strict=False)
    net = parse_cidr_sloppy(f"{text}/{bits}")
    assert net is not None
    assert (net.ip, net.prefix_len) == (expected.network_address.packed, bits)


@pytest.mark.parametrize(
    ("cidrs", "expected"),
    [
        (["10.0.0.0/8", "fd00::/64"], (True, "")),
        (["fd00::/64", "10.0.0.0/8"], (True, "")),
        (["10.0.0.0/8", "10.1.0.0/16"], (False, "")),
        (["::ffff:10.0.0.0/104", "10.0.0.0/8"], (False, "")),
        (["10.0.0.0/8", "x"], (False, "invalid CIDR[1]: <nil> (invalid CIDR address: x)")),
    ],
)
def test_dual_stack_needs_both_families_and_names_the_bad_entry(
    cidrs: list[str], expected: tuple[bool, str]
) -> None:
    assert dual_stack_cidrs(cidrs) == expected


# ---------------------------------------------------------------------------------------------
# ValidateNode


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"podCIDRs": ["192.168.0.0/16"]}, id="successCases pod CIDR"),
        pytest.param(
            {"podCIDRs": ["192.168.000.000/16"]},
            id="valid-legacy-pod-cidr-with-legacy-validation (the gate is off in v1.35)",
        ),
        pytest.param({"podCIDRs": ["192.168.0.0/16", "2000::/10"]}, id="pod-cidrs-as-is-2"),
        pytest.param({"podCIDR": "10.244.0.0/24"}, id="podCIDR alone"),
        pytest.param(
            {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24", "fd00:10:244::/64"]},
            id="podCIDR the first of podCIDRs",
        ),
        pytest.param(
            {"podCIDR": "10.244.0.0/24", "podCIDRs": ["x", "y", "z"]},
            id="a differing podCIDR replaces the whole list",
        ),
        pytest.param({"podCIDRs": ["10.0.0.1/24"]}, id="bits beyond the prefix pass"),
        pytest.param({"podCIDRs": []}, id="none"),
    ],
)
def test_nodes_the_api_server_accepts(spec: dict[str, Any]) -> None:
    n = node(**spec)
    assert validate_node(n) == []
    assert pod_cidrs_valid(node_pod_cidrs(n.spec)) or not node_pod_cidrs(n.spec)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            {"podCIDRs": ["192.168.0.0"]},
            [f'spec.podCIDRs[0]: Invalid value: "192.168.0.0": {BAD_CIDR}'],
            id="invalid-pod-cidr",
        ),
        pytest.param(
            {"podCIDRs": ["10.0.0.1/16", "10.0.0.1/16"]},
            [f'spec.podCIDRs: Invalid value: ["10.0.0.1/16","10.0.0.1/16"]: {PER_FAMILY}'],
            id="duplicate-pod-cidr",
        ),
        pytest.param(
            {"podCIDRs": ["192.168.0.0/16", "192.167.0.0/16", "2000::/10"]},
            [
                'spec.podCIDRs: Invalid value: ["192.168.0.0/16","192.167.0.0/16","2000::/10"]: '
                + PER_FAMILY
            ],
            id="pod-cidrs-not-same-length: three entries",
        ),
        pytest.param(
            {"podCIDRs": ["10.0.0.0/8", "fd00::/64", "fd01::/64"]},
            [f'spec.podCIDRs: Invalid value: ["10.0.0.0/8","fd00::/64","fd01::/64"]: {PER_FAMILY}'],
            id="both families, three entries",
        ),
        pytest.param(
            {"podCIDR": "10.0.0.0"},
            [f'spec.podCIDRs[0]: Invalid value: "10.0.0.0": {BAD_CIDR}'],
            id="podCIDR alone is reported as podCIDRs[0]",
        ),
        pytest.param(
            {"podCIDR": "10.0.0.0", "podCIDRs": ["10.0.0.0/8", "fd00::/64"]},
            [f'spec.podCIDRs[0]: Invalid value: "10.0.0.0": {BAD_CIDR}'],
            id="a differing podCIDR is what is checked",
        ),
        pytest.param(
            {"podCIDRs": ["10.0.0.0/8", "fd00::/129"]},
            [
                f'spec.podCIDRs[1]: Invalid value: "fd00::/129": {BAD_CIDR}',
                "spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual "
                "stack with error:invalid CIDR[1]: <nil> (invalid CIDR address: fd00::/129)",
                f'spec.podCIDRs: Invalid value: ["10.0.0.0/8","fd00::/129"]: {PER_FAMILY}',
            ],
            id="a bad entry of two fails the dual-stack check too",
        ),
        pytest.param(
            {"podCIDRs": ["::ffff:10.0.0.0/104", "10.0.0.0/8"]},
            [f'spec.podCIDRs: Invalid value: ["::ffff:10.0.0.0/104","10.0.0.0/8"]: {PER_FAMILY}'],
            id="an IPv4-mapped network is IPv4",
        ),
        pytest.param(
            {"podCIDRs": ["<10.0.0.0>"]},
            [f'spec.podCIDRs[0]: Invalid value: "<10.0.0.0>": {BAD_CIDR}'],
            id="an entry is a Go string: quoted, not JSON-escaped",
        ),
    ],
)
def test_nodes_the_api_server_refuses(spec: dict[str, Any], expected: list[str]) -> None:
    n = node(**spec)
    assert messages(n) == expected
    assert not pod_cidrs_valid(node_pod_cidrs(n.spec))


def test_pod_cidr_errors_come_after_the_metadata_taints_and_resources() -> None:
    n = msgspec.convert(
        {
            "metadata": {"name": "Abc"},
            "spec": {"podCIDRs": ["x"], "taints": [{"key": "k", "effect": "Sometimes"}]},
            "status": {"capacity": {"cpu": "-1"}},
        },
        Node,
    )
    fields = [e.field for e in validate_node(n)]
    assert fields == [
        "metadata.name",
        "metadata.taints[0].effect",
        "status.capacity.cpu",
        "spec.podCIDRs[0]",
    ]


_ENTRIES = st.sampled_from(
    ["10.0.0.0/8", "10.0.0.1/24", "010.0.0.0/8", "fd00::/64", "::ffff:1.2.3.0/120", "x", "1.2.3.4"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_ENTRIES, min_size=1, max_size=4))
def test_the_yes_no_check_is_true_exactly_when_the_full_check_finds_nothing(
    cidrs: list[str],
) -> None:
    assert pod_cidrs_valid(cidrs) == (validate_pod_cidrs(cidrs) == [])


# ---------------------------------------------------------------------------------------------
# What is stored


@pytest.mark.parametrize(
    ("spec", "stored"),
    [
        ({"podCIDR": "10.0.0.0/24"}, ("10.0.0.0/24", ["10.0.0.0/24"])),
        ({"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}, ("10.0.0.0/24", ["10.0.0.0/24", "fd00::/64"])),
        ({"podCIDR": "10.1.0.0/24", "podCIDRs": ["10.0.0.0/24"]}, ("10.1.0.0/24", ["10.1.0.0/24"])),
        ({}, ("", [])),
    ],
)
def test_the_node_is_stored_with_podcidr_the_first_of_podcidrs(
    spec: dict[str, Any], stored: tuple[str, list[str]]
) -> None:
    s: NodeSpec = default_node(node(**spec)).spec
    assert (s.pod_cidr, s.pod_cidrs) == stored


def test_a_node_read_back_from_a_cluster_is_returned_unchanged() -> None:
    n = node(podCIDR="10.0.0.0/24", podCIDRs=["10.0.0.0/24", "fd00::/64"])
    assert default_node(n).spec is n.spec


# ---------------------------------------------------------------------------------------------
# The command


def test_schedule_refuses_a_node_with_a_bad_pod_cidr_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GOOD_NODE.replace("status:", "spec: {podCIDR: 10.0.0.0}\nstatus:")
    nodes = write_text(tmp_path, "nodes.yaml", text)
    assert_one_line_exit_2(
        ["schedule", "--nodes", nodes],
        capsys,
        f'nodes.yaml: object 1 (Node n1): spec.podCIDRs[0]: Invalid value: "10.0.0.0": {BAD_CIDR}',
    )
