"""Each volume source's own fields as the API server validates them on create (with the default
feature gates): hostPath, emptyDir, secret, configMap, downwardAPI, projected, NFS, CSI and
image, and the attachable disks GCE PD, AWS EBS and RBD. The paths keep upstream's own
spellings, slips included (a GCE PD's errors under ``persistentDisk``, a downwardAPI item's
under the source, not ``items[i]``; a projected token's path under ``projected.path``).

A generic ephemeral volume's claim template and the other in-tree sources (iSCSI, Cinder and
Azure Disk among them) are checked in ``volume_source_legacy``, whose ``source_errors`` covers
every source. A projected podCertificate is not read (``volumes.VolumeProjection``): the API
server drops it before validation under the v1.35 default gates, and a projection source left
empty is accepted (validateProjectionSources refuses only two or more sources in one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from topospread.api.certificate_names import (
    cluster_trust_bundle_name_errors,
    validate_signer_name,
)
from topospread.api.field import (
    FieldError,
    GoJSON,
    Path,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
)
from topospread.api.meta_validation import validate_label_selector
from topospread.api.resource import QuantityError, parse_quantity
from topospread.api.volumes import (
    AWSElasticBlockStoreVolumeSource,
    ConfigMapVolumeSource,
    CSIVolumeSource,
    DownwardAPIVolumeFile,
    DownwardAPIVolumeSource,
    EmptyDirVolumeSource,
    GCEPersistentDiskVolumeSource,
    HostPathVolumeSource,
    ImageVolumeSource,
    KeyToPath,
    NFSVolumeSource,
    ObjectFieldSelector,
    ProjectedVolumeSource,
    RBDVolumeSource,
    ResourceFieldSelector,
    SecretVolumeSource,
)
from topospread.util.validation import (
    inclusive_range_error,
    is_dns1123_subdomain,
    is_qualified_name,
)

FILE_MODE_ERROR: Final = "must be a number between 0 and 0777 (octal), both inclusive"
PD_PARTITION_ERROR: Final = inclusive_range_error(1, 255)
DUPLICATE_PATHS: Final = "conflicting duplicate paths"
MORE_THAN_ONE_PER_SOURCE: Final = "may not specify more than 1 volume type per source"
SIZE_LIMIT_ERROR: Final = "SizeLimit field must be a valid resource quantity"
_MAX_MODE: Final = 0o777

HOST_PATH_TYPES: Final = (
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
)
_HOST_PATH_TYPES: Final = frozenset(HOST_PATH_TYPES)
PULL_POLICIES: Final = ("Always", "IfNotPresent", "Never")

# The fields a downward API volume file may name (sorted, as the API server lists them).
VOLUME_FIELD_PATHS: Final = (
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
)
# What ConvertDownwardAPIFieldLabel accepts for a v1 pod (``spec.host``: ``spec.nodeName``).
_CONVERTIBLE_FIELD_PATHS: Final = frozenset(
    {
        *VOLUME_FIELD_PATHS,
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.serviceAccountName",
        "spec.schedulerName",
        "status.phase",
        "status.hostIP",
        "status.hostIPs",
        "status.podIP",
        "status.podIPs",
    }
)
RESOURCE_FIELD_PATHS: Final = (
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
)
_HUGEPAGES_PREFIXES: Final = ("requests.hugepages-", "limits.hugepages-")
_BYTE_DIVISORS: Final = frozenset(
    ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
)
_BYTE_DIVISOR_LIST: Final = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"


def _bad_mode(mode: int | None) -> bool:
    return mode is not None and (mode > _MAX_MODE or mode < 0)


def validate_path_no_backsteps(target: str, path: Path) -> list[FieldError]:
    """Upstream: validatePathNoBacksteps (pkg/apis/core/validation/validation.go, v1.35)"""
    if ".." in target.split("/"):
        return [invalid(path, target, "must not contain '..'")]
    return []


def validate_local_descending_path(target: str, path: Path) -> list[FieldError]:
    """Upstream: validateLocalDescendingPath (pkg/apis/core/validation/validation.go, v1.35)"""
    errs = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    return errs + validate_path_no_backsteps(target, path)


def validate_local_non_reserved_path(target: str, path: Path) -> list[FieldError]:
    """Upstream: ValidateLocalNonReservedPath (pkg/apis/core/validation/validation.go, v1.35)"""
    errs = validate_local_descending_path(target, path)
    if target.startswith("..") and not target.startswith("../"):
        errs.append(invalid(path, target, "must not start with '..'"))
    return errs


def validate_key_to_path(kp: KeyToPath, path: Path) -> list[FieldError]:
    """Upstream: validateKeyToPath (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    if not kp.key:
        errs.append(required(path.child("key")))
    if not kp.path:
        errs.append(required(path.child("path")))
    errs += validate_local_non_reserved_path(kp.path, path.child("path"))
    if kp.mode is not None and _bad_mode(kp.mode):
        errs.append(invalid(path.child("mode"), kp.mode, FILE_MODE_ERROR))
    return errs


def _items_and_mode(items: Sequence[KeyToPath], mode: int | None, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if mode is not None and _bad_mode(mode):
        errs.append(invalid(path.child("defaultMode"), mode, FILE_MODE_ERROR))
    items_path = path.child("items")
    for i, kp in enumerate(items):
        errs += validate_key_to_path(kp, items_path.index(i))
    return errs


def _split_subscript(field_path: str) -> tuple[str, str] | None:
    """``metadata.labels['app']`` -> (``metadata.labels``, ``app``).

    Upstream: SplitMaybeSubscriptedPath (pkg/fieldpath/fieldpath.go, v1.35)
    """
    if not field_path.endswith("']"):
        return None
    head, sep, subscript = field_path[:-2].partition("['")
    if not sep or not head:
        return None
    return head, subscript


def _convert_field_label(api_version: str, label: str) -> tuple[str, str]:
    """(the internal field path, "") or ("", the conversion error).

    Upstream: ConvertDownwardAPIFieldLabel (pkg/apis/core/pods/helpers.go, v1.35)
    """
    if api_version != "v1":
        return "", f"unsupported pod version: {api_version}"
    split = _split_subscript(label)
    if split is not None:
        if split[0] in ("metadata.annotations", "metadata.labels"):
            return label, ""
        return "", f"field label does not support subscript: {label}"
    if label == "spec.host":
        return "spec.nodeName", ""
    if label in _CONVERTIBLE_FIELD_PATHS:
        return label, ""
    return "", f"field label not supported: {label}"


def validate_object_field_selector(fs: ObjectFieldSelector, path: Path) -> list[FieldError]:
    """A downward API volume file's fieldRef.

    Upstream: validateObjectFieldSelector (pkg/apis/core/validation/validation.go, v1.35)
    """
    # An empty apiVersion is defaulted to "v1" (SetDefaults_ObjectFieldSelector) before
    # validation, so the API server never finds it missing.
    api_version = fs.api_version or "v1"
    if not fs.field_path:
        return [required(path.child("fieldPath"))]
    internal, err = _convert_field_label(api_version, fs.field_path)
    if err:
        return [
            invalid(path.child("fieldPath"), fs.field_path, f"error converting fieldPath: {err}")
        ]
    split = _split_subscript(internal)
    if split is not None:
        head, subscript = split
        key = subscript.lower() if head == "metadata.annotations" else subscript
        return [invalid(path, subscript, msg) for msg in is_qualified_name(key)]
    if internal not in VOLUME_FIELD_PATHS:
        return [not_supported(path.child("fieldPath"), internal, VOLUME_FIELD_PATHS)]
    return []


def _divisor_errors(
    resource: str, divisor: str | int | float | None, path: Path
) -> list[FieldError]:
    """Upstream: validateContainerResourceDivisor (pkg/apis/core/validation/validation.go, v1.35)"""
    try:
        quantity = parse_quantity(divisor)
    except QuantityError:
        return []  # refused by the decoder already
    if quantity.is_zero():
        return []
    text = str(quantity)
    if resource in ("limits.cpu", "requests.cpu"):
        if text not in ("1m", "1"):
            msg = "only divisor's values 1m and 1 are supported with the cpu resource"
            return [invalid(path.child("divisor"), resource, msg)]
        return []
    if resource in ("limits.memory", "requests.memory"):
        kind = "memory"
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage"):
        kind = "local ephemeral storage"
    elif resource.startswith(_HUGEPAGES_PREFIXES):
        kind = "hugepages"
    else:
        return []
    if text in _BYTE_DIVISORS:
        return []
    msg = f"only divisor's values {_BYTE_DIVISOR_LIST} are supported with the {kind} resource"
    return [invalid(path.child("divisor"), resource, msg)]


def validate_resource_field_selector(fs: ResourceFieldSelector, path: Path) -> list[FieldError]:
    """A downward API volume file's resourceFieldRef (a volume's: a container name is needed).

    Upstream: validateContainerResourceFieldSelector (pkg/apis/core/validation/validation.go,
    v1.35)
    """
    errs: list[FieldError] = []
    if not fs.container_name:
        errs.append(required(path.child("containerName")))
    elif not fs.resource:
        errs.append(required(path.child("resource")))
    elif fs.resource not in RESOURCE_FIELD_PATHS and not fs.resource.startswith(
        _HUGEPAGES_PREFIXES
    ):
        errs.append(not_supported(path.child("resource"), fs.resource, RESOURCE_FIELD_PATHS))
    return errs + _divisor_errors(fs.resource, fs.divisor, path)


def validate_downward_api_volume_file(file: DownwardAPIVolumeFile, path: Path) -> list[FieldError]:
    """``path``: the source's path (upstream passes no item index).

    Upstream: validateDownwardAPIVolumeFile (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    if not file.path:
        errs.append(required(path.child("path")))
    errs += validate_local_non_reserved_path(file.path, path.child("path"))
    if file.field_ref is not None:
        errs += validate_object_field_selector(file.field_ref, path.child("fieldRef"))
        if file.resource_field_ref is not None:
            errs.append(
                invalid(
                    path,
                    "resource",
                    "fieldRef and resourceFieldRef can not be specified simultaneously",
                )
            )
    elif file.resource_field_ref is not None:
        errs += validate_resource_field_selector(
            file.resource_field_ref, path.child("resourceFieldRef")
        )
    else:
        errs.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    if file.mode is not None and _bad_mode(file.mode):
        errs.append(invalid(path.child("mode"), file.mode, FILE_MODE_ERROR))
    return errs


def _path_seen(seen: set[str], file_path: str) -> bool:
    if file_path in seen:
        return True
    seen.add(file_path)
    return False


def validate_projected(projected: ProjectedVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateProjectedVolumeSource, validateProjectionSources
    (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs: list[FieldError] = []
    if _bad_mode(projected.default_mode):
        errs.append(invalid(path.child("defaultMode"), projected.default_mode, FILE_MODE_ERROR))
    seen: set[str] = set()
    sources_path = path.child("sources")
    for i, source in enumerate(projected.sources):
        count = 0
        at = sources_path.index(i)
        for ref, child in ((source.secret, "secret"), (source.config_map, "configMap")):
            if ref is None:
                continue
            count += 1
            proj = at.child(child)
            if not ref.name:
                errs.append(required(proj.child("name")))
            items_path = proj.child("items")
            for j, kp in enumerate(ref.items):
                errs += validate_key_to_path(kp, items_path.index(j))
                if kp.path and _path_seen(seen, kp.path):
                    errs.append(invalid(path, ref.name, DUPLICATE_PATHS))
        if source.downward_api is not None:
            count += 1
            proj = at.child("downwardAPI")
            for file in source.downward_api.items:
                errs += validate_downward_api_volume_file(file, proj)
                if file.path and _path_seen(seen, file.path):
                    errs.append(invalid(path, file.path, DUPLICATE_PATHS))
        token = source.service_account_token
        if token is not None:
            count += 1
            proj = at.child("serviceAccountToken")
            seconds = 3600 if token.expiration_seconds is None else token.expiration_seconds
            if seconds < 10 * 60:
                errs.append(
                    invalid(
                        proj.child("expirationSeconds"),
                        seconds,
                        "may not specify a duration less than 10 minutes",
                    )
                )
            if seconds > 1 << 32:
                errs.append(
                    invalid(
                        proj.child("expirationSeconds"),
                        seconds,
                        "may not specify a duration larger than 2^32 seconds",
                    )
                )
            # NOTE: upstream reports the token's path at ``projected.path`` (sic).
            if not token.path:
                errs.append(required(path.child("path")))
            else:
                errs += validate_local_non_reserved_path(token.path, path.child("path"))
        bundle = source.cluster_trust_bundle
        if bundle is not None:
            count += 1
            proj = at.child("clusterTrustBundle")
            if bundle.name is not None and bundle.signer_name is not None:
                value = GoJSON(msgspec.to_builtins(bundle))
                errs.append(invalid(proj, value, "only one of name and signerName may be used"))
            elif bundle.name is not None:
                name_path = proj.child("name")
                if not bundle.name:
                    errs.append(required(name_path, "must be a valid object name"))
                errs += [
                    invalid(name_path, bundle.name, f"not a valid clustertrustbundlename: {msg}")
                    for msg in cluster_trust_bundle_name_errors(bundle.name)
                ]
                if bundle.label_selector is not None:
                    errs.append(
                        invalid(
                            proj.child("labelSelector"),
                            GoJSON(msgspec.to_builtins(bundle.label_selector)),
                            "labelSelector must be unset if name is specified",
                        )
                    )
            elif bundle.signer_name is not None:
                signer_path = proj.child("signerName")
                if not bundle.signer_name:
                    errs.append(required(signer_path, "must be a valid signer name"))
                errs += validate_signer_name(signer_path, bundle.signer_name)
                errs += validate_label_selector(bundle.label_selector, proj.child("labelSelector"))
            else:
                errs.append(required(proj, "either name or signerName must be specified"))
            if not bundle.path:
                errs.append(required(proj.child("path")))
            errs += validate_local_non_reserved_path(bundle.path, proj.child("path"))
            if _path_seen(seen, bundle.path):
                errs.append(invalid(path, bundle.path, DUPLICATE_PATHS))
        if count > 1:
            errs.append(forbidden(at, MORE_THAN_ONE_PER_SOURCE))
    return errs


def _empty_dir(src: EmptyDirVolumeSource, path: Path) -> list[FieldError]:
    if src.size_limit is None:
        return []
    try:
        negative = parse_quantity(src.size_limit).sign() < 0
    except QuantityError:
        return []  # refused by the decoder already
    return [forbidden(path.child("sizeLimit"), SIZE_LIMIT_ERROR)] if negative else []


def _host_path(src: HostPathVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateHostPathVolumeSource, validateHostPathType (v1.35)"""
    if not src.path:
        return [required(path.child("path"))]
    errs = validate_path_no_backsteps(src.path, path.child("path"))
    if src.type is not None and src.type not in _HOST_PATH_TYPES:
        errs.append(not_supported(path.child("type"), GoJSON(src.type), HOST_PATH_TYPES))
    return errs


def _gce_pd(src: GCEPersistentDiskVolumeSource, path: Path) -> list[FieldError]:
    errs = [required(path.child("pdName"))] if not src.pd_name else []
    if src.partition < 0 or src.partition > 255:
        errs.append(invalid(path.child("partition"), src.partition, PD_PARTITION_ERROR))
    return errs


def _aws_ebs(src: AWSElasticBlockStoreVolumeSource, path: Path) -> list[FieldError]:
    errs = [required(path.child("volumeID"))] if not src.volume_id else []
    if src.partition < 0 or src.partition > 255:
        errs.append(invalid(path.child("partition"), src.partition, PD_PARTITION_ERROR))
    return errs


def _secret(src: SecretVolumeSource, path: Path) -> list[FieldError]:
    errs = [required(path.child("secretName"))] if not src.secret_name else []
    return errs + _items_and_mode(src.items, src.default_mode, path)


def _config_map(src: ConfigMapVolumeSource, path: Path) -> list[FieldError]:
    errs = [required(path.child("name"))] if not src.name else []
    return errs + _items_and_mode(src.items, src.default_mode, path)


def _nfs(src: NFSVolumeSource, path: Path) -> list[FieldError]:
    errs: list[FieldError] = []
    if not src.server:
        errs.append(required(path.child("server")))
    if not src.path:
        errs.append(required(path.child("path")))
    if not src.path.startswith("/"):
        errs.append(invalid(path.child("path"), src.path, "must be an absolute path"))
    return errs


def _rbd(src: RBDVolumeSource, path: Path) -> list[FieldError]:
    errs = [required(path.child("monitors"))] if not src.monitors else []
    return errs + ([required(path.child("image"))] if not src.image else [])


def validate_csi_driver_name(driver: str, path: Path) -> list[FieldError]:
    """Upstream: ValidateCSIDriverName (pkg/apis/core/validation/validation.go, v1.35)"""
    errs = [required(path)] if not driver else []
    if len(driver) > 63:
        errs.append(too_long(path, 63))
    errs += [invalid(path, driver, msg) for msg in is_dns1123_subdomain(driver.lower())]
    return errs


def _csi(src: CSIVolumeSource, path: Path) -> list[FieldError]:
    errs = validate_csi_driver_name(src.driver, path.child("driver"))
    ref = src.node_publish_secret_ref
    if ref is not None:
        if not ref.name:
            errs.append(required(path.child("nodePublishSecretRef", "name")))
        else:
            # NOTE: upstream reports a bad secret name at ``csi.name`` (sic).
            errs += [
                invalid(path.child("name"), ref.name, m) for m in is_dns1123_subdomain(ref.name)
            ]
    return errs


def _image(src: ImageVolumeSource, path: Path, for_pod: bool) -> list[FieldError]:
    """A template may leave the reference to be filled in later; an empty pull policy is
    defaulted by the API server.

    Upstream: validateImageVolumeSource (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs = [required(path.child("reference"))] if for_pod and not src.reference else []
    if src.pull_policy and src.pull_policy not in PULL_POLICIES:
        errs.append(not_supported(path.child("pullPolicy"), GoJSON(src.pull_policy), PULL_POLICIES))
    return errs


def _downward_api(src: DownwardAPIVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateDownwardAPIVolumeSource (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    if _bad_mode(src.default_mode):
        errs.append(invalid(path.child("defaultMode"), src.default_mode, FILE_MODE_ERROR))
    for file in src.items:
        errs += validate_downward_api_volume_file(file, path)
    return errs


_Check = Callable[[Any, Path], list[FieldError]]

# The checks of the first source given (by Volume attribute) and the child path each reports
# under where it differs from the source's own (GCE PD: ``persistentDisk``, downwardAPI: its
# JSON name where the "more than one" check writes ``downwarAPI``).
SOURCE_CHECKS: Final[dict[str, tuple[_Check, str]]] = {
    "empty_dir": (_empty_dir, "emptyDir"),
    "host_path": (_host_path, "hostPath"),
    "gce_persistent_disk": (_gce_pd, "persistentDisk"),
    "aws_elastic_block_store": (_aws_ebs, "awsElasticBlockStore"),
    "secret": (_secret, "secret"),
    "nfs": (_nfs, "nfs"),
    "rbd": (_rbd, "rbd"),
    "downward_api": (_downward_api, "downwardAPI"),
    "config_map": (_config_map, "configMap"),
    "projected": (validate_projected, "projected"),
    "csi": (_csi, "csi"),
}


# Every source whose contents are checked.
CHECKED_SOURCES: Final = frozenset((*SOURCE_CHECKS, "image"))


def source_errors(attr: str, source: Any, at: Path, for_pod: bool) -> list[FieldError]:
    """The errors of a volume's first source ``source`` (the Volume attribute ``attr``), the
    volume at ``at``. ``for_pod``: a pod's volume rather than a template's."""
    if attr == "image":
        return _image(source, at.child("image"), for_pod)
    check = SOURCE_CHECKS.get(attr)
    if check is None:
        return []
    fn, child = check
    return fn(source, at.child(child))
