"""A node's pod CIDRs as the API server reads and validates them on create (v1.35).

The API server's internal Node has one field, ``podCIDRs``; the v1 ``podCIDR`` exists only on
the wire. Converting a v1 Node, ``podCIDR`` wins when both are given and differ from
``podCIDRs[0]`` (for older clients): the list becomes ``[podCIDR]``, its other entries dropped;
``podCIDR`` alone becomes the list. So every error names ``spec.podCIDRs``, even for a node that
only set ``podCIDR``, and the node is stored with ``podCIDR`` = ``podCIDRs[0]``.

Each entry is checked as a "legacy" CIDR field: with the StrictIPCIDRValidation feature gate off,
as in v1.35 (alpha since 1.33, default off), that is only whether k8s.io/utils/net's sloppy
parser reads it (leading zeros, IPv4-mapped IPv6 addresses and bits beyond the prefix pass).
More than one entry must be a dual-stack pair: one IPv4 and one IPv6 value, no more than two.

Upstream: ValidateNode (pkg/apis/core/validation/validation.go),
Convert_v1_NodeSpec_To_core_NodeSpec and Convert_core_NodeSpec_To_v1_NodeSpec
(pkg/apis/core/v1/conversion.go), IsValidCIDRForLegacyField
(k8s.io/apimachinery/pkg/util/validation/ip.go), v1.35.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from topospread.api.field import FieldError, GoJSON, Path, internal_error, invalid
from topospread.api.types import NodeSpec
from topospread.util.net import dual_stack_cidrs, parse_cidr_sloppy

INVALID_CIDR: Final = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
ONE_CIDR_PER_FAMILY: Final = "may specify no more than one CIDR for each IP family"
_POD_CIDRS: Final = Path.root("spec", "podCIDRs")


def node_pod_cidrs(spec: NodeSpec) -> list[str]:
    """The internal Node's ``podCIDRs``: what validation sees and what is stored.

    Upstream: Convert_v1_NodeSpec_To_core_NodeSpec (pkg/apis/core/v1/conversion.go, v1.35)
    """
    if spec.pod_cidr and (not spec.pod_cidrs or spec.pod_cidrs[0] != spec.pod_cidr):
        return [spec.pod_cidr]
    return spec.pod_cidrs


def validate_cidr_for_legacy_field(path: Path, value: str) -> list[FieldError]:
    """A CIDR value in a field that predates strict IP validation, with the gate off.

    Upstream: IsValidCIDRForLegacyField (k8s.io/apimachinery/pkg/util/validation/ip.go, v1.35)
    with strictValidation false (the StrictIPCIDRValidation gate's v1.35 default)
    """
    return [] if parse_cidr_sloppy(value) is not None else [invalid(path, value, INVALID_CIDR)]


def validate_pod_cidrs(cidrs: Sequence[str]) -> list[FieldError]:
    """Each entry a CIDR value; more than one a dual-stack pair. An entry that is no CIDR value
    also makes the dual-stack check fail, with an internal error and the pair's error after
    the entry's own.

    Upstream: ValidateNode's podCIDRs checks (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    for i, value in enumerate(cidrs):
        errs += validate_cidr_for_legacy_field(_POD_CIDRS.index(i), value)
    if len(cidrs) > 1:
        dual_stack, problem = dual_stack_cidrs(cidrs)
        if problem:
            errs.append(
                internal_error(
                    _POD_CIDRS,
                    f"invalid PodCIDRs. failed to check with dual stack with error:{problem}",
                )
            )
        if not dual_stack or len(cidrs) > 2:
            errs.append(invalid(_POD_CIDRS, GoJSON(list(cidrs)), ONE_CIDR_PER_FAMILY))
    return errs
