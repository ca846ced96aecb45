"""The names certificates.k8s.io gives: a signer's (``example.com/signer-name``) and a
ClusterTrustBundle's (``example.com:signer-name:suffix`` when linked to a signer), as a projected
clusterTrustBundle volume source names them.
"""

from __future__ import annotations

from typing import Final

from topospread.api.field import FieldError, Path, go_quote, invalid, required, too_long
from topospread.api.meta_validation import name_is_dns_subdomain
from topospread.util.validation import (
    DNS1123_LABEL_MAX_LENGTH,
    DNS1123_SUBDOMAIN_MAX_LENGTH,
    is_dns1123_label,
    is_dns1123_subdomain,
)

SIGNER_NAME_FORM: Final = (
    "must be a fully qualified domain and path of the form 'example.com/signer-name'"
)
# The path may hold a DNS label, a dot and a DNS subdomain; the whole name, a domain, a slash and
# that path.
_MAX_PATH_LENGTH: Final = DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 1
_MAX_SIGNER_NAME_LENGTH: Final = DNS1123_SUBDOMAIN_MAX_LENGTH + _MAX_PATH_LENGTH + 1


def validate_signer_name(path: Path, signer_name: str) -> list[FieldError]:
    """A domain of DNS labels (two at least), a slash, a path of dot-separated DNS subdomains;
    only the first bad label of each part is told (the rest would say the same).

    Upstream: ValidateSignerName (pkg/apis/certificates/validation/validation.go, v1.35)
    """
    if not signer_name:
        return [required(path)]
    segments = signer_name.split("/")
    if len(segments) != 2:
        return [invalid(path, signer_name, SIGNER_NAME_FORM)]
    domain, rest = segments
    errs: list[FieldError] = []
    if len(domain.encode()) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(too_long(path, DNS1123_SUBDOMAIN_MAX_LENGTH))
    labels = domain.split(".")
    for label in labels:
        msgs = is_dns1123_label(label)
        if msgs:
            errs += [invalid(path, domain, _label_detail(label, m)) for m in msgs]
            break
    if len(labels) < 2:
        detail = "should be a domain with at least two segments separated by dots"
        errs.append(invalid(path, domain, detail))
    for label in rest.split("."):
        msgs = is_dns1123_subdomain(label)
        if msgs:
            errs += [invalid(path, rest, _label_detail(label, m)) for m in msgs]
            break
    if len(signer_name.encode()) > _MAX_SIGNER_NAME_LENGTH:
        errs.append(too_long(path, _MAX_SIGNER_NAME_LENGTH))
    return errs


def _label_detail(label: str, msg: str) -> str:
    return f"validating label {go_quote(label)}: {msg}"


def cluster_trust_bundle_name_errors(name: str) -> list[str]:
    """A bundle's name: the signer it names (the part before its last colon, colons read as
    slashes) as its prefix, then a DNS subdomain; with no signer, no colon at all.

    Upstream: extractSignerNameFromClusterTrustBundleName and ValidateClusterTrustBundleName
    (pkg/apis/core/validation, v1.35)
    """
    colon = name.rfind(":")
    signer = name[:colon].replace(":", "/") if colon >= 0 else ""
    if not signer:
        if ":" in name:
            return ['ClusterTrustBundle without signer name must not have ":" in its name']
        return name_is_dns_subdomain(name, False)
    prefix = signer.replace("/", ":") + ":"
    if not name.startswith(prefix):  # never, as the signer was read from the name
        return [f"ClusterTrustBundle for signerName {signer} must be named with prefix {prefix}"]
    return name_is_dns_subdomain(name[len(prefix) :], False)
