"""Label keys, label values and DNS names: apimachinery v1.35's rules and exact messages."""

from __future__ import annotations

import pytest

from topospread.util.validation import (
    is_decimal_integer,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)

KEY_REGEX = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
NAME_PART_REGEX_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{KEY_REGEX}')"
)
SUBDOMAIN_REGEX = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
SUBDOMAIN_REGEX_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{SUBDOMAIN_REGEX}')"
)
LABEL_REGEX_ERROR = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
VALUE_REGEX_ERROR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    f"'my_value',  or '12345', regex used for validation is '({KEY_REGEX})?')"
)


@pytest.mark.parametrize(
    "key",
    [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "Uppercase_Is_OK_123",
        "example.com/Uppercase_Is_OK_123",
        "now.with.dots/simple",
        "1.2.3.4/5678",
        "topology.kubernetes.io/zone",
        "a" * 63,
        "a" * 253 + "/" + "b" * 63,
    ],
    ids=lambda k: f"{k[:40]} is a valid label key",
)
def test_valid_label_keys_have_no_problems(key: str) -> None:
    assert is_qualified_name(key) == []


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        pytest.param("", ["name part must be non-empty", NAME_PART_REGEX_ERROR], id="empty key"),
        pytest.param("cantendwithadash-", [NAME_PART_REGEX_ERROR], id="a name ending with a dash"),
        pytest.param("nospecialchars%^=@", [NAME_PART_REGEX_ERROR], id="special characters"),
        pytest.param(
            "a" * 64, ["name part must be no more than 63 bytes"], id="a 64-byte name part"
        ),
        pytest.param(
            "é" * 32,
            ["name part must be no more than 63 bytes", NAME_PART_REGEX_ERROR],
            id="length is counted in UTF-8 bytes",
        ),
        pytest.param(
            "/simple", ["prefix part must be non-empty"], id="an empty prefix before the slash"
        ),
        pytest.param(
            "example.com/",
            ["name part must be non-empty", NAME_PART_REGEX_ERROR],
            id="an empty name after the slash",
        ),
        pytest.param(
            "Example.com/abc",
            ["prefix part " + SUBDOMAIN_REGEX_ERROR],
            id="an upper-case prefix",
        ),
        pytest.param(
            "a" * 254 + "/abc",
            ["prefix part must be no more than 253 bytes"],
            id="a 254-byte prefix",
        ),
        pytest.param(
            "only/one/slash",
            [
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyName',  or "
                f"'my.name',  or '123-abc', regex used for validation is '{KEY_REGEX}') with an "
                "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
            id="two slashes stop the check at once",
        ),
        pytest.param(
            "simple\n", [NAME_PART_REGEX_ERROR], id="a trailing newline is not ignored as Go's $"
        ),
    ],
)
def test_invalid_label_keys_report_upstream_messages_in_order(
    key: str, expected: list[str]
) -> None:
    assert is_qualified_name(key) == expected


@pytest.mark.parametrize(
    "value",
    ["", "simple", "now-with-dashes", "1234", "end-with-num-1", "my_value", "a" * 63],
    ids=lambda v: f"{v[:20]!r} is a valid label value",
)
def test_valid_label_values_have_no_problems(value: str) -> None:
    assert is_valid_label_value(value) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("-starts-with-dash", [VALUE_REGEX_ERROR], id="a leading dash"),
        pytest.param(".starts.with.dot", [VALUE_REGEX_ERROR], id="a leading dot"),
        pytest.param("Tama-nui-te-rā", [VALUE_REGEX_ERROR], id="a non-ASCII letter"),
        pytest.param("a" * 64, ["must be no more than 63 bytes"], id="64 bytes"),
        pytest.param(
            "a" * 63 + "-",
            ["must be no more than 63 bytes", VALUE_REGEX_ERROR],
            id="too long and badly ended",
        ),
    ],
)
def test_invalid_label_values_report_upstream_messages(value: str, expected: list[str]) -> None:
    assert is_valid_label_value(value) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("example.com", [], id="a dotted name is a subdomain"),
        pytest.param("a" * 253, [], id="253 bytes is the limit"),
        pytest.param("", [SUBDOMAIN_REGEX_ERROR], id="empty"),
        pytest.param("Upper", [SUBDOMAIN_REGEX_ERROR], id="upper case"),
        pytest.param("a_b", [SUBDOMAIN_REGEX_ERROR], id="an underscore"),
        pytest.param(
            "a" * 254,
            ["must be no more than 253 characters"],
            id="util/validation still says characters",
        ),
    ],
)
def test_dns1123_subdomain(name: str, expected: list[str]) -> None:
    assert is_dns1123_subdomain(name) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("my-name", [], id="a plain label"),
        pytest.param("123-abc", [], id="may start with a digit"),
        pytest.param("a.b", ["must not contain dots"], id="a valid subdomain names its dots"),
        pytest.param("-a", [LABEL_REGEX_ERROR], id="a leading dash prints the regex"),
        pytest.param(
            "a" * 64, ["must be no more than 63 characters"], id="64 characters is too long"
        ),
        pytest.param(
            "a" * 64 + ".b",
            ["must be no more than 63 characters", "must not contain dots"],
            id="too long and dotted",
        ),
    ],
)
def test_dns1123_label(name: str, expected: list[str]) -> None:
    assert is_dns1123_label(name) == expected


NOT_CANONICAL = ["must be a valid decimal integer in canonical form"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("0", [], id="zero"),
        pytest.param("-5", [], id="a negative number"),
        pytest.param("123", [], id="a positive number"),
        pytest.param("", ["must be non-empty"], id="empty"),
        pytest.param("-", NOT_CANONICAL, id="a lone minus"),
        pytest.param("-0", NOT_CANONICAL, id="minus zero"),
        pytest.param("0100", NOT_CANONICAL, id="a leading zero"),
        pytest.param("+5", NOT_CANONICAL, id="a plus sign"),
        pytest.param("1e3", NOT_CANONICAL, id="an exponent"),
    ],
)
def test_decimal_integers_must_be_canonical(value: str, expected: list[str]) -> None:
    assert is_decimal_integer(value) == expected
