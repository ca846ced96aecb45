"""IP addresses and CIDR values as k8s.io/utils/net reads them: its "sloppy" parsers are Go 1.16's
``net.ParseIP`` and ``net.ParseCIDR``, kept (issue 100895) because Go 1.17 began refusing IPv4
octets with leading zeros and stored objects may hold them. So here, as there:

- an IPv4 octet is one or more ASCII digits worth at most 255, leading zeros allowed
  (``010.000.001.002`` is ``10.0.1.2``);
- an IPv6 group is one or more hex digits worth at most 0xffff, however many leading zeros;
  ``::`` stands for at least one group, once; the last 32 bits may be written as an IPv4
  address (``::ffff:1.2.3.4``); no zone (``%eth0``);
- a CIDR value is an address, ``/`` (the first one), and a prefix length of ASCII digits (leading
  zeros allowed) no more than the address's bit length; bits set beyond the prefix are allowed
  (``10.0.0.1/24``) and masked off in the network.

Upstream: ParseIPSloppy, ParseCIDRSloppy (k8s.io/utils/net/parse.go and
internal/third_party/forked/golang/net/ip.go), IPFamilyOfCIDR, IsDualStackCIDRStrings
(ipfamily.go), ParseCIDRs (net.go).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

IPV4_LEN: Final = 4
IPV6_LEN: Final = 16
# Go's dtoi and xtoi give up once a number reaches this (far beyond any valid part).
_BIG: Final = 0xFFFFFF
_DIGITS: Final = frozenset("0123456789")
_HEX_DIGITS: Final = frozenset("0123456789abcdefABCDEF")
# An IPv4 address inside a 16-byte one: ::ffff:a.b.c.d
_V4_IN_V6_PREFIX: Final = bytes(10) + b"\xff\xff"

IPFamily = Literal["4", "6"]


@dataclass(frozen=True, slots=True)
class IPNet:
    """A parsed CIDR value's network: its address with the bits beyond the prefix cleared (4
    bytes for an IPv4 value, 16 for an IPv6 one) and its prefix length."""

    ip: bytes
    prefix_len: int

    @property
    def family(self) -> IPFamily:
        """IPv4 for a 4-byte network and for a 16-byte one that is an IPv4-mapped address
        (Go's ``To4``); IPv6 otherwise.

        Upstream: IPFamilyOfCIDR (k8s.io/utils/net/ipfamily.go)
        """
        if len(self.ip) == IPV4_LEN or self.ip[:12] == _V4_IN_V6_PREFIX:
            return "4"
        return "6"


def _decimal(s: str) -> int | None:
    """A run of ASCII digits as a number, None when empty or too large (Go's dtoi)."""
    if not s or not _DIGITS.issuperset(s):
        return None
    n = int(s)
    return None if n >= _BIG else n


def _parse_ipv4(s: str) -> bytes | None:
    parts = s.split(".")
    if len(parts) != IPV4_LEN:
        return None
    octets = [_decimal(p) for p in parts]
    if any(o is None or o > 0xFF for o in octets):
        return None
    return bytes(o for o in octets if o is not None)


def _parse_ipv6(s: str) -> bytes | None:
    """Sixteen bytes, or None. Groups are read left to right; a trailing IPv4 address fills the
    last four bytes; ``::`` is expanded to the zero groups the others leave."""
    head, sep, tail = s.partition("::")
    if sep and "::" in tail:
        return None  # a second ellipsis
    before = _groups(head, last=not sep)
    after = _groups(tail, last=True) if sep else b""
    if before is None or after is None:
        return None
    missing = IPV6_LEN - len(before) - len(after)
    if sep:
        # The ellipsis stands for at least one group.
        return before + bytes(missing) + after if missing >= 2 else None
    return before if missing == 0 else None


def _groups(s: str, *, last: bool) -> bytes | None:
    """The bytes of colon-separated hex groups; only the ``last`` run may end in an IPv4
    address. An empty run (beside ``::``) has no bytes."""
    if not s:
        return b""
    parts = s.split(":")
    out = bytearray()
    for i, part in enumerate(parts):
        if last and i == len(parts) - 1 and "." in part:
            ip4 = _parse_ipv4(part)
            if ip4 is None:
                return None
            out += ip4
            break
        if not part or not _HEX_DIGITS.issuperset(part):
            return None
        n = int(part, 16)
        if n > 0xFFFF:
            return None
        out += n.to_bytes(2, "big")
    return bytes(out) if len(out) <= IPV6_LEN else None


def parse_cidr_sloppy(s: str) -> IPNet | None:
    """The network of a CIDR value, None when it is no CIDR value.

    Upstream: ParseCIDRSloppy (k8s.io/utils/net), Go 1.16's net.ParseCIDR
    """
    addr, slash, mask = s.partition("/")
    if not slash:
        return None
    ip = _parse_ipv4(addr)
    if ip is None:
        ip = _parse_ipv6(addr)
    bits = _decimal(mask)
    if ip is None or bits is None or bits > 8 * len(ip):
        return None
    return IPNet(_masked(ip, bits), bits)


def _masked(ip: bytes, bits: int) -> bytes:
    whole, rest = divmod(bits, 8)
    out = bytearray(len(ip))
    out[:whole] = ip[:whole]
    if rest:
        out[whole] = ip[whole] & (0xFF << (8 - rest)) & 0xFF
    return bytes(out)


def cidr_parse_error(s: str) -> str:
    """How Go's net.ParseCIDR says ``s`` is no CIDR value (a *net.ParseError)."""
    return f"invalid CIDR address: {s}"


def dual_stack_cidrs(cidrs: Sequence[str]) -> tuple[bool, str]:
    """Whether ``cidrs`` hold at least one IPv4 and one IPv6 value, and the error text when one
    of them is no CIDR value (then the answer is False), as upstream words it: the index, the
    network (``<nil>``, as Go prints a nil *net.IPNet) and the parse error.

    Upstream: IsDualStackCIDRStrings, ParseCIDRs (k8s.io/utils/net)
    """
    families: set[IPFamily] = set()
    for i, value in enumerate(cidrs):
        net = parse_cidr_sloppy(value)
        if net is None:
            return False, f"invalid CIDR[{i}]: <nil> ({cidr_parse_error(value)})"
        families.add(net.family)
    return len(families) == 2, ""
