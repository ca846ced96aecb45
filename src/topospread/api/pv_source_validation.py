"""A PersistentVolume's source as the API server validates it on create: exactly one source
(the first one given, in upstream's order, is the volume's type and has its own fields checked;
every later one is one too many; none at all is refused), and a local volume's node affinity.

The sources whose checks a PV shares with a pod's volumes are checked by the pod's validators
(``volume_source_legacy.source_errors``: hostPath, GCE PD, AWS EBS, NFS, RBD, Cinder and a PV's
secret namespace, Azure Disk, flocker, quobyte, cephfs, fc, vsphereVolume,
photonPersistentDisk, scaleIO, and flexVolume's driver and options); the PV's own variants are
here: CSI (driver, volume handle and secret references), iSCSI (the PV's IQN formats), local,
Portworx, and the pod's checks plus a namespace for glusterfs (its endpoints' namespace),
azureFile (its secret's namespace) and storageos (its secret reference's namespace). An iSCSI
PV with an initiator name also has the length of ``<PV name>:<targetPortal>`` checked (at
most 64 bytes), as a pod's iSCSI volume has its volume name's.
"""

from __future__ import annotations

from typing import Any, Final

from topospread.api.field import FieldError, Path, forbidden, invalid, required
from topospread.api.meta_validation import name_is_dns_label
from topospread.api.storage import (
    AzureFilePersistentVolumeSource,
    GlusterfsPersistentVolumeSource,
    PersistentVolumeSpec,
    StorageOSPersistentVolumeSource,
)
from topospread.api.volume_source_legacy import iscsi_name_valid, source_errors
from topospread.api.volume_source_validation import (
    validate_csi_driver_name,
    validate_path_no_backsteps,
)
from topospread.api.volume_validation import ISCSI_NAME_TOO_LONG, MORE_THAN_ONE_TYPE, NO_TYPE
from topospread.api.volumes import (
    CSIPersistentVolumeSource,
    ISCSIVolumeSource,
    LocalVolumeSource,
    PortworxVolumeSource,
    SecretReference,
)
from topospread.util.validation import inclusive_range_error, is_dns1123_label, is_dns1123_subdomain

LOCAL_NEEDS_AFFINITY: Final = "Local volume requires node affinity"
EMPTY_ENDPOINTS_NAMESPACE: Final = (
    "if the endpointnamespace is set, it must be a valid namespace name"
)
BAD_IQN: Final = "must be valid format"

# Each source of a PV, in the order ValidatePersistentVolumeSpec looks at them: (attribute,
# the path a second source is refused at). A CephFS source is refused at ``cephFS`` (JSON:
# ``cephfs``), as upstream spells it.
PV_SOURCES: Final = (
    ("host_path", "hostPath"),
    ("gce_persistent_disk", "gcePersistentDisk"),
    ("aws_elastic_block_store", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flex_volume", "flexVolume"),
    ("azure_file", "azureFile"),
    ("vsphere_volume", "vsphereVolume"),
    ("photon_persistent_disk", "photonPersistentDisk"),
    ("portworx_volume", "portworxVolume"),
    ("azure_disk", "azureDisk"),
    ("scale_io", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
)
# The sources whose checks are the pod's own (validateVolumeSource's validators).
_SHARED: Final = frozenset(
    {
        "host_path",
        "gce_persistent_disk",
        "aws_elastic_block_store",
        "nfs",
        "rbd",
        "cinder",
        "azure_disk",
        # validateCephFSPersistentVolumeSource and validateScaleIOPersistentVolumeSource check
        # what the pod's do; the others are the pod's own validators.
        "flocker",
        "quobyte",
        "cephfs",
        "fc",
        "vsphere_volume",
        "photon_persistent_disk",
        "scale_io",
        # validateFlexPersistentVolumeSource checks what validateFlexVolumeSource does.
        "flex_volume",
    }
)


def validate_pv_source(spec: PersistentVolumeSpec, path: Path, name: str) -> list[FieldError]:
    """The errors of a PV's source, ``path`` the spec's, ``name`` the PV's.

    Upstream: ValidatePersistentVolumeSpec's volume sources (pkg/apis/core/validation, v1.35)
    """
    errs: list[FieldError] = []
    count = 0
    for attr, child in PV_SOURCES:
        source = getattr(spec, attr)
        if source is None:
            continue
        # NOTE: upstream counts a flexVolume and checks it without refusing it as one type too
        # many (a later source is still refused after it).
        if count and attr != "flex_volume":
            errs.append(forbidden(path.child(child), MORE_THAN_ONE_TYPE))
            continue
        count += 1
        errs += _source_errors(attr, source, path, name)
        if attr == "local" and spec.node_affinity is None:
            errs.append(required(path.child("nodeAffinity"), LOCAL_NEEDS_AFFINITY))
    if not count:
        errs.append(required(path, NO_TYPE))
    return errs


def _source_errors(attr: str, source: Any, path: Path, name: str) -> list[FieldError]:
    if attr == "cinder":
        errs = source_errors(attr, source, path, True)
        ref = source.secret_ref
        if ref is not None and not ref.namespace:
            errs.append(required(path.child("cinder", "secretRef", "namespace")))
        return errs
    if attr in _SHARED:
        return source_errors(attr, source, path, True)
    if attr == "csi":
        return _csi(source, path.child("csi"))
    if attr == "iscsi":
        return _iscsi(source, path.child("iscsi"), name)
    if attr == "local":
        return _local(source, path.child("local"))
    if attr == "portworx_volume":
        return _portworx(source, path.child("portworxVolume"))
    if attr == "glusterfs":
        return _glusterfs(source, path)
    if attr == "azure_file":
        return _azure_file(source, path)
    if attr == "storageos":
        return _storageos(source, path)
    return []


def _glusterfs(src: GlusterfsPersistentVolumeSource, path: Path) -> list[FieldError]:
    """The pod's checks, then the endpoints' namespace when given: "" refused, else a DNS
    label.

    Upstream: validateGlusterfsPersistentVolumeSource (core validation.go, v1.35)
    """
    errs = source_errors("glusterfs", src, path, True)
    namespace = src.endpoints_namespace
    if namespace is not None:
        at = path.child("glusterfs", "endpointsNamespace")
        messages = name_is_dns_label(namespace, False) if namespace else [EMPTY_ENDPOINTS_NAMESPACE]
        errs += [invalid(at, namespace, m) for m in messages]
    return errs


def _azure_file(src: AzureFilePersistentVolumeSource, path: Path) -> list[FieldError]:
    """The pod's checks, and a secret namespace that is given may not be "".

    Upstream: validateAzureFilePV (core validation.go, v1.35)
    """
    errs = source_errors("azure_file", src, path, True)
    if src.secret_namespace is not None and not src.secret_namespace:
        errs.append(required(path.child("azureFile", "secretNamespace")))
    return errs


def _storageos(src: StorageOSPersistentVolumeSource, path: Path) -> list[FieldError]:
    """The pod's checks, and a secret reference's namespace besides its name.

    Upstream: validateStorageOSPersistentVolumeSource (core validation.go, v1.35)
    """
    errs = source_errors("storageos", src, path, True)
    if src.secret_ref is not None and not src.secret_ref.namespace:
        errs.append(required(path.child("storageos", "secretRef", "namespace")))
    return errs


def _local(src: LocalVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validateLocalVolumeSource (pkg/apis/core/validation/validation.go, v1.35)"""
    if not src.path:
        return [required(path.child("path"))]
    return validate_path_no_backsteps(src.path, path.child("path"))


def _portworx(src: PortworxVolumeSource, path: Path) -> list[FieldError]:
    """Upstream: validatePortworxVolumeSource (pkg/apis/core/validation/validation.go, v1.35)"""
    return [required(path.child("volumeID"))] if not src.volume_id else []


def _secret_reference(ref: SecretReference, path: Path) -> list[FieldError]:
    """Upstream: validatePVSecretReference (pkg/apis/core/validation/validation.go, v1.35)"""
    errs: list[FieldError] = []
    if not ref.name:
        errs.append(required(path.child("name")))
    else:
        errs += [invalid(path.child("name"), ref.name, m) for m in is_dns1123_subdomain(ref.name)]
    if not ref.namespace:
        errs.append(required(path.child("namespace")))
    else:
        errs += [
            invalid(path.child("namespace"), ref.namespace, m)
            for m in is_dns1123_label(ref.namespace)
        ]
    return errs


def _csi(src: CSIPersistentVolumeSource, path: Path) -> list[FieldError]:
    """The driver, the handle, then the secret references in upstream's order (a node-stage
    secret's name is not checked upstream either).

    Upstream: validateCSIPersistentVolumeSource (pkg/apis/core/validation/validation.go, v1.35)
    """
    errs = validate_csi_driver_name(src.driver, path.child("driver"))
    if not src.volume_handle:
        errs.append(required(path.child("volumeHandle")))
    for ref, child in (
        (src.controller_publish_secret_ref, "controllerPublishSecretRef"),
        (src.controller_expand_secret_ref, "controllerExpandSecretRef"),
        (src.node_publish_secret_ref, "nodePublishSecretRef"),
        (src.node_expand_secret_ref, "nodeExpandSecretRef"),
    ):
        if ref is not None:
            errs += _secret_reference(ref, path.child(child))
    return errs


def _iscsi(src: ISCSIVolumeSource, path: Path, pv_name: str) -> list[FieldError]:
    """The target portal (with an initiator name, ``<PV name>:<targetPortal>`` at most 64
    bytes, refused at ``targetportal``, sic), the IQN (a PV's says only "must be valid format",
    whatever its prefix), the LUN's range, the CHAP secret, the initiator name.

    Upstream: validateISCSIPersistentVolumeSource (pkg/apis/core/validation/validation.go,
    v1.35)
    """
    errs: list[FieldError] = []
    if not src.target_portal:
        errs.append(required(path.child("targetPortal")))
    if src.initiator_name is not None and len(f"{pv_name}:{src.target_portal}".encode()) > 64:
        errs.append(invalid(path.child("targetportal"), src.target_portal, ISCSI_NAME_TOO_LONG))
    if not src.iqn:
        errs.append(required(path.child("iqn")))
    elif not iscsi_name_valid(src.iqn):
        errs.append(invalid(path.child("iqn"), src.iqn, BAD_IQN))
    if src.lun < 0 or src.lun > 255:
        errs.append(invalid(path.child("lun"), src.lun, inclusive_range_error(0, 255)))
    if (src.chap_auth_discovery or src.chap_auth_session) and src.secret_ref is None:
        errs.append(required(path.child("secretRef")))
    if src.secret_ref is not None and not src.secret_ref.name:
        errs.append(required(path.child("secretRef", "name")))
    name = src.initiator_name
    # NOTE: upstream's path is ``initiatorname`` (sic); one error, of no known prefix or not of
    # its prefix's format.
    if name is not None and not iscsi_name_valid(name):
        errs.append(invalid(path.child("initiatorname"), name, BAD_IQN))
    return errs
