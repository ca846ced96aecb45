"""The volume sources ``volume_source_validation`` leaves out, validated as the API server does on
create: a generic ephemeral volume's claim template, and the in-tree plugins' sources (gitRepo,
glusterfs, flocker, cephfs, quobyte, fc, flexVolume, azureFile, vsphereVolume,
photonPersistentDisk, portworxVolume, storageos, scaleIO; iSCSI with its name formats, Cinder,
Azure Disk with its kind and URI): their required fields and formats.

``source_errors`` and ``CHECKED_SOURCES`` here cover every source (those of
``volume_source_validation`` too): the pod's volume validation reads them from this module.
The paths keep upstream's spellings (a CephFS source's errors under ``cephfs``, where the
"more than one" check writes ``cephFS``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from topospread.api.claim_spec import EphemeralVolumeSource
from topospread.api.claim_validation import validate_claim_template
from topospread.api.field import FieldError, GoJSON, Path, invalid, not_supported, required
from topospread.api.volume_source_validation import CHECKED_SOURCES as _CHECKED_BEFORE
from topospread.api.volume_source_validation import source_errors as _source_errors_before
from topospread.api.volume_source_validation import validate_local_descending_path
from topospread.api.volumes import (
    AzureDiskVolumeSource,
    AzureFileVolumeSource,
    CephFSVolumeSource,
    CinderVolumeSource,
    FCVolumeSource,
    FlexVolumeSource,
    FlockerVolumeSource,
    GitRepoVolumeSource,
    GlusterfsVolumeSource,
    ISCSIVolumeSource,
    PhotonPersistentDiskVolumeSource,
    PortworxVolumeSource,
    QuobyteVolumeSource,
    ScaleIOVolumeSource,
    StorageOSVolumeSource,
    VsphereVirtualDiskVolumeSource,
)
from topospread.util.validation import inclusive_range_error, is_dns1123_label

HOST_PORT_PAIRS: Final = "must be a host:port pair or multiple pairs separated by commas"
RESERVED_OPTIONS: Final = "kubernetes.io and k8s.io namespaces are reserved"


def _ephemeral(src: EphemeralVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateEphemeralVolumeSource (pkg/apis/core/validation/validation.go, v1.35)"""
    template = src.volume_claim_template
    if template is None:
        return [required(path.child("volumeClaimTemplate"))]
    return validate_claim_template(template, path.child("volumeClaimTemplate"))


def _git_repo(src: GitRepoVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateGitRepoVolumeSource (v1.35)"""
    errs = [required(path.child("repository"))] if not src.repository else []
    return errs + validate_local_descending_path(src.directory, path.child("directory"))


def _glusterfs(src: GlusterfsVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateGlusterfsVolumeSource (v1.35)"""
    errs = [required(path.child("endpoints"))] if not src.endpoints else []
    return errs + ([required(path.child("path"))] if not src.path else [])


def _flocker(src: FlockerVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateFlockerVolumeSource (v1.35)"""
    errs: list[FieldError] = []
    if not src.dataset_name and not src.dataset_uuid:
        errs.append(required(path, "one of datasetName and datasetUUID is required"))
    if src.dataset_name and src.dataset_uuid:
        detail = "datasetName and datasetUUID can not be specified simultaneously"
        errs.append(invalid(path, "resource", detail))
    if "/" in src.dataset_name:
        errs.append(invalid(path.child("datasetName"), src.dataset_name, "must not contain '/'"))
    return errs


def _cephfs(src: CephFSVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateCephFSVolumeSource (v1.35)"""
    return [required(path.child("monitors"))] if not src.monitors else []


def split_host_port(hostport: str) -> bool:
    """Whether Go's ``net.SplitHostPort`` splits ``hostport`` without an error: a last colon;
    a bracketed host (``[::1]:80``) closed right before it; no other colon in a bare host; no
    stray bracket."""
    colon = hostport.rfind(":")
    if colon < 0:
        return False
    start = end = 0
    if hostport.startswith("["):
        close = hostport.find("]")
        if close < 0 or close + 1 != colon:
            return False
        start, end = 1, close + 1
    elif ":" in hostport[:colon]:
        return False
    return "[" not in hostport[start:] and "]" not in hostport[end:]


def _quobyte(src: QuobyteVolumeSource, path: Path) -> list[FieldError]:
    """One error per registry entry that is not a host:port pair.

    Upstream: validateQuobyteVolumeSource (v1.35)
    """
    errs: list[FieldError] = []
    registry = path.child("registry")
    if not src.registry:
        errs.append(required(registry, HOST_PORT_PAIRS))
    elif len(src.tenant) >= 65:
        detail = "must be a UUID and may not exceed a length of 64 characters"
        errs.append(required(path.child("tenant"), detail))
    else:
        errs.extend(
            invalid(registry, src.registry, HOST_PORT_PAIRS)
            for pair in src.registry.split(",")
            if not split_host_port(pair)
        )
    if not src.volume:
        errs.append(required(path.child("volume")))
    return errs


def _fc(src: FCVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateFCVolumeSource (v1.35)"""
    errs: list[FieldError] = []
    wwns = path.child("targetWWNs")
    if not src.target_wwns and not src.wwids:
        errs.append(required(wwns, "must specify either targetWWNs or wwids, but not both"))
    if src.target_wwns and src.wwids:
        detail = "targetWWNs and wwids can not be specified simultaneously"
        errs.append(invalid(wwns, GoJSON(list(src.target_wwns)), detail))
    if src.target_wwns:
        if src.lun is None:
            errs.append(required(path.child("lun"), "lun is required if targetWWNs is specified"))
        elif src.lun < 0 or src.lun > 255:
            errs.append(invalid(path.child("lun"), src.lun, inclusive_range_error(0, 255)))
    return errs


def _flex_volume(src: FlexVolumeSource, path: Path) -> list[FieldError]:
    """An option's key may not be in a kubernetes.io or k8s.io namespace (its part before a
    slash); keys in sorted order (Go's map order is random).

    Upstream: validateFlexVolumeSource (v1.35)
    """
    errs = [required(path.child("driver"))] if not src.driver else []
    options = path.child("options")
    for key in sorted(src.options):
        namespace = key.split("/", 1)[0]
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            errs.append(invalid(options.key(key), key, RESERVED_OPTIONS))
    return errs


def _azure_file(src: AzureFileVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateAzureFile (v1.35)"""
    errs = [required(path.child("secretName"))] if not src.secret_name else []
    return errs + ([required(path.child("shareName"))] if not src.share_name else [])


def _vsphere(src: VsphereVirtualDiskVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateVsphereVolumeSource (v1.35)"""
    return [required(path.child("volumePath"))] if not src.volume_path else []


def _photon(src: PhotonPersistentDiskVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validatePhotonPersistentDiskVolumeSource (v1.35)"""
    return [required(path.child("pdID"))] if not src.pd_id else []


def _portworx(src: PortworxVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validatePortworxVolumeSource (v1.35)"""
    return [required(path.child("volumeID"))] if not src.volume_id else []


def _storageos(src: StorageOSVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateStorageOSVolumeSource (v1.35)"""
    name = path.child("volumeName")
    if not src.volume_name:
        errs = [required(name)]
    else:
        errs = [invalid(name, src.volume_name, m) for m in is_dns1123_label(src.volume_name)]
    if src.volume_namespace:
        namespace = path.child("volumeNamespace")
        errs += [
            invalid(namespace, src.volume_namespace, m)
            for m in is_dns1123_label(src.volume_namespace)
        ]
    if src.secret_ref is not None and not src.secret_ref.name:
        errs.append(required(path.child("secretRef", "name")))
    return errs


def _scale_io(src: ScaleIOVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateScaleIOVolumeSource (v1.35)"""
    errs: list[FieldError] = []
    for value, child in ((src.gateway, "gateway"), (src.system, "system")):
        if not value:
            errs.append(required(path.child(child)))
    if not src.volume_name:
        errs.append(required(path.child("volumeName")))
    return errs


# An iSCSI qualified name, an EUI-64 or an NAA name (Go's RE2: ``\d``, ``[[:alnum:]]`` and
# ``\s`` are ASCII; ``$`` is the end of the text). The IQN's is not anchored at its start.
_IQN: Final = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([0-9A-Za-z.-]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI: Final = re.compile(r"eui.[0-9A-Za-z]{16}\Z")
_NAA: Final = re.compile(r"naa.[0-9A-Za-z]{32}\Z")
ISCSI_PREFIX_ERROR: Final = "must be valid format starting with iqn, eui, or naa"
ISCSI_FORMAT_ERROR: Final = "must be valid format"


def iscsi_name_valid(name: str) -> bool | None:
    """Whether an IQN or initiator name has its kind's format; None: none of the three
    prefixes (iqn, eui, naa)."""
    if name.startswith("iqn"):
        return _IQN.search(name) is not None
    if name.startswith("eui"):
        return _EUI.match(name) is not None
    if name.startswith("naa"):
        return _NAA.match(name) is not None
    return None


def _iscsi_name_errors(name: str, path: Path) -> list[FieldError]:
    """A pod's: one of the three prefixes, then that kind's format."""
    valid = iscsi_name_valid(name)
    if valid is None:
        return [invalid(path, name, ISCSI_PREFIX_ERROR)]
    return [] if valid else [invalid(path, name, ISCSI_FORMAT_ERROR)]


def _iscsi(src: ISCSIVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateISCSIVolumeSource (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    if not src.target_portal:
        errs.append(required(path.child("targetPortal")))
    if not src.iqn:
        errs.append(required(path.child("iqn")))
    else:
        errs += _iscsi_name_errors(src.iqn, path.child("iqn"))
    if src.lun < 0 or src.lun > 255:
        errs.append(invalid(path.child("lun"), src.lun, inclusive_range_error(0, 255)))
    if (src.chap_auth_discovery or src.chap_auth_session) and src.secret_ref is None:
        errs.append(required(path.child("secretRef")))
    if src.initiator_name is not None:
        # NOTE: upstream's path is ``initiatorname`` (sic), not the JSON ``initiatorName``.
        errs += _iscsi_name_errors(src.initiator_name, path.child("initiatorname"))
    return errs


def _cinder(src: CinderVolumeSource, path: Path) -> list[FieldError]:
    errs = [required(path.child("volumeID"))] if not src.volume_id else []
    if src.secret_ref is not None and not src.secret_ref.name:
        errs.append(required(path.child("secretRef", "name")))
    return errs


AZURE_CACHING_MODES: Final = ("None", "ReadOnly", "ReadWrite")
AZURE_DISK_KINDS: Final = ("Dedicated", "Managed", "Shared")
AZURE_MANAGED_URI: Final = (
    "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",
)
AZURE_BLOB_URI: Final = (
    "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd",
)


def _azure_disk(src: AzureDiskVolumeSource, path: Path) -> list[FieldError]:
    """A missing caching mode and kind are defaulted first (ReadWrite, Shared): a disk of no
    kind is a blob, whose URI is an https one.

    Upstream: validateAzureDisk (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs = [required(path.child("diskName"))] if not src.disk_name else []
    if not src.disk_uri:
        errs.append(required(path.child("diskURI")))
    mode = src.caching_mode
    if mode is not None and mode not in AZURE_CACHING_MODES:
        errs.append(not_supported(path.child("cachingMode"), mode, AZURE_CACHING_MODES))
    kind = "Shared" if src.kind is None else src.kind
    if kind not in AZURE_DISK_KINDS:
        errs.append(not_supported(path.child("kind"), kind, AZURE_DISK_KINDS))
    if kind == "Managed" and not src.disk_uri.startswith("/subscriptions/"):
        errs.append(not_supported(path.child("diskURI"), src.disk_uri, AZURE_MANAGED_URI))
    if kind != "Managed" and not src.disk_uri.startswith("https://"):
        errs.append(not_supported(path.child("diskURI"), src.disk_uri, AZURE_BLOB_URI))
    return errs


_Check = Callable[[Any, Path], list[FieldError]]

# The checks of the first source given (by Volume attribute) and the child path each reports
# under.
_CHECKS: Final[dict[str, tuple[_Check, str]]] = {
    "git_repo": (_git_repo, "gitRepo"),
    "glusterfs": (_glusterfs, "glusterfs"),
    "flocker": (_flocker, "flocker"),
    "cephfs": (_cephfs, "cephfs"),
    "quobyte": (_quobyte, "quobyte"),
    "fc": (_fc, "fc"),
    "flex_volume": (_flex_volume, "flexVolume"),
    "azure_file": (_azure_file, "azureFile"),
    "vsphere_volume": (_vsphere, "vsphereVolume"),
    "photon_persistent_disk": (_photon, "photonPersistentDisk"),
    "portworx_volume": (_portworx, "portworxVolume"),
    "storageos": (_storageos, "storageos"),
    "scale_io": (_scale_io, "scaleIO"),
    "ephemeral": (_ephemeral, "ephemeral"),
    "iscsi": (_iscsi, "iscsi"),
    "cinder": (_cinder, "cinder"),
    "azure_disk": (_azure_disk, "azureDisk"),
}

# Every source whose contents are checked, here or in volume_source_validation.
CHECKED_SOURCES: Final = frozenset((*_CHECKED_BEFORE, *_CHECKS))


def source_errors(attr: str, source: Any, at: Path, for_pod: bool) -> list[FieldError]:
    """The errors of a volume's first source ``source`` (the Volume attribute ``attr``), the
    volume at ``at``. ``for_pod``: a pod's volume rather than a template's."""
    check = _CHECKS.get(attr)
    if check is None:
        return _source_errors_before(attr, source, at, for_pod)
    fn, child = check
    return fn(source, at.child(child))
