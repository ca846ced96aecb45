"""The syntax rules of label keys, label values and DNS names, with apimachinery's exact messages.

Each check returns the list of problems (empty when the value is valid), in the order upstream
reports them, so callers can turn each one into a field error or join them as upstream does.

Two generations of the same rules coexist in kube-apiserver v1.35, and their length messages
differ: label keys and values are checked by ``k8s.io/apimachinery/pkg/api/validate/content``
("must be no more than 63 bytes"), while object names are still checked by the older
``k8s.io/apimachinery/pkg/util/validation`` ("must be no more than 253 characters"). Both count
bytes of the UTF-8 encoding, as Go's ``len`` does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Final

# Label keys ("qualified names") and label values.
_LABEL_KEY_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_ERR: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_MAX_LENGTH: Final = 63
_LABEL_KEY_RE: Final = re.compile(_LABEL_KEY_FMT)

_LABEL_VALUE_FMT: Final = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_ERR: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character"
)
LABEL_VALUE_MAX_LENGTH: Final = 63
_LABEL_VALUE_RE: Final = re.compile(_LABEL_VALUE_FMT)

# DNS (RFC 1123) labels and subdomains.
_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
DNS1123_LABEL_MAX_LENGTH: Final = 63
_DNS1123_LABEL_RE: Final = re.compile(_DNS1123_LABEL_FMT)

_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character"
)
DNS1123_SUBDOMAIN_MAX_LENGTH: Final = 253
_DNS1123_SUBDOMAIN_RE: Final = re.compile(_DNS1123_SUBDOMAIN_FMT)


def _memoised(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A string check remembered per value (manifests repeat the same keys and values); each
    call returns a list of its own, which the caller may extend."""
    cached = functools.lru_cache(maxsize=1 << 16)(lambda value: tuple(check(value)))

    @functools.wraps(check)
    def checked(value: str) -> list[str]:
        return list(cached(value))

    return checked


def _byte_len(value: str) -> int:
    """Go's ``len(string)``: the length of the UTF-8 encoding."""
    return len(value.encode("utf-8", "surrogatepass"))


def _matches(pattern: re.Pattern[str], value: str) -> bool:
    """Go's ``regexp.MustCompile("^" + fmt + "$").MatchString`` (``$`` is end of text in Go)."""
    return pattern.fullmatch(value) is not None


def empty_error() -> str:
    """Upstream: EmptyError (apimachinery/pkg/api/validate/content/errors.go, v1.35)"""
    return "must be non-empty"


def max_len_error(length: int) -> str:
    """The too-long message of the content package (label keys and values).

    Upstream: content.MaxLenError (apimachinery/pkg/api/validate/content/errors.go, v1.35)
    """
    return f"must be no more than {length} bytes"


def legacy_max_len_error(length: int) -> str:
    """The too-long message of util/validation (DNS names of objects).

    Upstream: validation.MaxLenError (apimachinery/pkg/util/validation/validation.go, v1.35)
    """
    return f"must be no more than {length} characters"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream: RegexError (apimachinery/pkg/api/validate/content/errors.go, v1.35)"""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def inclusive_range_error(lo: int, hi: int) -> str:
    """Upstream: InclusiveRangeError (apimachinery/pkg/util/validation/validation.go, v1.35)"""
    return f"must be between {lo} and {hi}, inclusive"


def _dns1123_subdomain_errors(value: str, too_long: str) -> list[str]:
    errs: list[str] = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(too_long)
    if not _matches(_DNS1123_SUBDOMAIN_RE, value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


@_memoised
def is_dns1123_subdomain(value: str) -> list[str]:
    """Problems with ``value`` as a lowercase RFC 1123 subdomain (the rule for object names).

    Upstream: IsDNS1123Subdomain (apimachinery/pkg/util/validation/validation.go, v1.35)
    """
    return _dns1123_subdomain_errors(value, legacy_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))


@_memoised
def is_dns1123_label(value: str) -> list[str]:
    """Problems with ``value`` as a lowercase RFC 1123 label (the rule for namespace names).

    A value that is a valid subdomain but not a valid label can only be wrong by its dots, and
    upstream says so instead of printing the regex.

    Upstream: IsDNS1123Label (apimachinery/pkg/util/validation/validation.go, v1.35)
    """
    errs: list[str] = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(legacy_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _matches(_DNS1123_LABEL_RE, value):
        if _matches(_DNS1123_SUBDOMAIN_RE, value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


_DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_ERR: Final = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_DNS1035_LABEL_RE: Final = re.compile(_DNS1035_LABEL_FMT)


@_memoised
def is_dns1035_label(value: str) -> list[str]:
    """Problems with ``value`` as a DNS-1035 label (the rule for Service names).

    Upstream: IsDNS1035Label (apimachinery/pkg/util/validation/validation.go, v1.35)
    """
    errs: list[str] = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errs.append(legacy_max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _matches(_DNS1035_LABEL_RE, value):
        errs.append(regex_error(_DNS1035_LABEL_ERR, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


@_memoised
def is_qualified_name(value: str) -> list[str]:
    """Problems with ``value`` as a label key: an optional DNS-subdomain prefix, ``/``, a name.

    Upstream: IsLabelKey, alias IsQualifiedName (apimachinery/pkg/api/validate/content/kube.go,
    v1.35)
    """
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part " + empty_error())
        else:
            too_long = max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH)
            errs.extend("prefix part " + msg for msg in _dns1123_subdomain_errors(prefix, too_long))
    else:
        errs.append(
            "a valid label key "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        )
        return errs

    if not name:
        errs.append("name part " + empty_error())
    elif _byte_len(name) > _LABEL_KEY_MAX_LENGTH:
        errs.append("name part " + max_len_error(_LABEL_KEY_MAX_LENGTH))
    if not _matches(_LABEL_KEY_RE, name):
        errs.append(
            "name part "
            + regex_error(_LABEL_KEY_ERR, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


@_memoised
def is_valid_label_value(value: str) -> list[str]:
    """Problems with ``value`` as a label value (the empty string is valid).

    Upstream: IsLabelValue, alias IsValidLabelValue
    (apimachinery/pkg/api/validate/content/kube.go, v1.35)
    """
    errs: list[str] = []
    if _byte_len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _matches(_LABEL_VALUE_RE, value):
        errs.append(regex_error(_LABEL_VALUE_ERR, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def is_valid_port_num(port: int) -> list[str]:
    """Problems with ``port`` as a port number: 1 to 65535.

    Upstream: IsValidPortNum (apimachinery/pkg/util/validation/validation.go, v1.35)
    """
    return [] if 1 <= port <= PORT_MAX else [inclusive_range_error(1, PORT_MAX)]


PORT_MAX: Final = 65535
PORT_NAME_MAX_LENGTH: Final = 15
_PORT_NAME_CHARSET_RE: Final = re.compile("[-a-z0-9]+")
_PORT_NAME_LETTER_RE: Final = re.compile("[a-z]")


@_memoised
def is_valid_port_name(port: str) -> list[str]:
    """Problems with ``port`` as a port name (an IANA_SVC_NAME, RFC 6335, lower case only):
    at most 15 bytes of ``a-z``, ``0-9`` and ``-``, a letter at least, no ``--``, no hyphen at
    either end. Every problem is told, in upstream's order.

    Upstream: IsValidPortName (apimachinery/pkg/util/validation/validation.go, v1.35)
    """
    errs: list[str] = []
    if _byte_len(port) > PORT_NAME_MAX_LENGTH:
        errs.append(legacy_max_len_error(PORT_NAME_MAX_LENGTH))
    if not _matches(_PORT_NAME_CHARSET_RE, port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if _PORT_NAME_LETTER_RE.search(port) is None:
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port.startswith("-") or port.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


_DECIMAL_INTEGER_ERR: Final = "must be a valid decimal integer in canonical form"


def is_decimal_integer(value: str) -> list[str]:
    """Problems with ``value`` as a canonical decimal integer (no ``+``, leading zero or ``-0``).

    Upstream: IsDecimalInteger (apimachinery/pkg/api/validate/content/decimal_int.go, v1.35)
    """
    if not value:
        return [empty_error()]
    digits = value[1:] if value[0] == "-" else value
    if not digits:
        return [_DECIMAL_INTEGER_ERR]
    if digits[0] == "0":
        return [] if value == "0" else [_DECIMAL_INTEGER_ERR]
    if not all("0" <= c <= "9" for c in digits):
        return [_DECIMAL_INTEGER_ERR]
    return []


# ---------------------------------------------------------------------------------------------
# Yes/no forms of the checks above, for the common case of a valid value: each is True exactly
# when its check above returns no problem, and builds no message.
#
# NOTE: every pattern above matches ASCII characters alone, so a value that matches is as long
# in characters as in bytes: "at most N bytes and matches" is "at most N characters and matches".


def valid_dns1123_subdomain(value: str) -> bool:
    """Whether ``is_dns1123_subdomain(value)`` is empty."""
    return (
        len(value) <= DNS1123_SUBDOMAIN_MAX_LENGTH
        and _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None
    )


def valid_dns1123_label(value: str) -> bool:
    """Whether ``is_dns1123_label(value)`` is empty."""
    return len(value) <= DNS1123_LABEL_MAX_LENGTH and _DNS1123_LABEL_RE.fullmatch(value) is not None


def valid_label_value(value: str) -> bool:
    """Whether ``is_valid_label_value(value)`` is empty."""
    return len(value) <= LABEL_VALUE_MAX_LENGTH and _LABEL_VALUE_RE.fullmatch(value) is not None


class Remembered:
    """A yes/no string check that remembers the values it found valid (up to ``limit`` at a
    time), for values that recur: label keys, namespaces, node names. Callers in a hurry test
    ``value in check.known`` before calling it."""

    __slots__ = ("_check", "_limit", "known")

    def __init__(self, check: Callable[[str], bool], limit: int = 1 << 16) -> None:
        self._check = check
        self._limit = limit
        self.known: set[str] = set()

    def __call__(self, value: str) -> bool:
        if value in self.known:
            return True
        if not self._check(value):
            return False
        if len(self.known) >= self._limit:
            self.known.clear()
        self.known.add(value)
        return True


def _no_qualified_name_problem(value: str) -> bool:
    return not is_qualified_name(value)


# Whether ``is_qualified_name(value)`` is empty.
valid_qualified_name: Final = Remembered(_no_qualified_name_problem)
