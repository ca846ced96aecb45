"""A pod's ``spec.volumes`` as the API server validates them on create: one source per volume,
names that are DNS labels and unique, a claim name for a PersistentVolumeClaim source, and the
names of the claims that generic ephemeral volumes create.

The first source's own fields are checked by ``volume_source_legacy`` (an ephemeral volume's
claim template, the legacy in-tree sources) and ``volume_source_validation`` (the others, and
the parts that stay unchecked).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import msgspec

from topospread.api.field import (
    FieldError,
    Path,
    duplicate,
    forbidden,
    go_quote,
    invalid,
    required,
)
from topospread.api.meta_validation import name_is_dns_subdomain, name_is_valid_dns_subdomain
from topospread.api.volume_source_legacy import CHECKED_SOURCES, source_errors
from topospread.api.volumes import VOLUME_SOURCES, Volume
from topospread.util.validation import is_dns1123_label, valid_dns1123_label

MORE_THAN_ONE_TYPE: Final = "may not specify more than 1 volume type"
NO_TYPE: Final = "must specify a volume type"
CREATED_PVC: Final = "must not reference a PVC that gets created for an ephemeral volume"
ISCSI_NAME_TOO_LONG: Final = (
    "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
    "iscsi.initiatorName is specified."
)

_astuple: Final = msgspec.structs.astuple


def validate_volumes(volumes: Sequence[Volume], pod_name: str, path: Path) -> list[FieldError]:
    """The errors of a pod's volumes at ``path`` (``spec.volumes``). ``pod_name``: the pod's
    name, "" for a pod template (the API server passes a template no pod metadata), which
    skips the checks of the claims ephemeral volumes create.

    Upstream: ValidateVolumes, validateVolumeSource (pkg/apis/core/validation/validation.go,
    v1.35)
    """
    errs: list[FieldError] = []
    seen: set[str] = set()
    created = _created_claims(volumes, pod_name)
    for i, vol in enumerate(volumes):
        at = path.index(i)
        name_path = at.child("name")
        found = _source_errors(vol, at, pod_name)
        if not vol.name:
            found.append(required(name_path))
        else:
            found.extend(invalid(name_path, vol.name, msg) for msg in is_dns1123_label(vol.name))
        if vol.name in seen:
            found.append(duplicate(name_path, vol.name))
        if found:
            errs += found
        else:
            seen.add(vol.name)
        claim = vol.persistent_volume_claim
        if claim is not None and claim.claim_name in created:
            errs.append(
                invalid(
                    at.child("persistentVolumeClaim").child("claimName"),
                    claim.claim_name,
                    CREATED_PVC,
                )
            )
    return errs


def _created_claims(volumes: Sequence[Volume], pod_name: str) -> set[str]:
    """The names of the claims the pod's ephemeral volumes create (none known without the
    pod's name)."""
    if not pod_name:
        return set()
    return {f"{pod_name}-{vol.name}" for vol in volumes if vol.ephemeral is not None}


def _source_errors(vol: Volume, at: Path, pod_name: str) -> list[FieldError]:
    """The first source given is the volume's type (and checked); every later one is one too
    many; none at all is an error too. An iSCSI source's initiator name limits the volume's
    name, whether it comes first or not."""
    errs: list[FieldError] = []
    first = ""
    for attr, child in VOLUME_SOURCES:
        if getattr(vol, attr) is None:
            continue
        if first:
            errs.append(forbidden(at.child(child), MORE_THAN_ONE_TYPE))
            if attr == "iscsi" and _iscsi_name_too_long(vol):
                errs.append(invalid(at.child("name"), vol.name, ISCSI_NAME_TOO_LONG))
            continue
        first = attr
        errs += source_errors(attr, getattr(vol, attr), at, bool(pod_name))
        claim = vol.persistent_volume_claim
        if attr == "persistent_volume_claim" and claim is not None and not claim.claim_name:
            errs.append(required(at.child(child).child("claimName")))
        elif attr == "ephemeral" and pod_name and vol.name:
            claim_name = f"{pod_name}-{vol.name}"
            errs.extend(
                invalid(at.child("name"), vol.name, f"PVC name {go_quote(claim_name)}: {msg}")
                for msg in name_is_dns_subdomain(claim_name, False)
            )
        elif attr == "iscsi" and _iscsi_name_too_long(vol):
            errs.append(invalid(at.child("name"), vol.name, ISCSI_NAME_TOO_LONG))
    if not first:
        errs.append(required(at, NO_TYPE))
    return errs


def _iscsi_name_too_long(vol: Volume) -> bool:
    """``<volume name>:<target portal>`` longer than 64 characters (bytes, as Go counts) when
    the source names an initiator."""
    iscsi = vol.iscsi
    return (
        iscsi is not None
        and iscsi.initiator_name is not None
        and len(f"{vol.name}:{iscsi.target_portal}".encode()) > 64
    )


def volumes_valid(volumes: Sequence[Volume], pod_name: str) -> bool:
    """Whether ``validate_volumes(volumes, pod_name, ...)`` is empty, found without building
    a path or a message.

    NOTE: a Volume's fields are its name (a string, never None) and its sources, so exactly
    one source is given when ``_NONES_OF_ONE_SOURCE`` of its fields are None.
    """
    seen: set[str] = set()
    ephemeral = False
    for_pod = bool(pod_name)
    for vol in volumes:
        name = vol.name
        values = _astuple(vol)
        if (
            values.count(None) != _NONES_OF_ONE_SOURCE
            or name in seen
            or not valid_dns1123_label(name)  # an empty name too
        ):
            return False
        seen.add(name)
        source: object = vol.projected
        attr = "projected"
        if source is None:
            attr, source = _the_source(values)
        if attr in CHECKED_SOURCES and not source_valid(attr, source, for_pod):
            return False
        claim = vol.persistent_volume_claim
        if claim is not None and not claim.claim_name:
            return False
        if attr == "iscsi" and _iscsi_name_too_long(vol):
            return False
        if vol.ephemeral is not None:
            ephemeral = True
            if pod_name and not name_is_valid_dns_subdomain(f"{pod_name}-{name}", False):
                return False
    if ephemeral and pod_name:
        created = _created_claims(volumes, pod_name)
        for vol in volumes:
            claim = vol.persistent_volume_claim
            if claim is not None and claim.claim_name in created:
                return False
    return True


_NONES_OF_ONE_SOURCE: Final = len(VOLUME_SOURCES) - 1
_FIELDS: Final = Volume.__struct_fields__


def _the_source(values: tuple[object, ...]) -> tuple[str, object]:
    """The attribute and value of a volume's one source, from its fields' values."""
    for attr, value in zip(_FIELDS, values, strict=True):
        if value is not None and attr != "name":
            return attr, value
    return "", None


_ROOT: Final = Path.root("v")
_CACHE_LIMIT: Final = 1 << 12
_VALID: dict[tuple[str, Any, bool], bool] = {}


def source_valid(attr: str, source: Any, for_pod: bool) -> bool:
    """Whether ``source_errors(attr, source, ...)`` is empty.

    NOTE: the sources are frozen values, so the verdict is cached on the source itself: the
    pods of a workload carry equal ones, and every pod read from a cluster an equal
    kube-api-access projected source (its name is the volume's, not the source's). A source
    holding a map (unhashable) is checked each time. Equal sources of the kinds pods repeat
    are one object (``volumes.shared_source``), which the lookup finds equal by identity
    after hashing it (0.2 us a kube-api-access source, against 1.2 us to hash and compare a
    pod's own copy; a cache by identity as well saved under 0.1 us more). The verdict says
    nothing of where the source is: the messages, built only for an invalid source, are
    given the volume's own path.
    """
    key = (attr, source, for_pod)
    try:
        return _VALID[key]
    except KeyError:
        pass
    except TypeError:
        return not source_errors(attr, source, _ROOT, for_pod)
    valid = not source_errors(attr, source, _ROOT, for_pod)
    if len(_VALID) >= _CACHE_LIMIT:
        _VALID.clear()
    _VALID[key] = valid
    return valid
